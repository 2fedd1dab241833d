"""Shared pieces of the distributions: float promotion and the loc/scale change of
variable every location-scale family uses."""
from __future__ import annotations

import numpy as np

from ... import numpy as fnp
from .._special_gamma import as_float
from ...primitives.custom import stop_gradient

__all__ = ["as_float", "standardize", "log1p_z2", "outside", "nan_if", "nan_unless", "domain_ok",
           "log_prob", "log1m_exp"]


def standardize(x, loc, scale):
    """(z, log(scale)) with z = (x - loc) / scale, all broadcast and float."""
    x, loc, scale = as_float(x, loc, scale)
    x, loc, scale = fnp.broadcast_arrays(x, loc, scale)
    return (x - loc) / scale, fnp.log(scale)


def log1p_z2(x, loc, scale, df=None, log_df=None):
    """(log1p(z^2 / df), z, zn, log(scale)) for z = (x - loc) / scale (df = 1 when
    None), exact where z^2 / df overflows and with the limit slopes at z = +-inf.

    Past |z| = T sqrt(df), T = 2 / sqrt(eps), the value is 2 log|z| - log df
    (the dropped log1p(df / z^2) is below eps / 4), taken as 2 log1p(|z| - 1) so that
    one log1p serves both sides of a where on safe arguments: there z is scaled
    without the scale's gradient and the scale slope, -2 / scale, comes through
    log(scale) (through z it was inf * 0 = NaN at x = +-inf); the near side squares
    zn = 0.  The returned z carries no scale slope (for masks and values only); zn is
    z with all its slopes where |z| <= T sqrt(df) (everywhere for df = inf), else 0.
    z is (x - loc) * (1 / scale): scalar parameters stay scalars until the products.
    A NaN z (NaN x, loc or scale, inf - inf) gives NaN on either side of the where.
    ``log_df`` is log(df) where the caller has it.

    >>> l, z, zn, ls = log1p_z2(np.float64(1e200), 0.0, 1.0)
    >>> round(float(l), 6), float(z)
    (921.034037, 1e+200)
    """
    x, loc, scale = as_float(x, loc, scale)
    t = x.dtype.type
    inv, log_scale = t(1) / scale, fnp.log(scale)
    off = t(-2) * (log_scale - stop_gradient(log_scale))      # 0, slope -2 / scale
    if df is not None:
        off = off - (fnp.log(df) if log_df is None else log_df)
    d = x - loc
    z = d * stop_gradient(inv)
    lim = t(2 / np.sqrt(np.finfo(x.dtype).eps))
    az = fnp.abs(z)
    far = az > (lim if df is None else lim * fnp.sqrt(df))    # NaN either side: NaN
    zn = fnp.where(far, t(0), d) * inv
    near = zn * zn if df is None else zn * (zn * (t(1) / df))     # 0, slope 0, at df = inf
    val = fnp.log1p(fnp.where(far, az - t(1), near))
    return fnp.where(far, t(2) * val + off, val), z, zn, log_scale


def outside(cond, value, fill):
    """``value`` where ``cond`` is False, ``fill`` where it is True."""
    return fnp.where(cond, value.dtype.type(fill), value)


def nan_if(cond, value):
    return fnp.where(cond, value.dtype.type(np.nan), value)


def nan_unless(ok, value):
    """``value`` where ``ok`` holds, NaN elsewhere: scipy's answer wherever a parameter
    is outside its domain (scale <= 0, a shape <= 0, p outside [0, 1], ...) or the
    standardized argument is NaN, whatever the formula would give there (often -inf
    or 0 from a support test that NaN fails).  Comparisons with NaN are False, so
    a test like ``a > 0`` also rejects a NaN parameter."""
    return fnp.where(ok, value, value.dtype.type(np.nan))


def domain_ok(z, scale, *conds):
    """The scipy validity mask of a location-scale family: scale > 0, z not NaN
    (a NaN x, loc or scale, or inf - inf), and every extra shape condition."""
    ok = (fnp.asarray(scale) > 0) & ~fnp.isnan(z)
    for c in conds:
        ok = ok & c
    return ok


def log_prob(p, complement):
    """log p, from log1p(-complement) where p > 1/2 (where log p would lose the
    digits of a value near 0).  p = 0 (outside the support) gives -inf with a zero
    gradient, not 0 * inf = nan: the log never sees the 0."""
    low = (p < 0.5) & (p > 0)
    val = fnp.where(p < 0.5, fnp.log(fnp.where(low, p, 0.25)),
                    fnp.log1p(-fnp.where(p < 0.5, 0.25, complement)))
    return fnp.where(p == 0, val.dtype.type(-np.inf), val)


def log1m_exp(t):
    """log(1 - exp(-t)) for t >= 0: log(-expm1(-t)) for t <= log 2, log1p(-exp(-t))
    beyond (each where the other would lose the digits)."""
    near = t <= 0.6931471805599453
    return fnp.where(near, fnp.log(-fnp.expm1(-fnp.where(near, t, 1.0))),
                     fnp.log1p(-fnp.exp(-fnp.where(near, 1.0, t))))
