"""functrans.scipy.linalg lu, lu_factor, lu_solve and sqrtm against scipy (values),
JAX (derivatives, computed with jax 0.10 under x64 and written down here) and finite
differences, under jit and vmap; sqrtm compiled (native on the CPU backend) against
its host implementation."""
import warnings

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


def _sqrtm_inputs():
    spd = _RNG.standard_normal((5, 5))
    near = spd @ spd.T
    near -= (np.linalg.eigvalsh(near)[0] - 1e-10) * np.eye(5)     # smallest eigenvalue 1e-10
    return {"random": _RNG.standard_normal((6, 6)), "spd": spd @ spd.T + np.eye(5),
            "nearly_singular": near, "f32": _RNG.standard_normal((4, 4)).astype(np.float32),
            "complex": _RNG.standard_normal((4, 4)) + 1j * _RNG.standard_normal((4, 4)),
            "c64": (_RNG.standard_normal((3, 3)) + 1j).astype(np.complex64),
            "batched": _RNG.standard_normal((2, 3, 4, 4))}


@pytest.mark.parametrize("name", list(_sqrtm_inputs()))
def test_sqrtm_compiled_equals_eager_and_scipy(name):
    # under jit the CPU backend runs sqrtm natively (zgees, the recurrence, two zgemm):
    # the host implementation's steps, so the same numbers to rounding
    a = _sqrtm_inputs()[name]
    f = ft.jit(fla.sqrtm)
    assert f.lower(a).compile().cost_analysis()["host steps"] == 0
    eager, compiled = np.asarray(fla.sqrtm(a)), np.asarray(f(a))
    single = a.dtype in (np.float32, np.complex64)
    assert eager.dtype == compiled.dtype == (np.complex64 if single else np.complex128)
    tight = 1e-5 if eager.dtype == np.complex64 else 1e-13
    np.testing.assert_allclose(compiled, eager, rtol=tight, atol=tight * np.abs(eager).max())
    flat = a.reshape((-1,) + a.shape[-2:]).astype(np.complex128)
    want = np.stack([sl.sqrtm(m) for m in flat]).reshape(a.shape)
    tol = 1e-5 if eager.dtype == np.complex64 else 1e-7 if name == "nearly_singular" else 1e-11
    np.testing.assert_allclose(eager, want, rtol=tol, atol=tol * np.abs(want).max())
    np.testing.assert_allclose(eager @ eager, a, rtol=10 * tol, atol=10 * tol * np.abs(a).max())


def test_sqrtm_singular_matrices_same_on_host_and_compiled():
    # zero eigenvalues: a root where one exists (the recurrence's 0/0 gives 0, JAX's rule);
    # none for a nilpotent block: inf/NaN (JAX: NaN; scipy: inf in place), never finite junk
    rooted = [np.zeros((2, 2)), np.diag([0.0, 0.0, 1.0]),
              np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]),
              np.array([[1.0, 2.0], [2.0, 4.0]])]
    rootless = [np.array([[0.0, 1.0], [0.0, 0.0]]),
                np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])]
    f = ft.jit(fla.sqrtm)
    for m in rooted + rootless:
        eager, compiled = np.asarray(fla.sqrtm(m)), np.asarray(f(m))
        np.testing.assert_array_equal(compiled, eager)
    for m in rooted:
        r = np.asarray(fla.sqrtm(m))
        np.testing.assert_allclose(r @ r, m, atol=1e-14)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # scipy: "Matrix is singular"
            np.testing.assert_allclose(r, sl.sqrtm(m), atol=1e-14)
    for m in rootless:
        assert not np.isfinite(np.asarray(fla.sqrtm(m))).all()
    for shape in ((0, 0), (2, 0, 0), (0, 3, 3)):       # empty matrices or stacks
        for run in (fla.sqrtm, f):
            r = np.asarray(run(np.zeros(shape)))
            assert r.shape == shape and r.dtype == np.complex128
    bad = np.array([[np.inf, 0.0], [0.0, 1.0]])       # non-finite input: NaN, both ways
    assert np.isnan(np.asarray(fla.sqrtm(bad)).real).all()
    assert np.isnan(np.asarray(f(bad)).real).all()


def _sqrtm_loss(a):
    w = np.arange(a.shape[-1] ** 2, dtype=np.float64).reshape(a.shape[-2:])
    r = fla.sqrtm(a)
    return fnp.sum(fnp.real(r) * w) + fnp.sum(fnp.imag(r) ** 2)


