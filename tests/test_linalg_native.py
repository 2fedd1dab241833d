"""``svd`` (?gesdd), ``slogdet`` and ``lu`` (?getrf) under jit on the CPU backend call LAPACK from
the generated code: the primitive's numpy implementation is replaced by one that fails,
so a host step would raise. Values, dtypes and the failure conventions (NaN factors
where ?gesdd fails, sign 0 and -inf at an exactly singular matrix) equal the numpy
implementations'; LAPACK's thread count is balanced like the BLAS's."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from backends.llvm import lapack, threads
from functrans.primitives import linalg_det as linalg_prims, linalg_decomp, linalg_lu

RNG = np.random.default_rng(7)
pytestmark = pytest.mark.skipif(not lapack.available(), reason="scipy's LAPACK not found")


def _no_host_step(*args, **kwargs):
    raise AssertionError("ran as a host step")


def _native(monkeypatch, prim, fun, *args):
    monkeypatch.setattr(prim, "impl", _no_host_step)
    try:
        return ft.jit(fun, backend="cpu")(*args)
    finally:
        monkeypatch.undo()


def _close(got, want, tol):
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5), (2, 3, 4, 2), (1, 1)])
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("uv", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_svd_under_jit_calls_lapack(monkeypatch, shape, full, uv, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    tol = 1e-10 if dtype == np.float64 else 2e-4

    def f(a):
        out = linalg_decomp.svd(a, full_matrices=full, compute_uv=uv)
        return out if uv else (out,)
    want = f(x)         # eager: the numpy implementation (numpy's gesdd)
    got = _native(monkeypatch, linalg_decomp.svd_p, f, x)
    _close(got, want, tol)      # the same LAPACK routine: the same signs


def test_svd_reconstructs_and_fails_to_nan(monkeypatch):
    x = RNG.standard_normal((4, 6, 5))
    u, s, vt = _native(monkeypatch, linalg_decomp.svd_p,
                       lambda a: linalg_decomp.svd(a, full_matrices=False), x)
    np.testing.assert_allclose(np.asarray(u) * np.asarray(s)[..., None, :] @ np.asarray(vt), x,
                               atol=1e-12)
    bad = np.stack([np.eye(3), np.full((3, 3), np.nan)])
    u, s, vt = _native(monkeypatch, linalg_decomp.svd_p, linalg_decomp.svd, bad)
    assert np.isnan(np.asarray(s)[1]).all() and np.isnan(np.asarray(u)[1]).all()
    np.testing.assert_allclose(np.asarray(s)[0], np.ones(3))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_slogdet_under_jit_calls_lapack(monkeypatch, dtype):
    x = RNG.standard_normal((3, 5, 5)).astype(dtype)
    x[1, 0] *= -1.0
    tol = 1e-12 if dtype == np.float64 else 1e-5
    got = _native(monkeypatch, linalg_prims.slogdet_p, linalg_prims.slogdet, x)
    _close(got, linalg_prims.slogdet(x), tol)
    sign, logabs = np.linalg.slogdet(x)
    np.testing.assert_array_equal(np.asarray(got[0]), sign)
    np.testing.assert_allclose(np.asarray(got[1]), logabs, rtol=tol)


def test_slogdet_special_matrices(monkeypatch):
    cases = [np.array([[1.0, 2.0], [2.0, 4.0]]), np.zeros((3, 3)), np.full((2, 2), np.nan),
             np.zeros((0, 0)), np.diag([-1e-300, 1e-300, 1e300])]
    for m in cases:
        got = _native(monkeypatch, linalg_prims.slogdet_p, linalg_prims.slogdet, m)
        with np.errstate(all="ignore"):
            want = np.linalg.slogdet(m)
        np.testing.assert_array_equal(np.asarray(got[0]), want[0], err_msg=str(m))
        np.testing.assert_array_equal(np.asarray(got[1]), want[1], err_msg=str(m))


def test_lapack_thread_count_is_balanced(monkeypatch):
    # scipy's LAPACK runs on its own OpenBLAS (not numpy's): its set_num_threads joins
    # the balancer, and a program calling LAPACK balances per call
    lapack.available()
    names = [getattr(f, "__name__", "") for f in threads.BLAS_SETTERS]
    assert "scipy_openblas_set_num_threads" in names or "openblas_set_num_threads" in names
    a = np.eye(3)
    compiled = ft.jit(lambda x: linalg_prims.slogdet(x)[1], backend="cpu").lower(a).compile()
    assert compiled.exe.compiled.threaded
    seen = []
    monkeypatch.setattr(threads, "BLAS_SETTERS", list(threads.BLAS_SETTERS))
    monkeypatch.setattr(threads, "_STATE", {"checked": -1e9, "in use": 3})
    threads.add_blas_setter(seen.append)   # a late library gets the count in use at once
    assert seen == [3] and threads.BLAS_SETTERS[-1] == seen.append


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_lu_under_jit_calls_lapack_bit_for_bit(monkeypatch, dtype):
    # the same ?getrf of the same LAPACK as scipy's lu_factor: identical factors, pivots
    # and permutation; singular matrices factor, inf/NaN ones give NaN and no swaps
    cases = [RNG.standard_normal((5, 5)), RNG.standard_normal((2, 3, 4, 4)),
             np.array([[1.0, 2.0], [2.0, 4.0]]), np.zeros((3, 3)), np.eye(1),
             np.stack([np.eye(3), np.full((3, 3), np.nan), np.diag([1.0, np.inf, 2.0])])]
    for x in cases:
        x = x.astype(dtype)
        want = linalg_lu.lu(x)
        got = _native(monkeypatch, linalg_lu.lu_p, linalg_lu.lu, x)
        for g, w in zip(got, want):
            g, w = np.asarray(g), np.asarray(w)
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "complex64"])
@pytest.mark.parametrize("compute_uv", [False, True])
def test_svd_of_a_matrix_holding_inf_or_nan_gives_nan_factors_and_returns(dtype, compute_uv):
    # LAPACK's ?gesdd is undefined on non-finite input (numpy gives NaN singular values
    # beside finite U and V): the host step and the native call both give such a matrix
    # NaN factors, and leave the finite matrices of the stack alone
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 6, 6)).astype(dtype)
    a[0, 2, 3] = np.inf
    a[2, 1, 1] = np.nan
    f = lambda m: fnp.linalg.svd(m, compute_uv=compute_uv)   # noqa: E731
    for got in (f(a), ft.jit(f)(a)):
        got = got if isinstance(got, tuple) else (got,)
        for g in got:
            g = np.asarray(g)
            assert np.isnan(g[0]).all() and np.isnan(g[2]).all()
            assert np.isfinite(g[1]).all()
    out = ft.jit(f)(a)
    s = np.asarray(out[1] if compute_uv else out)[1]      # (U, S, Vh): S of matrix 1
    np.testing.assert_allclose(s, np.linalg.svd(a[1].astype(np.complex128), compute_uv=False),
                               rtol=1e-5)


@pytest.mark.parametrize("shape, full", [((2, 3, 7, 32), False), ((3, 53, 7), True),
                                         ((2, 4, 4), False)])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_single_precision_svd_under_jit_is_numpys_bit_for_bit(monkeypatch, shape, full, dtype):
    # numpy computes float32 in double (dgesdd) and rounds; jit called sgesdd, whose
    # singular vectors differed in sign (|u_jit - u_eager| up to 1.8 on (2, 3, 7, 32))
    x = np.random.RandomState(0).standard_normal(shape).astype(dtype)
    got = _native(monkeypatch, linalg_decomp.svd_p,
                  lambda a: linalg_decomp.svd(a, full_matrices=full), x)
    want = np.linalg.svd(x, full_matrices=full)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == w.dtype and np.array_equal(np.asarray(g), w)


@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_single_precision_qr_of_rank_deficient_input_is_numpys(monkeypatch, mode):
    # rank 1 and 2: a reflector's pivot is rounding noise, and sgeqrf's sign of it
    # differed from dgeqrf's (numpy's): Q columns flipped, |q_jit - q_eager| = 1.07
    rs = np.random.RandomState(0)
    x = np.stack([(rs.randn(6, 1) @ rs.randn(1, 5)), rs.randn(6, 2) @ rs.randn(2, 5)])
    x = x.astype(np.float32)
    got = _native(monkeypatch, linalg_decomp.qr_p,
                  lambda a: linalg_decomp.qr(a, full_matrices=mode == "complete"), x)
    for g, w in zip(got, np.linalg.qr(x, mode=mode)):
        assert np.asarray(g).dtype == w.dtype and np.array_equal(np.asarray(g), w)
    assert all(np.array_equal(np.asarray(e), np.asarray(j))
               for e, j in zip(fnp.linalg.qr(x, mode=mode), got))
