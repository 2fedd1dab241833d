"""``functrans.ops``: segment reductions with the API of ``jax.ops`` — ``segment_sum``,
``segment_prod``, ``segment_max``, ``segment_min``: ``out[k]`` reduces the rows ``i`` of
``data`` with ``segment_ids[i] == k``; ids outside ``[0, num_segments)`` (negative ones
too) are dropped, and an empty segment holds the reduction's identity (0, 1, the dtype's
lowest / highest value: ``-inf`` / ``inf`` for floats), as in JAX.

>>> import functrans.numpy as fnp
>>> segment_sum(fnp.asarray([1.0, 2.0, 3.0]), fnp.asarray([0, 2, 0]), 3).tolist()
[4.0, 0.0, 2.0]
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxpr_ir import dtype_kind

from . import numpy as fnp
from .array import Array
from .typing import ArrayLike

__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]


def _identity(dtype, which: str):
    dtype = np.dtype(dtype)
    if which in ("add", "multiply"):
        return 0 if which == "add" else 1
    hi = which == "min"
    if dtype_kind(dtype) == "b":
        return hi
    if dtype_kind(dtype) in "iu":
        info = np.iinfo(dtype)
        return info.max if hi else info.min
    return np.inf if hi else -np.inf


def _segment(which: str, data, segment_ids, num_segments, mode) -> Array:
    data, ids = fnp.asarray(data), fnp.asarray(segment_ids)
    if ids.ndim != 1 or data.ndim < 1 or ids.shape[0] != data.shape[0]:
        raise ValueError(f"segment_{which}: segment_ids must be 1-d with data's leading "
                         f"length, got data {data.shape} and segment_ids {ids.shape}")
    if not fnp.issubdtype(ids.dtype, fnp.integer):
        raise TypeError(f"segment_{which}: segment_ids must be integers, got {ids.dtype}")
    if num_segments is None:
        num_segments = int(fnp.max(ids)) + 1 if ids.shape[0] else 0
    n = int(num_segments)
    if mode not in (None, "drop", "fill"):
        raise ValueError(f"segment_{which}: only mode None/'drop' (JAX's FILL_OR_DROP) is "
                         f"supported, got {mode!r}")
    ids = fnp.where(ids < 0, n, ids)   # JAX does not wrap negative ids: they are dropped
    out = fnp.full((n,) + data.shape[1:], _identity(data.dtype, which), data.dtype)
    return getattr(out.at[ids], which)(data, mode="drop")


def segment_sum(data: ArrayLike, segment_ids: ArrayLike, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None) -> Array:
    """Sum of ``data``'s rows per segment (``jax.ops.segment_sum``).

    >>> import functrans.numpy as fnp
    >>> segment_sum(fnp.ones((3, 2)), fnp.asarray([1, 1, 0]), 2).tolist()
    [[1.0, 1.0], [2.0, 2.0]]
    """
    return _segment("add", data, segment_ids, num_segments, mode)


def segment_prod(data: ArrayLike, segment_ids: ArrayLike, num_segments: int | None = None,
                 indices_are_sorted: bool = False, unique_indices: bool = False,
                 bucket_size: int | None = None, mode: Any = None) -> Array:
    """Product of ``data``'s rows per segment (``jax.ops.segment_prod``); empty: 1.

    >>> import functrans.numpy as fnp
    >>> segment_prod(fnp.asarray([2.0, 3.0, 4.0]), fnp.asarray([0, 0, 2]), 3).tolist()
    [6.0, 1.0, 4.0]
    """
    return _segment("multiply", data, segment_ids, num_segments, mode)


def segment_max(data: ArrayLike, segment_ids: ArrayLike, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None) -> Array:
    """Maximum of ``data``'s rows per segment (``jax.ops.segment_max``); empty: -inf.

    >>> import functrans.numpy as fnp
    >>> segment_max(fnp.asarray([2.0, 3.0, 4.0]), fnp.asarray([0, 0, 2]), 3).tolist()
    [3.0, -inf, 4.0]
    """
    return _segment("max", data, segment_ids, num_segments, mode)


def segment_min(data: ArrayLike, segment_ids: ArrayLike, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None) -> Array:
    """Minimum of ``data``'s rows per segment (``jax.ops.segment_min``); empty: inf.

    >>> import functrans.numpy as fnp
    >>> segment_min(fnp.asarray([2.0, 3.0, 4.0]), fnp.asarray([0, 0, 2]), 3).tolist()
    [2.0, inf, 4.0]
    """
    return _segment("min", data, segment_ids, num_segments, mode)
