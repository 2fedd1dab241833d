"""Indexing (``x[idx]``) and indexed updates (``x.at[idx].set(v)``) with numpy semantics.

An index expression is parsed once into entries, one per item: static ints,
slices (any step), ``None``, ``...``, integer arrays (static or traced),
concrete boolean masks (turned into integer arrays with ``nonzero``) and traced
scalar integers.

``x[idx]`` lowers to: one ``rev`` (negative steps) and one ``slice`` for the
static parts, a clamped ``dynamic_slice`` for traced scalars, and one
``gather`` for integer arrays (advanced indexing). Advanced indices broadcast
together; their dimensions replace the indexed axes when the advanced items are
adjacent in the index, and go first otherwise (numpy's rule; ``None`` and
``...`` between them count as separating). As in JAX, out-of-range indices written
as Python ints (``x[5]``, ``x[[0, 5]]``) raise ``IndexError``, while array indices
(numpy arrays, Arrays, traced values: indices computed from data) are clamped, eagerly
and under every transform alike (negative ones are first wrapped once).

``x.at[idx].<mode>(v)`` turns every indexed position into one row of a full
index grid and binds one ``scatter``: out-of-range rows are dropped (as in JAX),
duplicates accumulate for add/mul/min/max and the last one wins for set. The
eager path runs the same primitives, so eager and traced updates agree.

>>> import functrans.numpy as fnp
>>> x = fnp.arange(6.0).reshape(2, 3)
>>> x.at[:, [0, 2]].add(10.0).tolist()
[[10.0, 1.0, 12.0], [13.0, 4.0, 15.0]]
>>> x.at[5].set(1.0).tolist()   # out of range: dropped
[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
"""
from __future__ import annotations

import numpy as np

from ..errors import NonConcreteBooleanIndexError
from ..tracing import Tracer, wrap
from ..primitives import elementwise as E
from ..primitives import indexing as I
from ..primitives import slicing as Sl
from ..primitives import structural as S
from ._util import asarray, broadcasts_exactly

# nothing public: ``x[idx]`` and ``x.at[idx]`` reach these through the Array methods
__all__: list = []

_SLICE, _INT, _DYN, _ADV, _NONE = "slice", "int", "dyn", "adv", "none"
_ELL = "ellipsis"   # a marker with no axis: it separates advanced indices even when empty


class _Entry:
    """One item of an index: its kind, its position in the index tuple, the operand
    axis it consumes (None for ``None``) and its value."""
    __slots__ = ("kind", "pos", "dim", "value", "clamp")

    def __init__(self, kind, pos, dim=None, value=None, clamp=False):
        self.kind, self.pos, self.dim, self.value = kind, pos, dim, value
        self.clamp = clamp     # an array index (data): clamped, not checked


def _has_tracer(idx):
    if isinstance(idx, Tracer):
        return True
    if isinstance(idx, (tuple, list)):
        return any(_has_tracer(i) for i in idx)
    return False


def numpy_indexes_alike(idx) -> bool:
    """Whether numpy's own ``x[idx]`` gives fnp's answer (when it does not raise): no
    traced index, and no uint64 one (numpy reads those through intp, 2**64 - 1 as -1;
    fnp as the unsigned number it is, out of range high, clamped as under jit).

    >>> import numpy as np
    >>> numpy_indexes_alike((0, np.array([1, 2]))), numpy_indexes_alike(np.uint64(3))
    (True, False)
    """
    if isinstance(idx, (tuple, list)):
        return all(numpy_indexes_alike(i) for i in idx)
    if isinstance(idx, Tracer):
        return False
    return not (isinstance(idx, (np.ndarray, np.generic)) and idx.dtype == np.uint64)


def _static_int(v, what):
    if isinstance(v, Tracer):
        if v.val is None:
            raise IndexError(f"{what} must be static (a Python int), but it is a traced value "
                             f"{v.aval.str_short()}; use lax.dynamic_slice for traced starts")
        v = v.val
    return int(v)


