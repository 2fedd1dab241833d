"""Descriptive statistics of ``jax.scipy.stats``: ``mode``, ``rankdata`` and ``sem``,
each sort-based over one axis (batched with ``vmap`` over the others), so they jit
and vmap; ``sem`` is differentiable, ``mode`` and ``rankdata`` are piecewise
constant, as in JAX."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ... import numpy as fnp
from ...batching import vmap
from ...typing import Array, ArrayLike

__all__ = ["ModeResult", "mode", "rankdata", "sem"]

_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


class ModeResult(NamedTuple):
    """What :func:`mode` returns: the most common value and how often it occurs.

    >>> ModeResult._fields
    ('mode', 'count')
    """
    mode: Any
    count: Any


def _check_nan_policy(name, nan_policy, allowed=("propagate",)):
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"{name}: illegal nan_policy value {nan_policy!r}; expected one "
                         "of 'propagate', 'omit', 'raise'")
    if nan_policy not in allowed:
        raise ValueError(f"{name}: nan_policy={nan_policy!r} is not supported (as in "
                         f"jax.scipy.stats); use {' or '.join(map(repr, allowed))}")


def _along(fn, x, axis):
    """``fn`` of each 1-d slice of ``x`` along ``axis`` (``fn`` returns a tuple of
    scalars or a tuple of arrays shaped like its input), the axis moved back."""
    moved = fnp.moveaxis(x, axis, -1)
    flat = moved.reshape((-1, moved.shape[-1]))
    outs = vmap(fn)(flat)
    return [o.reshape(moved.shape[:-1] + o.shape[1:]) for o in outs]


def _mode_1d(x):
    arr = fnp.sort(x)
    same = (arr[1:] == arr[:-1]) | (fnp.isnan(arr[1:]) & fnp.isnan(arr[:-1]))
    run = fnp.cumsum(fnp.concatenate([fnp.zeros(1, np.int64), (~same).astype(np.int64)]))
    counts = fnp.zeros(arr.shape[0], np.int64).at[run].add(1)[run]
    # the first maximal run of the sorted array: the smallest of the most common (NaN
    # sorts last and counts as one value, as scipy)
    best = fnp.argmax(counts)
    return arr[best], counts[best]


def mode(a: ArrayLike, axis: int | None = 0, nan_policy: str = "propagate",
         keepdims: bool = False) -> ModeResult:
    """The most common value along ``axis`` (all values when None) and its count;
    ties go to the smallest value, NaNs count as equal, as ``scipy.stats.mode``.

    >>> import numpy as np
    >>> r = mode(np.array([3, 1, 1, 3, 2]))
    >>> int(r.mode), int(r.count)
    (1, 2)
    """
    _check_nan_policy("mode", nan_policy)
    x = fnp.atleast_1d(fnp.asarray(a))
    if axis is None:
        if x.size == 0:
            raise ValueError(f"mode: the input (shape {tuple(x.shape)}) is empty")
        m, c = _mode_1d(x.ravel())
        shape = (1,) * x.ndim if keepdims else ()
        return ModeResult(fnp.reshape(m, shape), fnp.reshape(c, shape))
    axis = _canonical_axis("mode", axis, x.ndim)
    if x.shape[axis] == 0:
        raise ValueError(f"mode: axis {axis} of the input (shape {tuple(x.shape)}) is empty")
    m, c = _along(_mode_1d, x, axis)
    if keepdims:
        m, c = fnp.expand_dims(m, axis), fnp.expand_dims(c, axis)
    return ModeResult(m, c)


def _canonical_axis(name, axis, ndim):
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of {ndim} "
                         "dimensions")
    return axis % ndim


def _rank_1d(x, method):
    n = x.shape[0]
    order = fnp.argsort(x, stable=True)
    arr = x[order]
    if method == "ordinal":
        ranks = fnp.zeros(n, np.int64).at[order].set(fnp.arange(1, n + 1))
        out = ranks.astype(np.float64)
    elif method == "dense":
        new = fnp.concatenate([fnp.ones(1, bool), arr[1:] != arr[:-1]])
        out = fnp.zeros(n, np.int64).at[order].set(fnp.cumsum(new)).astype(np.float64)
    else:
        lo = fnp.searchsorted(arr, x, side="left").astype(np.float64) + 1
        hi = fnp.searchsorted(arr, x, side="right").astype(np.float64)
        out = {"min": lo, "max": hi}.get(method, (lo + hi) / 2)
    return (fnp.where(fnp.any(fnp.isnan(x)), np.nan, out),)


def rankdata(a: ArrayLike, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate") -> Array:
    """Ranks 1..n of the data (float64), ties resolved by ``method`` ("average",
    "min", "max", "dense", "ordinal"), over the flattened array or along ``axis``;
    a slice holding a NaN ranks as all NaN, as ``scipy.stats.rankdata``.

    >>> import numpy as np
    >>> rankdata(np.array([10, 30, 20, 20])).tolist()
    [1.0, 4.0, 2.5, 2.5]
    """
    _check_nan_policy("rankdata", nan_policy)
    if method not in _RANK_METHODS:
        raise ValueError(f"rankdata: unknown method {method!r}; use one of {_RANK_METHODS}")
    x = fnp.asarray(a)
    if axis is None:
        return _rank_1d(x.ravel(), method)[0] if x.size else fnp.zeros(0)
    axis = _canonical_axis("rankdata", axis, x.ndim)
    (out,) = _along(lambda v: _rank_1d(v, method), x, axis)
    return fnp.moveaxis(out, -1, axis)


def sem(a: ArrayLike, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate",
        *, keepdims: bool = False) -> Array:
    """The standard error of the mean, std(a, ddof) / sqrt(n), along ``axis`` (all
    values when None); ``nan_policy="omit"`` leaves NaNs out of both.

    >>> import numpy as np
    >>> round(float(sem(np.array([1.0, 2.0, 4.0]))), 12)
    0.881917103688
    """
    _check_nan_policy("sem", nan_policy, ("propagate", "omit"))
    b = fnp.asarray(a)
    if not np.issubdtype(b.dtype, np.inexact):
        b = b.astype(np.float64)
    if axis is not None:
        axis = _canonical_axis("sem", axis, b.ndim)
    if nan_policy == "omit":
        count = fnp.sum(~fnp.isnan(b), axis=axis, keepdims=keepdims)
        return fnp.nanstd(b, axis=axis, ddof=ddof, keepdims=keepdims) / \
            fnp.sqrt(count).astype(b.dtype)
    size = b.size if axis is None else b.shape[axis]
    return fnp.std(b, axis=axis, ddof=ddof, keepdims=keepdims) / b.dtype.type(np.sqrt(size))
