"""Information-theory helpers (xlogy, entr, kl_div...) and the modified Bessel
functions I0, I1 (and their exponentially scaled forms): Cephes' Chebyshev series on
[0, 8] and in 1 / x beyond, as scipy's and JAX's.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .. import numpy as fnp
from ..custom_derivatives import custom_jvp
# the primitive's own module, not functrans.lax: lax re-exports i0e and i1e from here
from ..primitives.control_flow import fori_loop
from ._special_gamma import as_float, in_float64
from ..typing import Array, ArrayLike

__all__ = ["xlogy", "xlog1py", "entr", "kl_div", "rel_entr", "i0e", "i0", "i1e", "i1",
           "bernoulli", "exp1"]

# Cephes' Chebyshev coefficients (i0.c, i1.c), highest degree first: exp(-x) I0(x) and
# exp(-x) I1(x) / x in x / 2 - 2 on [0, 8], sqrt(x) exp(-x) I_nu(x) in 32 / x - 2 beyond
_CHEB_SPLIT = 8.0
_I0E_A = (-4.41534164647933937950e-18, 3.33079451882223809783e-17,
          -2.43127984654795469359e-16, 1.71539128555513303061e-15,
          -1.16853328779934516808e-14, 7.67618549860493561688e-14,
          -4.85644678311192946090e-13, 2.95505266312963983461e-12,
          -1.72682629144155570723e-11, 9.67580903537323691224e-11,
          -5.18979560163526290666e-10, 2.65982372468238665035e-9,
          -1.30002500998624804212e-8, 6.04699502254191894932e-8,
          -2.67079385394061173391e-7, 1.11738753912010371815e-6,
          -4.41673835845875056359e-6, 1.64484480707288970893e-5,
          -5.75419501008210370398e-5, 1.88502885095841655729e-4,
          -5.76375574538582365885e-4, 1.63947561694133579842e-3,
          -4.32430999505057594430e-3, 1.05464603945949983183e-2,
          -2.37374148058994688156e-2, 4.93052842396707084878e-2,
          -9.49010970480476444210e-2, 1.71620901522208775349e-1,
          -3.04682672343198398683e-1, 6.76795274409476084995e-1)
_I0E_B = (-7.23318048787475395456e-18, -4.83050448594418207126e-18,
          4.46562142029675999901e-17, 3.46122286769746109310e-17,
          -2.82762398051658348494e-16, -3.42548561967721913462e-16,
          1.77256013305652638360e-15, 3.81168066935262242075e-15,
          -9.55484669882830764870e-15, -4.15056934728722208663e-14,
          1.54008621752140982691e-14, 3.85277838274214270114e-13,
          7.18012445138366623367e-13, -1.79417853150680611778e-12,
          -1.32158118404477131188e-11, -3.14991652796324136454e-11,
          1.18891471078464383424e-11, 4.94060238822496958910e-10,
          3.39623202570838634515e-9, 2.26666899049817806459e-8,
          2.04891858946906374183e-7, 2.89137052083475648297e-6,
          6.88975834691682398426e-5, 3.36911647825569408990e-3,
          8.04490411014108831608e-1)
_I1E_A = (2.77791411276104639959e-18, -2.11142121435816608115e-17,
          1.55363195773620046921e-16, -1.10559694773538630805e-15,
          7.60068429473540693410e-15, -5.04218550472791168711e-14,
          3.22379336594557470981e-13, -1.98397439776494371520e-12,
          1.17361862988909016308e-11, -6.66348972350202774223e-11,
          3.62559028155211703701e-10, -1.88724975172282928790e-9,
          9.38153738649577178388e-9, -4.44505912879632808065e-8,
          2.00329475355213526229e-7, -8.56872026469545474066e-7,
          3.47025130813767847674e-6, -1.32731636560394358279e-5,
          4.78156510755005422638e-5, -1.61760815825896745588e-4,
          5.12285956168575772895e-4, -1.51357245063125314899e-3,
          4.15642294431288815669e-3, -1.05640848946261981558e-2,
          2.47264490306265168283e-2, -5.29459812080949914269e-2,
          1.02643658689847095384e-1, -1.76416518357834055153e-1,
          2.52587186443633654823e-1)
_I1E_B = (7.51729631084210481353e-18, 4.41434832307170791151e-18,
          -4.65030536848935832153e-17, -3.20952592199342395980e-17,
          2.96262899764595013876e-16, 3.30820231092092828324e-16,
          -1.88035477551078244854e-15, -3.81440307243700780478e-15,
          1.04202769841288027642e-14, 4.27244001671195135429e-14,
          -2.10154184277266431302e-14, -4.08355111109219731823e-13,
          -7.19855177624590851209e-13, 2.03562854414708950722e-12,
          1.41258074366137813316e-11, 3.25260358301548823856e-11,
          -1.89749581235054123450e-11, -5.58974346219658380687e-10,
          -3.83538038596423702205e-9, -2.63146884688951950684e-8,
          -2.51223623787020892529e-7, -3.88256480887769039346e-6,
          -1.10588938762623716291e-4, -9.76109749136146840777e-3,
          7.78576235018280120474e-1)


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


def _at_x0(x, value):
    """``value`` (the limit at x = 0) plus x log x read at x = 0 only: 0 there, with the
    right slope -inf in x that x log(x / y) has at 0 for every y > 0 (a constant gave
    0; JAX gives -1 for kl_div and 0 for rel_entr).  x != 0 reads a safe 1 (a finite
    slope, so the zero cotangent of the branch not taken stays 0)."""
    return value + _xlogx(fnp.where(x == 0, x, x.dtype.type(1)))


@custom_jvp
def _x_log_ratio(x, y):
    return x * (fnp.log(x) - fnp.log(y))


@_x_log_ratio.defjvp
def _x_log_ratio_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return _x_log_ratio(x, y), tx * (fnp.log(x) - fnp.log(y) + 1) - ty * (x / y)


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
    # an infinite x or y: x (log x - log y) with the limits as slopes (log(x/y) + 1 and
    # -x/y; through x/y they were inf * 0 = NaN: rel_entr(0.5, inf) in x, JAX 0.10.2 -inf)
    big = both & (fnp.isinf(x) | fnp.isinf(y))
    fine = both & ~big
    xs, ys = fnp.where(fine, x, t(1)), fnp.where(fine, y, t(1))
    xb, yb = fnp.where(big, x, t(1)), fnp.where(big, y, t(1))
    val = fnp.where(big, _x_log_ratio(xb, yb), xs * fnp.log(xs / ys))
    return fnp.where(both, val, fnp.where((x == 0) & (y >= 0), _at_x0(x, t(0)), t(np.inf)))


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
    return fnp.where(both, val, fnp.where((x == 0) & (y >= 0), _at_x0(x, y), t(np.inf)))


def _chbevl(coefs, x):
    """The Chebyshev series sum' c_k T_k(x / 2) (Cephes' ``chbevl``: ``coefs`` from the
    highest degree down, the constant term halved), by Clenshaw's recurrence."""
    t = x.dtype.type
    b0, b1 = fnp.full_like(x, t(coefs[0])), fnp.zeros_like(x)
    b2 = b1
    for c in coefs[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + t(c)
    return t(0.5) * (b0 - b2)


@in_float64
def _bessel_scaled(ax, nu):
    """exp(-x) I_nu(x) for x >= 0 (or NaN) and nu in {0, 1}: Cephes' Chebyshev series
    (scipy's, JAX's) in x / 2 - 2 on [0, 8] (for I1 of I1(x) / x) and in 32 / x - 2 times
    1 / sqrt(x) beyond; about 1e-15 relative (float32: rounded from float64)."""
    t = ax.dtype.type
    (a, b) = (_I0E_A, _I0E_B) if nu == 0 else (_I1E_A, _I1E_B)
    near = ax <= t(_CHEB_SPLIT)
    xs = fnp.where(near, ax, t(_CHEB_SPLIT))
    small = _chbevl(a, t(0.5) * xs - t(2))
    if nu == 1:
        small = small * xs
    xl = fnp.where(near, t(_CHEB_SPLIT), ax)           # NaN stays: the result is NaN
    large = _chbevl(b, t(32) / xl - t(2)) / fnp.sqrt(xl)
    return fnp.where(near, small, large)


def _i0e_value(x):
    return _bessel_scaled(fnp.abs(x), 0)


def _i1e_value(x):
    value = _bessel_scaled(fnp.abs(x), 1)
    return fnp.where(x < x.dtype.type(0), -value, value)


# each rule takes the other function's value from its body, not from its custom_jvp:
# rules are traced when bound, so two rules calling each other's functions nest (i0e's
# second derivative took 100 s); the body's own derivative serves the higher orders
_i0e = custom_jvp(_i0e_value)
_i1e = custom_jvp(_i1e_value)


@_i0e.defjvp
def _i0e_jvp(primals, tangents):
    (x,), (tx,) = primals, tangents
    y = _i0e(x)
    return y, tx * (_i1e_value(x) - fnp.sign(x) * y)


@_i1e.defjvp
def _i1e_jvp(primals, tangents):
    (x,), (tx,) = primals, tangents
    t = x.dtype.type
    y = _i1e(x)
    # I1'(x) = I0(x) - I1(x)/x, which is 1/2 at x = 0. Near 0, I1(x)/x by its series
    # sum_k (x^2/4)^k / (2 k! (k+1)!) (to k = 5: rounding-exact for |x| < 0.1): the
    # quotient's own derivative cancels there (i1''(1e-300) was 6e284, not 0)
    near = fnp.abs(x) < t(0.1)
    q = fnp.where(near, x, t(0)) ** 2 / t(4)
    series = t(0)
    for k in range(5, -1, -1):
        series = series * q + t(0.5 / math.factorial(k) / math.factorial(k + 1))
    # at x = 0 a constant, as sign(x) y's slope there is 0: the two one-sided errors cancel
    i1_over_x = fnp.where(near, fnp.exp(-fnp.abs(x)) * series, y / fnp.where(near, t(1), x))
    i1_over_x = fnp.where(x == 0, t(0.5), i1_over_x)
    return y, tx * (_i0e_value(x) - i1_over_x - fnp.sign(x) * y)


def _unscaled(scaled):
    """exp(|x|) * scaled(x), rounded once from float64 (as the scaled functions are)."""
    return in_float64(lambda x: fnp.exp(fnp.abs(x)) * scaled(x))


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
    return _unscaled(_i0e)(as_float(x))


def i1(x: ArrayLike) -> Array:
    """The modified Bessel function of the first kind of order 1.

    >>> from functrans.scipy.special import i1
    >>> float(i1(0.0))
    0.0
    """
    return _unscaled(_i1e)(as_float(x))


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
    x = as_float(x)
    # in float64, rounded once: the float32 continued fraction was 80 ulp off (x = 1.98)
    return _exp1(x.astype(np.float64)).astype(x.dtype)
