"""JAX's gather/scatter dimension numbers and modes, their checks, and the plan that maps a
general gather or scatter onto the canonical ``gather``/``scatter`` primitives.

``GatherDimensionNumbers`` / ``ScatterDimensionNumbers`` are JAX's NamedTuples (the index
vector is always the last axis of the indices); ``GatherScatterMode.from_any`` accepts
JAX's strings and ``None``. The checks are JAX's (``_gather_shape_rule`` /
``_scatter_shape_rule``), with JAX's messages: each names the field at fault.

A plan (see ``plan``) sorts the operand's axes into *indexed* axes, which get one column of
the canonical index array each (a start index column, the position along an indices
batching axis, or a constant 0 for a partial window of an axis nobody indexes), and
*rest* axes, taken whole. A window of ``W > 1`` on an indexed axis becomes an extra
batch axis of the canonical indices (start + iota), so the canonical primitives, whose
rules (JVP, transpose, batching, LLVM lowering) already exist, do all the work.

>>> d = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
...                            start_index_map=(0,))
>>> check_gather((3, 4), (2, 1), d, (1, 4))
(2, 4)
>>> GatherScatterMode.from_any("clip")
<GatherScatterMode.CLIP: 1>
"""
from __future__ import annotations

import enum
from typing import NamedTuple, Sequence

import numpy as np

from .primitives import elementwise as E
from .primitives.base import aval
from .primitives.gather_scatter import saturate_uint64
from .primitives.slicing import concatenate, slice as lax_slice
from .primitives.structural import broadcast_in_dim, broadcasted_iota, full, reshape

__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode"]


