"""The chi-square distribution (``jax.scipy.stats.chi2``): gamma(df / 2, scale 2)."""
from __future__ import annotations

from . import gamma as _gamma
from ._util import as_float as _as_float
from ...typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def _args(x, df, loc, scale):
    df, loc, scale, _ = _as_float(df, loc, scale, x)    # x's dtype joins the promotion
    return df * 0.5, loc, scale * 2.0


def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0,
           scale: ArrayLike = 1.0) -> Array:
    """log density.

    >>> from functrans.scipy.stats import chi2
    >>> round(float(chi2.logpdf(2.0, 2.0)), 12)
    -1.69314718056
    """
    return _gamma.logpdf(x, *_args(x, df, loc, scale))


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The density.

    >>> from functrans.scipy.stats import chi2
    >>> round(float(chi2.pdf(2.0, 2.0)), 12)
    0.183939720586
    """
    return _gamma.pdf(x, *_args(x, df, loc, scale))


def cdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The CDF.

    >>> from functrans.scipy.stats import chi2
    >>> round(float(chi2.cdf(2.0, 2.0)), 12)
    0.632120558829
    """
    return _gamma.cdf(x, *_args(x, df, loc, scale))


def logcdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0,
           scale: ArrayLike = 1.0) -> Array:
    """log cdf.

    >>> from functrans.scipy.stats import chi2
    >>> round(float(chi2.logcdf(2.0, 2.0)), 12)
    -0.458675145387
    """
    return _gamma.logcdf(x, *_args(x, df, loc, scale))


def sf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The survival function.

    >>> from functrans.scipy.stats import chi2
    >>> round(float(chi2.sf(2.0, 2.0)), 12)
    0.367879441171
    """
    return _gamma.sf(x, *_args(x, df, loc, scale))


def logsf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0,
          scale: ArrayLike = 1.0) -> Array:
    """log sf.

    >>> from functrans.scipy.stats import chi2
    >>> round(float(chi2.logsf(2.0, 2.0)), 12)
    -1.0
    """
    return _gamma.logsf(x, *_args(x, df, loc, scale))
