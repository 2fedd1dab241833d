"""Array-manipulation functions of ``functrans.numpy`` composed from existing ones:
``append diff ediff1d kron cross rot90 insert delete block meshgrid vander select
piecewise tril_indices triu_indices tril_indices_from triu_indices_from diag_indices
diag_indices_from diagflat indices rollaxis permute_dims matrix_transpose astype copy
unstack``.

Positions, counts and other shape-determining arguments (``insert``'s ``obj``,
``delete``'s ``obj``) must be static (Python ints or concrete arrays), as in JAX.

>>> import functrans.numpy as fnp
>>> fnp.diff(fnp.asarray([1, 4, 9])).tolist()
[3, 5]
"""
from __future__ import annotations

from typing import Any

import operator

import numpy as np

from ..primitives.custom import stop_gradient
from ..tracing import Tracer
from . import _elementwise as el
from . import _elementwise_select as sel
from . import _structural as st
from . import _joining as jn
from . import _products as pr
from ._creation import asarray, full_like, zeros
from ._util import canonicalize_axis
from typing import Any, Sequence
from ..array import Array
from ..key_array import KeyArray, moved_by_index
from ..typing import ArrayLike, DTypeLike, Shape
from ..weak_values import typed_like

__all__ = ["append", "diff", "ediff1d", "kron", "cross", "rot90", "insert", "delete",
           "block", "meshgrid", "vander", "select", "piecewise", "tril_indices",
           "triu_indices", "tril_indices_from", "triu_indices_from", "diag_indices",
           "diag_indices_from", "diagflat", "indices", "rollaxis", "permute_dims",
           "matrix_transpose", "astype", "copy", "unstack"]


def _static_ints(name, obj):
    """``obj`` as a numpy int array; a traced value is rejected (it fixes a shape)."""
    if isinstance(obj, Tracer):
        raise TypeError(f"{name}: the positions must be static (Python ints or a concrete "
                        f"array), because they determine the output shape")
    return np.asarray(obj)


def _slice_along(a, axis, start, stop):
    index = [slice(None)] * a.ndim
    index[axis] = slice(start, stop)
    return a[tuple(index)]


def append(arr: ArrayLike, values: ArrayLike, axis: int | None = None) -> Array:
    """``arr`` with ``values`` appended (both flattened when ``axis`` is None).

    >>> import functrans.numpy as fnp
    >>> fnp.append(fnp.asarray([1, 2]), [[3]]).tolist()
    [1, 2, 3]
    """
    if not (isinstance(arr, KeyArray) or isinstance(values, KeyArray)):
        arr, values = asarray(arr), asarray(values)
    if axis is None:
        return jn.concatenate([st.ravel(arr), st.ravel(values)])
    return jn.concatenate([arr, values], axis=axis)


def diff(a: ArrayLike, n: int = 1, axis: int = -1, prepend: ArrayLike | None = None,
         append: ArrayLike | None = None) -> Array:  # noqa: A002 (numpy's names)
    """The ``n``-th discrete difference along ``axis``.

    >>> import functrans.numpy as fnp
    >>> fnp.diff(fnp.asarray([1.0, 2.0, 4.0, 8.0]), n=2).tolist()
    [1.0, 2.0]
    """
    a = asarray(a)
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: order n must be non-negative, got {n}")
    axis = canonicalize_axis(axis, a.ndim)
    if n == 0:                # a itself: prepend/append are not joined (numpy, JAX)
        return a
    parts = []
    for extra in (prepend, None, append):
        if extra is None:
            continue
        extra = asarray(extra)
        if extra.ndim == 0:
            shape = list(a.shape)
            shape[axis] = 1
            extra = st.broadcast_to(extra, tuple(shape))
        parts.append(extra)
    if parts:
        parts = ([parts[0]] if prepend is not None else []) + [a] + \
                ([parts[-1]] if append is not None else [])
        a = jn.concatenate(parts, axis=axis)
    for _ in range(n):
        m = a.shape[axis]
        upper, lower = _slice_along(a, axis, 1, m), _slice_along(a, axis, 0, m - 1)
        a = el.not_equal(upper, lower) if a.dtype == np.bool_ else el.subtract(upper, lower)
    return a


