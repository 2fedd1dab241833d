"""Sorting functions of ``functrans.numpy``: ``sort`` and ``argsort``, always stable.

>>> import functrans.numpy as fnp
>>> fnp.argsort(fnp.asarray([3.0, 1.0, 2.0])).tolist()
[1, 2, 0]
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import dtype_kind

from ..tracing import Tracer, wrap
from ..primitives import structural as S
from ..primitives.elementwise import imag, real, sub
from ..primitives.slicing import rev
from ..primitives.sorting import sort_p
from ._util import asarray, canonicalize_axis, check_arraylike
from ..array import Array
from ..typing import ArrayLike
from ..weak_values import traced_when_weak

__all__ = ["sort", "argsort"]


def _prepare(name, a, axis):
    check_arraylike(name, a)
    a = asarray(a)
    if axis is None:
        a = S.reshape(a, (int(np.prod(a.shape)),)) if isinstance(a, Tracer) else a.reshape(-1)
        axis = 0
    if a.ndim == 0:
        raise ValueError(f"{name}: axis {axis} is out of bounds for a scalar (rank 0)")
    return a, canonicalize_axis(axis, a.ndim)


def _sort_by(a, other, axis):
    """``sort_p`` of ``other`` keyed by ``a``; complex ``a`` lexicographically by (real,
    imag), each NaN-last, which is numpy's complex order."""
    if dtype_kind(a.dtype) != "c":
        return sort_p.bind(a, other, dimension=axis, is_stable=True, num_keys=1)[1]
    return sort_p.bind(real(a), imag(a), other, dimension=axis, is_stable=True, num_keys=2)[2]


def _reverse(x, axis):
    """Reverse ``x`` along ``axis`` (``rev``: a strided view for the backends, where a
    sort keyed by descending positions had cost a second sort)."""
    return rev(x, (axis,))


@traced_when_weak
def sort(a: ArrayLike, axis: int = -1, kind: str | None = None, order: str | None = None, *,
         stable: bool = True, descending: bool = False) -> Array:
    """A sorted copy of ``a`` along ``axis`` (None: flattened); NaNs sort last, complex
    numbers by real part, then imaginary part.

    >>> import functrans.numpy as fnp
    >>> fnp.sort(fnp.asarray([[3, 1], [0, 2]]), axis=0).tolist()
    [[0, 1], [3, 2]]
    """
    if order is not None:
        raise ValueError("sort: 'order' (structured arrays) is not supported")
    a, axis = _prepare("sort", a, axis)
    if not isinstance(a, Tracer):
        out = np.sort(a.view(np.ndarray), axis=axis, kind="stable")   # numpy on numpy
        return wrap(np.flip(out, axis) if descending else out)
    out = (sort_p.bind(a, dimension=axis, is_stable=True, num_keys=1)[0]
           if dtype_kind(a.dtype) != "c" else _sort_by(a, a, axis))
    return _reverse(out, axis) if descending else out


def argsort(a: ArrayLike, axis: int = -1, kind: str | None = None, order: str | None = None, *,
            stable: bool = True, descending: bool = False) -> Array:
    """Indices (int64) that sort ``a`` along ``axis``; ties keep their order (stable),
    also with ``descending=True``.

    >>> import functrans.numpy as fnp
    >>> fnp.argsort(fnp.asarray([1, 3, 3, 2]), descending=True).tolist()
    [1, 2, 3, 0]
    """
    if order is not None:
        raise ValueError("argsort: 'order' (structured arrays) is not supported")
    a, axis = _prepare("argsort", a, axis)
    n = a.shape[axis]
    if not isinstance(a, Tracer):
        if not descending:
            return wrap(np.argsort(a.view(np.ndarray), axis=axis, kind="stable").astype(np.int64))
        idx = np.argsort(np.flip(a, axis), axis=axis, kind="stable")
        return wrap((n - 1 - np.flip(idx, axis)).astype(np.int64))
    iota = S.broadcast_in_dim(np.arange(n, dtype=np.int64), tuple(a.shape), (axis,))
    if not descending:
        return _sort_by(a, iota, axis)
    # stable descending: sort the reversed array, reverse the result, map the indices back
    idx = _sort_by(_reverse(a, axis), iota, axis)
    return sub(np.full(a.shape, n - 1, np.int64), _reverse(idx, axis))
