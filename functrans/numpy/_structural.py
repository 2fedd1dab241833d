"""Structural functions of ``functrans.numpy``: reshaping, axis moves, broadcasting,
joining and splitting, flips, take, tile/repeat, pad and roll, with numpy semantics.

Eagerly (no tracer among the arguments) each calls numpy at once; under a trace it
lowers to the structural and indexing primitives (reshape, transpose,
broadcast_in_dim, squeeze, slice, rev, concatenate, pad, gather).

``take`` and ``take_along_axis`` live with the indexing code (``_indexing``) and
are exported from here; out of range, static indices raise ``IndexError`` (as numpy)
and traced ones give NaN for floats (as JAX's default ``mode="fill"``).

>>> import functrans.numpy as fnp
>>> fnp.reshape(fnp.zeros(6), (2, -1)).shape
(2, 3)
>>> fnp.take(fnp.arange(4.0), [0, -1, 9], mode="clip").tolist()
[0.0, 3.0, 3.0]
"""
from __future__ import annotations

import operator

import numpy as np

from ..tracing import Tracer, wrap
from ..primitives import structural as S
from ..primitives import indexing as I
from ..primitives import elementwise as E
from ._util import any_tracer, asarray, broadcast_to_shape, canonicalize_axis, result_dtype
from ._indexing import take, take_along_axis  # noqa: F401  (exported from here)

__all__ = ["reshape", "ravel", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze",
           "broadcast_to", "broadcast_arrays", "broadcast_shapes", "concatenate", "concat",
           "stack", "vstack", "hstack", "dstack", "column_stack", "split", "array_split",
           "hsplit", "vsplit", "take", "take_along_axis", "flip", "fliplr", "flipud", "tile",
           "repeat", "pad", "atleast_1d", "atleast_2d", "atleast_3d", "roll", "shape", "ndim",
           "size"]


def _arr(a):
    return a if isinstance(a, Tracer) else asarray(a)


def shape(a):
    return tuple(_arr(a).shape)


def ndim(a):
    return len(shape(a))


def size(a, axis=None):
    s = shape(a)
    return int(np.prod(s)) if axis is None else s[axis]


# --------------------------------------------------------------------------- reshape & axes

