"""The logistic distribution (``jax.scipy.stats.logistic``)."""
from __future__ import annotations

from ... import nn as _nn
from ... import numpy as _fnp
from ._util import as_float as _as_float, standardize as _standardize
from ._util import domain_ok as _domain_ok, nan_unless as _nan_unless
from ...typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "sf", "isf", "ppf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """-z - 2 log1p(exp(-z)) - log(scale), written symmetrically in |z|.

    >>> from functrans.scipy.stats import logistic
    >>> round(float(logistic.logpdf(0.0)), 12)
    -1.38629436112
    """
    z, log_scale = _standardize(x, loc, scale)
    a = _fnp.abs(z)
    return _nan_unless(_domain_ok(z, scale), -a - 2 * _fnp.log1p(_fnp.exp(-a)) - log_scale)


def pdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The density.

    >>> from functrans.scipy.stats import logistic
    >>> float(logistic.pdf(0.0))
    0.25
    """
    return _fnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The sigmoid of z.

    >>> from functrans.scipy.stats import logistic
    >>> float(logistic.cdf(0.0))
    0.5
    """
    z = _standardize(x, loc, scale)[0]
    return _nan_unless(_domain_ok(z, scale), _nn.sigmoid(z))


def sf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The sigmoid of -z.

    >>> from functrans.scipy.stats import logistic
    >>> float(logistic.sf(0.0))
    0.5
    """
    z = _standardize(x, loc, scale)[0]
    return _nan_unless(_domain_ok(z, scale), _nn.sigmoid(-z))


def ppf(q: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """loc + scale * logit(q).

    >>> from functrans.scipy.stats import logistic
    >>> float(logistic.ppf(0.5))
    0.0
    """
    q, loc, scale = _as_float(q, loc, scale)
    return _nan_unless(scale > 0, loc + scale * (_fnp.log(q) - _fnp.log1p(-q)))


def isf(q: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """loc - scale * logit(q).

    >>> from functrans.scipy.stats import logistic
    >>> float(logistic.isf(0.5))
    0.0
    """
    q, loc, scale = _as_float(q, loc, scale)
    return _nan_unless(scale > 0, loc - scale * (_fnp.log(q) - _fnp.log1p(-q)))
