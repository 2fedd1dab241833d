"""Indexing primitives: dynamic slices, gather and scatter.

``dynamic_slice(x, *starts, slice_sizes)`` and ``dynamic_update_slice(x, update,
*starts)`` take scalar integer start operands. As in JAX, each start is clamped
into ``[0, dim - size]`` so the window always lies inside the operand (an index
past the end reads or writes the last full window, never out of bounds).

``gather`` and ``scatter`` use one simple form instead of XLA's general
dimension numbers. With ``k = num_index_dims``:

- ``gather(x, idx)``: ``x`` has shape ``(d0, ..., d{k-1}, *rest)`` and ``idx`` is
  an integer array of shape ``(*B, k)``; the result has shape ``(*B, *rest)`` with
  ``out[b, r] = x[idx[b, 0], ..., idx[b, k-1], r]``. With ``index_mode="clip"``
  (the default) each index is clamped into ``[0, d_j - 1]``; with ``"fill"`` a row
  with any index out of range reads zeros; ``"promise_in_bounds"`` (JAX's ``x[idx]``)
  reads as ``"clip"`` but such rows get no gradient (its transpose drops them).
- ``scatter(x, idx, updates, mode=...)``: ``updates`` has shape ``(*B, *rest)``;
  row ``b`` of ``updates`` is combined into ``x[idx[b]]`` with ``mode`` one of
  ``set add mul min max``. With ``index_mode="drop"`` (the default) a row with
  any index out of range is dropped (never written); with ``"clip"`` its indices
  are clamped. Rows that hit the same position: add/mul/min/max accumulate all
  of them; ``set`` keeps the last row (in row-major order of ``B``).

Derivatives. ``gather`` and scatter-add are linear; the transpose of a gather is a
scatter-add into zeros (clip <-> clip, fill and promise_in_bounds -> drop, drop -> fill)
and vice versa. The JVP of scatter-set is the scatter-set of the tangents; its transpose
gives ``x`` the cotangent with the written positions zeroed and each row of ``updates``
the gathered cotangent if it won its position (as JAX). The JVPs of scatter
mul/min/max are exact for unique in-range indices (as in JAX), not for duplicates. For
min/max the tangent comes from whichever of ``x`` and the update wins; ties are split
evenly, as JAX does for ``lax.min``/``lax.max``.

Batching never loops: an operand batch axis becomes a ``rest`` axis, an index
batch axis becomes a ``B`` axis, and when both are batched an iota column for
the batch is prepended to the indices. Batched dynamic-slice starts become a
gather (and dynamic_update_slice a scatter) over an index grid.

>>> import numpy as np
>>> gather(np.arange(6.0).reshape(3, 2), np.array([[2], [-1], [7]]), 1).tolist()
[[4.0, 5.0], [0.0, 1.0], [4.0, 5.0]]
>>> scatter(np.zeros(3), np.array([[0], [0], [5]]), np.ones(3), 1, "add").tolist()
[2.0, 0.0, 0.0]
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from jaxpr_ir import ShapedArray
from .base import (Primitive, UndefinedPrimal, Zero, add_tangents, aval, instantiate,
                   move_batch_axis, not_mapped_size)
from .structural import (broadcast_in_dim, checked_bind, broadcasted_iota, full, reshape,
                         squeeze, zeros_like_aval)
from .slicing import concatenate
from . import elementwise as E
from ..array import maximum_at, minimum_at
from ..typing import Array, ArrayLike

__all__ = ["dynamic_slice", "dynamic_update_slice", "dynamic_slice_in_dim",
           "dynamic_index_in_dim", "gather", "scatter", "scatter_add", "clamp_indices"]

_SCATTER_MODES = ("set", "add", "mul", "min", "max")
_GATHER_MODES = ("clip", "fill", "promise_in_bounds")


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


def dynamic_slice(x: ArrayLike, start_indices: Sequence[ArrayLike],
                  slice_sizes: Sequence[int], *, allow_negative_indices: bool = True) -> Array:
    """The window ``x[s0:s0+n0, ...]`` with traced starts (negative: from the end), clamped.

    >>> dynamic_slice(np.arange(5.0), (np.int32(-2),), (2,)).tolist()
    [3.0, 4.0]
    """
    starts = _wrap_starts(x, list(start_indices), allow_negative_indices)
    return checked_bind(dynamic_slice_p, x, *starts, slice_sizes=tuple(int(n) for n in slice_sizes))


def dynamic_slice_in_dim(x: ArrayLike, start: ArrayLike, size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True) -> Array:
    """``dynamic_slice`` along one axis (other axes taken whole).

    >>> import numpy as np
    >>> dynamic_slice_in_dim(np.arange(5), np.int32(3), 2).tolist()
    [3, 4]
    """
    shape = aval(x).shape
    axis = int(axis) % len(shape)
    zero = np.zeros((), aval(start).dtype if not isinstance(start, int) else np.int64)
    starts = [zero] * len(shape)
    starts[axis] = start
    sizes = list(shape)
    sizes[axis] = int(size)
    return dynamic_slice(x, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(x: ArrayLike, index: ArrayLike, axis: int = 0,
                         keepdims: bool = True, *, allow_negative_indices: bool = True) -> Array:
    """``x`` at a traced ``index`` (negative: from the end; clamped) along ``axis``.

    >>> import numpy as np
    >>> dynamic_index_in_dim(np.arange(6).reshape(3, 2), -1, keepdims=False).tolist()
    [4, 5]
    """
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


def dynamic_update_slice(x: ArrayLike, update: ArrayLike, start_indices: Sequence[ArrayLike],
                         *, allow_negative_indices: bool = True) -> Array:
    """``x`` with ``update`` at ``start_indices`` (negative: from the end; clamped to fit).

    >>> dynamic_update_slice(np.zeros(4), np.ones(2), (np.int32(-3),)).tolist()
    [0.0, 1.0, 1.0, 0.0]
    """
    starts = _wrap_starts(x, list(start_indices), allow_negative_indices)
    return checked_bind(dynamic_update_slice_p, x, update, *starts)


# --------------------------------------------------------------------------- gather

gather_p = Primitive("gather")


def _check_index(name, x, idx, k):
    if idx.dtype.kind not in "iu" or idx.ndim < 1 or idx.shape[-1] != k or not 0 <= k <= x.ndim:
        raise TypeError(f"{name}: indices must be an integer array of shape (..., {k}) with "
                        f"num_index_dims={k} <= rank of operand {x.str_short()}; got "
                        f"{idx.str_short()}")


def _gather_aval(x, idx, *, num_index_dims, index_mode):
    k = num_index_dims
    _check_index("gather", x, idx, k)
    if index_mode not in _GATHER_MODES:
        raise ValueError(f"gather: index_mode must be one of {_GATHER_MODES}, got "
                         f"{index_mode!r}")
    batch = idx.shape[:-1]
    if index_mode != "fill" and 0 in x.shape[:k] and int(np.prod(batch)) > 0:
        raise IndexError(f"gather: cannot index into a zero-size axis of operand "
                         f"{x.str_short()}")
    return ShapedArray(batch + x.shape[k:], x.dtype, x.weak_type)


def saturate_uint64(idx):
    """A uint64 index array (or tracer) as int64, values of 2**63 and more saturated to
    2**63 - 1: they stay out of range high (clamped or dropped as any too-large index),
    where a plain int64 conversion would wrap them negative (a wrong element). Other
    dtypes pass through.

    >>> saturate_uint64(np.array([3, 2**63, 2**64 - 1], np.uint64)).tolist()
    [3, 9223372036854775807, 9223372036854775807]
    """
    if aval(idx).dtype != np.uint64:
        return idx
    top = np.uint64(2**63 - 1)
    if isinstance(idx, (np.ndarray, np.generic)):
        return np.minimum(idx, top).astype(np.int64)
    cap = full(aval(idx).shape, top, np.dtype(np.uint64))
    return E.convert_element_type(E.select_n(E.gt(idx, cap), idx, cap), np.int64)


def _int64_indices(idx):
    """Index values as int64 for clipping and range checks (uint64 saturated)."""
    return np.asarray(saturate_uint64(np.asarray(idx))).astype(np.int64)


def _gather_impl(x, idx, *, num_index_dims, index_mode):
    x, idx = np.asarray(x), _int64_indices(idx)
    k = num_index_dims
    dims, rest, batch = x.shape[:k], x.shape[k:], idx.shape[:-1]
    if k == 0:
        return np.array(np.broadcast_to(x, batch + rest))
    if 0 in dims or int(np.prod(batch)) == 0:
        return np.zeros(batch + rest, x.dtype)
    hi = np.asarray(dims) - 1
    clipped = np.clip(idx, 0, hi)
    out = x[tuple(clipped[..., j] for j in range(k))]
    if index_mode == "fill":
        ok = np.all(clipped == idx, axis=-1).reshape(batch + (1,) * len(rest))
        out = np.where(ok, out, np.zeros((), x.dtype))
    return np.asarray(out, dtype=x.dtype)


def _gather_jvp(primals, tangents, **params):
    x, idx = primals
    out = gather_p.bind(x, idx, **params)
    t = tangents[0]
    if type(t) is Zero:
        return out, Zero(aval(out))
    return out, gather_p.bind(t, idx, **params)


def _gather_transpose(ct, x, idx, *, num_index_dims, index_mode):
    if type(ct) is Zero:
        return [Zero(x.aval), None]
    mode = "clip" if index_mode == "clip" else "drop"
    out = scatter_p.bind(zeros_like_aval(x.aval), idx, ct, num_index_dims=num_index_dims,
                         mode="add", index_mode=mode)
    return [out, None]


def _prepend_batch_column(idx):
    """Indices (N, *B, k) -> (N, *B, k+1) whose first column is the batch position."""
    a = aval(idx)
    col = broadcasted_iota(a.dtype, a.shape[:-1] + (1,), 0)
    return concatenate([col, idx], a.ndim - 1)


def _gather_batch(args, dims, *, num_index_dims, index_mode):
    (x, idx), (dx, di) = args, dims
    k = num_index_dims
    if di is None:
        # the batch axis of the operand becomes its first "rest" axis
        x = move_batch_axis(x, dx, k)
        out = gather_p.bind(x, idx, num_index_dims=k, index_mode=index_mode)
        return out, aval(idx).ndim - 1
    idx = move_batch_axis(idx, di, 0)
    if dx is None:
        return gather_p.bind(x, idx, num_index_dims=k, index_mode=index_mode), 0
    x = move_batch_axis(x, dx, 0)
    idx = _prepend_batch_column(idx)
    return gather_p.bind(x, idx, num_index_dims=k + 1, index_mode=index_mode), 0


gather_p.def_rules(abstract_eval=_gather_aval, impl=_gather_impl, jvp=_gather_jvp,
                   transpose=_gather_transpose, batch=_gather_batch)


def gather(x: ArrayLike, idx: ArrayLike, num_index_dims: int,
           index_mode: str = "clip") -> Array:
    """``out[b, r] = x[idx[b, 0], ..., idx[b, k-1], r]`` (see the module docstring).

    >>> gather(np.arange(4.0), np.array([[3], [-5]]), 1).tolist()
    [3.0, 0.0]
    """
    return checked_bind(gather_p, x, idx, num_index_dims=int(num_index_dims), index_mode=index_mode)


# --------------------------------------------------------------------------- scatter

scatter_p = Primitive("scatter")


def _scatter_aval(x, idx, u, *, num_index_dims, mode, index_mode):
    k = num_index_dims
    _check_index("scatter", x, idx, k)
    if mode not in _SCATTER_MODES:
        raise ValueError(f"scatter: mode must be one of {_SCATTER_MODES}, got {mode!r}")
    if index_mode not in ("clip", "drop"):
        raise ValueError(f"scatter: index_mode must be 'clip' or 'drop', got {index_mode!r}")
    want = idx.shape[:-1] + x.shape[k:]
    if u.shape != want or u.dtype != x.dtype:
        raise TypeError(f"scatter: updates {u.str_short()} must have shape {want} (index "
                        f"batch shape + trailing operand shape) and the dtype of operand "
                        f"{x.str_short()}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


_UFUNCS = {"add": np.add.at, "mul": np.multiply.at, "min": minimum_at, "max": maximum_at}


def _scatter_impl(x, idx, u, *, num_index_dims, mode, index_mode):
    out = np.array(x, copy=True)
    k = num_index_dims
    if k == 0:   # every row hits the whole operand: give it a leading axis of size 1
        view = out[None]
        idx = np.zeros(np.shape(idx)[:-1] + (1,), np.int64)
        _scatter_into(view, idx, u, 1, mode, index_mode)
        return view[0]
    _scatter_into(out, idx, u, k, mode, index_mode)
    return out


def _scatter_into(out, idx, u, k, mode, index_mode):
    dims, rest = out.shape[:k], out.shape[k:]
    idx = _int64_indices(idx).reshape(-1, k)
    u = np.asarray(u, out.dtype).reshape((idx.shape[0],) + rest)
    if index_mode == "clip":
        idx = np.clip(idx, 0, np.asarray(dims) - 1)
    keep = np.all((idx >= 0) & (idx < np.asarray(dims)), axis=1)
    if not keep.all():
        idx, u = idx[keep], u[keep]
    if idx.shape[0] == 0:
        return
    if mode == "set":
        # the last row written to a position wins: keep each position's last occurrence
        flat = np.ravel_multi_index(tuple(idx.T), dims)
        _, first_rev = np.unique(flat[::-1], return_index=True)
        last = idx.shape[0] - 1 - first_rev
        out[tuple(idx[last].T)] = u[last]
    else:
        _UFUNCS[mode](out, tuple(idx.T), u)


def _scatter_jvp(primals, tangents, *, num_index_dims, mode, index_mode):
    x, idx, u = primals
    tx, _, tu = tangents
    params = dict(num_index_dims=num_index_dims, index_mode=index_mode)
    out = scatter_p.bind(x, idx, u, mode=mode, **params)
    if type(tx) is Zero and type(tu) is Zero:
        return out, Zero(aval(out))
    if mode in ("add", "set"):
        return out, scatter_p.bind(instantiate(tx), idx, instantiate(tu), mode=mode, **params)
    xa = aval(x)
    zeros = zeros_like_aval(xa)

    def spread(t):   # per-row tangents summed into their positions
        return scatter_p.bind(zeros, idx, t, mode="add", **params)

    if mode == "mul":
        # out = x * prod(u at each position): d out = tx * M + x * scatter_add(tu) (unique rows)
        t = Zero(xa)
        if type(tx) is not Zero:
            m = scatter_p.bind(full(xa.shape, 1, xa.dtype), idx, u, mode="mul", **params)
            t = E.mul(tx, m)
        if type(tu) is not Zero:
            t = add_tangents(t, E.mul(x, spread(tu)))
        return out, t
    # min / max: the tangent of the winner; ties averaged over the tied candidates
    gmode = "clip" if index_mode == "clip" else "fill"
    def same(a, b):      # a is b's value; a NaN equals nothing (JAX's rule, as in maximum)
        return E.convert_element_type(E.eq(a, b), xa.dtype)
    # an element no row writes keeps its tangent, NaN or not; a written one is a candidate
    touched = E.ne(spread(full(aval(u).shape, 1, xa.dtype)), zeros)
    wx = E.select_n(touched, full(xa.shape, 1, xa.dtype), same(x, out))
    wu = same(u, gather_p.bind(out, idx, num_index_dims=num_index_dims, index_mode=gmode))
    count = E.add(wx, spread(wu))
    one = full(xa.shape, 1, xa.dtype)
    count = E.select_n(E.eq(count, zeros), count, one)   # NaN winners: no candidate matched
    t = Zero(xa)
    if type(tx) is not Zero:
        t = E.mul(tx, wx)
    if type(tu) is not Zero:
        t = add_tangents(t, spread(E.mul(tu, wu)))
    return out, E.div(t, count)


def _scatter_transpose(ct, x, idx, u, *, num_index_dims, mode, index_mode):
    if mode not in ("add", "set"):
        raise TypeError(f"scatter: mode {mode!r} is not linear in its operands, so it has no "
                        "transpose")
    if type(ct) is Zero:
        return [Zero(x.aval) if _is_undefined(x) else None, None,
                Zero(u.aval) if _is_undefined(u) else None]
    gmode = "clip" if index_mode == "clip" else "fill"
    ct_x = ct_u = None
    if _is_undefined(x):
        ct_x = ct if mode == "add" else scatter_p.bind(
            ct, idx, zeros_like_aval(aval(u)), num_index_dims=num_index_dims, mode="set",
            index_mode=index_mode)
    if _is_undefined(u):
        ct_u = gather_p.bind(ct, idx, num_index_dims=num_index_dims, index_mode=gmode)
        if mode == "set":
            ct_u = _set_winners(ct_u, idx, aval(ct), num_index_dims, index_mode)
    return [ct_x, None, ct_u]


def _set_winners(ct_u, idx, x_aval, k, index_mode):
    """``ct_u`` zeroed on the rows of a scatter-set that a later row overwrote (only the
    last reaches the output), as JAX's scatter JVP: row ids (from 1) are scattered and
    gathered back; a row keeps its cotangent where it reads its own id."""
    u_aval, bshape = aval(ct_u), aval(idx).shape[:-1]
    if isinstance(idx, np.ndarray):   # concrete indices: nothing to do when none repeats
        rows, dims = _int64_indices(idx).reshape(-1, k), np.asarray(x_aval.shape[:k])
        rows = np.clip(rows, 0, dims - 1) if index_mode == "clip" else rows
        rows = rows[np.all((rows >= 0) & (rows < dims), axis=1)]
        if len(np.unique(rows, axis=0)) == len(rows):
            return ct_u
    n = int(np.prod(bshape))
    dt = np.dtype(np.int32 if n < 2**31 - 1 else np.int64)
    ids = E.add(reshape(broadcasted_iota(dt, (n,), 0), bshape), full(bshape, 1, dt))
    ids = broadcast_in_dim(ids, u_aval.shape, tuple(range(len(bshape))))
    written = scatter_p.bind(full(x_aval.shape, 0, dt), idx, ids, num_index_dims=k, mode="set",
                             index_mode=index_mode)
    back = gather_p.bind(written, idx, num_index_dims=k,
                         index_mode="clip" if index_mode == "clip" else "fill")
    return E.select_n(E.eq(back, ids), zeros_like_aval(u_aval), ct_u)


def _scatter_batch(args, dims, *, num_index_dims, mode, index_mode):
    (x, idx, u), (dx, di, du) = args, dims
    size = not_mapped_size(args, dims)
    k = num_index_dims
    params = dict(mode=mode, index_mode=index_mode)
    if di is None:
        # shared indices: the batch axis is a trailing operand axis and an update axis
        x = move_batch_axis(x, dx, k, size)
        u = move_batch_axis(u, du, aval(idx).ndim - 1, size)
        return scatter_p.bind(x, idx, u, num_index_dims=k, **params), k
    x = move_batch_axis(x, dx, 0, size)
    u = move_batch_axis(u, du, 0, size)
    idx = _prepend_batch_column(move_batch_axis(idx, di, 0))
    return scatter_p.bind(x, idx, u, num_index_dims=k + 1, **params), 0


scatter_p.def_rules(abstract_eval=_scatter_aval, impl=_scatter_impl, jvp=_scatter_jvp,
                    transpose=_scatter_transpose, batch=_scatter_batch)


def scatter(x: ArrayLike, idx: ArrayLike, updates: ArrayLike, num_index_dims: int,
            mode: str = "set", index_mode: str = "drop") -> Array:
    """``x`` with row ``b`` of ``updates`` combined into ``x[idx[b]]`` (see the module docstring).

    >>> scatter(np.zeros(3), np.array([[1], [1]]), np.array([5.0, 7.0]), 1, "set").tolist()
    [0.0, 7.0, 0.0]
    """
    return checked_bind(scatter_p, x, idx, updates, num_index_dims=int(num_index_dims), mode=mode,
                          index_mode=index_mode)


def scatter_add(x: ArrayLike, idx: ArrayLike, updates: ArrayLike,
                num_index_dims: int) -> Array:
    """``scatter`` with ``mode="add"``; out-of-range rows are dropped.

    >>> import numpy as np
    >>> scatter_add(np.zeros(3), np.array([[0], [0], [5]]), np.ones(3), 1).tolist()
    [2.0, 0.0, 0.0]
    """
    return scatter(x, idx, updates, num_index_dims, "add")
