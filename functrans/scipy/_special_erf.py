"""The error-function family: erfc without cancellation in the tail (the continued
fraction of Q(1/2, z^2) beyond z = 1.25, where 1 - erf(z) would lose digits), the
normal CDF and its log for every x (the log form never underflows), and its inverse
(Cephes' rational approximations, as scipy's and JAX's).
"""
from __future__ import annotations

import math

import numpy as np

from .. import lax
from .. import numpy as fnp
from ..custom_derivatives import custom_jvp
from ..lax_special import erf_inv
from ._special_gamma import as_float
from ._special_wofz import wofz
from ..typing import Array, ArrayLike

__all__ = ["erf", "erfc", "erfcx", "erfinv", "ndtr", "log_ndtr", "ndtri"]

_CF_TERMS = 60
_SPLIT = 1.25


def _erfc_tail_parts(u, c2):
    """erfc(z) for z = u sqrt(c2) >= 1.25 (c2 is 1 or 1/2, so ndtr needs no rounded
    x / sqrt(2)), as exp(-c2 hi^2) * exp(rest) * factor: factor = z / sqrt(pi) *
    (the continued fraction of Q(1/2, z^2), run backwards over a fixed number of
    terms).  Kept as three parts: their product, or the log of it, never adds
    rounding errors into a large exponent."""
    t = u.dtype.type
    z = u * t(math.sqrt(c2))
    x = z * z
    # Q(a, x) x^-a e^x Gamma(a) = 1 / (x + 1 - a - 1(1-a) / (x + 3 - a - 2(2-a) / ...))
    def backward_step(k, tail):
        i = fnp.asarray(_CF_TERMS - k, x.dtype)
        return -i * (i - t(0.5)) / (x + t(2) * i + t(0.5) + tail)

    tail = lax.fori_loop(0, _CF_TERMS, backward_step, fnp.zeros_like(x))
    frac = t(1) / (x + t(0.5) + tail)
    # u^2 rounds with an error of u^2 * eps, which exp would amplify to a relative
    # error of u^2 * eps: split u = hi + lo with hi on a 1/16 grid so hi^2 is exact
    hi = fnp.floor(u * t(16)) / t(16)
    return (-t(c2) * (hi * hi), -t(c2) * ((u - hi) * (u + hi)),
            z * frac * t(1 / math.sqrt(math.pi)))


def _log_erfc_tail(u, c2):
    big, rest, factor = _erfc_tail_parts(u, c2)
    return big + (rest + fnp.log(factor))


def _erfc_value(u, c2):
    """erfc(u sqrt(c2))."""
    t = u.dtype.type
    big = fnp.abs(u) >= t(_SPLIT / math.sqrt(c2))
    au = fnp.where(big & fnp.isfinite(u), fnp.abs(u), t(2))
    big_part, rest, factor = _erfc_tail_parts(au, c2)
    tail = fnp.exp(big_part) * (fnp.exp(rest) * factor)
    tail = fnp.where(fnp.isinf(u), t(0), tail)
    mid = t(1) - lax.erf(u * t(math.sqrt(c2)))
    return fnp.where(big, fnp.where(u > 0, tail, t(2) - tail), mid)


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
    """1 - erf(x), accurate in the right tail (continued fraction beyond |x| = 1.25).

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


@custom_jvp
def _log_ndtr(x):
    t = x.dtype.type
    u = -x
    left = u >= t(_SPLIT * math.sqrt(2))
    log_tail = _log_erfc_tail(fnp.where(left & fnp.isfinite(u), u, t(2)), 0.5) - t(math.log(2))
    log_tail = fnp.where(fnp.isinf(u), t(-np.inf), log_tail)
    upper = x > t(0)
    # for x > 0, ndtr(-x) < 1/2: log1p keeps every digit of log(1 - ndtr(-x))
    right = fnp.log1p(-t(0.5) * _erfc_value(x, 0.5))
    mid = fnp.log(t(0.5) * _erfc_value(u, 0.5))
    return fnp.where(left, log_tail, fnp.where(upper, right, mid))


@_log_ndtr.defjvp
def _log_ndtr_jvp(primals, tangents):
    (x,), (tx,) = primals, tangents
    y = _log_ndtr(x)
    t = x.dtype.type
    # d/dx log ndtr = pdf / ndtr = exp(-x^2/2 - log sqrt(2 pi) - log_ndtr)
    return y, tx * fnp.exp(-t(0.5) * x * x - t(0.5 * math.log(2 * math.pi)) - y)


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


def _horner(coefs, x):
    t = x.dtype.type
    acc = fnp.full_like(x, t(coefs[0]))
    for c in coefs[1:]:
        acc = acc * x + t(c)
    return acc


def _ndtri_value(p):
    """Cephes' ndtri (scipy's, JAX's): one rational function per range of p, about
    1e-16 relative (four Newton steps on log_ndtr cost 70x JAX's time under jit)."""
    t = p.dtype.type
    upper = p > t(1 - math.exp(-2))
    mcp = fnp.where(upper, t(1) - p, p)
    mcp = fnp.where((mcp > 0) & (mcp < t(1)), mcp, t(0.5))
    w = mcp - t(0.5)
    ww = w * w
    big = w + w * ww * (_horner(_NDTRI_P0, ww) / _horner(_NDTRI_Q0, ww))
    big = big * -t(math.sqrt(2 * math.pi))
    z = fnp.sqrt(-t(2) * fnp.log(mcp))
    iz = t(1) / z
    first = z - fnp.log(z) / z
    small = first - _horner(_NDTRI_P2, iz) / _horner(_NDTRI_Q2, iz) / z
    other = first - _horner(_NDTRI_P1, iz) / _horner(_NDTRI_Q1, iz) / z
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


@custom_jvp
def _erfcx(x):
    t = x.dtype.type
    big = x >= t(_SPLIT)
    # erfc(x) = exp(-x^2) * factor in the tail: erfcx is the factor itself
    _, _, factor = _erfc_tail_parts(fnp.where(big & fnp.isfinite(x), x, t(2)), 1.0)
    factor = fnp.where(fnp.isinf(x), t(0), factor)
    small = fnp.exp(x * x) * _erfc_value(fnp.where(big, t(0), x), 1.0)
    return fnp.where(big, factor, small)


@_erfcx.defjvp
def _erfcx_jvp(primals, tangents):
    (x,), (tx,) = primals, tangents
    y = _erfcx(x)
    t = x.dtype.type
    return y, tx * (t(2) * x * y - t(2 / math.sqrt(math.pi)))


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
