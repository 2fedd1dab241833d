"""``lax.approx_max_k`` / ``lax.approx_min_k`` as JAX computes them on CPU: an exact sort
of the reduction dimension, cut to ``k`` (``aggregate_to_topk=True``) or to the length
XLA's approximate reduction would leave (``aggregate_to_topk=False``), so results and
shapes are JAX's.

Ranking is by value with ``-0.0 == 0.0`` and ties broken by the lower index, as JAX's
comparator (a plain ``>`` / ``<``). A NaN ranks first for both (JAX's own order is
undefined with NaNs; first keeps it visible, as ``lax.top_k`` does).

>>> import numpy as np
>>> v, i = approx_min_k(np.array([[3.0, -0.0, 0.0], [2.0, 5.0, 1.0]]), 2)
>>> v.tolist(), i.tolist()
([[-0.0, 0.0], [1.0, 2.0]], [[1, 2], [2, 0]])
"""
from __future__ import annotations

import math
import operator

from jaxpr_ir import dtype_kind

from . import numpy as fnp
from .lax_scan import top_k
from .primitives.structural import checked_axis
from .typing import Array, ArrayLike

__all__ = ["approx_max_k", "approx_min_k", "approx_top_k_output_size"]


def approx_top_k_output_size(input_size: int, rank: int, k: int, recall_target: float,
                             reduction_input_size_override: int = -1) -> int:
    """Length of the reduced dimension that ``approx_max_k(..., aggregate_to_topk=False)``
    returns for an operand of ``rank`` dimensions whose reduced one has ``input_size``
    entries (XLA's: the windows of its TPU reduction, ``1024`` entries for rank 1, ``128``
    for more, kept just large enough that ``k`` entries collide with probability about
    ``1 - recall_target``). Dimensions of at most one window are kept whole.

    >>> approx_top_k_output_size(4096, 1, 10, 0.95), approx_top_k_output_size(300, 2, 10, 0.95)
    (1024, 300)
    """
    window = 1024 if rank == 1 else 128
    if input_size <= window:
        return input_size
    logical = reduction_input_size_override
    if logical < 0:
        logical = input_size
    if k == 1:
        return window
    # windows needed so that k top entries rarely share one: (1 - 1/m)^(k-1) ~ recall
    needed = int((1.0 - k) / math.log(recall_target)) if recall_target < 1 else logical
    m = min(max(needed, window), logical)
    halvings = max((logical // m).bit_length() - 1, 0)
    if halvings == 0:
        return input_size
    halvings = min(halvings, max((input_size // window - 1).bit_length(), 0))
    windows = -(-input_size // window)
    return -(-windows // (1 << halvings)) * window


def _approx_k(operand, k, dim, recall, override, aggregate, largest):
    name = f"approx_{'max' if largest else 'min'}_k"
    x = fnp.asarray(operand)
    k = operator.index(k)
    if k <= 0:
        raise ValueError(f"{name}: k must be positive, got {k}")
    if x.ndim == 0:
        raise TypeError(f"{name}: the operand must have at least one dimension, got "
                        f"shape ()")
    dim = checked_axis(dim, x.ndim, name)
    n = x.shape[dim]
    if n < k:
        raise ValueError(f"{name}: k={k} is larger than reduction dimension {dim} of "
                         f"shape {x.shape}")
    if dtype_kind(x.dtype) != "f":
        raise ValueError(f"{name}: the operand must be a floating type, got {x.dtype}")
    if not 0.0 < recall <= 1.0:
        raise ValueError(f"{name}: recall_target must be in (0, 1], got {recall}")
    if 0 <= override < n:
        raise ValueError(f"{name}: reduction_input_size_override={override} is smaller "
                         f"than reduction dimension {dim}'s size {n}")
    size = k if aggregate else approx_top_k_output_size(n, x.ndim, k, recall, override)
    if size > n:
        raise ValueError(f"{name}: with aggregate_to_topk=False, "
                         f"reduction_input_size_override={override} and k={k}, XLA's "
                         f"reduction would return {size} > {n} entries (JAX fails here too)")
    moved = fnp.moveaxis(x, dim, -1)
    key = fnp.where(moved == 0, fnp.zeros((), x.dtype), moved)   # -0.0 ties with 0.0
    if not largest:
        key = -key
    key = fnp.where(fnp.isnan(key), fnp.full((), fnp.nan, x.dtype), key)  # NaN: first
    _, idx = top_k(key, size)
    vals = fnp.take_along_axis(moved, idx, axis=-1)
    return [fnp.moveaxis(vals, -1, dim), fnp.moveaxis(idx, -1, dim)]


def approx_max_k(operand: ArrayLike, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> list[Array]:
    """``[values, indices]`` (int32) of the ``k`` largest entries along
    ``reduction_dimension``, descending: exact, as JAX's on CPU. With
    ``aggregate_to_topk=False`` the reduced dimension has
    ``approx_top_k_output_size(...)`` entries (the largest, sorted), as JAX's on CPU.
    Floating operands only; ``recall_target`` in ``(0, 1]``.

    >>> import numpy as np
    >>> [v.tolist() for v in approx_max_k(np.array([3.0, 1.0, 2.0]), 2)]
    [[3.0, 2.0], [0, 2]]
    """
    return _approx_k(operand, k, reduction_dimension, recall_target,
                     reduction_input_size_override, aggregate_to_topk, True)


def approx_min_k(operand: ArrayLike, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> list[Array]:
    """``[values, indices]`` of the ``k`` smallest along ``reduction_dimension``,
    ascending (see ``approx_max_k``).

    >>> import numpy as np
    >>> [v.tolist() for v in approx_min_k(np.array([3.0, 1.0, 2.0]), 2)]
    [[1.0, 2.0], [1, 2]]
    """
    return _approx_k(operand, k, reduction_dimension, recall_target,
                     reduction_input_size_override, aggregate_to_topk, False)
