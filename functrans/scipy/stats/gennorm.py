"""The generalized normal distribution with shape ``beta``
(``jax.scipy.stats.gennorm``)."""
from __future__ import annotations

import math as _math

from ... import numpy as _fnp
from .._special_gamma import gammaln as _gammaln
from .._special_incomplete import gammainc as _gammainc
from ._util import as_float as _as_float, standardize as _standardize
from ._util import domain_ok as _domain_ok, nan_unless as _nan_unless
from ...typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf"]


def logpdf(x: ArrayLike, beta: ArrayLike, loc: ArrayLike = 0.0,
           scale: ArrayLike = 1.0) -> Array:
    """log(beta / (2 Gamma(1/beta))) - |z|^beta - log(scale).

    >>> from functrans.scipy.stats import gennorm
    >>> round(float(gennorm.logpdf(0.0, 2.0)), 12)
    -0.572364942925
    """
    z, log_scale = _standardize(x, loc, scale)
    beta = _as_float(beta, z)[0]
    val = (_fnp.log(beta) - z.dtype.type(_math.log(2)) - _gammaln(1 / beta)
           - _fnp.abs(z) ** beta - log_scale)
    return _nan_unless(_domain_ok(z, scale, beta > 0), val)


def pdf(x: ArrayLike, beta: ArrayLike, loc: ArrayLike = 0.0,
        scale: ArrayLike = 1.0) -> Array:
    """The density.

    >>> from functrans.scipy.stats import gennorm
    >>> round(float(gennorm.pdf(0.0, 1.0)), 12)
    0.5
    """
    return _fnp.exp(logpdf(x, beta, loc, scale))


def cdf(x: ArrayLike, beta: ArrayLike, loc: ArrayLike = 0.0,
        scale: ArrayLike = 1.0) -> Array:
    """1/2 + sign(z) P(1/beta, |z|^beta) / 2.

    >>> from functrans.scipy.stats import gennorm
    >>> float(gennorm.cdf(0.0, 2.0))
    0.5
    """
    z = _standardize(x, loc, scale)[0]
    beta = _as_float(beta, z)[0]
    half = z.dtype.type(0.5)
    val = half + half * _fnp.sign(z) * _gammainc(1 / beta, _fnp.abs(z) ** beta)
    return _nan_unless(_domain_ok(z, scale, beta > 0), val)
