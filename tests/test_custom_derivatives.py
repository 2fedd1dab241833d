"""custom_jvp, custom_vjp and stop_gradient: rules used, under jit, vmap and nesting,
nondiff_argnums, and the errors for malformed rules."""
from __future__ import annotations

import functools

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
import jaxpr_ir
from functrans import lax


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


# a rule that differs from the true derivative, so tests can tell which one was used
@ft.custom_jvp
def f(x, y):
    return fnp.sin(x) * y


@f.defjvp
def _f_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return f(x, y), 10.0 * fnp.cos(x) * y * tx + fnp.sin(x) * ty


def df_dx(x, y):
    return 10.0 * np.cos(x) * y


@ft.custom_vjp
def g(x):
    return fnp.sin(x)


def _g_fwd(x):
    return g(x), fnp.cos(x)


def _g_bwd(c, ct):
    return (3.0 * c * ct,)


g.defvjp(_g_fwd, _g_bwd)


def test_custom_jvp_rule_is_used_everywhere():
    x, y = 0.4, 2.0
    close(f(x, y), np.sin(x) * y)
    close(ft.grad(f)(x, y), df_dx(x, y))
    close(ft.jvp(f, (x, y), (1.0, 0.0))[1], df_dx(x, y))
    close(ft.jit(ft.grad(f))(x, y), df_dx(x, y))
    close(ft.grad(ft.jit(f))(x, y), df_dx(x, y))
    xs = np.array([0.1, 0.2, 0.3])
    close(ft.vmap(ft.grad(f))(xs, xs), df_dx(xs, xs))
    close(ft.grad(lambda v: fnp.sum(ft.vmap(f)(v, v * 0 + 2.0)))(xs), df_dx(xs, 2.0))
    close(ft.jacfwd(lambda v: f(v, 2.0))(xs), np.diag(df_dx(xs, 2.0)))
    close(ft.jacrev(lambda v: f(v, 2.0))(xs), np.diag(df_dx(xs, 2.0)))


def test_custom_jvp_higher_order_differentiates_the_rule():
    # d/dx of the rule's tangent 10 cos(x) y is -10 sin(x) y
    close(ft.grad(ft.grad(f))(0.4, 2.0), -10.0 * np.sin(0.4) * 2.0)
    close(ft.hessian(lambda v: f(v, 2.0))(0.4), -10.0 * np.sin(0.4) * 2.0)


def test_custom_jvp_numerically_stable_rule():
    @ft.custom_jvp
    def log1pexp(x):
        return fnp.log(1.0 + fnp.exp(x))

    @log1pexp.defjvp
    def _rule(primals, tangents):
        (x,), (t,) = primals, tangents
        return log1pexp(x), t * (1.0 - 1.0 / (1.0 + fnp.exp(x)))

    assert np.isfinite(float(ft.grad(log1pexp)(1000.0)))
    close(ft.grad(log1pexp)(1000.0), 1.0)


def test_custom_jvp_nondiff_argnums():
    @functools.partial(ft.custom_jvp, nondiff_argnums=(0,))
    def apply(fn, x):
        return fn(x)

    @apply.defjvp
    def _apply_jvp(fn, primals, tangents):
        (x,), (t,) = primals, tangents
        return apply(fn, x), 7.0 * t

    close(ft.grad(lambda x: apply(fnp.sin, x))(0.3), 7.0)
    close(ft.jit(ft.grad(lambda x: apply(fnp.sin, x)))(0.3), 7.0)
    close(ft.vmap(ft.grad(lambda x: apply(fnp.sin, x)))(np.ones(2)), [7.0, 7.0])


def test_custom_jvp_and_vjp_nondiff_argnames():
    # JAX's test_nondiff_argnames: names are positions of the signature
    @functools.partial(ft.custom_jvp, nondiff_argnames=("fn",))
    def apply(fn, x):
        return fn(x)
    apply.defjvp(lambda fn, p, t: (apply(fn, p[0]), 3.0 * t[0]))
    close(ft.jvp(lambda x: apply(lambda y: 2 * y, x), (1.0,), (1.0,))[1], 3.0)

    @functools.partial(ft.custom_vjp, nondiff_argnames=("n",))
    def pw(x, n):
        return x ** n
    pw.defvjp(lambda x, n: (pw(x, n), x), lambda n, x, g: (10.0 * n * g,))
    close(ft.grad(lambda x: pw(x, n=3))(2.0), 30.0)
    with pytest.raises(TypeError, match="nondiff_argnames"):
        ft.custom_jvp(lambda x: x, nondiff_argnames=("q",))


def test_custom_jvp_defjvps_and_pytree_output():
    @ft.custom_jvp
    def h(x):
        return fnp.exp(x)
    h.defjvps(lambda t, ans, x: 2.0 * t)
    close(ft.grad(h)(0.0), 2.0)

    @ft.custom_jvp
    def pair(x):
        return {"a": x * 2.0, "b": x}

    @pair.defjvp
    def _pair_jvp(p, t):
        return pair(*p), {"a": 5.0 * t[0], "b": t[0]}
    close(ft.grad(lambda x: pair(x)["a"])(1.0), 5.0)


