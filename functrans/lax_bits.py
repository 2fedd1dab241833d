"""``jax.lax``'s bit-level functions, composed from shifts, masks and bitcasts (so every
backend runs them natively): ``population_count``, ``clz``, ``mulhi``, ``nextafter``,
``reduce_precision``, and ``round`` with JAX's ``rounding_method`` (halves away from
zero by default, as JAX's).

>>> import numpy as np
>>> population_count(np.array([7, -1], np.int32)).tolist()
[3, 32]
"""
from __future__ import annotations

import enum
import functools

import numpy as np

from jaxpr_ir import dtype_kind
from . import numpy as fnp
from .custom_derivatives import custom_jvp
from .primitives import elementwise as E
from .primitives.arithmetic import weakly
from .typing import Array, ArrayLike

__all__ = ["population_count", "clz", "mulhi", "nextafter", "reduce_precision",
           "RoundingMethod", "round", "FftType", "rem", "div"]

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _as_unsigned(x, what):
    x = fnp.asarray(x)
    if x.dtype.kind not in "iu" or x.dtype.itemsize not in _UNSIGNED:
        raise TypeError(f"{what}: an 8-, 16-, 32- or 64-bit integer operand, got {x.dtype}")
    ut = _UNSIGNED[x.dtype.itemsize]
    if x.dtype.kind == "u":
        return x, x
    # int8 has no bitcast here: a same-width conversion wraps, the same bits
    return x, (fnp.asarray(x, ut) if ut is np.uint8 else E.bitcast_convert_type(x, ut))


