"""Joining and splitting in ``functrans.numpy``: concatenate and the stack family, the
split family, and ``roll`` and ``pad``, which build their result from joined pieces;
numpy semantics (shape manipulation is in ``_structural``).

Eagerly (no tracer among the arguments) each calls numpy at once; under a trace it
lowers to the slicing primitives (concatenate, slice, pad; a traced roll shift takes a
dynamic_slice of the doubled array, pad modes other than constant gather).

>>> import functrans.numpy as fnp
>>> fnp.concatenate([fnp.zeros(2), fnp.ones(1)]).tolist()
[0.0, 0.0, 1.0]
>>> fnp.pad(fnp.arange(2), 1).tolist()
[0, 0, 1, 0]
"""
from __future__ import annotations

import numpy as np

from ..tracing import Tracer, wrap
from ..weak_values import traced_when_weak, typed_like
from ..primitives import elementwise as E
from ..primitives import indexing as I
from ..primitives import slicing as Sl
from ._elementwise import multiply, remainder, subtract
from ._util import all_weak, any_tracer, canonicalize_axis, result_dtype, weakly
from ._structural import (array_or_tracer, atleast_1d, atleast_2d, atleast_3d, broadcast_to,
                          expand_dims, ravel, reshape)
from ._take import take
from ._pad_stats import COMPUTED_MODES, pad_computed
from typing import Any, Sequence
from ..array import Array
from ..key_array import KeyArray, key_words, moved_by_index
from ..typing import ArrayLike, DTypeLike

__all__ = ["concatenate", "concat", "stack", "vstack", "hstack", "dstack", "column_stack",
           "split", "array_split", "hsplit", "vsplit", "roll", "pad"]


# --------------------------------------------------------------------------- joining

def _check_concat_shapes(name, arrays, axis):
    nd = len(arrays[0].shape)
    for i, a in enumerate(arrays[1:], 1):
        s0, s = tuple(arrays[0].shape), tuple(a.shape)
        if len(s) != nd or any(x != y for j, (x, y) in enumerate(zip(s0, s)) if j != axis):
            raise ValueError(f"{name}: array shapes {s0} (argument 0) and {s} (argument {i}) "
                             f"must match except along axis {axis}")


def concatenate(arrays: Sequence[ArrayLike], axis: int = 0,
                dtype: DTypeLike | None = None) -> Array:
    """Join arrays along an existing axis (``axis=None``: flatten them first).

    >>> import functrans.numpy as fnp
    >>> fnp.concatenate([fnp.zeros(2), fnp.ones(1)]).tolist()
    [0.0, 0.0, 1.0]
    """
    if any(isinstance(a, KeyArray) for a in arrays):       # typed keys: join their words
        words = [key_words("concatenate", a) for a in arrays]
        if axis is None:
            words, axis = [reshape(w, (-1, 2)) for w in words], 0
        axis = canonicalize_axis(axis, len(words[0].shape) - 1, "concatenate: axis")
        return KeyArray(concatenate(words, axis))
    if isinstance(arrays, (np.ndarray, Tracer)):
        arrays = list(arrays)
    arrays = [array_or_tracer(a) for a in arrays]
    if not arrays:
        raise ValueError("concatenate: need at least one array to concatenate")
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    if any(len(a.shape) == 0 for a in arrays):
        raise ValueError("concatenate: zero-dimensional arrays cannot be concatenated")
    axis = canonicalize_axis(axis, len(arrays[0].shape), "concatenate: axis")
    _check_concat_shapes("concatenate", arrays, axis)
    weak = dtype is None and all_weak(arrays)      # weak values joined stay weak (JAX)
    if not any_tracer(*arrays):   # a weak int joins a uint8 array wrapped, as when traced
        return weakly(wrap(np.concatenate(
            arrays, axis=axis, casting="same_kind" if dtype else "unsafe",
            dtype=dtype if dtype is not None else result_dtype(*arrays))), weak)
    dt = np.dtype(dtype) if dtype is not None else result_dtype(*arrays)
    arrays = [E.convert_element_type(a, dt, weak) if isinstance(a, Tracer)
              else weakly(np.asarray(a, dt), weak) for a in arrays]
    return Sl.concatenate(arrays, axis)


concat = concatenate


