"""The Pareto distribution (``jax.scipy.stats.pareto``)."""
from __future__ import annotations

from ... import numpy as _fnp
from ._util import as_float as _as_float, log1m_exp as _log1m_exp, nan_if as _nan_if
from ._util import standardize as _standardize
from ._util import domain_ok as _domain_ok, nan_unless as _nan_unless
from ...typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
           scale: ArrayLike = 1.0) -> Array:
    """log b - (b + 1) log z - log(scale) for z >= 1, -inf below.

    >>> from functrans.scipy.stats import pareto
    >>> round(float(pareto.logpdf(1.0, 2.0)), 12)
    0.69314718056
    """
    z, log_scale = _standardize(x, loc, scale)
    b = _as_float(b, z)[0]
    zs = _fnp.where(z >= 1, z, 1.0)
    val = _fnp.log(b) - (b + 1) * _fnp.log(zs) - log_scale
    val = _fnp.where(z >= 1, val, z.dtype.type(-float("inf")))
    return _nan_unless(_domain_ok(z, scale, b > 0), val)


def pdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The density.

    >>> from functrans.scipy.stats import pareto
    >>> round(float(pareto.pdf(1.0, 2.0)), 12)
    2.0
    """
    return _fnp.exp(logpdf(x, b, loc, scale))


def _log_tail(x, b, loc, scale):
    """(-b log z where z >= 1, else 0: log sf), and where the parameters are invalid."""
    z, _ = _standardize(x, loc, scale)
    b, scale = _as_float(b, scale)
    zs = _fnp.where(z >= 1, z, 1.0)
    bad = ~_domain_ok(z, scale, b > 0)      # a NaN b too
    return _fnp.where(z >= 1, -b * _fnp.log(zs), 0.0), bad


def logsf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """-b log z for z >= 1, 0 below (NaN for b <= 0 or scale <= 0, as scipy).

    >>> from functrans.scipy.stats import pareto
    >>> round(float(pareto.logsf(4.0, 0.5)), 12)
    -0.69314718056
    """
    t, bad = _log_tail(x, b, loc, scale)
    return _nan_if(bad, t)


def sf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """z^(-b) for z >= 1, 1 below.

    >>> from functrans.scipy.stats import pareto
    >>> float(pareto.sf(4.0, 0.5))
    0.5
    """
    return _fnp.exp(logsf(x, b, loc, scale))


def cdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """1 - z^(-b) for z >= 1 (as -expm1(-b log z): accurate near z = 1), 0 below.

    >>> from functrans.scipy.stats import pareto
    >>> float(pareto.cdf(4.0, 0.5))
    0.5
    """
    t, bad = _log_tail(x, b, loc, scale)
    return _nan_if(bad, -_fnp.expm1(t))


def logcdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
           scale: ArrayLike = 1.0) -> Array:
    """log(1 - z^(-b)) = log1m_exp(b log z) (accurate near z = 1 and far out);
    -inf for z <= 1.

    >>> from functrans.scipy.stats import pareto
    >>> round(float(pareto.logcdf(4.0, 0.5)), 12)
    -0.69314718056
    """
    t, bad = _log_tail(x, b, loc, scale)
    return _nan_if(bad, _log1m_exp(-t))


def ppf(q: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The quantile loc + scale (1 - q)^(-1/b) (NaN outside [0, 1] and for invalid
    parameters).

    >>> from functrans.scipy.stats import pareto
    >>> float(pareto.ppf(0.75, 2.0))
    2.0
    """
    q, b, loc, scale = _as_float(q, b, loc, scale)
    out = loc + scale * _fnp.exp(-_fnp.log1p(-q) / b)
    return _nan_if((b <= 0) | (scale <= 0) | (q < 0) | (q > 1), out)
