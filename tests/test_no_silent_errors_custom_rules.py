"""Custom rules that call other custom rules differentiate through those rules, to any
order (issue 13.4). Each inner rule is deliberately not the derivative of its body, so
differentiating the body instead of the rule gives a different, detectable number.

The inner function ``cube`` has body x**3 but the rule d cube = 7 x; the outer functions
have body x**2 and a backward (or JVP) rule that calls ``cube``. Hence, by hand:
d/dx outer = cube(x) = x**3 (8 at x = 2), and d²/dx² outer = cube's rule = 7 x (14),
where the body would give 3 x**2 (12); d³/dx³ = 7.
"""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax

X = 2.0


def _cube_vjp():
    @ft.custom_vjp
    def cube(x):
        return x ** 3
    cube.defvjp(lambda x: (x ** 3, x), lambda x, ct: (ct * 7.0 * x,))
    return cube


def _cube_jvp():
    @ft.custom_jvp
    def cube(x):
        return x ** 3

    @cube.defjvp
    def rule(p, t):
        return p[0] ** 3, t[0] * 7.0 * p[0]
    return cube


def _cube_loop():
    @ft.custom_vjp
    def cube(x):
        return lax.fori_loop(0, 3, lambda i, c: c * x, 1.0)     # a loop in the body
    cube.defvjp(lambda x: (cube(x), x), lambda x, ct: (ct * 7.0 * x,))
    return cube


def _outer_vjp(inner, use):
    @ft.custom_vjp
    def outer(x):
        return x ** 2
    outer.defvjp(lambda x: (x ** 2, x), lambda x, ct: (use(inner, x, ct),))
    return outer


def _outer_jvp(inner, use):
    @ft.custom_jvp
    def outer(x):
        return x ** 2

    @outer.defjvp
    def rule(p, t):
        return p[0] ** 2, use(inner, p[0], t[0])
    return outer


def _outer_residual(inner):
    @ft.custom_vjp
    def outer(x):
        return fnp.sin(x)         # its derivative is never used: the residual stands for it
    outer.defvjp(lambda x: (fnp.sin(x), inner(x)), lambda r, ct: (ct * r,))
    return outer


USES = {
    "ct*inner(x)": lambda inner, x, ct: ct * inner(x),
    "jit(inner)": lambda inner, x, ct: ct * ft.jit(inner)(x),
    "in fori_loop": lambda inner, x, ct: ct * lax.fori_loop(0, 1, lambda i, c: inner(c), x),
    "in cond": lambda inner, x, ct: ct * lax.cond(x > 0, inner, lambda v: v, x),
}
INNERS = {"custom_vjp": _cube_vjp, "custom_jvp": _cube_jvp, "custom_vjp with loop": _cube_loop}
OUTERS = {"custom_vjp": _outer_vjp, "custom_jvp": _outer_jvp}
ORDERS = {
    "grad": (lambda f: ft.grad(f), 8.0),
    "grad∘grad": (lambda f: ft.grad(ft.grad(f)), 14.0),
    "jacfwd∘grad": (lambda f: ft.jacfwd(ft.grad(f)), 14.0),
    "jacrev∘jacfwd": (lambda f: ft.jacrev(ft.jacfwd(f)), 14.0),
    "jvp∘vjp": (lambda f: lambda x: ft.jvp(lambda y: ft.vjp(f, y)[1](1.0)[0], (x,), (1.0,))[1],
                14.0),
    "jit(grad∘grad)": (lambda f: ft.jit(ft.grad(ft.grad(f))), 14.0),
    "grad∘grad∘grad": (lambda f: ft.grad(ft.grad(ft.grad(f))), 7.0),
    "hessian": (lambda f: ft.hessian(f), 14.0),
}


# (a rule must be linear in its cotangent or tangent, so the inner function is applied to
# the primal; the cotangent multiplies its result)
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("use", USES)
@pytest.mark.parametrize("inner", INNERS)
@pytest.mark.parametrize("outer", OUTERS)
def test_nested_custom_rules_differentiate_through_their_rules(outer, inner, use, order):
    f = OUTERS[outer](INNERS[inner](), USES[use])
    transform, want = ORDERS[order]
    assert float(np.asarray(transform(f)(X))) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("inner", INNERS)
def test_a_residual_computed_by_a_custom_function(inner, order):
    f = _outer_residual(INNERS[inner]())
    transform, want = ORDERS[order]
    assert float(np.asarray(transform(f)(X))) == pytest.approx(want, rel=1e-12)


def test_nested_rules_under_vmap():
    f = _outer_vjp(_cube_vjp(), USES["ct*inner(x)"])
    np.testing.assert_allclose(ft.vmap(ft.grad(ft.grad(f)))(fnp.array([1.0, 2.0])), [7.0, 14.0])


