"""Complex values on the CPU backend: complex64/complex128 buffers (interleaved re/im)
as program inputs, outputs and temporaries; ``real``, ``imag``, ``conj``, ``complex``
and complex ``add``/``sub``/``mul``/``div``/``neg``/``abs``/``eq``/``ne``/``select_n``/
conversions/sums and libm's ``cexp``, ``clog``, ``csqrt``... in fused kernels; layout
equations, loops and matrix products (``?gemm``) on complex buffers; ``solve``
(``?gesv``), ``eig`` (``dgeev``/``zgeev``) and ``schur`` (``?gees``) through LAPACK from
the generated code.
Each is checked against the eager (numpy) result bit for bit where numpy has one rule,
and for running with no host step; what has no native rule (``log1p``, ``arctan``,
``pow`` of complex values) stays a host step and still gives numpy's values."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from backends.llvm import lapack, ops_complex
from functrans import lax
from functrans.primitives import linalg_decomp, linalg_schur

RNG = np.random.default_rng(11)
CDTYPES = [np.complex64, np.complex128]


def _host_steps(f, *args):
    return ft.jit(f, backend="cpu").lower(*args).compile().cost_analysis()["host steps"]


def _same(got, want):
    """Equal bit for bit, the sign of a zero included (any nan equals any nan)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
    for g, w in ((got.real, want.real), (np.imag(got), np.imag(want))):
        nan = np.isnan(w)
        assert np.array_equal(np.isnan(g), nan), (got, want)
        assert g[~nan].tobytes() == w[~nan].tobytes(), (got, want)


def _specials(dtype):
    parts = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e-30])
    re, im = np.meshgrid(parts, parts)
    z = np.empty(re.size, dtype)
    z.real, z.imag = re.ravel(), im.ravel()
    return z


def _random(shape, dtype):
    z = RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)
    return z.astype(dtype)


# ------------------------------------------------------------------ elementwise

UNARY = {"real": lax.real, "imag": lax.imag, "conj": lax.conj, "neg": lambda z: -z,
         "abs": fnp.abs,     # libm's cexp...: on x86-64 (elsewhere host steps)
         **{f"pow{n}": (lambda z, n=n: lax.integer_pow(z, n)) for n in range(-4, 5)},
         **{n: getattr(fnp, n) for n in ops_complex.LIBM if ops_complex.TABLE[n].complex},
         "parts": lambda z: lax.complex(lax.imag(z), lax.real(z)),
         "widen": lambda z: z.astype(np.complex128), "narrow": lambda z: z.astype(np.complex64)}
BINARY = {"add": lambda z, w: z + w, "sub": lambda z, w: z - w, "div": lambda z, w: z / w,
          "eq": lambda z, w: z == w,
          "ne": lambda z, w: z != w, "where": lambda z, w: fnp.where(lax.real(z) > 0, z, w)}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", CDTYPES)
def test_unary_complex_rules_are_native_and_numpys_bits(name, dtype):
    f = UNARY[name]
    with np.errstate(over="ignore"):
        wide = (RNG.standard_normal(200) * np.exp(RNG.uniform(-40, 40, 200))).astype(dtype)
    z = np.concatenate([_specials(dtype), wide * (1 + 1j), wide * 1j + wide[::-1]])
    assert _host_steps(f, z) == 0
    with np.errstate(all="ignore"):
        _same(ft.jit(f, backend="cpu")(z), f(z))


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", CDTYPES)
def test_binary_complex_rules_are_native_and_numpys_bits(name, dtype):
    f = BINARY[name]
    z = _specials(dtype)
    w = np.roll(z, 5)
    assert _host_steps(f, z, w) == 0
    with np.errstate(all="ignore"):
        _same(ft.jit(f, backend="cpu")(z, w), f(z, w))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_complex_product_is_the_textbook_formula(dtype):
    # (a+bi)(c+di) = (ac - bd) + (ad + bc)i, rounded per operation (numpy's scalar
    # loop); numpy's SIMD loop fuses a multiply-add (one rounding less): within an ulp
    z, w = _random(257, dtype), _random(257, dtype)
    got = np.asarray(ft.jit(lambda x, y: x * y, backend="cpu")(z, w))
    a, b, c, d = z.real, z.imag, w.real, w.imag
    _same(got, (a * c - b * d) + 1j * (a * d + b * c))
    eps = np.finfo(got.real.dtype).eps
    np.testing.assert_allclose(got, z * w, rtol=4 * eps, atol=4 * eps)


