"""Reduction primitives: over a tuple of ``axes`` (reduce_*), to an index along one
``axis`` (argmax/argmin), and cumulative along one ``axis`` (cum*).

Derivatives:
- reduce_max/min and cummax/cummin: the tangent is averaged over the tied
  extrema, ``sum(t * (x == max)) / count``, as JAX does.
- reduce_prod: the tangent is ``sum(t * product of the other entries)``, those
  products from exclusive running products (exact with zeros and infinities).
- cumprod: the tangent is the running combination ``(a, da) * (b, db) = (ab, da b + a db)``
  (JAX's associative-scan rule), in log2(n) shifted steps: no division, so exact with
  zeros, infinities and NaNs in the input, to every order.
- cumsum is linear; its transpose is the cumsum in the other direction.

>>> import numpy as np
>>> float(reduce_sum(np.ones((2, 3)), (0, 1)))
6.0
>>> cumsum(np.arange(4.0), 0).tolist()
[0.0, 1.0, 3.0, 6.0]
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from jaxpr_ir import ShapedArray, bfloat16, dtype_kind
from .. import tracing as _tracing
from ..array import numpy_max, numpy_min, signed_zero_result, winning_zero
from ..tracing import Tracer, get_aval
from . import elementwise as E
from .base import Primitive, Zero, aval, deflinear
from .dot import dot_general
from .structural import broadcast_in_dim, broadcast_in_dim_p, reshape, transpose
from ..typing import Array, ArrayLike, DTypeLike

_object_new = object.__new__

__all__ = ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and",
           "reduce_or", "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin"]


# --------------------------------------------------------------------------- helpers

def _check_axes(name, x, axes):
    ndim = len(x.shape)
    if len(axes) == 1:                          # the common case, without a set
        bad = not 0 <= axes[0] < ndim
    else:
        bad = len(set(axes)) != len(axes) or any(not 0 <= a < ndim for a in axes)
    if bad:
        raise ValueError(f"{name}: axes {tuple(axes)} out of range or repeated for operand "
                         f"{x.str_short()}")


def _reduce_aval(name, kinds="fciub", out_dtype=None, nonempty=False):
    def rule(x, *, axes, **params):
        shape = x.shape
        # the common case: a vector reduced to a scalar (e.g. the loss of grad)
        if (len(shape) == 1 and axes == (0,) and shape[0] and out_dtype is None
                and dtype_kind(x.dtype) in kinds):
            a = _object_new(ShapedArray)
            a.shape, a.dtype, a.weak_type = (), x.dtype, x.weak_type
            return a
        _check_axes(name, x, axes)
        if dtype_kind(x.dtype) not in kinds:
            raise TypeError(f"{name}: dtype {x.dtype} of operand {x.str_short()} is not supported")
        if nonempty and any(x.shape[a] == 0 for a in axes):
            raise ValueError(f"{name}: zero-size array to reduction operation {name} which has "
                             f"no identity (operand {x.str_short()}, axes {tuple(axes)})")
        shape = x.shape
        shape = () if len(axes) == len(shape) else tuple(
            [s for i, s in enumerate(shape) if i not in axes])
        return ShapedArray(shape, out_dtype or x.dtype, x.weak_type)
    return rule


def batch_reduce(prim):
    """Reductions over ``axes``: shift axes past the batch dim, which stays in place."""
    def rule(args, dims, *, axes, **params):
        (x,), (d,) = args, dims
        new_axes = tuple(a + (a >= d) for a in axes)
        out_d = d - sum(a < d for a in new_axes)
        return prim.bind(x, axes=new_axes, **params), out_d
    prim.batch = rule
    return rule


def _full(shape, value, dtype):
    """A constant of ``shape`` (a broadcast view: no memory per element)."""
    return np.broadcast_to(np.asarray(value, dtype=dtype), tuple(shape))


def _expand(y, x_shape, axes):
    """Broadcast a reduced value back over the reduced ``axes`` of ``x_shape``."""
    n = len(x_shape)
    kept = () if len(axes) == n else tuple([i for i in range(n) if i not in axes])
    if len(kept) == n:
        return y
    if isinstance(y, Tracer) or not _tracing.trace_depth():
        # the reduced value's type and the params are right by construction: bind directly
        return broadcast_in_dim_p.bind(y, shape=tuple(x_shape), broadcast_dimensions=kept)
    return broadcast_in_dim(y, tuple(x_shape), kept)    # a constant: recorded as such


# --------------------------------------------------------------------------- reduce_sum

reduce_sum_p = Primitive("reduce_sum")


_F16, _F32 = np.dtype(np.float16), np.dtype(np.float32)
_NARROW = frozenset((_F16, bfloat16))     # accumulate in float32, as JAX


def accumulator(dtype: np.dtype) -> np.dtype:
    """The dtype a sum or product of ``dtype`` accumulates in: float16 and bfloat16 in
    float32, rounded once at the end (JAX's and XLA's CPU reductions; numpy's own float16
    sums accumulate in float16, so 3000 ones cumsum to 2048 there), any other dtype in
    itself.

    >>> accumulator(np.dtype(np.float16)), accumulator(np.dtype(np.int32))
    (dtype('float32'), dtype('int32'))
    """
    return _F32 if dtype in _NARROW else dtype


def _reduce_sum_impl(x, *, axes):
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    # the ufunc method directly: np.sum's dispatch costs more than a small sum
    if x.dtype in _NARROW:
        return np.asarray(np.add.reduce(x, axis=tuple(axes), dtype=_F32).astype(x.dtype))
    return np.asarray(np.add.reduce(x, axis=tuple(axes), dtype=x.dtype))


def _reduce_sum_transpose(ct, x, *, axes):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    return [_expand(ct, x.aval.shape, axes)]


reduce_sum_p.def_rules(abstract_eval=_reduce_aval("reduce_sum"), impl=_reduce_sum_impl)
deflinear(reduce_sum_p, _reduce_sum_transpose)
batch_reduce(reduce_sum_p)


# --------------------------------------------------------------------------- broadcast_in_dim's transpose
# (structural defines its other rules; its transpose sums, so it is attached here)

def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    in_shape = x.aval.shape
    new_axes = tuple(d for d in range(len(shape)) if d not in broadcast_dimensions)
    # dims of size 1 in the operand that were stretched are summed and kept
    stretched = tuple(d for i, d in enumerate(broadcast_dimensions)
                      if in_shape[i] == 1 and shape[d] != 1)
    out = reduce_sum(ct, new_axes + stretched) if (new_axes or stretched) else ct
    return [reshape(out, in_shape) if stretched else out]


deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)


# --------------------------------------------------------------------------- reduce_max / min

def _chooser_jvp(prim):
    """Tangent of max/min: the mean of the tangents at the tied extrema."""
    def rule(primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axes=axes)
        a = aval(x)
        if type(t) is Zero or dtype_kind(a.dtype) not in "fc":
            return out, Zero(aval(out))
        mask = E.convert_element_type(E.eq(x, _expand(out, a.shape, axes)), a.dtype)
        count = reduce_sum(mask, axes)
        return out, E.div(reduce_sum(E.mul(t, mask), axes), count)
    prim.jvp = rule
    return rule


reduce_max_p = Primitive("reduce_max")
reduce_max_p.def_rules(
    abstract_eval=_reduce_aval("reduce_max", nonempty=True),
    impl=lambda x, *, axes: numpy_max(x, axis=tuple(axes)))
_chooser_jvp(reduce_max_p)
batch_reduce(reduce_max_p)

reduce_min_p = Primitive("reduce_min")
reduce_min_p.def_rules(
    abstract_eval=_reduce_aval("reduce_min", nonempty=True),
    impl=lambda x, *, axes: numpy_min(x, axis=tuple(axes)))
_chooser_jvp(reduce_min_p)
batch_reduce(reduce_min_p)


# --------------------------------------------------------------------------- reduce_prod

reduce_prod_p = Primitive("reduce_prod")


def _reduce_prod_impl(x, *, axes):
    x = np.asarray(x)
    return np.asarray(np.prod(x, axis=tuple(axes), dtype=accumulator(x.dtype)), x.dtype)


# its JVP shifts with pad, so ``slicing`` (a later family) attaches it
reduce_prod_p.def_rules(abstract_eval=_reduce_aval("reduce_prod", "fciu"),
                        impl=_reduce_prod_impl)
batch_reduce(reduce_prod_p)


# --------------------------------------------------------------------------- reduce_and / or

reduce_and_p = Primitive("reduce_and")
reduce_and_p.def_rules(abstract_eval=_reduce_aval("reduce_and", "b"),
                       impl=lambda x, *, axes: np.asarray(np.all(x, axis=tuple(axes))),
                       not_differentiable=True)
batch_reduce(reduce_and_p)

reduce_or_p = Primitive("reduce_or")
reduce_or_p.def_rules(abstract_eval=_reduce_aval("reduce_or", "b"),
                      impl=lambda x, *, axes: np.asarray(np.any(x, axis=tuple(axes))),
                      not_differentiable=True)
batch_reduce(reduce_or_p)


# --------------------------------------------------------------------------- argmax / argmin

def _arg_aval(name):
    def rule(x, *, axis, index_dtype):
        if not 0 <= axis < x.ndim:
            raise ValueError(f"{name}: axis {axis} is out of range for operand {x.str_short()}")
        if x.shape[axis] == 0:
            raise ValueError(f"{name}: attempt to get {name} of an empty sequence (operand "
                             f"{x.str_short()}, axis {axis})")
        if np.dtype(index_dtype) not in (np.dtype(np.int32), np.dtype(np.int64)):
            raise TypeError(f"{name}: index_dtype must be int32 or int64, got {index_dtype}")
        if dtype_kind(x.dtype) not in "fiub":
            raise TypeError(f"{name}: dtype {x.dtype} of operand {x.str_short()} is not supported")
        shape = x.shape[:axis] + x.shape[axis + 1:]
        return ShapedArray(shape, np.dtype(index_dtype))
    return rule


def _batch_axis_param(prim):
    """Ops with one ``axis`` param that keep or drop it: the batch dim stays in place."""
    def rule(args, dims, *, axis, **params):
        (x,), (d,) = args, dims
        new_axis = axis + (axis >= d)
        out = prim.bind(x, axis=new_axis, **params)
        drops = aval(out).ndim < aval(x).ndim
        return out, (d - (new_axis < d) if drops else d)
    prim.batch = rule
    return rule


argmax_p = Primitive("argmax")
argmax_p.def_rules(
    abstract_eval=_arg_aval("argmax"), not_differentiable=True,
    impl=lambda x, *, axis, index_dtype: np.asarray(np.argmax(x, axis=axis), dtype=index_dtype))
_batch_axis_param(argmax_p)

argmin_p = Primitive("argmin")
argmin_p.def_rules(
    abstract_eval=_arg_aval("argmin"), not_differentiable=True,
    impl=lambda x, *, axis, index_dtype: np.asarray(np.argmin(x, axis=axis), dtype=index_dtype))
_batch_axis_param(argmin_p)


# --------------------------------------------------------------------------- cumulative

def _cum_aval(name, kinds):
    def rule(x, *, axis, reverse):
        if not 0 <= axis < max(x.ndim, 1) or x.ndim == 0:
            raise ValueError(f"{name}: axis {axis} is out of range for operand {x.str_short()}")
        if dtype_kind(x.dtype) not in kinds:
            raise TypeError(f"{name}: dtype {x.dtype} of operand {x.str_short()} is not supported")
        return x
    return rule


def _cum_impl(accumulate, negative_wins=None):
    """numpy's ``accumulate``; for cummax/cummin (``negative_wins`` False/True) a zero
    result is the zero that wins if one came so far: -0.0 below +0.0, as JAX's."""
    def run(x, axis):
        out = np.asarray(accumulate(x, axis=axis, dtype=accumulator(x.dtype)), x.dtype)
        if negative_wins is None or dtype_kind(x.dtype) != "f":
            return out
        won = np.logical_or.accumulate(winning_zero(x, negative_wins), axis=axis)
        return signed_zero_result(out, won, negative_wins)

    def impl(x, *, axis, reverse):
        x = np.asarray(x)
        if reverse:
            return np.flip(run(np.flip(x, axis), axis), axis).copy()
        return run(x, axis)
    return impl


