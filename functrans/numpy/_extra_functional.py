"""More functions of ``functrans.numpy`` composed from existing ones: ``logspace
geomspace fromfunction apply_along_axis apply_over_axes vecdot matvec vecmat
cumulative_sum cumulative_prod count_nonzero``.

>>> import functrans.numpy as fnp
>>> fnp.vecdot(fnp.asarray([1.0, 2.0]), fnp.asarray([3.0, 4.0])).item()
11.0
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import dtype_kind

from ..batching import vmap
from . import _elementwise as el
from . import _elementwise_select as sel
from . import _reductions as red
from . import _structural as st
from . import _joining as jn
from ._creation import inexact_dtype, asarray, linspace
from ._util import canonicalize_axis, result_dtype
from ._extra_arrays import indices
from typing import Any, Callable, Sequence
from ..array import Array
from ..precision import check_precision, numpy_contraction
from ..typing import ArrayLike, DTypeLike, Shape

__all__ = ["logspace", "geomspace", "fromfunction", "apply_along_axis", "apply_over_axes",
           "vecdot", "matvec", "vecmat", "cumulative_sum", "cumulative_prod", "count_nonzero"]


def _computation_dtype(start, stop, dtype):
    """JAX's: the requested dtype (default: the inexact type of the bounds) and the
    inexact dtype it is computed in."""
    dt = np.dtype(dtype) if dtype is not None else inexact_dtype(result_dtype(start, stop))
    return dt, inexact_dtype(dt)


def logspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True,
             base: ArrayLike = 10.0, dtype: DTypeLike | None = None, axis: int = 0) -> Array:
    """``base ** linspace(start, stop)`` (JAX's composition, in the bounds' inexact dtype).

    >>> import functrans.numpy as fnp
    >>> fnp.logspace(0, 2, 3).tolist()
    [1.0, 10.0, 100.0]
    """
    dt, work = _computation_dtype(start, stop, dtype)
    start, stop = asarray(start, work), asarray(stop, work)
    lin = linspace(start, stop, num, endpoint=endpoint, axis=axis)
    return asarray(el.power(base, lin), dt)


def geomspace(start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True,
              dtype: DTypeLike | None = None, axis: int = 0) -> Array:
    """Numbers spaced evenly on a log scale from ``start`` to ``stop`` (same sign), JAX's
    composition ``sign * logspace(log10(|start|), log10(|stop|))``, so the ends are
    ``10 ** log10`` of the bounds (numpy returns them exactly; JAX does not).

    >>> import functrans.numpy as fnp
    >>> [round(v, 6) for v in fnp.geomspace(1, 1000, 4).tolist()]
    [1.0, 10.0, 100.0, 1000.0]
    """
    dt, work = _computation_dtype(start, stop, dtype)
    start, stop = asarray(start, work), asarray(stop, work)
    sign = el.sign(start)
    res = el.multiply(sign, logspace(el.log10(el.true_divide(start, sign)),
                                     el.log10(el.true_divide(stop, sign)), num,
                                     endpoint=endpoint, base=10.0, dtype=work, axis=0))
    res = st.moveaxis(res, 0, canonicalize_axis(axis, res.ndim))
    return asarray(res, dt)


def fromfunction(function: Callable[..., Any], shape: Shape, *, dtype: DTypeLike = float,
                 **kwargs: Any) -> Any:
    """``function`` called on the index grids of ``shape``.

    >>> import functrans.numpy as fnp
    >>> fnp.fromfunction(lambda i, j: i + j, (2, 2)).tolist()
    [[0.0, 1.0], [1.0, 2.0]]
    """
    grids = indices(shape, dtype=dtype)
    return function(*[grids[i] for i in range(len(shape))], **kwargs)


def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: ArrayLike, *args: ArrayLike,
                     **kwargs: Any) -> Array:
    """``func1d`` applied to every 1-d slice along ``axis`` (vectorised with vmap); the
    axes ``func1d`` returns replace ``axis``.

    >>> import functrans.numpy as fnp
    >>> fnp.apply_along_axis(fnp.sum, 1, fnp.ones((2, 3))).tolist()
    [3.0, 3.0]
    """
    arr = asarray(arr)
    axis = canonicalize_axis(axis, arr.ndim)
    fun = lambda x: func1d(x, *args, **kwargs)  # noqa: E731
    for i in range(1, arr.ndim - axis):
        fun = vmap(fun, in_axes=i, out_axes=-1)
    for _ in range(axis):
        fun = vmap(fun, in_axes=0, out_axes=0)
    return fun(arr)


def apply_over_axes(func: Callable[..., Any], a: ArrayLike, axes: int | Sequence[int]) -> Array:
    """``func(a, axis)`` applied over each axis in turn, keeping the rank.

    >>> import functrans.numpy as fnp
    >>> fnp.apply_over_axes(fnp.sum, fnp.ones((2, 3)), [0, 1]).tolist()
    [[6.0]]
    """
    a = asarray(a)
    for ax in ([axes] if isinstance(axes, int) else axes):
        out = asarray(func(a, ax))
        if out.ndim == a.ndim - 1:
            out = st.expand_dims(out, ax)
        elif out.ndim != a.ndim:
            raise ValueError("apply_over_axes: func must keep or reduce the rank by one")
        a = out
    return a


def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: DTypeLike | None = None) -> Array:
    """Vector dot product ``sum(conj(x1) * x2)`` over ``axis`` (each operand's own axis,
    numpy's gufunc rule), the other axes broadcast; integers keep their dtype as numpy's
    (``precision``/``preferred_element_type`` as in ``functrans.precision``).

    >>> import functrans.numpy as fnp
    >>> fnp.vecdot(fnp.ones((2, 3)), fnp.arange(3.0)).tolist()
    [3.0, 3.0]
    """
    check_precision(precision)
    x1, x2 = asarray(x1), asarray(x2)
    if preferred_element_type is not None:     # lax.dot_general's rule, as JAX's vdot
        return numpy_contraction(lambda a, b: vecdot(a, b, axis=axis), (x1, x2),
                                 preferred_element_type)
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"vecdot: axis {axis} has sizes {x1.shape[axis]} and {x2.shape[axis]}")
    x1, x2 = st.moveaxis(x1, axis, -1), st.moveaxis(x2, axis, -1)
    prod = el.multiply(sel.conj(x1) if dtype_kind(x1.dtype) == "c" else x1, x2)
    return red.sum(prod, axis=-1, dtype=prod.dtype)


def matvec(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Matrix-vector product over the last axes, batched by broadcasting.

    >>> import functrans.numpy as fnp
    >>> fnp.matvec(fnp.eye(2), fnp.asarray([1.0, 2.0])).tolist()
    [1.0, 2.0]
    """
    x1, x2 = asarray(x1), asarray(x2)
    return vecdot(sel.conj(x1) if dtype_kind(x1.dtype) == "c" else x1, st.expand_dims(x2, -2))


def vecmat(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Vector-matrix product ``conj(x1) @ x2`` over the last axes, batched.

    >>> import functrans.numpy as fnp
    >>> fnp.vecmat(fnp.asarray([1.0, 2.0]), fnp.eye(2)).tolist()
    [1.0, 2.0]
    """
    x1, x2 = asarray(x1), asarray(x2)
    return vecdot(st.expand_dims(x1, -1), x2, axis=-2)


def _cumulative(name, fn, x, axis, dtype, include_initial, initial):
    x = asarray(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}: axis must be given for arrays of rank > 1")
        axis = 0
    if x.ndim == 0:
        raise ValueError(f"{name}: needs an array of rank >= 1")
    out = fn(x, axis=axis, dtype=dtype)
    if include_initial:
        axis = canonicalize_axis(axis, x.ndim)
        shape = list(out.shape)
        shape[axis] = 1
        out = jn.concatenate([st.broadcast_to(asarray(initial, out.dtype), tuple(shape)), out],
                             axis=axis)
    return out


def cumulative_sum(x: ArrayLike, /, *, axis: int | None = None,
                   dtype: DTypeLike | None = None, include_initial: bool = False) -> Array:
    """Array-API cumulative sum; ``include_initial`` prepends a 0.

    >>> import functrans.numpy as fnp
    >>> fnp.cumulative_sum(fnp.asarray([1, 2]), include_initial=True).tolist()
    [0, 1, 3]
    """
    return _cumulative("cumulative_sum", red.cumsum, x, axis, dtype, include_initial, 0)


def cumulative_prod(x: ArrayLike, /, *, axis: int | None = None,
                    dtype: DTypeLike | None = None, include_initial: bool = False) -> Array:
    """Array-API cumulative product; ``include_initial`` prepends a 1.

    >>> import functrans.numpy as fnp
    >>> fnp.cumulative_prod(fnp.asarray([2, 3]), include_initial=True).tolist()
    [1, 2, 6]
    """
    return _cumulative("cumulative_prod", red.cumprod, x, axis, dtype, include_initial, 1)


def count_nonzero(a: ArrayLike, axis: int | Sequence[int] | None = None,
                  keepdims: bool = False) -> Array:
    """Number of nonzero entries (int64).

    >>> import functrans.numpy as fnp
    >>> fnp.count_nonzero(fnp.asarray([[0, 1], [2, 0]]), axis=0).tolist()
    [1, 1]
    """
    return red.sum(asarray(el.not_equal(asarray(a), 0), np.int64), axis=axis, keepdims=keepdims)
