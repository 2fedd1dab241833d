"""The uniform distribution on [loc, loc + scale] (``jax.scipy.stats.uniform``)."""
from __future__ import annotations

from ... import numpy as _fnp
from ._util import as_float as _as_float, standardize as _standardize
from ._util import domain_ok as _domain_ok, nan_unless as _nan_unless
from ...typing import Array, ArrayLike

__all__ = ["logpdf", "pdf", "cdf", "ppf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """-log(scale) inside, -inf outside.

    >>> from functrans.scipy.stats import uniform
    >>> round(float(uniform.logpdf(0.5)), 10)
    -0.0
    """
    z, log_scale = _standardize(x, loc, scale)
    val = _fnp.where((z >= 0) & (z <= 1), -log_scale, z.dtype.type(-float("inf")))
    return _nan_unless(_domain_ok(z, scale), val)


def pdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """The density.

    >>> from functrans.scipy.stats import uniform
    >>> float(uniform.pdf(2.0))
    0.0
    """
    return _fnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """z clipped to [0, 1].

    >>> from functrans.scipy.stats import uniform
    >>> float(uniform.cdf(0.25))
    0.25
    """
    z = _standardize(x, loc, scale)[0]     # slope 1 at both edges (the closed support), as JAX
    return _nan_unless(_domain_ok(z, scale), _fnp.where(z < 0, 0.0, _fnp.where(z > 1, 1.0, z)))


def ppf(q: ArrayLike, loc: ArrayLike = 0.0, scale: ArrayLike = 1.0) -> Array:
    """loc + q scale on [0, 1], NaN outside.

    >>> from functrans.scipy.stats import uniform
    >>> float(uniform.ppf(0.25))
    0.25
    """
    q, loc, scale = _as_float(q, loc, scale)
    return _nan_unless((q >= 0) & (q <= 1) & (scale > 0), loc + q * scale)