def test_real_to_complex_conversion_and_mixed_programs_fuse():
    x = RNG.standard_normal(33)
    i = np.arange(33, dtype=np.int32) - 16

    def f(x, i):
        z = lax.complex(x, x * 3.0 - 1.0) * 2.0 + i.astype(np.complex128)
        return fnp.real(lax.conj(z) + z), z
    exe = ft.jit(f, backend="cpu").lower(x, i).compile()
    cost = exe.cost_analysis()
    assert cost["host steps"] == 0 and cost["native kernels"] == 1
    for g, w in zip(ft.jit(f, backend="cpu")(x, i), f(x, i)):
        _same(g, w)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_complex_sums_and_products_are_native(dtype):
    z = _random((6, 50), dtype)

    def f(z):
        return fnp.sum(z * 2.0, axis=1), fnp.sum(lax.conj(z)), fnp.prod(z, axis=0)
    assert _host_steps(f, z) == 0
    _same(ft.jit(lambda z: fnp.prod(z, axis=1), backend="cpu")(z), np.prod(z, axis=1))
    tol = 8 * np.finfo(z.real.dtype).eps * 50     # summation order differs from numpy's
    for g, w in zip(ft.jit(f, backend="cpu")(z), f(z)):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_complex_cumulative_sums_and_products_are_numpys_bits(dtype):
    z = np.concatenate([_specials(dtype).reshape(8, 8), _random((8, 40), dtype)], axis=1)

    def f(z):
        return (fnp.cumsum(z, axis=1), fnp.cumprod(z * 0.9, axis=1), fnp.cumsum(z, axis=0),
                lax.cumprod(z, axis=0, reverse=True))
    assert _host_steps(f, z) == 0
    with np.errstate(all="ignore"):
        for g, w in zip(ft.jit(f, backend="cpu")(z), f(z)):
            _same(g, w)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_layout_equations_move_complex_buffers_natively(dtype):
    z = _random((4, 6), dtype)

    def f(z):
        t = z.T[1:5]
        c = fnp.concatenate([t, fnp.conj(t)], axis=0)
        p = lax.pad(c, dtype(1 - 2j), [(1, 0, 1), (0, 2, 0)])
        d = lax.dynamic_slice(p, (2, 1), (3, 2))
        return fnp.reshape(d, (6,))[::-1], z[fnp.array([3, 0])]
    assert _host_steps(f, z) == 0
    for g, w in zip(ft.jit(f, backend="cpu")(z), f(z)):
        _same(g, w)


def test_complex_equations_without_native_rules_stay_correct_host_steps():
    z, w = _random((3, 3), np.complex128), _random((3, 3), np.complex128)
    for f in (lambda z, w: z ** w, lambda z, w: fnp.log1p(z),
              lambda z, w: fnp.arctan(z) + fnp.real(w)):
        assert _host_steps(f, z, w) >= 1
        np.testing.assert_allclose(ft.jit(f, backend="cpu")(z, w), f(z, w), rtol=1e-14)


