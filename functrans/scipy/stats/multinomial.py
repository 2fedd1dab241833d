"""The multinomial distribution (``jax.scipy.stats.multinomial``)."""
from __future__ import annotations

from ... import numpy as _fnp
from .._special_gamma import gammaln as _gammaln
from .._special_misc import xlogy as _xlogy
from ._util import as_float as _as_float
from ...typing import Array, ArrayLike

__all__ = ["logpmf", "pmf"]


def logpmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> Array:
    """log n! - sum log x_i! + sum x_i log p_i over the last axis, -inf where the
    counts do not add up to n.

    >>> import numpy as np
    >>> from functrans.scipy.stats import multinomial
    >>> round(float(multinomial.logpmf(np.array([1.0, 1.0]), 2, np.array([0.5, 0.5]))), 12)
    -0.69314718056
    """
    x, n, p = _as_float(x, n, p)
    val = _gammaln(n + 1) + _fnp.sum(_xlogy(x, p) - _gammaln(x + 1), axis=-1)
    ok = _fnp.sum(x, axis=-1) == n
    return _fnp.where(ok, val, val.dtype.type(-float("inf")))


def pmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> Array:
    """The probability mass.

    >>> import numpy as np
    >>> from functrans.scipy.stats import multinomial
    >>> round(float(multinomial.pmf(np.array([1.0, 1.0]), 2, np.array([0.5, 0.5]))), 12)
    0.5
    """
    return _fnp.exp(logpmf(x, n, p))
