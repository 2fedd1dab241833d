"""Reductions of ``functrans.numpy``: ``sum prod mean var std max min amax amin ptp
argmax argmin all any cumsum cumprod nansum``, each with ``axis`` (int,
tuple, None, negative) and ``keepdims`` where numpy has them.

Result dtypes are numpy 2's: bool and narrow signed integer sums and products (plain
and cumulative) are int64, narrow unsigned ones uint64 (wrapping modulo 2**64 as
numpy's do), ``mean``/``var``/``std`` of integers are float64, ``argmax``/``argmin``
are int64. float16 (bfloat16) sums, products, means and variances accumulate in float32
and round once, as JAX's (numpy's own accumulate in float16).

Eagerly (no tracer) each function calls numpy at once; under a trace it binds the
strict reduction primitives of ``functrans.primitives.reductions``.

>>> import numpy as np, functrans.numpy as fnp
>>> fnp.sum(np.ones((2, 3)), axis=1).tolist()
[3.0, 3.0]
>>> fnp.argmax(fnp.asarray([1, 3, 3])).item()
1
"""
from __future__ import annotations

import builtins
import functools
import operator
import warnings

import numpy as np

from jaxpr_ir import bfloat16, dtype_kind

from ..numpy_warnings import quiet_call
from ..tracing import Tracer, wrap
from ..primitives import reductions as R
from ..primitives import elementwise as E
from ..primitives.structural import reshape as _reshape
from ._structural import broadcast_to
from ._util import asarray, canonicalize_axes, canonicalize_axis, complex_arg, complex_extremum
from typing import Sequence
from ..array import Array
from ..typing import ArrayLike, DTypeLike

__all__ = ["sum", "prod", "mean", "var", "std", "max", "min", "amax", "amin", "ptp",
           "argmax", "argmin", "all", "any", "cumsum", "cumprod", "nansum"]

_SUPPORTED = frozenset(np.dtype(d) for d in (np.float64, np.float32, np.float16, bfloat16,
                                             np.int64, np.int32,
                                             np.uint64, np.uint32, np.bool_, np.complex128,
                                             np.complex64))


def _arr(a):
    """A tracer or an ndarray of a supported dtype (lists and scalars converted)."""
    if isinstance(a, Tracer) or (isinstance(a, np.ndarray) and a.dtype in _SUPPORTED):
        return a
    return asarray(a)


def accumulation_dtype(dt):
    """numpy 2's accumulator for sum/prod/cumsum/cumprod (JAX's too, with x64): bool and
    the narrow signed integers -> int64, the narrow unsigned ones -> uint64.

    >>> [accumulation_dtype(d).name for d in ("bool", "int8", "uint8", "uint32", "float32")]
    ['int64', 'int64', 'uint64', 'uint64', 'float32']
    """
    dt = np.dtype(dt)
    if dtype_kind(dt) == "b" or (dtype_kind(dt) == "i" and dt.itemsize < 8):
        return np.dtype(np.int64)
    if dtype_kind(dt) == "u" and dt.itemsize < 8:
        return np.dtype(np.uint64)
    return dt


def _rounded(x, dt):
    """``x`` (an accumulator's result) in ``dt``: float32 accumulations of float16 round
    once at the end."""
    if isinstance(x, Tracer):
        return x if x.dtype == dt else E.convert_element_type(x, dt)
    return x if x.dtype == dt else quiet_call(np.asarray, x, dtype=dt)


def _float_dtype(dt):
    dt = np.dtype(dt)
    return dt if dtype_kind(dt) in "fc" else np.dtype(np.float64)


def _check_axis(axis):
    """``axis`` for numpy, a list as a tuple (JAX takes lists where numpy doesn't); numpy's
    eager message for a bad axis names no argument, ours does."""
    for a in (axis if isinstance(axis, (tuple, list)) else (axis,)):
        try:
            operator.index(a)
        except TypeError:
            raise TypeError(f"axis must be None, an int or a tuple of ints, got "
                            f"{type(axis).__name__} {axis!r:.60}") from None
    return tuple(axis) if isinstance(axis, list) else axis