def stack(arrays: Sequence[ArrayLike], axis: int = 0, dtype: DTypeLike | None = None) -> Array:
    """Join same-shape arrays along a new axis (also what ``fnp.asarray([tracers])`` uses).

    >>> import functrans.numpy as fnp
    >>> fnp.stack([fnp.zeros(2), fnp.ones(2)], axis=1).tolist()
    [[0.0, 1.0], [0.0, 1.0]]
    """
    if any(isinstance(a, KeyArray) for a in arrays):
        words = [key_words("stack", a) for a in arrays]
        return KeyArray(stack(words, canonicalize_axis(axis, len(words[0].shape),
                                                       "stack: axis")))
    arrays = [array_or_tracer(a) for a in arrays]
    if not arrays:
        raise ValueError("stack: need at least one array to stack")
    s0 = tuple(arrays[0].shape)
    for i, a in enumerate(arrays[1:], 1):
        if tuple(a.shape) != s0:
            raise ValueError(f"stack: all input arrays must have the same shape, got {s0} "
                             f"(argument 0) and {tuple(a.shape)} (argument {i})")
    axis = canonicalize_axis(axis, len(s0) + 1, "stack: axis")
    if not any_tracer(*arrays):
        return weakly(wrap(np.stack(arrays, axis,
                                    dtype=dtype if dtype is not None else result_dtype(*arrays))),
                      dtype is None and all_weak(arrays))
    return concatenate([expand_dims(a, axis) for a in arrays], axis, dtype)


def _as_list(arrays):
    if isinstance(arrays, Tracer) or (isinstance(arrays, np.ndarray) and arrays.ndim):
        return [arrays[i] for i in range(len(arrays))]
    return list(arrays)


def vstack(tup: Sequence[ArrayLike], dtype: DTypeLike | None = None) -> Array:
    """Stack along the first axis after ``atleast_2d``.

    >>> import functrans.numpy as fnp
    >>> fnp.vstack([fnp.zeros(2), fnp.ones(2)]).shape
    (2, 2)
    """
    return concatenate([atleast_2d(a) for a in _as_list(tup)], 0, dtype)


def hstack(tup: Sequence[ArrayLike], dtype: DTypeLike | None = None) -> Array:
    """Stack along the second axis (the first for 1-d inputs)."""
    arrs = [atleast_1d(a) for a in _as_list(tup)]
    return concatenate(arrs, 0 if arrs and arrs[0].ndim == 1 else 1, dtype)


def dstack(tup: Sequence[ArrayLike], dtype: DTypeLike | None = None) -> Array:
    """Stack along the third axis after ``atleast_3d``."""
    return concatenate([atleast_3d(a) for a in _as_list(tup)], 2, dtype)


def column_stack(tup: Sequence[ArrayLike]) -> Array:
    """1-d arrays become columns; 2-d arrays are stacked as they are."""
    arrs = [array_or_tracer(a) for a in tup]
    return concatenate([reshape(a, (-1, 1)) if a.ndim < 2 else a for a in arrs], 1)


# --------------------------------------------------------------------------- splitting

def _split_points(n, sections, name, even):
    if isinstance(sections, (int, np.integer)):
        k = int(sections)
        if k <= 0:
            raise ValueError(f"{name}: number of sections must be larger than 0, got {k}")
        if even and n % k:
            raise ValueError(f"{name}: array split does not result in an equal division "
                             f"(axis of size {n} into {k} sections)")
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
        return list(np.cumsum([0] + sizes))
    pts = [int(p) for p in sections]
    return [0] + pts + [n]


def _split(name, ary, indices_or_sections, axis, even):
    if isinstance(ary, KeyArray):                  # typed keys: whole keys move
        return moved_by_index(lambda i: _split(name, i, indices_or_sections, axis, even), ary)
    a = array_or_tracer(ary)
    axis = canonicalize_axis(axis, len(a.shape), f"{name}: axis")
    n = a.shape[axis]
    pts = _split_points(n, indices_or_sections, name, even)
    out = []
    for lo, hi in zip(pts[:-1], pts[1:]):
        lo, hi = min(max(lo if lo >= 0 else lo + n, 0), n), min(max(hi if hi >= 0 else hi + n, 0), n)
        hi = max(hi, lo)
        if isinstance(a, Tracer):
            out.append(Sl.slice_in_dim(a, lo, hi, 1, axis))
        else:
            out.append(typed_like(a, np.asarray(a)[(slice(None),) * axis + (slice(lo, hi),)]))
    return out


def split(ary: ArrayLike, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Array]:
    """Split into equal sections (an int) or at the given indices (a list).

    >>> import functrans.numpy as fnp
    >>> [p.tolist() for p in fnp.split(fnp.arange(4), [1])]
    [[0], [1, 2, 3]]
    """
    return _split("split", ary, indices_or_sections, axis, True)


def array_split(ary: ArrayLike, indices_or_sections: int | Sequence[int],
                axis: int = 0) -> list[Array]:
    """Like ``split``, but an int need not divide the axis (the first pieces are longer)."""
    return _split("array_split", ary, indices_or_sections, axis, False)


