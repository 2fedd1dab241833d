"""The right-skewed Gumbel distribution (``jax.scipy.stats.gumbel_r``): the maximum's
extreme-value law, cdf exp(-exp(-z)) with z = (x - loc) / scale.  A scale <= 0 gives
NaN, as scipy."""
from __future__ import annotations

from ... import numpy as _fnp
from ...typing import Array, ArrayLike
from ._util import as_float as _as_float, log1m_exp as _log1m_exp, nan_if as _nan_if
from ._util import domain_ok as _domain_ok, standardize as _standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def _z(x, loc, scale):
    z, log_scale = _standardize(x, loc, scale)
    return z, log_scale, ~_domain_ok(z, scale)


def logpdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """-(z + exp(-z)) - log(scale).

    >>> from functrans.scipy.stats import gumbel_r
    >>> float(gumbel_r.logpdf(0.0))
    -1.0
    """
    z, log_scale, bad = _z(x, loc, scale)
    return _nan_if(bad, -(z + _fnp.exp(-z)) - log_scale)


def pdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The density exp(-(z + exp(-z))) / scale.

    >>> from functrans.scipy.stats import gumbel_r
    >>> round(float(gumbel_r.pdf(0.0)), 12)
    0.367879441171
    """
    return _fnp.exp(logpdf(x, loc, scale))


def logcdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """-exp(-z).

    >>> from functrans.scipy.stats import gumbel_r
    >>> float(gumbel_r.logcdf(0.0))
    -1.0
    """
    z, _, bad = _z(x, loc, scale)
    return _nan_if(bad, -_fnp.exp(-z))


def cdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """exp(-exp(-z)).

    >>> from functrans.scipy.stats import gumbel_r
    >>> round(float(gumbel_r.cdf(0.0)), 12)
    0.367879441171
    """
    return _fnp.exp(logcdf(x, loc, scale))


def sf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """1 - cdf, as -expm1(-exp(-z)) (accurate in the right tail).

    >>> from functrans.scipy.stats import gumbel_r
    >>> float(gumbel_r.sf(40.0))
    4.248354255291589e-18
    """
    z, _, bad = _z(x, loc, scale)
    return _nan_if(bad, -_fnp.expm1(-_fnp.exp(-z)))


def logsf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """log(1 - exp(-exp(-z))), by ``log1m_exp`` (accurate in both tails).

    >>> from functrans.scipy.stats import gumbel_r
    >>> round(float(gumbel_r.logsf(40.0)), 12)
    -40.0
    """
    z, _, bad = _z(x, loc, scale)
    return _nan_if(bad, _log1m_exp(_fnp.exp(-z)))


def ppf(q: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The quantile loc - scale log(-log q) (NaN outside [0, 1]).

    >>> from functrans.scipy.stats import gumbel_r
    >>> round(float(gumbel_r.ppf(0.5)), 12)
    0.366512920582
    """
    q, loc, scale = _as_float(q, loc, scale)
    out = loc - scale * _fnp.log(-_fnp.log(q))
    return _nan_if((scale <= 0) | (q < 0) | (q > 1), out)
