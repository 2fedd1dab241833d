"""The normal distribution (``jax.scipy.stats.norm``)."""
from __future__ import annotations

import math as _math

from ... import numpy as _fnp
from ..special import log_ndtr as _log_ndtr, ndtr as _ndtr, ndtri as _ndtri
from ._util import standardize as _standardize, as_float as _as_float
from ._util import domain_ok as _domain_ok, nan_unless as _nan_unless
from ...typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """log of the normal density.

    >>> from functrans.scipy.stats import norm
    >>> round(float(norm.logpdf(0.0)), 12)
    -0.918938533205
    """
    z, log_scale = _standardize(x, loc, scale)
    val = -0.5 * z * z - z.dtype.type(0.5 * _math.log(2 * _math.pi)) - log_scale
    return _nan_unless(_domain_ok(z, scale), val)


def pdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The normal density.

    >>> from functrans.scipy.stats import norm
    >>> round(float(norm.pdf(0.0)), 12)
    0.398942280401
    """
    return _fnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The normal CDF.

    >>> from functrans.scipy.stats import norm
    >>> float(norm.cdf(0.0))
    0.5
    """
    z = _standardize(x, loc, scale)[0]
    return _nan_unless(_domain_ok(z, scale), _ndtr(z))


def logcdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """log of the normal CDF (finite far in the left tail).

    >>> from functrans.scipy.stats import norm
    >>> round(float(norm.logcdf(0.0)), 12)
    -0.69314718056
    """
    z = _standardize(x, loc, scale)[0]
    return _nan_unless(_domain_ok(z, scale), _log_ndtr(z))


def sf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """1 - cdf, computed without cancellation.

    >>> from functrans.scipy.stats import norm
    >>> float(norm.sf(0.0))
    0.5
    """
    z = _standardize(x, loc, scale)[0]
    return _nan_unless(_domain_ok(z, scale), _ndtr(-z))


def logsf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """log(1 - cdf).

    >>> from functrans.scipy.stats import norm
    >>> round(float(norm.logsf(0.0)), 12)
    -0.69314718056
    """
    z = _standardize(x, loc, scale)[0]
    return _nan_unless(_domain_ok(z, scale), _log_ndtr(-z))


def ppf(q: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The quantile function, the inverse of cdf.

    >>> from functrans.scipy.stats import norm
    >>> round(float(norm.ppf(0.975)), 10)
    1.9599639845
    """
    q, loc, scale = _as_float(q, loc, scale)
    return _nan_unless(scale > 0, loc + scale * _ndtri(q))


def isf(q: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The inverse of sf.

    >>> from functrans.scipy.stats import norm
    >>> round(float(norm.isf(0.025)), 10)
    1.9599639845
    """
    q, loc, scale = _as_float(q, loc, scale)
    return _nan_unless(scale > 0, loc - scale * _ndtri(q))