def _resolve_shape(size, shape, old_shape):
    shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    if shape.count(-1) > 1:
        raise ValueError(f"reshape: can only specify one unknown dimension, got {shape}")
    if any(s < -1 for s in shape):
        raise ValueError(f"reshape: negative dimension in new shape {shape}")
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1]))
        if known == 0 or size % known:
            raise ValueError(f"reshape: cannot reshape array of shape {tuple(old_shape)} "
                             f"(size {size}) into shape {shape}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    if int(np.prod(shape)) != size:
        raise ValueError(f"reshape: cannot reshape array of shape {tuple(old_shape)} "
                         f"(size {size}) into shape {shape}")
    return shape


def reshape(a, newshape=None, order="C", *, shape=None):
    """Reshape (one dimension may be -1); ``order="F"`` reshapes column-major.

    >>> import functrans.numpy as fnp
    >>> fnp.reshape(fnp.arange(6), (3, 2)).shape
    (3, 2)
    """
    newshape = shape if newshape is None else newshape
    if newshape is None:
        raise TypeError("reshape: missing the new shape")
    a = _arr(a)
    new = _resolve_shape(int(np.prod(a.shape)), newshape, a.shape)
    if order not in ("C", "F"):
        raise ValueError(f"reshape: order must be 'C' or 'F', got {order!r}")
    if not isinstance(a, Tracer):
        return wrap(np.ndarray.reshape(a, new, order=order))
    if order == "F":
        return transpose(S.reshape(transpose(a), new[::-1]))
    return S.reshape(a, new)


def ravel(a, order="C"):
    """The elements as a 1-d array (row-major)."""
    return reshape(a, (-1,), order)


def transpose(a, axes=None):
    """Permute axes (reverse them when ``axes`` is None)."""
    a = _arr(a)
    nd = len(a.shape)
    if axes is None:
        axes = tuple(reversed(range(nd)))
    else:
        axes = tuple(canonicalize_axis(x, nd, "transpose: axis") for x in axes)
    if sorted(axes) != list(range(nd)):
        raise ValueError(f"transpose: axes {axes} are not a permutation of the axes of an "
                         f"array of shape {tuple(a.shape)}")
    if not isinstance(a, Tracer):
        return wrap(np.transpose(a, axes))
    return S.transpose(a, axes)


def swapaxes(a, axis1, axis2):
    """Exchange two axes.

    >>> import functrans.numpy as fnp
    >>> fnp.swapaxes(fnp.zeros((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """
    a = _arr(a)
    nd = len(a.shape)
    perm = list(range(nd))
    i, j = canonicalize_axis(axis1, nd), canonicalize_axis(axis2, nd)
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a, source, destination):
    """Move axes ``source`` to positions ``destination``; the others keep their order.

    >>> import functrans.numpy as fnp
    >>> fnp.moveaxis(fnp.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    a = _arr(a)
    nd = len(a.shape)
    src = [source] if isinstance(source, (int, np.integer)) else list(source)
    dst = [destination] if isinstance(destination, (int, np.integer)) else list(destination)
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source} and destination {destination} must have "
                         "the same number of elements")
    src = [canonicalize_axis(s, nd, "moveaxis: source") for s in src]
    dst = [canonicalize_axis(d, nd, "moveaxis: destination") for d in dst]
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def expand_dims(a, axis):
    """Insert size-1 axes at positions ``axis`` of the result.

    >>> import functrans.numpy as fnp
    >>> fnp.expand_dims(fnp.zeros((2, 3)), (0, -1)).shape
    (1, 2, 3, 1)
    """
    a = _arr(a)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    nd = len(a.shape) + len(axes)
    axes = sorted(canonicalize_axis(x, nd, "expand_dims: axis") for x in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"expand_dims: repeated axis in {axis}")
    new = list(a.shape)
    for x in axes:
        new.insert(x, 1)
    return reshape(a, tuple(new))


def squeeze(a, axis=None):
    """Remove size-1 axes (all of them when ``axis`` is None).

    >>> import functrans.numpy as fnp
    >>> fnp.squeeze(fnp.zeros((1, 3, 1))).shape
    (3,)
    """
    a = _arr(a)
    nd = len(a.shape)
    if axis is None:
        axes = tuple(i for i, s in enumerate(a.shape) if s == 1)
    else:
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        axes = tuple(canonicalize_axis(x, nd, "squeeze: axis") for x in axes)
        bad = [x for x in axes if a.shape[x] != 1]
        if bad:
            raise ValueError(f"squeeze: cannot select axis {bad[0]} to squeeze out: it has "
                             f"size {a.shape[bad[0]]}, not 1 (array shape {tuple(a.shape)})")
    if not isinstance(a, Tracer):
        return wrap(np.squeeze(a, axes))
    return S.squeeze(a, axes)


# --------------------------------------------------------------------------- broadcasting

def broadcast_shapes(*shapes):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"shapes {' and '.join(str(tuple(s)) for s in shapes)} cannot be "
                         "broadcast together") from None


def broadcast_to(a, shape):
    """Broadcast ``a`` to ``shape`` with numpy's rules (trailing axes aligned).

    >>> import functrans.numpy as fnp
    >>> fnp.broadcast_to(fnp.ones(3), (2, 3)).shape
    (2, 3)
    """
    a = _arr(a)
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    try:
        ok = np.broadcast_shapes(tuple(a.shape), shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"broadcast_to: cannot broadcast shape {tuple(a.shape)} to {shape}")
    if not isinstance(a, Tracer):
        return wrap(np.broadcast_to(a, shape))
    return broadcast_to_shape(a, shape)


def broadcast_arrays(*args):
    """All arguments broadcast to their common shape (a list).

    >>> import functrans.numpy as fnp
    >>> [a.shape for a in fnp.broadcast_arrays(fnp.ones((2, 1)), fnp.ones(3))]
    [(2, 3), (2, 3)]
    """
    arrays = [_arr(a) for a in args]
    out = broadcast_shapes(*[tuple(a.shape) for a in arrays])
    return [broadcast_to(a, out) for a in arrays]


# --------------------------------------------------------------------------- joining

def _check_concat_shapes(name, arrays, axis):
    nd = len(arrays[0].shape)
    for i, a in enumerate(arrays[1:], 1):
        s0, s = tuple(arrays[0].shape), tuple(a.shape)
        if len(s) != nd or any(x != y for j, (x, y) in enumerate(zip(s0, s)) if j != axis):
            raise ValueError(f"{name}: array shapes {s0} (argument 0) and {s} (argument {i}) "
                             f"must match except along axis {axis}")


def concatenate(arrays, axis=0, dtype=None):
    """Join arrays along an existing axis (``axis=None``: flatten them first).

    >>> import functrans.numpy as fnp
    >>> fnp.concatenate([fnp.zeros(2), fnp.ones(1)]).tolist()
    [0.0, 0.0, 1.0]
    """
    if isinstance(arrays, (np.ndarray, Tracer)):
        arrays = list(arrays)
    arrays = [_arr(a) for a in arrays]
    if not arrays:
        raise ValueError("concatenate: need at least one array to concatenate")
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    if any(len(a.shape) == 0 for a in arrays):
        raise ValueError("concatenate: zero-dimensional arrays cannot be concatenated")
    axis = canonicalize_axis(axis, len(arrays[0].shape), "concatenate: axis")
    _check_concat_shapes("concatenate", arrays, axis)
    if not any_tracer(*arrays):
        return wrap(np.concatenate(arrays, axis=axis, dtype=dtype))
    dt = np.dtype(dtype) if dtype is not None else result_dtype(*arrays)
    arrays = [E.convert_element_type(a, dt) if isinstance(a, Tracer) else np.asarray(a, dt)
              for a in arrays]
    return S.concatenate(arrays, axis)


concat = concatenate


def stack(arrays, axis=0, dtype=None):
    """Join same-shape arrays along a new axis (also what ``fnp.asarray([tracers])`` uses).

    >>> import functrans.numpy as fnp
    >>> fnp.stack([fnp.zeros(2), fnp.ones(2)], axis=1).tolist()
    [[0.0, 1.0], [0.0, 1.0]]
    """
    arrays = [_arr(a) for a in arrays]
    if not arrays:
        raise ValueError("stack: need at least one array to stack")
    s0 = tuple(arrays[0].shape)
    for i, a in enumerate(arrays[1:], 1):
        if tuple(a.shape) != s0:
            raise ValueError(f"stack: all input arrays must have the same shape, got {s0} "
                             f"(argument 0) and {tuple(a.shape)} (argument {i})")
    axis = canonicalize_axis(axis, len(s0) + 1, "stack: axis")
    if not any_tracer(*arrays):
        return wrap(np.stack(arrays, axis, dtype=dtype))
    return concatenate([expand_dims(a, axis) for a in arrays], axis, dtype)


def atleast_1d(*arys):
    """Each argument with at least one axis (a list when given several)."""
    out = [a if a.ndim >= 1 else reshape(a, (1,)) for a in map(_arr, arys)]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    out = []
    for a in map(_arr, arys):
        out.append(a if a.ndim >= 2 else reshape(a, (1,) * (2 - a.ndim) + tuple(a.shape)))
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    """numpy's rule: (N,) -> (1, N, 1), (M, N) -> (M, N, 1)."""
    out = []
    for a in map(_arr, arys):
        s = tuple(a.shape)
        new = {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}.get(len(s), s)
        out.append(reshape(a, new))
    return out[0] if len(out) == 1 else out