def _mask_entries(mask, pos, dim, shape):
    """A concrete boolean mask as one integer-array entry per axis it covers."""
    for j in range(mask.ndim):
        if mask.shape[j] != shape[dim + j]:
            raise IndexError(f"boolean index did not match indexed array along axis {dim + j}; "
                             f"size of axis is {shape[dim + j]} but size of corresponding "
                             f"boolean axis is {mask.shape[j]}")
    return [_Entry(_ADV, pos, dim + j, a) for j, a in enumerate(np.nonzero(mask))]


def _as_index_array(item):
    """A list/array index as a numpy array or a tracer (lists may hold tracers)."""
    if isinstance(item, Tracer):
        return item
    if _has_tracer(item):
        return asarray(item)
    arr = np.asarray(item)
    if arr.size == 0 and arr.dtype.kind == "f":
        arr = arr.astype(np.int64)   # [] indexes as an empty integer array, as numpy
    return arr


_MASK = "mask"


def _classify(pos, item):
    """The entry for one index item (a mask stays one entry until axes are known)."""
    if item is None:
        return _Entry(_NONE, pos)
    if isinstance(item, slice):
        return _Entry(_SLICE, pos, value=item)
    if isinstance(item, (bool, np.bool_)):
        raise IndexError("a scalar boolean index (x[True]) is not supported; use "
                         "x[None] or fnp.where")
    if isinstance(item, (int, np.integer)):
        return _Entry(_INT, pos, value=int(item))
    arr = _as_index_array(item)
    kind = arr.dtype.kind
    if kind == "b":
        if isinstance(arr, Tracer):
            if arr.val is None:
                raise NonConcreteBooleanIndexError(
                    f"boolean mask indexing needs a concrete mask, but the mask "
                    f"{arr.aval.str_short()} is traced: the result's shape would depend on "
                    "the mask's values (a dynamic shape), which jit cannot express. Use "
                    "fnp.where(mask, x, other) or a fixed-size index instead.")
            arr = np.asarray(arr.val)
        if arr.ndim == 0:
            raise IndexError("a scalar boolean index (x[True]) is not supported; use "
                             "x[None] or fnp.where")
        return _Entry(_MASK, pos, value=arr)
    if kind not in "iu":
        raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and integer "
                         f"or boolean arrays are valid indices; got an index of dtype "
                         f"{arr.dtype}")
    clamp = isinstance(item, np.ndarray)     # lists of Python ints are static: checked
    arr = I.saturate_uint64(arr)
    if arr.ndim == 0:
        if isinstance(arr, Tracer):
            return _Entry(_DYN, pos, value=arr)
        return _Entry(_INT, pos, value=int(arr), clamp=clamp)
    return _Entry(_ADV, pos, value=arr, clamp=clamp)


def _parse(shape, idx):
    """The entries of ``idx`` for an operand of ``shape``: ``...`` and the missing
    trailing axes expanded into full slices, masks into integer arrays, each entry
    with the operand axis it indexes."""
    items = idx if isinstance(idx, tuple) else (idx,)
    entries, ell, used = [], None, 0
    for pos, item in enumerate(items):
        if item is Ellipsis:
            if ell is not None:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ell = (len(entries), pos)
            continue
        e = _classify(pos, item)
        entries.append(e)
        used += e.value.ndim if e.kind == _MASK else (e.kind != _NONE)
    nd = len(shape)
    if used > nd:
        raise IndexError(f"too many indices for array: array of shape {tuple(shape)} is "
                         f"{nd}-dimensional, but {used} were indexed")
    at, pos = ell if ell is not None else (len(entries), len(items))
    entries[at:at] = [_Entry(_SLICE, pos, value=slice(None)) for _ in range(nd - used)] + \
        ([_Entry(_ELL, pos)] if ell is not None else [])
    out, d = [], 0
    for e in entries:
        if e.kind == _MASK:
            es = _mask_entries(e.value, e.pos, d, shape)
            out += es
            d += len(es)
            continue
        if e.kind not in (_NONE, _ELL):
            e.dim = d
            d += 1
        out.append(e)
    return out