def ediff1d(ary: ArrayLike, to_end: ArrayLike | None = None,
            to_begin: ArrayLike | None = None) -> Array:
    """Differences of consecutive elements of the flattened ``ary``.

    >>> import functrans.numpy as fnp
    >>> fnp.ediff1d(fnp.asarray([1, 3, 6]), to_begin=0).tolist()
    [0, 2, 3]
    """
    flat = st.ravel(asarray(ary))
    parts = [diff(flat)]
    if to_begin is not None:
        parts.insert(0, asarray(st.ravel(asarray(to_begin)), parts[0].dtype))
    if to_end is not None:
        parts.append(asarray(st.ravel(asarray(to_end)), parts[0].dtype))
    return jn.concatenate(parts)


def kron(a: ArrayLike, b: ArrayLike) -> Array:
    """Kronecker product.

    >>> import functrans.numpy as fnp
    >>> fnp.kron(fnp.eye(2), fnp.ones((1, 2))).tolist()
    [[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]]
    """
    a, b = asarray(a), asarray(b)
    nd = max(a.ndim, b.ndim)
    a = st.reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = st.reshape(b, (1,) * (nd - b.ndim) + b.shape)
    # interleave: a's axis i at 2i, b's at 2i+1, then merge each pair
    a_exp = st.reshape(a, tuple(d for s in a.shape for d in (s, 1)))
    b_exp = st.reshape(b, tuple(d for s in b.shape for d in (1, s)))
    prod = el.multiply(a_exp, b_exp)
    return st.reshape(prod, tuple(x * y for x, y in zip(a.shape, b.shape)))


def cross(a: ArrayLike, b: ArrayLike, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | Sequence[int] | None = None) -> Array:
    """Cross product of 3-vectors (or the scalar z-component for 2-vectors).

    >>> import functrans.numpy as fnp
    >>> fnp.cross(fnp.asarray([1.0, 0, 0]), fnp.asarray([0.0, 1, 0])).tolist()
    [0.0, 0.0, 1.0]
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a = st.moveaxis(asarray(a), axisa, -1)
    b = st.moveaxis(asarray(b), axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError(f"cross: vectors must have 2 or 3 components, got shapes "
                         f"{a.shape} and {b.shape}")
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    a2 = a[..., 2] if a.shape[-1] == 3 else None
    b2 = b[..., 2] if b.shape[-1] == 3 else None
    z = el.subtract(el.multiply(a0, b1), el.multiply(a1, b0))
    if a2 is None and b2 is None:
        return z
    # a missing third component is an exact 0 (a0 * 0 was NaN for an infinite a0)
    a2 = full_like(a0, 0) if a2 is None else a2
    b2 = full_like(b0, 0) if b2 is None else b2
    x = el.subtract(el.multiply(a1, b2), el.multiply(a2, b1))
    y = el.subtract(el.multiply(a2, b0), el.multiply(a0, b2))
    out = jn.stack(list(st.broadcast_arrays(x, y, z)), axis=-1)
    return st.moveaxis(out, -1, axisc)


def rot90(m: ArrayLike, k: int = 1, axes: Sequence[int] = (0, 1)) -> Array:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (from the first
    toward the second axis).

    >>> import functrans.numpy as fnp
    >>> fnp.rot90(fnp.asarray([[1, 2], [3, 4]])).tolist()
    [[2, 4], [1, 3]]
    """
    if isinstance(m, KeyArray):                    # typed keys: whole keys move
        return moved_by_index(rot90, m, k, axes)
    m = asarray(m)
    ax0, ax1 = (canonicalize_axis(a, m.ndim) for a in axes)
    if ax0 == ax1:
        raise ValueError("rot90: the two axes must differ")
    k = operator.index(k) % 4
    if k == 0:
        return m
    if k == 2:
        return st.flip(st.flip(m, ax0), ax1)
    perm = list(range(m.ndim))
    perm[ax0], perm[ax1] = perm[ax1], perm[ax0]
    if k == 1:
        return st.transpose(st.flip(m, ax1), perm)
    return st.flip(st.transpose(m, perm), ax1)


