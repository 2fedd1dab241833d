"""Reductions of ``functrans.numpy``.

>>> import functrans.numpy as fnp
>>> fnp.sum(fnp.ones((2, 3)), axis=1).tolist()
[3.0, 3.0]
"""
from __future__ import annotations

import numpy as np

from ..tracing import Tracer, wrap
from ..primitives import reductions as R
from ..primitives.elementwise import convert_element_type
from ._util import asarray, canonicalize_axes

__all__ = ["sum"]


def sum(a, axis=None, dtype=None, keepdims=False):
    """Sum over ``axis`` (None: all axes); bools and small ints sum as int64, as numpy."""
    if not isinstance(a, Tracer):
        return wrap(np.sum(asarray(a), axis=axis, dtype=dtype, keepdims=keepdims))
    axes = canonicalize_axes(axis, a.ndim)
    dt = np.dtype(dtype) if dtype is not None else (
        np.dtype(np.int64) if a.dtype.kind in "b" or (a.dtype.kind in "iu" and a.dtype.itemsize < 8)
        else a.dtype)
    out = R.reduce_sum(convert_element_type(a, dt), axes)
    if keepdims:
        from ._structural import reshape
        out = reshape(out, tuple(1 if i in axes else s for i, s in enumerate(a.shape)))
    return out
