"""What differentiation is built on: symbolic zeros, undefined primals, and adding and
instantiating tangents. It sits below every transform and every primitive family and
calls nothing above it (only ``tracing`` and the few primitives of
``primitives.basic``).

>>> from jaxpr_ir import ShapedArray
>>> z = Zero(ShapedArray((3,), "float64"))
>>> z
Zero(f64[3])
>>> add_tangents(z, 1.0)
1.0
>>> instantiate(z).tolist()
[0.0, 0.0, 0.0]
"""
from __future__ import annotations

from jaxpr_ir import ShapedArray
from ..primitives.basic import add_p, full
from ..tracing import bind, get_aval


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


def is_undefined(x) -> bool:
    """Whether ``x`` is a linear input being transposed (an ``UndefinedPrimal``)."""
    return type(x) is UndefinedPrimal


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """Tangents of float values have the same type; integers have none (zero)."""
    return aval       # avals are immutable: the primal's own serves


def zeros_array(aval: ShapedArray):
    """Zeros of ``aval`` as a broadcast scalar (see ``primitives.basic.full``)."""
    return full(aval.shape, 0, aval.dtype)


def instantiate(t):
    """A Zero as a real array of zeros; anything else unchanged."""
    if type(t) is Zero:
        return zeros_array(t.aval)
    return t


def add_tangents(a, b):
    """``a + b`` where either may be a symbolic ``Zero``."""
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    return bind(add_p, a, b)


def aval(x) -> ShapedArray:
    """The abstract value of a tangent, cotangent or primal, symbolic ones included."""
    t = type(x)
    if t is Zero or t is UndefinedPrimal:
        return x.aval
    return get_aval(x)
