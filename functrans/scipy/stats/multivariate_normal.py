"""The multivariate normal distribution (``jax.scipy.stats.multivariate_normal``)."""
from __future__ import annotations

import math as _math

from ... import lax as _lax
from ... import numpy as _fnp
from ._util import as_float as _as_float
from ...typing import Array, ArrayLike

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike,
           allow_singular: bool | None = None) -> Array:
    """log density with a positive-definite ``cov`` (d, d) (or a scalar/vector of
    variances), by its Cholesky factor; ``x`` is (..., d).

    >>> import numpy as np
    >>> from functrans.scipy.stats import multivariate_normal
    >>> round(float(multivariate_normal.logpdf(np.zeros(2), np.zeros(2), np.eye(2))), 12)
    -1.837877066409
    """
    if allow_singular:
        raise ValueError("multivariate_normal: allow_singular=True is not supported (as jax.scipy)")
    x, mean, cov = _as_float(x, mean, cov)
    if mean.ndim == 0:      # a scalar mean: the univariate law, elementwise (scipy, JAX)
        return (-0.5 * (x - mean) ** 2 / cov
                - 0.5 * (x.dtype.type(_math.log(2 * _math.pi)) + _fnp.log(cov)))
    d = x.shape[-1] if x.ndim else 1
    if cov.ndim < 2:
        cov = _fnp.eye(d, dtype=x.dtype) * cov
    chol = _fnp.linalg.cholesky(cov)
    diff = _fnp.broadcast_to(x - mean, _fnp.broadcast_shapes(x.shape, mean.shape))
    if chol.ndim == 2:
        flat = diff.reshape(-1, d).T
        y = _lax.triangular_solve(chol, flat, left_side=True, lower=True)
        maha = _fnp.sum(y * y, axis=0).reshape(diff.shape[:-1])
    else:       # a batch of covariances (..., d, d), broadcast with x's batch (as JAX)
        batch = _fnp.broadcast_shapes(diff.shape[:-1], chol.shape[:-2])
        cb = _fnp.broadcast_to(chol, batch + (d, d))
        db = _fnp.broadcast_to(diff, batch + (d,))[..., None]
        y = _lax.triangular_solve(cb, db, left_side=True, lower=True)[..., 0]
        maha = _fnp.sum(y * y, axis=-1)
    log_det = _fnp.sum(_fnp.log(_fnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * maha - log_det - x.dtype.type(0.5 * d * _math.log(2 * _math.pi))


def pdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike) -> Array:
    """The density.

    >>> import numpy as np
    >>> from functrans.scipy.stats import multivariate_normal
    >>> round(float(multivariate_normal.pdf(np.zeros(2), np.zeros(2), np.eye(2))), 12)
    0.159154943092
    """
    return _fnp.exp(logpdf(x, mean, cov))