def insert(arr: ArrayLike, obj: ArrayLike | slice, values: ArrayLike,
           axis: int | None = None) -> Array:
    """``values`` inserted before the static positions ``obj`` along ``axis``.

    >>> import functrans.numpy as fnp
    >>> fnp.insert(fnp.asarray([1, 2, 3]), 1, 9).tolist()
    [1, 9, 2, 3]
    """
    arr = asarray(arr)
    if axis is None:
        arr, axis = st.ravel(arr), 0
    axis = canonicalize_axis(axis, arr.ndim)
    n = arr.shape[axis]
    if isinstance(obj, slice):
        obj = np.arange(n)[obj]
    pos = _static_ints("insert", obj)
    flat = pos.reshape(-1).astype(np.int64)
    if np.any((flat < -n) | (flat > n)):
        raise IndexError(f"insert: position {obj} is out of bounds for axis of size {n}")
    flat = np.where(flat < 0, flat + n, flat)
    values = asarray(values, arr.dtype)
    shape = list(arr.shape)
    if pos.ndim == 0:
        # numpy: a scalar position inserts a block whose leading axis goes to ``axis``
        v = st.reshape(values, (1,) * (arr.ndim - values.ndim) + values.shape)
        v = st.moveaxis(v, 0, axis)
        shape[axis] = v.shape[axis]
        vals = st.broadcast_to(v, tuple(shape))
        p = int(flat[0])
        return jn.concatenate([_slice_along(arr, axis, 0, p), vals,
                               _slice_along(arr, axis, p, n)], axis=axis)
    shape[axis] = len(flat)
    vals = st.broadcast_to(values, tuple(shape))
    # numpy inserts the values in the order of their (stable-sorted) positions
    pieces, prev = [], 0
    for j in np.argsort(flat, kind="stable"):
        p = int(flat[j])
        pieces += [_slice_along(arr, axis, prev, p), _slice_along(vals, axis, int(j), int(j) + 1)]
        prev = p
    pieces.append(_slice_along(arr, axis, prev, n))
    return jn.concatenate(pieces, axis=axis)


def delete(arr: ArrayLike, obj: ArrayLike | slice, axis: int | None = None) -> Array:
    """``arr`` without the entries at static positions ``obj`` (int, slice or ints).

    >>> import functrans.numpy as fnp
    >>> fnp.delete(fnp.asarray([1, 2, 3, 4]), [0, 2]).tolist()
    [2, 4]
    """
    arr = asarray(arr)
    if axis is None:
        arr, axis = st.ravel(arr), 0
    axis = canonicalize_axis(axis, arr.ndim)
    n = arr.shape[axis]
    if isinstance(obj, slice):
        drop = np.arange(n)[obj]
    else:
        drop = _static_ints("delete", obj).reshape(-1)
        if drop.dtype == np.bool_:
            drop = np.nonzero(drop)[0]
        if np.any((drop < -n) | (drop >= n)):
            raise IndexError(f"delete: index {obj} is out of bounds for axis of size {n}")
        drop = drop % n if n else drop
    keep = np.setdiff1d(np.arange(n), drop)
    return st.moveaxis(st.moveaxis(arr, axis, 0)[keep], 0, axis)


def _block_depth(arrays):
    return 1 + _block_depth(arrays[0]) if isinstance(arrays, list) else 0


