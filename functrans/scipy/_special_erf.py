"""The error-function family: erfc without cancellation in the tail (W. J. Cody's
rational Chebyshev approximations of exp(z^2) erfc(z), times exp(-z^2) kept in parts),
the normal CDF and its log for every x (the log form never underflows), and its inverse
(Cephes' rational approximations, as scipy's and JAX's).
"""
from __future__ import annotations

import math

import numpy as np

from .. import lax
from .. import numpy as fnp
from ..custom_derivatives import custom_jvp
from ..lax_special import erf_inv
from ._special_gamma import as_float, in_float64
from ._special_wofz import wofz
from ..typing import Array, ArrayLike

__all__ = ["erf", "erfc", "erfcx", "erfinv", "ndtr", "log_ndtr", "ndtri", "horner"]

# W. J. Cody, "Rational Chebyshev approximations for the error function", Math. Comp. 23
# (1969), with the coefficients of his CALERF (netlib specfun), highest power first:
# erf(z) = z A(z^2) / B(z^2) for |z| <= 1/2 - 1/32; exp(z^2) erfc(z) = C(z) / D(z) up to
# z = 4 and (1/sqrt(pi) - s P(s) / Q(s)) / z with s = 1/z^2 beyond (about 18 digits each)
_SPLIT = 0.46875
_MID_TO = 4.0
_ERF_A = (1.85777706184603153e-1, 3.16112374387056560e0, 1.13864154151050156e2,
          3.77485237685302021e2, 3.20937758913846947e3)
_ERF_B = (1.0, 2.36012909523441209e1, 2.44024637934444173e2, 1.28261652607737228e3,
          2.84423683343917062e3)
_ERFCX_C = (2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e0,
            6.61191906371416295e1, 2.98635138197400131e2, 8.81952221241769090e2,
            1.71204761263407058e3, 2.05107837782607147e3, 1.23033935479799725e3)
_ERFCX_D = (1.0, 1.57449261107098347e1, 1.17693950891312499e2, 5.37181101862009858e2,
            1.62138957456669019e3, 3.29079923573345963e3, 4.36261909014324716e3,
            3.43936767414372164e3, 1.23033935480374942e3)
_ERFCX_P = (1.63153871373020978e-2, 3.05326634961232344e-1, 3.60344899949804439e-1,
            1.25781726111229246e-1, 1.60837851487422766e-2, 6.58749161529837803e-4)
_ERFCX_Q = (1.0, 2.56852019228982242e0, 1.87295284992346047e0, 5.27905102951428412e-1,
            6.05183413124413191e-2, 2.33520497626869185e-3)
# beyond this u, u * 16 may overflow; there u is an integer and its own 1/16 grid point
_GRID_BELOW = 2.0 ** 100


def horner(coefs, x):
    """The polynomial with ``coefs`` (highest power first) at ``x``."""
    t = x.dtype.type
    acc = x + t(coefs[1]) if coefs[0] == 1 else fnp.full_like(x, t(coefs[0])) * x + t(coefs[1])
    for c in coefs[2:]:
        acc = acc * x + t(c)
    return acc


def _one_minus_erf(z):
    """1 - erf(z) for |z| < _SPLIT (at most 1/2: no cancellation)."""
    zz = z * z
    return z.dtype.type(1) - z * (horner(_ERF_A, zz) / horner(_ERF_B, zz))


def _erfcx_pos(z):
    """exp(z^2) erfc(z) for z >= _SPLIT (0 at z = inf)."""
    t = z.dtype.type
    m = fnp.minimum(z, t(_MID_TO))
    mid = horner(_ERFCX_C, m) / horner(_ERFCX_D, m)
    b, sr = _erfcx_far_terms(z)
    far = (t(1 / math.sqrt(math.pi)) - sr) / b
    return fnp.where(z <= t(_MID_TO), mid, far)


