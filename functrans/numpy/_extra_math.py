"""Elementwise functions of ``functrans.numpy`` composed from existing ones (no new
primitives), so every transform applies: ``fabs sinc angle
nan_to_num isclose allclose array_equal array_equiv trunc fix fmod
heaviside float_power isneginf isposinf isreal iscomplex iscomplexobj isrealobj isscalar
modf divmod ldexp``.

>>> import functrans.numpy as fnp
>>> fnp.fabs(-2).item()
2.0
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import dtype_kind

from ..tracing import Tracer
from . import _elementwise as el
from . import _elementwise_select as sel
from . import _promotion_mode
from . import _reductions as red
from ._creation import asarray, inexact_dtype, zeros_like, ones_like, full_like
from ._util import result_dtype
from ..array import Array
from ..key_array import KeyArray
from ..typing import ArrayLike

__all__ = ["fabs", "sinc", "angle", "nan_to_num", "isclose",
           "allclose", "array_equal", "array_equiv", "trunc", "fix",
           "fmod", "heaviside", "float_power", "isneginf", "isposinf", "isreal", "iscomplex",
           "iscomplexobj", "isrealobj", "isscalar", "modf", "divmod", "ldexp"]


def _float(x):
    """``x`` as an array of a floating dtype (ints and bools become float64)."""
    x = asarray(x)
    return x if dtype_kind(x.dtype) in "fc" else asarray(x, np.float64)


def fabs(x: ArrayLike) -> Array:
    """Absolute value of a real array, always floating.

    >>> import functrans.numpy as fnp
    >>> fnp.fabs(fnp.asarray([-2, 3])).tolist()
    [2.0, 3.0]
    """
    x = asarray(x)
    if dtype_kind(x.dtype) == "c":
        raise TypeError("fabs: complex input is not supported (numpy rejects it too)")
    return el.abs(_float(x))


def sinc(x: ArrayLike) -> Array:
    """Normalised sinc ``sin(pi x) / (pi x)``, 1 at 0 (smooth there: derivative 0).

    >>> import functrans.numpy as fnp
    >>> fnp.sinc(fnp.asarray([0.0, 1.0])).round(6).tolist()
    [1.0, 0.0]
    """
    x = _float(x)
    zero = el.equal(x, 0)
    # a safe denominator keeps the untaken branch (and its derivative) finite at 0
    safe = el.multiply(sel.where(zero, ones_like(x), x), np.pi)
    # near 0 use the Taylor series 1 - (pi x)^2 / 6, whose derivative is right at 0
    taylor = el.subtract(1.0, el.true_divide(el.square(el.multiply(x, np.pi)), 6.0))
    return sel.where(zero, taylor, el.true_divide(el.sin(safe), safe))


def angle(z: ArrayLike, deg: bool = False) -> Array:
    """The argument of complex ``z`` (``arctan2(imag, real)``), in degrees if ``deg``.

    >>> import functrans.numpy as fnp
    >>> float(fnp.angle(-1.0))
    3.141592653589793
    """
    z = asarray(z)
    re, im = sel.real(z), sel.imag(z)
    out = el.arctan2(_float(im), _float(re))
    return el.multiply(out, 180.0 / np.pi) if deg else out


def nan_to_num(x: ArrayLike, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Array:
    """NaN replaced by ``nan``, +-inf by ``posinf``/``neginf`` (default: the dtype's
    largest finite values); complex parts are handled separately.

    >>> import functrans.numpy as fnp
    >>> fnp.nan_to_num(fnp.asarray([fnp.nan, 1.0]), nan=-1.0).tolist()
    [-1.0, 1.0]
    """
    x = asarray(x)
    if dtype_kind(x.dtype) not in "fc":
        return x
    if dtype_kind(x.dtype) == "c":
        re = nan_to_num(sel.real(x), nan=nan, posinf=posinf, neginf=neginf)
        im = nan_to_num(sel.imag(x), nan=nan, posinf=posinf, neginf=neginf)
        return el.add(asarray(re, x.dtype), el.multiply(asarray(im, x.dtype), 1j))
    info = np.finfo(x.dtype)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    x = sel.where(el.isnan(x), full_like(x, nan), x)
    x = sel.where(el.logical_and(el.isinf(x), el.greater(x, 0)), full_like(x, hi), x)
    return sel.where(el.logical_and(el.isinf(x), el.less(x, 0)), full_like(x, lo), x)


def isclose(a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Array:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` for a finite ``b`` (integers compared
    as float64), or ``a == b``: equal infinities are close.

    >>> import functrans.numpy as fnp
    >>> fnp.isclose(fnp.asarray([1.0, 1.1]), 1.0).tolist()
    [True, False]
    """
    a, b = asarray(a), asarray(b)
    if isinstance(a, KeyArray) or isinstance(b, KeyArray):
        return el.equal(a, b)
    a, b = _float(a), _float(b)      # integers too: the tolerances apply to them (JAX's)
    # equal, or b finite and |a - b| within tolerance (an infinite tolerance admits an
    # infinite a, as JAX's and numpy < 2.3's)
    within = el.less_equal(el.abs(el.subtract(a, b)),
                           el.add(atol, el.multiply(rtol, el.abs(b))))
    out = el.logical_or(el.equal(a, b), el.logical_and(el.isfinite(b), within))
    if equal_nan:
        out = el.logical_or(out, el.logical_and(el.isnan(a), el.isnan(b)))
    return out