# ---------------------------------------------------------------- the inner primal, to third order
# The outer rule multiplies the inner function's output by something x-dependent, so the
# third derivative also differentiates, twice, the primal that the inner function's rule
# computes. Where that rule computes it by calling the function itself (the idiom of
# JAX's docs: ``fwd = lambda x: (cube(x), x)``), the call is again a custom function and
# its second derivative is its rule's 7 x, not its body's 3 x**2: d³/dx³ (cube(x) x) =
# 21 x = 42, not 40. Where the rule recomputes x**3 itself, that body's derivatives apply.

def _cube_vjp_self():
    @ft.custom_vjp
    def cube(x):
        return x ** 3
    cube.defvjp(lambda x: (cube(x), x), lambda x, ct: (ct * 7.0 * x,))
    return cube


def _cube_jvp_self():
    @ft.custom_jvp
    def cube(x):
        return x ** 3

    @cube.defjvp
    def rule(p, t):
        return cube(p[0]), t[0] * 7.0 * p[0]
    return cube


def _cube_while():
    @ft.custom_vjp
    def cube(x):        # not reverse-differentiable: only the rule may be differentiated
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, 1.0))[1]
    cube.defvjp(lambda x: (cube(x), x), lambda x, ct: (ct * 7.0 * x,))
    return cube


PRODUCT_USES = {
    "ct*inner(x)*x": lambda inner, x, ct: ct * inner(x) * x,
    "ct*inner(x)*sin(x)": lambda inner, x, ct: ct * inner(x) * fnp.sin(x),
}
# the third derivative at X = 2 per use, computed once with JAX 0.10.2 (jax.custom_vjp /
# jax.custom_jvp, the same code, x64, grad(grad(grad(f)))). JAX refuses forward mode
# through a custom_vjp, so for jacfwd∘grad∘grad and jvp∘grad∘grad over the custom_vjp
# inners the value is JAX's grad³ one (a scalar function: the order of modes is
# immaterial); where JAX runs them it agrees to 1 ulp.
_SELF = {"ct*inner(x)*x": 42.0, "ct*inner(x)*sin(x)": -12.561408850145668}
_RECOMPUTED = {"ct*inner(x)*x": 40.0, "ct*inner(x)*sin(x)": -11.729115177051384}
PRODUCT_INNERS = {
    "custom_vjp, fwd calls itself": (_cube_vjp_self, _SELF),
    "custom_jvp, rule calls itself": (_cube_jvp_self, _SELF),
    "custom_vjp with while_loop, fwd calls itself": (_cube_while, _SELF),
    "custom_vjp with loop, fwd calls itself": (_cube_loop, _SELF),
    "custom_vjp, fwd recomputes x**3": (_cube_vjp, _RECOMPUTED),
    "custom_jvp, rule recomputes x**3": (_cube_jvp, _RECOMPUTED),
}
THIRD_ORDERS = {
    "grad∘grad∘grad": lambda f: ft.grad(ft.grad(ft.grad(f))),
    "jacfwd∘grad∘grad": lambda f: ft.jacfwd(ft.grad(ft.grad(f))),
    "jvp∘grad∘grad": lambda f: lambda x: ft.jvp(ft.grad(ft.grad(f)), (x,), (1.0,))[1],
}


@pytest.mark.parametrize("order", THIRD_ORDERS)
@pytest.mark.parametrize("use", PRODUCT_USES)
@pytest.mark.parametrize("inner", PRODUCT_INNERS)
@pytest.mark.parametrize("outer", OUTERS)
def test_third_order_differentiates_the_inner_rules_primal_through_its_rule(
        outer, inner, use, order):
    make, want = PRODUCT_INNERS[inner]
    f = OUTERS[outer](make(), PRODUCT_USES[use])
    got = float(np.asarray(THIRD_ORDERS[order](f)(X)))
    assert got == pytest.approx(want[use], rel=1e-12)


def test_the_self_call_stays_custom_under_jit_vmap_and_fourth_order():
    f = _outer_vjp(_cube_vjp_self(), PRODUCT_USES["ct*inner(x)*x"])
    g3 = ft.grad(ft.grad(ft.grad(f)))
    assert float(ft.jit(g3)(X)) == pytest.approx(42.0, rel=1e-12)
    np.testing.assert_allclose(ft.vmap(g3)(fnp.array([1.0, 2.0])), [21.0, 42.0], rtol=1e-12)
    # JAX 0.10.2: 21.0 (d⁴ of cube(x) x = 21 through the rules; the body would give 26)
    assert float(ft.grad(g3)(X)) == pytest.approx(21.0, rel=1e-12)


