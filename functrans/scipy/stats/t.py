"""Student's t distribution (``jax.scipy.stats.t``)."""
from __future__ import annotations

import math as _math

from ... import numpy as _fnp
from .._special_gamma import gammaln as _gammaln
from ._util import log1p_z2 as _log1p_z2, as_float as _as_float
from ._util import nan_unless as _nan_unless
from ...typing import Array, ArrayLike

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0,
           scale: ArrayLike = 1.0) -> Array:
    """log density of Student's t with ``df`` degrees of freedom.

    >>> from functrans.scipy.stats import t
    >>> round(float(t.logpdf(0.0, 1.0)), 12)      # Cauchy
    -1.144729885849
    """
    x = _as_float(x, loc, scale)[0]
    df = _as_float(df, x)[0]          # x's float32 stays float32 for a Python df
    # df = inf is the normal law (as scipy; the formula's gammaln difference is inf - inf)
    normal = _fnp.isinf(df)
    dfs = _fnp.where(normal, 1.0, df)
    log_df = _fnp.log(dfs)
    # the parameters' terms first: the elementwise part then runs as one loop (a scalar
    # step between elementwise steps made the CPU backend's loop slower)
    half = x.dtype.type(0.5)
    const, power = _log_norm(dfs, log_df), half * (dfs + 1)
    ok = (_fnp.asarray(scale) > 0) & (df > 0)     # a NaN z is NaN on both sides already
    # log1p(z^2 / df) exact past z^2 overflow, limit slopes at x = +-inf (_util.log1p_z2);
    # for df = inf zn is z with its slopes (where df is finite, 0 past overflow)
    tail, z, zn, log_scale = _log1p_z2(x, loc, scale, df, log_df)
    val = const - power * tail - log_scale
    gauss = -half * zn * zn - x.dtype.type(0.5 * _math.log(2 * _math.pi)) - log_scale
    return _nan_unless(ok, _fnp.where(normal, gauss, val))


def _log_norm(df, log_df):
    """log(Gamma((df + 1) / 2) / (Gamma(df / 2) sqrt(df pi))).  From df = 30 (float64;
    8 below) the asymptotic series -log(2 pi) / 2 - 1 / (4 df) + 1 / (24 df^3) - ...
    (terms to df^-9, the first left out below 5e-16 / 1e-9): the gammaln difference
    cancels there (df = 1e30 gave -35.7 where the limit is -log(2 pi) / 2 = -0.919,
    scipy's value; float32 at df = 29.9 was 6e-6 off)."""
    t = df.dtype.type
    lim = t(30 if _fnp.finfo(df.dtype).eps < 1e-10 else 8)
    big = df >= lim
    db, ds = _fnp.where(big, df, lim), _fnp.where(big, t(1), df)
    r = t(1) / db
    w = r * r
    series = (t(-0.5 * _math.log(2 * _math.pi)) + (t(-1 / 4) + w * (t(1 / 24) + w * (
        t(-1 / 20) + w * (t(17 / 112) + w * t(-31 / 36))))) * r)
    half = t(0.5)
    direct = (_gammaln(half * (ds + 1)) - _gammaln(half * ds)
              - half * (_fnp.where(big, t(0), log_df) + t(_math.log(_math.pi))))
    return _fnp.where(big, series, direct)


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The density.

    >>> from functrans.scipy.stats import t
    >>> round(float(t.pdf(0.0, 1.0)), 12)
    0.318309886184
    """
    return _fnp.exp(logpdf(x, df, loc, scale))