def block(arrays: ArrayLike | Sequence[Any]) -> Array:
    """Assemble an array from nested lists of blocks (the innermost list joins the
    last axis).

    >>> import functrans.numpy as fnp
    >>> fnp.block([[fnp.eye(1), fnp.zeros((1, 1))], [fnp.ones((1, 2))]]).tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    depth = _block_depth(arrays)

    def leaves_ndim(x):
        return max(leaves_ndim(e) for e in x) if isinstance(x, list) else asarray(x).ndim
    nd = max(depth, leaves_ndim(arrays))

    def join(x, level):
        if not isinstance(x, list):
            x = asarray(x)
            return st.reshape(x, (1,) * (nd - x.ndim) + x.shape)
        if not x:
            raise ValueError("block: lists must not be empty")
        return jn.concatenate([join(e, level + 1) for e in x], axis=nd - depth + level)
    return join(arrays, 0)


def meshgrid(*xi: ArrayLike, copy: bool = True, sparse: bool = False,
             indexing: str = "xy") -> list[Array]:
    """Coordinate arrays from 1-d coordinate vectors (``indexing`` 'xy' or 'ij').

    >>> import functrans.numpy as fnp
    >>> [g.tolist() for g in fnp.meshgrid(fnp.asarray([1, 2]), fnp.asarray([3]))]
    [[[1, 2]], [[3, 3]]]
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [st.ravel(asarray(x)) for x in xi]
    nd = len(xs)
    grids = []
    for i, x in enumerate(xs):
        shape = [1] * nd
        shape[i] = x.shape[0]
        grids.append(st.reshape(x, tuple(shape)))
    if indexing == "xy" and nd >= 2:
        grids = [st.swapaxes(g, 0, 1) for g in grids]
    if sparse:
        return grids
    return list(st.broadcast_arrays(*grids))


def vander(x: ArrayLike, N: int | None = None, increasing: bool = False) -> Array:
    """Vandermonde matrix: columns are powers of ``x`` (decreasing unless ``increasing``).

    >>> import functrans.numpy as fnp
    >>> fnp.vander(fnp.asarray([2, 3]), 3).tolist()
    [[4, 2, 1], [9, 3, 1]]
    """
    x = asarray(x)
    if x.ndim != 1:
        raise ValueError(f"vander: x must be one-dimensional, got shape {x.shape}")
    N = x.shape[0] if N is None else operator.index(N)
    if N == 0:
        return zeros((x.shape[0], 0), x.dtype)
    # numpy's running product x**k = x**(k-1) * x (its values, bit for bit): one multiply
    # a column, where a power per column was ~10x numpy eagerly and 3x JAX compiled
    cols = [full_like(x, 1)]
    for _ in range(N - 1):
        cols.append(el.multiply(cols[-1], x) if len(cols) > 1 else x)
    return jn.stack(cols if increasing else cols[::-1], axis=1)


def select(condlist: Sequence[ArrayLike], choicelist: Sequence[ArrayLike],
           default: ArrayLike = 0) -> Array:
    """The first choice whose condition holds, elementwise; ``default`` elsewhere.

    >>> import functrans.numpy as fnp
    >>> x = fnp.arange(4)
    >>> fnp.select([x < 1, x > 2], [x, x * 10], -1).tolist()
    [0, -1, -1, 30]
    """
    if len(condlist) != len(choicelist):
        raise ValueError("select: condlist and choicelist must have the same length")
    if not condlist:
        raise ValueError("select: condlist must not be empty")
    # a Python number stays weakly typed (uint8 choices keep uint8, as in jit and JAX)
    out = default if type(default) in (bool, int, float, complex) else asarray(default)
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        cond = asarray(cond)
        if cond.dtype != np.bool_:
            raise TypeError(f"select: conditions must be boolean, got {cond.dtype}")
        out = sel.where(cond, choice, out)
    return out


