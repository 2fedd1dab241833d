"""Index-arithmetic and scatter-style functions of ``functrans.numpy``: ``choose lexsort
sort_complex top_k resize ravel_multi_index unravel_index put place put_along_axis
fill_diagonal``.

``put``/``place``/``put_along_axis``/``fill_diagonal`` return a new array and require
``inplace=False`` (arrays are immutable), as JAX does.

>>> import functrans.numpy as fnp
>>> [v.tolist() for v in fnp.unravel_index(fnp.asarray([5]), (2, 3))]
[[1], [2]]
"""
from __future__ import annotations

import operator

import numpy as np

from jaxpr_ir import dtype_kind

from ..tracing import Tracer
from . import _elementwise as el
from . import _elementwise_select as sel
from . import _structural as st
from . import _joining as jn
from ._creation import asarray
from ._sorting import argsort
from ._take import take_along_axis
from ._util import canonicalize_axis
from typing import Sequence
from ..array import Array
from ..typing import ArrayLike, Shape

__all__ = ["choose", "lexsort", "sort_complex", "top_k", "resize", "ravel_multi_index",
           "unravel_index", "put", "place", "put_along_axis", "fill_diagonal"]


def _check_index_mode(name, mode, *xs):
    if mode in (None, "raise"):
        if any(isinstance(x, Tracer) for x in xs):
            raise TypeError(f"{name}: mode='raise' needs concrete indices; under a transform "
                            f"pass mode='clip' or mode='wrap'")
        return "raise"
    if mode not in ("clip", "wrap"):
        raise ValueError(f"{name}: mode must be 'raise', 'clip' or 'wrap', got {mode!r}")
    return mode


def _fit_index(name, idx, n, mode):
    if mode == "raise":
        v = np.asarray(idx)
        if np.any((v < 0) | (v >= n)):
            raise ValueError(f"{name}: index out of range for size {n}")
        return idx
    return sel.clip(idx, 0, n - 1) if mode == "clip" else el.remainder(idx, n)


def choose(a: ArrayLike, choices: ArrayLike | Sequence[ArrayLike], out: None = None,
           mode: str = "raise") -> Array:
    """``choices[a[i]][i]`` elementwise, everything broadcast together.

    >>> import functrans.numpy as fnp
    >>> fnp.choose(fnp.asarray([0, 1, 0]), [fnp.zeros(3), fnp.ones(3)]).tolist()
    [0.0, 1.0, 0.0]
    """
    if out is not None:
        raise ValueError("choose: out= is not supported (arrays are immutable)")
    a = asarray(a)
    choices = [asarray(c) for c in choices]
    mode = _check_index_mode("choose", mode, a)
    a = _fit_index("choose", a, len(choices), mode)
    parts = st.broadcast_arrays(a, *choices)
    stacked = jn.stack(list(parts[1:]), axis=0)
    return take_along_axis(stacked, st.expand_dims(parts[0], 0), axis=0)[0]


def lexsort(keys: ArrayLike | Sequence[ArrayLike], axis: int = -1) -> Array:
    """Indices sorting by the last key first, ties broken by earlier keys (stable).

    >>> import functrans.numpy as fnp
    >>> fnp.lexsort((fnp.asarray([1, 0, 2]), fnp.asarray([0, 0, 1]))).tolist()
    [1, 0, 2]
    """
    keys = [asarray(k) for k in keys]
    if not keys:
        raise TypeError("lexsort: need at least one key")
    keys = list(st.broadcast_arrays(*keys))
    idx = argsort(keys[0], axis=axis)
    for k in keys[1:]:
        idx = take_along_axis(idx, argsort(take_along_axis(k, idx, axis=axis), axis=axis),
                              axis=axis)
    return idx


def sort_complex(a: ArrayLike) -> Array:
    """Sort by real part, then imaginary part; the result is complex.

    >>> import functrans.numpy as fnp
    >>> fnp.sort_complex(fnp.asarray([1 + 2j, 1 - 1j, 0j])).tolist()
    [0j, (1-1j), (1+2j)]
    """
    a = asarray(a)
    if dtype_kind(a.dtype) != "c":
        a = asarray(a, np.complex128 if a.dtype != np.float32 else np.complex64)
    idx = lexsort((sel.imag(a), sel.real(a)), axis=-1)
    return take_along_axis(a, idx, axis=-1)