def _as_list(arrays):
    if isinstance(arrays, Tracer) or (isinstance(arrays, np.ndarray) and arrays.ndim):
        return [arrays[i] for i in range(len(arrays))]
    return list(arrays)


def vstack(tup, dtype=None):
    """Stack along the first axis after ``atleast_2d``.

    >>> import functrans.numpy as fnp
    >>> fnp.vstack([fnp.zeros(2), fnp.ones(2)]).shape
    (2, 2)
    """
    return concatenate([atleast_2d(a) for a in _as_list(tup)], 0, dtype)


def hstack(tup, dtype=None):
    """Stack along the second axis (the first for 1-d inputs)."""
    arrs = [atleast_1d(a) for a in _as_list(tup)]
    return concatenate(arrs, 0 if arrs and arrs[0].ndim == 1 else 1, dtype)


def dstack(tup, dtype=None):
    """Stack along the third axis after ``atleast_3d``."""
    return concatenate([atleast_3d(a) for a in _as_list(tup)], 2, dtype)


def column_stack(tup):
    """1-d arrays become columns; 2-d arrays are stacked as they are."""
    arrs = [_arr(a) for a in tup]
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
    a = _arr(ary)
    axis = canonicalize_axis(axis, len(a.shape), f"{name}: axis")
    n = a.shape[axis]
    pts = _split_points(n, indices_or_sections, name, even)
    out = []
    for lo, hi in zip(pts[:-1], pts[1:]):
        lo, hi = min(max(lo if lo >= 0 else lo + n, 0), n), min(max(hi if hi >= 0 else hi + n, 0), n)
        hi = max(hi, lo)
        if isinstance(a, Tracer):
            out.append(S.slice_in_dim(a, lo, hi, 1, axis))
        else:
            out.append(wrap(np.asarray(a)[(slice(None),) * axis + (slice(lo, hi),)]))
    return out