def _axis_0d(axis, ndim):
    """numpy reduces a 0-d array over axis 0 or -1 (or a tuple of them) as over all axes."""
    if ndim or axis is None:
        return axis
    for a in (axis if isinstance(axis, (tuple, list)) else (axis,)):
        canonicalize_axis(a, 1)
    return None


def _traced_axes(a, axis):
    """The canonical axes a reduction of traced ``a`` over ``axis`` reduces."""
    return canonicalize_axes(_axis_0d(axis, a.ndim), a.ndim)


def _one_axis(a, axis):
    """``(operand, axis)`` of a one-axis op on traced ``a``; ``axis=None`` flattens ``a``
    (the axis is then None and the op runs along axis 0 of the flat operand)."""
    axis = _axis_0d(axis, a.ndim)
    if axis is None:
        return _reshape(a, (a.size,)), None
    return a, canonicalize_axis(axis, a.ndim)


def _doc(summary, example, result):
    return f"{summary}\n\n>>> import functrans.numpy as fnp\n>>> {example}\n{result}\n"


def _keep(out, shape, axes, keepdims):
    if not keepdims:
        return out
    return _reshape(out, tuple(1 if i in axes else s for i, s in enumerate(shape)))


def _count(shape, axes):
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def _scalar(value, dtype):
    return np.asarray(value, dtype=dtype)


def _div_by(x, n):
    """x / n for a Python number n, in x's dtype."""
    a = x.aval if isinstance(x, Tracer) else None
    shape = a.shape if a is not None else np.shape(x)
    dt = a.dtype if a is not None else np.asarray(x).dtype
    return E.div(x, np.broadcast_to(_scalar(n, dt), shape))


