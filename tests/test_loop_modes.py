"""Forward mode keeps one loop (or one cond); reverse mode splits it (``Trace.staged``).

The JVP rules of ``scan`` and ``cond`` emit one loop/branch choice carrying primals and
tangents together for forward mode (jvp, jacfwd: nothing is stored per iteration), and
a primal part that emits residuals plus a part linear in the tangents where the result
is later partial-evaluated or transposed (linearize, grad, jvp_jaxpr, checkpoint, split
control-flow bodies). Every mix of the two must give the same derivatives.
"""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax


def _orbit(v, n=20):
    """A few explicit Euler steps of a nonlinear 2-d system."""
    def step(c, _):
        x, y = c[0], c[1]
        return fnp.stack([x + 0.05 * (y - x * x), y + 0.05 * fnp.sin(x * y)]), x * y
    c, ys = lax.scan(step, v, None, length=n)
    return c + 0.01 * fnp.sum(ys)


def _fd_jac(f, x, eps=1e-6):
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps))
    return np.stack(cols, axis=-1)


X0 = np.array([0.3, -0.7])


def _scans(closed):
    return [e for e in closed.jaxpr.eqns if e.primitive.name == "scan"]


def test_jacfwd_under_jit_is_one_loop_without_residuals():
    closed = ft.make_jaxpr(ft.jacfwd(_orbit))(X0)
    scans = _scans(closed)
    assert len(scans) == 1
    # the joint loop's outputs are the carries (primal + batched tangents) and ys: no
    # per-iteration residual stacks as reverse mode has
    assert len(scans[0].outvars) == 4       # carry, its tangents, ys, their tangents
    rev = _scans(ft.make_jaxpr(ft.jacrev(_orbit))(X0))
    assert len(rev) == 2 and len(rev[0].outvars) > 4


@pytest.mark.parametrize("jac", [ft.jacfwd, ft.jacrev])
def test_jacobians_of_loops_agree_with_finite_differences(jac):
    want = _fd_jac(_orbit, X0)
    np.testing.assert_allclose(jac(_orbit)(X0), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ft.jit(jac(_orbit))(X0), want, rtol=1e-6, atol=1e-8)


def test_forward_over_reverse_and_reverse_over_forward_through_a_loop():
    f = lambda v: fnp.sum(_orbit(v) ** 2)  # noqa: E731
    h_fr = ft.jacfwd(ft.grad(f))(X0)
    h_rf = ft.jacrev(ft.jacfwd(f))(X0)
    h_fd = _fd_jac(ft.grad(f), X0)
    np.testing.assert_allclose(h_fr, h_fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(h_rf, h_fd, rtol=1e-6, atol=1e-8)
    # grad of a jvp: the joint loop is itself differentiated in reverse mode
    u = np.array([1.0, -2.0])
    g = ft.grad(lambda v: ft.jvp(f, (v,), (u,))[1])(X0)
    np.testing.assert_allclose(g, h_fd @ u, rtol=1e-6, atol=1e-8)


def test_loops_inside_cond_checkpoint_and_jit_under_grad():
    def f(v):
        w = ft.checkpoint(_orbit)(v)
        return lax.cond(w[0] > -10.0, lambda a: fnp.sum(_orbit(a) ** 2), lambda a: fnp.sum(a), w)
    g = ft.grad(f)(X0)
    np.testing.assert_allclose(g, _fd_jac(f, X0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ft.jit(ft.grad(ft.jit(f)))(X0), g, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ft.jacfwd(ft.jit(f))(X0), g, rtol=1e-8, atol=1e-10)


def _branchy(v):
    return lax.cond(v[0] > 0.0, lambda a: fnp.sin(a) * a[1], lambda a: fnp.exp(a) - a[0], v)


def _conds(closed):
    return [e for e in closed.jaxpr.eqns if e.primitive.name == "cond"]


@pytest.mark.parametrize("x", [X0, -X0])
def test_cond_is_one_branch_choice_in_forward_mode_and_split_in_reverse(x):
    fwd = _conds(ft.make_jaxpr(ft.jacfwd(_branchy))(x))
    assert len(fwd) == 1            # primal and tangent outputs from one cond, no residuals
    assert len(_conds(ft.make_jaxpr(ft.jacrev(_branchy))(x))) == 2    # primal, then linear
    want = _fd_jac(_branchy, x)
    for jac in (ft.jacfwd, ft.jacrev):
        np.testing.assert_allclose(jac(_branchy)(x), want, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(ft.jit(jac(_branchy))(x), want, rtol=1e-6, atol=1e-8)