class GatherDimensionNumbers(NamedTuple):
    """How the axes of ``operand``, ``start_indices`` and the output of ``lax.gather``
    relate (XLA's Gather; the index vector is the last axis of ``start_indices``).

    >>> GatherDimensionNumbers((1,), (0,), (0,)).operand_batching_dims
    ()
    """
    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How the axes of ``operand``, ``scatter_indices`` and ``updates`` of the
    ``lax.scatter*`` functions relate (XLA's Scatter; index vector last).

    >>> ScatterDimensionNumbers((), (0,), (0,)).scatter_indices_batching_dims
    ()
    """
    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


class GatherScatterMode(enum.Enum):
    """Out-of-bounds indices: ``CLIP`` clamps each start so the whole window is in range;
    ``FILL_OR_DROP`` fills a gathered window that is partly out of range with the fill
    value and drops such a scattered window; ``PROMISE_IN_BOUNDS`` (the caller promises
    in-range indices) gathers as ``CLIP`` and scatters as ``FILL_OR_DROP``, as JAX on XLA.
    ``ONE_HOT`` is JAX's TPU lowering and is refused.

    >>> GatherScatterMode.from_any(None)
    <GatherScatterMode.FILL_OR_DROP: 2>
    """
    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s: "str | GatherScatterMode | None") -> "GatherScatterMode":
        """The mode named by ``s`` (``None``, ``"fill"`` and ``"drop"``: ``FILL_OR_DROP``)."""
        if isinstance(s, GatherScatterMode):
            return s
        if type(s).__name__ == "GatherScatterMode":      # JAX's enum, same member names
            return GatherScatterMode[s.name]
        table = {"clip": "CLIP", None: "FILL_OR_DROP", "fill": "FILL_OR_DROP",
                 "drop": "FILL_OR_DROP", "promise_in_bounds": "PROMISE_IN_BOUNDS",
                 "one_hot": "ONE_HOT"}
        if not isinstance(s, (str, type(None))) or s not in table:
            raise ValueError(f'Unknown gather mode "{s}"')
        return GatherScatterMode[table[s]]


# --------------------------------------------------------------------------- checks (JAX's)

def _is_sorted(dims, op, name):
    if any(dims[i] < dims[i - 1] for i in range(1, len(dims))):
        raise TypeError(f"{name} in {op} op must be sorted; got {dims}")


def _dims_in_range(dims, rank, op, name):
    for d in dims:
        if d < 0 or d >= rank:
            raise TypeError(f"Invalid {name} set in {op} op; valid range is [0, {rank}); "
                            f"got: {d}.")


def _no_duplicates(dims, op, name):
    if len(set(dims)) != len(dims):
        raise TypeError(f"{name} in {op} op must not repeat; got: {dims}.")


def _disjoint(d1, d2, op, n1, n2):
    if not set(d1).isdisjoint(d2):
        raise TypeError(f"{n1} and {n2} in {op} op must be disjoint; got: {d1} and {d2}.")


def _sorted_unique_in_range(dims, rank, op, name):
    _is_sorted(dims, op, name)
    _dims_in_range(dims, rank, op, name)
    _no_duplicates(dims, op, name)


def _check_batching(op, shape, ishape, obatch, ibatch, names, disjoint_from):
    _no_duplicates(obatch, op, names[0])
    _is_sorted(obatch, op, names[0])
    _dims_in_range(obatch, len(shape), op, names[0])
    for dims, name in disjoint_from:
        _disjoint(dims, obatch, op, name, "operand_batching_dims")
    _no_duplicates(ibatch, op, names[1])
    _dims_in_range(ibatch, len(ishape), op, names[1])
    if len(ishape) - 1 in ibatch:
        raise TypeError(f"{op.capitalize()} op cannot have the index vector dimension as a "
                        f"batching dimension; got {ibatch}.")
    if len(obatch) != len(ibatch):
        raise TypeError(f"{op.capitalize()} op requires equal numbers of operand_batching_dims "
                        f"and {names[1]}, got {obatch} and {ibatch}.")
    ob, ib = tuple(shape[i] for i in obatch), tuple(ishape[i] for i in ibatch)
    if ob != ib:
        raise TypeError(f"{op.capitalize()} op requires operand batching dimensions and "
                        f"indices batching dimensions to have the same shape, got {ob} and "
                        f"{ib}.")


def _check_index_map(op, name, index_map, shape, ishape):
    if len(ishape) < 1:
        raise TypeError(f"{op}: indices must have an index vector axis (the last); got "
                        f"shape {ishape}")
    if len(index_map) != ishape[-1]:
        raise TypeError(f"{op.capitalize()} op has {len(index_map)} elements in {name} and "
                        f"the bound of dimension index_vector_dim={len(ishape) - 1} of indices "
                        f"is {ishape[-1]}. These two numbers must be equal.")
    for i, d in enumerate(index_map):
        if d < 0 or d >= len(shape):
            what = name + (" mapping" if op == "scatter" else "")
            raise TypeError(f"Invalid {what}; domain is [0, {len(shape)}), got: {i}->{d}.")
    _no_duplicates(index_map, op, name)


def check_gather(shape, ishape, dnums, slice_sizes) -> tuple:
    """JAX's gather checks; the output shape.

    >>> d = GatherDimensionNumbers((0,), (), (0,))
    >>> check_gather((5,), (1,), d, (2,))
    (2,)
    """
    off, coll = tuple(dnums.offset_dims), tuple(dnums.collapsed_slice_dims)
    obatch, ibatch = tuple(dnums.operand_batching_dims), tuple(dnums.start_indices_batching_dims)
    _is_sorted(off, "gather", "offset_dims")
    _no_duplicates(off, "gather", "offset_dims")
    out_rank = len(off) + len(ishape) - 1
    for i, d in enumerate(off):
        if d < 0 or d >= out_rank:
            raise TypeError(f"Offset dimension {i} in gather op is out of bounds; got {d}, "
                            f"but should have been in [0, {out_rank})")
    _check_index_map("gather", "start_index_map", tuple(dnums.start_index_map), shape, ishape)
    _sorted_unique_in_range(coll, len(shape), "gather", "collapsed_slice_dims")
    _check_batching("gather", shape, ishape, obatch, ibatch,
                    ("operand_batching_dims", "start_indices_batching_dims"),
                    ((coll, "collapsed_slice_dims"),
                     (tuple(dnums.start_index_map), "start_index_map")))
    if len(slice_sizes) != len(shape):
        raise TypeError(f"Gather op must have one slice size for every input dimension; got: "
                        f"len(slice_sizes)={len(slice_sizes)}, input_shape.rank={len(shape)}")
    if len(slice_sizes) != len(off) + len(coll) + len(obatch):
        raise TypeError(f"All components of the offset index in a gather op must either be a "
                        f"offset dimension or explicitly collapsed/batching; got "
                        f"len(slice_sizes)={len(slice_sizes)}, output_slice_sizes={off}, "
                        f"collapsed_slice_dims={coll}, operand_batching_dims={obatch}.")
    for i, (n, d) in enumerate(zip(slice_sizes, shape)):
        if 0 not in ishape and not 0 <= n <= d:
            raise TypeError(f"Slice size at index {i} in gather op is out of range, must be "
                            f"within [0, {d} + 1), got {n}.")
    for i, d in enumerate(coll):
        if slice_sizes[d] != 1:
            raise TypeError(f"Gather op can only collapse slice dims with bound 1, but bound "
                            f"is {slice_sizes[d]} for index {d} at position {i}.")
    for i, d in enumerate(obatch):
        if slice_sizes[d] > 1:
            raise TypeError(f"Gather op can only have operand batching dims with bound 0/1, "
                            f"but bound is {slice_sizes[d]} for index {d} at position {i}.")
    kept = [n for i, n in enumerate(slice_sizes) if i not in coll and i not in obatch]
    batch = iter(ishape[:-1])
    return tuple(kept[off.index(p)] if p in off else next(batch) for p in range(out_rank))


def check_scatter(shape, ishape, ushape, dnums) -> None:
    """JAX's scatter checks (``updates`` shape against operand, indices and ``dnums``).

    >>> check_scatter((5,), (3, 1), (3,), ScatterDimensionNumbers((), (0,), (0,)))
    """
    win, ins = tuple(dnums.update_window_dims), tuple(dnums.inserted_window_dims)
    obatch = tuple(dnums.operand_batching_dims)
    ibatch = tuple(dnums.scatter_indices_batching_dims)
    if len(ishape) < 1:
        raise TypeError(f"scatter: indices must have an index vector axis (the last); got "
                        f"shape {ishape}")
    if len(ushape) != len(ishape) - 1 + len(win):
        raise TypeError(f"Updates tensor must be of rank {len(ishape) - 1 + len(win)}; got "
                        f"{len(ushape)}.")
    _sorted_unique_in_range(win, len(ushape), "scatter", "update_window_dims")
    _sorted_unique_in_range(ins, len(shape), "scatter", "inserted_window_dims")
    _check_batching("scatter", shape, ishape, obatch, ibatch,
                    ("operand_batching_dims", "scatter_indices_batching_dims"),
                    ((ins, "inserted_window_dims"),
                     (tuple(dnums.scatter_dims_to_operand_dims),
                      "scatter_dims_to_operand_dims")))
    scatter_axes = [d for d in range(len(ushape)) if d not in win]
    ub = tuple(ushape[scatter_axes[i]] for i in ibatch)
    if ub != tuple(shape[i] for i in obatch):
        raise TypeError(f"Scatter op requires operand batching dimensions and updates "
                        f"batching dimensions to have the same shape, got "
                        f"{tuple(shape[i] for i in obatch)} and {ub}.")
    if len(shape) != len(win) + len(ins) + len(obatch):
        raise TypeError(f"Scatter op has window of size {len(win) + len(ins) + len(obatch)}; "
                        f"doesn't match operand of rank {len(shape)}.")
    _check_index_map("scatter", "scatter_dims_to_operand_dims",
                     tuple(dnums.scatter_dims_to_operand_dims), shape, ishape)
    bounds = [shape[i] for i in range(len(shape)) if i not in ins and i not in obatch]
    for i, w in enumerate(win):
        if bounds[i] < ushape[w]:
            raise TypeError(f"Bounds of the window dimensions of updates must not exceed the "
                            f"bounds of the corresponding dimensions of operand. For dimension "
                            f"{w}, updates bound is {ushape[w]}, operand bound is {bounds[i]}.")
    for k, i in enumerate(scatter_axes):
        if ushape[i] != ishape[k]:
            raise TypeError(f"Bounds of the scatter dimensions of updates must be the same as "
                            f"the bounds of the corresponding dimensions of scatter indices. "
                            f"For scatter dimension {i}, updates bound is {ushape[i]}, indices "
                            f"bound is {ishape[k]}.")


# --------------------------------------------------------------------------- the plan

class Plan(NamedTuple):
    """Operand axes as canonical index columns (``idx_dims``, the start-index axes first,
    in ``index_map`` order) and whole axes (``rest``); ``win_dims``: the indexed axes that
    keep a window axis (offset/update-window axes), in ``idx_dims`` order; ``window``: the
    window size of every operand axis."""
    idx_dims: tuple
    rest: tuple
    win_dims: tuple
    window: tuple
    source: dict
    simple: bool


def plan(shape, index_map, obatch, ibatch, window, dropped) -> Plan:
    """The plan of a gather/scatter whose axes ``dropped`` (collapsed/inserted and batching
    axes) have no window axis; see the module docstring."""
    source = {d: ("index", j) for j, d in enumerate(index_map)}
    source.update({d: ("batch", e) for d, e in zip(obatch, ibatch)})
    rest = tuple(d for d in range(len(shape))
                 if d not in source and d not in dropped and window[d] == shape[d])
    zero = tuple(d for d in range(len(shape)) if d not in source and d not in rest)
    source.update({d: ("zero", None) for d in zero})
    idx_dims = tuple(index_map) + tuple(obatch) + zero
    win_dims = tuple(d for d in idx_dims if d not in dropped)
    simple = not obatch and not zero and all(window[d] == 1 for d in index_map)
    return Plan(idx_dims, rest, win_dims, tuple(window), source, simple)


def index_dtype(idx_dtype, shape) -> np.dtype:
    """The working integer dtype for computed indices: int64 when the indices or the
    operand's axes need it, else int32."""
    wide = np.dtype(idx_dtype).itemsize >= 4 and np.dtype(idx_dtype) != np.int32
    return np.dtype(np.int64 if wide or max(shape, default=0) >= 2**31 - 1 else np.int32)


def start_columns(indices, dt) -> list:
    """The columns ``indices[..., j]`` as arrays of dtype ``dt`` (uint64 saturated)."""
    ia = aval(indices)
    indices = E.convert_element_type(saturate_uint64(indices), dt)
    nb = len(ia.shape) - 1
    cols = []
    for j in range(ia.shape[-1]):
        c = lax_slice(indices, (0,) * nb + (j,), ia.shape[:-1] + (j + 1,))
        cols.append(reshape(c, ia.shape[:-1]))
    return cols


def in_range(col, lo: int, hi: int):
    """``lo <= col <= hi`` elementwise (``col`` integer)."""
    a = aval(col)
    return E.bitwise_and(E.ge(col, full(a.shape, lo, a.dtype)),
                         E.le(col, full(a.shape, hi, a.dtype)))


def rows_in_range(cols, p: Plan, shape, index_map):
    """Whether every start of a row lies in ``[0, shape - window]`` (shape ``B``)."""
    ok = None
    for c, d in zip(cols, index_map):
        o = in_range(c, 0, shape[d] - p.window[d])
        ok = o if ok is None else E.bitwise_and(ok, o)
    return ok


def canonical_indices(indices, p: Plan, shape, clip: bool):
    """The canonical index array ``(*B, *W, k)`` of plan ``p`` (``W``: the windows of
    ``p.win_dims``). ``clip``: starts are clamped so windows fit; else a start whose window
    does not fit is moved wholly below 0, so the canonical gather fills (scatter drops) it."""
    ia = aval(indices)
    dt = index_dtype(ia.dtype, shape)
    bshape, nb = ia.shape[:-1], len(ia.shape) - 1
    full_shape = bshape + tuple(p.window[d] for d in p.win_dims)
    starts = start_columns(indices, dt)
    cols = []
    for d in p.idx_dims:
        kind, j = p.source[d]
        w = p.window[d]
        if kind == "index":
            s = starts[j]
            ok = in_range(s, 0, shape[d] - w)
            lo = full(bshape, 0 if clip else -max(w, 1), dt)
            hi = full(bshape, shape[d] - w, dt)
            if clip:
                s = E.select_n(E.lt(s, lo), E.select_n(E.gt(s, hi), s, hi), lo)
            else:
                s = E.select_n(ok, lo, s)
            s = broadcast_in_dim(s, full_shape, tuple(range(nb)))
        elif kind == "batch":
            s = broadcasted_iota(dt, full_shape, j)
        else:
            s = full(full_shape, 0, dt)
        if d in p.win_dims and w != 1:
            s = E.add(s, broadcasted_iota(dt, full_shape, nb + p.win_dims.index(d)))
        cols.append(reshape(s, full_shape + (1,)))
    if not cols:
        return full(full_shape + (0,), 0, dt)
    return cols[0] if len(cols) == 1 else concatenate(cols, len(full_shape))
