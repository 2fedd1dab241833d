"""functrans.scipy.linalg's hessenberg, polar, expm_frechet, eigh_tridiagonal, qr_multiply,
rsf2csf and solve_sylvester against scipy; gradients against finite differences, jit
and vmap."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

import functrans as ft
from functrans.scipy import linalg as fla
from functrans.test_util import check_grads

_RNG = np.random.default_rng(21)


def _close(got, want, tol=1e-13):
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, np.abs(want).max()))


_MATS = [_RNG.normal(size=(5, 5)), _RNG.normal(size=(4, 4)) + 1j * _RNG.normal(size=(4, 4)),
         _RNG.normal(size=(2, 2)), _RNG.normal(size=(1, 1)), _RNG.normal(size=(7, 7)),
         np.triu(_RNG.normal(size=(4, 4)), -1)]


@pytest.mark.parametrize("i", range(len(_MATS)))
def test_hessenberg_is_lapacks(i):
    a = _MATS[i]
    _close(fla.hessenberg(a), sl.hessenberg(a))
    h, q = fla.hessenberg(a, calc_q=True)
    hs, qs = sl.hessenberg(a, calc_q=True)
    _close(h, hs)
    _close(q, qs)


def test_hessenberg_batched_jit_grads():
    a = _RNG.normal(size=(3, 5, 5))
    want = np.stack([sl.hessenberg(m) for m in a])
    _close(fla.hessenberg(a), want)
    _close(ft.jit(fla.hessenberg)(a), want)
    _close(ft.vmap(fla.hessenberg)(a), want)
    check_grads(lambda m: fla.hessenberg(m, calc_q=True), (a[0, :4, :4],), order=1,
                modes=("fwd", "rev"))


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("shape", [(5, 5), (5, 3), (3, 5), "complex"])
def test_polar_against_scipy(shape, side):
    a = _MATS[1] if shape == "complex" else _RNG.normal(size=shape)
    u, p = fla.polar(a, side)
    us, ps = sl.polar(a, side)
    _close(u, us, 1e-12)
    _close(p, ps, 1e-12)


def test_polar_grads_jit():
    a = _RNG.normal(size=(3, 3)) + 3 * np.eye(3)
    check_grads(lambda m: fla.polar(m), (a,), order=1, modes=("fwd", "rev"))
    u, p = ft.jit(fla.polar)(a)
    _close(u, sl.polar(a)[0], 1e-12)


def test_polar_of_a_stack():
    # JAX's polar takes (..., m, n) (linalg_test testPolar batch); it raised ValueError
    a = np.random.default_rng(4).normal(size=(2, 5, 3))
    for side in ("right", "left"):
        u, p = (np.asarray(x) for x in fla.polar(a, side))
        for k in range(2):
            us, ps = sl.polar(a[k], side)
            _close(u[k], us, 1e-12)
            _close(p[k], ps, 1e-12)


def test_expm_frechet_against_scipy_and_jvp():
    a, e = _RNG.normal(size=(4, 4)), _RNG.normal(size=(4, 4))
    x, l = fla.expm_frechet(a, e)
    xs, ls = sl.expm_frechet(a, e)
    _close(x, xs, 1e-12)
    _close(l, ls, 1e-12)
    _close(fla.expm_frechet(a, e, compute_expm=False), ls, 1e-12)
    _, tangent = ft.jvp(fla.expm, (a,), (e,))     # the Frechet derivative is expm's JVP
    _close(tangent, ls, 1e-12)
    check_grads(lambda m, d: fla.expm_frechet(m, d, compute_expm=False), (a / 2, e), order=1,
                modes=("fwd", "rev"))
    _close(ft.vmap(lambda d: fla.expm_frechet(a, d, compute_expm=False))(np.stack([e, 2 * e])),
           np.stack([ls, 2 * ls]), 1e-12)


def test_eigh_tridiagonal_against_scipy():
    d, e = _RNG.normal(size=6), _RNG.normal(size=5)
    _close(fla.eigh_tridiagonal(d, e, eigvals_only=True),
           sl.eigh_tridiagonal(d, e, eigvals_only=True))
    w, v = fla.eigh_tridiagonal(d, e, select="i", select_range=(1, 3))
    ws, vs = sl.eigh_tridiagonal(d, e, select="i", select_range=(1, 3))
    _close(w, ws)
    _close(np.abs(np.asarray(v)), np.abs(vs))
    check_grads(lambda a, b: fla.eigh_tridiagonal(a, b, eigvals_only=True), (d, e), order=1,
                modes=("fwd", "rev"))
    _close(ft.jit(lambda a, b: fla.eigh_tridiagonal(a, b, eigvals_only=True))(d, e),
           sl.eigh_tridiagonal(d, e, eigvals_only=True))
    with pytest.raises(NotImplementedError):
        fla.eigh_tridiagonal(d, e, select="v", select_range=(0.0, 1.0))


def test_eigh_tridiagonal_complex_is_hermitian():
    # JAX's eigh_test run_eigh_tridiagonal_test: complex d, e mean the Hermitian matrix
    # diag(real d) + diag(e, 1) + diag(conj e, -1); the symmetric reading gave other
    # eigenvalues (-0.63 for -0.89)
    rng = np.random.default_rng(3)      # _RNG's later draws stay those of the tests below
    d = rng.uniform(size=5) + 1j * rng.uniform(size=5)
    e = rng.uniform(size=4) + 1j * rng.uniform(size=4)
    a = np.diag(d.real) + np.diag(e, 1) + np.diag(e.conj(), -1)
    w, v = (np.asarray(x) for x in fla.eigh_tridiagonal(d, e))
    assert w.dtype == np.float64 and v.dtype == np.complex128
    _close(w, np.linalg.eigvalsh(a), 1e-12)
    _close(a @ v, v * w, 1e-12)


@pytest.mark.parametrize("mode, cshape", [("left", (3, 2)), ("right", (2, 5)), ("left", (3,)),
                                          ("right", (5,))])
def test_qr_multiply_against_scipy(mode, cshape):
    a, c = _RNG.normal(size=(5, 3)), _RNG.normal(size=cshape)
    q, r = np.linalg.qr(a)
    signs = np.sign(np.diag(r))             # Q's column signs may differ from LAPACK's
    got_cq, got_r = fla.qr_multiply(a, c, mode)
    want_cq, want_r = sl.qr_multiply(a, c, mode)
    ours_q, ours_r = np.linalg.qr(a)
    _close(np.abs(got_r), np.abs(want_r))
    expected = (ours_q @ c) if mode == "left" else (c @ ours_q)
    _close(got_cq, expected)
    assert signs.shape == (3,)
    got_cq, got_r, p = fla.qr_multiply(a, c, mode, pivoting=True)
    want_cq, want_r, want_p = sl.qr_multiply(a, c, mode, pivoting=True)
    assert np.array_equal(np.asarray(p), want_p)
    _close(got_r, want_r)
    _close(got_cq, want_cq)


@pytest.mark.parametrize("n", [1, 4, 6, 9])
def test_rsf2csf_against_scipy(n):
    a = _RNG.normal(size=(n, n))
    t, z = sl.schur(a)
    got_t, got_z = fla.rsf2csf(t, z)
    want_t, want_z = sl.rsf2csf(t, z)
    _close(got_t, want_t)
    _close(got_z, want_z)
    _close(ft.jit(fla.rsf2csf)(t, z)[0], want_t)


def test_solve_sylvester_against_scipy_grads_jit():
    a, b, c = _RNG.normal(size=(5, 5)), _RNG.normal(size=(3, 3)), _RNG.normal(size=(5, 3))
    _close(fla.solve_sylvester(a, b, c), sl.solve_sylvester(a, b, c), 1e-12)
    _close(fla.solve_sylvester(_MATS[1], b, c[:4]), sl.solve_sylvester(_MATS[1], b, c[:4]), 1e-12)
    _close(ft.jit(fla.solve_sylvester)(a, b, c), sl.solve_sylvester(a, b, c), 1e-12)
    check_grads(fla.solve_sylvester, (a[:3, :3] + 3 * np.eye(3), b[:2, :2], c[:3, :2]),
                order=1, modes=("fwd", "rev"))


def test_qr_pivoting_is_scipys():
    # JAX's linalg_test testScipyQrModes(pivoting=True): it raised ValueError
    rng = np.random.default_rng(8)
    for shape, cplx in [((4, 4), False), ((3, 5), True), ((5, 3), False)]:
        a = rng.normal(size=shape) + (1j * rng.normal(size=shape) if cplx else 0)
        a[:, 1] = a[:, 0]                                   # rank deficient
        for mode in ("full", "economic", "r"):
            got, want = fla.qr(a, mode=mode, pivoting=True), sl.qr(a, mode=mode, pivoting=True)
            assert len(got) == len(want)
            np.testing.assert_array_equal(np.asarray(got[-1]), want[-1])
            for g, w in zip(got[:-1], want[:-1]):
                _close(np.abs(np.asarray(g)), np.abs(w), 1e-12)
    q, r, p = ft.jit(lambda m: fla.qr(m, pivoting=True))(a)
    _close(np.asarray(q) @ np.asarray(r), a[:, np.asarray(p)], 1e-12)
    check_grads(lambda m: fla.qr(m, mode="economic", pivoting=True)[1], (rng.normal(size=(4, 3)),),
                order=1, modes=("fwd", "rev"))
