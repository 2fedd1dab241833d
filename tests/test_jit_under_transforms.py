"""A jitted function called eagerly under vmap, grad, jacfwd or hessian (issue 15: eager
vmap(odeint) spent 0.3-1.5 s per call re-tracing its jitted solve, re-batching it and
recompiling the batched body). As JAX's, the jit's body and the bodies pjit's rules derive
from it (batched, JVP-split, transposed) record their constants themselves, not as tracers
of the enclosing vmap or grad, so a later call finds them, and their executables, again;
they are reused only under the same axis env, and the values passed in always count."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.primitives import call


def _count(monkeypatch, jitted):
    """Counts of traces of ``jitted``'s function, batchings, transpositions and compiles."""
    counts = Counter()
    for owner, name in ((call, "compile_closed"), (call, "vmap_jaxpr"),
                        (call, "transpose_jaxpr"), (type(jitted), "_stage")):
        orig = getattr(owner, name)
        monkeypatch.setattr(owner, name, lambda *a, _o=orig, _n=name, **k:
                            counts.update([_n]) or _o(*a, **k))
    return counts


def _f(x, w):
    # fnp.ones: a constant the library records in the outermost trace (bind_outermost),
    # which made the body traced under vmap close over a tracer of the vmap's trace
    return fnp.sum(fnp.tanh(w @ x) * fnp.ones(3))


_TRANSFORMS = {
    "vmap": lambda f: ft.vmap(f, (0, None)),
    "vmap(grad)": lambda f: ft.vmap(ft.grad(f, 1), (0, None)),
    "grad(vmap)": lambda f: lambda xs, w: ft.grad(
        lambda v: fnp.sum(ft.vmap(f, (0, None))(xs, v)))(w),
    "jacfwd": lambda f: lambda xs, w: ft.jacfwd(f, 1)(xs[0], w),
    "hessian": lambda f: lambda xs, w: ft.hessian(f, 1)(xs[0], w),
}


@pytest.mark.parametrize("how", list(_TRANSFORMS))
def test_a_second_eager_call_traces_batches_and_compiles_nothing(monkeypatch, how):
    jf = ft.jit(_f)
    counts = _count(monkeypatch, jf)
    g, ref = _TRANSFORMS[how](jf), _TRANSFORMS[how](_f)    # ref: no jit, no cache
    rng = np.random.RandomState(0)
    xs, w, w2 = rng.randn(4, 3), rng.randn(3, 3), rng.randn(3, 3)
    first = g(xs, w)
    assert counts["compile_closed"] > 0, counts
    counts.clear()
    again = g(xs, w2)            # other values: the cached bodies must not hold the old ones
    assert not counts, counts
    np.testing.assert_allclose(again, ref(xs, w2), rtol=1e-12, atol=1e-12)
    assert not np.allclose(again, first)
    np.testing.assert_allclose(g(xs, w), ref(xs, w), rtol=1e-12, atol=1e-12)


def test_a_trace_under_named_axes_is_reused_only_under_the_same_names_and_sizes():
    # axis_size is a Python int read while tracing, psum reads the axis while batching:
    # the same jaxpr signature (scalar x) under axes of other sizes or names traces again
    f = ft.jit(lambda x: x * ft.lax.axis_size("i") + ft.lax.psum(x, "i"))
    v = ft.vmap(f, axis_name="i")
    np.testing.assert_allclose(v(np.ones(2)), [4.0, 4.0])
    np.testing.assert_allclose(v(np.ones(3)), [6.0, 6.0, 6.0])
    np.testing.assert_allclose(v(np.ones(2)), [4.0, 4.0])
    both = ft.vmap(ft.vmap(f, axis_name="i"), axis_name="j")
    np.testing.assert_allclose(both(np.ones((2, 3))), np.full((2, 3), 6.0))
    swapped = ft.vmap(ft.vmap(f, axis_name="j"), axis_name="i")
    np.testing.assert_allclose(swapped(np.ones((2, 3))), np.full((2, 3), 4.0))
    # grad of it under the axis: the JVP split and transpose are derived per axis env too
    gv = ft.vmap(ft.grad(lambda x: f(x) ** 2), axis_name="i")
    np.testing.assert_allclose(gv(np.ones(2)), [32.0, 32.0])     # 2 (4x) * 4 per member
    np.testing.assert_allclose(gv(np.ones(3)), [72.0, 72.0, 72.0])
