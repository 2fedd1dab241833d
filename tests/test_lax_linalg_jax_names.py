"""jax.lax.linalg's remaining names (the op-table rows in tests/cases/linalg_lax.py check
values and derivatives), the effect tokens, ``rng_uniform``, jax.errors' classes and
``distributed.is_initialized``/``shutdown``."""
import numpy as np
import pytest
import scipy.linalg as sl

import functrans as ft
from functrans import lax
from functrans.lax import linalg as L


def test_eig_shapes_flags_and_numpy_agreement():
    a = np.random.default_rng(0).standard_normal((2, 4, 4))
    w, vl, vr = L.eig(a)
    assert w.dtype == vl.dtype == vr.dtype == np.complex128 and vl.shape == (2, 4, 4)
    np.testing.assert_array_equal(np.asarray(ft.numpy.linalg.eig(a).eigenvectors),
                                  np.asarray(vr))
    np.testing.assert_array_equal(np.asarray(ft.numpy.linalg.eigvals(a)), np.asarray(w))
    vlh = np.conj(np.swapaxes(np.asarray(vl), -1, -2))
    np.testing.assert_allclose(vlh @ a, np.asarray(w)[..., :, None] * vlh, atol=1e-12)
    assert len(L.eig(a, compute_left_eigenvectors=False)) == 2
    assert len(L.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)) == 1
    jitted = ft.jit(lambda x: L.eig(x))(a)
    for g, e in zip(jitted, (w, vl, vr)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(e))


def test_eig_vector_derivatives_need_the_opt_in():
    a = np.random.default_rng(1).standard_normal((3, 3))
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        ft.jvp(lambda x: L.eig(x)[2], (a,), (a,))
    ft.jvp(lambda x: L.eig(x, enable_eigvec_derivs=True)[2], (a,), (a,))
    with pytest.raises(ValueError, match="lapack"):
        L.eig(a, implementation=L.EigImplementation.MAGMA)


def test_eig_non_finite_gives_nan():
    a = np.array([[np.nan, 0.0], [0.0, 1.0]])
    for x in L.eig(a):
        assert np.isnan(np.asarray(x)).all()


def test_schur_flags():
    a = np.random.default_rng(2).standard_normal((3, 3))
    t, q = L.schur(a)
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(t) @ np.asarray(q).T, a, atol=1e-12)
    (t2,) = L.schur(a, compute_schur_vectors=False)
    np.testing.assert_array_equal(np.asarray(t2), np.asarray(t))
    with pytest.raises(NotImplementedError):
        L.schur(a, sort_eig_vals=True)


def test_scipy_hessenberg_is_the_lax_reduction():
    a = np.random.default_rng(3).standard_normal((5, 5))
    h, q = ft.scipy.linalg.hessenberg(a, calc_q=True)
    hs, qs = sl.hessenberg(a, calc_q=True)
    np.testing.assert_allclose(np.asarray(h), hs, atol=1e-12)
    np.testing.assert_allclose(np.asarray(q), qs, atol=1e-12)
    packed, taus = L.hessenberg(a)
    np.testing.assert_array_equal(np.asarray(h), np.triu(np.asarray(packed), -1))


def test_tridiagonal_reconstructs_and_orders_reflectors():
    x = np.random.default_rng(4).standard_normal((4, 4)) + 1j * np.random.default_rng(5) \
        .standard_normal((4, 4))
    a = x + x.conj().T
    for lower in (True, False):
        packed, d, e, taus = L.tridiagonal(a, lower=lower)
        t = np.diag(np.asarray(d)) + np.diag(np.asarray(e), 1) + np.diag(np.asarray(e), -1)
        assert np.allclose(np.linalg.eigvalsh(t), np.linalg.eigvalsh(a))