def top_k(operand: ArrayLike, k: int) -> tuple[Array, Array]:
    """The ``k`` largest entries along the last axis (descending) and their indices.

    >>> import functrans.numpy as fnp
    >>> [v.tolist() for v in fnp.top_k(fnp.asarray([1, 5, 3]), 2)]
    [[5, 3], [1, 2]]
    """
    operand = asarray(operand)
    k = operator.index(k)
    if not 0 <= k <= operand.shape[-1]:
        raise ValueError(f"top_k: k={k} is out of range for last axis {operand.shape[-1]}")
    idx = argsort(operand, axis=-1, descending=True)[..., :k]
    return take_along_axis(operand, idx, axis=-1), idx


def resize(a: ArrayLike, new_shape: int | Shape) -> Array:
    """``a`` flattened, repeated as needed and reshaped to ``new_shape``.

    >>> import functrans.numpy as fnp
    >>> fnp.resize(fnp.asarray([1, 2, 3]), (2, 2)).tolist()
    [[1, 2], [3, 1]]
    """
    new_shape = (operator.index(new_shape),) if not isinstance(new_shape, (tuple, list)) \
        else tuple(operator.index(s) for s in new_shape)
    flat = st.ravel(asarray(a))
    total = int(np.prod(new_shape, dtype=np.int64))
    if flat.shape[0] == 0:
        return st.reshape(jn.concatenate([flat] * 0 or [asarray(np.zeros(total, flat.dtype))]),
                          new_shape)
    reps = -(-total // flat.shape[0])
    return st.reshape(st.tile(flat, reps)[:total], new_shape)


def ravel_multi_index(multi_index: Sequence[ArrayLike], dims: Shape, mode: str = "raise",
                      order: str = "C") -> Array:
    """Flat indices of the index tuple ``multi_index`` into an array of shape ``dims``.

    >>> import functrans.numpy as fnp
    >>> fnp.ravel_multi_index((fnp.asarray([1]), fnp.asarray([2])), (2, 3)).tolist()
    [5]
    """
    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: {len(multi_index)} indices for {len(dims)} dims")
    idx = [asarray(i) for i in multi_index]
    mode = _check_index_mode("ravel_multi_index", mode, *idx)
    strides = np.cumprod((1,) + tuple(dims[::-1]))[:-1][::-1] if order == "C" else \
        np.cumprod((1,) + tuple(dims))[:-1]
    out = None
    for i, n, s in zip(idx, dims, strides):
        term = el.multiply(asarray(_fit_index("ravel_multi_index", i, n, mode), np.int64),
                           int(s))
        out = term if out is None else el.add(out, term)
    return out


def unravel_index(indices: ArrayLike, shape: Shape) -> tuple[Array, ...]:
    """The index tuple of flat ``indices`` into an array of ``shape`` (out-of-range
    indices are clipped, as in JAX).

    >>> import functrans.numpy as fnp
    >>> [v.tolist() for v in fnp.unravel_index(fnp.asarray([0, 4]), (2, 3))]
    [[0, 1], [0, 1]]
    """
    given = asarray(indices)
    # JAX's output dtype: the indices' (int8 in, int8 out), promoted with an array shape's
    out_dtype = given.dtype if dtype_kind(given.dtype) in "iu" else np.dtype(np.int64)
    if isinstance(shape, (np.ndarray, Array)):
        out_dtype = np.promote_types(out_dtype, shape.dtype)
    indices = asarray(given, np.int64)
    shape = tuple(operator.index(s) for s in shape)
    total = int(np.prod(shape, dtype=np.int64))
    flat = sel.clip(indices, -total, total - 1)
    flat = sel.where(el.less(flat, 0), el.add(flat, total), flat)
    out = []
    for n in reversed(shape):
        out.append(asarray(el.remainder(flat, n), out_dtype))
        flat = el.floor_divide(flat, n)
    return tuple(reversed(out))


def _no_inplace(name, inplace):
    if inplace:
        raise ValueError(f"{name}: arrays are immutable; pass inplace=False to get the "
                         f"updated array back (as in JAX)")


def put(a: ArrayLike, ind: ArrayLike, v: ArrayLike, mode: str | None = None, *,
        inplace: bool = True) -> Array:
    """``a`` with the flat positions ``ind`` set to ``v`` (``inplace=False`` required).

    >>> import functrans.numpy as fnp
    >>> fnp.put(fnp.zeros(3), fnp.asarray([2]), 5.0, inplace=False).tolist()
    [0.0, 0.0, 5.0]
    """
    _no_inplace("put", inplace)
    a = asarray(a)
    flat = st.ravel(a)
    ind = st.ravel(asarray(ind))
    mode = _check_index_mode("put", mode, ind)
    ind = _fit_index("put", ind, flat.shape[0], mode)
    v = st.ravel(asarray(v, a.dtype))
    if v.shape[0] == 0:             # nothing to write (numpy, JAX); resize would give zeros
        return a
    if v.shape[0] != ind.shape[0]:
        v = resize(v, (ind.shape[0],))
    return st.reshape(flat.at[ind].set(v), a.shape)


def place(arr: ArrayLike, mask: ArrayLike, vals: ArrayLike, *, inplace: bool = True) -> Array:
    """``arr`` with the entries where ``mask`` holds replaced by ``vals`` in order
    (repeated as needed); eager only, since the count depends on ``mask``.

    >>> import functrans.numpy as fnp
    >>> fnp.place(fnp.zeros(3), fnp.asarray([True, False, True]), [1.0, 2.0], inplace=False).tolist()
    [1.0, 0.0, 2.0]
    """
    _no_inplace("place", inplace)
    if isinstance(mask, Tracer):
        raise TypeError("place: mask must be concrete (the number of entries it selects "
                        "fixes the shape of the update)")
    arr = asarray(arr)
    pos = np.flatnonzero(np.asarray(mask))
    if pos.size == 0:
        return arr
    return put(arr, pos, resize(asarray(vals, arr.dtype), (pos.size,)), mode="clip",
               inplace=False)


def put_along_axis(arr: ArrayLike, indices: ArrayLike, values: ArrayLike, axis: int,
                   inplace: bool = True, mode: str | None = None) -> Array:
    """``arr`` with ``values`` written at ``indices`` along ``axis``; ``mode`` treats
    out-of-range indices as ``x.at[...].set``'s (default: dropped; ``"clip"``: clamped).

    >>> import functrans.numpy as fnp
    >>> fnp.put_along_axis(fnp.zeros((2, 2)), fnp.asarray([[1], [0]]), 1.0, 1, inplace=False).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    _no_inplace("put_along_axis", inplace)
    arr, indices = asarray(arr), asarray(indices)
    if axis is None:                # the flattened array (negative indices from its end)
        if indices.ndim != 1:
            raise ValueError(f"put_along_axis: with axis=None, indices must be 1-d, got "
                             f"shape {indices.shape}")
        return st.reshape(put_along_axis(st.ravel(arr), indices, values, 0, inplace=False,
                                         mode=mode), arr.shape)
    axis = canonicalize_axis(axis, arr.ndim)
    if indices.ndim != arr.ndim:
        raise ValueError("put_along_axis: indices must have the same rank as arr")
    shape = np.broadcast_shapes(tuple(s if i != axis else 1 for i, s in enumerate(arr.shape)),
                                tuple(s if i != axis else 1 for i, s in enumerate(indices.shape)))
    full_shape = tuple(indices.shape[axis] if i == axis else s for i, s in enumerate(shape))
    idx = st.broadcast_to(indices, full_shape)
    index = tuple(idx if i == axis else
                  np.arange(n).reshape(tuple(n if j == i else 1 for j in range(arr.ndim)))
                  for i, n in enumerate(full_shape))
    return arr.at[index].set(st.broadcast_to(asarray(values, arr.dtype), full_shape), mode=mode)


def fill_diagonal(a: ArrayLike, val: ArrayLike, wrap: bool = False, *,
                  inplace: bool = True) -> Array:
    """``a`` (all sides equal, or 2-d) with its main diagonal set to ``val``.

    >>> import functrans.numpy as fnp
    >>> fnp.fill_diagonal(fnp.zeros((2, 2)), 3.0, inplace=False).tolist()
    [[3.0, 0.0], [0.0, 3.0]]
    """
    _no_inplace("fill_diagonal", inplace)
    a = asarray(a)
    if a.ndim < 2:
        raise ValueError("fill_diagonal: array must be at least 2-d")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError("fill_diagonal: all dimensions must have equal length")
    if wrap and a.ndim == 2 and a.shape[0] > a.shape[1] + 1:
        step = a.shape[1] + 1
        pos = np.arange(0, a.shape[0] * a.shape[1], step)
    else:
        n = min(a.shape)
        pos = np.ravel_multi_index(tuple(np.arange(n) for _ in a.shape), a.shape)
    val = st.ravel(asarray(val, a.dtype))
    vals = resize(val, (pos.size,))
    return st.reshape(st.ravel(a).at[pos].set(vals), a.shape)
