"""The geometric distribution on {1, 2, ...} (``jax.scipy.stats.geom``)."""
from __future__ import annotations

from ... import numpy as _fnp
from .._special_misc import xlog1py as _xlog1py
from ._util import as_float as _as_float, nan_unless as _nan_unless
from ...typing import Array, ArrayLike

__all__ = ["logpmf", "pmf"]


def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """(k - 1) log(1 - p) + log p at integers k >= 1 + loc, -inf elsewhere.

    >>> from functrans.scipy.stats import geom
    >>> round(float(geom.logpmf(1, 0.5)), 12)
    -0.69314718056
    """
    k, p, loc = _as_float(k, p, loc)
    x = k - loc
    ok = (x >= 1) & (x == _fnp.floor(x))
    xs = _fnp.where(ok, x, 1.0)
    val = _xlog1py(xs - 1, -p) + _fnp.log(p)
    val = _fnp.where(ok, val, x.dtype.type(-float("inf")))
    return _nan_unless((p > 0) & (p <= 1) & ~_fnp.isnan(x), val)   # scipy's domain


def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
    """The probability mass.

    >>> from functrans.scipy.stats import geom
    >>> float(geom.pmf(2, 0.5))
    0.25
    """
    return _fnp.exp(logpmf(k, p, loc))
