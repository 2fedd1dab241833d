"""``functrans.numpy.round`` (``around``): numpy's half-to-even rounding to ``decimals``
places, and integers to ``decimals < 0`` exactly in integer arithmetic.

>>> import functrans.numpy as fnp
>>> fnp.round(fnp.asarray([15, 25, 127], "int8"), -1).tolist()
[20, 20, -126]
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import dtype_kind

from ..array import Array
from ..tracing import Tracer, wrap
from ..primitives import elementwise as E
from ..typing import ArrayLike
from ..weak_values import traced_when_weak
from ._elementwise import cast_to, check_args
from ._util import weakly

__all__ = ["round", "around"]

_ARRAY_ROUND = Array.round      # numpy's, for floats (float16 in float32)


@traced_when_weak        # round(2.7), round(weak): weak, as under jit and in JAX
def round(a: ArrayLike, decimals: int = 0, out: None = None) -> Array:  # noqa: A001
    """Round half to even to ``decimals`` places, as ``numpy.round`` (JAX's argument
    names; ``out`` must be None). Integers to ``decimals < 0`` round exactly and wrap to
    their dtype (``_round_integers``; JAX raises).

    >>> import functrans.numpy as fnp
    >>> fnp.round(2.5).item(), fnp.round(1.25, 1).item()
    (2.0, 1.2)
    """
    if out is not None:
        raise NotImplementedError("round: the 'out' argument is not supported (as JAX)")
    x, decimals = a, int(decimals)
    if not isinstance(x, Tracer):
        check_args("round", x)
        x = np.asarray(x)
        if dtype_kind(x.dtype) == "b" or (dtype_kind(x.dtype) in "iu" and decimals >= 0):
            return wrap(x)      # as under a trace (numpy gives float16 for bool)
        if dtype_kind(x.dtype) in "iu":
            return wrap(_round_integers(x, -decimals))
        return _ARRAY_ROUND(wrap(x), decimals)    # (float16 in float32, as under a trace)
    kind = dtype_kind(x.dtype)
    if kind == "b" or (kind in "iu" and decimals >= 0):
        return x
    if kind in "iu":
        return _round_integers(x, -decimals)
    if kind == "c":     # each part, as numpy's
        return E.complex(round(E.real(x), decimals), round(E.imag(x), decimals))
    if decimals == 0:
        return E.round(x)
    # numpy's scale by 10**d, round, unscale; float16 in float32 (JAX)
    y = cast_to(x, np.promote_types(x.dtype, np.float32))
    f = E.full_like(y, 10.0 ** (decimals if decimals > 0 else -decimals))
    if decimals > 0:
        out = E.div(E.round(E.mul(y, f)), f)
    else:
        out = E.mul(E.round(E.div(y, f)), f)
    return weakly(cast_to(out, x.dtype), x.weak_type)     # (the scale is a strong constant)


around = round


def _round_integers(x, k):
    """Integers rounded half to even to a multiple of ``p = 10**k`` (k >= 1), exactly, in
    integer arithmetic: the result wraps to the dtype as integer products do (int8 127
    gives 130 - 256 = -126, numpy's answer; numpy's float64 steps are inexact for int64
    past 2**53, JAX raises NotImplementedError). Eager and traced alike (the lax
    functions run eagerly on arrays)."""
    dt = np.dtype(x.dtype)
    wide = dt if dt.itemsize == 8 else np.dtype(np.int64)
    top, p = int(np.iinfo(wide).max), 10 ** k
    if p > top:       # |x| <= p / 2: 0, but for int64 p = 10**19: +-p wrapped
        half = p // 2
        zero = E.sub(x, x)
        if half > top or dt.itemsize < 8:
            return zero
        big = wide.type(p - 2 ** 64)
        return E.select_n(E.gt(x, wide.type(half)),
                          E.select_n(E.lt(x, wide.type(-half)), zero, E.neg(E.full_like(x, big))),
                          E.full_like(x, big))
    xw, pw = cast_to(x, wide), wide.type(p)
    q, r = E.div(xw, E.full_like(xw, pw)), E.rem(xw, E.full_like(xw, pw))   # 0 <= r < p
    rest = E.sub(E.full_like(r, pw), r)
    odd = E.ne(E.rem(q, E.full_like(q, wide.type(2))), E.full_like(q, wide.type(0)))
    up = E.bitwise_or(E.gt(r, rest), E.bitwise_and(E.eq(r, rest), odd))
    q = E.add(q, cast_to(up, wide))
    return cast_to(E.mul(q, E.full_like(q, pw)), dt)


def _array_round(self, decimals=0, out=None):
    return round(self, decimals, out)


_array_round.__name__, _array_round.__qualname__ = "round", "Array.round"
Array.round = _array_round     # eager x.round(-1) of integers as fnp.round's (numpy's differs)
