"""Float stepping of ``functrans.numpy``: ``nextafter`` and ``spacing``, by integer
arithmetic on the bit pattern (``lax.bitcast_convert_type``): for a finite nonzero float,
adding one to its bits moves it one ulp away from zero (float16 and bfloat16 through
int16); ``signbit`` reads the sign bit (of a NaN too). Also ``i0``,
the modified Bessel function of order 0, from its power series and its asymptotic
expansion.

>>> import functrans.numpy as fnp
>>> float(fnp.nextafter(1.0, 2.0) - 1.0) == float(fnp.finfo(fnp.float64).eps)
True
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import bfloat16, dtype_kind
from ..primitives.elementwise import bitcast_convert_type
from . import _elementwise as el
from . import _elementwise_select as sel
from . import _promotion_mode
from ._creation import asarray, full_like
from ._structural import broadcast_arrays
from ._util import result_dtype
from ..array import Array
from ..typing import ArrayLike

__all__ = ["nextafter", "spacing", "i0", "signbit"]

_INT_OF = {np.dtype(np.float64): np.int64, np.dtype(np.float32): np.int32,
           np.dtype(np.float16): np.int16, bfloat16: np.int16}


def _floats(*xs):
    dt = result_dtype(*xs)      # NEP 50: a Python float keeps float32 float32
    xs = [asarray(x) for x in xs]
    if dtype_kind(dt) != "f":
        dt = np.dtype(np.float64)
    if dt not in _INT_OF:
        raise TypeError(f"nextafter/spacing: a real float input required, got {dt}")
    return [asarray(x, dt) for x in xs], dt


def signbit(x: ArrayLike) -> Array:
    """True where the sign bit is set: negative values, ``-0.0`` and a NaN with its sign
    bit set (as numpy's and JAX's; the bits are read as a signed integer's).

    >>> import functrans.numpy as fnp
    >>> fnp.signbit(fnp.asarray([-0.0, 0.0, -2.0, -fnp.nan])).tolist()
    [True, False, True, True]
    """
    x = asarray(x)
    if dtype_kind(x.dtype) in "iub":
        # a zero of x's own dtype: no promotion (bool vs a Python int is one under strict)
        return el.less(x, np.zeros((), x.dtype))
    if x.dtype not in _INT_OF:
        raise TypeError(f"signbit: a real number input required, got {x.dtype}")
    return el.less(bitcast_convert_type(x, _INT_OF[x.dtype]), 0)


def nextafter(x1: ArrayLike, x2: ArrayLike) -> Array:
    """The next representable float after ``x1`` in the direction of ``x2``.

    >>> import functrans.numpy as fnp
    >>> fnp.nextafter(fnp.asarray([0.0, 1.0]), fnp.asarray([1.0, 0.0])).tolist()
    [5e-324, 0.9999999999999999]
    """
    if _promotion_mode.ACTIVE:       # numpy_rank_promotion / numpy_dtype_promotion
        _promotion_mode.check_operands("nextafter", (x1, x2))
    (x1, x2), dt = _floats(x1, x2)
    x1, x2 = broadcast_arrays(x1, x2)
    ity = _INT_OF[dt]
    bits = bitcast_convert_type(x1, ity)
    # away from zero is +1 on the magnitude bits for either sign
    away = el.equal(el.greater(x2, x1), el.greater(x1, 0))
    one = np.array(1, ity)
    stepped = bitcast_convert_type(sel.where(away, el.add(bits, one), el.subtract(bits, one)),
                                   dt)
    tiny = np.array(float(np.finfo(dt).smallest_subnormal), dt)
    from_zero = sel.where(el.greater(x2, 0), full_like(x1, tiny), full_like(x1, -tiny))
    out = sel.where(el.equal(x1, 0), from_zero, stepped)
    out = sel.where(el.equal(x1, x2), x2, out)
    nan = el.logical_or(el.isnan(x1), el.isnan(x2))
    return sel.where(nan, full_like(x1, np.nan), out)


def spacing(x: ArrayLike) -> Array:
    """``nextafter(x, copysign(inf, x)) - x``: the step away from zero, with the sign of
    ``x`` (``-0.0`` steps to the negative subnormal; NaN for infinities and NaN); a zero
    step would give the smallest subnormal with ``x``'s sign. float16 steps towards
    ``+inf`` whatever the sign (``spacing(-1.0) == 2**-11``, ``spacing(-inf) == inf``):
    numpy's float16 rule, which JAX keeps.

    >>> import functrans.numpy as fnp
    >>> float(fnp.spacing(1.0)) == float(fnp.finfo(fnp.float64).eps)
    True
    >>> fnp.spacing(fnp.asarray([-1.0, 1.0], fnp.float16)).tolist()
    [0.00048828125, 0.0009765625]
    """
    (x,), dt = _floats(x)
    inf = full_like(x, np.inf)
    if dt == np.float16:
        return el.subtract(nextafter(x, inf), x)
    out = el.subtract(nextafter(x, el.copysign(inf, x)), x)
    tiny = el.copysign(full_like(x, float(np.finfo(dt).smallest_subnormal)), x)
    return sel.where(el.equal(out, 0), tiny, out)


# Below this |x| the power series sum (x^2/4)^k / (k!)^2 (positive terms, no cancellation)
# converges within _SERIES_TERMS terms; above it the asymptotic expansion's smallest term is
# below 1e-26 relative, so _ASYMPTOTIC_TERMS of it reach float64 round-off.
_SWITCH = 30.0
_SERIES_TERMS = 60
_ASYMPTOTIC_TERMS = 20


def i0(x: ArrayLike) -> Array:
    """Modified Bessel function of the first kind, order 0 (real input; differentiable).

    >>> import functrans.numpy as fnp
    >>> [round(v, 10) for v in fnp.i0(fnp.asarray([0.0, 1.0, -2.0])).tolist()]
    [1.0, 1.2660658778, 2.2795853023]
    """
    x = asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("i0: complex input is not supported")
    out_dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    ax = el.abs(asarray(x, np.float64))
    small = el.less_equal(ax, _SWITCH)
    xs = sel.where(small, ax, full_like(ax, 0.0))
    y = el.multiply(el.multiply(xs, xs), 0.25)
    term, series = full_like(ax, 1.0), full_like(ax, 1.0)
    for k in range(1, _SERIES_TERMS + 1):
        term = el.multiply(term, el.true_divide(y, float(k * k)))
        series = el.add(series, term)
    xl = sel.where(small, full_like(ax, _SWITCH), ax)
    term, asym = full_like(ax, 1.0), full_like(ax, 1.0)
    for k in range(1, _ASYMPTOTIC_TERMS + 1):
        term = el.multiply(term, el.true_divide(float((2 * k - 1) ** 2), el.multiply(xl, 8.0 * k)))
        asym = el.add(asym, term)
    # e^x / sqrt(2 pi x): exp of x exactly keeps the relative error at round-off; past
    # exp's overflow point one combined exp overflows only where i0 itself does
    inv_root = el.true_divide(1.0, el.sqrt(el.multiply(xl, 2 * np.pi)))
    near_overflow = el.greater(xl, 700.0)
    split = el.multiply(el.exp(sel.where(near_overflow, full_like(xl, 0.0), xl)), inv_root)
    # log(x) + log(2 pi), not log(2 pi x): that overflowed for x near the float64 max
    # and made i0 of it 0
    joined = el.exp(el.subtract(xl, el.multiply(0.5, el.add(el.log(xl), np.log(2 * np.pi)))))
    scale = sel.where(near_overflow, joined, split)
    out = sel.where(small, series, el.multiply(scale, asym))
    return asarray(out, out_dtype)