def test_custom_jvp_rule_applying_the_function_to_its_tangent_transposes():
    # JAX's test_linear_in_scan: a linear custom_jvp function whose rule is f(x_dot) puts
    # custom_jvp_call on the tangent path; reverse mode transposes it through its body
    @ft.custom_jvp
    def f(x):
        return -x
    f.defjvp(lambda p, t: (f(p[0]), f(t[0])))
    scanned = lambda x: lax.scan(lambda c, _: (f(c), None), x, None, length=1)[0]
    for fun in (f, ft.jit(f), scanned):
        assert float(ft.grad(fun)(3.0)) == -1.0
    np.testing.assert_array_equal(ft.vmap(ft.grad(f))(np.arange(3.0)), [-1.0, -1.0, -1.0])


def test_custom_vjp_rule_is_used_everywhere():
    x = 0.7
    close(g(x), np.sin(x))
    close(ft.grad(g)(x), 3.0 * np.cos(x))
    close(ft.jit(ft.grad(g))(x), 3.0 * np.cos(x))
    close(ft.grad(ft.jit(g))(x), 3.0 * np.cos(x))
    xs = np.array([0.1, 0.5])
    close(ft.vmap(ft.grad(g))(xs), 3.0 * np.cos(xs))
    close(ft.grad(lambda v: fnp.sum(ft.vmap(g)(v)))(xs), 3.0 * np.cos(xs))
    close(ft.jacrev(g)(xs), np.diag(3.0 * np.cos(xs)))
    # higher order differentiates fwd/bwd: d/dx 3 cos(x) = -3 sin(x)
    close(ft.grad(ft.grad(g))(x), -3.0 * np.sin(x))


def test_custom_vjp_forward_mode_transposes_bwd():
    close(ft.jvp(g, (0.7,), (2.0,))[1], 6.0 * np.cos(0.7))
    xs = np.array([0.1, 0.5])
    close(ft.jacfwd(g)(xs), np.diag(3.0 * np.cos(xs)))


def test_custom_vjp_nonlinear_bwd_works_in_reverse_and_says_so_forward():
    @ft.custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (x, None),
                         lambda _, ct: (lax.clamp(-1.0, ct, 1.0),))
    close(ft.grad(lambda x: 5.0 * clip_gradient(x))(2.0), 1.0)
    with pytest.raises(TypeError, match="linear in the cotangents"):
        ft.jvp(clip_gradient, (2.0,), (1.0,))


def test_custom_vjp_nondiff_argnums_pytrees_and_none_cotangents():
    @functools.partial(ft.custom_vjp, nondiff_argnums=(1,))
    def scaled(p, k):
        return p["w"] * k + p["b"]

    def fwd(p, k):
        return scaled(p, k), None

    def bwd(k, res, ct):
        return ({"w": ct * k * 2.0, "b": None},)

    scaled.defvjp(fwd, bwd)
    p = {"w": np.float64(1.0), "b": np.float64(2.0)}
    gp = ft.grad(lambda p: scaled(p, 3.0))(p)
    close(gp["w"], 6.0)
    close(gp["b"], 0.0)


def test_custom_vjp_implicit_fixed_point_second_order():
    # JAX's "Custom derivative rules" guide: bwd calls fixed_point on partial(rev_iter, f),
    # other static arguments; it must stay a custom call (its while_loop has no reverse
    # mode), so grad(grad) goes through the rules: JAX's -1/(4 a^1.5) at a = 2
    @functools.partial(ft.custom_vjp, nondiff_argnums=(0,))
    def fixed_point(f, a, x0):
        def body(c):
            return c[1], f(a, c[1])
        return lax.while_loop(lambda c: fnp.abs(c[0] - c[1]) > 1e-12, body, (x0, f(a, x0)))[1]

    def fwd(f, a, x0):
        x = fixed_point(f, a, x0)
        return x, (a, x)

    def rev_iter(f, packed, u):
        a, x, x_bar = packed
        return x_bar + ft.vjp(lambda x: f(a, x), x)[1](u)[0]

    def bwd(f, res, x_bar):
        a, x = res
        _, vjp_a = ft.vjp(lambda a: f(a, x), a)
        return vjp_a(fixed_point(functools.partial(rev_iter, f), (a, x, x_bar), x_bar))[0], 0.0 * x

    fixed_point.defvjp(fwd, bwd)

    def sqrt(a):
        return fixed_point(lambda a, x: 0.5 * (x + a / x), a, a)

    close(ft.grad(sqrt)(2.0), 0.5 / np.sqrt(2.0), 1e-9)
    close(ft.grad(ft.grad(sqrt))(2.0), -0.25 * 2.0 ** -1.5, 1e-9)
    close(ft.jit(ft.grad(ft.grad(ft.grad(sqrt))))(2.0), 0.375 * 2.0 ** -2.5, 1e-9)


