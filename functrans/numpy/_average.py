"""``average`` of ``functrans.numpy``: the weighted mean ``sum(a * w) / sum(w)``, weights
of ``a``'s shape or of the reduced axes' shape (numpy 2's and JAX's rule).

>>> import functrans.numpy as fnp
>>> fnp.average(fnp.asarray([1.0, 2.0, 6.0])).item()
3.0
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..tracing import wrap
from ._elementwise import multiply, true_divide
from ._reductions import mean, sum
from ._structural import broadcast_to, reshape as _np_reshape, transpose as _transpose
from ._util import asarray, canonicalize_axes, canonicalize_axis, promote
from ..array import Array
from ..typing import ArrayLike

__all__ = ["average"]


def average(a: ArrayLike, axis: int | Sequence[int] | None = None, weights: ArrayLike | None = None,
            returned: bool = False, keepdims: bool = False) -> Array | tuple[Array, Array]:
    """Weighted mean ``sum(a * w) / sum(w)`` (``mean`` without weights).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.average(fnp.asarray([1.0, 3.0]), weights=fnp.asarray([3.0, 1.0])).item()
    1.5
    """
    a = asarray(a)
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        if not returned:
            return avg
        n = math.prod(a.shape[x] for x in canonicalize_axes(axis, a.ndim))
        return avg, wrap(np.broadcast_to(np.asarray(n, avg.dtype), avg.shape).copy())
    w = asarray(weights)
    if w.shape != a.shape:
        if axis is None:
            raise TypeError(f"average: weights of shape {w.shape} do not match a of shape "
                            f"{a.shape}; weights of another shape need an axis")
        # numpy 2's (and JAX's) rule: weights of shape a.shape[axis] (axes in the given order)
        axes = tuple(canonicalize_axis(x, a.ndim) for x in np.atleast_1d(axis).tolist())
        if w.shape != tuple(a.shape[x] for x in axes):
            raise ValueError(f"average: weights of shape {w.shape} do not match axis {axis} "
                             f"of a of shape {a.shape}")
        w = _transpose(w, tuple(np.argsort(axes).tolist()))
        w = broadcast_to(_np_reshape(w, tuple(n if i in axes else 1
                                               for i, n in enumerate(a.shape))), a.shape)
    # One inexact dtype for both, chosen (and checked under numpy_dtype_promotion=
    # "strict") once here, as numpy/JAX: products of integers in float64 (int8 127 * 2
    # wrapped), and no implicit mixed-dtype op below that the strict mode would reject.
    a, w = promote("average", a, w, ranks=False)
    if np.dtype(a.dtype).kind in "iub":
        a, w = asarray(a, np.float64), asarray(w, np.float64)
    scl = sum(w, axis=axis, keepdims=keepdims)
    avg = true_divide(sum(multiply(a, w), axis=axis, keepdims=keepdims), scl)
    return (avg, broadcast_to(asarray(scl, avg.dtype), avg.shape)) if returned else avg