cumsum_p = Primitive("cumsum")
cumsum_p.def_rules(abstract_eval=_cum_aval("cumsum", "fciu"), impl=_cum_impl(np.add.accumulate))
deflinear(cumsum_p, lambda ct, x, *, axis, reverse: [
    Zero(x.aval) if type(ct) is Zero else cumsum(ct, axis, not reverse)])
_batch_axis_param(cumsum_p)

cumprod_p = Primitive("cumprod")


# its JVP shifts with pad, so ``slicing`` (a later family) attaches it
cumprod_p.def_rules(abstract_eval=_cum_aval("cumprod", "fciu"),
                    impl=_cum_impl(np.multiply.accumulate))
_batch_axis_param(cumprod_p)


def _cumchooser_jvp(prim):
    """Tangent of a running max/min at i: the mean of t_j over the j up to i (in scan
    order) with x_j equal to the running value, the rule of reduce_max on each prefix.
    Builds an (n, n) mask per row along ``axis``: O(n^2) memory on that axis."""
    def rule(primals, tangents, *, axis, reverse):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axis=axis, reverse=reverse)
        a = aval(x)
        if type(t) is Zero or dtype_kind(a.dtype) not in "fc":
            return out, Zero(aval(out))
        nd, n = a.ndim, a.shape[axis]
        perm = tuple(i for i in range(nd) if i != axis) + (axis,)
        xm, ym, tm = (transpose(v, perm) for v in (x, out, t))
        rest = tuple(a.shape[i] for i in perm[:-1])
        full = rest + (n, n)                       # [..., i, j]
        r = tuple(range(nd - 1))
        xj = broadcast_in_dim(xm, full, r + (nd,))
        yi = broadcast_in_dim(ym, full, r + (nd - 1,))
        ii, jj = np.indices((n, n))
        tri = np.broadcast_to(jj >= ii if reverse else jj <= ii, full)
        hit = E.select_n(tri, _full(full, False, np.bool_), E.eq(xj, yi))
        mask = E.convert_element_type(hit, a.dtype)
        count = reduce_sum(mask, (nd,))
        tan = dot_general(mask, tm, (((nd,), (nd - 1,)), (r, r)))
        tan = E.div(tan, count)
        return out, transpose(tan, tuple(np.argsort(perm)))
    prim.jvp = rule
    return rule