def _advanced_mode(entries, shape=None):
    """With any integer-array index, ints and traced scalars become advanced too (numpy).
    With ``shape`` (reading, not updating), static ints are checked first."""
    if any(e.kind == _ADV for e in entries):
        for e in entries:
            if e.kind == _INT and shape is not None and not e.clamp:
                _check_static(e.value, e.dim, shape)
            if e.kind in (_INT, _DYN):
                e.value = e.value if e.kind == _DYN else np.asarray(e.value, np.int64)
                e.kind = _ADV
        return True
    return False


def _check_static(value, dim, shape):
    """Raise numpy's IndexError for static out-of-range indices; wrap negatives."""
    v = np.asarray(value)
    size = shape[dim]
    bad = (v < -size) | (v >= size)
    if bad.any():
        raise IndexError(f"index {int(v[bad].flat[0])} is out of bounds for axis {dim} with "
                         f"size {size} (array shape {tuple(shape)})")
    return np.where(v < 0, v + size, v)


def _clamp_static(value, dim, shape):
    """A concrete array index as JAX reads it: negatives wrapped once, then clamped."""
    v = np.asarray(value, np.int64)
    size = shape[dim]
    return np.clip(np.where(v < 0, v + size, v), 0, max(size - 1, 0))


def _wrap_static(value, dim, shape):
    """A concrete array index wrapped once (negatives + size) but not clamped: the gather
    (promise_in_bounds) clamps the read and its transpose drops out-of-range rows."""
    v = np.asarray(I.saturate_uint64(np.asarray(value))).astype(np.int64)
    return np.where(v < 0, v + shape[dim], v)


def _wrap_negative(i, size):
    """Traced indices: ``i + size`` where ``i < 0`` (once, as numpy), via a select."""
    a = i.aval
    zero = S.full(a.shape, 0, a.dtype)
    return E.select_n(E.lt(i, zero), i, E.add(i, S.full(a.shape, size, a.dtype)))


def _index_dtype(values):
    traced = [v.dtype for v in values if isinstance(v, Tracer)]
    return np.dtype(np.int32) if traced and all(t == np.int32 for t in traced) else np.dtype(np.int64)


def _broadcast_index(name, arrays):
    shapes = [tuple(a.shape) for a in arrays]
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError(f"{name}: shape mismatch: indexing arrays could not be broadcast "
                         f"together with shapes {' '.join(map(str, shapes))}") from None


def _to_shape(v, shape, dtype):
    """Cast an index array to ``dtype`` and broadcast it (numpy-style) to ``shape``."""
    if isinstance(v, Tracer):
        v = E.convert_element_type(v, dtype)
        if v.shape == shape:
            return v
        nd = len(shape)
        return S.broadcast_in_dim(v, shape, tuple(range(nd - v.ndim, nd)))
    return np.broadcast_to(np.asarray(v, dtype), shape)


def _result_axes(entries, adv):
    """The result's axes in order: ``"none"``, a slice entry, or ``"block"`` (the
    broadcast advanced indices). The block replaces the advanced items when they are
    adjacent in the index and comes first otherwise (numpy's rule)."""
    placed = False
    axes = []
    if adv:
        adv_pos = [e.pos for e in entries if e.kind == _ADV]
        lo, hi = min(adv_pos), max(adv_pos)
        if any(e.kind != _ADV and lo <= e.pos <= hi for e in entries):
            axes.append("block")
            placed = True
    for e in entries:
        if e.kind == _NONE:
            axes.append("none")
        elif e.kind == _SLICE:
            axes.append(e)
        elif e.kind == _ADV and not placed:
            axes.append("block")
            placed = True
    return axes


def _scalar_bool(item):
    """True/False for a concrete 0-d boolean index item, else None."""
    if isinstance(item, (bool, np.bool_)):
        return bool(item)
    if isinstance(item, Tracer):
        ok = item.aval.shape == () and item.aval.dtype == np.bool_ and item.val is not None
        return bool(item.val) if ok else None
    if isinstance(item, np.ndarray) and item.shape == () and item.dtype == np.bool_:
        return bool(item)
    return None


def _axes_used(item):
    if item is None or item is Ellipsis or _scalar_bool(item) is not None:
        return 0
    if isinstance(item, (list, np.ndarray, Tracer)):
        a = item.aval if isinstance(item, Tracer) else np.asarray(item)
        return len(a.shape) if a.dtype == np.bool_ else 1
    return 1


