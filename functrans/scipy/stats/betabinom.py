"""The beta-binomial distribution (``jax.scipy.stats.betabinom``)."""
from __future__ import annotations

from ... import numpy as _fnp
from .._special_gamma import betaln as _betaln, gammaln as _gammaln
from ._util import as_float as _as_float, nan_unless as _nan_unless
from ...typing import Array, ArrayLike

__all__ = ["logpmf", "pmf"]


def logpmf(k: ArrayLike, n: ArrayLike, a: ArrayLike, b: ArrayLike,
           loc: ArrayLike = 0) -> Array:
    """log C(n, k) + betaln(k + a, n - k + b) - betaln(a, b) at integers 0 <= k <= n.

    >>> from functrans.scipy.stats import betabinom
    >>> round(float(betabinom.logpmf(1, 2, 1.0, 1.0)), 12)   # uniform on {0, 1, 2}
    -1.098612288668
    """
    k, n, a, b, loc = _as_float(k, n, a, b, loc)
    x = k - loc
    ok = (x >= 0) & (x <= n) & (x == _fnp.floor(x))
    xs = _fnp.where(ok, x, 0.0)
    comb = _gammaln(n + 1) - _gammaln(xs + 1) - _gammaln(n - xs + 1)
    val = comb + _betaln(xs + a, n - xs + b) - _betaln(a, b)
    val = _fnp.where(ok, val, x.dtype.type(-float("inf")))
    good = (n >= 0) & (n == _fnp.floor(n)) & (a > 0) & (b > 0) & ~_fnp.isnan(x)
    return _nan_unless(good, val)                                 # scipy's domain


def pmf(k: ArrayLike, n: ArrayLike, a: ArrayLike, b: ArrayLike,
        loc: ArrayLike = 0) -> Array:
    """The probability mass.

    >>> from functrans.scipy.stats import betabinom
    >>> round(float(betabinom.pmf(1, 2, 1.0, 1.0)), 12)
    0.333333333333
    """
    return _fnp.exp(logpmf(k, n, a, b, loc))