def piecewise(x: ArrayLike, condlist: Sequence[ArrayLike], funclist: Sequence[Any],
              *args: ArrayLike, **kw: Any) -> Array:
    """Evaluate ``funclist[i]`` (a function or a constant) where ``condlist[i]`` holds;
    one extra function is the default (else 0). The later condition wins where several
    hold (as in numpy). Every function is evaluated on all of ``x``, but, as JAX's
    per-element ``switch``, a function's derivative only reaches the elements it was
    chosen for: ``piecewise(x, [x > 0], [sqrt, 0.0])`` has gradient 0 (not NaN) at 0.

    >>> import functrans.numpy as fnp
    >>> x = fnp.asarray([-1.0, 2.0])
    >>> fnp.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v ** 2]).tolist()
    [1.0, 4.0]
    """
    x = asarray(x)
    if isinstance(condlist, (Tracer, np.ndarray)) and asarray(condlist).ndim == x.ndim:
        condlist = [condlist]
    condlist = list(condlist)
    funclist = list(funclist)
    if len(funclist) not in (len(condlist), len(condlist) + 1):
        raise ValueError(f"piecewise: {len(condlist)} conditions need {len(condlist)} or "
                         f"{len(condlist) + 1} functions, got {len(funclist)}")
    default = funclist[-1] if len(funclist) == len(condlist) + 1 else 0
    branches = [default] + funclist[:len(condlist)]
    index = zeros(x.shape, np.int32)          # 0: the default; i + 1: condition i
    for i, cond in enumerate(condlist):
        index = sel.where(asarray(cond), np.int32(i + 1), index)
    out = None
    for i, f in enumerate(branches):
        chosen = el.equal(index, np.int32(i))
        if callable(f):   # elsewhere f reads x through stop_gradient (JAX's switch batching)
            v = f(sel.where(chosen, x, stop_gradient(x)), *args, **kw)
        else:
            v = f
        v = st.broadcast_to(asarray(v, x.dtype), x.shape)
        out = v if out is None else sel.where(chosen, v, out)
    return out


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """Row and column indices of the lower triangle of an ``(n, m)`` array.

    >>> import functrans.numpy as fnp
    >>> [v.tolist() for v in fnp.tril_indices(2)]
    [[0, 1, 1], [0, 0, 1]]
    """
    return tuple(asarray(v) for v in np.tril_indices(n, k, m))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Array, Array]:
    """Row and column indices of the upper triangle of an ``(n, m)`` array.

    >>> import functrans.numpy as fnp
    >>> [v.tolist() for v in fnp.triu_indices(2)]
    [[0, 0, 1], [0, 1, 1]]
    """
    return tuple(asarray(v) for v in np.triu_indices(n, k, m))


def tril_indices_from(arr: ArrayLike, k: int = 0) -> tuple[Array, Array]:
    """``tril_indices`` for the shape of the 2-d ``arr``.

    >>> import functrans.numpy as fnp
    >>> [v.tolist() for v in fnp.tril_indices_from(fnp.ones((2, 2)), -1)]
    [[1], [0]]
    """
    shape = asarray(arr).shape
    if len(shape) != 2:
        raise ValueError(f"tril_indices_from: arr must be 2-d, got shape {shape}")
    return tril_indices(shape[0], k, shape[1])


def triu_indices_from(arr: ArrayLike, k: int = 0) -> tuple[Array, Array]:
    """``triu_indices`` for the shape of the 2-d ``arr``.

    >>> import functrans.numpy as fnp
    >>> [v.tolist() for v in fnp.triu_indices_from(fnp.ones((2, 2)), 1)]
    [[0], [1]]
    """
    shape = asarray(arr).shape
    if len(shape) != 2:
        raise ValueError(f"triu_indices_from: arr must be 2-d, got shape {shape}")
    return triu_indices(shape[0], k, shape[1])


def diag_indices(n: int, ndim: int = 2) -> tuple[Array, ...]:
    """Indices of the main diagonal of an ``n``-sided ``ndim``-d array.

    >>> import functrans.numpy as fnp
    >>> [v.tolist() for v in fnp.diag_indices(2)]
    [[0, 1], [0, 1]]
    """
    return tuple(asarray(v) for v in np.diag_indices(n, ndim))


def diag_indices_from(arr: ArrayLike) -> tuple[Array, ...]:
    """``diag_indices`` for ``arr``, whose sides must be equal.

    >>> import functrans.numpy as fnp
    >>> len(fnp.diag_indices_from(fnp.ones((3, 3))))
    2
    """
    shape = asarray(arr).shape
    if len(shape) < 2 or len(set(shape)) != 1:
        raise ValueError(f"diag_indices_from: all sides must be equal, got shape {shape}")
    return diag_indices(shape[0], len(shape))


