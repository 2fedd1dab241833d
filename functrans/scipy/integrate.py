"""``functrans.scipy.integrate``: ``trapezoid``, as ``functrans.numpy.trapezoid``.

>>> from functrans.scipy.integrate import trapezoid
>>> float(trapezoid([1.0, 2.0, 3.0]))
4.0
"""
from __future__ import annotations

from .. import numpy as _fnp
from ..typing import Array, ArrayLike

__all__ = ["trapezoid"]


def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: float = 1.0,
              axis: int = -1) -> Array:
    """The trapezoidal rule along ``axis``, with sample points ``x`` or spacing ``dx``.

    >>> from functrans.scipy.integrate import trapezoid
    >>> float(trapezoid([1.0, 1.0], x=[0.0, 2.0]))
    2.0
    """
    return _fnp.trapezoid(y, x=x, dx=dx, axis=axis)