def _popcount(u):
    t = u.dtype.type
    w = 8 * u.dtype.itemsize
    rep = lambda byte: t(int.from_bytes(bytes([byte]) * (w // 8), "little"))  # noqa: E731
    u = u - ((u >> t(1)) & rep(0x55))
    u = (u & rep(0x33)) + ((u >> t(2)) & rep(0x33))
    u = (u + (u >> t(4))) & rep(0x0F)
    return (u * rep(0x01)) >> t(w - 8)


def population_count(x: ArrayLike) -> Array:
    """The number of set bits of each element (two's complement for signed ones),
    in ``x``'s dtype.

    >>> import numpy as np
    >>> population_count(np.array([0, 255], np.uint8)).tolist()
    [0, 8]
    """
    x, u = _as_unsigned(x, "population_count")
    return fnp.asarray(_popcount(u), x.dtype)


def clz(x: ArrayLike) -> Array:
    """The number of leading zero bits of each element, in ``x``'s dtype.

    >>> import numpy as np
    >>> clz(np.array([1, 0, -1], np.int32)).tolist()
    [31, 32, 0]
    """
    x, u = _as_unsigned(x, "clz")
    t = u.dtype.type
    w = 8 * u.dtype.itemsize
    s = 1
    while s < w:                 # smear the leading one down: then w - popcount
        u = u | (u >> t(s))
        s *= 2
    return fnp.asarray(t(w) - _popcount(u), x.dtype)


def _mulhi_u64(a, b):
    t = np.uint64
    m = t(0xFFFFFFFF)
    a_lo, a_hi, b_lo, b_hi = a & m, a >> t(32), b & m, b >> t(32)
    mid = a_hi * b_lo + ((a_lo * b_lo) >> t(32))
    low = a_lo * b_hi + (mid & m)
    return a_hi * b_hi + (mid >> t(32)) + (low >> t(32))


def mulhi(x: ArrayLike, y: ArrayLike, /) -> Array:
    """The high half of each product's bits (signed for signed operands), as JAX's.

    >>> import numpy as np
    >>> mulhi(np.array([2**31], np.uint32), np.array([6], np.uint32)).tolist()
    [3]
    """
    x, ux = _as_unsigned(x, "mulhi")
    y, uy = _as_unsigned(y, "mulhi")
    if x.dtype != y.dtype:
        raise TypeError(f"mulhi: operands of one dtype, got {x.dtype} and {y.dtype}")
    w = 8 * x.dtype.itemsize
    if w < 64:                          # the exact product in 64 bits, shifted down
        wide = np.int64 if x.dtype.kind == "i" else np.uint64
        p = fnp.asarray(x, wide) * fnp.asarray(y, wide)
        return fnp.asarray(p >> wide(w), x.dtype)      # the high half fits x's dtype
    hi = _mulhi_u64(ux, uy)
    if x.dtype.kind == "u":
        return hi
    zero = np.uint64(0)             # signed: subtract the other operand for each negative
    hi = hi - fnp.where(x < 0, uy, zero) - fnp.where(y < 0, ux, zero)
    return E.bitcast_convert_type(hi, np.int64)


def nextafter(x1: ArrayLike, x2: ArrayLike) -> Array:
    """The representable number next to ``x1`` towards ``x2`` (subnormals included, as
    numpy's and JAX's on CPU): ``functrans.numpy.nextafter`` on two floats of one dtype
    (float16, bfloat16, float32 or float64). A step that reaches zero keeps ``x1``'s
    sign, as JAX's and numpy's.

    >>> import numpy as np
    >>> bool(float(nextafter(np.float64(1.0), np.float64(2.0))) - 1.0 == np.finfo(float).eps)
    True
    """
    a, b = fnp.asarray(x1), fnp.asarray(x2)
    if dtype_kind(a.dtype) != "f" or a.dtype != b.dtype:
        raise TypeError(f"nextafter: floating operands of one dtype, got {a.dtype} and "
                        f"{b.dtype}")
    return fnp.nextafter(a, b)


def reduce_precision(operand: ArrayLike, exponent_bits: int, mantissa_bits: int) -> Array:
    """``operand`` rounded (to nearest, ties to even) to ``mantissa_bits`` and clamped to
    the range of ``exponent_bits`` (overflow to inf, underflow to zero), kept in its
    dtype: XLA's ReducePrecision, e.g. (8, 7) for bfloat16. Its derivative passes the
    tangent through (JAX's is linear too, and rounds the tangent as well; here it stays
    unrounded: the bit operations have no transpose).

    >>> import numpy as np
    >>> float(reduce_precision(np.float32(1.0 + 2.0 ** -10), 8, 7))
    1.0
    """
    return _reduce_precision(int(exponent_bits), int(mantissa_bits), operand)


@functools.partial(custom_jvp, nondiff_argnums=(0, 1))
def _reduce_precision_st(ebits: int, mbits: int, x: ArrayLike) -> Array:
    return _reduce_precision_bits(x, ebits, mbits)


@_reduce_precision_st.defjvp
def _reduce_precision_jvp(ebits, mbits, primals, tangents):
    # straight through: the bit twiddling would give a zero derivative
    return _reduce_precision_st(ebits, mbits, primals[0]), tangents[0]


def _reduce_precision(ebits: int, mbits: int, operand: ArrayLike) -> Array:
    x = fnp.asarray(operand)
    if dtype_kind(x.dtype) != "f":
        raise TypeError(f"reduce_precision: a real float operand, got {x.dtype}")
    if ebits < 1 or mbits < 0:
        raise ValueError(f"reduce_precision: exponent_bits >= 1 and mantissa_bits >= 0, got "
                         f"{ebits}, {mbits}")
    return _reduce_precision_st(ebits, mbits, x)


def _reduce_precision_bits(operand: ArrayLike, exponent_bits: int, mantissa_bits: int) -> Array:
    x = fnp.asarray(operand)
    if dtype_kind(x.dtype) != "f":
        raise TypeError(f"reduce_precision: a real float operand, got {x.dtype}")
    ebits, mbits = int(exponent_bits), int(mantissa_bits)
    if ebits < 1 or mbits < 0:
        raise ValueError(f"reduce_precision: exponent_bits >= 1 and mantissa_bits >= 0, got "
                         f"{ebits}, {mbits}")
    fi = np.finfo(x.dtype)
    src_m, src_e = fi.nmant, fi.nexp
    ut = _UNSIGNED[x.dtype.itemsize]
    t = ut
    u = E.bitcast_convert_type(x, ut)
    if mbits < src_m:
        last = t(1 << (src_m - mbits))
        bias = (u & last) >> t(src_m - mbits)
        u = (u + bias + t((int(last) >> 1) - 1)) & t(~(int(last) - 1) % (1 << (8 * x.dtype.itemsize)))
    if ebits < src_e:
        sign = t(1 << (8 * x.dtype.itemsize - 1))
        emask = t(((1 << src_e) - 1) << src_m)
        ebias, rbias = (1 << (src_e - 1)) - 1, (1 << (ebits - 1)) - 1
        exp = u & emask
        over = exp > t((ebias + rbias) << src_m)
        under = exp <= t((ebias - rbias) << src_m)
        signed_zero = u & sign
        u = fnp.where(over, signed_zero | emask, fnp.where(under, signed_zero, u))
    out = E.bitcast_convert_type(u, x.dtype)
    return fnp.where(fnp.isnan(x), x, out)


class RoundingMethod(enum.IntEnum):
    """How ``round`` breaks ties: JAX's enum.

    >>> int(RoundingMethod.TO_NEAREST_EVEN)
    1
    """
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x: ArrayLike, rounding_method: RoundingMethod | int = RoundingMethod.AWAY_FROM_ZERO
          ) -> Array:  # noqa: A001 (JAX's name)
    """The nearest integer, halves away from zero (JAX's default) or to even.

    >>> import numpy as np
    >>> round(np.array([0.5, 2.5, -0.5])).tolist(), round(np.array([2.5]), 1).tolist()
    ([1.0, 3.0, -1.0], [2.0])
    """
    method = RoundingMethod(int(rounding_method))
    x = fnp.asarray(x)
    even = E.round(x)
    if method == RoundingMethod.TO_NEAREST_EVEN:
        return even
    t = x.dtype.type
    whole = fnp.trunc(x)
    half = fnp.abs(x - whole) == t(0.5)
    return fnp.where(half, whole + fnp.sign(x), even)


class FftType(enum.Enum):
    """The kinds of ``lax.fft``, JAX's enum (``lax.fft`` takes them or their names).

    >>> FftType.RFFT.name
    'RFFT'
    """
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3

    def __str__(self) -> str:
        return self.name


# --------------------------------------------------------------------------- rem / div
# JAX's lax.rem and lax.div are XLA's: truncating (C's), where the primitives rem and div
# (and fnp.remainder / floor_divide over them) are numpy's flooring ones

def rem(x: ArrayLike, y: ArrayLike) -> Array:
    """JAX's remainder ``x - y * trunc(x / y)``: the sign of ``x`` (C's fmod; numpy's
    remainder takes ``y``'s), ``rem(x, +-inf)`` is ``x``, an integer ``x rem 0`` is ``x``.

    >>> import numpy as np
    >>> rem(np.float64(-3.0), np.float64(2.0)).item(), rem(np.int32(-7), np.int32(0)).item()
    (-1.0, -7)
    """
    typed = E.rem(x, y)       # lax's operand rules (one dtype, scalars adapt; weak type)
    dt = typed.dtype
    x, y = fnp.asarray(x, dt), fnp.asarray(y, dt)
    r = fnp.fmod(x, y)
    return weakly(fnp.where(y == 0, x, r) if dt.kind in "iu" else r, typed.weak_type)


def div(x: ArrayLike, y: ArrayLike) -> Array:
    """JAX's division: true division of floats; integers round toward zero (numpy's
    floor division rounds down) and ``x / 0`` is -1 (all ones unsigned), as XLA.

    >>> import numpy as np
    >>> div(np.int32(-7), np.int32(2)).item(), div(np.int32(7), np.int32(0)).item()
    (-3, -1)
    """
    q = E.div(x, y)
    if q.dtype.kind not in "iu":
        return q
    weak = q.weak_type
    x, y = fnp.asarray(x, q.dtype), fnp.asarray(y, q.dtype)
    inexact = (fnp.remainder(x, y) != 0) & ((x < 0) != (y < 0))
    q = fnp.where(inexact, q + np.asarray(1, q.dtype), q)
    return weakly(fnp.where(y == 0, np.asarray(-1).astype(q.dtype), q), weak)