def diagflat(v: ArrayLike, k: int = 0) -> Array:
    """A 2-d array with the flattened ``v`` on diagonal ``k``.

    >>> import functrans.numpy as fnp
    >>> fnp.diagflat(fnp.asarray([[1, 2]])).tolist()
    [[1, 0], [0, 2]]
    """
    return pr.diag(st.ravel(asarray(v)), k)


def indices(dimensions: Shape, dtype: DTypeLike = np.int64,
            sparse: bool = False) -> Array | tuple[Array, ...]:
    """Index grids of the given shape (stacked, or a tuple of broadcastable ones).

    >>> import functrans.numpy as fnp
    >>> fnp.indices((2, 2)).tolist()
    [[[0, 0], [1, 1]], [[0, 1], [0, 1]]]
    """
    out = np.indices(tuple(dimensions), dtype=dtype, sparse=sparse)
    return tuple(asarray(v) for v in out) if sparse else asarray(out)


def rollaxis(a: ArrayLike, axis: int, start: int = 0) -> Array:
    """Move ``axis`` to before position ``start`` (numpy's older ``moveaxis``).

    >>> import functrans.numpy as fnp
    >>> fnp.rollaxis(fnp.ones((2, 3, 4)), 2).shape
    (4, 2, 3)
    """
    a = asarray(a)
    axis = canonicalize_axis(axis, a.ndim)
    if not -a.ndim <= start <= a.ndim:
        raise ValueError(f"rollaxis: start {start} is out of bounds for rank {a.ndim}")
    start = start + a.ndim if start < 0 else start
    if axis < start:
        start -= 1
    return st.moveaxis(a, axis, start)


def permute_dims(a: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """``transpose`` under the array-API name (``axes`` None reverses them, as numpy's).

    >>> import functrans.numpy as fnp
    >>> fnp.permute_dims(fnp.ones((2, 3)), (1, 0)).shape
    (3, 2)
    """
    return st.transpose(asarray(a), axes)


def matrix_transpose(x: ArrayLike) -> Array:
    """Swap the last two axes.

    >>> import functrans.numpy as fnp
    >>> fnp.matrix_transpose(fnp.ones((4, 2, 3))).shape
    (4, 3, 2)
    """
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: needs rank >= 2, got shape {x.shape}")
    return st.swapaxes(x, -1, -2)


def astype(x: ArrayLike, dtype: DTypeLike, copy: bool = False, *, device: Any = None) -> Array:
    """``x`` converted to ``dtype``.

    >>> import functrans.numpy as fnp
    >>> fnp.astype(fnp.asarray([1.7]), fnp.int64).tolist()
    [1]
    >>> fnp.astype(np.array([300.7, -2.0, np.nan]), fnp.uint8).tolist()   # saturates, as jit
    [255, 0, 0]
    """
    a = asarray(x)
    if dtype is None:           # numpy's and JAX's default float, traced or not
        dtype = np.float64
    if not isinstance(a, Tracer):
        a = a.astype(dtype)     # Array.astype: float -> int saturates, as convert_element_type
    return asarray(a, dtype, device=device)


def copy(a: ArrayLike, order: str | None = None) -> Array:
    """A copy of ``a`` (arrays are immutable, so the same values).

    >>> import functrans.numpy as fnp
    >>> fnp.copy(fnp.asarray([1, 2])).tolist()
    [1, 2]
    """
    if isinstance(a, KeyArray):
        return a.copy()
    a = asarray(a)
    return a if isinstance(a, Tracer) else typed_like(a, np.array(a))


def unstack(x: ArrayLike, axis: int = 0) -> tuple[Array, ...]:
    """The slices of ``x`` along ``axis``, as a tuple.

    >>> import functrans.numpy as fnp
    >>> [v.tolist() for v in fnp.unstack(fnp.asarray([[1, 2], [3, 4]]))]
    [[1, 2], [3, 4]]
    """
    x = st.moveaxis(x if isinstance(x, KeyArray) else asarray(x), axis, 0)
    return tuple(x[i] for i in range(x.shape[0]))
