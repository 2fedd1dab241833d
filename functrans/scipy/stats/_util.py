"""Shared pieces of the distributions: float promotion and the loc/scale change of
variable every location-scale family uses."""
from __future__ import annotations

import numpy as np

from ... import numpy as fnp
from .._special_gamma import as_float

__all__ = ["as_float", "standardize", "outside", "nan_if", "nan_unless", "domain_ok",
           "log_prob", "log1m_exp"]


def standardize(x, loc, scale):
    """(z, log(scale)) with z = (x - loc) / scale, all broadcast and float."""
    x, loc, scale = as_float(x, loc, scale)
    x, loc, scale = fnp.broadcast_arrays(x, loc, scale)
    return (x - loc) / scale, fnp.log(scale)


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
