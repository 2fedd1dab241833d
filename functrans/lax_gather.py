"""JAX's ``lax.gather`` and ``lax.scatter`` family with XLA dimension numbers, composed onto
the canonical ``gather``/``scatter`` primitives (``functrans.primitives.gather_scatter``).

A call transposes the operand so its indexed axes come first, builds the canonical index
array (``lax_gather_dnums.canonical_indices``: start columns, iota columns for batching
axes and windows, the mode applied to whole windows), binds one canonical primitive and
transposes the result into XLA's layout. Gradients, batching and the LLVM lowering are
the canonical primitives' (scatter-mul, -min and -max with their own exact JVPs there).
When every indexed axis has a window of 1 and there are no batching axes (the usual
``x[idx]`` form), the indices go to the primitive unchanged.

Modes (``GatherScatterMode``): ``CLIP`` clamps each start so the window fits;
``FILL_OR_DROP`` fills a gathered window that is partly out of range with ``fill_value``
(JAX's default: NaN, the dtype's min for signed, max for unsigned, True for bool) and
drops a scattered one; ``PROMISE_IN_BOUNDS`` gathers as ``CLIP`` and scatters as
``FILL_OR_DROP`` (JAX on XLA: a gathered window whose start is out of range reads the
clamped window and gets no gradient). Default: ``PROMISE_IN_BOUNDS`` for ``gather``,
``FILL_OR_DROP`` for the scatters, as JAX. ``indices_are_sorted``/``unique_indices`` are
accepted hints (never trusted: results are right either way).

>>> import numpy as np
>>> d = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
...                            start_index_map=(0,))
>>> gather(np.arange(6.0).reshape(3, 2), np.array([[2], [0]]), d, (1, 2)).tolist()
[[4.0, 5.0], [0.0, 1.0]]
>>> s = ScatterDimensionNumbers((), (0,), (0,))
>>> scatter_add(np.zeros(3), np.array([[1], [1]]), np.array([1.0, 2.0]), s).tolist()
[0.0, 3.0, 0.0]
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxpr_ir import dtype_kind

from .batching import vmap
from .primitives import elementwise as E
from .primitives.base import aval
from .primitives.control_flow import repeat_where_hit
from .primitives.custom import stop_gradient
from .primitives.gather_scatter import gather_p, scatter_p
from .primitives.structural import broadcast_in_dim, checked_bind, full, reshape, transpose
from .lax_gather_dnums import (GatherDimensionNumbers, GatherScatterMode, Plan,
                               ScatterDimensionNumbers, canonical_indices, check_gather,
                               check_scatter, plan, rows_in_range, start_columns, index_dtype)
from .tracing import Tracer, own_constants
from .typing import Array, ArrayLike

__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode", "gather",
           "scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max",
           "scatter_apply"]

_M = GatherScatterMode


def _int_indices(name, indices):
    a = aval(indices)
    if dtype_kind(a.dtype) not in "iu":
        raise TypeError(f"{name}: indices must have an integer type, got {a.str_short()}")


def _maybe_transpose(x, perm):
    return x if tuple(perm) == tuple(range(len(perm))) else transpose(x, tuple(perm))


def _mode(name, mode, default):
    m = GatherScatterMode.from_any(default if mode is None else mode)
    if m is _M.ONE_HOT:
        raise NotImplementedError(f"{name}: mode ONE_HOT (JAX's one-hot TPU lowering) is not "
                                  "supported; use CLIP, FILL_OR_DROP or PROMISE_IN_BOUNDS")
    return m


def _default_fill(dtype):
    dtype = np.dtype(dtype)
    if dtype_kind(dtype) in "fc":
        return np.nan
    if dtype_kind(dtype) == "i":
        return np.iinfo(dtype).min
    if dtype_kind(dtype) == "u":
        return np.iinfo(dtype).max
    if dtype_kind(dtype) == "b":
        return True
    raise ValueError(f"Unsupported dtype for gather fill_value {dtype}")


def _canonical(indices, p: Plan, shape, index_map, clip: bool):
    """(canonical indices, their batch shape): the indices unchanged in the simple case."""
    ia = aval(indices)
    if p.simple:
        return indices, ia.shape[:-1]
    idx = canonical_indices(indices, p, shape, clip)
    return idx, aval(idx).shape[:-1]


def gather(operand: ArrayLike, start_indices: ArrayLike, dimension_numbers: Any,
           slice_sizes: Sequence[int], *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode: Any = None, fill_value: Any = None) -> Array:
    """XLA's Gather, as ``jax.lax.gather`` (see the module docstring for the modes).

    >>> import numpy as np
    >>> d = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(),
    ...                            start_index_map=(0,))
    >>> gather(np.arange(5.0), np.array([[1], [4]]), d, (2,), mode="fill").tolist()
    [[1.0, 2.0], [nan, nan]]
    """
    m = _mode("gather", mode, _M.PROMISE_IN_BOUNDS)
    _int_indices("gather", start_indices)
    xa, ia = aval(operand), aval(start_indices)
    sizes = tuple(int(s) for s in slice_sizes)
    dn = dimension_numbers
    out_shape = check_gather(xa.shape, ia.shape, dn, sizes)
    if 0 not in ia.shape and any(sizes[d] == 0 for d in dn.operand_batching_dims):
        raise NotImplementedError(f"gather: a slice size of 0 on an operand batching axis "
                                  f"(slice_sizes={sizes}, operand_batching_dims="
                                  f"{tuple(dn.operand_batching_dims)}) is not supported")
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    p = plan(xa.shape, tuple(dn.start_index_map), tuple(dn.operand_batching_dims),
             tuple(dn.start_indices_batching_dims), sizes, dropped)
    clip = m is not _M.FILL_OR_DROP
    idx, _ = _canonical(start_indices, p, xa.shape, dn.start_index_map, clip)
    canon_mode = "fill" if not clip else "promise_in_bounds" if (
        m is _M.PROMISE_IN_BOUNDS and p.simple) else "clip"
    x = _maybe_transpose(operand, p.idx_dims + p.rest)
    out = checked_bind(gather_p, x, idx, num_index_dims=len(p.idx_dims), index_mode=canon_mode)
    nb = len(ia.shape) - 1
    wshape = tuple(sizes[d] for d in p.win_dims)
    canon_shape = ia.shape[:-1] + wshape + tuple(xa.shape[d] for d in p.rest)
    if aval(out).shape != canon_shape:      # the simple case's size-1 window axes
        out = reshape(out, canon_shape)
    if m is _M.PROMISE_IN_BOUNDS and not p.simple:   # out-of-range windows: no gradient
        ok = rows_in_range(start_columns(start_indices, index_dtype(ia.dtype, xa.shape)), p,
                           xa.shape, dn.start_index_map)
        if ok is not None:
            ok = broadcast_in_dim(ok, canon_shape, tuple(range(nb)))
            out = E.select_n(ok, stop_gradient(out), out)
    if m is _M.FILL_OR_DROP:
        fill = _default_fill(xa.dtype) if fill_value is None else fill_value
        if not (np.ndim(fill) == 0 and not isinstance(fill, Tracer) and fill == 0):
            ok = rows_in_range(start_columns(start_indices, index_dtype(ia.dtype, xa.shape)), p,
                               xa.shape, dn.start_index_map)
            if ok is not None:
                ok = broadcast_in_dim(ok, canon_shape, tuple(range(nb)))
                filler = E.convert_element_type(full(canon_shape, fill), xa.dtype) \
                    if isinstance(fill, Tracer) else full(canon_shape, fill, xa.dtype)
                out = E.select_n(ok, filler, out)
    axis_of = {d: nb + i for i, d in enumerate(p.win_dims)}
    axis_of.update({d: nb + len(p.win_dims) + i for i, d in enumerate(p.rest)})
    offset = sorted(axis_of)
    batch_axes = iter(range(nb))
    perm = [axis_of[offset[dn.offset_dims.index(q)]] if q in dn.offset_dims
            else next(batch_axes) for q in range(len(out_shape))]
    return _maybe_transpose(out, perm)


def _scatter(name, kind, operand, indices, updates, dn, mode):
    m = _mode(name, mode, _M.FILL_OR_DROP)
    _int_indices(name, indices)
    xa, ia, ua = aval(operand), aval(indices), aval(updates)
    if ua.dtype != xa.dtype:
        raise TypeError(f"{name} requires arguments to have the same dtypes, got "
                        f"{xa.dtype}, {ua.dtype}.")
    check_scatter(xa.shape, ia.shape, ua.shape, dn)
    win = tuple(dn.update_window_dims)
    dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    kept = [d for d in range(xa.ndim) if d not in dropped]
    window = [1] * xa.ndim
    for d, w in zip(kept, win):
        window[d] = ua.shape[w]
    p = plan(xa.shape, tuple(dn.scatter_dims_to_operand_dims), tuple(dn.operand_batching_dims),
             tuple(dn.scatter_indices_batching_dims), tuple(window), dropped)
    clip = m is _M.CLIP
    idx, cb = _canonical(indices, p, xa.shape, dn.scatter_dims_to_operand_dims, clip)
    scatter_axes = [a for a in range(ua.ndim) if a not in win]
    uperm = scatter_axes + [win[kept.index(d)] for d in p.win_dims + p.rest]
    u = _maybe_transpose(updates, uperm)
    u_shape = tuple(cb) + tuple(xa.shape[d] for d in p.rest)
    if aval(u).shape != u_shape:
        u = reshape(u, u_shape)
    xperm = p.idx_dims + p.rest
    x = _maybe_transpose(operand, xperm)
    out = checked_bind(scatter_p, x, idx, u, num_index_dims=len(p.idx_dims), mode=kind,
                       index_mode="clip" if clip else "drop")
    return _maybe_transpose(out, tuple(np.argsort(xperm)))


_SCATTER_ARGS = """operand: the array written into; scatter_indices: integer, the index vector
    last; updates: the values; dimension_numbers: a ``ScatterDimensionNumbers``; mode:
    ``GatherScatterMode`` or its string (default ``FILL_OR_DROP``)"""


def scatter(operand: ArrayLike, scatter_indices: ArrayLike, updates: ArrayLike,
            dimension_numbers: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None) -> Array:
    """XLA's Scatter that overwrites: of rows hitting one position, the last wins.

    >>> import numpy as np
    >>> s = ScatterDimensionNumbers((), (0,), (0,))
    >>> scatter(np.zeros(3), np.array([[2], [9]]), np.array([1.0, 2.0]), s).tolist()
    [0.0, 0.0, 1.0]
    """
    return _scatter("scatter", "set", operand, scatter_indices, updates, dimension_numbers,
                    mode)


def scatter_add(operand: ArrayLike, scatter_indices: ArrayLike, updates: ArrayLike,
                dimension_numbers: Any, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: Any = None) -> Array:
    """XLA's Scatter combining with ``+`` (see ``scatter``).

    >>> import numpy as np
    >>> s = ScatterDimensionNumbers((), (0,), (0,))
    >>> scatter_add(np.ones(2), np.array([[0], [0]]), np.array([1.0, 2.0]), s).tolist()
    [4.0, 1.0]
    """
    return _scatter("scatter_add", "add", operand, scatter_indices, updates, dimension_numbers,
                    mode)


def scatter_sub(operand: ArrayLike, scatter_indices: ArrayLike, updates: ArrayLike,
                dimension_numbers: Any, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: Any = None) -> Array:
    """XLA's Scatter combining with ``-``: a scatter-add of ``-updates``.

    >>> import numpy as np
    >>> s = ScatterDimensionNumbers((), (0,), (0,))
    >>> scatter_sub(np.ones(2), np.array([[1]]), np.array([3.0]), s).tolist()
    [1.0, -2.0]
    """
    return _scatter("scatter_sub", "add", operand, scatter_indices, E.neg(updates),
                    dimension_numbers, mode)


def scatter_mul(operand: ArrayLike, scatter_indices: ArrayLike, updates: ArrayLike,
                dimension_numbers: Any, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: Any = None) -> Array:
    """XLA's Scatter combining with ``*``; its gradient is exact for repeated indices too.

    >>> import numpy as np
    >>> s = ScatterDimensionNumbers((), (0,), (0,))
    >>> scatter_mul(np.ones(2), np.array([[0], [0]]), np.array([2.0, 3.0]), s).tolist()
    [6.0, 1.0]
    """
    return _scatter("scatter_mul", "mul", operand, scatter_indices, updates, dimension_numbers,
                    mode)


def scatter_min(operand: ArrayLike, scatter_indices: ArrayLike, updates: ArrayLike,
                dimension_numbers: Any, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: Any = None) -> Array:
    """XLA's Scatter combining with ``min`` (gradient: the winner's; ties share it).

    >>> import numpy as np
    >>> s = ScatterDimensionNumbers((), (0,), (0,))
    >>> scatter_min(np.ones(2), np.array([[1]]), np.array([-3.0]), s).tolist()
    [1.0, -3.0]
    """
    return _scatter("scatter_min", "min", operand, scatter_indices, updates, dimension_numbers,
                    mode)


def scatter_max(operand: ArrayLike, scatter_indices: ArrayLike, updates: ArrayLike,
                dimension_numbers: Any, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: Any = None) -> Array:
    """XLA's Scatter combining with ``max`` (gradient: the winner's; ties share it).

    >>> import numpy as np
    >>> s = ScatterDimensionNumbers((), (0,), (0,))
    >>> scatter_max(np.ones(2), np.array([[1]]), np.array([3.0]), s).tolist()
    [1.0, 3.0]
    """
    return _scatter("scatter_max", "max", operand, scatter_indices, updates, dimension_numbers,
                    mode)


def scatter_apply(operand: ArrayLike, scatter_indices: ArrayLike,
                  func: Callable[[Array], Array], dimension_numbers: Any, *,
                  update_shape: Sequence[int] = (), indices_are_sorted: bool = False,
                  unique_indices: bool = False, mode: Any = None) -> Array:
    """``operand`` with ``func`` (a scalar function) applied at the scattered positions,
    once per row hitting a position (repeated indices apply it repeatedly, as JAX on XLA).
    ``update_shape`` is the shape the updates of the equivalent scatter would have.

    >>> import numpy as np
    >>> s = ScatterDimensionNumbers((), (0,), (0,))
    >>> scatter_apply(np.ones(3), np.array([[0], [0], [2]]), lambda v: v * 2, s,
    ...               update_shape=(3,)).tolist()
    [4.0, 1.0, 2.0]
    """
    xa = aval(operand)
    def count():
        return _scatter("scatter_apply", "add", full(xa.shape, 0, np.int32), scatter_indices,
                        full(tuple(update_shape), 1, np.int32), dimension_numbers, mode)

    if isinstance(scatter_indices, Tracer):
        hits = count()
    else:       # constant indices: the counts now, also under jit (a reverse-differentiable loop)
        with own_constants():
            hits = count()
    flat = (int(np.prod(xa.shape, dtype=np.int64)),)

    def apply(v):
        y = vmap(func)(reshape(v, flat))
        if aval(y).shape != flat or aval(y).dtype != xa.dtype:
            raise TypeError(f"scatter_apply: func must map a {xa.dtype} scalar to one of the "
                            f"same dtype; got {aval(y).str_short()} for {flat[0]} of them")
        return reshape(y, xa.shape)

    return repeat_where_hit(operand, hits, apply)