def test_complex_log1p_is_accurate_for_small_z():
    """JAX's lax_test testLog1pNearOne: numpy's complex log1p is log(1 + z), 100% off for
    complex64(1e-5) and 8e-8 for complex128(1e-10); JAX's (and here) keep every digit."""
    z = np.array([1e-5, 1e-10 + 1e-10j, -1e-8 + 1e-5j, 3 + 4j, -0.5, 100 + 1j], np.complex128)
    want = np.array([9.999950000333332e-06, 1e-10 + 9.999999999e-11j,
                     -9.9500000490025e-09 + 1.000000009966667e-05j,
                     np.log(np.abs(4 + 4j)) + 1j * np.pi / 4, np.log(0.5),
                     np.log(np.abs(101 + 1j)) + 1j * np.arctan2(1, 101)])
    for f in (lax.log1p, fnp.log1p, ft.jit(lax.log1p), ft.jit(fnp.log1p)):
        np.testing.assert_allclose(f(z), want, rtol=1e-15)
        np.testing.assert_allclose(f(z.astype(np.complex64)), want, rtol=1e-6)
    assert np.isinf(fnp.log1p(np.complex128(-1))).any()


@pytest.mark.parametrize("shapes", [((3, 4), (4, 2)), ((40, 50), (50, 30)),
                                    ((3, 40, 50), (3, 50, 30)), ((7,), (7,))])
@pytest.mark.parametrize("dtype", CDTYPES)
def test_complex_matrix_products_are_native(shapes, dtype):
    # ?gemm of the BLAS numpy calls (the same bits where both call it), generated
    # loops for tiny products (within rounding)
    a, b = _random(shapes[0], dtype), _random(shapes[1], dtype)

    def f(a, b):
        return a @ b, lax.conj(a) @ b
    assert _host_steps(f, a, b) == 0
    eps = np.finfo(a.real.dtype).eps
    for g, w in zip(ft.jit(f, backend="cpu")(a, b), f(a, b)):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=50 * eps, atol=50 * eps * np.abs(w).max())


# ------------------------------------------------------------------ eig

def _no_host_step(*args, **kwargs):
    raise AssertionError("ran as a host step")


def _eig_native(monkeypatch, a, uv):
    def f(m):
        return linalg_decomp.eig(m, compute_right_eigenvectors=uv)
    want = f(a)     # eager: the numpy implementation (numpy.linalg.eig / eigvals)
    monkeypatch.setattr(linalg_decomp.eig_p, "impl", _no_host_step)
    try:
        got = ft.jit(f, backend="cpu")(a)
        assert _host_steps(f, a) == 0
    finally:
        monkeypatch.undo()
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _same(g, w)


needs_lapack = pytest.mark.skipif(not lapack.available(), reason="scipy's LAPACK not found")


@needs_lapack
@pytest.mark.parametrize("shape", [(5, 5), (1, 1), (3, 4, 4), (0, 0), (2, 0, 0), (0, 3, 3)])
@pytest.mark.parametrize("uv", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
def test_eig_under_jit_calls_geev_with_numpys_bits(monkeypatch, shape, uv, dtype):
    a = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(shape)
    # the same routine on the same double-precision copy: the same bits, same order
    _eig_native(monkeypatch, a.astype(dtype), uv)


@needs_lapack
@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_eig_of_non_finite_matrices_is_nan_as_numpy(monkeypatch, dtype):
    a = RNG.standard_normal((4, 3, 3)).astype(dtype)
    a[1, 0, 0], a[2, 2, 1] = np.nan, np.inf
    _eig_native(monkeypatch, a, True)
    w, v = ft.jit(fnp.linalg.eig, backend="cpu")(a)
    assert np.isnan(np.asarray(w)[1:3].real).all() and (np.asarray(v)[1:3].imag == 0).all()
    assert np.isfinite(np.asarray(w)[[0, 3]]).all()


@needs_lapack
def test_eig_pairs_conjugate_vectors_as_numpy(monkeypatch):
    rot = np.array([[0.0, -2.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 3.0]])
    _eig_native(monkeypatch, rot, True)
    w, v = ft.jit(fnp.linalg.eig, backend="cpu")(rot)
    np.testing.assert_allclose(rot @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-14)


@needs_lapack
def test_a_program_returning_complex_eigenvalues_runs_without_host_steps():
    a = RNG.standard_normal((2, 4, 4))

    def f(a):
        w = fnp.linalg.eigvals(a)
        return w * lax.conj(w) + 1.0, fnp.imag(w)
    assert _host_steps(f, a) == 0
    for g, w in zip(ft.jit(f, backend="cpu")(a), f(a)):
        np.testing.assert_allclose(g, w, rtol=1e-13)


def test_loops_and_branches_carry_complex_values_natively():
    z, x = _random(8, np.complex128), RNG.standard_normal(8)

    def f(x, z):
        w = lax.fori_loop(0, 5, lambda i, c: c * z + lax.complex(x, x), z)
        ys = lax.scan(lambda c, a: (c * a + 1.0, lax.conj(c)), z[0], z)
        return w, ys, lax.cond(x[0] > 0, lambda: w / 2.0, lambda: -w)
    assert _host_steps(f, x, z) == 0
    got, want = ft.tree_util.tree_leaves(ft.jit(f, backend="cpu")(x, z)), \
        ft.tree_util.tree_leaves(f(x, z))
    for g, w in zip(got, want):     # products: numpy's SIMD loop fuses multiply-adds
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=1e-14, atol=1e-14)


