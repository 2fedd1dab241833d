"""The Poisson distribution (``jax.scipy.stats.poisson``)."""
from __future__ import annotations

from ... import numpy as _fnp
from .._special_gamma import gammaln as _gammaln
from .._special_incomplete import gammaincc as _gammaincc
from .._special_misc import entr as _entr
from .._special_misc import xlogy as _xlogy
from ._util import as_float as _as_float, nan_unless as _nan_unless
from ...typing import Array, ArrayLike

__all__ = ["logpmf", "pmf", "cdf", "entropy"]


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
    val = _fnp.where(ok, val, x.dtype.type(-float("inf")))
    return _nan_unless((mu >= 0) & ~_fnp.isnan(x), val)     # scipy's domain


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
    xs = _fnp.where((x < 0) | (x == float("inf")), 0.0, x)      # 1 at k = inf, as scipy
    val = _fnp.where(x < 0, x.dtype.type(0), _gammaincc(xs + 1, mu))
    val = _fnp.where(x == float("inf"), x.dtype.type(1), val)
    return _nan_unless((mu >= 0) & ~_fnp.isnan(x), val)     # scipy's domain


# entropy: the sum -sum p log p over k < mu + 12 sqrt(mu) + 40 (the mass beyond is
# below 1e-30) for mu < 400, a static 700 terms; the asymptotic series beyond
_ENTROPY_SUM_BELOW = 400.0
_ENTROPY_TERMS = 700


def entropy(mu: ArrayLike, loc: ArrayLike = 0) -> Array:
    """The entropy -sum_k p(k) log p(k) (``loc`` shifts and does not change it; NaN
    for mu < 0, 0 at mu = 0): the sum itself below mu = 400, and
    log(2 pi e mu) / 2 - 1/(12 mu) - 1/(24 mu^2) - 19/(360 mu^3) beyond.

    >>> from functrans.scipy.stats import poisson
    >>> round(float(poisson.entropy(1.0)), 12)
    1.304842242256
    """
    mu, loc = _as_float(mu, loc)
    mu = _fnp.broadcast_arrays(mu, loc)[0]
    small = _fnp.where((mu > 0) & (mu < _ENTROPY_SUM_BELOW), mu, 1.0)
    k = _fnp.arange(_ENTROPY_TERMS, dtype=mu.dtype).reshape((-1,) + (1,) * mu.ndim)
    p = pmf(k, small[None])
    # p underflows to 0 far in the tail, where entr' is infinite: entr(1) = 0 stands in
    # there, so the gradient gets 0, not inf * 0
    terms = _entr(_fnp.where(p > 0, p, 1.0))
    summed = _fnp.sum(_fnp.where(k < small + 12 * _fnp.sqrt(small) + 40, terms, 0.0), axis=0)
    big = _fnp.where(mu >= _ENTROPY_SUM_BELOW, mu, _ENTROPY_SUM_BELOW)
    inv = 1.0 / big
    asym = 0.5 * _fnp.log(2 * _fnp.pi * _fnp.e * big) \
        - inv * (1 / 12 + inv * (1 / 24 + inv * 19 / 360))
    val = _fnp.where(mu < _ENTROPY_SUM_BELOW, summed, asym)
    val = _fnp.where(mu == 0, 0.0, val)
    return _nan_unless((mu >= 0) & ~_fnp.isnan(loc), val)     # scipy's domain
