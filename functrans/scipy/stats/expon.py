"""The exponential distribution (``jax.scipy.stats.expon``)."""
from __future__ import annotations

from ... import numpy as _fnp
from ._util import as_float as _as_float, outside as _outside, standardize as _standardize
from ._util import domain_ok as _domain_ok, nan_unless as _nan_unless
from ...typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """log density: -z - log(scale) for z >= 0, -inf below.

    >>> from functrans.scipy.stats import expon
    >>> float(expon.logpdf(1.0))
    -1.0
    """
    z, log_scale = _standardize(x, loc, scale)
    return _nan_unless(_domain_ok(z, scale), _outside(z < 0, -z - log_scale, -float("inf")))


def pdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The density.

    >>> from functrans.scipy.stats import expon
    >>> float(expon.pdf(0.0))
    1.0
    """
    return _fnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """1 - exp(-z) (by expm1) for z >= 0, 0 below.

    >>> from functrans.scipy.stats import expon
    >>> float(expon.cdf(0.0))
    0.0
    """
    z = _standardize(x, loc, scale)[0]
    # z = 0 takes the right side's slope, as JAX
    return _nan_unless(_domain_ok(z, scale), -_fnp.expm1(-_fnp.where(z < 0, 0.0, z)))


def logcdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """log cdf.

    >>> from functrans.scipy.stats import expon
    >>> float(expon.logcdf(0.0))
    -inf
    """
    z = _standardize(x, loc, scale)[0]
    # -inf at and below 0 with a zero gradient (log's slope there is infinite)
    zs = _fnp.where(z > 0, z, 1.0)
    val = _fnp.where(z > 0, _fnp.log(-_fnp.expm1(-zs)), z.dtype.type(-float("inf")))
    return _nan_unless(_domain_ok(z, scale), val)


def sf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """exp(-z) for z >= 0, 1 below.

    >>> from functrans.scipy.stats import expon
    >>> float(expon.sf(0.0))
    1.0
    """
    return _fnp.exp(logsf(x, loc, scale))


def logsf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """-z for z >= 0, 0 below.

    >>> from functrans.scipy.stats import expon
    >>> float(expon.logsf(2.0))
    -2.0
    """
    z = _standardize(x, loc, scale)[0]
    return _nan_unless(_domain_ok(z, scale), -_fnp.where(z < 0, 0.0, z))


def ppf(q: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """-log1p(-q) scaled and shifted.

    >>> from functrans.scipy.stats import expon
    >>> float(expon.ppf(0.0))
    0.0
    """
    q, loc, scale = _as_float(q, loc, scale)
    return _nan_unless((scale > 0) & (q >= 0) & (q <= 1), loc - scale * _fnp.log1p(-q))