def _expand_scalar_bools(x, idx):
    """numpy's scalar boolean index: ``True``/``False`` adds an axis of length 1/0 where it
    stands (and counts as an advanced index). ``x`` gets a length-1 axis there and the item
    becomes the index array ``[0]`` / ``[]`` into it; returns ``(x, idx)``."""
    items = idx if isinstance(idx, tuple) else (idx,)
    flags = [_scalar_bool(it) for it in items]
    if all(f is None for f in flags):
        return x, idx
    ell = next((i for i, it in enumerate(items) if it is Ellipsis), len(items))
    at, n = [], 0                       # (axis of x before which it goes, item position)
    for i in range(ell):
        at += [(n, i)] if flags[i] is not None else []
        n += _axes_used(items[i])
    n = len(x.shape)
    for i in range(len(items) - 1, ell, -1):
        at += [(n, i)] if flags[i] is not None else []
        n -= _axes_used(items[i])
    at.sort()
    shape = list(x.shape)
    for k, (axis, _) in enumerate(at):
        shape.insert(axis + k, 1)
    x = S.reshape(x, tuple(shape)) if isinstance(x, Tracer) else np.reshape(x, shape)
    new = [np.zeros(int(f), np.int64) if f is not None else it for it, f in zip(items, flags)]
    return x, tuple(new)


# --------------------------------------------------------------------------- x[idx]

def getitem(x, idx):
    """``x[idx]`` with numpy semantics; traced indices are clamped (see the module docstring).

    >>> import functrans as ft, functrans.numpy as fnp
    >>> ft.jit(lambda x, i: x[i, ::-1])(fnp.arange(6.0).reshape(2, 3), 1).tolist()
    [5.0, 4.0, 3.0]
    """
    if not isinstance(x, Tracer) and numpy_indexes_alike(idx):
        try:
            return wrap(np.asarray(x)[idx])
        except IndexError:
            pass        # out of range: array indices clamp (below), static ints raise
    if not isinstance(x, Tracer):
        x = np.asarray(x)
    x, idx = _expand_scalar_bools(x, idx)
    shape = tuple(x.shape)
    entries = _parse(shape, idx)
    adv = _advanced_mode(entries, shape)

    y = _static_part(x, entries, shape)
    if not adv:
        return _basic_tail(y, entries)
    return _advanced_tail(y, entries, shape)


def _static_part(x, entries, shape):
    """``x`` with the index's static slices (negative steps: reverse the axis, then slice
    forward) and static ints applied, their axes kept (as size 1 for the ints)."""
    rev_dims, starts, limits, strides = [], [], [], []
    for e in entries:
        if e.kind in (_NONE, _ELL):
            continue
        d = shape[e.dim]
        if e.kind == _SLICE:
            sl = e.value
            start, stop, step = (None if v is None else _static_int(v, "a slice bound")
                                 for v in (sl.start, sl.stop, sl.step))
            start, stop, step = slice(start, stop, step).indices(d)
            n = len(range(start, stop, step))
            if step < 0:
                rev_dims.append(e.dim)
                start, step = d - 1 - start, -step
            starts.append(start if n else 0)
            limits.append(start + (n - 1) * step + 1 if n else 0)
            strides.append(step)
        elif e.kind == _INT:
            i = int((_clamp_static if e.clamp else _check_static)(e.value, e.dim, shape))
            starts.append(i)
            limits.append(i + 1)
            strides.append(1)
        else:
            starts.append(0)
            limits.append(d)
            strides.append(1)
    y = Sl.rev(x, rev_dims)
    return Sl.slice(y, starts, limits, strides)


