"""Student's t distribution (``jax.scipy.stats.t``)."""
from __future__ import annotations

import math as _math

from ... import numpy as _fnp
from .._special_gamma import gammaln as _gammaln
from ._util import standardize as _standardize, as_float as _as_float
from ...typing import Array, ArrayLike

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0,
           scale: ArrayLike = 1.0) -> Array:
    """log density of Student's t with ``df`` degrees of freedom.

    >>> from functrans.scipy.stats import t
    >>> round(float(t.logpdf(0.0, 1.0)), 12)      # Cauchy
    -1.144729885849
    """
    z, log_scale = _standardize(x, loc, scale)
    df = _as_float(df, z)[0]          # z's float32 stays float32 for a Python df
    half = z.dtype.type(0.5)
    return (_gammaln(half * (df + 1)) - _gammaln(half * df) - half * _fnp.log(df * _math.pi)
            - half * (df + 1) * _fnp.log1p(z * z / df) - log_scale)


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The density.

    >>> from functrans.scipy.stats import t
    >>> round(float(t.pdf(0.0, 1.0)), 12)
    0.318309886184
    """
    return _fnp.exp(logpdf(x, df, loc, scale))
