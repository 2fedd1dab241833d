"""The gamma distribution with shape ``a`` (``jax.scipy.stats.gamma``)."""
from __future__ import annotations

from ... import numpy as _fnp
from .._special_gamma import gammaln as _gammaln
from .._special_incomplete import gammainc as _gammainc, gammaincc as _gammaincc
from ._util import log_prob as _log_prob, as_float as _as_float, standardize as _standardize
from ._util import domain_ok as _domain_ok, nan_unless as _nan_unless
from ...typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0.0,
           scale: ArrayLike = 1.0) -> Array:
    """(a - 1) log z - z - gammaln(a) - log(scale) for z >= 0, -inf below.

    >>> from functrans.scipy.stats import gamma
    >>> float(gamma.logpdf(1.0, 1.0))
    -1.0
    """
    z, log_scale = _standardize(x, loc, scale)
    a = _as_float(a, z)[0]
    # plain (a-1) log z, not xlogy: at z = 0 it is +-inf with slope +-inf, where xlogy's
    # rule met a literal zero tangent of a (0 * log 0: jvp NaN); 0 log 0 = 0 (a = 1) and
    # z = inf (where -z alone gives -inf, slope -1) read a safe 1
    zl = _fnp.where((z >= 0) & (z < float("inf")) & ~((z == 0) & (a == 1)), z, 1.0)
    val = (a - 1) * _fnp.log(zl) - _fnp.where(z < 0, 0.0, z) - _gammaln(a) - log_scale
    val = _fnp.where(z < 0, z.dtype.type(-float("inf")), val)
    return _nan_unless(_domain_ok(z, scale, a > 0), val)


def pdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The density.

    >>> from functrans.scipy.stats import gamma
    >>> round(float(gamma.pdf(1.0, 1.0)), 12)
    0.367879441171
    """
    return _fnp.exp(logpdf(x, a, loc, scale))


def cdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The regularized lower incomplete gamma function of z.

    >>> from functrans.scipy.stats import gamma
    >>> round(float(gamma.cdf(1.0, 1.0)), 12)
    0.632120558829
    """
    z = _standardize(x, loc, scale)[0]
    # z <= 0 reads a safe 1 (the slopes of gammainc at 0 are 0 * inf = nan for the chain)
    a = _as_float(a, z)[0]
    zs = _fnp.where(z > 0, z, 1.0)
    return _nan_unless(_domain_ok(z, scale, a > 0), _fnp.where(z > 0, _gammainc(a, zs), 0.0))


def logcdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0.0,
           scale: ArrayLike = 1.0) -> Array:
    """log cdf.

    >>> from functrans.scipy.stats import gamma
    >>> round(float(gamma.logcdf(1.0, 1.0)), 12)
    -0.458675145387
    """
    return _log_prob(cdf(x, a, loc, scale), sf(x, a, loc, scale))


def sf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The regularized upper incomplete gamma function of z (no cancellation).

    >>> from functrans.scipy.stats import gamma
    >>> round(float(gamma.sf(1.0, 1.0)), 12)
    0.367879441171
    """
    z = _standardize(x, loc, scale)[0]
    a = _as_float(a, z)[0]
    zs = _fnp.where(z > 0, z, 1.0)
    return _nan_unless(_domain_ok(z, scale, a > 0), _fnp.where(z > 0, _gammaincc(a, zs), 1.0))


def logsf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0.0,
          scale: ArrayLike = 1.0) -> Array:
    """log sf.

    >>> from functrans.scipy.stats import gamma
    >>> round(float(gamma.logsf(1.0, 1.0)), 12)
    -1.0
    """
    return _log_prob(sf(x, a, loc, scale), cdf(x, a, loc, scale))
