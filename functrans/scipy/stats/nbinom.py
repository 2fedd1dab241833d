"""The negative binomial distribution (``jax.scipy.stats.nbinom``): failures before
the n-th success."""
from __future__ import annotations

from ... import numpy as _fnp
from .._special_gamma import gammaln as _gammaln
from .._special_misc import xlog1py as _xlog1py, xlogy as _xlogy
from ._util import as_float as _as_float, nan_unless as _nan_unless
from ...typing import Array, ArrayLike

__all__ = ["logpmf", "pmf"]


def logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """log C(k + n - 1, k) + n log p + k log(1 - p) at integers k >= 0.

    >>> from functrans.scipy.stats import nbinom
    >>> round(float(nbinom.logpmf(0, 1, 0.5)), 12)
    -0.69314718056
    """
    k, n, p, loc = _as_float(k, n, p, loc)
    x = k - loc
    ok = (x >= 0) & (x == _fnp.floor(x))
    xs = _fnp.where(ok, x, 0.0)
    comb = _gammaln(xs + n) - _gammaln(xs + 1) - _gammaln(n)
    val = comb + _xlogy(n, p) + _xlog1py(xs, -p)
    val = _fnp.where(ok, val, x.dtype.type(-float("inf")))
    return _nan_unless((n > 0) & (p > 0) & (p <= 1) & ~_fnp.isnan(x), val)   # scipy's domain


def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """The probability mass.

    >>> from functrans.scipy.stats import nbinom
    >>> float(nbinom.pmf(0, 1, 0.5))
    0.5
    """
    return _fnp.exp(logpmf(k, n, p, loc))