def _erfcx_far_terms(z):
    """(b, s R(s)) with b = max(z, _MID_TO), s = 1/b^2: erfcx(b) = (1/sqrt(pi) - s R) / b."""
    t = z.dtype.type
    b = fnp.maximum(z, t(_MID_TO))
    s = t(1) / (b * b)                  # 0 once b * b overflows: erfcx = 1 / (sqrt(pi) z)
    return b, s * (horner(_ERFCX_P, s) / horner(_ERFCX_Q, s))


def _erfc_tail_parts(u, c2):
    """erfc(z) for z = u sqrt(c2) >= _SPLIT (c2 is 1 or 1/2, so ndtr needs no rounded
    x / sqrt(2)), as exp(-c2 hi^2) * exp(rest) * erfcx(z): kept as three parts, their
    product or the log of it never adds rounding errors into a large exponent."""
    t = u.dtype.type
    factor = _erfcx_pos(u * t(math.sqrt(c2)))
    # u^2 rounds with an error of u^2 * eps, which exp would amplify to a relative
    # error of u^2 * eps: split u = hi + lo with hi on a 1/16 grid so hi^2 is exact
    gridded = u < t(_GRID_BELOW)
    hi = fnp.where(gridded, fnp.floor(u * t(16)) / t(16), u)
    rest = fnp.where(gridded, -t(c2) * ((u - hi) * (u + hi)), t(0))
    return -t(c2) * (hi * hi), rest, factor


def _erfc_abs_parts(a, c2):
    """erfc(a sqrt(c2)) for a >= 0, inf or NaN, in the form each caller needs:
    (near, 1 - erf near 0, and the tail's three parts), ``near`` where a sqrt(c2) <
    _SPLIT or NaN (the tail's parts are then those at a harmless a = 1)."""
    t = a.dtype.type
    z = a * t(math.sqrt(c2))
    near = ~(z >= t(_SPLIT))
    near_value = _one_minus_erf(fnp.where(near, z, t(0)))
    return (near, near_value) + _erfc_tail_parts(fnp.where(near, t(1), a), c2)


@in_float64
def _erfc_value(u, c2):
    """erfc(u sqrt(c2))."""
    t = u.dtype.type
    near, near_value, big, rest, factor = _erfc_abs_parts(fnp.abs(u), c2)
    value = fnp.where(near, near_value, fnp.exp(big) * (fnp.exp(rest) * factor))
    return fnp.where(u < t(0), t(2) - value, value)


@custom_jvp
def _erfc(z):
    return _erfc_value(z, 1.0)


@_erfc.defjvp
def _erfc_jvp(primals, tangents):
    (z,), (tz,) = primals, tangents
    t = z.dtype.type
    return _erfc(z), tz * (t(-2 / math.sqrt(math.pi)) * fnp.exp(-z * z))


def erf(x: ArrayLike) -> Array:
    """The error function (the ``erf`` primitive).

    >>> from functrans.scipy.special import erf
    >>> round(float(erf(0.5)), 12)
    0.520499877813
    """
    return lax.erf(as_float(x))


def erfc(x: ArrayLike) -> Array:
    """1 - erf(x), accurate in the right tail (a rational erfcx times exp(-x^2) beyond
    |x| = 0.46875).

    >>> from functrans.scipy.special import erfc
    >>> float(erfc(10.0)) > 0
    True
    """
    return _erfc(as_float(x))


def erfinv(x: ArrayLike) -> Array:
    """The inverse error function (``lax.erf_inv``).

    >>> from functrans.scipy.special import erfinv
    >>> round(float(erfinv(0.5)), 12)
    0.476936276204
    """
    return erf_inv(as_float(x))


def _normal_pdf(x):
    t = x.dtype.type
    return t(1 / math.sqrt(2 * math.pi)) * fnp.exp(-t(0.5) * x * x)


@custom_jvp
def _ndtr(x):
    return x.dtype.type(0.5) * _erfc_value(-x, 0.5)


@_ndtr.defjvp
def _ndtr_jvp(primals, tangents):
    (x,), (tx,) = primals, tangents
    return _ndtr(x), tx * _normal_pdf(x)


