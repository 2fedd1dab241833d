"""Searching a sorted array: ``searchsorted`` (binary search, as JAX's default
``method='scan'``; ``method='compare_all'`` compares every pair) and ``digitize``.

>>> import functrans.numpy as fnp
>>> fnp.searchsorted(fnp.asarray([1.0, 2.0, 3.0]), fnp.asarray([2.5])).tolist()
[2]
"""
from __future__ import annotations

import math

import numpy as np

from jaxpr_ir import dtype_kind

from . import _elementwise as el
from . import _elementwise_select as sel
from . import _reductions as red
from . import _structural as st
from ._creation import asarray, full, zeros
from ..array import Array
from ..jit import jit
from ..tracing import Tracer, outermost_trace
from ..typing import ArrayLike

__all__ = ["searchsorted", "digitize"]

_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


def _sort_less(x, y):
    """numpy's sort order as a comparison: NaN is greater than everything else."""
    return el.logical_or(el.less(x, y), el.logical_and(el.isnan(y), el.logical_not(el.isnan(x)))) \
        if dtype_kind(x.dtype) in "fc" or dtype_kind(y.dtype) in "fc" else el.less(x, y)


def _goes_left(a_mid, v, side):
    """Whether each query's insertion point is at or before ``mid``."""
    return el.logical_not(_sort_less(a_mid, v)) if side == "left" else _sort_less(v, a_mid)


def _binary_search(a, v, side):
    """JAX's ``_searchsorted_via_scan``, unrolled: ``ceil(log2(n + 1))`` halvings of the
    interval ``[low, high]`` that holds each query's insertion point, one gather of ``a``
    per halving: O(size(v) log n) work (all pairs was O(size(v) n))."""
    n = a.shape[0]
    low = zeros(v.shape, np.int64)
    high = full(v.shape, n, np.int64)
    for _ in range(math.ceil(math.log2(n + 1))):
        mid = el.right_shift(el.add(low, high), 1)
        left = _goes_left(a[mid], v, side)
        low, high = sel.where(left, low, mid), sel.where(left, mid, high)
    return high


# An eager search for at least this many queries runs through a cached jit (one per
# side; JAX's searchsorted is a jitted function too): eagerly each of the log2(n)
# halvings is ~10 numpy passes over the queries (histogram of 1M values into 50 bins:
# 72 ms of CPU eager, ~16 ms compiled; JAX 0.10.2's eager histogram ~27 ms).
EAGER_COMPILE_MIN = 1 << 16
_COMPILED: dict = {}


def _search(a, v, side):
    """``_binary_search``, compiled when eager on at least ``EAGER_COMPILE_MIN`` queries."""
    if (v.size < EAGER_COMPILE_MIN or outermost_trace() is not None
            or isinstance(a, Tracer) or isinstance(v, Tracer)):
        return _binary_search(a, v, side)
    compiled = _COMPILED.get(side)
    if compiled is None:
        compiled = _COMPILED[side] = jit(lambda a, v: _binary_search(a, v, side))
    return compiled(a, v)


def searchsorted(a: ArrayLike, v: ArrayLike, side: str = "left", sorter: ArrayLike | None = None, *,
                 method: str | None = None) -> Array:
    """Insertion points of ``v`` into the sorted 1-d ``a`` (NaNs sorted last), found by
    binary search (O(size(v) log len(a)), jittable); ``method='compare_all'`` compares
    every pair instead (O(size(v) len(a))), as JAX's.

    >>> import functrans.numpy as fnp
    >>> fnp.searchsorted(fnp.asarray([1, 2, 2, 3]), fnp.asarray([2, 5])).tolist()
    [1, 4]
    """
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if method is not None and method not in _METHODS:
        raise ValueError(f"searchsorted: method must be one of {_METHODS}, got {method!r}")
    a, v = asarray(a), asarray(v)
    if a.ndim != 1:
        raise ValueError(f"searchsorted: a must be one-dimensional, got shape {a.shape}")
    if sorter is not None:
        a = a[asarray(sorter)]
    # JAX's index dtype: int32 (even with x64 on) unless a is too long for it
    dtype = np.int32 if a.shape[0] <= np.iinfo(np.int32).max else np.int64
    if method != "compare_all":
        return asarray(_search(a, v, side), dtype)
    ab = st.reshape(a, (1,) * v.ndim + a.shape)
    vb = st.expand_dims(v, -1)
    hits = _sort_less(ab, vb) if side == "left" else el.logical_not(_sort_less(vb, ab))
    return asarray(red.sum(hits, axis=-1), dtype)


def digitize(x: ArrayLike, bins: ArrayLike, right: bool = False) -> Array:
    """Index of the bin of each ``x`` (bins monotonic, increasing or decreasing).

    >>> import functrans.numpy as fnp
    >>> fnp.digitize(fnp.asarray([0.5, 1.5, 9.0]), fnp.asarray([1.0, 2.0])).tolist()
    [0, 1, 2]
    """
    bins = asarray(bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be one-dimensional, got shape {bins.shape}")
    side = "left" if right else "right"
    inc = searchsorted(bins, x, side=side)
    dec = el.subtract(bins.shape[0], searchsorted(st.flip(bins, 0), x, side=side))
    if bins.shape[0] < 2:
        return inc
    return sel.where(el.greater_equal(bins[-1], bins[0]), inc, dec)