@needs_lapack
@pytest.mark.parametrize("dtype", CDTYPES)
def test_complex_solve_calls_gesv(monkeypatch, dtype):
    from functrans.primitives import linalg as linalg_prims
    a, b = _random((3, 4, 4), dtype), _random((3, 4, 2), dtype)
    a[1] = 0.0                                  # exactly singular: NaN + 0j, as numpy
    want = linalg_prims.solve_p.bind(a, b)
    monkeypatch.setattr(linalg_prims.solve_p, "impl", _no_host_step)
    got = ft.jit(linalg_prims.solve_p.bind, backend="cpu")(a, b)
    monkeypatch.undo()
    if dtype == np.complex128:
        _same(got, want)        # zgesv both ways
    else:                       # numpy solves complex64 in complex128; here cgesv
        _same(np.isnan(np.asarray(got)), np.isnan(np.asarray(want)))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@needs_lapack
def test_eigenvalue_gradients_compile_without_host_steps():
    a = RNG.standard_normal((4, 4))
    g = ft.grad(lambda m: fnp.sum(fnp.real(fnp.linalg.eigvals(m)) ** 2))
    assert _host_steps(g, a) == 0
    _same(ft.jit(g, backend="cpu")(a), g(a))


# ------------------------------------------------------------------ schur

def _schur_native(monkeypatch, a):
    want = linalg_schur.schur(a)    # eager: scipy.linalg.schur per matrix (?gees)
    monkeypatch.setattr(linalg_schur.schur_p, "impl", _no_host_step)
    try:
        got = ft.jit(linalg_schur.schur, backend="cpu")(a)
        assert _host_steps(linalg_schur.schur, a) == 0
    finally:
        monkeypatch.undo()
    for g, w in zip(got, want):
        _same(g, w)


@needs_lapack
@pytest.mark.parametrize("shape", [(5, 5), (1, 1), (3, 4, 4), (2, 0, 0), (0, 3, 3)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
def test_schur_under_jit_calls_gees_with_scipys_bits(monkeypatch, shape, dtype):
    a = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(shape)
    # the same routine (sgees for float32, as scipy) and workspace: the same bits
    _schur_native(monkeypatch, a.astype(dtype))


@needs_lapack
@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_schur_of_non_finite_matrices_is_nan_as_the_host_step(monkeypatch, dtype):
    a = RNG.standard_normal((4, 3, 3)).astype(dtype)
    a[1, 0, 0], a[2, 2, 1] = np.nan, np.inf
    _schur_native(monkeypatch, a)
    t, z = (np.asarray(v) for v in ft.jit(linalg_schur.schur, backend="cpu")(a))
    assert np.isnan(t[1:3]).all() and np.isnan(z[1:3]).all()
    assert np.isfinite(t[[0, 3]]).all() and np.isfinite(z[[0, 3]]).all()
    np.testing.assert_allclose(z[0] @ t[0] @ z[0].conj().T, a[0], atol=1e-5)
