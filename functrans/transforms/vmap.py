"""Batching: evaluate a jaxpr on batched values with each primitive's batching rule.

A batched value carries one batch dimension ``d`` (an int) or none (``None``).
``vmap_eval`` runs eagerly on arrays or records into an outer trace;
``vmap_jaxpr`` is the same walk traced into a new jaxpr (IR -> IR).

The axis env: while a vmap traces its function, and while ``vmap_eval`` runs,
an ``AxisFrame`` (name, size) is on this thread's ``axis_frames()``, so collectives (``psum``
over a named axis) find their axis. The innermost frame is the one whose batch
dims the batching rules currently see.

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
from .. import tracing as _tracing
from ..primitives.basic import broadcast_in_dim, transpose
from ..tracing import axis_frames, bind, trace_depth, trace_to_jaxpr
from .ad_util import aval



class AxisFrame:
    """One vmap axis: ``name`` (or None), ``size``.

    ``tracing``: the vmap is tracing its function, whose trace has level
    ``level`` (so a tracer of level >= ``level`` may vary along this axis);
    otherwise its jaxpr is being evaluated with the batching rules.
    """
    __slots__ = ("name", "size", "level", "tracing")

    def __init__(self, name, size, tracing=False):
        self.name = name
        self.size = size
        self.level = trace_depth()
        self.tracing = tracing

    def __repr__(self):
        return f"AxisFrame({self.name!r}, {self.size}, {'tracing' if self.tracing else 'eval'})"


class _Inherit:
    def __repr__(self):
        return "<inherit>"


INHERIT = _Inherit()


def find_axis(name):
    """The innermost vmap frame called ``name`` (for collectives), or NameError.

    >>> find_axis("nope")
    Traceback (most recent call last):
    ...
    NameError: unbound axis name: 'nope' (no enclosing vmap has axis_name='nope')
    """
    if name is not None:
        for f in reversed(axis_frames()):
            if f.name == name:
                return f
    raise NameError(f"unbound axis name: {name!r} (no enclosing vmap has axis_name={name!r})")


def not_mapped_size(args, dims) -> int:
    """The batch size from the first batched argument."""
    for x, d in zip(args, dims):
        if d is not None:
            return aval(x).shape[d]
    raise ValueError("no batched argument")


def move_batch_axis(x, d, to: int = 0, size: int | None = None):
    """Move batch axis d of x to position ``to``; if d is None, broadcast to ``size``."""
    a = aval(x)
    if d is None:
        shape = list(a.shape)
        shape.insert(to, size)
        dims = tuple(i for i in range(len(shape)) if i != to)
        return broadcast_in_dim(x, tuple(shape), dims)
    if d == to:
        return x
    perm = [i for i in range(a.ndim) if i != d]
    perm.insert(to, d)
    return transpose(x, tuple(perm))



def batch_eqn(prim, vals, dims, params):
    rule = getattr(prim, "batch", None)     # None also for an IR-only primitive
    if rule is None:
        raise NotImplementedError(f"primitive '{prim.name}' has no batching rule, so it cannot "
                                  "be used under vmap")
    return rule(vals, dims, **params)


def vmap_eval(jaxpr, consts, args, dims, axis_size, axis_name=INHERIT):
    """Evaluate ``jaxpr`` on batched args (batch dims ``dims``). Returns (outs, out_dims).

    Equations whose inputs are all unbatched are applied as they are; the others
    go through their primitive's batching rule (no loop over the batch).
    ``axis_name`` defaults to the innermost vmap's: a batching rule evaluating a
    sub-jaxpr (cond, while) batches along that axis.
    """
    if axis_name is INHERIT:
        frames = axis_frames()
        axis_name = frames[-1].name if frames else None
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr, consts = jaxpr.jaxpr, list(jaxpr.consts) + list(consts)
    env = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = (x, None)
    for v, x, d in zip(jaxpr.invars, args, dims):
        env[v] = (x, d)

    frames = axis_frames()
    frames.append(AxisFrame(axis_name, axis_size))
    try:
        for eqn in jaxpr.eqns:
            vals, ds = [], []
            batched = False
            for a in eqn.inputs:
                if type(a) is Literal:
                    vals.append(a.val)
                    ds.append(None)
                else:
                    x, d = env[a]
                    vals.append(x)
                    ds.append(d)
                    if d is not None:
                        batched = True
            prim = eqn.primitive
            if (not batched and prim.subjaxpr_params and vals
                    and _uses_collectives(prim, eqn.params)):
                # a call/loop whose body needs the axis (psum inside jit): batch one operand
                vals[0] = move_batch_axis(vals[0], None, 0, axis_size)
                ds[0] = batched = 0
            if batched is False and not getattr(prim, "batch_always", False):
                out = bind(prim, *vals, **eqn.params)
                if prim.multiple_results:
                    for v, o in zip(eqn.outvars, out):
                        env[v] = (o, None)
                else:
                    env[eqn.outvars[0]] = (out, None)
                continue
            out, od = batch_eqn(prim, vals, ds, eqn.params)
            if prim.multiple_results:
                for v, o, d in zip(eqn.outvars, out, od):
                    env[v] = (o, d)
            else:
                env[eqn.outvars[0]] = (out, od)
    finally:
        frames.pop()
    outs, odims = [], []
    for a in jaxpr.outvars:
        x, d = (a.val, None) if type(a) is Literal else env[a]
        outs.append(x)
        odims.append(d)
    return outs, odims


_collective_cache: dict = {}   # id(ClosedJaxpr) -> (it, uses collectives?)


def _uses_collectives(prim, params) -> bool:
    """Whether a sub-jaxpr in ``params`` (at any depth) holds a collective (batch_always)."""
    for k in prim.subjaxpr_params:
        sub = params.get(k)
        for c in (sub if isinstance(sub, (tuple, list)) else (sub,)):
            if c is None:
                continue
            hit = _collective_cache.get(id(c))
            if hit is None or hit[0] is not c:
                j = c.jaxpr if isinstance(c, ClosedJaxpr) else c
                found = any(getattr(e.primitive, "batch_always", False) or
                            (e.primitive.subjaxpr_params
                             and _uses_collectives(e.primitive, e.params))
                            for e in j.eqns)
                if len(_collective_cache) > 4096:
                    _collective_cache.clear()
                hit = _collective_cache[id(c)] = (c, found)
            if hit[1]:
                return True
    return False


_tracing.body_defers_concrete = _uses_collectives


def batched_aval(aval: ShapedArray, d, size) -> ShapedArray:
    """``aval`` with a batch axis of ``size`` inserted at ``d`` (unchanged if d is None)."""
    if d is None:
        return aval
    shape = list(aval.shape)
    shape.insert(d, size)
    return aval.update(shape=tuple(shape))


def vmap_jaxpr(closed: ClosedJaxpr, in_dims, axis_size, axis_name=INHERIT, out_dims_to=None):
    """IR -> IR: the batched jaxpr and its output batch dims.

    If ``out_dims_to`` is given (a list of ints/None), outputs are moved (or
    broadcast) to those dims. ``axis_name`` defaults to the innermost vmap's:
    a batching rule calling this (jit, control flow) batches along that axis,
    so collectives in the body find their name.
    """
    if axis_name is INHERIT:
        frames = axis_frames()
        axis_name = frames[-1].name if frames else None
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
