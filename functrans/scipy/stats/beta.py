"""The beta distribution (``jax.scipy.stats.beta``)."""
from __future__ import annotations

from ... import numpy as _fnp
from .._special_gamma import betaln as _betaln
from .._special_incomplete import betainc as _betainc
from ._util import log_prob as _log_prob, as_float as _as_float, standardize as _standardize
from ._util import domain_ok as _domain_ok, nan_unless as _nan_unless
from ...typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
           scale: ArrayLike = 1.0) -> Array:
    """(a-1) log z + (b-1) log(1-z) - betaln(a, b) - log(scale) on [0, 1], -inf outside.

    >>> from functrans.scipy.stats import beta
    >>> round(float(beta.logpdf(0.5, 1.0, 1.0)), 10)
    0.0
    """
    z, log_scale = _standardize(x, loc, scale)
    a, b, _ = _as_float(a, b, z)
    inside = (z >= 0) & (z <= 1)
    # plain (a-1) log z: +-inf at the edge with slope +-inf (xlogy's rule met a literal
    # zero tangent of a there: 0 * log 0 = NaN in jvp); 0 log 0 = 0 reads a safe 1/2
    za = _fnp.where(inside & ~((z == 0) & (a == 1)), z, 0.5)
    zb = _fnp.where(inside & ~((z == 1) & (b == 1)), z, 0.5)
    val = (a - 1) * _fnp.log(za) + (b - 1) * _fnp.log1p(-zb) - _betaln(a, b) - log_scale
    val = _fnp.where(inside, val, z.dtype.type(-float("inf")))
    return _nan_unless(_domain_ok(z, scale, a > 0, b > 0), val)


def pdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
        scale: ArrayLike = 1.0) -> Array:
    """The density.

    >>> from functrans.scipy.stats import beta
    >>> round(float(beta.pdf(0.5, 2.0, 2.0)), 10)
    1.5
    """
    return _fnp.exp(logpdf(x, a, b, loc, scale))


def _unit(z):
    """z clipped to [0, 1] with slope 1 at both edges, so the cdf's slope there is the
    density, as uniform.cdf (clip's ties halved it: beta(1, 2).cdf'(0) was 1, not 2)."""
    return _fnp.where(z < 0, 0.0, _fnp.where(z > 1, 1.0, z))


def cdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
        scale: ArrayLike = 1.0) -> Array:
    """I_z(a, b), clipped outside [0, 1].

    >>> from functrans.scipy.stats import beta
    >>> round(float(beta.cdf(0.5, 2.0, 2.0)), 10)
    0.5
    """
    z = _standardize(x, loc, scale)[0]
    a, b, _ = _as_float(a, b, z)
    return _nan_unless(_domain_ok(z, scale, a > 0, b > 0), _betainc(a, b, _unit(z)))


def logcdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
           scale: ArrayLike = 1.0) -> Array:
    """log cdf.

    >>> from functrans.scipy.stats import beta
    >>> round(float(beta.logcdf(0.5, 2.0, 2.0)), 12)
    -0.69314718056
    """
    return _log_prob(cdf(x, a, b, loc, scale), sf(x, a, b, loc, scale))


def sf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
       scale: ArrayLike = 1.0) -> Array:
    """I_{1-z}(b, a) (no cancellation).

    >>> from functrans.scipy.stats import beta
    >>> round(float(beta.sf(0.5, 2.0, 2.0)), 10)
    0.5
    """
    z = _standardize(x, loc, scale)[0]
    a, b, _ = _as_float(a, b, z)
    return _nan_unless(_domain_ok(z, scale, a > 0, b > 0), _betainc(b, a, 1.0 - _unit(z)))


def logsf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
          scale: ArrayLike = 1.0) -> Array:
    """log sf.

    >>> from functrans.scipy.stats import beta
    >>> round(float(beta.logsf(0.5, 2.0, 2.0)), 12)
    -0.69314718056
    """
    return _log_prob(sf(x, a, b, loc, scale), cdf(x, a, b, loc, scale))
