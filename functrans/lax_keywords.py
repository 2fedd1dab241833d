"""Keyword arguments of JAX 0.10.2's lax functions that the primitives' own functions
(which functrans calls internally, on its hot paths) do not take: ``mul(out_dtype=)``
and the ``accuracy=`` argument of the transcendental lax functions (``exp``, ``log``,
``sin``, ``tanh``...): ``lax.AccuracyMode`` (``HIGHEST``, ``DEFAULT``) or a
``lax.Tolerance(atol, rtol, ulps)``. JAX 0.10.2 on CPU computes the same values
whatever is asked, and so does functrans: every backend evaluates these functions to
within a few ulps of numpy (``tests/test_op_table.py``), which meets both modes. Any
other value raises NotImplementedError, as JAX's.

>>> import numpy as np
>>> from functrans import lax
>>> float(lax.exp(np.float64(0.0), accuracy=lax.AccuracyMode.HIGHEST))
1.0
>>> lax.mul(np.int8([100]), np.int8([3]), out_dtype=np.int32).tolist()
[300]
"""
from __future__ import annotations

import enum

from .primitives import elementwise as _math
from .primitives.elementwise import convert_element_type
from .typing import Array, ArrayLike, DTypeLike

# the lax functions JAX 0.10.2 gives an ``accuracy`` keyword
_NAMES = ("cbrt", "cos", "exp", "exp2", "expm1", "log", "log1p", "logistic", "rsqrt", "sin",
          "sqrt", "tan", "tanh")
__all__ = ["AccuracyMode", "Tolerance", "mul", *_NAMES]


class AccuracyMode(enum.Enum):
    """JAX's accuracy modes of transcendental functions (both give functrans's values).

    >>> AccuracyMode.HIGHEST.name
    'HIGHEST'
    """
    HIGHEST = 1
    DEFAULT = 2


class Tolerance:
    """JAX's requested error bounds ``atol``, ``rtol``, ``ulps`` (non-negative).

    >>> Tolerance(rtol=1e-6).rtol
    1e-06
    """

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0):
        if atol < 0 or rtol < 0 or ulps < 0:
            raise ValueError("Tolerances must be non-negative.")
        self.atol, self.rtol, self.ulps = atol, rtol, ulps

    def __repr__(self):
        return f"Tolerance(atol={self.atol}, rtol={self.rtol}, ulps={self.ulps})"


def _with_accuracy(fn):
    def f(x: ArrayLike, *, accuracy: Tolerance | AccuracyMode | None = None) -> Array:
        if accuracy is not None and not isinstance(accuracy, (Tolerance, AccuracyMode)):
            raise NotImplementedError(f"lax.{fn.__name__}: accuracy {accuracy!r} is not "
                                      "supported (None, a lax.AccuracyMode or a lax.Tolerance)")
        return fn(x)
    f.__name__ = f.__qualname__ = fn.__name__
    f.__doc__ = fn.__doc__
    return f


globals().update({n: _with_accuracy(getattr(_math, n)) for n in _NAMES})


def mul(x: ArrayLike, y: ArrayLike, *, out_dtype: DTypeLike | None = None) -> Array:
    """Elementwise ``x * y``; with ``out_dtype`` (JAX's), both operands are first
    converted to it and multiplied there (then they may differ in dtype), so
    ``int8 * int8`` into int32 does not wrap.

    >>> import numpy as np
    >>> mul(np.float32([1.5]), np.float32([2.0]), out_dtype=np.float64).dtype
    dtype('float64')
    """
    if out_dtype is not None:
        x, y = convert_element_type(x, out_dtype), convert_element_type(y, out_dtype)
    return _math.mul(x, y)
