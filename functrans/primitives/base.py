"""What the primitive families write their rules with: the ``Primitive`` class,
symbolic zeros and tangent helpers (defined in ``transforms.ad_util``), the batch-axis
helpers (``transforms.vmap``), and builders for the common shapes of rules.

The modules of ``functrans.primitives`` form one order, each importing only modules
before it (and ``tracing``, ``transforms``, which sit below the families;
``tests/test_layers.py`` checks this list against the imports):

1. ``primitive`` (the class), ``basic`` (add, broadcast_in_dim, transpose,
   convert_element_type: what the transforms' helpers need), then ``transforms``
   (``ad_util``, jvp, partial_eval, transpose, vmap), then this module;
2. the families: ``structural``, ``arithmetic``, ``complex_edges``, ``elementwise_math``,
   ``elementwise_pow``, ``elementwise``
   (which gathers the three before it), ``dot``, ``reductions``, ``slicing``,
   ``gather_scatter``, ``indexing``, ``sorting``, ``linalg_common``, ``linalg``,
   ``linalg_decomp``, ``linalg_lu``, ``linalg_det``, ``linalg_schur``, ``fft``, ``conv``, ``conv_rules``,
   ``conv_api``, ``random``, ``collectives_mesh``,
   ``collectives_prims``, ``collectives_groups``, ``collectives``, ``collectives_native_flow``,
   ``collectives_native_alltoall``, ``collectives_native``, ``control_flow_common``,
   ``control_flow_cond``, ``control_flow_eager``, ``control_flow_loops``,
   ``control_flow``, ``custom_self``, ``custom_values``, ``custom_hoist``, ``body_jvp``,
   ``custom``, ``custom_vmap``, ``linear_call``, ``call``, ``linear_solve``, ``linalg_sqrtm``,
   ``checks_error``, ``checks``.

A rule written with operations of a later family is attached by that family (for
example broadcast_in_dim's transpose, a ``reduce_sum``, by ``reductions``).

>>> from functrans.primitives.base import Zero
>>> from jaxpr_ir import ShapedArray
>>> Zero(ShapedArray((3,), "float64"))
Zero(f64[3])
"""
from __future__ import annotations

from ..tracing import bind
from ..transforms.ad_util import (UndefinedPrimal, Zero, add_tangents, aval,  # noqa: F401
                                  instantiate, is_undefined, tangent_aval, zeros_array)
from ..transforms.vmap import move_batch_axis, not_mapped_size  # noqa: F401
from .primitive import EffectPrimitive, Primitive  # noqa: F401


# --------------------------------------------------------------------------- rule helpers

def defjvp(prim, *jvp_fns):
    """JVP from one function per input: ``fn(tangent, *primals, out=primal_out)``.

    Zero tangents are skipped and the contributions summed; ``None`` marks an
    input with no derivative.
    """
    if len(jvp_fns) == 1 and jvp_fns[0] is not None:
        fn = jvp_fns[0]

        def rule(primals, tangents, **params):     # unary: no loop, no accumulator
            out = bind(prim, *primals, **params)
            t = tangents[0]
            if type(t) is Zero:
                return out, Zero(aval(out))
            return out, fn(t, *primals, out=out, **params)
    elif len(jvp_fns) == 2:
        fn0, fn1 = jvp_fns

        def rule(primals, tangents, **params):     # binary: unrolled
            out = bind(prim, *primals, **params)
            t0, t1 = tangents
            acc = None
            if fn0 is not None and type(t0) is not Zero:
                acc = fn0(t0, *primals, out=out, **params)
            if fn1 is not None and type(t1) is not Zero:
                c = fn1(t1, *primals, out=out, **params)
                acc = c if acc is None else add_tangents(acc, c)
            return out, Zero(aval(out)) if acc is None else acc
    else:
        def rule(primals, tangents, **params):
            out = bind(prim, *primals, **params)
            acc = None
            for fn, t in zip(jvp_fns, tangents):
                if fn is not None and type(t) is not Zero:
                    c = fn(t, *primals, out=out, **params)
                    acc = c if acc is None else add_tangents(acc, c)
            return out, Zero(aval(out)) if acc is None else acc
    prim.jvp = rule
    return rule


def deflinear(prim, transpose_rule):
    """A primitive linear in all its inputs: its JVP applies it to the tangents."""
    def rule(primals, tangents, **params):
        out = bind(prim, *primals, **params)
        if len(tangents) == 1:
            t = tangents[0]
            if type(t) is Zero:
                return out, Zero(aval(out))
            return out, bind(prim, t, **params)
        if all(type(t) is Zero for t in tangents):
            return out, Zero(aval(out))
        ts = [instantiate(t) for t in tangents]
        return out, bind(prim, *ts, **params)
    prim.jvp = rule
    prim.transpose = transpose_rule


def batch_elementwise(prim):
    """Batching for an op whose inputs all have one shape: move batch axes to the front."""
    def rule(args, dims, **params):
        size = not_mapped_size(args, dims)
        first = next(d for d in dims if d is not None)
        if all(d == first for d in dims):
            out = prim.bind(*args, **params)
            return (out, [first] * len(out)) if prim.multiple_results else (out, first)
        moved = [move_batch_axis(x, d, 0, size) for x, d in zip(args, dims)]
        out = prim.bind(*moved, **params)
        return (out, [0] * len(out)) if prim.multiple_results else (out, 0)
    prim.batch = rule
    return rule
