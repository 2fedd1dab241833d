"""functrans.scipy.signal, .linalg and .integrate against scipy: every mode and
shape order of the convolutions, the Cholesky/triangular/expm family, their
gradients against finite differences, jit against eager and vmap against a loop."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl
import scipy.integrate as sint
import scipy.signal as ssg

import functrans as ft
import functrans.numpy as fnp
from functrans.scipy import integrate as fint
from functrans.scipy import linalg as fla
from functrans.scipy import signal as fsg
from functrans.test_util import check_grads
from tests.public_names import public_names

_RNG = np.random.default_rng(7)
_SHAPES = [((7,), (3,)), ((3,), (7,)), ((5,), (5,)), ((6, 5), (3, 2)), ((3, 2), (6, 5)),
           ((5, 5), (4, 4)), ((4, 6), (3, 3))]


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", _SHAPES, ids=[f"{a}x{b}" for a, b in _SHAPES])
def test_convolutions_against_scipy(shapes, mode):
    a, b = _RNG.normal(size=shapes[0]), _RNG.normal(size=shapes[1])
    pairs = [(fsg.convolve, ssg.convolve), (fsg.correlate, ssg.correlate)]
    if a.ndim == 2:
        pairs += [(fsg.convolve2d, ssg.convolve2d), (fsg.correlate2d, ssg.correlate2d)]
    for ours, ref in pairs:
        try:
            want = ref(a, b, mode=mode)
        except ValueError:
            with pytest.raises(ValueError):
                ours(a, b, mode=mode)
            continue
        got = np.asarray(ours(a, b, mode=mode))
        assert got.shape == want.shape, (ours.__name__, mode)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13, err_msg=ours.__name__)


@pytest.mark.parametrize("shapes", _SHAPES, ids=[f"{a}x{b}" for a, b in _SHAPES])
def test_complex_and_fft_convolutions_against_scipy(shapes):
    # correlate2d's swapped 'valid' output is not conjugated (scipy's N-D correlate's is);
    # method='fft' goes through fftconvolve (and rounds integer results, as scipy)
    a = _RNG.normal(size=shapes[0]) + 1j * _RNG.normal(size=shapes[0])
    b = _RNG.normal(size=shapes[1]) + 1j * _RNG.normal(size=shapes[1])
    ia, ib = np.round(3 * a.real).astype(np.int32), np.round(3 * b.real).astype(np.int32)
    cases = [(fsg.convolve, ssg.convolve, {"method": m}) for m in ("direct", "fft")]
    cases += [(fsg.correlate, ssg.correlate, {"method": m}) for m in ("direct", "fft")]
    if a.ndim == 2:
        cases += [(fsg.convolve2d, ssg.convolve2d, {}), (fsg.correlate2d, ssg.correlate2d, {})]
    for mode in ("full", "same", "valid"):
        for ours, ref, kw in cases:
            for x, y in ((a, b), (ia, ib)):
                try:
                    want = ref(x, y, mode=mode, **kw)
                except ValueError:
                    continue
                got = np.asarray(ours(x, y, mode=mode, **kw))
                assert got.dtype == want.dtype, (ours.__name__, mode, kw)
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12,
                                           err_msg=f"{ours.__name__} {mode} {kw}")


def test_convolution_gradients_jit_vmap():
    a, b = _RNG.normal(size=(6,)), _RNG.normal(size=(3,))
    check_grads(lambda x, h: fsg.convolve(x, h, mode="same"), (a, b), order=2, modes=("fwd", "rev"))
    check_grads(lambda x, h: fsg.correlate2d(x, h), (a.reshape(2, 3), b.reshape(3, 1)), order=1,
                modes=("fwd", "rev"))
    np.testing.assert_allclose(np.asarray(ft.jit(fsg.convolve)(a, b)), ssg.convolve(a, b), rtol=1e-13)
    batch = _RNG.normal(size=(4, 6))
    got = np.asarray(ft.vmap(lambda x: fsg.correlate(x, b, mode="valid"))(batch))
    np.testing.assert_allclose(got, np.stack([ssg.correlate(x, b, mode="valid") for x in batch]),
                               rtol=1e-13)


def _spd(n):
    a = _RNG.normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


def test_cholesky_family_against_scipy():
    s, b = _spd(5), _RNG.normal(size=(5, 2))
    for lower in (False, True):
        np.testing.assert_allclose(np.asarray(fla.cholesky(s, lower=lower)),
                                   sl.cholesky(s, lower=lower), rtol=1e-13)
        np.testing.assert_allclose(np.asarray(fla.cho_solve(fla.cho_factor(s, lower=lower), b)),
                                   sl.cho_solve(sl.cho_factor(s, lower=lower), b), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(fla.solve(s, b, assume_a="pos")), sl.solve(s, b), rtol=1e-12)
    u = np.triu(s)
    for trans in (0, 1, "T"):
        for vec in (b, b[:, 0]):
            np.testing.assert_allclose(np.asarray(fla.solve_triangular(u, vec, trans=trans)),
                                       sl.solve_triangular(u, vec, trans=trans), rtol=1e-12)
    np.testing.assert_allclose(float(fla.det(s)), sl.det(s), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(fla.inv(s)), sl.inv(s), rtol=1e-12, atol=1e-15)
    check_grads(lambda m: fla.cho_solve(fla.cho_factor(m @ m.T + 5 * fnp.eye(5)), b),
                (s / 10,), order=1, modes=("fwd", "rev"))


def test_complex_hermitian_family_against_scipy():
    # jax.scipy.linalg takes complex matrices; these rejected them, and cho_solve's second
    # solve must use the conjugate transpose (trans=2) for a Hermitian factor
    rng = np.random.default_rng(3)
    m = rng.normal(size=(4, 4)) + 1j * rng.normal(size=(4, 4))
    h = m @ m.conj().T + 4 * np.eye(4)
    b = rng.normal(size=4) + 1j * rng.normal(size=4)
    for lower in (False, True):
        np.testing.assert_allclose(np.asarray(fla.cho_solve(fla.cho_factor(h, lower=lower), b)),
                                   sl.cho_solve(sl.cho_factor(h, lower=lower), b), rtol=1e-12)
        tri = np.tril(m) if lower else np.triu(m)
        for trans in (0, 1, 2):
            for a in (tri, tri.real):   # a real factor with a complex right-hand side
                np.testing.assert_allclose(
                    np.asarray(fla.solve_triangular(a, b, trans=trans, lower=lower)),
                    sl.solve_triangular(a, b, trans=trans, lower=lower), rtol=1e-12)
    for ours, ref in ((fla.det(m), sl.det(m)), (fla.inv(m), sl.inv(m)),
                      (fla.solve(m.real, b), sl.solve(m.real, b)),
                      (fla.eigh(h, eigvals_only=True), sl.eigh(h, eigvals_only=True)),
                      (fla.svd(m, compute_uv=False), sl.svd(m, compute_uv=False))):
        np.testing.assert_allclose(np.asarray(ours), ref, rtol=1e-12)


def test_block_diag_against_scipy():
    parts = (np.ones((2, 2)), np.array([[3.0]]), np.arange(3.0), np.ones((0, 2)))
    np.testing.assert_array_equal(np.asarray(fla.block_diag(*parts)), sl.block_diag(*parts))


@pytest.mark.parametrize("scale", [0.0, 0.01, 1.0, 3.0, 40.0])
def test_expm_against_scipy(scale):
    a = scale * _RNG.normal(size=(5, 5))
    want = sl.expm(a)
    np.testing.assert_allclose(np.asarray(fla.expm(a)), want, rtol=1e-12,
                               atol=1e-12 * np.abs(want).max())


def test_expm_complex_generator():
    # exp(-iHt) of a Hermitian H: complex in, complex out (it raised TypeError), unitary,
    # as scipy's; the gradient of a transition probability matches finite differences
    h = np.array([[0.3, 0.7 - 0.2j], [0.7 + 0.2j, -0.3]])
    u = fla.expm(-1j * h)
    assert u.dtype == np.complex128
    np.testing.assert_allclose(np.asarray(u), sl.expm(-1j * h), rtol=1e-12, atol=1e-14)
    prob = lambda t: fnp.abs(fla.expm(-1j * t * h)[1, 0]) ** 2
    eps = 1e-6
    fd = (abs(sl.expm(-1j * (1 + eps) * h)[1, 0]) ** 2
          - abs(sl.expm(-1j * (1 - eps) * h)[1, 0]) ** 2) / (2 * eps)
    np.testing.assert_allclose(float(ft.grad(prob)(1.0)), fd, rtol=1e-6)


def test_expm_derivative_jit_vmap():
    a = 0.3 * _RNG.normal(size=(4, 4))
    check_grads(fla.expm, (a,), order=1, modes=("fwd", "rev"))
    stack = np.stack([a, 2 * a, 0.1 * a])
    np.testing.assert_allclose(np.asarray(ft.vmap(fla.expm)(stack)),
                               np.stack([sl.expm(m) for m in stack]), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ft.jit(fla.expm)(a)), sl.expm(a), rtol=1e-12)


def test_errors_are_clear():
    with pytest.raises(ValueError, match="square"):
        fla.det(np.ones((2, 3)))
    with pytest.raises(ValueError, match="method"):
        fsg.convolve(np.ones(3), np.ones(2), method="overlap-add")
    with pytest.raises(ValueError, match="fill"):
        fsg.convolve2d(np.ones((2, 2)), np.ones((1, 1)), boundary="wrap")


def test_public_names_are_exactly_all():
    for mod in (fla, fsg):
        assert public_names(mod) == set(mod.__all__)


def test_integrate_trapezoid_against_scipy():
    y, x = _RNG.normal(size=(3, 7)), np.sort(_RNG.normal(size=7))
    np.testing.assert_allclose(np.asarray(fint.trapezoid(y, x=x)), sint.trapezoid(y, x=x), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(fint.trapezoid(y, dx=0.5, axis=0)),
                               sint.trapezoid(y, dx=0.5, axis=0), rtol=1e-13)
    assert public_names(fint) == set(fint.__all__)


def test_qr_svd_eigh_against_scipy():
    a = _RNG.normal(size=(5, 3))
    for mode in ("full", "economic"):
        q, r = fla.qr(a, mode=mode)
        q, r = np.asarray(q), np.asarray(r)
        wq, wr = sl.qr(a, mode=mode)
        assert q.shape == wq.shape and r.shape == wr.shape
        np.testing.assert_allclose(q @ r, a, atol=1e-13)
        np.testing.assert_allclose(np.abs(r), np.abs(wr), atol=1e-12)   # signs may differ
    (r_only,) = fla.qr(a, mode="r")
    np.testing.assert_allclose(np.abs(np.asarray(r_only)), np.abs(sl.qr(a, mode="r")[0]), atol=1e-12)
    np.testing.assert_allclose(np.asarray(fla.svd(a, compute_uv=False)),
                               sl.svd(a, compute_uv=False), rtol=1e-13)
    u, s, vt = (np.asarray(m) for m in fla.svd(a, full_matrices=False))
    np.testing.assert_allclose((u * s) @ vt, a, atol=1e-13)
    sym = _spd(4)
    w, v = (np.asarray(m) for m in fla.eigh(sym))
    np.testing.assert_allclose(w, sl.eigh(sym, eigvals_only=True), rtol=1e-13)
    np.testing.assert_allclose((v * w) @ v.T, sym, atol=1e-12)
    check_grads(lambda m: fla.eigh(m + m.T, eigvals_only=True), (sym,), order=1,
                modes=("fwd", "rev"))
    with pytest.raises(ValueError, match="generalized"):
        fla.eigh(sym, sym)


def test_solve_triangular_broadcasts_batches_as_jax():
    # JAX's rule (linalg_test testSolveTriangularBroadcasting): batch axes of a and b
    # broadcast; b of rank a.ndim - 1 is a vector stack only when it ends in n (a
    # (2, 4, 4) with b (4, 2) is one 4x2 right-hand side). These raised ValueError.
    rng = np.random.default_rng(11)
    for ls, rs in [((2, 4, 4), (4, 2)), ((4, 4), (2, 4, 3)), ((3, 1, 4, 4), (2, 4, 1)),
                   ((2, 4, 4), (2, 4))]:
        a, b = rng.standard_normal(ls) + 4 * np.eye(4), rng.standard_normal(rs)
        vec = len(rs) == len(ls) - 1 and rs[-1] == 4
        bb = b[..., None] if vec else b
        want = np.linalg.solve(np.broadcast_to(np.tril(a), np.broadcast_shapes(a.shape[:-2], bb.shape[:-2]) + (4, 4)), bb)
        want = want[..., 0] if vec else want
        np.testing.assert_allclose(np.asarray(fla.solve_triangular(a, b, lower=True)), want,
                                   rtol=1e-12, atol=1e-12)
