"""``lax.pow`` with JAX's operand rule: an inexact base may take an integer exponent
array (``pow(f32[4], i64[4])``, JAX's testPowShapeMismatch), the result having the
base's dtype; the ``pow`` primitive itself takes operands of one dtype.

The exponent is converted to the base's dtype, as JAX does. An odd integer above the
float's exact range (2**24 for float32, 2**53 for float64) rounds to an even one; the
sign of a negative base is then restored from the integer's parity (JAX 0.10.2 returns
``pow(f32(-1), 16777217) = +1``; the maths, -1). The negation sits outside the ``pow``,
so derivatives are ``pow``'s rules (``d/dx x**n = n x**(n-1)``); the integer exponent
has no tangent.

>>> import numpy as np
>>> pow(np.float32([2.0, -2.0]), np.int64([3, -1])).tolist()
[8.0, -0.5]
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import dtype_kind
from .arithmetic import (bitwise_and, bitwise_or, broadcast_operands, convert_element_type,
                         eq, full_like, lt, neg, select_n)
from .elementwise_math import copysign, pow as _pow_same_dtype
from ..tracing import get_aval
from ..typing import Array, ArrayLike

__all__ = ["pow"]

_EXACT_BITS = {np.dtype(np.float32): 24, np.dtype(np.float64): 53}


def pow(x: ArrayLike, y: ArrayLike) -> Array:  # noqa: A001 (lax's name)
    """Elementwise ``x ** y``: operands of one dtype, or an inexact ``x`` with an
    integer array ``y`` (Python scalars adapt to the other operand).

    >>> import numpy as np
    >>> pow(np.float64([9.0]), np.int32([2])).tolist()
    [81.0]
    """
    if isinstance(x, (float, complex)) and type(y) is int:
        y = type(x)(y)            # lax.pow(2.0, 3): both Python scalars, a float power
    if not isinstance(y, (bool, int, float, complex)):
        ax, ay = get_aval(x), get_aval(y)
        if dtype_kind(ay.dtype) in "iu" and dtype_kind(ax.dtype) in "fc":
            return _int_exponent(x, y, ax.dtype, ay.dtype)
    return _pow_same_dtype(x, y)


def _int_exponent(x, y, xdt, ydt):
    x, y = broadcast_operands(x, y)
    out = _pow_same_dtype(x, convert_element_type(y, xdt))
    bits = _EXACT_BITS.get(np.dtype(xdt))
    info = np.iinfo(ydt)
    if bits is None or max(info.max, -info.min) <= 2 ** bits:
        return out        # every exponent is exact in the base's dtype (or a complex base)
    # |y| > 2**bits: y - 2**bits > 0 or y + 2**bits < 0 (no overflow: |2**bits| < 2**63;
    # -2**63 itself is even, so it needs no flip)
    big = lt(full_like(y, 2 ** bits), y)
    if info.min < 0:
        big = bitwise_or(big, lt(y, full_like(y, -2 ** bits)))
    odd = eq(bitwise_and(y, full_like(y, 1)), full_like(y, 1))
    negative = lt(copysign(full_like(x, 1), x), full_like(x, 0))   # -0.0 included
    flip = bitwise_and(bitwise_and(big, odd), negative)
    return select_n(flip, out, neg(out))