def _basic_tail(y, entries):
    """The rest of a basic index: dynamic ints as one dynamic_slice, then the final shape
    (int axes dropped, None axes inserted)."""
    dyn = [e for e in entries if e.kind == _DYN]
    if dyn:
        ysh = S.aval(y).shape
        dt = _index_dtype([e.value for e in dyn])
        st = [np.zeros((), dt)] * len(ysh)
        sizes = list(ysh)
        for e in dyn:
            if ysh[e.dim] == 0:      # no element to clamp to (JAX: IndexError too)
                raise IndexError(f"index is out of bounds for axis {e.dim} with size 0")
            st[e.dim] = _wrap_negative(E.convert_element_type(e.value, dt), ysh[e.dim])
            sizes[e.dim] = 1
        y = I.dynamic_slice(y, st, sizes, allow_negative_indices=False)
    ysh = S.aval(y).shape
    final = [1 if e.kind == _NONE else ysh[e.dim] for e in entries
             if e.kind in (_NONE, _SLICE)]
    return S.reshape(y, tuple(final))


def _advanced_tail(y, entries, shape):
    """The rest of an advanced index: the indexed axes to the front, one gather, then the
    broadcast block placed among the sliced axes."""
    ysh = S.aval(y).shape
    adv_e = [e for e in entries if e.kind == _ADV]
    rest = [e.dim for e in entries if e.kind == _SLICE]
    values = []
    for e in adv_e:
        v = e.value
        if isinstance(v, Tracer):
            v = _wrap_negative(E.convert_element_type(v, _index_dtype([v])), ysh[e.dim])
        else:
            v = (_wrap_static if e.clamp else _check_static)(v, e.dim, shape)
        values.append(v)
    bshape = _broadcast_index("getitem", values)
    dt = _index_dtype(values)
    cols = [S.reshape(_to_shape(v, bshape, dt), bshape + (1,)) for v in values]
    index = Sl.concatenate(cols, len(bshape)) if len(cols) > 1 else cols[0]
    y = S.transpose(y, tuple(e.dim for e in adv_e) + tuple(rest))
    # JAX's default mode: out-of-range rows read clamped and get no gradient
    out = I.gather(y, index, len(adv_e), "promise_in_bounds")
    # place the broadcast block among the sliced axes, then insert the None axes
    axes = _result_axes(entries, True)
    q = sum(1 for a in axes[:axes.index("block")] if isinstance(a, _Entry))
    nb, nr = len(bshape), len(rest)
    perm = tuple(range(nb, nb + q)) + tuple(range(nb)) + tuple(range(nb + q, nb + nr))
    out = S.transpose(out, perm)
    osh = S.aval(out).shape
    final, k = [], 0
    for a in axes:
        if a == "none":
            final.append(1)
        elif a == "block":
            final += list(osh[k:k + nb])
            k += nb
        else:
            final.append(osh[k])
            k += 1
    return S.reshape(out, tuple(final))


# --------------------------------------------------------------------------- x.at[idx]

def _slice_positions(sl, d):
    bounds = [None if v is None else _static_int(v, "a slice bound")
              for v in (sl.start, sl.stop, sl.step)]
    return np.arange(*slice(*bounds).indices(d), dtype=np.int64)


def _index_grid(shape, entries):
    """The index rows of every position of ``x[idx]``: an array of shape (*O, ndim)
    (static or traced) where O is the shape of ``x[idx]``; plus O. Negative indices
    are wrapped once; anything still out of range stays so (and is dropped)."""
    adv = _advanced_mode(entries)
    per_dim = {}   # operand axis -> (index values, the result axes they vary along)
    block = []
    for e in entries:
        if e.kind == _ADV:
            v = e.value
            if isinstance(v, Tracer):
                v = _wrap_negative(E.convert_element_type(v, _index_dtype([v])), shape[e.dim])
            else:
                v = np.asarray(v, np.int64)
                v = np.where(v < 0, v + shape[e.dim], v)
            block.append((e.dim, v))
        elif e.kind == _INT:
            i = e.value
            per_dim[e.dim] = (np.asarray(i + shape[e.dim] if i < 0 else i, np.int64), ())
        elif e.kind == _DYN:
            v = E.convert_element_type(e.value, _index_dtype([e.value]))
            per_dim[e.dim] = (_wrap_negative(v, shape[e.dim]), ())
    bshape = _broadcast_index("index update", [v for _, v in block]) if adv else ()
    out_shape = []
    for a in _result_axes(entries, adv):
        if a == "none":
            out_shape.append(1)
        elif a == "block":
            axes = tuple(range(len(out_shape), len(out_shape) + len(bshape)))
            for j, v in block:
                per_dim[j] = (v, axes)
            out_shape += list(bshape)
        else:
            v = _slice_positions(a.value, shape[a.dim])
            per_dim[a.dim] = (v, (len(out_shape),))
            out_shape.append(len(v))
    out_shape = tuple(out_shape)
    nd_out = len(out_shape)
    traced = [v for v, _ in per_dim.values() if isinstance(v, Tracer)]
    dt = _index_dtype(traced)
    cols = []
    for j in range(len(shape)):
        v, axes = per_dim[j]
        target = tuple(out_shape[a] for a in axes)
        v = _to_shape(v, target, dt)   # block indices broadcast to the block's shape
        if isinstance(v, Tracer):
            v = S.broadcast_in_dim(v, out_shape + (1,), axes)
        else:
            expanded = [1] * nd_out
            for a, n in zip(axes, target):
                expanded[a] = n
            v = np.broadcast_to(v.reshape(expanded), out_shape)[..., None]
        cols.append(v)
    if not cols:
        return np.zeros(out_shape + (0,), dt), out_shape
    if not traced:
        return np.concatenate(cols, axis=-1), out_shape
    return Sl.concatenate(cols, nd_out), out_shape


