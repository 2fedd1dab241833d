"""lax.custom_linear_solve and lax.custom_root: values and implicit derivatives against
JAX's (computed with jax 0.10, x64, and written down here) and finite differences,
under grad, jvp, vmap and jit; the solver itself is never differentiated."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax

A = np.array([[4., 1., 0.5], [1., 3., 0.2], [0.5, 0.2, 2.]])
B = np.array([1., 2., 3.])
W = np.array([1., -2., 0.5])


def _cg(matvec, b):
    # three conjugate-gradient steps: exact for a 3x3 SPD matrix
    x = fnp.zeros_like(b)
    r = b - matvec(x)

    def body(i, s):
        x, r, p = s
        ap = matvec(p)
        alpha = (r @ r) / (p @ ap)
        rn = r - alpha * ap
        return x + alpha * p, rn, rn + (rn @ rn) / (r @ r) * p
    return lax.fori_loop(0, 3, body, (x, r, r))[0]


def _sym_loss(s, b=B):
    return _loss(s + s.T, b)


def _loss(a, b):
    x = lax.custom_linear_solve(lambda v: a @ v, b, _cg, symmetric=True)
    return fnp.sum(x * W)


# jax.lax.custom_linear_solve(lambda v: A @ v, B, cg, symmetric=True) and its gradients
JAX_X = [-0.08172851, 0.59652419, 1.46077971]
JAX_GRAD_B = [0.42790042, -0.82433067, 0.22545796]
JAX_GRAD_A = [[0.03497166, -0.25525295, -0.62506825],
              [-0.06737132, 0.49173319, 1.20416552],
              [0.01842634, -0.13449113, -0.32934442]]


def _fd(f, x, eps=1e-6):
    x = np.asarray(x, float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def test_cg_solve_and_gradients_match_jax():
    x = lax.custom_linear_solve(lambda v: A @ v, B, _cg, symmetric=True)
    np.testing.assert_allclose(np.asarray(x), JAX_X, atol=1e-8)
    np.testing.assert_allclose(np.asarray(ft.grad(_loss, 1)(A, B)), JAX_GRAD_B, atol=1e-8)
    np.testing.assert_allclose(np.asarray(ft.grad(_loss, 0)(A, B)), JAX_GRAD_A, atol=1e-8)
    ga, gb = ft.jit(ft.grad(_loss, (0, 1)))(A, B)
    np.testing.assert_allclose(np.asarray(ga), JAX_GRAD_A, atol=1e-8)
    np.testing.assert_allclose(np.asarray(gb), JAX_GRAD_B, atol=1e-8)
    # finite differences along symmetric perturbations (CG assumes a symmetric matrix)
    np.testing.assert_allclose(np.asarray(ft.grad(_sym_loss)(A / 2)),
                               _fd(lambda s: float(_sym_loss(s)), A / 2), atol=1e-6)


def test_cg_under_vmap_and_jit():
    bs = np.stack([B, -2.0 * B, B + 1.0])
    xs = ft.jit(ft.vmap(lambda b: lax.custom_linear_solve(lambda v: A @ v, b, _cg,
                                                           symmetric=True)))(bs)
    np.testing.assert_allclose(np.asarray(xs), np.linalg.solve(A, bs.T).T, atol=1e-10)
    As = np.stack([A, A + np.eye(3), 2.0 * A])
    ga = ft.jit(ft.vmap(ft.grad(_sym_loss)))(As / 2)
    for k in range(3):
        np.testing.assert_allclose(np.asarray(ga[k]),
                                   _fd(lambda s: float(_sym_loss(s)), As[k] / 2), atol=1e-6)
    gb = ft.vmap(ft.grad(_loss, 1), (None, 0))(A, bs)
    np.testing.assert_allclose(np.asarray(gb), np.tile(JAX_GRAD_B, (3, 1)), atol=1e-8)


def test_jvp_and_second_order():
    da = np.arange(9.0).reshape(3, 3) / 10
    _, t = ft.jvp(lambda a: _loss(a, B), (A,), (da,))
    np.testing.assert_allclose(float(t), np.sum(np.asarray(JAX_GRAD_A) * da), atol=1e-8)
    # hessian in b is zero (linear); in a it is finite differences of the gradient
    h = ft.hessian(_sym_loss)(A / 2)
    fd = _fd(lambda s: np.asarray(ft.grad(_sym_loss)(s)).ravel()[1], A / 2, eps=1e-5)
    np.testing.assert_allclose(np.asarray(h)[0, 1], fd, atol=1e-6)


def test_nonsymmetric_with_transpose_solve_pytree_and_aux():
    m = np.array([[2.0, 1.0], [-0.5, 3.0]])

    def f(m, b):
        def matvec(v):
            return {"u": m @ v["u"], "w": 2.0 * v["w"]}

        def solve(mv, r):
            return {"u": fnp.linalg.solve(m, r["u"]), "w": r["w"] / 2.0}, fnp.sum(r["u"])

        def tsolve(vm, r):
            return {"u": fnp.linalg.solve(m.T, r["u"]), "w": r["w"] / 2.0}, 0.0 * r["w"]
        x, aux = lax.custom_linear_solve(matvec, b, solve, tsolve, has_aux=True)
        return fnp.sum(x["u"] * np.array([1.0, 3.0])) + fnp.sin(x["w"]), aux

    b = {"u": np.array([1.0, -1.0]), "w": np.float64(0.5)}
    (val, aux) = f(m, b)
    assert float(aux) == 0.0
    g = ft.grad(lambda m: f(m, b)[0])(m)
    np.testing.assert_allclose(np.asarray(g), _fd(lambda m: float(f(m, b)[0]), m), atol=1e-7)
    gb = ft.grad(lambda u: f(m, {"u": u, "w": b["w"]})[0])(b["u"])
    np.testing.assert_allclose(np.asarray(gb), np.linalg.solve(m.T, [1.0, 3.0]), atol=1e-12)


def test_reverse_mode_without_transpose_solve_is_a_clear_error():
    def f(b):
        return fnp.sum(lax.custom_linear_solve(lambda v: A @ v, b, _cg))
    _, t = ft.jvp(f, (B,), (B,))           # forward mode needs no transpose
    np.testing.assert_allclose(float(t), float(f(B)), rtol=1e-10)
    with pytest.raises(TypeError, match="transpose_solve"):
        ft.grad(f)(B)


def test_bad_inputs():
    with pytest.raises(TypeError, match="floating"):
        lax.custom_linear_solve(lambda v: v, np.arange(3), lambda mv, b: b)
    with pytest.raises(TypeError, match="matvec output 0"):
        lax.custom_linear_solve(lambda v: v[:2], B, lambda mv, b: b)
    with pytest.raises(TypeError, match="structure"):
        lax.custom_linear_solve(lambda v: v, B, lambda mv, b: (b, b))
    with pytest.raises(TypeError, match="floating"):
        lax.custom_root(lambda x: x, 1, lambda f, x: x, lambda g, y: y)


def _newton(f, x0):
    def body(_, x):
        return x - f(x) / ft.grad(f)(x)
    return lax.fori_loop(0, 30, body, x0)


def _sqrt(a):
    return lax.custom_root(lambda x: x ** 2 - a, 1.0, _newton, lambda g, y: y / g(1.0))


def test_newton_sqrt_matches_jax():
    # jax.lax.custom_root with the same Newton solver: value, grad, grad of grad
    np.testing.assert_allclose(float(_sqrt(2.0)), 1.4142135623730951, rtol=1e-15)
    np.testing.assert_allclose(float(ft.grad(_sqrt)(2.0)), 0.35355339059327373, rtol=1e-14)
    np.testing.assert_allclose(float(ft.grad(ft.grad(_sqrt))(2.0)), -0.08838834764831842,
                               rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ft.vmap(ft.grad(_sqrt))(np.array([1.0, 4.0, 9.0]))),
                               [0.5, 0.25, 1 / 6], rtol=1e-14)
    np.testing.assert_allclose(float(ft.jit(ft.grad(_sqrt))(2.0)), 0.35355339059327373,
                               rtol=1e-14)
    _, t = ft.jvp(_sqrt, (2.0,), (1.0,))
    np.testing.assert_allclose(float(t), _fd(lambda a: float(_sqrt(a)), 2.0), rtol=1e-8)


def test_custom_root_with_a_linear_solve_tangent_and_aux():
    # a 2-d system f(x) = M x + 0.1 x**3 - c, tangent solve by custom_linear_solve
    m = np.array([[3.0, 1.0], [1.0, 2.0]])

    def root(c):
        def f(x):
            return m @ x + 0.1 * x ** 3 - c

        def solve(f, x):
            for _ in range(30):
                x = x - fnp.linalg.solve(ft.jacfwd(f)(x), f(x))
            return x, fnp.sum(fnp.abs(f(x)))

        def tangent_solve(g, y):
            jac = ft.jacfwd(g)(y)
            return lax.custom_linear_solve(g, y, lambda mv, r: fnp.linalg.solve(jac, r),
                                           lambda vm, r: fnp.linalg.solve(jac.T, r))
        return lax.custom_root(f, fnp.zeros(2), solve, tangent_solve, has_aux=True)

    c = np.array([1.0, -0.5])
    x, resid = root(c)
    assert float(resid) < 1e-12
    np.testing.assert_allclose(np.asarray(m @ x + 0.1 * np.asarray(x) ** 3), c, atol=1e-12)
    loss = lambda c: fnp.sum(root(c)[0] * np.array([1.0, 2.0]))   # noqa: E731
    np.testing.assert_allclose(np.asarray(ft.grad(loss)(c)), _fd(lambda c: float(loss(c)), c),
                               atol=1e-7)
    np.testing.assert_allclose(np.asarray(ft.jit(ft.grad(loss))(c)),
                               np.asarray(ft.grad(loss)(c)), atol=1e-12)


def test_custom_root_second_derivative_through_the_jacobians_closure():
    # JAX's test_custom_root_vector_with_solve_closure, order 2: ∂ₓf = a depends on what f
    # closes over, so a second derivative must see ∂ₓf move with a (it was dropped: the
    # tangent solve held f's closure under stop_gradient)
    def root(a, b):
        tangent_solve = lambda g, y: fnp.linalg.solve(ft.jacobian(g)(y), y)  # noqa: E731
        sol = fnp.linalg.solve(a, b)
        return lax.custom_root(lambda y: a @ y - b, fnp.zeros_like(b), lambda f, x0: sol,
                               tangent_solve)

    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 2)) + 2 * np.eye(2), rng.standard_normal(2)
    ta, tb, sa, sb = (rng.standard_normal(s) for s in [(2, 2), (2,), (2, 2), (2,)])
    for f in (root, lambda a, b: fnp.linalg.solve(a, b)):
        d1 = lambda a, b, f=f: ft.jvp(f, (a, b), (ta, tb))[1]  # noqa: E731
        got = np.asarray(ft.jvp(d1, (a, b), (sa, sb))[1])
        if f is root:
            first = got
    np.testing.assert_allclose(first, got, rtol=1e-12)
    hess = ft.hessian(lambda a: fnp.sum(root(a, b) * W[:2]))(a)
    ref = ft.hessian(lambda a: fnp.sum(fnp.linalg.solve(a, b) * W[:2]))(a)
    np.testing.assert_allclose(np.asarray(hess), np.asarray(ref), rtol=1e-10, atol=1e-12)
