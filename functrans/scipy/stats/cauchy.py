"""The Cauchy distribution (``jax.scipy.stats.cauchy``)."""
from __future__ import annotations

import math as _math

from ... import numpy as _fnp
from ._util import log_prob as _log_prob, as_float as _as_float, standardize as _standardize
from ._util import domain_ok as _domain_ok, nan_unless as _nan_unless, log1p_z2 as _log1p_z2
from ...typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "isf", "ppf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """-log(pi scale (1 + z^2)).

    >>> from functrans.scipy.stats import cauchy
    >>> round(float(cauchy.logpdf(0.0)), 12)
    -1.144729885849
    """
    # log1p(z^2) exact past z^2 overflow, limit slopes at x = +-inf (_util.log1p_z2)
    ok = _fnp.asarray(scale) > 0      # first (see t.logpdf); a NaN z is NaN already
    tail, z, _, log_scale = _log1p_z2(x, loc, scale)
    val = -z.dtype.type(_math.log(_math.pi)) - log_scale - tail
    return _nan_unless(ok, val)


def pdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The density.

    >>> from functrans.scipy.stats import cauchy
    >>> round(float(cauchy.pdf(0.0)), 12)
    0.318309886184
    """
    return _fnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """1/2 + arctan(z)/pi, written with arctan(-1/z) in the left tail (no cancellation).

    >>> from functrans.scipy.stats import cauchy
    >>> float(cauchy.cdf(0.0))
    0.5
    """
    return sf(-_fnp.asarray(_as_float(x)), -_fnp.asarray(_as_float(loc)), scale)


def logcdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """log cdf.

    >>> from functrans.scipy.stats import cauchy
    >>> round(float(cauchy.logcdf(0.0)), 12)
    -0.69314718056
    """
    return _log_prob(cdf(x, loc, scale), sf(x, loc, scale))


def sf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """1/2 - arctan(z)/pi; for z > 1 as arctan(1/z)/pi.

    >>> from functrans.scipy.stats import cauchy
    >>> float(cauchy.sf(0.0))
    0.5
    """
    z = _standardize(x, loc, scale)[0]
    t = z.dtype.type
    big = z > 1
    safe = _fnp.where(big, z, t(1))
    val = _fnp.where(big, _fnp.arctan(t(1) / safe) / t(_math.pi),
                     t(0.5) - _fnp.arctan(z) / t(_math.pi))
    return _nan_unless(_domain_ok(z, scale), val)


def logsf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """log sf.

    >>> from functrans.scipy.stats import cauchy
    >>> round(float(cauchy.logsf(0.0)), 12)
    -0.69314718056
    """
    return _log_prob(sf(x, loc, scale), cdf(x, loc, scale))


def ppf(q: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """loc + scale tan(pi (q - 1/2)).

    >>> from functrans.scipy.stats import cauchy
    >>> float(cauchy.ppf(0.5))
    0.0
    """
    q, loc, scale = _as_float(q, loc, scale)
    t = q.dtype.type
    # tan(pi/2) rounds to 1.6e16: the ends take the poles' -1/(pi q) and 1/(pi (1 - q)),
    # +-inf there with slope inf (a constant gave slope 0)
    val = _fnp.tan(t(_math.pi) * (q - t(0.5)))
    lower, upper = t(-1) / (t(_math.pi) * _fnp.abs(q)), t(1) / (t(_math.pi) * (t(1) - q))
    val = _fnp.where(q == 0, lower, _fnp.where(q == 1, upper, val))
    return _nan_unless((scale > 0) & (q >= 0) & (q <= 1), loc + scale * val)


def isf(q: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """loc - scale tan(pi (q - 1/2)).

    >>> from functrans.scipy.stats import cauchy
    >>> float(cauchy.isf(0.5))
    0.0
    """
    return ppf(1.0 - _as_float(q), loc, scale)