def hsplit(ary: ArrayLike, indices_or_sections: int | Sequence[int]) -> list[Array]:
    """``split`` along axis 1 (axis 0 for a 1-d array).

    >>> import functrans.numpy as fnp
    >>> [p.shape for p in fnp.hsplit(fnp.ones((2, 4)), 2)]
    [(2, 2), (2, 2)]
    """
    a = ary if isinstance(ary, KeyArray) else array_or_tracer(ary)
    return split(a, indices_or_sections, 0 if a.ndim == 1 else 1)


def vsplit(ary: ArrayLike, indices_or_sections: int | Sequence[int]) -> list[Array]:
    """``split`` along axis 0.

    >>> import functrans.numpy as fnp
    >>> [p.tolist() for p in fnp.vsplit(fnp.arange(4).reshape(2, 2), 2)]
    [[[0, 1]], [[2, 3]]]
    """
    return split(ary, indices_or_sections, 0)


# --------------------------------------------------------------------------- roll

def roll(a: ArrayLike, shift: int | Sequence[int],
         axis: int | Sequence[int] | None = None) -> Array:
    """Shift elements cyclically by ``shift`` along ``axis`` (flattened when None); a
    traced shift is allowed.

    >>> import functrans.numpy as fnp
    >>> fnp.roll(fnp.arange(4), 1).tolist()
    [3, 0, 1, 2]
    """
    if isinstance(a, KeyArray):                    # typed keys: whole keys move
        return moved_by_index(roll, a, shift, axis)
    x = array_or_tracer(a)
    if axis is None:
        return reshape(roll(ravel(x), shift, 0), tuple(x.shape))
    shifts = (shift,) if not isinstance(shift, (tuple, list)) else tuple(shift)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift {shift} and axis {axis} must have the same length")
    if not any_tracer(x, *shifts):
        return typed_like(x, np.roll(np.asarray(x), shifts, axes))
    for s, ax in zip(shifts, axes):
        ax = canonicalize_axis(ax, x.ndim, "roll: axis")
        n = x.shape[ax]
        if n == 0:
            continue
        if isinstance(s, Tracer) and s.val is None:
            start = subtract(n, remainder(s, n))   # in [1, n]: the window of [x, x] to keep
            doubled = concatenate([x, x], ax)
            x = I.dynamic_slice_in_dim(doubled, E.convert_element_type(start, np.int64), n, ax,
                                        allow_negative_indices=False)
            continue
        k = int(s if not isinstance(s, Tracer) else s.val) % n
        if k:
            x = concatenate([Sl.slice_in_dim(x, n - k, n, 1, ax), Sl.slice_in_dim(x, 0, n - k, 1, ax)], ax)
    return x


# --------------------------------------------------------------------------- pad

_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "empty")


def _pairs(name, value, nd):
    try:
        arr = np.broadcast_to(np.asarray(value), (nd, 2))
    except ValueError:
        raise ValueError(f"pad: {name} {value!r} cannot be read as one (before, after) pair "
                         f"per axis of an array of rank {nd}") from None
    return arr


