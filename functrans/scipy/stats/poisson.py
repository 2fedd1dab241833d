"""The Poisson distribution (``jax.scipy.stats.poisson``)."""
from __future__ import annotations

from ... import numpy as _fnp
from .._special_gamma import gammaln as _gammaln
from .._special_incomplete import gammaincc as _gammaincc
from .._special_misc import xlogy as _xlogy
from ._util import as_float as _as_float
from ...typing import Array, ArrayLike

__all__ = ["logpmf", "pmf", "cdf"]


def logpmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """k log(mu) - mu - gammaln(k + 1) at integers k >= loc, -inf elsewhere.

    >>> from functrans.scipy.stats import poisson
    >>> round(float(poisson.logpmf(0, 2.0)), 12)
    -2.0
    """
    k, mu, loc = _as_float(k, mu, loc)
    x = k - loc
    ok = (x >= 0) & (x == _fnp.floor(x))
    xs = _fnp.where(ok, x, 0.0)
    val = _xlogy(xs, mu) - mu - _gammaln(xs + 1)
    return _fnp.where(ok, val, x.dtype.type(-float("inf")))


def pmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """The probability mass.

    >>> from functrans.scipy.stats import poisson
    >>> round(float(poisson.pmf(0, 2.0)), 12)
    0.135335283237
    """
    return _fnp.exp(logpmf(k, mu, loc))


def cdf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """Q(floor(k) + 1, mu) for k >= loc, 0 below.

    >>> from functrans.scipy.stats import poisson
    >>> round(float(poisson.cdf(0, 2.0)), 12)
    0.135335283237
    """
    k, mu, loc = _as_float(k, mu, loc)
    x = _fnp.floor(k - loc)
    return _fnp.where(x < 0, x.dtype.type(0), _gammaincc(_fnp.maximum(x, 0.0) + 1, mu))
