"""The von Mises distribution (``jax.scipy.stats.vonmises``)."""
from __future__ import annotations

import math as _math

from ... import numpy as _fnp
from .._special_misc import i0e as _i0e
from ._util import as_float as _as_float, nan_unless as _nan_unless
from ...typing import Array, ArrayLike

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, kappa: ArrayLike) -> Array:
    """kappa (cos x - 1) - log(2 pi i0e(kappa)), for every real x (periodic).

    >>> from functrans.scipy.stats import vonmises
    >>> round(float(vonmises.logpdf(0.0, 0.0)), 12)
    -1.837877066409
    """
    x, kappa = _as_float(x, kappa)
    val = kappa * (_fnp.cos(x) - 1) - _fnp.log(x.dtype.type(2 * _math.pi) * _i0e(kappa))
    return _nan_unless(kappa >= 0, val)       # NaN for kappa < 0, as scipy


def pdf(x: ArrayLike, kappa: ArrayLike) -> Array:
    """The density.

    >>> from functrans.scipy.stats import vonmises
    >>> round(float(vonmises.pdf(0.0, 0.0)), 12)
    0.159154943092
    """
    return _fnp.exp(logpdf(x, kappa))
