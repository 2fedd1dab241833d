"""Transforms on bad input and on failing or leaking user code: every misuse of
grad, vjp, jvp, linearize, vmap, custom rules and control flow raises a clear
message naming what is wrong, and an exception inside (or a tracer leaked out of)
any transform leaves no live trace behind (the compositions themselves are in
test_composition.py).
"""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax, tracing
from functrans.errors import UnexpectedTracerError
from functrans.tracing import axis_frames


# --------------------------------------------------------------------------- bad input

def _cv_bad(bwd, fwd=None):
    f = ft.custom_vjp(lambda x, y: x * y)
    f.defvjp(fwd or (lambda x, y: (x * y, (x, y))), bwd)
    return f


def _cj_bad(rule):
    f = ft.custom_jvp(lambda x: x * 2.0)
    f.defjvp(rule)
    return f


_, _VJP_FN = ft.vjp(lambda x: (x, fnp.sum(x)), np.ones(3))
_X = np.array([0.3, -0.7, 1.2])

ERRORS = {
    "grad non-scalar": (lambda: ft.grad(lambda x: x * 2.0)(_X), TypeError, r"scalar.*\(3,\)"),
    "grad int output": (lambda: ft.grad(lambda x: fnp.sum(x).astype(int))(_X), TypeError,
                        "floating output.*int64"),
    "grad bool output": (lambda: ft.grad(lambda x: fnp.sum(x) > 0)(_X), TypeError, "bool"),
    "grad tuple output": (lambda: ft.grad(lambda x: (fnp.sum(x), x))(_X), TypeError, "has_aux"),
    "grad has_aux triple": (lambda: ft.grad(lambda x: (fnp.sum(x), x, x), has_aux=True)(_X),
                            TypeError, "pair"),
    "grad int input": (lambda: ft.grad(lambda x: x * 2.0)(3), TypeError, "int64"),
    "grad argnums range": (lambda: ft.grad(lambda x, y: x * y, argnums=(0, 2))(1.0, 2.0),
                           TypeError, r"argnums \(0, 2\) out of range.*2 positional"),
    "grad argnums negative": (lambda: ft.grad(lambda x, y: x * y, argnums=-3)(1.0, 2.0),
                              TypeError, "argnums -3 out of range"),
    # bug: a float or None argnums failed with "'float' object is not iterable"
    "grad argnums float": (lambda: ft.grad(lambda x: x, argnums=1.0), TypeError,
                           "argnums must be an int or a tuple of ints, got float"),
    "jacrev argnums None": (lambda: ft.jacrev(lambda x: x, argnums=None), TypeError,
                            "argnums must be.*NoneType"),
    "jacfwd argnums range": (lambda: ft.jacfwd(lambda x: x, argnums=1)(_X), TypeError, "out of range"),
    "jacrev int input": (lambda: ft.jacrev(lambda x: x)(np.arange(3)), TypeError, "int64"),
    "vjp cotangent tree": (lambda: _VJP_FN(np.ones(3)), TypeError, r"structure PyTreeDef\(\*\).*PyTreeDef\(\(\*, \*\)\)"),
    "vjp cotangent shape": (lambda: _VJP_FN((np.ones(2), 1.0)), TypeError, r"f64\[2\].*f64\[3\]"),
    "vjp cotangent dtype": (lambda: _VJP_FN((np.ones(3, np.float32), 1.0)), TypeError,
                            r"f32\[3\].*f64\[3\]"),
    "jvp tangent mismatch": (lambda: ft.jvp(fnp.sin, (_X,), (_X[:2],)), TypeError,
                             r"f64\[2\].*f64\[3\]"),
    "linearize tangent mismatch": (lambda: ft.linearize(fnp.sin, _X)[1](_X[:2]), TypeError,
                                   r"f64\[2\].*f64\[3\]"),
    "custom_vjp bwd arity": (lambda: ft.grad(_cv_bad(lambda r, g: (g * r[1],)))(1.0, 2.0),
                             TypeError, "bwd.*one cotangent per differentiable argument.*length 1"),
    "custom_vjp bwd shape": (lambda: ft.grad(_cv_bad(lambda r, g: (g, np.ones(3))))(1.0, 2.0),
                             ValueError, r"bwd.*argument 1.*f64\[3\]"),   # JAX: ValueError
    "custom_vjp bwd not tuple": (lambda: ft.grad(_cv_bad(lambda r, g: g))(1.0, 2.0), TypeError,
                                 "bwd.*must return a tuple"),
    "custom_jvp tangent shape": (
        lambda: ft.grad(lambda x: fnp.sum(_cj_bad(lambda p, t: (p[0] * 2.0, t[0][:1]))(x)))(_X),
        TypeError, r"tangent output 0 has shape \(1,\).*\(3,\)"),
    # bug: the message printed a literal "{name}"
    "custom_jvp without rule": (lambda: ft.custom_jvp(fnp.sin)(1.0), AttributeError,
                                r"define one with @sin\.defjvp"),
    "vmap size mismatch": (lambda: ft.vmap(lambda a, b: a + b)(np.ones((2, 3)), np.ones((3, 3))),
                           ValueError, r"(?s)argument a has size 2.*argument b has size 3"),
    "vmap(grad) size mismatch": (
        lambda: ft.vmap(ft.grad(lambda a, b: fnp.sum(a * b)))(np.ones((2, 3)), np.ones((3, 3))),
        ValueError, r"(?s)argument a has size 2.*argument b has size 3"),
    "vmap in_axes range": (lambda: ft.vmap(lambda a: a, in_axes=2)(np.ones((2, 3))), ValueError,
                           "argument a"),
    "cond branch shape": (lambda: lax.cond(True, lambda a: a, lambda a: a[:2], _X), TypeError,
                          r"true_fun.*f64\[3\].*false_fun.*f64\[2\]"),
    "cond branch under grad": (
        lambda: ft.grad(lambda x: fnp.sum(lax.cond(True, lambda a: a, lambda a: a[:2], x)))(_X),
        TypeError, r"false_fun.*f64\[2\]"),
    "cond branch under vmap": (
        lambda: ft.vmap(lambda x: lax.cond(x > 0, lambda a: a, lambda a: a.astype(np.float32), x))(_X),
        TypeError, r"false_fun returns f32"),
    "switch branch": (lambda: lax.switch(1, [lambda a: a, lambda a: a, lambda a: a[0]], _X),
                      TypeError, r"branch 2 has type f64\[\]"),
    "cond predicate": (lambda: lax.cond(2.0 + 0j, lambda a: a, lambda a: a, _X), TypeError,
                       "boolean or a real number"),
    "while reverse mode": (
        lambda: ft.grad(lambda x: lax.while_loop(lambda c: c < 3, lambda c: c * 2, x))(1.0),
        TypeError, r"while_loop.*lax\.scan.*fori_loop"),
    "while reverse mode under jit": (
        lambda: ft.jit(ft.grad(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2, x)),
                       backend="interpret")(1.0, 3),
        TypeError, r"while_loop.*lax\.scan.*fori_loop"),
    "while jacrev under vmap": (
        lambda: ft.vmap(ft.jacrev(lambda x: lax.while_loop(lambda c: c < 3, lambda c: c * 2, x)))(_X),
        TypeError, r"while_loop.*fori_loop"),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_bad_input_messages(name):
    fn, exc, pattern = ERRORS[name]
    with pytest.raises(exc, match=pattern):
        fn()
    assert not tracing.trace_depth() and not axis_frames()


