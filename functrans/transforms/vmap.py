"""Batching: evaluate a jaxpr on batched values with each primitive's batching rule.

A batched value carries one batch dimension ``d`` (an int) or none (``None``).
``vmap_eval`` runs eagerly on arrays or records into an outer trace;
``vmap_jaxpr`` is the same walk traced into a new jaxpr (IR -> IR).

While a vmap is being evaluated its axis (name, size) is on ``axis_frames``, so
collectives (``psum`` over a named axis) can find their axis.

>>> import numpy as np
>>> from jaxpr_ir import ShapedArray
>>> from functrans.tracing import trace_to_jaxpr
>>> from functrans.primitives.elementwise import sin
>>> j, c, _ = trace_to_jaxpr(lambda x: [sin(x)], [ShapedArray((), "float64")])
>>> outs, dims = vmap_eval(j, c, [np.zeros(4)], [0], 4)
>>> outs[0].shape, dims
((4,), [0])
"""
from __future__ import annotations

from jaxpr_ir import ClosedJaxpr, Literal, ShapedArray
from ..tracing import bind, trace_to_jaxpr

axis_frames: list = []   # (axis_name, axis_size) of the vmaps being evaluated, innermost last


class AxisFrame:
    __slots__ = ("name", "size")

    def __init__(self, name, size):
        self.name = name
        self.size = size


def find_axis(name):
    """The innermost vmap frame called ``name`` (for collectives), or NameError."""
    for f in reversed(axis_frames):
        if f.name == name:
            return f
    raise NameError(f"unbound axis name: {name!r} (no enclosing vmap has axis_name={name!r})")


def batch_eqn(prim, vals, dims, params):
    if prim.batch is None:
        raise NotImplementedError(f"primitive '{prim.name}' has no batching rule, so it cannot "
                                  "be used under vmap")
    return prim.batch(vals, dims, **params)


def vmap_eval(jaxpr, consts, args, dims, axis_size, axis_name=None):
    """Evaluate ``jaxpr`` on batched args (batch dims ``dims``). Returns (outs, out_dims)."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr, consts = jaxpr.jaxpr, list(jaxpr.consts) + list(consts)
    env = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = (x, None)
    for v, x, d in zip(jaxpr.invars, args, dims):
        env[v] = (x, d)

    def read(a):
        return (a.val, None) if type(a) is Literal else env[a]

    axis_frames.append(AxisFrame(axis_name, axis_size))
    try:
        for eqn in jaxpr.eqns:
            vals, ds = zip(*[read(a) for a in eqn.inputs]) if eqn.inputs else ((), ())
            prim = eqn.primitive
            if all(d is None for d in ds) and not getattr(prim, "batch_always", False):
                out = bind(prim, *vals, **eqn.params)
                od = [None] * len(out) if prim.multiple_results else None
            else:
                out, od = batch_eqn(prim, list(vals), list(ds), eqn.params)
            if prim.multiple_results:
                for v, o, d in zip(eqn.outvars, out, od):
                    env[v] = (o, d)
            else:
                env[eqn.outvars[0]] = (out, od)
    finally:
        axis_frames.pop()
    res = [read(a) for a in jaxpr.outvars]
    return [r[0] for r in res], [r[1] for r in res]


def batched_aval(aval: ShapedArray, d, size) -> ShapedArray:
    if d is None:
        return aval
    shape = list(aval.shape)
    shape.insert(d, size)
    return aval.update(shape=tuple(shape))


def vmap_jaxpr(closed: ClosedJaxpr, in_dims, axis_size, axis_name=None, out_dims_to=None):
    """IR -> IR: the batched jaxpr and its output batch dims.

    If ``out_dims_to`` is given (a list of ints/None), outputs are moved (or
    broadcast) to those dims.
    """
    from ..primitives.base import move_batch_axis
    avals = [batched_aval(a, d, axis_size) for a, d in zip(closed.in_avals, in_dims)]
    out_dims_box = []

    def fun(*args):
        outs, ods = vmap_eval(closed.jaxpr, closed.consts, args, in_dims, axis_size, axis_name)
        if out_dims_to is not None:
            outs = [o if (d is None and t is None) else move_batch_axis(o, d, t, axis_size)
                    for o, d, t in zip(outs, ods, out_dims_to)]
            ods = list(out_dims_to)
        out_dims_box.append(ods)
        return outs

    j, consts, _ = trace_to_jaxpr(fun, avals, name="vmap_jaxpr")
    return ClosedJaxpr(j, consts), out_dims_box[0]
