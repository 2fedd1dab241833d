"""``lax.polygamma(m, x)`` with JAX's operands: ``m`` is a floating array (integer
values; NaN where it is not a non-negative integer), of ``x``'s kind, unlike
``scipy.special.polygamma(n, x)``, whose ``n`` is an integer array.

>>> import numpy as np
>>> from functrans import lax
>>> lax.polygamma(np.array([0.0, 1.0, 2.5]), np.array([1.0, 2.0, 3.0])).round(8).tolist()
[-0.57721566, 0.64493407, nan]
"""
from __future__ import annotations

import numpy as np

from .. import numpy as fnp
from ..scipy._special_gamma import polygamma as _polygamma_n
from ..typing import Array, ArrayLike

__all__ = ["polygamma"]


def polygamma(m: ArrayLike, x: ArrayLike) -> Array:
    """The ``m``-th derivative of digamma at ``x`` (``m`` floating, integer-valued).

    >>> round(float(polygamma(1.0, 1.0)), 12)
    1.644934066848
    """
    m_arr, x_arr = fnp.asarray(m), fnp.asarray(x)
    for name, a in (("m", m_arr), ("x", x_arr)):
        if a.dtype.kind != "f":
            raise TypeError(f"lax.polygamma: {name} must be floating (as JAX's), got "
                            f"{a.dtype}; scipy.special.polygamma takes an integer order")
    ok = (fnp.floor(m_arr) == m_arr) & (m_arr >= 0)
    n = fnp.where(ok, m_arr, 0).astype(np.int64)
    return fnp.where(ok, _polygamma_n(n, x_arr), np.nan)
