"""The binomial distribution (``jax.scipy.stats.binom``)."""
from __future__ import annotations

from ... import numpy as _fnp
from .._special_gamma import gammaln as _gammaln
from .._special_misc import xlog1py as _xlog1py, xlogy as _xlogy
from ._util import as_float as _as_float, nan_unless as _nan_unless
from ...typing import Array, ArrayLike

__all__ = ["logpmf", "pmf"]


def logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """log C(n, k) + k log p + (n - k) log(1 - p) at integers 0 <= k <= n.

    >>> from functrans.scipy.stats import binom
    >>> round(float(binom.logpmf(1, 2, 0.5)), 12)
    -0.69314718056
    """
    k, n, p, loc = _as_float(k, n, p, loc)
    x = k - loc
    ok = (x >= 0) & (x <= n) & (x == _fnp.floor(x))
    xs = _fnp.where(ok, x, 0.0)
    comb = _gammaln(n + 1) - _gammaln(xs + 1) - _gammaln(n - xs + 1)
    val = comb + _xlogy(xs, p) + _xlog1py(n - xs, -p)
    val = _fnp.where(ok, val, x.dtype.type(-float("inf")))
    good = (n >= 0) & (n == _fnp.floor(n)) & (p >= 0) & (p <= 1) & ~_fnp.isnan(x)
    return _nan_unless(good, val)                                 # scipy's domain


def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """The probability mass.

    >>> from functrans.scipy.stats import binom
    >>> round(float(binom.pmf(1, 2, 0.5)), 12)
    0.5
    """
    return _fnp.exp(logpmf(k, n, p, loc))
