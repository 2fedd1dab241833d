"""The Laplace distribution (``jax.scipy.stats.laplace``)."""
from __future__ import annotations

import math as _math

from ... import numpy as _fnp
from ._util import standardize as _standardize
from ._util import domain_ok as _domain_ok, nan_unless as _nan_unless
from ...typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """-|z| - log(2 scale).

    >>> from functrans.scipy.stats import laplace
    >>> round(float(laplace.logpdf(0.0)), 12)
    -0.69314718056
    """
    z, log_scale = _standardize(x, loc, scale)
    val = -_fnp.abs(z) - z.dtype.type(_math.log(2)) - log_scale
    return _nan_unless(_domain_ok(z, scale), val)


def pdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The density.

    >>> from functrans.scipy.stats import laplace
    >>> float(laplace.pdf(0.0))
    0.5
    """
    return _fnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """exp(z)/2 below loc, 1 - exp(-z)/2 above.

    >>> from functrans.scipy.stats import laplace
    >>> float(laplace.cdf(0.0))
    0.5
    """
    z = _standardize(x, loc, scale)[0]
    half = z.dtype.type(0.5)
    val = _fnp.where(z < 0, half * _fnp.exp(_fnp.minimum(z, 0.0)),
                     1 - half * _fnp.exp(-_fnp.where(z < 0, 0.0, z)))   # slope 1/2 at z = 0
    return _nan_unless(_domain_ok(z, scale), val)
