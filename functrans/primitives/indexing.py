"""Indexing primitives: dynamic slices (gather and scatter are in ``gather_scatter``).

``dynamic_slice(x, *starts, slice_sizes)`` and ``dynamic_update_slice(x, update,
*starts)`` take scalar integer start operands. As in JAX, each start is clamped
into ``[0, dim - size]`` so the window always lies inside the operand (an index
past the end reads or writes the last full window, never out of bounds).

Batching never loops: batched dynamic-slice starts become a gather (and
dynamic_update_slice a scatter) over an index grid.

>>> import numpy as np
>>> dynamic_slice(np.arange(5.0), (4,), (2,)).tolist()
[3.0, 4.0]
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from jaxpr_ir import ShapedArray
from .base import (Primitive, UndefinedPrimal, Zero, aval, instantiate, move_batch_axis,
                   not_mapped_size)
from .structural import (broadcast_in_dim, broadcasted_iota, checked_bind, full, reshape,
                         squeeze, zeros_like_aval)
from .slicing import concatenate
from . import elementwise as E
from .gather_scatter import gather, gather_p, saturate_uint64, scatter, scatter_add, \
    scatter_p  # noqa: F401  (the canonical forms, used by functrans.numpy's indexing)
from ..key_array import KeyArray, key_words
from ..typing import Array, ArrayLike

__all__ = ["dynamic_slice", "dynamic_update_slice", "dynamic_slice_in_dim",
           "dynamic_index_in_dim", "clamp_indices"]


def _is_undefined(x):
    return isinstance(x, UndefinedPrimal)


def _check_starts(name, x, starts):
    if len(starts) != x.ndim:
        raise TypeError(f"{name}: needs one start index per axis of operand {x.str_short()}, "
                        f"got {len(starts)}")
    for i, s in enumerate(starts):
        if s.shape != () or s.dtype.kind not in "iu":
            raise TypeError(f"{name}: start index {i} must be a scalar integer, got "
                            f"{s.str_short()}")


def _clamped_starts(starts, shape, sizes):
    return tuple(int(min(max(int(s), 0), d - n)) for s, d, n in zip(starts, shape, sizes))


def clamp_indices(idx: ArrayLike, lo: int, hi: int) -> Array:
    """Clamp an integer array (or tracer) into ``[lo, hi]`` elementwise with selects.

    >>> clamp_indices(np.array([-3, 1, 9]), 0, 4).tolist()
    [0, 1, 4]
    """
    a = aval(idx)
    lo_a, hi_a = full(a.shape, lo, a.dtype), full(a.shape, hi, a.dtype)
    idx = E.select_n(E.lt(idx, lo_a), idx, lo_a)
    return E.select_n(E.gt(idx, hi_a), idx, hi_a)


def _start_grid(starts, shape, sizes, size, dtype):
    """Index rows ``(n, s_0[n] + i_0, ...)`` of shape ``(N, *sizes, ndim + 1)`` for batched
    starts (each ``(N,)``), the starts clamped so the window fits."""
    grid_shape = (size,) + tuple(sizes)
    cols = [reshape(broadcasted_iota(dtype, grid_shape, 0), grid_shape + (1,))]
    for j, (s, d, n) in enumerate(zip(starts, shape, sizes)):
        s = clamp_indices(E.convert_element_type(s, dtype), 0, d - n)
        col = E.add(broadcast_in_dim(s, grid_shape, (0,)), broadcasted_iota(dtype, grid_shape, j + 1))
        cols.append(reshape(col, grid_shape + (1,)))
    return concatenate(cols, len(grid_shape))


def _batched_starts(starts, sdims, size):
    dt = np.result_type(*[aval(s).dtype for s in starts], np.int32)
    return [move_batch_axis(E.convert_element_type(s, dt), d, 0, size)
            for s, d in zip(starts, sdims)], dt


# --------------------------------------------------------------------------- dynamic_slice

dynamic_slice_p = Primitive("dynamic_slice")


def _dynamic_slice_aval(x, *starts, slice_sizes):
    _check_starts("dynamic_slice", x, starts)
    if len(slice_sizes) != x.ndim or any(not 0 <= n <= d for n, d in zip(slice_sizes, x.shape)):
        raise ValueError(f"dynamic_slice: slice_sizes {slice_sizes} do not fit operand shape "
                         f"{x.shape}")
    return ShapedArray(slice_sizes, x.dtype, x.weak_type)


def _dynamic_slice_impl(x, *starts, slice_sizes):
    x = np.asarray(x)
    st = _clamped_starts(starts, x.shape, slice_sizes)
    return x[tuple(slice(s, s + n) for s, n in zip(st, slice_sizes))]


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    x, *starts = primals
    out = dynamic_slice_p.bind(x, *starts, slice_sizes=slice_sizes)
    t = tangents[0]
    if type(t) is Zero:
        return out, Zero(aval(out))
    return out, dynamic_slice_p.bind(t, *starts, slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct, x, *starts, slice_sizes):
    if type(ct) is Zero:
        return [Zero(x.aval)] + [None] * len(starts)
    zeros = zeros_like_aval(x.aval)
    return [dynamic_update_slice_p.bind(zeros, ct, *starts)] + [None] * len(starts)


def _dynamic_slice_batch(args, dims, *, slice_sizes):
    (x, *starts), (dx, *sdims) = args, dims
    size = not_mapped_size(args, dims)
    if all(d is None for d in sdims):
        zero = np.zeros((), aval(starts[0]).dtype if starts else np.int32)
        starts = starts[:dx] + [zero] + starts[dx:]
        sizes = slice_sizes[:dx] + (size,) + slice_sizes[dx:]
        return dynamic_slice_p.bind(x, *starts, slice_sizes=sizes), dx
    # per-example starts: gather the window of each example through an index grid
    x = move_batch_axis(x, dx, 0, size)
    starts, dt = _batched_starts(starts, sdims, size)
    idx = _start_grid(starts, aval(x).shape[1:], slice_sizes, size, dt)
    return gather(x, idx, len(slice_sizes) + 1), 0


dynamic_slice_p.def_rules(abstract_eval=_dynamic_slice_aval, impl=_dynamic_slice_impl,
                          jvp=_dynamic_slice_jvp, transpose=_dynamic_slice_transpose,
                          batch=_dynamic_slice_batch)


def _wrap_starts(x, starts, negative_ok):
    """Starts as arrays; with ``negative_ok`` (JAX's allow_negative_indices, default) a
    negative start counts from the end of its axis (``s + dim``) before the clamp."""
    out = []
    for s, d in zip(starts, aval(x).shape):
        if isinstance(s, (int, np.integer)) or (isinstance(s, np.ndarray) and s.ndim == 0):
            s = np.asarray(s)
            s = np.asarray(s + d, s.dtype) if negative_ok and s.dtype.kind == "i" and s < 0 else s
        elif negative_ok and aval(s).dtype.kind == "i" and aval(s).shape == ():
            dt = aval(s).dtype
            s = E.select_n(E.lt(s, full((), 0, dt)), s, E.add(s, full((), d, dt)))
        out.append(s)
    return out + list(starts[len(out):])


def dynamic_slice(operand: ArrayLike, start_indices: Sequence[ArrayLike],
                  slice_sizes: Sequence[int], *, allow_negative_indices: bool = True) -> Array:
    """The window ``x[s0:s0+n0, ...]`` with traced starts (negative: from the end), clamped.

    >>> dynamic_slice(np.arange(5.0), (np.int32(-2),), (2,)).tolist()
    [3.0, 4.0]
    """
    if isinstance(operand, KeyArray):              # typed keys: slice their words
        return KeyArray(dynamic_slice(operand._base, list(start_indices) + [np.int32(0)],
                                      list(slice_sizes) + [2],
                                      allow_negative_indices=allow_negative_indices))
    starts = _wrap_starts(operand, list(start_indices), allow_negative_indices)
    return checked_bind(dynamic_slice_p, operand, *starts,
                        slice_sizes=tuple(int(n) for n in slice_sizes))


def dynamic_slice_in_dim(operand: ArrayLike, start_index: ArrayLike, slice_size: int,
                         axis: int = 0, *, allow_negative_indices: bool = True) -> Array:
    """``dynamic_slice`` along one axis (other axes taken whole); JAX's parameter names.

    >>> import numpy as np
    >>> dynamic_slice_in_dim(np.arange(5), np.int32(3), 2).tolist()
    [3, 4]
    """
    x, start, size = operand, start_index, slice_size
    if isinstance(x, KeyArray):
        return KeyArray(dynamic_slice_in_dim(x._base, start, size, int(axis) % x.ndim,
                                             allow_negative_indices=allow_negative_indices))
    shape = aval(x).shape
    if not -len(shape) <= int(axis) < len(shape):   # % folded it onto another axis
        raise ValueError(f"dynamic_slice_in_dim: axis {axis} out of range for operand shape "
                         f"{shape}")
    axis = int(axis) % len(shape)
    zero = np.zeros((), aval(start).dtype if not isinstance(start, int) else np.int64)
    starts = [zero] * len(shape)
    starts[axis] = start
    sizes = list(shape)
    sizes[axis] = int(size)
    return dynamic_slice(x, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand: ArrayLike, index: ArrayLike, axis: int = 0,
                         keepdims: bool = True, *, allow_negative_indices: bool = True) -> Array:
    """``operand`` at a traced ``index`` (negative: from the end; clamped) along ``axis``.

    >>> import numpy as np
    >>> dynamic_index_in_dim(np.arange(6).reshape(3, 2), -1, keepdims=False).tolist()
    [4, 5]
    """
    x = operand
    if isinstance(x, KeyArray):
        out = dynamic_slice_in_dim(x, index, 1, axis, allow_negative_indices=allow_negative_indices)
        return out if keepdims else out.squeeze(int(axis) % x.ndim)
    out = dynamic_slice_in_dim(x, index, 1, axis, allow_negative_indices=allow_negative_indices)
    return out if keepdims else squeeze(out, (int(axis) % len(aval(x).shape),))


# --------------------------------------------------------------------------- dynamic_update_slice

dynamic_update_slice_p = Primitive("dynamic_update_slice")


def _dus_aval(x, update, *starts):
    _check_starts("dynamic_update_slice", x, starts)
    if update.dtype != x.dtype or update.ndim != x.ndim or \
            any(u > d for u, d in zip(update.shape, x.shape)):
        raise TypeError(f"dynamic_update_slice: update {update.str_short()} must have the "
                        f"operand's dtype and rank and fit inside operand {x.str_short()}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _dus_impl(x, update, *starts):
    out = np.array(x, copy=True)
    update = np.asarray(update)
    st = _clamped_starts(starts, out.shape, update.shape)
    out[tuple(slice(s, s + n) for s, n in zip(st, update.shape))] = update
    return out


def _dus_jvp(primals, tangents):
    x, u, *starts = primals
    tx, tu = tangents[:2]
    out = dynamic_update_slice_p.bind(x, u, *starts)
    if type(tx) is Zero and type(tu) is Zero:
        return out, Zero(aval(out))
    return out, dynamic_update_slice_p.bind(instantiate(tx), instantiate(tu), *starts)


def _dus_transpose(ct, x, u, *starts):
    rest = [None] * len(starts)
    if type(ct) is Zero:
        return [Zero(x.aval) if _is_undefined(x) else None,
                Zero(u.aval) if _is_undefined(u) else None] + rest
    u_aval = aval(u)
    ct_x = dynamic_update_slice_p.bind(ct, zeros_like_aval(u_aval), *starts) \
        if _is_undefined(x) else None
    ct_u = dynamic_slice_p.bind(ct, *starts, slice_sizes=u_aval.shape) \
        if _is_undefined(u) else None
    return [ct_x, ct_u] + rest


def _dus_batch(args, dims):
    (x, u, *starts), (dx, du, *sdims) = args, dims
    size = not_mapped_size(args, dims)
    x = move_batch_axis(x, dx, 0, size)
    u = move_batch_axis(u, du, 0, size)
    if all(d is None for d in sdims):
        zero = np.zeros((), aval(starts[0]).dtype if starts else np.int32)
        return dynamic_update_slice_p.bind(x, u, zero, *starts), 0
    starts, dt = _batched_starts(starts, sdims, size)
    idx = _start_grid(starts, aval(x).shape[1:], aval(u).shape[1:], size, dt)
    nd = aval(x).ndim
    # every grid row is in range, so this writes exactly the clamped windows
    return scatter(x, idx, u, nd, "set"), 0


dynamic_update_slice_p.def_rules(abstract_eval=_dus_aval, impl=_dus_impl, jvp=_dus_jvp,
                                 transpose=_dus_transpose, batch=_dus_batch)


def dynamic_update_slice(operand: ArrayLike, update: ArrayLike,
                         start_indices: Sequence[ArrayLike],
                         *, allow_negative_indices: bool = True) -> Array:
    """``operand`` with ``update`` at ``start_indices`` (negative: from the end; clamped to fit).

    >>> dynamic_update_slice(np.zeros(4), np.ones(2), (np.int32(-3),)).tolist()
    [0.0, 1.0, 1.0, 0.0]
    """
    if isinstance(operand, KeyArray) or isinstance(update, KeyArray):   # typed keys: words
        return KeyArray(dynamic_update_slice(
            key_words("dynamic_update_slice", operand), key_words("dynamic_update_slice", update),
            list(start_indices) + [np.int32(0)], allow_negative_indices=allow_negative_indices))
    starts = _wrap_starts(operand, list(start_indices), allow_negative_indices)
    return checked_bind(dynamic_update_slice_p, operand, update, *starts)