def test_custom_vjp_bwd_structure_errors():
    def make(bwd):
        @ft.custom_vjp
        def h(x, y):
            return x * y
        h.defvjp(lambda x, y: (x * y, (x, y)), bwd)
        return h

    with pytest.raises(TypeError, match="one cotangent per differentiable argument"):
        ft.grad(make(lambda r, ct: (ct,)))(1.0, 2.0)
    with pytest.raises(TypeError, match="a Array|a ndarray|got a"):
        ft.grad(make(lambda r, ct: ct))(1.0, 2.0)
    with pytest.raises(ValueError, match=r"argument 0 of 'h' \(leaf 0\).* type f64\[2\]"):
        ft.grad(make(lambda r, ct: (np.ones(2), ct)))(1.0, 2.0)     # JAX: ValueError too
    with pytest.raises(TypeError, match="structure"):
        ft.grad(make(lambda r, ct: ((ct, ct), ct)))(1.0, 2.0)


def test_custom_rule_errors():
    @ft.custom_jvp
    def h(x):
        return x

    with pytest.raises(AttributeError, match="defjvp"):
        ft.grad(h)(1.0)
    h.defjvp(lambda p, t: p[0])
    with pytest.raises(TypeError, match="pair"):
        ft.grad(h)(1.0)
    h.defjvp(lambda p, t: (p[0], np.ones(3)))
    with pytest.raises(TypeError, match="shape"):
        ft.grad(h)(1.0)

    def outer(w):
        @ft.custom_jvp
        def k(x):
            return x * w
        k.defjvp(lambda p, t: (k(p[0]), t[0] * w))
        return k(2.0)
    with pytest.raises(TypeError, match="closes over"):
        ft.grad(outer)(1.0)


def test_stop_gradient():
    close(ft.grad(lambda x: x * ft.stop_gradient(x))(3.0), 3.0)
    close(ft.grad(lambda x: fnp.sum(ft.stop_gradient(x) ** 2 + x))(np.ones(2)), np.ones(2))
    close(ft.jit(ft.grad(lambda x: x * ft.stop_gradient(x)))(3.0), 3.0)
    close(ft.vmap(ft.grad(lambda x: x * ft.stop_gradient(x)))(np.arange(3.0)), np.arange(3.0))
    t = ft.stop_gradient({"a": np.ones(2), "n": np.int64(3)})
    assert t["a"].shape == (2,)
    close(ft.jvp(lambda x: ft.stop_gradient(x) * 2.0, (1.0,), (1.0,))[1], 0.0)


def test_custom_equations_print_parse_and_check():
    for fun, args in [(f, (0.3, 2.0)), (g, (np.ones(2),)),
                      (lambda x: ft.jvp(g, (x,), (x,)), (np.ones(2),))]:
        closed = ft.make_jaxpr(fun)(*args)
        jaxpr_ir.check(closed)
        text = str(closed)
        parsed = jaxpr_ir.parse(text)
        assert str(parsed) == text
        jaxpr_ir.check(parsed)


def test_symbolic_zeros_option():
    # JAX's defjvp(..., symbolic_zeros=True) / defvjp(..., symbolic_zeros=True): rules that
    # test for SymbolicZero get arrays here (the same numbers); SymbolicZero outputs are zeros
    from functrans.custom_derivatives import (CustomVJPPrimal, SymbolicZero,
                                              custom_vjp_primal_tree_values)

    @ft.custom_jvp
    def h(x, y):
        return x * fnp.sin(y)

    def h_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        t = fnp.zeros_like(x)
        if type(tx) is not SymbolicZero:
            t = t + tx * fnp.sin(y)
        if type(ty) is not SymbolicZero:
            t = t + 3.0 * x * fnp.cos(y) * ty      # 3x: the rule, not autodiff, is used
        return h(x, y), t
    h.defjvp(h_jvp, symbolic_zeros=True)
    close(ft.grad(h, 0)(2.0, 0.5), np.sin(0.5))
    close(ft.grad(h, 1)(2.0, 0.5), 6.0 * np.cos(0.5))
    close(ft.vmap(ft.grad(h, 1), (None, 0))(2.0, np.array([0.1, 0.5])), 6.0 * np.cos([0.1, 0.5]))

    @ft.custom_jvp
    def k(x):
        return fnp.round(x)
    k.defjvp(lambda p, t: (k(p[0]), SymbolicZero.from_primal_value(p[0])), symbolic_zeros=True)
    close(ft.grad(lambda x: k(x) + x)(1.3), 1.0)

    @ft.custom_vjp
    def clip(x, lo):
        return x

    def fwd(x, lo):
        assert type(x) is CustomVJPPrimal and x.perturbed
        x, lo = custom_vjp_primal_tree_values((x, lo))
        return x, lo

    clip.defvjp(fwd, lambda lo, g: (fnp.maximum(g, lo), SymbolicZero.from_primal_value(lo)),
                symbolic_zeros=True)
    close(ft.grad(lambda x: fnp.sum(-2.0 * clip(x, -1.0)))(np.ones(2)), -np.ones(2))
    close(ft.jit(ft.grad(lambda x: -5.0 * clip(x, -3.0)))(1.0), -3.0)
