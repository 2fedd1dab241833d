"""The gather and scatter primitives in their canonical index form (with ``k = num_index_dims``):

- ``gather(x, idx, k)``: ``x`` has shape ``(d0, ..., d{k-1}, *rest)`` and ``idx`` is
  an integer array of shape ``(*B, k)``; the result has shape ``(*B, *rest)`` with
  ``out[b, r] = x[idx[b, 0], ..., idx[b, k-1], r]``. With ``index_mode="clip"``
  (the default) each index is clamped into ``[0, d_j - 1]``; with ``"fill"`` a row
  with any index out of range reads zeros; ``"promise_in_bounds"`` (JAX's ``x[idx]``)
  reads as ``"clip"`` but such rows get no gradient (its transpose drops them).
- ``scatter(x, idx, updates, k, mode=...)``: ``updates`` has shape ``(*B, *rest)``;
  row ``b`` of ``updates`` is combined into ``x[idx[b]]`` with ``mode`` one of
  ``set add mul min max``. With ``index_mode="drop"`` (the default) a row with
  any index out of range is dropped (never written); with ``"clip"`` its indices
  are clamped. Rows that hit the same position: add/mul/min/max accumulate all
  of them; ``set`` keeps the last row (in row-major order of ``B``).

JAX's general form (``lax.gather`` with ``GatherDimensionNumbers``, slice windows,
batching dims, fill values) is composed onto these two in ``functrans.lax_gather``.

Derivatives. ``gather`` and scatter-add are linear; the transpose of a gather is a
scatter-add into zeros (clip <-> clip, fill and promise_in_bounds -> drop, drop -> fill)
and vice versa. The JVP of scatter-set is the scatter-set of the tangents; its transpose
gives ``x`` the cotangent with the written positions zeroed and each row of ``updates``
the gathered cotangent if it won its position (as JAX). The JVP of scatter-mul is exact
also for repeated indices (each row's tangent times the product of the other rows at its
position, with zeros counted, not divided by; its second derivative in the updates is
exact too, except at an update of exactly 0 that shares its position). For min/max the
tangent comes from whichever of ``x`` and the update wins; ties are split evenly, as JAX
does for ``lax.min``/``lax.max``.

Batching never loops: an operand batch axis becomes a ``rest`` axis, an index
batch axis becomes a ``B`` axis, and when both are batched an iota column for
the batch is prepended to the indices.

>>> import numpy as np
>>> gather(np.arange(6.0).reshape(3, 2), np.array([[2], [-1], [7]]), 1).tolist()
[[4.0, 5.0], [0.0, 1.0], [4.0, 5.0]]
>>> scatter(np.zeros(3), np.array([[0], [0], [5]]), np.ones(3), 1, "add").tolist()
[2.0, 0.0, 0.0]
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import ShapedArray
from .base import (Primitive, UndefinedPrimal, Zero, add_tangents, aval, instantiate,
                   move_batch_axis, not_mapped_size)
from .structural import (broadcast_in_dim, checked_bind, broadcasted_iota, full, reshape,
                         zeros_like_aval)
from .slicing import concatenate
from . import elementwise as E
from ..array import maximum_at, minimum_at
from ..typing import Array, ArrayLike

__all__ = ["gather", "scatter", "scatter_add", "saturate_uint64", "gather_p", "scatter_p"]

_SCATTER_MODES = ("set", "add", "mul", "min", "max")
_GATHER_MODES = ("clip", "fill", "promise_in_bounds")


def _is_undefined(x):
    return isinstance(x, UndefinedPrimal)


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
        return out, _scatter_mul_tangent(x, idx, u, tx, tu, spread, params)
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


def _rows_known_unique(idx, shape, k, index_mode) -> bool:
    """Whether ``idx`` is concrete and no two of its kept (in-range or clipped) rows hit
    the same position."""
    if not isinstance(idx, np.ndarray):
        return False
    rows, dims = _int64_indices(idx).reshape(-1, k), np.asarray(shape[:k])
    rows = np.clip(rows, 0, dims - 1) if index_mode == "clip" else rows
    rows = rows[np.all((rows >= 0) & (rows < dims), axis=1)]
    return len(np.unique(rows, axis=0)) == len(rows)


def _scatter_mul_tangent(x, idx, u, tx, tu, spread, params):
    """Tangent of ``out = x * prod(u at each position)``: ``tx * M + x * spread(tu_r *
    prod of the other rows at r's position)``. With repeated indices the product of the
    others is the nonzero product over u_r (no zeros), or the nonzero product itself when
    u_r is the position's only zero, or 0 (two zeros); exact, not the unique-row formula."""
    xa = aval(x)
    one = full(xa.shape, 1, xa.dtype)
    t = Zero(xa)
    if type(tx) is not Zero:
        t = E.mul(tx, scatter_p.bind(one, idx, u, mode="mul", **params))
    if type(tu) is Zero:
        return t
    if _rows_known_unique(idx, xa.shape, params["num_index_dims"], params["index_mode"]):
        return add_tangents(t, E.mul(x, spread(tu)))
    ua = aval(u)
    u_one, u_zero = full(ua.shape, 1, ua.dtype), full(ua.shape, 0, ua.dtype)
    is_zero = E.eq(u, u_zero)
    nonzero_prod = scatter_p.bind(one, idx, E.select_n(is_zero, u, u_one), mode="mul", **params)
    zeros = spread(E.select_n(is_zero, u_zero, u_one))
    gmode = "clip" if params["index_mode"] == "clip" else "fill"
    k = params["num_index_dims"]
    p_r = gather_p.bind(nonzero_prod, idx, num_index_dims=k, index_mode=gmode)
    z_r = gather_p.bind(zeros, idx, num_index_dims=k, index_mode=gmode)
    safe_u = E.select_n(is_zero, u, u_one)
    others = E.select_n(is_zero, E.select_n(E.eq(z_r, u_zero), u_zero, E.div(p_r, safe_u)),
                        E.select_n(E.eq(z_r, u_one), u_zero, p_r))
    return add_tangents(t, E.mul(x, spread(E.mul(tu, others))))


def _set_winners(ct_u, idx, x_aval, k, index_mode):
    """``ct_u`` zeroed on the rows of a scatter-set that a later row overwrote (only the
    last reaches the output), as JAX's scatter JVP: row ids (from 1) are scattered and
    gathered back; a row keeps its cotangent where it reads its own id."""
    u_aval, bshape = aval(ct_u), aval(idx).shape[:-1]
    if _rows_known_unique(idx, x_aval.shape, k, index_mode):
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
