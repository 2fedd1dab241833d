"""Student's t distribution (``jax.scipy.stats.t``)."""
from __future__ import annotations

import math as _math

from ... import numpy as _fnp
from .._special_gamma import gammaln as _gammaln
from ._util import standardize as _standardize, as_float as _as_float
from ._util import domain_ok as _domain_ok, nan_unless as _nan_unless
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
    # df = inf is the normal law (as scipy; the formula's gammaln difference is inf - inf)
    normal = _fnp.isinf(df)
    dfs = _fnp.where(normal, 1.0, df)
    val = (_gammaln(half * (dfs + 1)) - _gammaln(half * dfs) - half * _fnp.log(dfs * _math.pi)
           - half * (dfs + 1) * _fnp.log1p(z * z / dfs) - log_scale)
    gauss = -half * z * z - z.dtype.type(0.5 * _math.log(2 * _math.pi)) - log_scale
    return _nan_unless(_domain_ok(z, scale, df > 0), _fnp.where(normal, gauss, val))


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The density.

    >>> from functrans.scipy.stats import t
    >>> round(float(t.pdf(0.0, 1.0)), 12)
    0.318309886184
    """
    return _fnp.exp(logpdf(x, df, loc, scale))
