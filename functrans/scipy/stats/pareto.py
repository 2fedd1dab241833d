"""The Pareto distribution (``jax.scipy.stats.pareto``)."""
from __future__ import annotations

from ... import numpy as _fnp
from ._util import as_float as _as_float, standardize as _standardize
from ...typing import Array, ArrayLike

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0,
           scale: ArrayLike = 1.0) -> Array:
    """log b - (b + 1) log z - log(scale) for z >= 1, -inf below.

    >>> from functrans.scipy.stats import pareto
    >>> round(float(pareto.logpdf(1.0, 2.0)), 12)
    0.69314718056
    """
    z, log_scale = _standardize(x, loc, scale)
    b = _as_float(b)
    zs = _fnp.where(z >= 1, z, 1.0)
    val = _fnp.log(b) - (b + 1) * _fnp.log(zs) - log_scale
    return _fnp.where(z >= 1, val, z.dtype.type(-float("inf")))


def pdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The density.

    >>> from functrans.scipy.stats import pareto
    >>> round(float(pareto.pdf(1.0, 2.0)), 12)
    2.0
    """
    return _fnp.exp(logpdf(x, b, loc, scale))