cummax_p = Primitive("cummax")
cummax_p.def_rules(abstract_eval=_cum_aval("cummax", "fiu"),
                   impl=_cum_impl(np.maximum.accumulate, False))
_cumchooser_jvp(cummax_p)
_batch_axis_param(cummax_p)

cummin_p = Primitive("cummin")
cummin_p.def_rules(abstract_eval=_cum_aval("cummin", "fiu"),
                   impl=_cum_impl(np.minimum.accumulate, True))
_cumchooser_jvp(cummin_p)
_batch_axis_param(cummin_p)


# --------------------------------------------------------------------------- lax wrappers

def _axes(axes):
    if type(axes) is tuple and len(axes) == 1 and type(axes[0]) is int:
        return axes                      # the common case: already normal
    return tuple(sorted(int(a) for a in axes))


def _bind(prim, x, **params):
    if not isinstance(x, Tracer):
        # eager binds skip the shape rule; run it so bad input gets its message
        prim.abstract_eval(get_aval(x), **params)
    return prim.bind(x, **params)


def reduce_sum(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Sum over ``axes`` (a tuple); a no-op for an empty tuple.

    >>> float(reduce_sum(np.arange(4.0), (0,)))
    6.0
    """
    axes = _axes(axes)
    if not axes:
        return operand
    return _bind(reduce_sum_p, operand, axes=axes)


def reduce_max(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Maximum over ``axes``; NaN propagates, an empty reduction is a ValueError.

    >>> float(reduce_max(np.array([1.0, 3.0, 2.0]), (0,)))
    3.0
    """
    axes = _axes(axes)
    return _bind(reduce_max_p, operand, axes=axes) if axes else operand


def reduce_min(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Minimum over ``axes``.

    >>> float(reduce_min(np.array([1.0, 3.0, 2.0]), (0,)))
    1.0
    """
    axes = _axes(axes)
    return _bind(reduce_min_p, operand, axes=axes) if axes else operand


def reduce_prod(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Product over ``axes`` (1 for an empty reduction).

    >>> float(reduce_prod(np.array([2.0, 3.0]), (0,)))
    6.0
    """
    axes = _axes(axes)
    return _bind(reduce_prod_p, operand, axes=axes) if axes else operand


def reduce_and(x: ArrayLike, axes: Sequence[int]) -> Array:
    """Logical and of a bool array over ``axes``.

    >>> bool(reduce_and(np.array([True, False]), (0,)))
    False
    """
    axes = _axes(axes)
    return _bind(reduce_and_p, x, axes=axes) if axes else x


def reduce_or(x: ArrayLike, axes: Sequence[int]) -> Array:
    """Logical or of a bool array over ``axes``.

    >>> bool(reduce_or(np.array([True, False]), (0,)))
    True
    """
    axes = _axes(axes)
    return _bind(reduce_or_p, x, axes=axes) if axes else x


def _arg_wrapper(prim, doc):
    def f(operand, axis, index_dtype=np.int64):
        return _bind(prim, operand, axis=int(axis), index_dtype=np.dtype(index_dtype))
    f.__name__ = f.__qualname__ = prim.name
    f.__annotations__ = {"operand": "ArrayLike", "axis": "int", "index_dtype": "DTypeLike",
                         "return": "Array"}
    f.__doc__ = doc
    return f


argmax = _arg_wrapper(argmax_p, """Index of the first maximum along ``axis`` (of the first NaN, if any).

    >>> int(argmax(np.array([1.0, 3.0, 3.0]), 0))
    1
    """)
argmin = _arg_wrapper(argmin_p, """Index of the first minimum along ``axis`` (of the first NaN, if any).

    >>> int(argmin(np.array([1.0, 0.0, 0.0]), 0))
    1
    """)


def _cum_wrapper(prim, doc):
    def f(operand, axis=0, reverse=False):
        return _bind(prim, operand, axis=int(axis), reverse=bool(reverse))
    f.__name__ = f.__qualname__ = prim.name
    f.__annotations__ = {"operand": "ArrayLike", "axis": "int", "reverse": "bool",
                         "return": "Array"}
    f.__doc__ = doc
    return f


cumsum = _cum_wrapper(cumsum_p, """Running sum along ``axis`` (from the end when ``reverse``).

    >>> cumsum(np.arange(3.0), 0, reverse=True).tolist()
    [3.0, 3.0, 2.0]
    """)
cumprod = _cum_wrapper(cumprod_p, """Running product along ``axis``.

    >>> cumprod(np.array([1.0, 2.0, 3.0]), 0).tolist()
    [1.0, 2.0, 6.0]
    """)
cummax = _cum_wrapper(cummax_p, """Running maximum along ``axis``.

    >>> cummax(np.array([1.0, 0.0, 3.0]), 0).tolist()
    [1.0, 1.0, 3.0]
    """)
cummin = _cum_wrapper(cummin_p, """Running minimum along ``axis``.

    >>> cummin(np.array([1.0, 0.0, 3.0]), 0).tolist()
    [1.0, 0.0, 0.0]
    """)
