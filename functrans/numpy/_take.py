"""``take`` and ``take_along_axis`` of ``functrans.numpy``, with numpy's index checks and
JAX's out-of-range modes (``x[idx]`` and ``x.at[idx]`` are in ``_indexing``).

Out of range, indices written as Python ints raise ``IndexError`` (as numpy) and array
indices (numpy arrays, Arrays, traced values) give NaN for floats (as JAX's default
``mode="fill"``), eagerly and under jit alike. Both lower to one ``gather``.

>>> import functrans.numpy as fnp
>>> fnp.take(fnp.arange(4.0), [0, -1, 9], mode="clip").tolist()   # as numpy: -1 clips to 0
[0.0, 0.0, 3.0]
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import dtype_kind

from ..tracing import Tracer, wrap
from ..weak_values import traced_when_weak
from ..primitives import elementwise as E
from ..primitives import indexing as I
from ..primitives import reductions as R
from ..primitives import slicing as Sl
from ..primitives import structural as S
from . import _structural as St
from ._elementwise import remainder
from ._elementwise_select import where
from ._util import any_tracer, asarray, broadcast_to_shape, canonicalize_axis, weakly
from typing import Sequence
from ..array import Array
from ..key_array import KeyArray, moved_by_index
from ..typing import ArrayLike

__all__ = ["take", "take_along_axis", "repeat"]

# Out-of-range indices in ``take``/``take_along_axis``: with the default ``mode=None``,
# Python ints (an int or a list of them) raise ``IndexError`` as numpy does and as
# ``x[idx]`` does, while arrays (data, whose values may be unknown under jit) get JAX's
# default ``"fill"`` wherever they are used, so eager and compiled results agree.
# ``"clip"`` wraps a negative index once and then clamps into range (``take`` clamps
# it to 0 first, as numpy's and JAX's take do: no negative indexing); ``"wrap"`` takes
# it modulo the axis size; ``"fill"`` returns ``fill_value`` at out-of-range positions
# (by default as JAX: NaN for inexact dtypes, the most negative value for signed
# integers, the largest for unsigned, True for bool); ``"raise"`` checks static indices
# and raises ``IndexError``.

def _arr(a):
    return a if isinstance(a, Tracer) else asarray(a)


def _check_int_indices(name, idx):
    if dtype_kind(idx.dtype) not in "iu":
        raise TypeError(f"{name}: indices must be integers, got dtype {idx.dtype}")


def _default_mode(indices, mode):
    """``mode=None`` for concrete indices: arrays fill (as traced ones), ints raise."""
    return "fill" if mode is None and isinstance(indices, np.ndarray) else mode


def _norm_static(name, idx, n, mode):
    """Static indices under ``mode``: (in-range indices, mask of valid ones or None)."""
    idx = np.asarray(idx)
    if mode == "wrap" and idx.dtype == np.uint64 and n:
        idx = np.mod(idx, np.uint64(n))     # as the huge number it is, before int64
    idx = np.asarray(I.saturate_uint64(idx), np.int64)
    if mode is None:
        mode = "raise"
    if mode == "wrap":
        return np.mod(idx, n) if n else idx, None
    if mode == "raise":
        bad = (idx < -n) | (idx >= n)
        if bad.any():
            raise IndexError(f"{name}: index {int(idx[bad].flat[0])} is out of bounds for "
                             f"axis of size {n}")
        return np.where(idx < 0, idx + n, idx), None
    wrapped = np.where(idx < 0, idx + n, idx)
    valid = (wrapped >= 0) & (wrapped < n)
    return np.clip(wrapped, 0, max(n - 1, 0)), (valid if mode == "fill" else None)


def _norm_traced(name, idx, n, mode):
    if mode is None:
        mode = "fill"
    if mode == "raise":
        raise IndexError(f"{name}: mode='raise' needs static indices; the indices "
                         f"{idx.aval.str_short()} are traced (use mode='clip' or 'fill')")
    if mode == "wrap" and idx.dtype == np.uint64:
        idx = remainder(idx, n)
    idx = I.saturate_uint64(idx)
    dt = np.dtype(np.int32) if idx.dtype == np.int32 else np.dtype(np.int64)
    idx = E.convert_element_type(idx, dt)
    if mode == "wrap":
        return remainder(idx, n), None
    shp = idx.shape
    neg = E.lt(idx, S.full(shp, 0, dt))
    idx = E.select_n(neg, idx, E.add(idx, S.full(shp, n, dt)))
    valid = None
    if mode == "fill":
        valid = E.bitwise_and(E.ge(idx, S.full(shp, 0, dt)), E.lt(idx, S.full(shp, n, dt)))
    return I.clamp_indices(idx, 0, max(n - 1, 0)), valid


def _fill(out, valid, fill_value, expand_at):
    """``out`` where ``valid`` (broadcast over the non-index axes), else the fill value."""
    if fill_value is None:
        dt = out.dtype
        fill_value = (np.nan if dtype_kind(dt) in "fc" else True if dtype_kind(dt) == "b" else
                      np.iinfo(dt).min if dtype_kind(dt) == "i" else np.iinfo(dt).max)
    v = valid
    v_shape = tuple(v.shape)
    o_shape = tuple(out.shape)
    full_v = [1] * len(o_shape)
    full_v[expand_at:expand_at + len(v_shape)] = v_shape
    v = St.reshape(v, tuple(full_v))
    # (a weak array's elements, filled, keep its type: JAX's gather with a fill value)
    return weakly(where(v, out, np.asarray(fill_value).astype(out.dtype)), out.weak_type)


_TAKE_MODES = (None, "clip", "wrap", "fill", "raise")


@traced_when_weak
def take(a: ArrayLike, indices: ArrayLike, axis: int | None = None,
         out: None = None, mode: str | None = None, unique_indices: bool = False,
         indices_are_sorted: bool = False, fill_value: ArrayLike | None = None) -> Array:
    """Elements of ``a`` at ``indices`` along ``axis`` (flattened when None).

    Out-of-range indices follow ``mode`` (default: static indices raise ``IndexError``,
    traced ones give the fill value, NaN for floats; see the comment above ``_arr``).

    >>> import functrans.numpy as fnp
    >>> fnp.take(fnp.arange(6).reshape(2, 3), [2, 0], axis=1).tolist()
    [[2, 0], [5, 3]]
    """
    if isinstance(a, KeyArray):                    # typed keys: take whole keys (rows of words)
        words = St.reshape(a._base, (-1, 2)) if axis is None else a._base
        ax = 0 if axis is None else canonicalize_axis(axis, a.ndim, "take: axis")
        return KeyArray(take(words, indices, ax, mode=mode, unique_indices=unique_indices,
                             indices_are_sorted=indices_are_sorted, fill_value=fill_value))
    if out is not None:
        raise TypeError("take: the out argument is not supported (arrays are immutable)")
    if mode not in _TAKE_MODES:
        raise ValueError(f"take: mode must be one of {_TAKE_MODES}, got {mode!r}")
    a = _arr(a)
    if axis is None:
        a, axis = St.ravel(a), 0
    axis = canonicalize_axis(axis, len(a.shape), "take: axis")
    idx = indices if isinstance(indices, Tracer) else asarray(indices)
    _check_int_indices("take", idx)
    n = a.shape[axis]
    if n == 0 and int(np.prod(idx.shape)) and mode != "fill":
        raise IndexError(f"take: cannot take indices from an empty axis {axis} of an array of "
                         f"shape {tuple(a.shape)}")
    if mode == "clip" and dtype_kind(idx.dtype) == "i":   # numpy's and JAX's take: -1 clips to 0
        idx = (np.maximum(np.asarray(idx), 0) if not isinstance(idx, Tracer) else
               I.clamp_indices(idx, 0, np.iinfo(idx.dtype).max))
    if not isinstance(idx, Tracer):
        norm, valid = _norm_static("take", idx, n, _default_mode(indices, mode))
        if not isinstance(a, Tracer):
            res = wrap(np.take(np.asarray(a), norm, axis=axis)) if n else \
                wrap(np.zeros(a.shape[:axis] + norm.shape + a.shape[axis + 1:], a.dtype))
            return res if valid is None else _fill(res, valid, fill_value, axis)
        idx = norm
    else:
        idx, valid = _norm_traced("take", idx, n, mode)
    nb = len(idx.shape)
    moved = St.moveaxis(a, axis, 0) if axis else a
    col = S.reshape(idx, tuple(idx.shape) + (1,))
    res = I.gather(moved, col, 1)
    # gather gives (*idx, *others): put the index axes where ``axis`` was
    nd = len(a.shape)
    perm = tuple(range(nb, nb + axis)) + tuple(range(nb)) + tuple(range(nb + axis, nb + nd - 1))
    res = S.transpose(res, perm) if isinstance(res, Tracer) else wrap(np.transpose(res, perm))
    return res if valid is None else _fill(res, valid, fill_value, axis)


@traced_when_weak
def take_along_axis(arr: ArrayLike, indices: ArrayLike, axis: int | None = -1,
                    mode: str | None = None, fill_value: ArrayLike | None = None) -> Array:
    """``arr`` indexed along ``axis`` (default the last, as JAX's and the Array API's) by
    ``indices`` of the same rank (other axes broadcast).

    >>> import functrans.numpy as fnp
    >>> fnp.take_along_axis(fnp.array([[3, 1, 2]]), fnp.array([[1, 2, 0]]), 1).tolist()
    [[1, 2, 3]]
    """
    if mode not in _TAKE_MODES:
        raise ValueError(f"take_along_axis: mode must be one of {_TAKE_MODES}, got {mode!r}")
    a = _arr(arr)
    idx = indices if isinstance(indices, Tracer) else asarray(indices)
    _check_int_indices("take_along_axis", idx)
    if axis is None:
        a, axis = St.ravel(a), 0
        idx = St.ravel(idx)
    nd = len(a.shape)
    if len(idx.shape) != nd:
        raise ValueError(f"take_along_axis: indices of shape {tuple(idx.shape)} must have the "
                         f"same number of dimensions as the array of shape {tuple(a.shape)}")
    axis = canonicalize_axis(axis, nd, "take_along_axis: axis")
    n = a.shape[axis]
    a_other = tuple(1 if j == axis else s for j, s in enumerate(a.shape))
    i_other = tuple(1 if j == axis else s for j, s in enumerate(idx.shape))
    try:
        out_shape = list(np.broadcast_shapes(a_other, i_other))
    except ValueError:
        raise ValueError(f"take_along_axis: indices of shape {tuple(idx.shape)} do not broadcast "
                         f"against the array of shape {tuple(a.shape)} outside axis {axis}") from None
    out_shape[axis] = idx.shape[axis]
    out_shape = tuple(out_shape)
    if isinstance(idx, Tracer):
        norm, valid = _norm_traced("take_along_axis", idx, n, mode)
    else:
        norm, valid = _norm_static("take_along_axis", idx, n, _default_mode(indices, mode))
    if not any_tracer(a, norm):
        norm = np.broadcast_to(norm, out_shape)
        res = wrap(np.take_along_axis(np.broadcast_to(np.asarray(a), tuple(
            s if j == axis else out_shape[j] for j, s in enumerate(a.shape))), norm, axis))
    else:
        dt = norm.dtype
        cols = []
        for j in range(nd):
            if j == axis:
                c = broadcast_to_shape(norm, out_shape)
            elif a.shape[j] == 1:
                c = S.full(out_shape, 0, dt)
            else:
                c = S.broadcasted_iota(dt, out_shape, j)
            cols.append(S.reshape(c, out_shape + (1,)))
        res = I.gather(a, Sl.concatenate(cols, nd), nd)
    if valid is not None:
        return _fill(res, St.broadcast_to(valid, out_shape), fill_value, 0)
    return res


def _fixed_length_indices(reps, total):
    """Gather indices for ``repeat`` with ``total_repeat_length`` (JAX's rule).

    Element ``i`` starts at ``sum(reps[:i])``; starts past ``total`` are dropped (the
    output is cut short) and the last started element fills a short output. ``reps``
    is a numpy array (static) or a traced 1-d integer array.

    >>> _fixed_length_indices(np.array([1, 0, 3, 2]), 8).tolist()
    [0, 2, 2, 2, 3, 3, 3, 3]
    """
    n = reps.shape[0]
    if not isinstance(reps, Tracer):
        starts = np.concatenate([[0], np.cumsum(reps[:-1], dtype=np.int64)])
        marks = np.zeros(total, np.int64)
        np.add.at(marks, starts[starts < total], 1)
        return np.cumsum(marks) - 1
    dt = reps.dtype
    excl = Sl.concatenate([S.full((1,), 0, dt), Sl.slice(reps, (0,), (n - 1,))], 0)
    starts = S.reshape(R.cumsum(excl, 0), (n, 1))
    marks = I.scatter_add(S.full((total,), 0, dt), starts, S.full((n,), 1, dt), 1)
    return E.sub(R.cumsum(marks, 0), S.full((total,), 1, dt))


@traced_when_weak
def repeat(a: ArrayLike, repeats: ArrayLike, axis: int | None = None,
           total_repeat_length: int | None = None) -> Array:
    """Repeat each element ``repeats`` times along ``axis`` (flattened when None).

    ``repeats`` must be static (an int or a concrete array) unless
    ``total_repeat_length`` fixes the output's length; then, as in JAX, a longer result
    is cut short and a shorter one is padded with the last element.

    >>> import functrans.numpy as fnp
    >>> fnp.repeat(fnp.arange(2), [2, 1]).tolist()
    [0, 0, 1]
    >>> fnp.repeat(fnp.arange(2), [2, 1], total_repeat_length=5).tolist()
    [0, 0, 1, 1, 1]
    """
    if isinstance(a, KeyArray):                    # typed keys: whole keys move
        return moved_by_index(repeat, a, repeats, axis, total_repeat_length)
    a = _arr(a)
    if total_repeat_length is not None:
        return _repeat_fixed(a, repeats, axis, int(total_repeat_length))
    if isinstance(repeats, Tracer):
        if repeats.val is None:
            raise TypeError(f"repeat: repeats must be static, got a traced value "
                            f"{repeats.aval.str_short()} (the result's shape depends on it)")
        repeats = repeats.val
    reps = np.asarray(repeats)
    if dtype_kind(reps.dtype) not in "iub" or (reps < 0).any():
        raise ValueError(f"repeat: repeats must be non-negative integers, got {repeats!r}")
    if not isinstance(a, Tracer):
        return wrap(np.repeat(a, reps, axis))
    if axis is None:
        a, axis = St.ravel(a), 0
    axis = canonicalize_axis(axis, a.ndim, "repeat: axis")
    n = a.shape[axis]
    if reps.ndim == 0:
        r = int(reps)
        big = a.shape[:axis + 1] + (r,) + a.shape[axis + 1:]
        dims = tuple(j if j <= axis else j + 1 for j in range(a.ndim))
        b = S.broadcast_in_dim(a, big, dims)
        return S.reshape(b, a.shape[:axis] + (n * r,) + a.shape[axis + 1:])
    reps = np.broadcast_to(reps, (n,))
    return take(a, np.repeat(np.arange(n), reps), axis=axis)


def _repeat_fixed(a, repeats, axis, total):
    """``repeat`` with a fixed output length ``total`` along ``axis``."""
    if isinstance(repeats, Tracer) and repeats.val is not None:
        repeats = repeats.val
    if axis is None:
        a, axis = (St.ravel(a) if isinstance(a, Tracer) else np.ravel(a)), 0
    axis = canonicalize_axis(axis, np.ndim(a), "repeat: axis")
    n = np.shape(a)[axis]
    if isinstance(repeats, Tracer):
        if dtype_kind(repeats.dtype) not in "iu":
            raise TypeError(f"repeat: repeats must be integers, got {repeats.aval.str_short()}")
        reps = St.broadcast_to(St.ravel(repeats), (n,))
    else:
        reps = np.asarray(repeats)
        if dtype_kind(reps.dtype) not in "iub" or (reps < 0).any():
            raise ValueError(f"repeat: repeats must be non-negative integers, got {repeats!r}")
        reps = np.broadcast_to(np.ravel(reps), (n,))
    if total < 0:
        raise ValueError(f"repeat: total_repeat_length must be >= 0, got {total}")
    if n == 0:
        return a if isinstance(a, Tracer) else wrap(np.asarray(a))
    idx = _fixed_length_indices(reps, total)
    if not any_tracer(a, idx):
        return wrap(np.take(a, idx, axis))
    return take(a, idx, axis=axis)