def test_sqrtm_derivatives_against_finite_differences():
    # X dX + dX X = dA (a Sylvester equation in X's Schur basis); JAX's sqrtm has none
    spd = _RNG.standard_normal((4, 4))
    spd = spd @ spd.T + np.eye(4)
    z = _RNG.standard_normal((3, 3)) + 1j * _RNG.standard_normal((3, 3))
    da = _RNG.standard_normal((4, 4))
    eps = 1e-6
    fd = (sl.sqrtm(spd + eps * da) - sl.sqrtm(spd - eps * da)) / (2 * eps)
    for run in (ft.jvp, ft.jit(ft.jvp, static_argnums=0)):
        _, t = run(fla.sqrtm, (spd,), (da,))
        np.testing.assert_allclose(np.asarray(t), fd, atol=1e-7)
    dz = _RNG.standard_normal((3, 3)) + 1j * _RNG.standard_normal((3, 3))
    _, t = ft.jvp(fla.sqrtm, (z,), (dz,))
    fdz = (sl.sqrtm(z + eps * dz) - sl.sqrtm(z - eps * dz)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(t), fdz, atol=1e-7)
    g = np.asarray(ft.grad(_sqrtm_loss)(spd))
    np.testing.assert_allclose(g, _fd(lambda m: float(_sqrtm_loss(m)), spd), atol=1e-6)
    jg = ft.jit(ft.grad(_sqrtm_loss))
    assert jg.lower(spd).compile().cost_analysis()["host steps"] == 0
    np.testing.assert_allclose(np.asarray(jg(spd)), g, atol=1e-12)
    stack = np.stack([spd, spd + np.eye(4)])
    np.testing.assert_allclose(np.asarray(ft.vmap(ft.grad(_sqrtm_loss))(stack)),
                               np.stack([ft.grad(_sqrtm_loss)(m) for m in stack]), atol=1e-12)
    # second order: the JVP of the JVP (the solve's Schur factors carry no derivative)
    t2 = _RNG.standard_normal((4, 4))

    def first(m):
        return fnp.real(ft.jvp(fla.sqrtm, (m,), (da,))[1])
    _, second = ft.jvp(first, (spd,), (t2,))
    want = (np.asarray(first(spd + 1e-5 * t2)) - np.asarray(first(spd - 1e-5 * t2))) / 2e-5
    np.testing.assert_allclose(np.asarray(second), want, atol=1e-7)


def test_bad_inputs_are_clear():
    with pytest.raises(ValueError, match=r"matrix.*\(3,\)"):
        fla.lu(np.ones(3))
    with pytest.raises(ValueError, match="matrix"):
        fla.lu_factor(np.ones(3))
    with pytest.raises(ValueError, match="square"):
        fla.lu_solve(fla.lu_factor(np.ones((2, 3))), np.ones(2))
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


def test_lu_of_a_0x0_matrix():
    # JAX's testLu runs shape (0, 0): the impl's reshape((-1, 0, 0)) raised
    for shape in [(0, 0), (3, 0, 0), (0, 2, 2)]:
        p, l, u = fla.lu(np.zeros(shape))
        assert p.shape == l.shape == u.shape == shape
    assert ft.jit(fla.lu)(np.zeros((0, 0)))[0].shape == (0, 0)


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3), (2, 3, 4)])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.complex64])
def test_lu_complex_and_rectangular(shape, dtype):
    # JAX's testLu / testLuGrad shapes: complex and (m, n) raised (TypeError, ValueError)
    a = _RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * _RNG.standard_normal(shape)
    a = a.astype(dtype)
    tol = 1e-5 if dtype == np.complex64 else 1e-13
    mats = a.reshape((-1,) + shape[-2:])
    for permute_l in (False, True):
        got = [np.asarray(g) for g in fla.lu(a, permute_l=permute_l)]
        for k, m in enumerate(mats):
            for g, w in zip(got, sl.lu(m, permute_l=permute_l)):
                g = g.reshape((-1,) + g.shape[-2:])[k]
                assert g.dtype == w.dtype       # p is real for complex a, as scipy's
                np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    lu, piv = fla.lu_factor(a)
    c_lu, c_piv = ft.jit(fla.lu_factor)(a)
    for k, m in enumerate(mats):
        wlu, wpiv = sl.lu_factor(m)
        np.testing.assert_allclose(np.asarray(lu).reshape(mats.shape)[k], wlu, rtol=tol, atol=tol)
        assert np.array_equal(np.asarray(piv).reshape(-1, wpiv.size)[k], wpiv)
    np.testing.assert_array_equal(np.asarray(c_lu), np.asarray(lu))
    if dtype == np.complex64:
        return
    # JVP (JAX's padded-factor rule) against central differences of the factors
    t = _RNG.standard_normal(shape) + (1j * _RNG.standard_normal(shape) if a.dtype.kind == "c" else 0)
    _, (dlu, _, _) = ft.jvp(ft.lax.linalg.lu, (a,), (t.astype(dtype),))
    step = lambda s: np.asarray(fla.lu_factor(a + s * t)[0])     # noqa: E731
    np.testing.assert_allclose(np.asarray(dlu), (step(1e-6) - step(-1e-6)) / 2e-6, atol=1e-7)


def test_lu_solve_complex():
    a = _RNG.standard_normal((4, 4)) + 1j * _RNG.standard_normal((4, 4))
    b = _RNG.standard_normal((4, 2)) + 1j * _RNG.standard_normal((4, 2))
    for trans in (0, 1, 2):
        np.testing.assert_allclose(np.asarray(fla.lu_solve(fla.lu_factor(a), b, trans=trans)),
                                   sl.lu_solve(sl.lu_factor(a), b, trans=trans), atol=1e-13)
    # real factors, complex right-hand side: a complex solution (it raised TypeError)
    r = a.real
    np.testing.assert_allclose(np.asarray(fla.lu_solve(fla.lu_factor(r), b[:, 0])),
                               sl.lu_solve(sl.lu_factor(r), b[:, 0]), atol=1e-13)
