"""functrans.scipy.linalg lu, lu_factor, lu_solve and sqrtm against scipy (values),
JAX (derivatives, computed with jax 0.10 under x64 and written down here) and finite
differences, under jit and vmap."""
import numpy as np
import pytest
import scipy.linalg as sl

import functrans as ft
import functrans.numpy as fnp
from functrans.scipy import linalg as fla

_RNG = np.random.default_rng(7)
A3 = np.array([[1., 2., 3.], [4., 5., 6.], [7., 8., 10.]])


def _fd(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-13), (np.float32, 1e-5)])
def test_lu_and_lu_factor_against_scipy(dtype, tol):
    a = _RNG.standard_normal((5, 5)).astype(dtype)
    for permute_l in (False, True):
        got = fla.lu(a, permute_l=permute_l)
        want = sl.lu(a, permute_l=permute_l)
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == dtype
            np.testing.assert_allclose(np.asarray(g), w, rtol=tol, atol=tol)
    lu, piv = fla.lu_factor(a)
    wlu, wpiv = sl.lu_factor(a)
    np.testing.assert_allclose(np.asarray(lu), wlu, rtol=tol, atol=tol)
    assert np.asarray(piv).dtype == np.int32 and np.array_equal(np.asarray(piv), wpiv)
    p, l, u = (np.asarray(m) for m in fla.lu(a))
    np.testing.assert_allclose(p @ l @ u, a, rtol=10 * tol, atol=10 * tol)


@pytest.mark.parametrize("trans", [0, 1, 2])
def test_lu_solve_against_scipy(trans):
    a = _RNG.standard_normal((4, 4))
    fac, wfac = fla.lu_factor(a), sl.lu_factor(a)
    for b in (_RNG.standard_normal(4), _RNG.standard_normal((4, 3))):
        np.testing.assert_allclose(np.asarray(fla.lu_solve(fac, b, trans=trans)),
                                   sl.lu_solve(wfac, b, trans=trans), rtol=1e-12, atol=1e-12)
        jitted = ft.jit(lambda a, b: fla.lu_solve(fla.lu_factor(a), b, trans=trans))
        np.testing.assert_allclose(np.asarray(jitted(a, b)), sl.lu_solve(wfac, b, trans=trans),
                                   rtol=1e-12, atol=1e-12)


def test_batched_stacks_and_vmap():
    a = _RNG.standard_normal((3, 4, 4))
    b = _RNG.standard_normal((3, 4))
    want = np.stack([sl.lu_solve(sl.lu_factor(m), v) for m, v in zip(a, b)])
    np.testing.assert_allclose(np.asarray(fla.lu_solve(fla.lu_factor(a), b)), want, atol=1e-12)
    f = ft.jit(ft.vmap(lambda m, v: fla.lu_solve(fla.lu_factor(m), v, trans=1)))
    np.testing.assert_allclose(np.asarray(f(a, b)),
                               np.stack([sl.lu_solve(sl.lu_factor(m), v, trans=1)
                                         for m, v in zip(a, b)]), atol=1e-12)
    ps, ls, us = ft.vmap(fla.lu)(a)
    for k in range(3):
        for g, w in zip((ps[k], ls[k], us[k]), sl.lu(a[k])):
            np.testing.assert_allclose(np.asarray(g), w, atol=1e-13)


def _lu_loss(a):
    _, l, u = fla.lu(a)
    return fnp.sum(l) + fnp.sum(u ** 2)


def test_lu_derivatives_match_jax_and_finite_differences():
    # jax.grad of sum(l) + sum(u**2) from jax.scipy.linalg.lu, at A3
    jax_grad = [[-5.30612245, 0.21428571, 3.64285714],
                [-1.85714286, 3., -1.],
                [15.81924198, 14.25510204, 20.05102041]]
    np.testing.assert_allclose(np.asarray(ft.grad(_lu_loss)(A3)), jax_grad, atol=1e-8)
    np.testing.assert_allclose(np.asarray(ft.jit(ft.grad(_lu_loss))(A3)), jax_grad, atol=1e-8)
    a = _RNG.standard_normal((4, 4))
    np.testing.assert_allclose(np.asarray(ft.grad(_lu_loss)(a)),
                               _fd(lambda m: float(_lu_loss(m)), a), rtol=1e-6, atol=1e-6)
    da = _RNG.standard_normal((4, 4))
    _, t = ft.jvp(lambda m: fla.lu_factor(m)[0], (a,), (da,))
    eps = 1e-6
    fd = (np.asarray(fla.lu_factor(a + eps * da)[0]) -
          np.asarray(fla.lu_factor(a - eps * da)[0])) / (2 * eps)
    np.testing.assert_allclose(np.asarray(t), fd, rtol=1e-6, atol=1e-6)


