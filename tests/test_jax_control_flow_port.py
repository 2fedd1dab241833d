"""Regressions found by running JAX 0.10.2's tests/lax_control_flow_test.py against
functrans (session 30, helper jtxform). Each test names the JAX test it comes from;
expected numbers were computed with JAX 0.10.2 (x64) and are stored here."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax

EPS = 1e-3


def _safe_sqrt_closure(x):
    # the branch computes from a closed-over value, not from its operand
    return lax.cond(x < EPS, lambda _: EPS, lambda _: fnp.sqrt(x), ())


def _safe_sqrt_operand(x):
    return lax.cond(x < EPS, lambda y: EPS, lambda y: fnp.sqrt(y), x)


def test_cond_grad_vmap_nan():
    """testCondGradVmapNan: the branch not taken (sqrt at 0) must not make the gradient
    NaN, also when it computes from a closed-over value (it was hoisted out of the cond,
    so its 0 * inf reached the gradient). JAX 0.10.2: [0, 0.25, 1/6]."""
    for f in (_safe_sqrt_closure, _safe_sqrt_operand):
        g = ft.grad(lambda x: ft.vmap(f)(x).sum())
        np.testing.assert_array_equal(g(np.zeros(10)), np.zeros(10))
        np.testing.assert_allclose(g(np.array([0., 4., 9.])), [0., 0.25, 1 / 6], rtol=1e-15)
        np.testing.assert_array_equal(ft.jit(g)(np.zeros(3)), np.zeros(3))


def test_cond_grad_closure_untaken_branch():
    """testCondGradVmapNan without vmap: grad of a cond whose untaken branch takes sqrt of
    a closed-over 0 is 0 (JAX 0.10.2), not 0 * inf = NaN; reverse and forward mode."""
    assert float(ft.grad(_safe_sqrt_closure)(0.)) == 0.0
    assert float(ft.jit(ft.grad(_safe_sqrt_closure))(0.)) == 0.0
    assert float(ft.jvp(_safe_sqrt_closure, (0.,), (1.,))[1]) == 0.0
    assert float(ft.grad(_safe_sqrt_closure)(4.)) == 0.25
    # switch: the same for three branches, index from a closed-over value
    def f(x):
        i = fnp.clip(fnp.floor(x), 0, 2).astype(np.int32)
        return lax.switch(i, [lambda: fnp.log(x), lambda: fnp.sqrt(x - 1.), lambda: x * 0.])
    np.testing.assert_array_equal(
        [float(ft.grad(f)(v)) for v in (0.5, 1.0, 2.5)], [2.0, np.inf, 0.0])
    np.testing.assert_allclose(ft.grad(lambda x: ft.vmap(f)(x).sum())(
        np.array([0.5, 1.5, 2.5])), [2.0, 0.5 / np.sqrt(0.5), 0.0], rtol=1e-15)


def test_cond_closure_branch_not_run_when_not_taken():
    """The branch not taken runs nothing, also what it computes from closed-over
    values (JAX stages a branch whole): its ops are inside the cond, not before it."""
    jaxpr = ft.make_jaxpr(_safe_sqrt_closure)(0.)
    top = [e.primitive.name for e in jaxpr.jaxpr.eqns]
    assert "sqrt" not in top and "cond" in top


def test_callable_errors():
    """testCallableErrors: a non-callable function argument is a TypeError naming the
    function, also for associative_scan (it checked elems' rank first: ValueError)."""
    for call, name in [(lambda: lax.fori_loop(0, 1, 42, 0), "fori_loop"),
                       (lambda: lax.while_loop(42, 42, 0), "while_loop"),
                       (lambda: lax.switch(0, [42]), "switch"),
                       (lambda: lax.cond(0, 42, 42), "cond"),
                       (lambda: lax.scan(42, 0, 1), "scan"),
                       (lambda: lax.associative_scan(42, 0), "associative_scan")]:
        with pytest.raises(TypeError, match=f"lax.{name}.*callable"):
            call()


def test_cond_vmap_forwarding_doesnt_promote():
    """test_cond_vmap_forwarding_doesnt_promote: under a batched predicate, an operand
    that every branch returns unchanged stays unbatched, so out_axes=None works (it was
    ValueError 'varies along the mapped axis'). Values as JAX 0.10.2."""
    def f(x, y):
        return lax.cond(x < 3, lambda x, y: (x * 2, y), lambda x, y: (x * 3, y), x, y)
    x, y = fnp.arange(5), fnp.asarray(3.)
    for vf in (ft.vmap(f, in_axes=(0, None), out_axes=(0, None)),
               ft.jit(ft.vmap(f, in_axes=(0, None), out_axes=(0, None)))):
        x2, y2 = vf(x, y)
        np.testing.assert_array_equal(x2, [0, 2, 4, 9, 12])
        assert np.shape(y2) == () and float(y2) == 3.0
    g = ft.grad(lambda y: ft.vmap(f, in_axes=(0, None), out_axes=(0, None))(x, y)[1] * 2.)
    assert float(g(3.)) == 2.0
    # a branch returning another value for that output: batched, and out_axes=None refused
    h = lambda x, y: lax.cond(x < 3, lambda x, y: y, lambda x, y: y + 1., x, y)
    np.testing.assert_array_equal(ft.vmap(h, in_axes=(0, None))(x, y), [3, 3, 3, 4, 4])
    with pytest.raises(ValueError, match="varies along the mapped axis"):
        ft.vmap(h, in_axes=(0, None), out_axes=None)(x, y)


def test_issue_29329_linear_transpose_inside_branch():
    """test_issue_29329: linear_transpose of a linearized function inside a vmapped cond
    branch (what the branch stages from closed-over values stays out of the transpose's
    own trace: 'a primal output depends on tangents' otherwise)."""
    def outer_fn(x):
        _, lin_fn = ft.linearize(ft.jit(fnp.sin), x)

        def with_transpose(x):
            return x + ft.linear_transpose(lin_fn, x)(x)[0]
        return lax.cond(x[0][0] > 0., with_transpose, lambda x: x, x)
    x = np.ones((2, 3, 3))
    x[1] = -1.0
    out = ft.vmap(outer_fn)(x)
    np.testing.assert_allclose(out[0], 1.0 + np.cos(1.0), rtol=1e-15)
    np.testing.assert_array_equal(out[1], -1.0)
