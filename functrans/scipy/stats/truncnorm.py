"""The truncated normal distribution on [a, b] in standard units
(``jax.scipy.stats.truncnorm``).  Normalizers are differences of normal CDFs taken
in log space on the side of zero where they do not cancel."""
from __future__ import annotations

import math as _math

from ... import numpy as _fnp
from .._special_erf import log_ndtr as _log_ndtr
from ._util import as_float as _as_float, standardize as _standardize
from ._util import domain_ok as _domain_ok, nan_unless as _nan_unless
from ...typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def _log_mass(lo, hi):
    """log(ndtr(hi) - ndtr(lo)) for lo <= hi: mirrored into the left tail when lo > 0."""
    flip = lo > 0
    upper = _fnp.where(flip, -lo, hi)
    lower = _fnp.where(flip, -hi, lo)
    top = _log_ndtr(upper)
    return top + _fnp.log1p(-_fnp.exp(_log_ndtr(lower) - top))


def _prepare(x, a, b, loc, scale):
    z, log_scale = _standardize(x, loc, scale)
    a, b, _ = _as_float(a, b, z)
    # a and b may have more dims than x, loc, scale: all broadcast together
    z, a, b = _fnp.broadcast_arrays(z, a, b)
    # NaN (as scipy) for an empty or reversed [a, b] and outside the scale's domain
    ok = _domain_ok(z, scale, a < b)
    return z, a, b, log_scale, _log_mass(a, b), ok


def logpdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
           scale: ArrayLike = 1.0) -> Array:
    """The normal log density minus the log mass of [a, b]; -inf outside.

    >>> from functrans.scipy.stats import truncnorm
    >>> round(float(truncnorm.logpdf(0.0, -1.0, 1.0)), 12)
    -0.537223386903
    """
    z, a, b, log_scale, log_z, ok = _prepare(x, a, b, loc, scale)
    val = -0.5 * z * z - z.dtype.type(0.5 * _math.log(2 * _math.pi)) - log_scale - log_z
    val = _fnp.where((z >= a) & (z <= b), val, z.dtype.type(-float("inf")))
    return _nan_unless(ok, val)


def pdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
        scale: ArrayLike = 1.0) -> Array:
    """The density.

    >>> from functrans.scipy.stats import truncnorm
    >>> round(float(truncnorm.pdf(0.0, -1.0, 1.0)), 12)
    0.584368567257
    """
    return _fnp.exp(logpdf(x, a, b, loc, scale))


def _log_cdf_sf(x, a, b, loc, scale):
    """(log cdf, log sf), each taken from the other's complement where it is above
    1/2 (where its own form would lose the digits of a value near 0)."""
    z, a, b, _, log_z, ok = _prepare(x, a, b, loc, scale)
    t = z.dtype.type
    zc = _fnp.clip(z, a, b)
    left = _fnp.minimum(_log_mass(a, _fnp.where(zc > a, zc, b)) - log_z, t(0))
    right = _fnp.minimum(_log_mass(_fnp.where(zc < b, zc, a), b) - log_z, t(0))
    half = t(-_math.log(2))
    log_cdf = _fnp.where(left > half, _fnp.log1p(-_fnp.exp(_fnp.minimum(right, half))), left)
    log_sf = _fnp.where(right > half, _fnp.log1p(-_fnp.exp(_fnp.minimum(left, half))), right)
    log_cdf = _fnp.where(z <= a, t(-float("inf")), _fnp.where(z >= b, t(0), log_cdf))
    log_sf = _fnp.where(z >= b, t(-float("inf")), _fnp.where(z <= a, t(0), log_sf))
    return _nan_unless(ok, log_cdf), _nan_unless(ok, log_sf)


def logcdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
           scale: ArrayLike = 1.0) -> Array:
    """log of the mass of [a, min(z, b)] over that of [a, b].

    >>> from functrans.scipy.stats import truncnorm
    >>> round(float(truncnorm.logcdf(0.0, -1.0, 1.0)), 12)
    -0.69314718056
    """
    return _log_cdf_sf(x, a, b, loc, scale)[0]


def logsf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
          scale: ArrayLike = 1.0) -> Array:
    """log of the mass of [max(z, a), b] over that of [a, b].

    >>> from functrans.scipy.stats import truncnorm
    >>> round(float(truncnorm.logsf(0.0, -1.0, 1.0)), 12)
    -0.69314718056
    """
    return _log_cdf_sf(x, a, b, loc, scale)[1]


def cdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
        scale: ArrayLike = 1.0) -> Array:
    """The CDF.

    >>> from functrans.scipy.stats import truncnorm
    >>> round(float(truncnorm.cdf(0.0, -1.0, 1.0)), 12)
    0.5
    """
    return _fnp.exp(logcdf(x, a, b, loc, scale))


def sf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
       scale: ArrayLike = 1.0) -> Array:
    """The survival function.

    >>> from functrans.scipy.stats import truncnorm
    >>> round(float(truncnorm.sf(0.0, -1.0, 1.0)), 12)
    0.5
    """
    return _fnp.exp(logsf(x, a, b, loc, scale))