def _quiet(np_fn, a, slices=False, **kwargs):
    """numpy's reduction without the warnings JAX does not give: IEEE results (inf, nan)
    only. Floating-point errors (overflow, 0 * inf) are ignored as in every eager
    operation (``numpy_warnings``); var and std (``slices``) also warn of too few degrees
    of freedom through ``warnings`` itself, which is caught."""
    if not slices:
        return quiet_call(np_fn, a, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return quiet_call(np_fn, a, **kwargs)


def _saturated(a, acc):
    """Host array ``a`` in the integer accumulator ``acc`` by Array.astype's saturating
    float -> int rule (convert_element_type's under jit, and JAX's): numpy's ``dtype=``
    casts by wrapping, so ``sum([300.7, -1.5], dtype=uint8)`` was 43 eagerly, 255 under jit."""
    if dtype_kind(acc) in "iu" and dtype_kind(np.asarray(a).dtype) in "fc":
        return asarray(a).astype(acc)
    return a


def _mean_eager(a, axis, dt, keepdims):
    """numpy's mean computed as numpy does (a sum in ``dt`` over the count), without the
    "Mean of empty slice" warning numpy gives through ``warnings``: nan, as in JAX."""
    s = quiet_call(np.sum, np.asarray(_saturated(a, dt)), axis=axis, dtype=dt, keepdims=keepdims)
    size = np.size(s)
    # the count of each slice; any count does for an empty result
    count = a.size // size if size else 1
    r = quiet_call(np.true_divide, s, count)
    return r if r.dtype == dt else quiet_call(np.asarray, r, dtype=dt)


# --------------------------------------------------------------------------- sum / prod

_ALL_AXES = [tuple(range(n)) for n in range(33)]


def _sum_like(name, np_fn, prim_fn, prim):
    def f(a: ArrayLike, axis: int | Sequence[int] | None = None, dtype: DTypeLike | None = None,
          keepdims: bool = False, *, initial: ArrayLike | None = None,
          where: ArrayLike | None = None, promote_integers: bool = True) -> Array:
        if not promote_integers and dtype is None:
            # JAX's option: small integers keep their dtype (bools sum as int64)
            kind = dtype_kind(a.aval.dtype) if isinstance(a, Tracer) else dtype_kind(_arr(a).dtype)
            if kind in "iub":
                dtype = np.int64 if kind == "b" else (a.aval.dtype if isinstance(a, Tracer)
                                                      else _arr(a).dtype)
        if initial is not None or where is not None:
            return _masked(f, a, axis, keepdims, initial, where, dtype=dtype)
        if axis is None and dtype is None and not keepdims and isinstance(a, Tracer):
            av = a.aval
            if dtype_kind(av.dtype) in "fc" and av.shape and not av.weak_type \
                    and R.accumulator(av.dtype) == av.dtype:             # the common case
                # axes canonical, operand typed: the primitive directly (the trace's
                # shape rule still checks it)
                return prim.bind(a, axes=_ALL_AXES[len(av.shape)])
        a = _arr(a)
        dt = np.dtype(dtype) if dtype is not None else accumulation_dtype(a.dtype)
        acc = R.accumulator(dt)
        if not isinstance(a, Tracer):
            if axis is not None and type(axis) is not int:
                axis = _check_axis(axis)
            return wrap(_rounded(_quiet(np_fn, _saturated(a, acc), axis=axis, dtype=acc,
                                        keepdims=keepdims), dt))
        axes = _traced_axes(a, axis)
        out = _rounded(prim_fn(E.convert_element_type(a, acc), axes), dt)
        return _keep(out, a.shape, axes, keepdims)
    f.__name__ = name
    return f


sum = _sum_like("sum", np.sum, R.reduce_sum, R.reduce_sum_p)
sum.__doc__ = """Sum over ``axis`` (None: all axes); bools and 32-bit ints sum as int64.

>>> import numpy as np, functrans.numpy as fnp
>>> fnp.sum(fnp.asarray([[1, 2], [3, 4]], "int32"), axis=0).tolist()
[4, 6]
"""
prod = _sum_like("prod", np.prod, R.reduce_prod, R.reduce_prod_p)
prod.__doc__ = """Product over ``axis``; 1 for an empty reduction.

>>> import numpy as np, functrans.numpy as fnp
>>> fnp.prod(fnp.asarray([2.0, 3.0])).item()
6.0
"""


def nansum(a: ArrayLike, axis: int | Sequence[int] | None = None, dtype: DTypeLike | None = None,
           keepdims: bool = False, *, initial: ArrayLike | None = None,
           where: ArrayLike | None = None) -> Array:
    """Sum treating NaNs as zero.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.nansum(fnp.asarray([1.0, float("nan")])).item()
    1.0
    """
    a = _arr(a)
    if initial is not None or where is not None:
        if dtype_kind(a.dtype) in "fc":
            a = E.select_n(E.eq(a, a), np.zeros(a.shape, a.dtype), a)
        return sum(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)
    if not isinstance(a, Tracer):
        if axis is not None and type(axis) is not int:
            _check_axis(axis)
        dt = np.dtype(dtype) if dtype is not None else accumulation_dtype(a.dtype)
        if dtype_kind(a.dtype) == "f" and a.dtype.kind != "f":  # bfloat16: numpy's nansum
            a = np.where(np.isnan(a), np.zeros((), a.dtype), a)  # skips its own NaNs only
        acc = R.accumulator(dt)     # (NaN saturates to 0 in an integer accumulator)
        return wrap(_rounded(quiet_call(np.nansum, _saturated(a, acc), axis=axis, dtype=acc,
                                        keepdims=keepdims), dt))
    if dtype_kind(a.dtype) in "fc":
        zero = np.zeros(a.shape, a.dtype)
        a = E.select_n(E.eq(a, a), zero, a)     # x != x only for NaN
    return sum(a, axis=axis, dtype=dtype, keepdims=keepdims)


# --------------------------------------------------------------------------- mean / var / std

def mean(a: ArrayLike, axis: int | Sequence[int] | None = None, dtype: DTypeLike | None = None,
         keepdims: bool = False, *, where: ArrayLike | None = None) -> Array:
    """Arithmetic mean; integers average as float64 (NaN for an empty slice); ``where``:
    of the elements where it is true only.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.mean(fnp.asarray([1, 2])).item()
    1.5
    >>> fnp.mean(fnp.asarray([1.0, 2.0, 9.0]), where=fnp.asarray([True, True, False])).item()
    1.5
    """
    if where is not None:
        return _masked_mean(a, axis, dtype, keepdims, where)
    a = _arr(a)
    dt = np.dtype(dtype) if dtype is not None else _float_dtype(a.dtype)
    acc = R.accumulator(dt)
    if not isinstance(a, Tracer):
        if axis is not None and type(axis) is not int:
            axis = _check_axis(axis)
        return wrap(_rounded(_mean_eager(a, axis, acc, keepdims), dt))
    axes = _traced_axes(a, axis)
    s = R.reduce_sum(E.convert_element_type(a, acc), axes)
    return _rounded(_keep(_div_by(s, _count(a.shape, axes)), a.shape, axes, keepdims), dt)


def _moment(name, np_fn, traced, doc):
    """``fnp.var``/``fnp.std``: numpy's on a concrete array (integers accumulate as
    float64), else ``traced(a, axis, dtype, ddof, keepdims)``."""
    def f(a: ArrayLike, axis: int | Sequence[int] | None = None, dtype: DTypeLike | None = None,
          ddof: int = 0, keepdims: bool = False, *, where: ArrayLike | None = None,
          correction: int | None = None, mean: ArrayLike | None = None) -> Array:
        if correction is not None:     # the array API's name for ddof (JAX's, numpy's)
            if ddof != 0:
                raise ValueError(f"{name}: ddof and correction can't both be given")
            ddof = correction
        if where is not None:
            if mean is not None:
                raise NotImplementedError(f"{name}: mean= together with where=")
            v = _masked_var(a, axis, dtype, ddof, keepdims, where)
            return E.sqrt(v) if name == "std" else v
        a = _arr(a)
        v = _moment_of(a, axis, dtype, ddof, keepdims, mean)
        if _count(a.shape, _traced_axes(a, axis)) - ddof > 0:
            return v
        # no degrees of freedom left: NaN as JAX (numpy's n - ddof <= 0 gives inf); a
        # product with NaN, so that the gradient is NaN too (JAX's 0 * (1 / 0))
        return E.mul(v, np.full(np.shape(v), np.nan, v.dtype))

    def _moment_of(a, axis, dtype, ddof, keepdims, mean):
        if not isinstance(a, Tracer) and not isinstance(mean, Tracer):
            if axis is not None and type(axis) is not int:
                axis = _check_axis(axis)
            dt = np.dtype(dtype) if dtype is not None else _float_dtype(a.dtype)
            if R.accumulator(dt) != dt and dtype_kind(dt) == "f":
                # float16: the variance in float32, rounded once; std its float16 root
                v = _rounded(_quiet(np.var, np.asarray(a), axis=axis, dtype=np.float32,
                                    ddof=ddof, keepdims=keepdims, slices=True,
                                    **({} if mean is None else {"mean": np.asarray(mean)})), dt)
                return wrap(quiet_call(np.sqrt, v) if name == "std" else v)
            if mean is not None:      # numpy 2's precomputed mean (keepdims shape)
                return wrap(_quiet(np_fn, np.asarray(a, _float_dtype(a.dtype)), axis=axis,
                                   dtype=dtype, ddof=ddof, keepdims=keepdims,
                                   mean=np.asarray(mean), slices=True))
            dt = np.dtype(dtype) if dtype is not None else None
            if dt is None and dtype_kind(a.dtype) not in "fc":
                dt = np.dtype(np.float64)
            # (numpy's function on an Array would call the Array method, which is this)
            return wrap(_quiet(np_fn, np.asarray(a), axis=axis, dtype=dt, ddof=ddof,
                               keepdims=keepdims, slices=True))
        return traced(a, axis, dtype, ddof, keepdims, mean)
    f.__name__ = name
    f.__doc__ = doc
    return f


def _traced_var(a, axis, dtype, ddof, keepdims, mean=None):
    out_dt = np.dtype(dtype) if dtype is not None else _float_dtype(a.dtype)
    dt = R.accumulator(out_dt)         # float16 in float32, rounded once (as JAX)
    axes = _traced_axes(a, axis)
    x = E.convert_element_type(a, dt)
    if mean is None:
        m = R._expand(_div_by(R.reduce_sum(x, axes), _count(a.shape, axes)), a.shape, axes)
    else:
        m = broadcast_to(E.convert_element_type(_arr(mean), dt), a.shape)
    d = E.sub(x, m)
    if dtype_kind(d.dtype) == "c":
        # |d|^2, real like numpy's complex variance (and JAX's)
        re, im = E.real(d), E.imag(d)
        ss = R.reduce_sum(E.add(E.mul(re, re), E.mul(im, im)), axes)
    else:
        ss = R.reduce_sum(E.mul(d, d), axes)
    out = _keep(_div_by(ss, builtins.max(_count(a.shape, axes) - ddof, 0)), a.shape, axes,
                keepdims)
    # a complex dtype= gives a complex result (zero imaginary part), as numpy's eagerly;
    # complex data without one gives a real variance
    if dtype is not None and dtype_kind(dt) == "c":
        return E.convert_element_type(out, dt)
    return out if dt == out_dt else _rounded(out, out_dt)


def _traced_std(a, axis, dtype, ddof, keepdims, mean=None):
    return E.sqrt(_traced_var(a, axis, dtype, ddof, keepdims, mean))


var = _moment("var", np.var, _traced_var, _doc(
    "Variance ``sum(|x - mean|^2) / (n - ddof)``; integers as float64.",
    "fnp.var(fnp.asarray([1.0, 3.0])).item()", 1.0))
std = _moment("std", np.std, _traced_std, _doc(
    "Standard deviation, the square root of ``var``.",
    "fnp.std(fnp.asarray([1.0, 3.0])).item()", 1.0))


# --------------------------------------------------------------------------- max / min / ptp,
# argmax / argmin, all / any: one signature, one eager path

def _reduction(name, np_fn, traced, doc, prim_fn=None):
    """``fnp.<name>(a, axis=None, keepdims=False)``: ``np_fn`` on a concrete array (the
    eager path, written out here: it is hot), else ``traced(name, prim_fn, a, axis,
    keepdims)``."""
    def f(a: ArrayLike, axis: int | Sequence[int] | None = None, keepdims: bool = False,
          **masks: ArrayLike | None) -> Array:
        if masks:     # initial= and where= (max, min, any, all as JAX's)
            if name not in _IDENTITY or not set(masks) <= {"initial", "where"}:
                raise TypeError(f"{name}() got unexpected keyword arguments {sorted(masks)}")
            return _masked(f, a, axis, keepdims, masks.get("initial"), masks.get("where"))
        a = _arr(a)
        if not isinstance(a, Tracer):
            if axis is not None and type(axis) is not int:
                axis = _check_axis(axis)
            # through asarray: wrap() takes its slow path on numpy scalars
            return wrap(np.asarray(np_fn(a, axis=axis, keepdims=keepdims)))
        return traced(name, prim_fn, a, axis, keepdims)
    f.__name__ = name
    f.__doc__ = doc
    return f


def _traced_extremum(name, prim_fn, a, axis, keepdims):
    axes = _traced_axes(a, axis)
    if builtins.any(a.shape[i] == 0 for i in axes):
        raise ValueError(f"{name}: zero-size array to reduction operation {name} which "
                         f"has no identity (shape {a.shape}, axis {axis})")
    out = prim_fn(a, axes)
    if a.aval.weak_type:     # fnp's reductions are strongly typed, as JAX's (eagerly too)
        out = E.convert_element_type(out, a.dtype, False)
    return _keep(out, a.shape, axes, keepdims)


def _traced_ptp(name, prim_fn, a, axis, keepdims):
    return E.sub(max(a, axis, keepdims), min(a, axis, keepdims))


def _traced_arg(name, prim_fn, a, axis, keepdims):
    x, ax = _one_axis(a, axis)
    if dtype_kind(a.dtype) == "c":
        prim_fn = functools.partial(complex_arg, name)
    if ax is None:
        if a.size == 0:
            raise ValueError(f"{name}: attempt to get {name} of an empty sequence")
        out = prim_fn(x, 0, np.int64)
        return _reshape(out, (1,) * a.ndim) if keepdims else out
    return _keep(prim_fn(a, ax, np.int64), a.shape, (ax,), keepdims)


def _traced_logical(name, prim_fn, a, axis, keepdims):
    axes = _traced_axes(a, axis)
    out = prim_fn(E.convert_element_type(a, np.bool_), axes)
    return _keep(out, a.shape, axes, keepdims)


def _int64_index(np_fn):
    """numpy's argmax/argmin give intp indices: int64 wherever numpy 2 is 64-bit, cast
    elsewhere."""
    if np.dtype(np.intp) == np.int64:
        return np_fn
    return lambda a, axis=None, keepdims=False: np.asarray(
        np_fn(a, axis=axis, keepdims=keepdims), np.int64)


def _extremum_doc(name):
    return _doc(f"``numpy.{name}`` over ``axis``; an empty reduction is a ValueError.",
                f"fnp.{name}(fnp.asarray([1.0, 3.0, 2.0])).item()",
                3.0 if name == "max" else 1.0)


def _arg_doc(name):
    return _doc(f"Index (int64) of the first {name[3:]}imum along ``axis`` (None: of the "
                f"flattened array); NaN counts as the extremum, as in numpy.",
                f"fnp.{name}(fnp.asarray([2.0, 1.0, 2.0])).item()",
                0 if name == "argmax" else 1)


def _logical_doc(name):
    return _doc(f"Whether {name} elements along ``axis`` are nonzero (NaN counts as true).",
                f"bool(fnp.{name}(fnp.asarray([1.0, 0.0])))", name == "any")


max = _reduction("max", R.numpy_max, _traced_extremum, _extremum_doc("max"), R.reduce_max)
min = _reduction("min", R.numpy_min, _traced_extremum, _extremum_doc("min"), R.reduce_min)
amax, amin = max, min
ptp = _reduction("ptp", np.ptp, _traced_ptp, _doc(
    "Range ``max - min`` over ``axis``.", "fnp.ptp(fnp.asarray([1.0, 4.0, 2.0])).item()", 3.0))
argmax = _reduction("argmax", _int64_index(np.argmax), _traced_arg, _arg_doc("argmax"),
                    R.argmax)
argmin = _reduction("argmin", _int64_index(np.argmin), _traced_arg, _arg_doc("argmin"),
                    R.argmin)
argmax.__annotations__["axis"] = argmin.__annotations__["axis"] = "int | None"   # one axis
all = _reduction("all", np.all, _traced_logical, _logical_doc("all"), R.reduce_and)
any = _reduction("any", np.any, _traced_logical, _logical_doc("any"), R.reduce_or)


# --------------------------------------------------------------------------- cumulative

def _cumulative(name, np_fn, prim_fn):
    def f(a: ArrayLike, axis: int | None = None, dtype: DTypeLike | None = None) -> Array:
        a = _arr(a)
        dt = np.dtype(dtype) if dtype is not None else accumulation_dtype(a.dtype)
        acc = R.accumulator(dt)
        if not isinstance(a, Tracer):
            if axis is not None and type(axis) is not int:
                _check_axis(axis)
            return wrap(_rounded(quiet_call(np_fn, _saturated(a, acc), axis=axis, dtype=acc), dt))
        x, ax = _one_axis(a, axis)
        ax = 0 if ax is None else ax    # (flattened)
        if acc == np.dtype(np.bool_):      # numpy adds (multiplies) bools as or (and)
            t = E.convert_element_type(E.convert_element_type(x, np.bool_), np.int8)
            return E.convert_element_type((R.cummax if name == "cumsum" else R.cummin)(t, ax), bool)
        return _rounded(prim_fn(E.convert_element_type(x, acc), ax), dt)
    f.__name__ = name
    f.__doc__ = _doc(f"``numpy.{name}`` along ``axis`` (None: of the flattened array); bools "
                     f"and 32-bit ints accumulate as int64.",
                     f"fnp.{name}(fnp.asarray([1, 2, 3])).tolist()",
                     [1, 3, 6] if name == "cumsum" else [1, 2, 6])
    return f


cumsum = _cumulative("cumsum", np.cumsum, R.cumsum)
cumprod = _cumulative("cumprod", np.cumprod, R.cumprod)


# --------------------------------------------------------------------------- where= / initial=

# the value a masked-out element takes (None: max and min have none, initial= is needed)
_IDENTITY = {"sum": 0, "prod": 1, "all": True, "any": False, "max": None, "min": None}
_JOIN = {"sum": E.add, "prod": E.mul, "max": E.max, "min": E.min, "all": E.bitwise_and, "any": E.bitwise_or}


def nan_kept(a, nan, where):
    """The elements a nan-reduction uses: not NaN (``nan``: None for exact dtypes) and
    selected by ``where`` (JAX's and numpy's where=).

    >>> nan_kept(np.ones(3), np.array([0, 1, 0], bool), [True, True, False]).tolist()
    [True, False, False]"""
    keep = E.bitwise_not(nan) if nan is not None else np.ones(np.shape(a), bool)
    return keep if where is None else E.bitwise_and(keep, _mask_of(a, where))


def _mask_of(a, where):
    if (mask := _arr(where)).dtype != np.bool_:     # as JAX (numpy: a TypeError)
        raise ValueError(f"where= must be None or a boolean array, got dtype {mask.dtype}")
    return broadcast_to(mask, a.shape)


def _masked(f, a, axis, keepdims, initial, where, **kw):
    """JAX's ``where=`` and ``initial=``: masked-out elements take the reduction's
    identity (``initial`` for max and min, which have none), and ``initial`` joins the
    result (so an empty or fully masked reduction gives it)."""
    name = f.__name__
    a = _arr(a)
    if initial is not None and np.ndim(initial) != 0:
        raise ValueError(f"{name}: initial value must be a scalar. Got array of shape "
                         f"{np.shape(initial)}")
    if _IDENTITY[name] is None and initial is not None and 0 in a.shape:
        # max/min of empty slices with initial= are initial, whatever the values (and
        # where=) are; f itself raises on an empty slice
        shape = getattr(np, name)(np.zeros(a.shape, a.dtype), axis=axis, keepdims=keepdims,
                                  initial=0).shape
        out = _filled(initial, shape, a.dtype)
        return out if isinstance(out, Tracer) else wrap(out)
    if where is not None:
        fill = _IDENTITY[name] if _IDENTITY[name] is not None else initial
        if fill is None:
            raise ValueError(f"reduction operation {name} does not have an identity, so to "
                             "use a where mask one has to specify 'initial'")
        a = E.select_n(_mask_of(a, where), _filled(fill, a.shape, a.dtype), a)
    out = f(a, axis, keepdims=keepdims, **kw)
    if initial is None:
        return out
    init = _filled(initial, out.shape, out.dtype)
    if name in ("max", "min") and dtype_kind(out.dtype) == "c":    # numpy's lexicographic order
        return complex_extremum("maximum" if name == "max" else "minimum", out, init)
    return _JOIN[name](out, init)


def _filled(value, shape, dtype):
    """``value`` (a traced one too) broadcast to ``shape`` in ``dtype``."""
    if isinstance(value, Tracer):
        return broadcast_to(E.convert_element_type(value, np.dtype(dtype)), shape)
    return np.full(shape, np.asarray(value, dtype), dtype)


def _masked_mean(a, axis, dtype, keepdims, where):
    a = _arr(a)
    out_dt = np.dtype(dtype) if dtype is not None else _float_dtype(a.dtype)
    dt = R.accumulator(out_dt)
    m = _mask_of(a, where)
    s = sum(E.convert_element_type(a, dt), axis, dt, keepdims, where=m)
    return _rounded(E.div(s, sum(E.convert_element_type(m, dt), axis, dt, keepdims)), out_dt)


def _masked_var(a, axis, dtype, ddof, keepdims, where):
    a = _arr(a)
    out_dt = np.dtype(dtype) if dtype is not None else _float_dtype(a.dtype)
    dt = R.accumulator(out_dt)
    m = _mask_of(a, where)
    x = E.convert_element_type(a, dt)
    d = E.sub(x, broadcast_to(_masked_mean(x, axis, dt, True, m), a.shape))
    sq = E.add(E.mul(E.real(d), E.real(d)), E.mul(E.imag(d), E.imag(d))) \
        if dtype_kind(d.dtype) == "c" else E.mul(d, d)
    ss = sum(sq, axis, sq.dtype, keepdims, where=m)
    n = sum(E.convert_element_type(m, ss.dtype), axis, ss.dtype, keepdims)
    dof = E.sub(n, np.full(n.shape, ddof, n.dtype))
    # no degrees of freedom left: NaN as JAX (numpy's max(n - ddof, 0) gives inf)
    v = E.select_n(E.gt(dof, np.zeros(n.shape, n.dtype)), np.full(n.shape, np.nan, n.dtype),
                   E.div(ss, dof))
    return v if dt == out_dt else _rounded(v, out_dt)
