"""A custom_jvp rule is traced only when its function is differentiated, as in JAX: plain
jit, vmap, scan, make_jaxpr and eval_shape run the function and never call the rule;
grad, jvp, linearize and their compositions with jit and vmap call it once and use it.
Call counts per program are JAX 0.10.2's (notes/b33/customad/counts.py, same programs)."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import UnexpectedTracerError
from functrans.tracing import eval_jaxpr
from functrans.transforms import jvp_jaxpr


def make():
    """sin with a rule giving 3 cos (not its derivative, so the tests see which is used)."""
    calls = [0]

    @ft.custom_jvp
    def f(x):
        return fnp.sin(x)

    @f.defjvp
    def f_jvp(p, t):
        calls[0] += 1
        return fnp.sin(p[0]), 3.0 * fnp.cos(p[0]) * t[0]
    return f, calls


X, XS = 0.5, np.linspace(0.1, 0.9, 3)


def _scan3(f):
    return lambda c: ft.lax.scan(lambda c, _: (f(c), None), c, None, length=3)[0]


PROGRAMS = {
    "jit": lambda f: ft.jit(f)(X),
    "vmap": lambda f: ft.vmap(f)(XS),
    "jit_vmap": lambda f: ft.jit(ft.vmap(f))(XS),
    "scan_jit": lambda f: ft.jit(_scan3(f))(X),
    "make_jaxpr": lambda f: ft.make_jaxpr(f)(X),
    "eval_shape": lambda f: ft.eval_shape(f, X),
    "grad": lambda f: ft.grad(f)(X),
    "jvp": lambda f: ft.jvp(f, (X,), (1.0,)),
    "grad_jit": lambda f: ft.grad(ft.jit(f))(X),
    "jit_grad": lambda f: ft.jit(ft.grad(f))(X),
    "vmap_grad": lambda f: ft.vmap(ft.grad(f))(XS),
    "grad_vmap": lambda f: ft.grad(lambda v: ft.vmap(f)(v).sum())(XS),
    "linearize": lambda f: ft.linearize(f, X)[1](1.0),
    "vjp": lambda f: ft.vjp(f, X)[1](1.0),
    "jacfwd": lambda f: ft.jacfwd(f)(X),
    "hessian": lambda f: ft.hessian(f)(X),
    "grad_scan": lambda f: ft.grad(_scan3(f))(X),
    "jit_then_grad_jit": lambda f: (ft.jit(f)(X), ft.grad(ft.jit(f))(X)),
}
# JAX 0.10.2 (x64), counts.py: before the rule was deferred functrans called it once in
# each of the first six and twice in the last
JAX_CALLS = {"jit": 0, "vmap": 0, "jit_vmap": 0, "scan_jit": 0, "make_jaxpr": 0,
             "eval_shape": 0, "grad": 1, "jvp": 1, "grad_jit": 1, "jit_grad": 1,
             "vmap_grad": 1, "grad_vmap": 1, "linearize": 1, "vjp": 1, "jacfwd": 1,
             "hessian": 1, "grad_scan": 1, "jit_then_grad_jit": 1}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_rule_calls_as_jax(name):
    f, calls = make()
    PROGRAMS[name](f)
    assert calls[0] == JAX_CALLS[name], name


def _raising():
    @ft.custom_jvp
    def h(x):
        return 2.0 * x

    @h.defjvp
    def h_jvp(p, t):
        raise RuntimeError("the rule was called")
    return h


def test_plain_transforms_never_call_the_rule():
    h = _raising()
    np.testing.assert_array_equal(ft.jit(h)(1.5), 3.0)
    np.testing.assert_array_equal(ft.vmap(h)(XS), 2.0 * XS)
    np.testing.assert_array_equal(ft.jit(ft.vmap(h))(XS), 2.0 * XS)
    np.testing.assert_array_equal(ft.vmap(ft.jit(h))(XS), 2.0 * XS)
    np.testing.assert_array_equal(ft.jit(_scan3(h))(1.0), 8.0)
    np.testing.assert_array_equal(ft.jit(ft.vmap(ft.vmap(h)))(np.ones((2, 3))), 2.0)
    with pytest.raises(RuntimeError, match="the rule was called"):
        ft.grad(ft.jit(h))(1.0)


def test_rule_returning_none_under_jit():
    # JAX api_test test_leak_checker_avoids_false_positive_custom_jvp: the rule is never
    # called by jit (before: TypeError "must return a pair ..., got NoneType")
    @ft.custom_jvp
    def t(y):
        return y

    t.defjvp(lambda primals, tangents: None)
    np.testing.assert_array_equal(ft.jit(lambda y: t(y) * 1.0)(3.0), 3.0)


def test_rule_values_through_compositions():
    f, _ = make()
    want = 3.0 * np.cos(XS)
    for got in (ft.vmap(ft.grad(f))(XS), ft.grad(lambda v: ft.vmap(f)(v).sum())(XS),
                ft.jit(ft.vmap(ft.grad(ft.jit(f))))(XS),
                ft.grad(lambda v: ft.jit(ft.vmap(f))(v).sum())(XS),
                ft.jvp(ft.vmap(f), (XS,), (np.ones(3),))[1]):
        np.testing.assert_allclose(got, want, rtol=1e-14)
    np.testing.assert_allclose(ft.hessian(f)(X), -3.0 * np.sin(X), rtol=1e-14)


def test_deferred_rule_traced_by_jvp_jaxpr():
    # the jaxpr of a plain trace holds the rule deferred: differentiating that jaxpr
    # later traces it (the batched rule of a vmap too), with the rule's numbers
    f, calls = make()
    for fun, x, want in ((f, X, 3.0 * np.cos(X)), (ft.vmap(f), XS, 3.0 * np.cos(XS))):
        closed = ft.make_jaxpr(fun)(x)
        assert calls[0] == 0
        jj = jvp_jaxpr(closed)
        out, tan = eval_jaxpr(jj.jaxpr, jj.consts, [x, np.ones_like(x)])
        np.testing.assert_allclose(tan, want, rtol=1e-14)
        np.testing.assert_allclose(out, np.sin(x), rtol=1e-14)
        calls[0] = 0


def test_deferred_rule_closing_over_an_ended_trace_raises():
    # the rule closes over y, a tracer of make_jaxpr's trace; differentiating the jaxpr
    # after that trace ended cannot trace the rule (JAX 0.10.2 raises too, a TypeError
    # "No constant handler" for grad(jit(g)) of this g)
    def g(x):
        y = ft.lax.stop_gradient(fnp.sin(x)) + 2.0

        @ft.custom_jvp
        def k(z):
            return z * y

        k.defjvp(lambda p, t: (p[0] * y, 10.0 * t[0] * y))
        return k(x)

    closed = ft.make_jaxpr(g)(1.0)
    with pytest.raises(UnexpectedTracerError, match="custom_jvp rule"):
        jvp_jaxpr(closed)


def test_differentiating_a_closed_over_value_is_jax_error_type():
    # JAX custom_api_test test_closed_over_tracers_error_message (second form): JAX raises
    # UnexpectedTracerError; functrans raised a plain TypeError (it stays one too)
    def f2(x):
        @ft.custom_jvp
        def g(y):
            return x + y

        g.defjvp(lambda p, t: (x + p[0], 2 * t[0]))
        return g(1.0)

    for run in (lambda: ft.jvp(f2, (3.0,), (1.0,)), lambda: ft.grad(f2)(3.0)):
        with pytest.raises(UnexpectedTracerError, match="closes over"):
            run()
        with pytest.raises(TypeError, match="closes over"):
            run()


def test_printing_a_jaxpr_with_a_failing_deferred_rule():
    # printing builds a deferred rule to show it; a rule that raises is shown as such
    # instead of making str(jaxpr) raise (make_jaxpr itself never calls it)
    text = str(ft.make_jaxpr(_raising())(1.0))
    assert "custom_jvp_call" in text and "not traceable: RuntimeError: the rule was called" in text
    f, calls = make()
    text = str(ft.make_jaxpr(f)(1.0))
    assert calls[0] == 1 and "cos" in text and "3.0" in text
