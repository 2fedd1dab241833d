"""The normal distribution (``jax.scipy.stats.norm``)."""
from __future__ import annotations

import math as _math

from ... import numpy as _fnp
from ..special import log_ndtr as _log_ndtr, ndtr as _ndtr, ndtri as _ndtri
from ._util import standardize as _standardize, as_float as _as_float
from ...typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """log of the normal density.

    >>> from functrans.scipy.stats import norm
    >>> round(float(norm.logpdf(0.0)), 12)
    -0.918938533205
    """
    z, log_scale = _standardize(x, loc, scale)
    return -0.5 * z * z - z.dtype.type(0.5 * _math.log(2 * _math.pi)) - log_scale


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
    return _ndtr(_standardize(x, loc, scale)[0])


def logcdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """log of the normal CDF (finite far in the left tail).

    >>> from functrans.scipy.stats import norm
    >>> round(float(norm.logcdf(0.0)), 12)
    -0.69314718056
    """
    return _log_ndtr(_standardize(x, loc, scale)[0])


def sf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """1 - cdf, computed without cancellation.

    >>> from functrans.scipy.stats import norm
    >>> float(norm.sf(0.0))
    0.5
    """
    return _ndtr(-_standardize(x, loc, scale)[0])


def logsf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """log(1 - cdf).

    >>> from functrans.scipy.stats import norm
    >>> round(float(norm.logsf(0.0)), 12)
    -0.69314718056
    """
    return _log_ndtr(-_standardize(x, loc, scale)[0])


def ppf(q: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The quantile function, the inverse of cdf.

    >>> from functrans.scipy.stats import norm
    >>> round(float(norm.ppf(0.975)), 10)
    1.9599639845
    """
    q, loc, scale = _as_float(q, loc, scale)
    return loc + scale * _ndtri(q)


def isf(q: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The inverse of sf.

    >>> from functrans.scipy.stats import norm
    >>> round(float(norm.isf(0.025)), 10)
    1.9599639845
    """
    q, loc, scale = _as_float(q, loc, scale)
    return loc - scale * _ndtri(q)
