"""Float stepping of ``functrans.numpy``: ``nextafter`` and ``spacing``, by integer
arithmetic on the bit pattern (``lax.bitcast_convert_type``): for a finite nonzero float,
adding one to its bits moves it one ulp away from zero.

>>> import functrans.numpy as fnp
>>> float(fnp.nextafter(1.0, 2.0) - 1.0) == float(fnp.finfo(fnp.float64).eps)
True
"""
from __future__ import annotations

import numpy as np

from ..primitives.elementwise import bitcast_convert_type
from . import _elementwise as el
from . import _elementwise_select as sel
from ._creation import asarray, full_like
from ._structural import broadcast_arrays

__all__ = ["nextafter", "spacing"]

_INT_OF = {np.dtype(np.float64): np.int64, np.dtype(np.float32): np.int32}


def _floats(*xs):
    xs = [asarray(x) for x in xs]
    dt = np.result_type(*[x.dtype for x in xs])
    if dt.kind != "f":
        dt = np.dtype(np.float64)
    if dt not in _INT_OF:
        raise TypeError(f"nextafter/spacing: float32 or float64 input required, got {dt}")
    return [asarray(x, dt) for x in xs], dt


def nextafter(x1, x2):
    """The next representable float after ``x1`` in the direction of ``x2``.

    >>> import functrans.numpy as fnp
    >>> fnp.nextafter(fnp.asarray([0.0, 1.0]), fnp.asarray([1.0, 0.0])).tolist()
    [5e-324, 0.9999999999999999]
    """
    (x1, x2), dt = _floats(x1, x2)
    x1, x2 = broadcast_arrays(x1, x2)
    ity = _INT_OF[dt]
    bits = bitcast_convert_type(x1, ity)
    # away from zero is +1 on the magnitude bits for either sign
    away = el.equal(el.greater(x2, x1), el.greater(x1, 0))
    stepped = bitcast_convert_type(sel.where(away, el.add(bits, 1), el.subtract(bits, 1)), dt)
    tiny = np.array(np.finfo(dt).smallest_subnormal, dt)
    from_zero = sel.where(el.greater(x2, 0), full_like(x1, tiny), full_like(x1, -tiny))
    out = sel.where(el.equal(x1, 0), from_zero, stepped)
    out = sel.where(el.equal(x1, x2), x2, out)
    nan = el.logical_or(el.isnan(x1), el.isnan(x2))
    return sel.where(nan, full_like(x1, np.nan), out)


def spacing(x):
    """Distance from ``x`` to the next float away from zero, with the sign of ``x``
    (NaN for infinities and NaN).

    >>> import functrans.numpy as fnp
    >>> float(fnp.spacing(1.0)) == float(fnp.finfo(fnp.float64).eps)
    True
    """
    (x,), dt = _floats(x)
    finite = el.isfinite(x)
    mag = sel.where(finite, el.abs(x), full_like(x, 1.0))   # keeps inf - inf out
    up = el.subtract(nextafter(mag, full_like(mag, np.inf)), mag)
    out = sel.where(el.less(x, 0), el.negative(up), up)
    return sel.where(finite, out, full_like(x, np.nan))