def allclose(a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> Array:
    """Whether every element of ``a`` and ``b`` is close (a 0-d bool array).

    >>> import functrans.numpy as fnp
    >>> bool(fnp.allclose(fnp.ones(3), fnp.ones(3) + 1e-9))
    True
    """
    return red.all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def array_equal(a1: ArrayLike, a2: ArrayLike, equal_nan: bool = False) -> Array:
    """True when the shapes agree and every element is equal.

    >>> import functrans.numpy as fnp
    >>> bool(fnp.array_equal([1, 2], [1, 2])), bool(fnp.array_equal([1], [1, 2]))
    (True, False)
    """
    a1, a2 = asarray(a1), asarray(a2)
    if a1.shape != a2.shape:
        return asarray(False)
    eq = el.equal(a1, a2)
    if equal_nan and dtype_kind(a1.dtype) in "fc" and dtype_kind(a2.dtype) in "fc":
        eq = el.logical_or(eq, el.logical_and(el.isnan(a1), el.isnan(a2)))
    return red.all(eq)


def array_equiv(a1: ArrayLike, a2: ArrayLike) -> Array:
    """True when ``a1`` and ``a2`` broadcast together and are equal everywhere.

    >>> import functrans.numpy as fnp
    >>> bool(fnp.array_equiv([1, 2], [[1, 2], [1, 2]]))
    True
    """
    a1, a2 = asarray(a1), asarray(a2)
    try:
        np.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return asarray(False)
    return red.all(el.equal(a1, a2))


def trunc(x: ArrayLike) -> Array:
    """Round toward zero.

    >>> import functrans.numpy as fnp
    >>> fnp.trunc(fnp.asarray([-1.5, 1.5])).tolist()
    [-1.0, 1.0]
    """
    x = asarray(x)
    if dtype_kind(x.dtype) in "iub":
        return x
    return sel.where(el.less(x, 0), el.ceil(x), el.floor(x))


fix = trunc


def fmod(x1: ArrayLike, x2: ArrayLike) -> Array:
    """C's remainder: the sign follows the dividend ``x1`` (numpy's ``fmod``).

    >>> import functrans.numpy as fnp
    >>> fnp.fmod(fnp.asarray([-3, 3]), 2).tolist()
    [-1, 1]
    """
    # one dtype by NEP 50 first: a Python float divisor keeps float32 float32
    if _promotion_mode.ACTIVE:       # numpy_rank_promotion / numpy_dtype_promotion
        _promotion_mode.check_operands("fmod", (x1, x2))
    dt = result_dtype(x1, x2)
    x1, x2 = asarray(x1, dt), asarray(x2, dt)
    r = el.remainder(x1, x2)
    if dtype_kind(r.dtype) == "f":
        # C's fmod exactly: of |x1| and |x2| the floored remainder is the truncated one,
        # with no rounding (shifting remainder(x1, x2) by x2 rounded: fmod(0.3, -1) gave
        # 0.30000000000000004, fmod(-1, inf) nan); then x1's sign, zeros included
        return el.copysign(el.remainder(el.abs(asarray(x1, r.dtype)),
                                        el.abs(asarray(x2, r.dtype))), x1)
    # remainder takes the divisor's sign; shift back where that differs from x1's
    fix_needed = el.logical_and(el.not_equal(r, 0), el.not_equal(el.less(r, 0), el.less(x1, 0)))
    return sel.where(fix_needed, el.subtract(r, x2), r)


def heaviside(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Step function: 0 below zero, ``x2`` at zero, 1 above.

    >>> import functrans.numpy as fnp
    >>> fnp.heaviside(fnp.asarray([-1.0, 0.0, 2.0]), 0.5).tolist()
    [0.0, 0.5, 1.0]
    """
    # numpy's result dtype (float32 with int8 stays float32); integers alone: float64
    if _promotion_mode.ACTIVE:       # numpy_rank_promotion / numpy_dtype_promotion
        _promotion_mode.check_operands("heaviside", (x1, x2))
    dt = result_dtype(x1, x2)
    dt = dt if dtype_kind(dt) in "fc" else np.dtype(np.float64)
    x1, x2 = asarray(x1, dt), asarray(x2, dt)
    one, zero = ones_like(x1), zeros_like(x1)
    # JAX's: x2 itself at zero (heaviside(0, -0.0) is -0.0), nan for nan
    at_zero = sel.where(el.isnan(x1), x1, x2)
    return sel.where(el.greater(x1, 0), one, sel.where(el.less(x1, 0), zero, at_zero))


def float_power(x1: ArrayLike, x2: ArrayLike) -> Array:
    """``x1 ** x2`` in the inexact type of the operands, as JAX (numpy always widens to
    float64): float32 stays float32, int32 becomes float32, int64 float64.

    >>> import functrans.numpy as fnp
    >>> fnp.float_power(2, 3).item()
    8.0
    """
    if _promotion_mode.ACTIVE:       # numpy_rank_promotion / numpy_dtype_promotion
        _promotion_mode.check_operands("float_power", (x1, x2))
    dt = inexact_dtype(result_dtype(x1, x2))
    return el.power(asarray(x1, dt), asarray(x2, dt))


def isposinf(x: ArrayLike) -> Array:
    """True where ``x`` is +inf.

    >>> import functrans.numpy as fnp
    >>> fnp.isposinf(fnp.asarray([fnp.inf, -fnp.inf])).tolist()
    [True, False]
    """
    x = asarray(x)
    return el.logical_and(el.isinf(x), el.greater(x, 0))


def isneginf(x: ArrayLike) -> Array:
    """True where ``x`` is -inf.

    >>> import functrans.numpy as fnp
    >>> fnp.isneginf(fnp.asarray([fnp.inf, -fnp.inf])).tolist()
    [False, True]
    """
    x = asarray(x)
    return el.logical_and(el.isinf(x), el.less(x, 0))


def isreal(x: ArrayLike) -> Array:
    """True where the imaginary part is zero (everywhere for real input).

    >>> import functrans.numpy as fnp
    >>> fnp.isreal(fnp.asarray([1 + 0j, 1j])).tolist()
    [True, False]
    """
    return el.equal(sel.imag(asarray(x)), 0)


def iscomplex(x: ArrayLike) -> Array:
    """True where the imaginary part is nonzero.

    >>> import functrans.numpy as fnp
    >>> fnp.iscomplex(fnp.asarray([1 + 0j, 1j])).tolist()
    [False, True]
    """
    return el.not_equal(sel.imag(asarray(x)), 0)


def iscomplexobj(x: ArrayLike) -> bool:
    """Whether ``x`` has a complex dtype (a static answer).

    >>> iscomplexobj(1j), iscomplexobj(1.0)
    (True, False)
    """
    return dtype_kind(asarray(x).dtype) == "c"


def isrealobj(x: ArrayLike) -> bool:
    """Whether ``x`` has a non-complex dtype (a static answer).

    >>> isrealobj(1.0)
    True
    """
    return not iscomplexobj(x)


def isscalar(element: ArrayLike) -> bool:
    """JAX's rule: Python and numpy scalars and 0-d arrays (also traced ones) are scalars.

    >>> import functrans.numpy as fnp
    >>> isscalar(1.0), isscalar(fnp.asarray(2.0)), isscalar([1.0])
    (True, True, False)
    """
    if isinstance(element, (bool, int, float, complex, np.generic)):
        return True
    if isinstance(element, (Tracer, np.ndarray)):
        return element.ndim == 0
    return False


def modf(x: ArrayLike) -> tuple[Array, Array]:
    """Fractional and integral parts, both with the sign of ``x``.

    >>> import functrans.numpy as fnp
    >>> [v.tolist() for v in fnp.modf(fnp.asarray([-1.5, 2.25]))]
    [[-0.5, 0.25], [-1.0, 2.0]]
    """
    x = _float(x)
    whole = trunc(x)
    return el.subtract(x, whole), whole


def divmod(x1: ArrayLike, x2: ArrayLike) -> tuple[Array, Array]:  # noqa: A001 (numpy's name)
    """``(floor_divide(x1, x2), remainder(x1, x2))``.

    >>> import functrans.numpy as fnp
    >>> [v.tolist() for v in fnp.divmod(fnp.asarray([7, -7]), 2)]
    [[3, -4], [1, 1]]
    """
    return el.floor_divide(x1, x2), el.remainder(x1, x2)


def ldexp(x1: ArrayLike, x2: ArrayLike) -> Array:
    """``x1 * 2**x2`` for integer ``x2``.

    >>> import functrans.numpy as fnp
    >>> fnp.ldexp(1.5, 3).item()
    12.0
    """
    x2 = asarray(x2)
    if dtype_kind(x2.dtype) not in "iub":
        raise TypeError(f"ldexp: the exponent must be an integer array, got {x2.dtype}")
    x1 = _float(x1)
    return _scaled_by_power_of_two(x1, x2)


def _scaled_by_power_of_two(x, e):
    """``x * 2**e`` rounded once, without the overflow / underflow of ``2**e`` itself
    (``ldexp(tiny, 2044)`` is finite; ``2.0**2044`` is not): ``x`` is first scaled
    exactly to ``t`` near 1 by its own exponent ``k``, then ``t * 2**(k + e)`` is formed
    in two exact steps when ``k + e >= 0`` and with ``t / 8`` (so that the power of two
    stays representable down to the subnormals) when it is negative."""
    fi = np.finfo(x.dtype)
    bound = 2 * (fi.maxexp - fi.minexp + fi.nmant + 4)    # beyond: 0 or inf anyway
    special = el.logical_or(el.equal(x, 0), el.logical_not(el.isfinite(x)))
    safe = sel.where(special, ones_like(x), x)
    k = el.floor(el.log2(el.abs(safe)))                     # x's exponent, maybe 1 off
    h = el.floor(el.multiply(k, 0.5))
    t = el.multiply(el.multiply(safe, el.exp2(el.negative(h))), el.exp2(el.subtract(h, k)))
    n = el.add(k, asarray(sel.clip(asarray(e, np.int64), -bound, bound), x.dtype))
    up_half = el.floor(el.multiply(n, 0.5))
    up = el.multiply(el.multiply(t, el.exp2(up_half)), el.exp2(el.subtract(n, up_half)))
    down = el.multiply(el.multiply(t, 0.125), el.exp2(el.add(n, 3)))
    out = sel.where(el.greater_equal(n, 0), up, down)
    return sel.where(special, el.multiply(x, ones_like(out)), out)