def split(ary, indices_or_sections, axis=0):
    """Split into equal sections (an int) or at the given indices (a list).

    >>> import functrans.numpy as fnp
    >>> [p.tolist() for p in fnp.split(fnp.arange(4), [1])]
    [[0], [1, 2, 3]]
    """
    return _split("split", ary, indices_or_sections, axis, True)


def array_split(ary, indices_or_sections, axis=0):
    """Like ``split``, but an int need not divide the axis (the first pieces are longer)."""
    return _split("array_split", ary, indices_or_sections, axis, False)


def hsplit(ary, indices_or_sections):
    a = _arr(ary)
    return split(a, indices_or_sections, 0 if a.ndim == 1 else 1)


def vsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 0)


# --------------------------------------------------------------------------- flips, tiling

def flip(m, axis=None):
    """Reverse the order of elements along ``axis`` (all axes when None).

    >>> import functrans.numpy as fnp
    >>> fnp.flip(fnp.arange(3)).tolist()
    [2, 1, 0]
    """
    a = _arr(m)
    nd = len(a.shape)
    if axis is None:
        axes = tuple(range(nd))
    else:
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        axes = tuple(canonicalize_axis(x, nd, "flip: axis") for x in axes)
    if not isinstance(a, Tracer):
        return wrap(np.flip(a, axes))
    return S.rev(a, axes)


def fliplr(m):
    a = _arr(m)
    if a.ndim < 2:
        raise ValueError(f"fliplr: input must be at least 2-d, got shape {tuple(a.shape)}")
    return flip(a, 1)


def flipud(m):
    a = _arr(m)
    if a.ndim < 1:
        raise ValueError("flipud: input must be at least 1-d")
    return flip(a, 0)


def tile(A, reps):
    """Repeat the whole array ``reps`` times along each axis (numpy's rank rules).

    >>> import functrans.numpy as fnp
    >>> fnp.tile(fnp.arange(2), 2).tolist()
    [0, 1, 0, 1]
    """
    a = _arr(A)
    if isinstance(reps, np.ndarray):
        reps = reps.tolist()
    try:
        reps = (operator.index(reps),) if not isinstance(reps, (tuple, list)) else \
            tuple(operator.index(r) for r in reps)
    except TypeError:
        raise TypeError(f"tile: reps must be an int or a tuple of ints, got {reps!r:.60}") from None
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: negative repetitions {reps}")
    if not isinstance(a, Tracer):
        return wrap(np.tile(a, reps))
    nd = max(a.ndim, len(reps))
    shp = (1,) * (nd - a.ndim) + tuple(a.shape)
    reps = (1,) * (nd - len(reps)) + reps
    a = S.reshape(a, shp)
    big = tuple(x for r, s in zip(reps, shp) for x in (r, s))
    b = S.broadcast_in_dim(a, big, tuple(range(1, 2 * nd, 2)))
    return S.reshape(b, tuple(r * s for r, s in zip(reps, shp)))