# ---------------------------------------------------------------- a self-call in bwd
# bwd calls the function itself (``ct * 7 * f(x)``, body x**3): the backward pass runs
# that call as the custom function again, so its derivatives are its rule's: d f = 7 f,
# d² f = 49 f = 392 at X = 2 (the body would give 7 * 3 x**2 = 84), d³ f = 343 f.
# The values are JAX 0.10's (x64, grad∘grad∘grad of the same code); JAX refuses forward
# mode through a custom_vjp, so jacfwd∘grad, jvp∘vjp and hessian take its grad∘grad value
# (a scalar function: the order of modes is immaterial).

def _self_in_bwd(use, fwd_calls_itself):
    @ft.custom_vjp
    def f(x):
        return x ** 3
    f.defvjp(lambda x: (f(x) if fwd_calls_itself else x ** 3, x),
             lambda x, ct: (use(f, x, ct),))
    return f


BWD_USES = {   # use -> (grad, grad², grad³ with fwd recomputing x**3, grad³ with fwd calling f)
    "ct*7*f(x)": (lambda f, x, ct: ct * 7.0 * f(x), (56.0, 392.0, 2744.0, 2744.0)),
    "ct*f(x)*cos(x)": (lambda f, x, ct: ct * f(x) * fnp.cos(x),
                       (-3.3291746923771393, -5.888953898059901, -2.1045149130497354,
                        11.834264190090158)),
}
BWD_ORDERS = {
    "grad": (lambda f: ft.grad(f), 0),
    "grad∘grad": (lambda f: ft.grad(ft.grad(f)), 1),
    "jacfwd∘grad": (lambda f: ft.jacfwd(ft.grad(f)), 1),
    "jvp∘vjp": (lambda f: lambda x: ft.jvp(lambda y: ft.vjp(f, y)[1](1.0)[0], (x,), (1.0,))[1],
                1),
    "hessian": (lambda f: ft.hessian(f), 1),
    "jit(grad∘grad)": (lambda f: ft.jit(ft.grad(ft.grad(f))), 1),
    "grad∘grad∘grad": (lambda f: ft.grad(ft.grad(ft.grad(f))), 2),
}


@pytest.mark.parametrize("order", BWD_ORDERS)
@pytest.mark.parametrize("fwd_calls_itself", [False, True])
@pytest.mark.parametrize("use", BWD_USES)
def test_a_self_call_in_bwd_differentiates_through_the_rules(use, fwd_calls_itself, order):
    fn, want = BWD_USES[use]
    transform, k = BWD_ORDERS[order]
    if k == 2 and fwd_calls_itself:
        k = 3
    got = float(np.asarray(transform(_self_in_bwd(fn, fwd_calls_itself))(X)))
    assert got == pytest.approx(want[k], rel=1e-12)


def test_a_self_call_in_bwd_under_vmap_and_forward_mode():
    f = _self_in_bwd(BWD_USES["ct*7*f(x)"][0], False)
    xs = fnp.array([1.0, 2.0])
    np.testing.assert_allclose(ft.vmap(ft.grad(ft.grad(f)))(xs), [49.0, 392.0], rtol=1e-12)
    np.testing.assert_allclose(ft.grad(lambda x: ft.vmap(ft.grad(f))(x).sum())(xs),
                               [49.0, 392.0], rtol=1e-12)
    np.testing.assert_allclose(ft.vmap(ft.linearize(ft.grad(f), X)[1])(xs), [392.0, 784.0],
                               rtol=1e-12)
    assert float(ft.jvp(f, (X,), (1.0,))[1]) == 56.0        # bwd used transposed

    @ft.custom_vjp
    def triple(x):          # bwd calls the function on the cotangent: still transposable
        return 3.0 * x
    triple.defvjp(lambda x: (triple(x), None), lambda r, ct: (triple(ct),))
    assert float(ft.jvp(triple, (X,), (1.0,))[1]) == 3.0
    assert float(ft.grad(ft.grad(lambda x: triple(x) * x))(X)) == 6.0


@pytest.mark.parametrize("wrap", ["jit", "cond"])
def test_a_self_call_nested_in_jit_or_cond_within_the_rule_raises_at_higher_order(wrap):
    """Nested in a jit or cond inside bwd, the call is not routed through the rule; its
    body's derivative (84 here) would silently replace the rule's (JAX: 392): refused."""
    def use(f, x, ct):
        if wrap == "jit":
            return ct * 7.0 * ft.jit(f)(x)
        return ct * 7.0 * lax.cond(x > 0, f, f, x)
    f = _self_in_bwd(use, False)
    assert float(ft.grad(f)(X)) == 56.0                 # first order: the rule, as before
    with pytest.raises(NotImplementedError, match="inside a jit, cond or loop"):
        ft.grad(ft.grad(f))(X)