# --------------------------------------------------------------------------- tracer leaks

TRANSFORMS = {
    "grad": lambda f: ft.grad(lambda x: fnp.sum(f(x))),
    "jvp": lambda f: lambda x: ft.jvp(f, (x,), (x,)),
    "vjp": lambda f: lambda x: ft.vjp(f, x)[1](x),
    "linearize": lambda f: lambda x: ft.linearize(f, x)[1](x),
    "vmap": lambda f: lambda x: ft.vmap(f)(fnp.stack([x, x])),
    "vmap_named": lambda f: lambda x: ft.vmap(f, axis_name="i")(fnp.stack([x, x])),
    "jit": lambda f: ft.jit(f, backend="interpret"),
    "jacfwd": ft.jacfwd,
    "jacrev": ft.jacrev,
    "hessian": lambda f: ft.hessian(lambda x: fnp.sum(f(x))),
    "checkpoint": lambda f: ft.grad(lambda x: fnp.sum(ft.checkpoint(f)(x))),
    "make_jaxpr": ft.make_jaxpr,
    "cond": lambda f: lambda x: lax.cond(True, f, lambda x: x, x),
    "scan": lambda f: lambda x: lax.scan(lambda c, xi: (c, f(xi)), 0.0, x)[1],
    "while": lambda f: lambda x: lax.while_loop(lambda c: False, f, x),
    "fori": lambda f: lambda x: lax.fori_loop(0, 2, lambda i, c: f(c), x),
}


