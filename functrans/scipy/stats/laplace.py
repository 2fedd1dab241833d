"""The Laplace distribution (``jax.scipy.stats.laplace``)."""
import math as _math

from ... import numpy as _fnp
from ._util import standardize as _standardize

__all__ = ["logpdf", "pdf", "cdf"]


def logpdf(x, loc=0.0, scale=1.0):
    """-|z| - log(2 scale).

    >>> from functrans.scipy.stats import laplace
    >>> round(float(laplace.logpdf(0.0)), 12)
    -0.69314718056
    """
    z, log_scale = _standardize(x, loc, scale)
    return -_fnp.abs(z) - z.dtype.type(_math.log(2)) - log_scale


def pdf(x, loc=0.0, scale=1.0):
    """The density.

    >>> from functrans.scipy.stats import laplace
    >>> float(laplace.pdf(0.0))
    0.5
    """
    return _fnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0.0, scale=1.0):
    """exp(z)/2 below loc, 1 - exp(-z)/2 above.

    >>> from functrans.scipy.stats import laplace
    >>> float(laplace.cdf(0.0))
    0.5
    """
    z = _standardize(x, loc, scale)[0]
    half = z.dtype.type(0.5)
    return _fnp.where(z < 0, half * _fnp.exp(_fnp.minimum(z, 0.0)),
                      1 - half * _fnp.exp(-_fnp.maximum(z, 0.0)))