def test_tridiagonal_solve_singular_is_nan_and_grads_match_dense():
    x = L.tridiagonal_solve(np.zeros(3), np.zeros(3), np.zeros(3), np.ones((3, 1)))
    assert np.isnan(np.asarray(x)).all()
    x = L.tridiagonal_solve(np.zeros(3), np.zeros(3), np.zeros(3), np.ones((3, 1)),
                            perturb_singular=True)
    assert np.isfinite(np.asarray(x)).all()
    rng = np.random.default_rng(6)
    dl, du, b = rng.standard_normal(4), rng.standard_normal(4), rng.standard_normal((4, 2))
    d = rng.standard_normal(4) + 4

    def dense(dl, d, du, b):
        m = ft.numpy.diag(d) + ft.numpy.diag(dl[1:], -1) + ft.numpy.diag(du[:-1], 1)
        return (ft.numpy.linalg.solve(m, b) ** 2).sum()
    got = ft.grad(lambda *a: (L.tridiagonal_solve(*a) ** 2).sum(), argnums=(0, 1, 2, 3))(
        dl, d, du, b)
    want = ft.grad(dense, argnums=(0, 1, 2, 3))(dl, d, du, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10, atol=1e-12)


def test_qdwh_returns_iterations_and_convergence():
    x = np.random.default_rng(7).standard_normal((6, 4))
    u, h, k, ok = L.qdwh(x)
    assert bool(ok) and 0 < int(k) <= 10
    np.testing.assert_allclose(np.asarray(u) @ np.asarray(h), x, atol=1e-12)
    _, _, k1, ok1 = L.qdwh(x, max_iterations=1)
    assert int(k1) == 1 and not bool(ok1)
    with pytest.raises(ValueError, match="M >= N"):
        L.qdwh(x.T)


def test_symmetric_product_rejects_complex():
    with pytest.raises(TypeError):
        L.symmetric_product(np.ones((2, 2), complex), np.eye(2, dtype=complex))


def test_tokens_pass_through_jit():
    t = ft.jit(lambda t: lax.after_all(t, lax.create_token()))(lax.create_token())
    assert isinstance(t, lax.Token)
    with pytest.raises(TypeError):
        lax.after_all(np.zeros(2))


def test_rng_uniform_draws_anew_each_jitted_call():
    f = ft.jit(lambda: lax.rng_uniform(np.float32(2.0), np.float32(3.0), (1000,)))
    x, y = np.asarray(f()), np.asarray(f())
    assert x.dtype == np.float32 and (x >= 2).all() and (x < 3).all()
    assert not np.array_equal(x, y)
    i = np.asarray(lax.rng_uniform(np.int32(0), np.int32(3), (200,)))
    assert i.dtype == np.int32 and set(i.tolist()) == {0, 1, 2}


def test_error_classes():
    e = ft.errors
    assert issubclass(e.KeyReuseError, e.JAXTypeError) and issubclass(e.JAXTypeError, TypeError)
    assert issubclass(e.JAXIndexError, IndexError) and issubclass(e.JaxRuntimeError,
                                                                  RuntimeError)
    import jaxpr_ir
    assert e.JaxprTypeError is jaxpr_ir.TypeCheckError


def test_distributed_initialize_shutdown():
    ft.distributed.initialize()
    assert ft.distributed.is_initialized()
    ft.distributed.shutdown()
    assert not ft.distributed.is_initialized()
    ft.distributed.shutdown()       # a no-op
    ft.distributed.initialize()
    assert ft.distributed.is_initialized()


def test_qdwh_dynamic_shape_decomposes_the_block():
    x = np.random.default_rng(8).standard_normal((7, 5))
    u, h, _, ok = L.qdwh(x, dynamic_shape=(5, 3))
    ub, hb, _, _ = L.qdwh(x[:5, :3])
    np.testing.assert_allclose(np.asarray(u)[:5, :3], np.asarray(ub), atol=1e-13)
    np.testing.assert_allclose(np.asarray(h)[:3, :3], np.asarray(hb), atol=1e-13)
    assert bool(ok) and not np.asarray(u)[5:].any() and not np.asarray(u)[:, 3:].any()
    with pytest.raises(ValueError, match="dynamic_shape"):
        L.qdwh(x, dynamic_shape=(3, 5))