_MODES = ("set", "add", "mul", "min", "max")


def index_update(x, idx, values, mode):
    """``x`` with ``values`` combined into ``x[idx]`` by ``mode`` (set/add/mul/min/max).

    ``values`` broadcast to the shape of ``x[idx]`` and are cast to ``x.dtype``.

    >>> import functrans.numpy as fnp
    >>> fnp.zeros(4).at[[0, 0, 9]].add(1.0).tolist()
    [2.0, 0.0, 0.0, 0.0]
    """
    if mode not in _MODES:
        raise ValueError(f"index update mode must be one of {_MODES}, got {mode!r}")
    if not isinstance(x, Tracer):
        x = np.asarray(x)
    x0, (x, idx) = x, _expand_scalar_bools(x, idx)
    if x is not x0:         # an axis for each scalar bool: update, then drop them again
        out = index_update(x, idx, values, mode)
        return S.reshape(out, tuple(x0.shape)) if isinstance(out, Tracer) else \
            wrap(np.reshape(np.asarray(out), x0.shape))
    shape = tuple(x.shape)
    entries = _parse(shape, idx)
    k, entries = _window_split(shape, entries)
    grid, out_shape = _index_grid(shape[:k], entries)
    out_shape += shape[k:]
    v = asarray(values)
    if isinstance(v, Tracer):
        v = E.convert_element_type(v, x.dtype, False)
    else:
        v = np.asarray(v, x.dtype)
    if not broadcasts_exactly(v.shape, out_shape):
        raise ValueError(f"x.at[idx]: values of shape {tuple(v.shape)} cannot be broadcast to "
                         f"the indexed shape {out_shape} (operand shape {shape})")
    if isinstance(v, Tracer):
        nd = len(out_shape)
        v = S.broadcast_in_dim(v, out_shape, tuple(range(nd - v.ndim, nd)))
    else:
        v = np.broadcast_to(v, out_shape)
    out = I.scatter(x, grid, v, k, mode)
    return out if isinstance(out, Tracer) else wrap(out)


def _window_split(shape, entries):
    """(k, the entries indexing axes < k): the trailing axes that ``idx`` takes whole (full
    slices after every other item) stay windows of one scatter row, so ``x.at[ids].add(u)``
    on an (n, d) ``x`` scatters len(ids) rows of d, not len(ids)*d single elements each
    with its own index row (segment_sum over 20,000 x 64 floats: 3.5 ms -> JAX's 0.75)."""
    k = len(shape)
    cut = len(entries)
    while cut > 0 and k > 1:
        e = entries[cut - 1]
        if e.kind != _SLICE or shape[e.dim] == 0 or \
                len(_slice_positions(e.value, shape[e.dim])) != shape[e.dim] or \
                _slice_positions(e.value, shape[e.dim])[0] != 0:
            break
        cut -= 1
        k = e.dim
    return k, entries[:cut]
