"""Shape manipulation in ``functrans.numpy``: reshaping, axis moves, broadcasting,
``atleast_*``, flips and tile, with numpy semantics (joining, splitting, roll and pad
are in ``_joining``; take, take_along_axis and repeat, which gathers, in ``_take``).

Eagerly (no tracer among the arguments) each calls numpy at once; under a trace it
lowers to the structural primitives (reshape, transpose, broadcast_in_dim, squeeze,
rev).

>>> import functrans.numpy as fnp
>>> fnp.reshape(fnp.zeros(6), (2, -1)).shape
(2, 3)
>>> fnp.tile(fnp.arange(2), (2, 1)).tolist()
[[0, 1], [0, 1]]
"""
from __future__ import annotations

import operator

import numpy as np

from ..tracing import Tracer, wrap
from ..primitives import slicing as Sl
from ..primitives import structural as S
from ._util import asarray, broadcast_to_shape, canonicalize_axis
from typing import Sequence
from ..array import Array
from ..key_array import KeyArray, moved_by_index
from ..typing import ArrayLike, Shape
from ..eager_values import WEAK_NUMBERS
from ..weak_values import typed_like, weak_view

__all__ = ["reshape", "ravel", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze",
           "broadcast_to", "broadcast_arrays", "broadcast_shapes", "flip", "fliplr", "flipud",
           "tile", "atleast_1d", "atleast_2d", "atleast_3d", "shape", "ndim", "size"]


def array_or_tracer(a):
    """A tracer as it is, anything else as an array: a Python number weakly typed (as
    ``fnp.asarray``'s, JAX's), so that reshaping or joining numbers keeps their type."""
    if isinstance(a, Tracer):
        return a
    return weak_view(asarray(a)) if type(a) in WEAK_NUMBERS else asarray(a)


def _keys_or_array(a):
    """Typed keys as they are (for functions that only reshape them), else an array."""
    return a if isinstance(a, KeyArray) else array_or_tracer(a)


def shape(a: ArrayLike) -> tuple[int, ...]:
    """The shape of ``a`` (an array, a tracer, a number or a nested list) as a tuple.

    >>> import functrans.numpy as fnp
    >>> fnp.shape([[1, 2, 3], [4, 5, 6]]), fnp.shape(2.0)
    ((2, 3), ())
    """
    if isinstance(a, KeyArray):
        return a.shape
    return tuple(array_or_tracer(a).shape)


def ndim(a: ArrayLike) -> int:
    """The number of axes of ``a``.

    >>> import functrans.numpy as fnp
    >>> fnp.ndim(fnp.ones((2, 3))), fnp.ndim(1.0)
    (2, 0)
    """
    return len(shape(a))


def size(a: ArrayLike, axis: int | None = None) -> int:
    """The number of elements of ``a``, or the length of its axis ``axis``.

    >>> import functrans.numpy as fnp
    >>> fnp.size(fnp.ones((2, 3))), fnp.size(fnp.ones((2, 3)), 1)
    (6, 3)
    """
    s = shape(a)
    return int(np.prod(s)) if axis is None else s[axis]


# --------------------------------------------------------------------------- reshape & axes

def resolve_shape(size, shape, old_shape):
    """``shape`` (one -1 allowed) checked against ``size`` elements, as a tuple."""
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


def reshape(a: ArrayLike, shape: Shape | None = None, order: str = "C", *,
            newshape: Shape | None = None, copy: bool | None = None) -> Array:
    """Reshape (one dimension may be -1); ``order="F"`` reshapes column-major. The
    parameters are JAX's (the Array API's ``shape``; numpy 1's ``newshape=`` keyword is
    accepted too); ``copy`` is accepted and, arrays being immutable, makes no difference.

    >>> import functrans.numpy as fnp
    >>> fnp.reshape(fnp.arange(6), (3, 2)).shape
    (3, 2)
    """
    del copy
    if shape is not None and newshape is not None:
        raise TypeError("reshape: give the new shape once (shape or newshape)")
    newshape = shape if newshape is None else newshape
    if isinstance(a, KeyArray):                    # typed keys: their own shape
        return a.reshape(newshape)
    if newshape is None:
        raise TypeError("reshape: missing the new shape")
    a = array_or_tracer(a)
    new = resolve_shape(int(np.prod(a.shape)), newshape, a.shape)
    if order not in ("C", "F"):
        raise ValueError(f"reshape: order must be 'C' or 'F', got {order!r}")
    if not isinstance(a, Tracer):
        return typed_like(a, np.ndarray.reshape(a, new, order=order))
    if order == "F":
        return transpose(S.reshape(transpose(a), new[::-1]))
    return S.reshape(a, new)


