"""The Bernoulli distribution (``jax.scipy.stats.bernoulli``)."""
from __future__ import annotations

from ... import numpy as _fnp
from .._special_misc import xlog1py as _xlog1py, xlogy as _xlogy
from ._util import as_float as _as_float, nan_unless as _nan_unless
from ...typing import Array, ArrayLike

__all__ = ["logpmf", "pmf", "cdf", "ppf"]


def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """log p at 1, log(1 - p) at 0, -inf elsewhere.

    >>> from functrans.scipy.stats import bernoulli
    >>> round(float(bernoulli.logpmf(1, 0.5)), 12)
    -0.69314718056
    """
    k, p, loc = _as_float(k, p, loc)
    x = k - loc
    val = _xlogy(x, p) + _xlog1py(1 - x, -p)
    val = _fnp.where((x == 0) | (x == 1), val, x.dtype.type(-float("inf")))
    return _nan_unless((p >= 0) & (p <= 1) & ~_fnp.isnan(x), val)   # scipy's domain


def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """The probability mass.

    >>> from functrans.scipy.stats import bernoulli
    >>> float(bernoulli.pmf(1, 0.25))
    0.25
    """
    return _fnp.exp(logpmf(k, p, loc))


def cdf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """0 below loc, 1 - p on [loc, loc + 1), 1 above.

    >>> from functrans.scipy.stats import bernoulli
    >>> float(bernoulli.cdf(0, 0.25))
    0.75
    """
    k, p, loc = _as_float(k, p, loc)
    x = k - loc
    t = x.dtype.type
    val = _fnp.where(x < 0, t(0), _fnp.where(x < 1, 1 - p, t(1)))
    return _nan_unless((p >= 0) & (p <= 1) & ~_fnp.isnan(x), val)


def ppf(q: ArrayLike, p: ArrayLike) -> Array:
    """The smallest k in {0, 1} with cdf(k) >= q (NaN outside [0, 1]).

    >>> from functrans.scipy.stats import bernoulli
    >>> float(bernoulli.ppf(0.9, 0.25))
    1.0
    """
    q, p = _as_float(q, p)
    t = q.dtype.type
    val = _fnp.where(q > 1 - p, t(1), t(0))
    val = _fnp.where(q == 0, t(-1), _fnp.where(q == 1, t(1), val))   # the support's ends
    return _nan_unless((q >= 0) & (q <= 1) & (p >= 0) & (p <= 1), val)
