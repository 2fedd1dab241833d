"""More special functions of ``jax.scipy.special``, composed from functrans
operations with ``custom_jvp`` derivatives: the real log-gamma, the Box-Cox
transforms, Dawson's integral, the exponential integral Ei and Spence's function
(the dilogarithm).  Each is a fixed number of series terms per region, so it fuses
under ``jit`` and batches like any elementwise chain.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .. import numpy as fnp
from ..custom_derivatives import custom_jvp
from ..typing import Array, ArrayLike
from ._special_cgamma import complex_loggamma
from ._special_erf import horner
from ._special_gamma import as_float, gammaln, in_float64
from ._special_misc import exp1

__all__ = ["loggamma", "boxcox", "boxcox1p", "dawsn", "expi", "spence"]

_EULER_GAMMA = 0.57721566490153286061


def _real_float(name, *xs):
    """The arguments as arrays of one real float dtype (a tuple, also for one)."""
    arrs = [fnp.asarray(x) for x in xs]
    for a in arrs:
        if np.issubdtype(a.dtype, np.complexfloating):
            raise TypeError(f"{name}: complex input (dtype {a.dtype}) is not supported; "
                            "only real arguments are implemented")
    out = as_float(*arrs)
    return (out,) if len(arrs) == 1 else tuple(fnp.broadcast_arrays(*out))


def loggamma(x: ArrayLike) -> Array:
    """The principal branch of log Gamma(x) for real x: ``gammaln(x)`` for x > 0,
    +inf at x = 0 (the pole) and NaN for x < 0, as ``scipy.special.loggamma`` on
    real input (``jax.scipy.special.loggamma`` gives NaN at 0).  Complex input: the
    principal branch, continuous off the negative real axis, as scipy's.

    >>> from functrans.scipy.special import loggamma
    >>> round(float(loggamma(5.0)), 12), float(loggamma(-1.5))
    (3.178053830348, nan)
    """
    x = fnp.asarray(x)
    if x.dtype.kind == "c":
        return complex_loggamma(x)
    (x,) = _real_float("loggamma", x)
    val = fnp.where(x > 0, gammaln(fnp.where(x > 0, x, 1.0)), x.dtype.type(np.nan))
    return fnp.where(x == 0, x.dtype.type(np.inf), val)


def _boxcox_of_log(log_x, lmbda):
    # (x^l - 1) / l = expm1(l log x) / l, which tends to log x as l -> 0
    zero = lmbda == 0
    safe = fnp.where(zero, lmbda.dtype.type(1), lmbda)
    return fnp.where(zero, log_x, fnp.expm1(safe * log_x) / safe)


def boxcox(x: ArrayLike, lmbda: ArrayLike) -> Array:
    """The Box-Cox transform (x^lmbda - 1) / lmbda, log(x) at lmbda = 0 (NaN for
    x < 0), as ``scipy.special.boxcox``.

    >>> from functrans.scipy.special import boxcox
    >>> float(boxcox(4.0, 0.5)), round(float(boxcox(4.0, 0.0)), 12)
    (2.0, 1.38629436112)
    """
    x, lmbda = _real_float("boxcox", x, lmbda)
    return _boxcox_of_log(fnp.log(x), lmbda)


def boxcox1p(x: ArrayLike, lmbda: ArrayLike) -> Array:
    """The Box-Cox transform of 1 + x, ((1 + x)^lmbda - 1) / lmbda, accurate for
    small x (NaN for x < -1), as ``scipy.special.boxcox1p``.

    >>> from functrans.scipy.special import boxcox1p
    >>> float(boxcox1p(3.0, 0.5)), round(float(boxcox1p(1e-20, 2.0)), 30)
    (2.0, 1e-20)
    """
    x, lmbda = _real_float("boxcox1p", x, lmbda)
    return _boxcox_of_log(fnp.log1p(x), lmbda)


# Dawson's integral D(x) = exp(-x^2) int_0^x exp(t^2) dt: the rational approximations of
# Cody, Paciorek and Thacher (Math. Comp. 24, 1970), as Cephes' (scipy's, JAX's), highest
# power first: x A(x^2) / B(x^2) below 3.25, (1 + s C(s) / D(s)) / (2x) with s = 1/x^2 up
# to 6.25 and (1 + s E(s) / F(s)) / (2x) beyond
_DAWSN_A = (1.13681498971755972054e-11, 8.49262267667473811108e-10,
            1.94434204175553054283e-8, 9.53151741254484363489e-7,
            3.07828309874913200438e-6, 3.52513368520288738649e-4,
            -8.50149846724410912031e-4, 4.22618223005546594270e-2,
            -9.17480371773452345351e-2, 9.99999999999999994612e-1)
_DAWSN_B = (2.40372073066762605484e-11, 1.48864681368493396752e-9,
            5.21265281010541664570e-8, 1.27258478273186970203e-6,
            2.32490249820789513991e-5, 3.25524741826057911661e-4,
            3.48805814657162590916e-3, 2.79448531198828973716e-2,
            1.58874241960120565368e-1, 5.74918629489320327824e-1,
            1.00000000000000000539e0)
_DAWSN_C = (5.08955156417900903354e-1, -2.44754418142697847934e-1,
            9.41512335303534411857e-2, -2.18711255142039025206e-2,
            3.66207612329569181322e-3, -4.23209114460388756528e-4,
            3.59641304793896631888e-5, -2.14640351719968974225e-6,
            9.10010780076391431042e-8, -2.40274520828250956942e-9,
            3.59233385440928410398e-11)
_DAWSN_D = (1.0, -6.31839869873368190192e-1, 2.36706788228248691528e-1,
            -5.31806367003223277662e-2, 8.48041718586295374409e-3,
            -9.47996768486665330168e-4, 7.81025592944552338085e-5,
            -4.55875153252442634831e-6, 1.89100358111421846170e-7,
            -4.91324691331920606875e-9, 7.18466403235734541950e-11)
_DAWSN_E = (-5.90592860534773254987e-1, 6.29235242724368800674e-1,
            -1.72858975380388136411e-1, 1.64837047825189632310e-2,
            -4.86827613020462700845e-4)
_DAWSN_F = (1.0, -2.69820057197544900361e0, 1.73270799045947845857e0,
            -3.93708582281939493482e-1, 3.44278924041233391079e-2,
            -9.73655226040941223894e-4)
_DAWSN_NEAR, _DAWSN_MID = 3.25, 6.25


def _dawsn_tail(x, near):
    """R(s), s = 1/x^2, with dawsn(x) = (1 + R(s)) / (2x) for |x| >= _DAWSN_NEAR
    (``near``: the other entries, their R is junk)."""
    t = x.dtype.type
    af = fnp.where(near, t(_DAWSN_NEAR), fnp.abs(x))    # inf: s = 0, the value 0
    s = t(1) / (af * af)                                 # 0 once af * af overflows
    mid = s * (horner(_DAWSN_C, s) / horner(_DAWSN_D, s))
    far = s * (horner(_DAWSN_E, s) / horner(_DAWSN_F, s))
    return af, fnp.where(af < t(_DAWSN_MID), mid, far)


def _dawsn_near(x, near):
    xn = fnp.where(near, x, x.dtype.type(1))
    xx = xn * xn
    return xn * (horner(_DAWSN_A, xx) / horner(_DAWSN_B, xx))    # odd: keeps -0


@in_float64
def _dawsn_value(x):
    t = x.dtype.type
    near = ~(fnp.abs(x) >= t(_DAWSN_NEAR))              # NaN too
    af, r = _dawsn_tail(x, near)
    big = (t(1) + r) / (t(2) * af)
    return fnp.where(near, _dawsn_near(x, near), fnp.where(x < t(0), -big, big))


@in_float64
def _dawsn_slope(x):
    """1 - 2 x dawsn(x); for |x| >= _DAWSN_NEAR that is -R(s) (no cancellation, and no
    overflow of 2 x: 1 - 2x dawsn(x) was -inf at 3e38 in float32, NaN at inf; the
    slope there is about -1/(2x^2), 0 in the limit)."""
    t = x.dtype.type
    near = ~(fnp.abs(x) >= t(_DAWSN_NEAR))
    _, r = _dawsn_tail(x, near)
    return fnp.where(near, t(1) - t(2) * x * _dawsn_near(x, near), -r)


@custom_jvp
def _dawsn(x):
    return _dawsn_value(x)


@_dawsn.defjvp
def _dawsn_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _dawsn(x), t * _dawsn_slope(x)


def dawsn(x: ArrayLike) -> Array:
    """Dawson's integral exp(-x^2) int_0^x exp(t^2) dt (odd; about 1/(2x) for large
    x), as ``scipy.special.dawsn``; derivative 1 - 2 x dawsn(x).

    >>> from functrans.scipy.special import dawsn
    >>> round(float(dawsn(1.0)), 12)
    0.538079506913
    """
    (x,) = _real_float("dawsn", x)
    return _dawsn(x)


_EXPI_SERIES = 160
_EXPI_ASYM_FROM = 40.0
_EXPI_ASYM_TERMS = 40


def _expi_series(x):
    # Ei(x) = gamma + log x + sum_k x^k / (k k!), all terms positive for x > 0
    term = fnp.ones_like(x)
    acc = fnp.zeros_like(x)
    for k in range(1, _EXPI_SERIES):
        term = term * x / k
        acc = acc + term / k
    return _EULER_GAMMA + fnp.log(x) + acc


def _expi_asymptotic(x):
    # Ei(x) ~ e^x / x sum_k k! / x^k (its smallest term near k = x is below eps here)
    inv = 1.0 / x
    acc = fnp.ones_like(x)
    for k in reversed(range(1, _EXPI_ASYM_TERMS)):
        acc = 1.0 + k * inv * acc
    return fnp.exp(x) * inv * acc


@custom_jvp
def _expi(x):
    pos = x > 0
    series = _expi_series(fnp.where(pos & (x < _EXPI_ASYM_FROM), x, 1.0))
    asym = _expi_asymptotic(fnp.where(x >= _EXPI_ASYM_FROM, x, 50.0))
    neg = -exp1(fnp.where(x < 0, -x, 1.0))
    val = fnp.where(x >= _EXPI_ASYM_FROM, asym, fnp.where(pos, series, neg))
    val = fnp.where(x == 0, x.dtype.type(-np.inf), val)
    return fnp.where(fnp.isnan(x) | fnp.isposinf(x), x, val)


@_expi.defjvp
def _expi_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _expi(x), t * fnp.exp(x) / x


def expi(x: ArrayLike) -> Array:
    """The exponential integral Ei(x) = -PV int_{-x}^inf e^(-t) / t dt (-E1(-x) for
    x < 0, -inf at 0), as ``scipy.special.expi``; derivative e^x / x.  Near its
    zero x = 0.3725 the error is absolute (about 1e-16), not relative.

    >>> from functrans.scipy.special import expi
    >>> round(float(expi(1.0)), 12), round(float(expi(-1.0)), 12)
    (1.895117816356, -0.219383934396)
    """
    (x,) = _real_float("expi", x)
    # in float64, rounded once: float32's was 43 ulp off (x = -1.37)
    return _expi(x.astype(np.float64)).astype(x.dtype)


def _bernoulli_numbers(count):
    """B_0 .. B_{count-1} (B_1 = -1/2), exact, by the usual recurrence."""
    b = [Fraction(1)]
    for m in range(1, count):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return b


# Li2(z) = sum_n B_n u^(n+1) / (n+1)! with u = -log(1 - z): for |u| <= log 2 the terms
# fall like (u / 2 pi)^n, so 24 of them reach eps
_LI2_COEFFS = [float(bn / math.factorial(n + 1)) for n, bn in enumerate(_bernoulli_numbers(24))]


def _li2_of_u(u):
    acc = fnp.zeros_like(u)
    for c in reversed(_LI2_COEFFS):
        acc = acc * u + c
    return acc * u


@custom_jvp
def _spence(x):
    # spence(x) = Li2(1 - x); each region maps to |u| <= log 2
    pi2_6 = math.pi ** 2 / 6
    low = fnp.where((x > 0) & (x < 0.5), x, 0.25)       # reflection z -> 1 - z
    mid = fnp.where((x >= 0.5) & (x <= 2.0), x, 1.0)     # direct, u = -log x
    high = fnp.where(x > 2.0, x, 4.0)                    # inversion z -> 1 / z
    v_low = pi2_6 - fnp.log(low) * fnp.log1p(-low) - _li2_of_u(-fnp.log1p(-low))
    v_mid = _li2_of_u(0.0 - fnp.log(mid))     # 0 - : +0 (not -0) at x = 1
    log_neg_z = fnp.log(high - 1.0)
    v_high = -pi2_6 - 0.5 * log_neg_z ** 2 - _li2_of_u(fnp.log1p(-1.0 / high))
    val = fnp.where(x < 0.5, v_low, fnp.where(x <= 2.0, v_mid, v_high))
    val = fnp.where(x == 0, x.dtype.type(pi2_6), val)
    # scipy's value at +inf (the limit is -inf) and below the domain
    return fnp.where((x < 0) | fnp.isnan(x) | fnp.isposinf(x), x.dtype.type(np.nan), val)


@_spence.defjvp
def _spence_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    one = x == 1
    slope = fnp.where(one, x.dtype.type(-1), fnp.log(x) / (1.0 - fnp.where(one, 2.0, x)))
    return _spence(x), t * slope


def spence(x: ArrayLike) -> Array:
    """Spence's function int_1^x log(t) / (1 - t) dt = Li2(1 - x) for x >= 0 (NaN
    below and at +inf), as ``scipy.special.spence``; derivative log(x) / (1 - x).

    >>> from functrans.scipy.special import spence
    >>> round(float(spence(0.0)), 12), float(spence(1.0))
    (1.644934066848, 0.0)
    """
    (x,) = _real_float("spence", x)
    return _spence(x)