def ndtr(x: ArrayLike) -> Array:
    """The standard normal CDF, (1/2) erfc(-x / sqrt(2)), accurate in the left tail.

    >>> from functrans.scipy.special import ndtr
    >>> float(ndtr(0.0))
    0.5
    """
    return _ndtr(as_float(x))


@in_float64
def _log_ndtr_value(x):
    t = x.dtype.type
    # c = ndtr(-|x|) = erfc(|x| / sqrt(2)) / 2, and its log from the parts (no underflow)
    near, near_value, big, rest, factor = _erfc_abs_parts(fnp.abs(x), 0.5)
    half = t(0.5)
    log_c = fnp.where(near, fnp.log(half * near_value),
                      big + (rest + fnp.log(factor)) - t(math.log(2)))
    c = half * fnp.where(near, near_value, fnp.exp(big) * (fnp.exp(rest) * factor))
    # for x > 0, log(1 - c) with c < 1/2: log1p keeps every digit
    return fnp.where(x > t(0), fnp.log1p(-c), log_c)


@custom_jvp
def _log_ndtr(x):
    return _log_ndtr_value(x)


@_log_ndtr.defjvp
def _log_ndtr_jvp(primals, tangents):
    (x,), (tx,) = primals, tangents
    y = _log_ndtr(x)
    t = x.dtype.type
    # d/dx log ndtr = pdf / ndtr = exp(-x^2/2 - log sqrt(2 pi) - log_ndtr), ~ -x as x ->
    # -inf: +inf there (the exponent was -inf + inf = NaN; JAX 0.10.2 NaN too)
    d = fnp.exp(-t(0.5) * x * x - t(0.5 * math.log(2 * math.pi)) - y)
    return y, tx * fnp.where(x == t(-np.inf), t(np.inf), d)


def log_ndtr(x: ArrayLike) -> Array:
    """log of the standard normal CDF, finite for every finite x (no underflow).

    >>> from functrans.scipy.special import log_ndtr
    >>> round(float(log_ndtr(-40.0)), 6)
    -804.608442
    """
    return _log_ndtr(as_float(x))


# Cephes ndtri's rational approximations (scipy's and JAX's), highest power first
_NDTRI_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1,
             -5.66762857469070293439E1, 1.39312609387279679503E1, -1.23916583867381258016E0)
_NDTRI_Q0 = (1.0, 1.95448858338141759834E0, 4.67627912898881538453E0,
             8.63602421390890590575E1, -2.25462687854119370527E2, 2.00260212380060660359E2,
             -8.20372256168333339912E1, 1.59056225126211695515E1, -1.18331621121330003142E0)
_NDTRI_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2,
             -8.57456785154685413611E-4)
_NDTRI_Q1 = (1.0, 1.57799883256466749731E1, 4.53907635128879210584E1,
             4.13172038254672030440E1, 1.50425385692907503408E1, 2.50464946208309415979E0,
             -1.42182922854787788574E-1, -3.80806407691578277194E-2,
             -9.33259480895457427372E-4)
_NDTRI_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1,
             1.23716634817820021358E-2, 3.01581553508235416007E-4,
             2.65806974686737550832E-6, 6.23974539184983293730E-9)
_NDTRI_Q2 = (1.0, 6.02427039364742014255E0, 3.67983563856160859403E0,
             1.37702099489081330271E0, 2.16236993594496635890E-1,
             1.34204006088543189037E-2, 3.28014464682127739104E-4,
             2.89247864745380683936E-6, 6.79019408009981274425E-9)