def repeat(a, repeats, axis=None, total_repeat_length=None):
    """Repeat each element ``repeats`` times along ``axis`` (flattened when None).

    ``repeats`` must be static (an int or a concrete array).

    >>> import functrans.numpy as fnp
    >>> fnp.repeat(fnp.arange(2), [2, 1]).tolist()
    [0, 0, 1]
    """
    a = _arr(a)
    if isinstance(repeats, Tracer):
        if repeats.val is None:
            raise TypeError(f"repeat: repeats must be static, got a traced value "
                            f"{repeats.aval.str_short()} (the result's shape depends on it)")
        repeats = repeats.val
    reps = np.asarray(repeats)
    if reps.dtype.kind not in "iub" or (reps < 0).any():
        raise ValueError(f"repeat: repeats must be non-negative integers, got {repeats!r}")
    if not isinstance(a, Tracer):
        return wrap(np.repeat(a, reps, axis))
    if axis is None:
        a, axis = ravel(a), 0
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


def roll(a, shift, axis=None):
    """Shift elements cyclically by ``shift`` along ``axis`` (flattened when None); a
    traced shift is allowed.

    >>> import functrans.numpy as fnp
    >>> fnp.roll(fnp.arange(4), 1).tolist()
    [3, 0, 1, 2]
    """
    x = _arr(a)
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
        return wrap(np.roll(np.asarray(x), shifts, axes))
    for s, ax in zip(shifts, axes):
        ax = canonicalize_axis(ax, x.ndim, "roll: axis")
        n = x.shape[ax]
        if n == 0:
            continue
        if isinstance(s, Tracer) and s.val is None:
            from ._elementwise import remainder, subtract
            start = subtract(n, remainder(s, n))   # in [1, n]: the window of [x, x] to keep
            doubled = concatenate([x, x], ax)
            x = I.dynamic_slice_in_dim(doubled, E.convert_element_type(start, np.int64), n, ax)
            continue
        k = int(s if not isinstance(s, Tracer) else s.val) % n
        if k:
            x = concatenate([S.slice_in_dim(x, n - k, n, 1, ax), S.slice_in_dim(x, 0, n - k, 1, ax)], ax)
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


def pad(array, pad_width, mode="constant", **kwargs):
    """Pad with numpy's ``pad_width`` forms; modes constant (``constant_values``), edge,
    reflect, symmetric and wrap.

    >>> import functrans.numpy as fnp
    >>> fnp.pad(fnp.arange(3.0), (1, 2), constant_values=9.0).tolist()
    [9.0, 0.0, 1.0, 2.0, 9.0, 9.0]
    """
    a = _arr(array)
    nd = a.ndim
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"pad: mode {mode!r} is not supported (supported: "
                                  f"{', '.join(_PAD_MODES)})")
    widths = _pairs("pad_width", pad_width, nd)
    if widths.dtype.kind not in "iu":
        raise TypeError(f"pad: pad_width must be integers, got {pad_width!r}")
    if (widths < 0).any():
        raise ValueError(f"pad: pad_width must not be negative, got {pad_width!r}")
    widths = [(int(lo), int(hi)) for lo, hi in widths]
    cv = kwargs.pop("constant_values", 0)
    if kwargs:
        raise TypeError(f"pad: unsupported keyword arguments {sorted(kwargs)} for mode {mode!r}")
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
            return S.pad(a, pv, tuple((lo, hi, 0) for lo, hi in widths))
        cvs = _pairs("constant_values", cv, nd)
        if (cvs == cvs.flat[0]).all() if cvs.size else True:
            pv = np.asarray(cvs.flat[0] if cvs.size else 0).astype(a.dtype)
            return S.pad(a, pv, tuple((lo, hi, 0) for lo, hi in widths))
        for j in range(nd):   # different values per axis and side: one side at a time
            for side in (0, 1):
                cfg = [(0, 0, 0)] * nd
                cfg[j] = (widths[j][0], 0, 0) if side == 0 else (0, widths[j][1], 0)
                a = S.pad(a, np.asarray(cvs[j][side]).astype(a.dtype), tuple(cfg))
        return a
    # edge / reflect / symmetric / wrap select input elements: take with numpy's index map
    for j, (lo, hi) in enumerate(widths):
        if lo or hi:
            idx = np.pad(np.arange(a.shape[j]), (lo, hi), mode)
            a = take(a, idx, axis=j)
    return a