def test_lu_solve_derivatives_in_b_and_in_the_factors():
    b = np.array([1., 2., 3.])

    def loss(a, b):
        return fnp.sum(fla.lu_solve(fla.lu_factor(a), b) * np.array([1.0, -1.0, 2.0]))
    ga, gb = ft.grad(loss, (0, 1))(A3, b)
    np.testing.assert_allclose(np.asarray(ga), _fd(lambda m: float(loss(m, b)), A3), atol=1e-7)
    np.testing.assert_allclose(np.asarray(gb), np.linalg.solve(A3.T, [1.0, -1.0, 2.0]),
                               atol=1e-12)
    # through the factors directly (trans=1 too)
    lu, piv = (np.asarray(x) for x in fla.lu_factor(A3))

    def via_factors(lu):
        return fnp.sum(fla.lu_solve((lu, piv), b, trans=1) ** 2)
    np.testing.assert_allclose(np.asarray(ft.grad(via_factors)(lu)),
                               _fd(lambda m: float(via_factors(m)), lu), atol=1e-6)


def test_sqrtm_against_scipy():
    spd = _RNG.standard_normal((4, 4))
    spd = spd @ spd.T + np.eye(4)
    r = fla.sqrtm(spd)
    assert np.asarray(r).dtype == np.complex128            # complex always, as JAX's
    np.testing.assert_allclose(np.asarray(r), sl.sqrtm(spd), atol=1e-12)
    neg = np.array([[1., 2., 3.], [4., 5., 6.], [7., 8., 10.]])     # a negative eigenvalue
    np.testing.assert_allclose(np.asarray(fla.sqrtm(neg)), sl.sqrtm(neg), atol=1e-12)
    np.testing.assert_allclose(np.asarray(ft.jit(fla.sqrtm)(neg)), sl.sqrtm(neg), atol=1e-12)
    stack = np.stack([spd, -spd])
    np.testing.assert_allclose(np.asarray(ft.vmap(fla.sqrtm)(stack)),
                               np.stack([sl.sqrtm(m) for m in stack]), atol=1e-12)
    r32 = fla.sqrtm(spd.astype(np.float32))
    assert np.asarray(r32).dtype == np.complex64
    np.testing.assert_allclose(np.asarray(r32), sl.sqrtm(spd), rtol=1e-5, atol=1e-5)
    z = spd + 1j * np.eye(4)
    np.testing.assert_allclose(np.asarray(fla.sqrtm(z)), sl.sqrtm(z), atol=1e-12)


def test_sqrtm_is_not_differentiable_as_in_jax():
    with pytest.raises(NotImplementedError, match="sqrtm is not differentiable"):
        ft.grad(lambda a: fnp.real(fla.sqrtm(a)).sum())(np.eye(2))


def test_bad_inputs_are_clear():
    with pytest.raises(ValueError, match=r"square.*\(2, 3\)"):
        fla.lu(np.ones((2, 3)))
    with pytest.raises(ValueError, match="square"):
        fla.lu_factor(np.ones(3))
    with pytest.raises(TypeError, match="real floating"):
        fla.lu(np.eye(2) * 1j)
    with pytest.raises(ValueError, match="square"):
        fla.sqrtm(np.ones((2, 3)))
    with pytest.raises(NotImplementedError, match="blocksize"):
        fla.sqrtm(np.eye(2), blocksize=2)
    fac = fla.lu_factor(A3)
    with pytest.raises(ValueError, match="trans"):
        fla.lu_solve(fac, np.ones(3), trans=3)
    with pytest.raises(ValueError, match=r"\(2,\)"):
        fla.lu_solve(fac, np.ones(2))
    with pytest.raises(TypeError, match="piv"):
        fla.lu_solve((fac[0], np.ones(3)), np.ones(3))
    # integers are promoted to float64, as the other scipy.linalg functions do
    np.testing.assert_allclose(np.asarray(fla.lu_factor(np.array([[2, 1], [4, 3]]))[0]),
                               sl.lu_factor(np.array([[2., 1.], [4., 3.]]))[0])
