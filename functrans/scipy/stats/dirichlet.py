"""The Dirichlet distribution (``jax.scipy.stats.dirichlet``)."""
from __future__ import annotations

import numpy as _np

from ... import numpy as _fnp
from .._special_gamma import gammaln as _gammaln
from .._special_misc import xlogy as _xlogy
from ._util import as_float as _as_float
from ...typing import Array, ArrayLike

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, alpha: ArrayLike) -> Array:
    """sum((alpha - 1) log x) - log B(alpha) on the simplex (x of shape (k, ...),
    alpha of shape (k,)), -inf off it.

    >>> import numpy as np
    >>> from functrans.scipy.stats import dirichlet
    >>> round(float(dirichlet.logpdf(np.array([0.5, 0.5]), np.array([1.0, 1.0]))), 12)
    0.0
    """
    x, alpha = _as_float(x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"dirichlet: alpha must be 1-D, got shape {alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError(f"dirichlet: x's first axis ({x.shape[0]}) must match alpha "
                         f"({alpha.shape[0]}) or be one shorter")
    if x.shape[0] != alpha.shape[0]:      # the last entry implied, as scipy and JAX
        x = _fnp.concatenate([x, 1 - _fnp.sum(x, axis=0, keepdims=True)], axis=0)
    a = alpha.reshape(alpha.shape + (1,) * (x.ndim - 1))
    log_norm = _fnp.sum(_gammaln(alpha)) - _gammaln(_fnp.sum(alpha))
    val = _fnp.sum(_xlogy(a - 1, x), axis=0) - log_norm
    # on the simplex to rounding: 1e-10 in float64 (scipy's 1e-9), JAX's 1e-6 below (a
    # float32 point summing to 1 + 1 ulp was off it: -inf)
    tol = 1e-10 if x.dtype == _np.float64 else 1e-6
    on_simplex = _fnp.all(x >= 0, axis=0) & (_fnp.abs(_fnp.sum(x, axis=0) - 1) < tol)
    return _fnp.where(on_simplex, val, x.dtype.type(-float("inf")))


def pdf(x: ArrayLike, alpha: ArrayLike) -> Array:
    """The density.

    >>> import numpy as np
    >>> from functrans.scipy.stats import dirichlet
    >>> round(float(dirichlet.pdf(np.array([0.5, 0.5]), np.array([2.0, 2.0]))), 12)
    1.5
    """
    return _fnp.exp(logpdf(x, alpha))