def _ndtri_value(p):
    """Cephes' ndtri (scipy's, JAX's): one rational function per range of p, about
    1e-16 relative (four Newton steps on log_ndtr cost 70x JAX's time under jit)."""
    t = p.dtype.type
    upper = p > t(1 - math.exp(-2))
    mcp = fnp.where(upper, t(1) - p, p)
    mcp = fnp.where((mcp > 0) & (mcp < t(1)), mcp, t(0.5))
    w = mcp - t(0.5)
    ww = w * w
    big = w + w * ww * (horner(_NDTRI_P0, ww) / horner(_NDTRI_Q0, ww))
    big = big * -t(math.sqrt(2 * math.pi))
    z = fnp.sqrt(-t(2) * fnp.log(mcp))
    iz = t(1) / z
    first = z - fnp.log(z) / z
    small = first - horner(_NDTRI_P2, iz) / horner(_NDTRI_Q2, iz) / z
    other = first - horner(_NDTRI_P1, iz) / horner(_NDTRI_Q1, iz) / z
    x = fnp.where(mcp > t(math.exp(-2)), big, fnp.where(z >= t(8), small, other))
    x = fnp.where(upper, x, -x)
    x = fnp.where(p == 0, t(-np.inf), fnp.where(p == 1, t(np.inf), x))
    return fnp.where((p < 0) | (p > 1) | fnp.isnan(p), t(np.nan), x)


@custom_jvp
def _ndtri(p):
    return _ndtri_value(p)


@_ndtri.defjvp
def _ndtri_jvp(primals, tangents):
    (p,), (tp,) = primals, tangents
    x = _ndtri(p)
    t = p.dtype.type
    return x, tp * (t(math.sqrt(2 * math.pi)) * fnp.exp(t(0.5) * x * x))


def ndtri(p: ArrayLike) -> Array:
    """The inverse of ndtr: ndtr(ndtri(p)) == p on [0, 1] (+-inf at the ends, NaN
    outside), accurate in both tails.

    >>> from functrans.scipy.special import ndtri
    >>> round(float(ndtri(0.975)), 10)
    1.9599639845
    """
    return _ndtri(as_float(p))


@in_float64
def _erfcx_value(x):
    t = x.dtype.type
    ax = fnp.abs(x)
    near = ~(ax >= t(_SPLIT))            # NaN too
    xn = fnp.where(near, x, t(0))
    near_value = fnp.exp(xn * xn) * _one_minus_erf(xn)
    pos = _erfcx_pos(fnp.where(near, t(1), ax))
    # x < 0: 2 exp(x^2) - erfcx(-x), exp(x^2) in the parts of _erfc_tail_parts (it
    # overflows beyond x = -26.7 in float64: past 27 only the clamp's inf is seen)
    an = fnp.where(near, t(1), fnp.minimum(ax, t(27)))
    hi = fnp.floor(an * t(16)) / t(16)
    neg = t(2) * (fnp.exp(hi * hi) * fnp.exp((an - hi) * (an + hi))) - pos
    return fnp.where(near, near_value, fnp.where(x > t(0), pos, neg))


@custom_jvp
def _erfcx(x):
    return _erfcx_value(x)


@in_float64
def _erfcx_slope(x):
    """2x erfcx(x) - 2/sqrt(pi); from _MID_TO on it is -2 s R(s) of the far form (no
    cancellation: in float32 the difference was 0 or noise ~1e-7 from x ~ 1e3 on; the
    slope is about -1/(sqrt(pi) x^2), 0 at inf); below, in float64."""
    t = x.dtype.type
    _, sr = _erfcx_far_terms(x)
    near = t(2) * x * _erfcx(x) - t(2 / math.sqrt(math.pi))   # _erfcx: its rule again
    return fnp.where(x > t(_MID_TO), t(-2) * sr, near)


@_erfcx.defjvp
def _erfcx_jvp(primals, tangents):
    (x,), (tx,) = primals, tangents
    return _erfcx(x), tx * _erfcx_slope(x)


def erfcx(x: ArrayLike) -> Array:
    """The scaled complementary error function exp(x^2) erfc(x), finite for large x.

    >>> from functrans.scipy.special import erfcx
    >>> round(float(erfcx(0.0)), 12)
    1.0

    Complex ``x`` (as ``jax.scipy.special.erfcx`` and scipy) is the Faddeeva function at
    ``i x``: ``exp(x^2) erfc(x) = w(i x)``.
    """
    x = fnp.asarray(x)
    if x.dtype.kind == "c":
        return wofz(x * x.dtype.type(1j))
    return _erfcx(as_float(x))
