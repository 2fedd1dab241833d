"""Information-theory helpers (xlogy, entr, kl_div...) and the modified Bessel
functions I0, I1 (and their exponentially scaled forms): the power series below
|x| = 30 (all terms positive: no cancellation), the asymptotic expansion beyond.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .. import numpy as fnp
from ..custom_derivatives import custom_jvp
# the primitive's own module, not functrans.lax: lax re-exports i0e and i1e from here
from ..primitives.control_flow import fori_loop
from ._special_gamma import as_float
from ..typing import Array, ArrayLike

__all__ = ["xlogy", "xlog1py", "entr", "kl_div", "rel_entr", "i0e", "i0", "i1e", "i1",
           "bernoulli", "exp1"]

_SERIES_TERMS = 90
_ASYM_TERMS = 30
_ASYM_FROM = 30.0


@custom_jvp
def _xlogy(x, y):
    t = x.dtype.type
    zero = (x == 0) & ~fnp.isnan(y)     # 0 * log(y) is 0 for every y but NaN (scipy)
    return fnp.where(zero, t(0), x * fnp.log(fnp.where(zero, t(1), y)))


@_xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    t = x.dtype.type
    # d/dy = x / y, guarded only at x = y = 0 (not at every x = 0: its own derivative in
    # x, the mixed second derivative 1 / y, must survive there)
    both0 = (x == 0) & (y == 0)
    dy = fnp.where(both0, t(0), x / fnp.where(both0, t(1), y))
    return _xlogy(x, y), tx * fnp.log(y) + ty * dy


def xlogy(x: ArrayLike, y: ArrayLike) -> Array:
    """x * log(y), 0 where x == 0 (also for y == 0).

    >>> from functrans.scipy.special import xlogy
    >>> float(xlogy(0.0, 0.0))
    0.0
    """
    x, y = as_float(x, y)
    x, y = fnp.broadcast_arrays(x, y)
    return _xlogy(x, y)


@custom_jvp
def _xlog1py(x, y):
    t = x.dtype.type
    zero = (x == 0) & ~fnp.isnan(y)     # NaN in y stays NaN (scipy)
    return fnp.where(zero, t(0), x * fnp.log1p(fnp.where(zero, t(0), y)))


@_xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    t = x.dtype.type
    both0 = (x == 0) & (y == -1)        # guarded only there (see _xlogy_jvp)
    dy = fnp.where(both0, t(0), x / (t(1) + fnp.where(both0, t(0), y)))
    return _xlog1py(x, y), tx * fnp.log1p(y) + ty * dy


def xlog1py(x: ArrayLike, y: ArrayLike) -> Array:
    """x * log1p(y), 0 where x == 0 (also for y == -1).

    >>> from functrans.scipy.special import xlog1py
    >>> float(xlog1py(0.0, -1.0))
    0.0
    """
    x, y = as_float(x, y)
    x, y = fnp.broadcast_arrays(x, y)
    return _xlog1py(x, y)


@custom_jvp
def _xlogx(x):
    t = x.dtype.type
    return fnp.where(x == 0, t(0), x * fnp.log(fnp.where(x == 0, t(1), x)))


@_xlogx.defjvp
def _xlogx_jvp(primals, tangents):
    (x,), (tx,) = primals, tangents
    t = x.dtype.type
    # log x + 1: -inf at 0 (JAX's entr'(0) = inf); x < 0 is masked out by entr
    return _xlogx(x), tx * (fnp.log(fnp.where(x < 0, t(1), x)) + t(1))


def entr(x: ArrayLike) -> Array:
    """-x log x for x > 0, 0 at 0, -inf for x < 0; the derivative -log x - 1 is +inf at
    0 (as JAX's).

    >>> from functrans.scipy.special import entr
    >>> float(entr(1.0))
    -0.0
    """
    x = as_float(x)
    t = x.dtype.type
    # scipy's signed zeros: +0 at 0, -0 at 1 (-(1 log 1)); the added zero carries no tangent
    zero = fnp.where(x == 0, t(0), t(-0.0))
    return fnp.where(x < 0, t(-np.inf), zero - _xlogx(x))


def rel_entr(x: ArrayLike, y: ArrayLike) -> Array:
    """x log(x / y) for x, y > 0; 0 where x == 0 and y >= 0; inf elsewhere.

    >>> from functrans.scipy.special import rel_entr
    >>> float(rel_entr(0.0, 2.0))
    0.0
    """
    x, y = as_float(x, y)
    x, y = fnp.broadcast_arrays(x, y)
    t = x.dtype.type
    both = (x > 0) & (y > 0)
    xs, ys = fnp.where(both, x, t(1)), fnp.where(both, y, t(1))
    val = xs * fnp.log(xs / ys)
    return fnp.where(both, val, fnp.where((x == 0) & (y >= 0), t(0), t(np.inf)))


def kl_div(x: ArrayLike, y: ArrayLike) -> Array:
    """x log(x / y) - x + y for x, y > 0; y where x == 0 and y >= 0; inf elsewhere.

    >>> from functrans.scipy.special import kl_div
    >>> float(kl_div(1.0, 1.0))
    0.0
    """
    x, y = as_float(x, y)
    x, y = fnp.broadcast_arrays(x, y)
    t = x.dtype.type
    both = (x > 0) & (y > 0)
    xs, ys = fnp.where(both, x, t(1)), fnp.where(both, y, t(1))
    val = xs * fnp.log(xs / ys) - xs + ys
    return fnp.where(both, val, fnp.where((x == 0) & (y >= 0), y, t(np.inf)))


def _bessel_scaled(nu, ax):
    """exp(-x) I_nu(x) for x >= 0 and nu in {0, 1}."""
    t = ax.dtype.type
    big = ax >= t(_ASYM_FROM)
    xs = fnp.where(big, t(1), ax)
    y = t(0.25) * xs * xs

    def series_step(k, carry):
        term, acc = carry
        kf = fnp.asarray(k, ax.dtype)
        term = term * y / (kf * (kf + t(nu)))
        return term, acc + term

    first = fnp.ones_like(xs) if nu == 0 else t(0.5) * xs
    _, acc = fori_loop(1, _SERIES_TERMS, series_step, (first, first))
    small = acc * fnp.exp(-xs)
    xb = fnp.where(big, ax, t(_ASYM_FROM))
    term = fnp.ones_like(xb)
    total = term
    for k in range(1, _ASYM_TERMS):
        # I_nu(x) e^-x ~ (2 pi x)^-1/2 sum_k (-1)^k prod_j (4nu^2 - (2j-1)^2) / (8 j x)
        term = term * t(-(4 * nu * nu - (2 * k - 1) ** 2) / (8 * k)) / xb
        total = total + term
    asym = total / fnp.sqrt(t(2 * math.pi) * xb)
    return fnp.where(big, asym, small)


@custom_jvp
def _i0e(x):
    return _bessel_scaled(0, fnp.abs(x))


@custom_jvp
def _i1e(x):
    return fnp.sign(x) * _bessel_scaled(1, fnp.abs(x))


@_i0e.defjvp
def _i0e_jvp(primals, tangents):
    (x,), (tx,) = primals, tangents
    y = _i0e(x)
    return y, tx * (_i1e(x) - fnp.sign(x) * y)


@_i1e.defjvp
def _i1e_jvp(primals, tangents):
    (x,), (tx,) = primals, tangents
    t = x.dtype.type
    y = _i1e(x)
    # I1'(x) = I0(x) - I1(x)/x, which is 1/2 at x = 0
    safe = fnp.where(x == 0, t(1), x)
    i1_over_x = fnp.where(x == 0, t(0.5), y / safe)
    return y, tx * (_i0e(x) - i1_over_x - fnp.sign(x) * y)


def i0e(x: ArrayLike) -> Array:
    """exp(-|x|) I0(x), the exponentially scaled modified Bessel function of order 0.

    >>> from functrans.scipy.special import i0e
    >>> float(i0e(0.0))
    1.0
    """
    return _i0e(as_float(x))


def i1e(x: ArrayLike) -> Array:
    """exp(-|x|) I1(x), the exponentially scaled modified Bessel function of order 1.

    >>> from functrans.scipy.special import i1e
    >>> float(i1e(0.0))
    0.0
    """
    return _i1e(as_float(x))


def i0(x: ArrayLike) -> Array:
    """The modified Bessel function of the first kind of order 0.

    >>> from functrans.scipy.special import i0
    >>> float(i0(0.0))
    1.0
    """
    x = as_float(x)
    return fnp.exp(fnp.abs(x)) * _i0e(x)


def i1(x: ArrayLike) -> Array:
    """The modified Bessel function of the first kind of order 1.

    >>> from functrans.scipy.special import i1
    >>> float(i1(0.0))
    0.0
    """
    x = as_float(x)
    return fnp.exp(fnp.abs(x)) * _i1e(x)


def bernoulli(n: int) -> Array:
    """The Bernoulli numbers B_0 .. B_n (B_1 = -1/2), as float64, like scipy.

    >>> from functrans.scipy.special import bernoulli
    >>> bernoulli(4).tolist()
    [1.0, -0.5, 0.16666666666666666, 0.0, -0.03333333333333333]
    """
    n = int(n)
    if n < 0:
        raise ValueError(f"bernoulli: n must be >= 0, got {n}")
    numbers = [Fraction(1)]
    for m in range(1, n + 1):
        # sum_{k<m} C(m+1, k) B_k + (m+1) B_m = 0
        acc = sum(math.comb(m + 1, k) * numbers[k] for k in range(m))
        numbers.append(-acc / (m + 1))
    return fnp.asarray(np.array([float(b) for b in numbers], np.float64))


_EXP1_CF_TERMS = 60


@custom_jvp
def _exp1(x):
    t = x.dtype.type
    big = x > t(2)
    xs = fnp.where(big, t(1), fnp.where(x > 0, x, t(1)))
    # E1(x) = -gamma - log x - sum_k (-x)^k / (k k!) below 2 ...
    term, acc = -xs, -xs
    for k in range(2, 40):
        term = -term * xs / t(k)
        acc = acc + term / t(k)
    series = -t(np.euler_gamma) - fnp.log(xs) - acc
    # ... and e^-x / (x + 1 - 1 / (x + 3 - 4 / (x + 5 - ...))) above, run backwards
    xb = fnp.where(big & fnp.isfinite(x), x, t(3))

    def backward_step(j, tail):
        i = fnp.asarray(_EXP1_CF_TERMS - j, x.dtype)
        return -(i * i) / (xb + t(2) * i + t(1) + tail)

    tail = fori_loop(0, _EXP1_CF_TERMS, backward_step, fnp.zeros_like(xb))
    cf = fnp.exp(-xb) / (xb + t(1) + tail)
    out = fnp.where(big, fnp.where(fnp.isinf(x), t(0), cf), series)
    return fnp.where(x == 0, t(np.inf), fnp.where(x < 0, t(np.nan), out))


@_exp1.defjvp
def _exp1_jvp(primals, tangents):
    (x,), (tx,) = primals, tangents
    return _exp1(x), -tx * fnp.exp(-x) / x


def exp1(x: ArrayLike) -> Array:
    """The exponential integral E1(x) = int_1^inf e^(-x t) / t dt for x > 0 (inf at 0,
    NaN below): the power series up to 2, a continued fraction beyond.

    >>> from functrans.scipy.special import exp1
    >>> round(float(exp1(1.0)), 12)
    0.219383934396
    """
    return _exp1(as_float(x))