class _UserError(Exception):
    pass


def _boom(x):
    fnp.sin(x)
    raise _UserError("raised inside the user's function")


@pytest.mark.parametrize("outer", list(TRANSFORMS))
def test_exception_inside_transform_leaves_no_live_trace(outer):
    for inner in ("grad", "vmap", "jit", "cond"):
        f = TRANSFORMS[outer](TRANSFORMS[inner](_boom))
        with pytest.raises(_UserError):
            f(_X)
        assert not tracing.trace_depth(), f"{outer}∘{inner} left {tracing.trace_depth()} traces"
        assert not axis_frames(), f"{outer}∘{inner} left {axis_frames()}"
    # the next call works
    TRANSFORMS[outer](fnp.sin)(_X)
    np.testing.assert_allclose(ft.grad(lambda x: fnp.sum(fnp.sin(x)))(_X), np.cos(_X))


@pytest.mark.parametrize("where", [t for t in TRANSFORMS if t != "checkpoint"])
def test_leaked_tracers_raise_unexpected_tracer_error(where):
    leaked = []

    def leak(x):
        leaked.append(x)
        return x * 2.0
    TRANSFORMS[where](leak)(_X)
    t = leaked[0]
    uses = {
        "op": lambda: fnp.sin(t) + 1.0,
        "bool": lambda: bool(fnp.sum(t) > 0),
        "np.asarray": lambda: np.asarray(t),
        "inside jit": lambda: ft.jit(lambda y: y + t, backend="interpret")(_X[:1]),
        "inside grad": lambda: ft.grad(lambda y: fnp.sum(y * t))(1.0),
        "inside vmap": lambda: ft.vmap(lambda y: y * t)(_X),
        # bug: a leaked tracer handed straight back was returned to the user as a dead tracer
        "returned by jvp": lambda: ft.jvp(lambda y: t, (1.0,), (1.0,)),
        "returned by vjp": lambda: ft.vjp(lambda y: t, 1.0),
        "returned as aux": lambda: ft.grad(lambda y: (y * 2.0, t), has_aux=True)(1.0),
        "returned by vmap": lambda: ft.vmap(lambda y: t)(_X),
        "passed to vmap": lambda: ft.vmap(lambda y: y, in_axes=None, axis_size=2)(t),
        "passed to grad": lambda: ft.grad(lambda y: fnp.sum(y))(t),
    }
    for name, use in uses.items():
        with pytest.raises(UnexpectedTracerError, match="escaped"):
            use()
        assert not tracing.trace_depth() and not axis_frames(), name


def test_leak_check_walks_past_dead_weak_proxies():
    """The leak check looks at every live object; isinstance() of a weakref.proxy whose
    referent is gone raises ReferenceError, which failed every jit compile in a process
    that held such a proxy while some tracer object was alive (found under xdist)."""
    import gc
    import weakref
    from functrans.debug import leaked_tracers

    class Referent:
        pass
    referent = Referent()
    dead = [weakref.proxy(referent)]
    del referent
    gc.collect()
    kept = []
    ft.jit(lambda x: kept.append(x) or x)(1.0)      # a tracer of an ended trace stays alive
    found = leaked_tracers()
    assert any(t is kept[0] for t in found) and dead
    kept.clear()
    with ft.checking_leaks():
        assert float(ft.jit(lambda x: x * 3)(2.0)) == 6.0
