"""functrans.custom_batching (custom_vmap, sequential_vmap) against loops and JAX's
semantics (JAX's CustomVmapTest, in behaviour): the rule's values under vmap, the body's
unbatched and under jit, JVPs of the body and of the rule, and JAX's errors."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.custom_batching import custom_vmap, sequential_vmap


def _sin_cos():
    """sin unbatched, cos batched: which one ran shows whether the rule was used."""
    @custom_vmap
    def f(x):
        return fnp.sin(x)

    @f.def_vmap
    def rule(axis_size, in_batched, xs):
        assert axis_size == xs.shape[0] and in_batched == [True]
        return fnp.cos(xs), in_batched[0]
    return f


XS = np.arange(3.0) + 0.25

# (name, transformed function of f, its expected value on XS)
COMPOSITIONS = [
    ("vmap", lambda f: ft.vmap(f), np.cos(XS)),
    ("jit(vmap)", lambda f: ft.jit(ft.vmap(f)), np.cos(XS)),
    ("vmap(jit)", lambda f: ft.vmap(ft.jit(f)), np.cos(XS)),
    ("jit", lambda f: ft.jit(lambda x: f(x[1])), np.sin(XS[1])),
    ("vmap(vmap)", lambda f: lambda x: ft.vmap(ft.vmap(f))(fnp.stack([x, 2 * x])),
     np.cos(np.stack([XS, 2 * XS]))),
    ("loop", lambda f: lambda x: fnp.stack([f(v) for v in x]), np.sin(XS)),
    # the loop and branch batching rules batch the body's custom_vmap_call with the rule
    ("vmap(scan)", lambda f: ft.vmap(lambda x: lax.scan(lambda c, a: (c, f(a)), 0.0,
                                                        fnp.stack([x, x]))[1][1]), np.cos(XS)),
    ("vmap(cond)", lambda f: ft.vmap(lambda x: lax.cond(x > 1, f, lambda y: -y, x)),
     np.where(XS > 1, np.cos(XS), -XS)),
    ("vmap(checkpoint)", lambda f: ft.vmap(ft.checkpoint(f)), np.cos(XS)),
]


@pytest.mark.parametrize("name,make,want", COMPOSITIONS, ids=[c[0] for c in COMPOSITIONS])
def test_rule_runs_only_when_batched(name, make, want):
    np.testing.assert_allclose(make(_sin_cos())(XS), want, rtol=1e-14)


def test_closure_multi_output_and_pytrees():
    z = np.array([2.0, 1.0])

    @custom_vmap
    def f(t):
        return {"a": z + fnp.sin(t[0]), "b": (fnp.cos(t[1][0]),)}

    seen = []

    @f.def_vmap
    def rule(axis_size, in_batched, t):
        seen.append(in_batched)
        return {"a": z + fnp.cos(t[0])[:, None], "b": (t[1][0] * 2.0,)}, {"a": True, "b": (True,)}

    t = (XS, [XS + 1, None])
    out = ft.vmap(f)(t)
    np.testing.assert_allclose(out["a"], z + np.cos(XS)[:, None])
    np.testing.assert_allclose(out["b"][0], 2 * (XS + 1))
    assert seen == [[(True, [True, None])]]
    np.testing.assert_allclose(f((XS[0], [XS[1], None]))["a"], z + np.sin(XS[0]))


# (in_axes, the shapes, the expected in_batched): u @ v with a rule that sees which
# operand is batched, against the loop
MIXED = [((0, None), ((4, 3), (3,)), [True, False]),
         ((1, None), ((3, 4), (3,)), [True, False]),
         ((None, 0), ((3,), (4, 3)), [False, True]),
         ((0, 0), ((4, 3), (4, 3)), [True, True])]


@pytest.mark.parametrize("in_axes,shapes,flags", MIXED)
def test_mixed_batching_matches_the_loop(in_axes, shapes, flags, rng):
    log = []

    @custom_vmap
    def dot(u, v):
        assert u.ndim == 1 and v.ndim == 1
        return u @ v

    @dot.def_vmap
    def rule(axis_size, in_batched, u, v):
        log.append(in_batched)
        ub, vb = in_batched
        out = fnp.sum(u * v, axis=1) if ub and vb else (u @ v if ub else v @ u)
        return out, ub or vb

    u, v = (rng.standard_normal(s) for s in shapes)
    got = ft.vmap(dot, in_axes=in_axes)(u, v)
    lanes = [np.moveaxis(a, ax, 0) if ax is not None else None for a, ax in zip((u, v), in_axes)]
    want = [(lanes[0][i] if lanes[0] is not None else u) @ (lanes[1][i] if lanes[1] is not None
                                                               else v) for i in range(4)]
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert log == [flags] and type(log[0]) is list


def test_kwargs_are_resolved_to_positions():
    f = _sin_cos()
    np.testing.assert_allclose(f(x=0.5), np.sin(0.5))
    np.testing.assert_allclose(ft.vmap(f)(x=XS), np.cos(XS))


# ------------------------------------------------------------------ JVP


def _jvp(f):
    return lambda x, t: ft.jvp(f, (x,), (t,))


# (name, function of f, args, expected (primal, tangent)): unbatched the body's JVP,
# batched the JVP of the rule; extra-batched primals or tangents are vmapped over
JVPS = [
    ("jvp", lambda f: _jvp(f), (0.7, 2.0), (np.sin(0.7), 2 * np.cos(0.7))),
    ("vmap(jvp)", lambda f: ft.vmap(_jvp(f)), (XS, 2 * XS), (np.cos(XS), -2 * XS * np.sin(XS))),
    ("jvp(vmap)", lambda f: _jvp(ft.vmap(f)), (XS, 2 * XS), (np.cos(XS), -2 * XS * np.sin(XS))),
    # the rule runs (unbatched primal) and its JVP is vmapped over the tangents
    ("extra tangents", lambda f: ft.vmap(_jvp(f), in_axes=(None, 0), out_axes=(None, 0)),
     (0.7, XS), (np.cos(0.7), -np.sin(0.7) * XS)),
    ("extra primals", lambda f: ft.vmap(_jvp(f), in_axes=(0, None)), (XS, 4.0),
     (np.cos(XS), -4 * np.sin(XS))),
    ("jit(vmap(jvp))", lambda f: ft.jit(ft.vmap(_jvp(f))), (XS, 2 * XS),
     (np.cos(XS), -2 * XS * np.sin(XS))),
]


def _sin_cos_any():
    @custom_vmap
    def f(x):
        return fnp.sin(x)

    @f.def_vmap
    def rule(axis_size, in_batched, xs):
        return fnp.cos(xs), in_batched[0]
    return f


@pytest.mark.parametrize("name,make,args,want", JVPS, ids=[c[0] for c in JVPS])
def test_jvp_of_the_body_and_of_the_rule(name, make, args, want):
    y, t = make(_sin_cos_any())(*args)
    np.testing.assert_allclose(y, want[0], rtol=1e-14)
    np.testing.assert_allclose(t, want[1], rtol=1e-14)


def test_linear_rule_keeps_an_unbatched_tangent_unbatched():
    @custom_vmap
    def f(x):
        return 7.0 * x

    @f.def_vmap
    def rule(axis_size, in_batched, xs):
        return 11.0 * xs, in_batched[0]

    y, t = ft.vmap(_jvp(f), in_axes=(0, None), out_axes=(0, None))(XS, 4.0)
    np.testing.assert_allclose(y, 11.0 * XS)
    assert np.shape(t) == () and float(t) == 44.0
    with pytest.raises(ValueError, match="out_axes"):          # a nonlinear rule's varies
        ft.vmap(_jvp(_sin_cos_any()), in_axes=(0, None), out_axes=(0, None))(XS, 4.0)


def test_jvp_with_mutually_and_extra_batched_arguments():
    # x's primal and tangent are batched, y's primal only: one batch axis, not two
    @custom_vmap
    def f(x, y):
        return fnp.sin(x) * y

    @f.def_vmap
    def rule(axis_size, in_batched, xs, ys):
        assert in_batched == [True, True]
        return fnp.cos(xs) * ys, True

    ys, txs = XS - 1.3, np.array([1.0, 2.0, -1.0])
    y, t = ft.vmap(lambda x, y, tx: ft.jvp(f, (x, y), (tx, 0.0)))(XS, ys, txs)
    np.testing.assert_allclose(y, np.cos(XS) * ys, rtol=1e-14)
    np.testing.assert_allclose(t, -np.sin(XS) * ys * txs, rtol=1e-14)


def test_jacfwd_vmaps_the_jvp_over_tangents_only():
    x = XS + 0.72
    np.testing.assert_allclose(ft.jacfwd(_sin_cos_any())(x), -np.diag(np.sin(x)), rtol=1e-14)


def test_jvp_nary_batched():
    @custom_vmap
    def f(x, y):
        return fnp.sin(x) + y

    @f.def_vmap
    def rule(axis_size, in_batched, xs, ys):
        assert in_batched == [True, True]
        return fnp.cos(xs) + ys, True

    xs, ys, txs, tys = 4.0 + np.arange(12.0).reshape(4, 3)
    zs, tzs = ft.vmap(lambda *a: ft.jvp(f, a[:2], a[2:]))(xs, ys, txs, tys)
    np.testing.assert_allclose(zs, np.cos(xs) + ys)
    np.testing.assert_allclose(tzs, -np.sin(xs) * txs + tys)


# ------------------------------------------------------------------ sequential_vmap


def test_sequential_vmap_is_lax_map():
    seen = []

    @sequential_vmap
    def f(x, y):
        seen.append(np.shape(x))
        return fnp.sum(x) * y

    xs = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(ft.vmap(f, in_axes=(0, None))(xs, 4.0), xs.sum(1) * 4.0)
    assert set(seen) == {(2,)}            # the body only ever saw one example
    got = str(ft.make_jaxpr(ft.vmap(f, in_axes=(0, None)))(xs, 4.0))
    want = str(ft.make_jaxpr(lambda xs, y: lax.map(lambda x: f(x, y), xs))(xs, 4.0))
    assert got == want and "scan" in got
    np.testing.assert_allclose(ft.jit(ft.vmap(f))(xs, np.arange(3.0)), xs.sum(1) * np.arange(3.0))


def test_custom_vjp_outside_gives_reverse_mode():
    @ft.custom_vjp
    @custom_vmap
    def f(x, y):
        return fnp.sin(x) * y

    @f.def_vmap
    def rule(axis_size, in_batched, xs, ys):
        return fnp.cos(xs) * ys, True

    f.defvjp(lambda x, y: (f(x, y), (fnp.cos(x), fnp.sin(x), y)),
             lambda res, g: (res[0] * g * res[2], res[1] * g))
    xs, ys = np.linspace(0, 1, 5), np.linspace(-0.1, 0.1, 5)
    np.testing.assert_allclose(ft.vmap(f)(xs, ys), np.cos(xs) * ys)
    np.testing.assert_allclose(ft.grad(f)(0.3, 2.0), np.cos(0.3) * 2.0)


def test_sequential_rules_inside_a_custom_vjp_under_vmap_of_jit():
    @sequential_vmap
    def fwd(x, y):
        return fnp.sin(x) * y, (x, y)

    @sequential_vmap
    def bwd(res, ct):
        return res[0] * ct, res[1] * ct

    fun = ft.custom_vjp(lambda *a: fwd(*a)[0])
    fun.defvjp(fwd, bwd)
    xs = np.linspace(0, 1, 5)
    out, f_vjp = ft.vjp(ft.vmap(ft.jit(fun), in_axes=(0, None)), xs, 0.5)
    ctx, cty = f_vjp(out)
    np.testing.assert_allclose(out, np.sin(xs) * 0.5)
    np.testing.assert_allclose(ctx, xs * out)
    np.testing.assert_allclose(cty, np.sum(0.5 * out))


# ------------------------------------------------------------------ errors


def _with_rule(rule):
    f = custom_vmap(lambda x: fnp.sin(x))
    f.def_vmap(rule)
    return f


ERRORS = [
    ("no rule", lambda: custom_vmap(lambda x: x)(0.5), AttributeError,
     "No batching rule defined for custom_vmap function <lambda>"),
    ("spec vs value", lambda: ft.vmap(_with_rule(
        lambda n, b, xs: ([fnp.sin(xs), fnp.cos(xs)], b)))(XS), ValueError,
     r"structure of output value and output batching specification returned by custom "
     r"vmap rule \(<lambda>\) do not match"),
    ("rule vs call", lambda: ft.vmap(_with_rule(lambda n, b, xs: ([fnp.sin(xs)], b)))(XS),
     ValueError, "does not match that of original custom-vmapped function"),
    ("wrong shape", lambda: ft.vmap(_with_rule(lambda n, b, xs: (xs[0], True)))(XS),
     ValueError, r"output 0 has type f64\[\] but, batched, it must be f64\[3\]"),
    ("grad", lambda: ft.grad(_sin_cos_any())(0.5), ValueError,
     "Linearization failed to produce known values for all output primals"),
    ("jit(grad)", lambda: ft.jit(ft.grad(_sin_cos_any()))(0.5), ValueError,
     "Linearization failed"),
    ("missing arg", lambda: _kw()(0.5), TypeError,
     r"The input arguments to the custom_vmap-decorated function f could not be resolved"
     r"(.|\n)*missing a required argument: 'y'"),
    ("keyword only", lambda: _kw()(0.5, 0.1, z=1.0), TypeError,
     "The following keyword arguments could not be resolved to positions: z"),
]


def _kw():
    @custom_vmap
    def f(x, y, *, z=None):
        return fnp.sin(x) * y

    f.def_vmap(lambda *a: pytest.fail("the rule must not run"))
    return f


@pytest.mark.parametrize("name,call,exc,match", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_as_jax(name, call, exc, match):
    with pytest.raises(exc, match=match):
        call()