def ravel(a: ArrayLike, order: str = "C") -> Array:
    """The elements as a 1-d array (row-major)."""
    return reshape(a, (-1,), order)


def transpose(a: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """Permute axes (reverse them when ``axes`` is None)."""
    if isinstance(a, KeyArray):                    # typed keys: the words' axis stays last
        return a.transpose(*(() if axes is None else (tuple(axes),)))
    a = array_or_tracer(a)
    nd = len(a.shape)
    if axes is None:
        axes = tuple(reversed(range(nd)))
    else:
        axes = tuple(canonicalize_axis(x, nd, "transpose: axis") for x in axes)
    if sorted(axes) != list(range(nd)):
        raise ValueError(f"transpose: axes {axes} are not a permutation of the axes of an "
                         f"array of shape {tuple(a.shape)}")
    if not isinstance(a, Tracer):
        return typed_like(a, np.transpose(a, axes))
    return S.transpose(a, axes)


def swapaxes(a: ArrayLike, axis1: int, axis2: int) -> Array:
    """Exchange two axes.

    >>> import functrans.numpy as fnp
    >>> fnp.swapaxes(fnp.zeros((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """
    a = a if isinstance(a, KeyArray) else array_or_tracer(a)    # keys: transposed whole
    nd = len(a.shape)
    perm = list(range(nd))
    i, j = canonicalize_axis(axis1, nd), canonicalize_axis(axis2, nd)
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a: ArrayLike, source: int | Sequence[int], destination: int | Sequence[int]) -> Array:
    """Move axes ``source`` to positions ``destination``; the others keep their order.

    >>> import functrans.numpy as fnp
    >>> fnp.moveaxis(fnp.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    a = a if isinstance(a, KeyArray) else array_or_tracer(a)    # keys: transposed whole
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


def expand_dims(a: ArrayLike, axis: int) -> Array:
    """Insert size-1 axes at positions ``axis`` of the result.

    >>> import functrans.numpy as fnp
    >>> fnp.expand_dims(fnp.zeros((2, 3)), (0, -1)).shape
    (1, 2, 3, 1)
    """
    if isinstance(a, KeyArray):
        return a.expand_dims(axis)
    a = array_or_tracer(a)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    nd = len(a.shape) + len(axes)
    axes = sorted(canonicalize_axis(x, nd, "expand_dims: axis") for x in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"expand_dims: repeated axis in {axis}")
    new = list(a.shape)
    for x in axes:
        new.insert(x, 1)
    return reshape(a, tuple(new))


def squeeze(a: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    """Remove size-1 axes (all of them when ``axis`` is None).

    >>> import functrans.numpy as fnp
    >>> fnp.squeeze(fnp.zeros((1, 3, 1))).shape
    (3,)
    """
    if isinstance(a, KeyArray):
        return a.squeeze(axis)
    a = array_or_tracer(a)
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
        return typed_like(a, np.squeeze(a, axes))
    return S.squeeze(a, axes)


# --------------------------------------------------------------------------- broadcasting

def broadcast_shapes(*shapes: Shape) -> tuple[int, ...]:
    """The shape that arrays of ``shapes`` broadcast to (numpy's rule).

    >>> import functrans.numpy as fnp
    >>> fnp.broadcast_shapes((3, 1), (4,))
    (3, 4)
    """
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"shapes {' and '.join(str(tuple(s)) for s in shapes)} cannot be "
                         "broadcast together") from None


def broadcast_to(a: ArrayLike, shape: int | Shape) -> Array:
    """Broadcast ``a`` to ``shape`` with numpy's rules (trailing axes aligned).

    >>> import functrans.numpy as fnp
    >>> fnp.broadcast_to(fnp.ones(3), (2, 3)).shape
    (2, 3)
    """
    if isinstance(a, KeyArray):                    # the words' axis rides along
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        words = reshape(a._base, (1,) * (len(shape) - a.ndim) + tuple(a._base.shape))
        return KeyArray(broadcast_to(words, shape + (2,)))
    a = array_or_tracer(a)
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    try:
        ok = np.broadcast_shapes(tuple(a.shape), shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"broadcast_to: cannot broadcast shape {tuple(a.shape)} to {shape}")
    if not isinstance(a, Tracer):
        return typed_like(a, np.broadcast_to(a, shape))
    return broadcast_to_shape(a, shape)


def broadcast_arrays(*args: ArrayLike) -> list[Array]:
    """All arguments broadcast to their common shape (a list).

    >>> import functrans.numpy as fnp
    >>> [a.shape for a in fnp.broadcast_arrays(fnp.ones((2, 1)), fnp.ones(3))]
    [(2, 3), (2, 3)]
    """
    arrays = [a if isinstance(a, KeyArray) else array_or_tracer(a) for a in args]
    out = broadcast_shapes(*[tuple(a.shape) for a in arrays])
    return [broadcast_to(a, out) for a in arrays]


# --------------------------------------------------------------------------- atleast_*

def atleast_1d(*arys: ArrayLike) -> Array | list[Array]:
    """Each argument with at least one axis (a list when given several)."""
    out = [a if a.ndim >= 1 else reshape(a, (1,)) for a in map(_keys_or_array, arys)]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys: ArrayLike) -> Array | list[Array]:
    """Each argument with at least two axes, new ones in front (a list when given
    several).

    >>> import functrans.numpy as fnp
    >>> fnp.atleast_2d(1.0).shape, fnp.atleast_2d(fnp.ones(3)).shape
    ((1, 1), (1, 3))
    """
    out = []
    for a in map(_keys_or_array, arys):
        out.append(a if a.ndim >= 2 else reshape(a, (1,) * (2 - a.ndim) + tuple(a.shape)))
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys: ArrayLike) -> Array | list[Array]:
    """numpy's rule: (N,) -> (1, N, 1), (M, N) -> (M, N, 1)."""
    out = []
    for a in map(_keys_or_array, arys):
        s = tuple(a.shape)
        new = {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}.get(len(s), s)
        out.append(reshape(a, new))
    return out[0] if len(out) == 1 else out


# --------------------------------------------------------------------------- flips, tiling

def flip(m: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    """Reverse the order of elements along ``axis`` (all axes when None).

    >>> import functrans.numpy as fnp
    >>> fnp.flip(fnp.arange(3)).tolist()
    [2, 1, 0]
    """
    if isinstance(m, KeyArray):                    # typed keys: whole keys move
        return moved_by_index(flip, m, axis)
    a = array_or_tracer(m)
    nd = len(a.shape)
    if axis is None:
        axes = tuple(range(nd))
    else:
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        axes = tuple(canonicalize_axis(x, nd, "flip: axis") for x in axes)
    if not isinstance(a, Tracer):
        return typed_like(a, np.flip(a, axes))
    return Sl.rev(a, axes)


def fliplr(m: ArrayLike) -> Array:
    """Reverse the order along axis 1 (left and right), for arrays of 2 or more axes.

    >>> import functrans.numpy as fnp
    >>> fnp.fliplr(fnp.arange(4).reshape(2, 2)).tolist()
    [[1, 0], [3, 2]]
    """
    a = _keys_or_array(m)
    if a.ndim < 2:
        raise ValueError(f"fliplr: input must be at least 2-d, got shape {tuple(a.shape)}")
    return flip(a, 1)


def flipud(m: ArrayLike) -> Array:
    """Reverse the order along axis 0 (up and down).

    >>> import functrans.numpy as fnp
    >>> fnp.flipud(fnp.arange(3)).tolist()
    [2, 1, 0]
    """
    a = _keys_or_array(m)
    if a.ndim < 1:
        raise ValueError("flipud: input must be at least 1-d")
    return flip(a, 0)


def tile(A: ArrayLike, reps: int | Sequence[int]) -> Array:
    """Repeat the whole array ``reps`` times along each axis (numpy's rank rules).

    >>> import functrans.numpy as fnp
    >>> fnp.tile(fnp.arange(2), 2).tolist()
    [0, 1, 0, 1]
    """
    if isinstance(A, KeyArray):                    # typed keys: their words' axis once
        r = (reps,) if isinstance(reps, (int, np.integer)) else tuple(reps)
        return KeyArray(tile(A._base, r + (1,)))
    a = array_or_tracer(A)
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
        return typed_like(a, np.tile(a, reps))
    nd = max(a.ndim, len(reps))
    shp = (1,) * (nd - a.ndim) + tuple(a.shape)
    reps = (1,) * (nd - len(reps)) + reps
    a = S.reshape(a, shp)
    big = tuple(x for r, s in zip(reps, shp) for x in (r, s))
    b = S.broadcast_in_dim(a, big, tuple(range(1, 2 * nd, 2)))
    return S.reshape(b, tuple(r * s for r, s in zip(reps, shp)))
