"""Complex ``cholesky``, ``triangular_solve``, ``det``, ``slogdet``, ``qr`` and ``svd``,
real and complex ``eigh`` and ``pinv``, on the CPU backend: LAPACK/BLAS (``?potrf``,
``?trsm``, ``?getrf``, ``?geqrf`` + ``?ungqr``, ``zgesdd``, ``?heevd``/``?syevd``,
``?gesdd`` + ``?gemm``) called
from the generated code, no host step, equal bit for bit to the host steps (numpy/scipy,
which the eager interpreter runs) on batched stacks, 1x1 and empty matrices, and inputs
that are not positive definite, singular or not finite."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.primitives import linalg as linalg_prims
from functrans.primitives import linalg_decomp, linalg_det

RNG = np.random.default_rng(5)
CDTYPES = [np.complex64, np.complex128]


def _no_host_step(*args, **kwargs):
    raise AssertionError("ran as a host step")


def _same(got, want):
    """Equal bit for bit, signs of zeros and the parts of a nan included."""
    got, want = np.atleast_1d(got), np.atleast_1d(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.tobytes() == want.tobytes() or np.array_equal(
        got.view(got.real.dtype), want.view(want.real.dtype), equal_nan=True), (got, want)


def _native(prim, monkeypatch, *args, **params):
    """``prim`` on ``args`` eagerly (the host step) and jitted, the host step forbidden."""
    want = prim.bind(*args, **params)
    f = ft.jit(lambda *xs: prim.bind(*xs, **params), backend="cpu")
    assert f.lower(*args).compile().cost_analysis()["host steps"] == 0
    monkeypatch.setattr(prim, "impl", _no_host_step)
    got = f(*args)
    monkeypatch.undo()
    return got, want


def _random(shape, dtype):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def _hermitian(shape, dtype):
    z = _random(shape, np.complex128)
    n = shape[-1]
    return (z @ np.conj(np.swapaxes(z, -1, -2)) + n * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("shape", [(4, 5, 5), (1, 1), (0, 3, 3), (2, 0, 0), (3, 3)])
def test_complex_cholesky_calls_potrf(monkeypatch, dtype, shape):
    a = _hermitian(shape, dtype)
    if shape == (4, 5, 5):
        a[1] = -a[1]                            # not positive definite: nan + 0j
        a[2, 3, 3] = np.nan                     # a NaN pivot
        a[3, 0, 4] = np.inf                     # the strict upper triangle is not read
    got, want = _native(linalg_prims.cholesky_p, monkeypatch, a)
    _same(got, want)
    if shape == (4, 5, 5):
        assert np.isnan(np.asarray(got)[1].real).all() and (np.asarray(got)[1].imag == 0).all()
        assert np.isfinite(np.asarray(got)[3]).all()


def _triangular(shape, dtype, lower):
    a = _random(shape, dtype)
    n = shape[-1]
    a = np.tril(a) if lower else np.triu(a)
    return (a + 2 * n * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
@pytest.mark.parametrize("unit_diagonal", [True, False])
def test_complex_triangular_solve_calls_trsm(monkeypatch, dtype, left_side, lower,
                                             transpose_a, unit_diagonal):
    a = _random((3, 4, 4), dtype)               # the other triangle is not read
    a[1, 2, 2] = 0                              # a zero pivot: IEEE infs and nans
    b = _random((3, 4, 2) if left_side else (3, 2, 4), dtype)
    b[2, 0, 1] = complex(np.inf, np.nan)
    got, want = _native(linalg_prims.triangular_solve_p, monkeypatch, a, b,
                        left_side=left_side, lower=lower, transpose_a=transpose_a,
                        unit_diagonal=unit_diagonal)
    _same(got, want)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("shapes", [((1, 1), (1, 3)), ((0, 2, 2), (0, 2, 3)),
                                    ((2, 0, 0), (2, 0, 3)), ((3, 3), (3, 0))])
def test_complex_triangular_solve_small_and_empty(monkeypatch, dtype, shapes):
    a, b = _triangular(shapes[0], dtype, True), _random(shapes[1], dtype)
    got, want = _native(linalg_prims.triangular_solve_p, monkeypatch, a, b, left_side=True,
                        lower=True, transpose_a=False, unit_diagonal=False)
    _same(got, want)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("shape", [(5, 4, 4), (1, 1), (0, 3, 3), (2, 0, 0), (6, 6)])
def test_complex_det_and_slogdet_call_getrf(monkeypatch, dtype, shape):
    a = _random(shape, dtype)
    if shape == (5, 4, 4):
        a[1, :, 0] = 0                          # exactly singular: 0 and -inf
        a[2, 0, 0] = np.nan
        a[3, 1, 1] = np.inf
        a[4] = np.diag([1e-30, 1e30, 1j, -1])   # numpy's product of unit phases, in order
    got, want = _native(linalg_det.det_p, monkeypatch, a)
    _same(got, want)
    (sign, logabs), (want_sign, want_log) = _native(linalg_det.slogdet_p, monkeypatch, a)
    _same(sign, want_sign)
    _same(logabs, want_log)


@pytest.mark.parametrize("dtype", CDTYPES + [np.float64])
@pytest.mark.parametrize("shape", [(3, 4, 4), (2, 5, 3), (2, 3, 5), (1, 1), (0, 3, 3),
                                   (3, 0), (0, 3), (2, 3, 0)])
@pytest.mark.parametrize("full_matrices", [False, True])
def test_complex_qr_calls_geqrf_ungqr(monkeypatch, dtype, shape, full_matrices):
    a = RNG.standard_normal(shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = _random(shape, dtype)
    if shape == (3, 4, 4):
        a[1, 2, 1] = np.nan
        a[2, 0, 0] = np.inf
    (q, r), (want_q, want_r) = _native(linalg_decomp.qr_p, monkeypatch, a,
                                       full_matrices=full_matrices)
    _same(q, want_q)        # an m x 0 matrix's complete Q: the identity, real input too
    _same(r, want_r)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("shape", [(3, 4, 4), (2, 5, 3), (2, 3, 5), (1, 1), (0, 3, 3),
                                   (40, 7)])
@pytest.mark.parametrize("full_matrices", [False, True])
@pytest.mark.parametrize("compute_uv", [False, True])
def test_complex_svd_calls_gesdd(monkeypatch, dtype, shape, full_matrices, compute_uv):
    a = _random(shape, dtype)
    if shape == (3, 4, 4):      # NaN: nan outputs (an inf hangs numpy's gesdd, and this)
        a[1, 2, 1] = np.nan
    got, want = _native(linalg_decomp.svd_p, monkeypatch, a, full_matrices=full_matrices,
                        compute_uv=compute_uv)
    for g, w in zip(got, want):
        _same(g, w)


FDTYPES = CDTYPES + [np.float32, np.float64]


def _hermitian_stack(shape, dtype):
    z = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        z = z + 1j * RNG.standard_normal(shape)
    return (z + np.conj(np.swapaxes(z, -1, -2))).astype(dtype)


@pytest.mark.parametrize("dtype", FDTYPES)
@pytest.mark.parametrize("shape", [(5, 4, 4), (1, 1), (0, 3, 3), (2, 0, 0), (33, 33)])
@pytest.mark.parametrize("lower", [True, False])
def test_eigh_calls_heevd(monkeypatch, dtype, shape, lower):
    # ?heevd/?syevd in double as numpy.linalg.eigh, then canonical_signs' phase: the
    # eager results to the bit (eigenvectors included), for real and complex stacks
    a = _hermitian_stack(shape, dtype)
    if shape == (5, 4, 4):
        a[1, 2, 1] = a[1, 1, 2] = np.nan              # read either way: NaN outputs
        a[2, 3, 3] = np.inf
        a[3, 0, 3] = np.inf                           # only the upper triangle holds it
        q = np.linalg.qr(_hermitian_stack((4, 4), dtype))[0]
        a[4] = q @ np.diag([1.0, 1.0, 1.0, 3.0]).astype(dtype) @ np.conj(q.T)   # degenerate
    (v, w), (want_v, want_w) = _native(linalg_decomp.eigh_p, monkeypatch, a, lower=lower)
    _same(v, want_v)
    _same(w, want_w)
    if shape == (5, 4, 4):
        v, w = np.asarray(v), np.asarray(w)
        assert np.isnan(w[1:3]).all() and np.isnan(v[1:3].real).all()
        assert np.isfinite(w[3]).all() == lower       # lower: the inf is not read
        assert np.isfinite(w[[0, 4]]).all()
        if np.dtype(dtype).kind == "c":
            assert (v[1:3].imag == 0).all()           # nan + 0j, as numpy's np.full


def test_eigh_canonical_phase_is_numpys_convention():
    # each eigenvector's first entry of largest magnitude is real and non-negative,
    # also where two entries tie in magnitude (the first one wins)
    a = np.array([[2.0, 1j, 0], [-1j, 2.0, 0], [0, 0, 5.0]], np.complex128)
    f = ft.jit(lambda x: fnp.linalg.eigh(x), backend="cpu")
    assert f.lower(a).compile().cost_analysis()["host steps"] == 0
    w, v = f(a)
    v = np.asarray(v)
    for j in range(3):
        lead = v[np.argmax(np.abs(v[:, j]) >= np.abs(v[:, j]).max() * (1 - 2.0 ** -20)), j]
        assert lead.imag == 0 and lead.real > 0
    np.testing.assert_allclose(a @ v, v * np.asarray(w), atol=1e-14)


@pytest.mark.parametrize("dtype", FDTYPES)
@pytest.mark.parametrize("shape", [(3, 4, 4), (2, 5, 3), (2, 3, 5), (1, 1), (0, 3, 3),
                                   (3, 0), (2, 3, 0), (30, 20)])
def test_pinv_calls_gesdd_and_gemm(monkeypatch, dtype, shape):
    # ?gesdd in double, s⁺ above rtol * s[0], ((U s⁺) Vt)ᴴ by scipy's ?gemm: the host
    # step's calls, so the same bits; rank-deficient and NaN/inf stacks included
    a = _hermitian_stack(shape[:-1] + shape[-2:-1], dtype)[..., :shape[-1]] \
        if shape[-1] <= shape[-2] else RNG.standard_normal(shape).astype(dtype)
    if shape == (3, 4, 4):
        a[0, :, 3] = a[0, :, 0]                     # rank 3: one singular value dropped
        a[1, 2, 1] = np.nan
        a[2, 0, 0] = np.inf
    got, want = _native(linalg_det.pinv_p, monkeypatch, a, rtol=1e-10)
    _same(got, want)
    if shape == (3, 4, 4):
        got = np.asarray(got)
        assert np.isnan(got[1:].real).all() and np.isfinite(got[0]).all()
        np.testing.assert_allclose(a[0] @ got[0] @ a[0], a[0], atol=1e-4 if
                                   np.dtype(dtype).itemsize <= 8 else 1e-10)


def test_public_eigh_eigvalsh_pinv_jit_without_host_steps():
    a = _hermitian_stack((2, 6, 6), np.complex128)
    for fun in (fnp.linalg.eigh, fnp.linalg.eigvalsh, fnp.linalg.pinv,
                lambda x: fnp.linalg.pinv(x, hermitian=True)):
        f = ft.jit(fun, backend="cpu")
        assert f.lower(a).compile().cost_analysis()["host steps"] == 0
        for g, w in zip(ft.tree.leaves(f(a)), ft.tree.leaves(fun(a))):
            _same(g, w)