@traced_when_weak
def pad(array: ArrayLike, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Array:
    """Pad with numpy's ``pad_width`` forms; modes constant (``constant_values``), edge,
    reflect, symmetric, wrap, and linear_ramp (``end_values``), maximum, minimum, mean and
    median (``stat_length``).

    >>> import functrans.numpy as fnp
    >>> fnp.pad(fnp.arange(3.0), (1, 2), constant_values=9.0).tolist()
    [9.0, 0.0, 1.0, 2.0, 9.0, 9.0]
    """
    a = array_or_tracer(array)
    nd = a.ndim
    if mode not in _PAD_MODES + COMPUTED_MODES:
        raise NotImplementedError(f"pad: mode {mode!r} is not supported (supported: "
                                  f"{', '.join(_PAD_MODES)})")
    widths = _pairs("pad_width", pad_width, nd)
    if widths.dtype.kind not in "iu":
        raise TypeError(f"pad: pad_width must be integers, got {pad_width!r}")
    if (widths < 0).any():
        raise ValueError(f"pad: pad_width must not be negative, got {pad_width!r}")
    widths = [(int(lo), int(hi)) for lo, hi in widths]
    if nd == 0:   # nothing to pad (numpy broadcasts any pad_width to no axes)
        return a if isinstance(a, Tracer) else wrap(np.array(a))
    if mode in COMPUTED_MODES:
        if not any_tracer(a, *kwargs.values()):
            return wrap(np.pad(np.asarray(a), widths, mode, **kwargs))
        return pad_computed(a, widths, mode, dict(kwargs))
    cv = kwargs.pop("constant_values", 0)
    odd = mode in ("reflect", "symmetric") and kwargs.pop("reflect_type", "even") == "odd"
    if kwargs:
        raise TypeError(f"pad: unsupported keyword arguments {sorted(kwargs)} for mode {mode!r}")
    if odd:
        return _pad_odd(a, widths, mode)
    if not any_tracer(a, cv):
        if mode == "constant":
            return wrap(np.pad(np.asarray(a), widths, mode, constant_values=cv))
        return wrap(np.pad(np.asarray(a), widths, "constant" if mode == "empty" else mode))
    if mode in ("constant", "empty"):
        if mode == "empty":
            cv = 0
        if isinstance(cv, Tracer):
            if cv.ndim != 0:
                raise ValueError(f"pad: traced constant_values must be a scalar, got "
                                 f"{cv.aval.str_short()}")
            pv = E.convert_element_type(cv, a.dtype)
            return Sl.pad(a, pv, tuple((lo, hi, 0) for lo, hi in widths))
        cvs = _pairs("constant_values", cv, nd)
        if (cvs == cvs.flat[0]).all() if cvs.size else True:
            pv = np.asarray(cvs.flat[0] if cvs.size else 0).astype(a.dtype)
            return Sl.pad(a, pv, tuple((lo, hi, 0) for lo, hi in widths))
        for j in range(nd):   # different values per axis and side: one side at a time
            for side in (0, 1):
                cfg = [(0, 0, 0)] * nd
                cfg[j] = (widths[j][0], 0, 0) if side == 0 else (0, widths[j][1], 0)
                a = Sl.pad(a, np.asarray(cvs[j][side]).astype(a.dtype), tuple(cfg))
        return a
    # edge / reflect / symmetric / wrap select input elements by numpy's index map
    for j, (lo, hi) in enumerate(widths):
        if lo or hi:
            a = _take_runs(a, np.pad(np.arange(a.shape[j]), (lo, hi), mode), j)
    return a


_RUNS_MAX = 16    # more runs (pads many times the axis): one gather


def _index_runs(idx):
    """``idx`` cut into maximal runs of step 1, -1 or 0: (first, step, length) each."""
    runs, k = [], 0
    while k < len(idx):
        step = int(idx[k + 1] - idx[k]) if k + 1 < len(idx) else 1
        step = step if step in (-1, 0, 1) else 1
        end = k + 1
        while end < len(idx) and idx[end] - idx[end - 1] == step:
            end += 1
        runs.append((int(idx[k]), step, end - k))
        k = end
    return runs


def _take_runs(a, idx, j):
    """``take(a, idx, axis=j)`` for a static ``idx`` made of a few runs (a pad's index
    map): slices, reversed slices and broadcast edges concatenated, as JAX pads. A gather
    of the whole result was 4x JAX under jit (512 x 512 reflect: 1.2 ms, JAX 0.3)."""
    runs = _index_runs(idx)
    if len(runs) > _RUNS_MAX:
        return take(a, idx, axis=j)
    parts = []
    for first, step, length in runs:
        if step == 1:
            parts.append(Sl.slice_in_dim(a, first, first + length, 1, j))
        elif step == -1:
            parts.append(Sl.rev(Sl.slice_in_dim(a, first - length + 1, first + 1, 1, j), (j,)))
        else:
            one = Sl.slice_in_dim(a, first, first + 1, 1, j)
            shape = list(one.shape)
            shape[j] = length
            parts.append(broadcast_to(one, tuple(shape)))
    return parts[0] if len(parts) == 1 else Sl.concatenate(parts, j)


def _pad_odd(a, widths, mode):
    """numpy's ``reflect_type='odd'``: ``2 * edge - (the even reflection)``, one axis at a
    time; a pad wider than the axis repeats numpy's chunks, each reflected about the
    outermost value so far (the inside untouched, so an inf stays inf)."""
    if not any_tracer(a):
        return wrap(np.pad(np.asarray(a), widths, mode, reflect_type="odd"))
    sym = mode == "symmetric"
    for j, (lo, hi) in enumerate(widths):
        n = a.shape[j]
        if n == 1 and (lo or hi):   # numpy extends a singleton axis by its edge
            a = take(a, np.zeros(lo + 1 + hi, np.int64), axis=j)
            continue
        while lo or hi:   # numpy's _set_reflect_both, on the valid region so far
            length = a.shape[j]
            period = length // n * n if sym else (length - 1) // (n - 1) * (n - 1)
            if lo:
                c = min(period, lo)
                chunk = take(a, np.arange(c - sym, -sym, -1), axis=j)
                edge = take(a, np.zeros(c, np.int64), axis=j)
                a = concatenate([subtract(multiply(2, edge), chunk), a], j)
                lo -= c
            if hi:
                c = min(period, hi)
                m = a.shape[j]
                chunk = take(a, np.arange(m - 2 + sym, m - 2 + sym - c, -1), axis=j)
                edge = take(a, np.full(c, m - 1), axis=j)
                a = concatenate([a, subtract(multiply(2, edge), chunk)], j)
                hi -= c
    return a
