"""What every primitive module uses: the Primitive class with ``bind``, symbolic
zeros, and helpers for the common shapes of rules.

Rule signatures (all rules of a primitive are attached right after it is defined):

- ``abstract_eval(*avals, **params) -> aval | [avals]`` raises TypeError/ValueError
  naming shapes and dtypes on bad input.
- ``impl(*arrays, **params) -> array | [arrays]`` the numpy semantics.
- ``jvp(primals, tangents, **params) -> (primal_out, tangent_out)``; tangents may be
  ``Zero``; with ``multiple_results`` both outputs are lists. Must be linear in tangents.
- ``transpose(ct, *invals, **params) -> [ct_in per input]`` for linear primitives;
  linear inputs arrive as ``UndefinedPrimal``; return ``None`` for non-linear inputs.
- ``batch(args, dims, **params) -> (out, out_dim)``; a dim is an int or ``None``
  (not batched); ``multiple_results`` gives lists.

>>> from functrans.primitives.base import Zero
>>> from jaxpr_ir import ShapedArray
>>> Zero(ShapedArray((3,), "float64"))
Zero(f64[3])
"""
from __future__ import annotations

import jaxpr_ir
from jaxpr_ir import ShapedArray
from ..tracing import bind, get_aval


class Primitive(jaxpr_ir.Primitive):
    """A jaxpr_ir primitive that functrans can apply (``bind``)."""

    # ``prim.bind(*args, **params)`` is ``tracing.bind(prim, ...)`` itself (no extra frame:
    # eager calls are hot)
    bind = bind

    def def_rules(self, *, abstract_eval=None, impl=None, jvp=None, transpose=None,
                  batch=None, partial_eval=None, not_differentiable=None):
        for name, f in (("abstract_eval", abstract_eval), ("impl", impl), ("jvp", jvp),
                        ("transpose", transpose), ("batch", batch),
                        ("partial_eval", partial_eval)):
            if f is not None:
                setattr(self, name, f)
        if not_differentiable is not None:
            self.not_differentiable = not_differentiable
        return self


# --------------------------------------------------------------------------- zeros

class Zero:
    """A symbolic zero tangent or cotangent: no array is built until needed."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval.str_short()})"


class UndefinedPrimal:
    """Marks a linear input of an equation being transposed."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined(x):
    return type(x) is UndefinedPrimal


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """Tangents of float values have the same type; integers have none (zero)."""
    return aval       # avals are immutable: the primal's own serves


def zeros_array(aval):
    """Zeros of ``aval`` as a broadcast scalar (see ``structural.full``)."""
    from .structural import full
    return full(aval.shape, 0, aval.dtype)


def instantiate(t):
    """A Zero as a real array of zeros; anything else unchanged."""
    if type(t) is Zero:
        return zeros_array(t.aval)
    return t


def add_tangents(a, b):
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    return bind(_ADD_P or _add_p(), a, b)


def _add_p():
    # elementwise imports this module: fetch add_p once, on first use
    global _ADD_P
    if _ADD_P is None:
        from .elementwise import add_p
        _ADD_P = add_p
    return _ADD_P


_ADD_P = None


def aval(x):
    t = type(x)
    if t is Zero or t is UndefinedPrimal:
        return x.aval
    return get_aval(x)


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


def not_mapped_size(args, dims):
    """The batch size from the first batched argument."""
    for x, d in zip(args, dims):
        if d is not None:
            return aval(x).shape[d]
    raise ValueError("no batched argument")


def move_batch_axis(x, d, to: int = 0, size: int | None = None):
    """Move batch axis d of x to position ``to``; if d is None, broadcast to ``size``."""
    from .structural import broadcast_in_dim, transpose
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
