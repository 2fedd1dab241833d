"""The wrapped Cauchy distribution on [0, 2 pi] (``jax.scipy.stats.wrapcauchy``)."""
from __future__ import annotations

import math as _math

from ... import numpy as _fnp
from ._util import as_float as _as_float, nan_unless as _nan_unless
from ...typing import Array, ArrayLike

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, c: ArrayLike) -> Array:
    """log((1 - c^2) / (2 pi (1 + c^2 - 2 c cos x))) on [0, 2 pi], -inf outside.

    >>> from functrans.scipy.stats import wrapcauchy
    >>> round(float(wrapcauchy.logpdf(1.0, 0.5)), 12)
    -1.78264295633
    """
    x, c = _as_float(x, c)
    val = (_fnp.log1p(-c * c) - x.dtype.type(_math.log(2 * _math.pi))
           - _fnp.log1p(c * c - 2 * c * _fnp.cos(x)))
    inside = (x >= 0) & (x <= 2 * _math.pi)
    val = _fnp.where(inside, val, x.dtype.type(-float("inf")))
    return _nan_unless((c > 0) & (c < 1) & ~_fnp.isnan(x), val)     # scipy's domain


def pdf(x: ArrayLike, c: ArrayLike) -> Array:
    """The density.

    >>> from functrans.scipy.stats import wrapcauchy
    >>> round(float(wrapcauchy.pdf(1.0, 0.5)), 12)
    0.168193032478
    """
    return _fnp.exp(logpdf(x, c))
