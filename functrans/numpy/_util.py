"""Shared helpers of ``functrans.numpy``: argument checks, NEP 50 promotion, broadcasting.

>>> import numpy as np
>>> result_dtype(np.ones(2, np.float32), 2.0)
dtype('float32')
"""
from __future__ import annotations

import operator

import numpy as np

from jaxpr_ir import canonical_dtype, dtype_kind
from ..array import host_array
from ..key_array import KeyArray, operand_error
from ..tracing import Tracer, bind_outermost, get_aval, wrap
from ..weak_values import WeakArray
from ..primitives.arithmetic import weakly  # noqa: F401  (fnp's modules take it from here)
from ..primitives.elementwise import (bitwise_and, bitwise_not, bitwise_or, convert_element_type,
                                      convert_element_type_p, eq, ge, imag, le, ne, real,
                                      select_n)
from ..primitives.basic import full
from ..primitives.reductions import argmax, reduce_max, reduce_min, reduce_or
from ..primitives.slicing import concatenate
from ..primitives.structural import broadcast_constant, broadcast_in_dim, reshape
from . import _promotion_mode
from ._dtype_info import bf16_promoted

_PY_SCALARS = (bool, int, float, complex)
_WEAK_PROTO = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}
_PY_NUMBER = {"i": int, "f": float, "c": complex}


def is_tracer(x):
    return isinstance(x, Tracer)


def any_tracer(*xs):
    for x in xs:
        if isinstance(x, Tracer):
            return True
    return False


def check_arraylike(name, *args):
    """Reject strings, None and arbitrary objects with a message naming the argument."""
    for i, x in enumerate(args):
        if isinstance(x, (Tracer, np.ndarray, np.generic) + _PY_SCALARS):
            continue
        if isinstance(x, KeyArray):
            raise operand_error(name, args)
        if isinstance(x, (list, tuple)):
            if _contains_tracer(x):
                # under jit a list argument is a pytree of scalars, not an array (JAX: TypeError)
                raise TypeError(f"{name}: argument {i} is a {type(x).__name__} holding traced "
                                "values, not an array; make it one with fnp.asarray(...) (a "
                                "list passed to a jitted function arrives as a list of scalars)")
            continue
        raise TypeError(f"{name}: argument {i} of type {type(x).__name__} is not an array "
                        f"or number: {x!r:.60}")


_FAST_TYPES = (np.ndarray, float, int, bool, np.generic, complex)


def check_args(name, *args):
    """check_arraylike, skipped for the common types (it is on the eager hot path)."""
    for a in args:
        if not isinstance(a, _FAST_TYPES):
            check_arraylike(name, *args)
            return


def check_dtypes(name, *args):
    """After numpy raised TypeError: raise ours if an argument's dtype is not numeric
    (object, strings), naming it; return otherwise."""
    for i, x in enumerate(args):
        dt = getattr(x, "dtype", None)
        if dt is not None and dtype_kind(dt) in "OUSVMm":
            raise TypeError(f"{name}: argument {i} has dtype {dt}, which is not a numeric "
                            "dtype; convert it with .astype(float) (or pass numbers)")


def _promotion_key(x):
    if isinstance(x, _PY_SCALARS):
        return x
    if isinstance(x, Tracer):
        return _WEAK_PROTO[dtype_kind(x.dtype)] if x.aval.weak_type else x.dtype
    if type(x) is WeakArray:          # weakly typed, as a weak tracer
        return _WEAK_PROTO[dtype_kind(x.dtype)]
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype
    return np.asarray(x).dtype


def result_dtype(*args):
    """numpy 2 (NEP 50) promotion: Python scalars and weak tracers adapt to arrays;
    bfloat16 promotes as in JAX (``bf16_promoted``)."""
    keys = [_promotion_key(x) for x in args]
    return bf16_promoted(keys, np.result_type(*keys))


def shape_of(x):
    if isinstance(x, (Tracer, np.ndarray, np.generic)):
        return x.shape
    if isinstance(x, _PY_SCALARS):
        return ()
    return np.shape(x)


def broadcast_shapes(name, *shapes):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"{name}: shapes {' and '.join(str(tuple(s)) for s in shapes)} "
                         "cannot be broadcast together") from None


def asarray(x, dtype=None):
    """An array or tracer of ``x`` (converted to ``dtype`` if given)."""
    if dtype is not None:
        dtype = canonical_dtype(dtype)
    if isinstance(x, Tracer):
        if dtype == np.bool_ and dtype_kind(x.dtype) == "c":   # numpy's (and jnp's) x != 0: the
            return ne(x, np.zeros((), x.dtype))          # lax cast reads the real part only
        return convert_element_type(x, dtype) if dtype is not None else x
    if dtype is None and type(x) is WeakArray:    # stays weakly typed
        return x
    if isinstance(x, (list, tuple)) and any(isinstance(e, Tracer) or
                                            (isinstance(e, (list, tuple))) for e in x):
        if any(_contains_tracer(e) for e in x):
            return _stack_rows([asarray(e, dtype) for e in x])
    return host_array(x, dtype)


def _stack_rows(rows):
    """``fnp.stack(rows)`` of same-shape arrays and tracers, written here with the
    primitives (fnp.stack sits above this module): the same checks and the same equations
    (each row reshaped to a leading axis of 1, cast to the common dtype, concatenated)."""
    s0 = tuple(rows[0].shape)
    for i, a in enumerate(rows[1:], 1):
        if tuple(a.shape) != s0:
            raise ValueError(f"stack: all input arrays must have the same shape, got {s0} "
                             f"(argument 0) and {tuple(a.shape)} (argument {i})")
    new = (1,) + s0
    rows = [reshape(a, new) if isinstance(a, Tracer) else wrap(np.ndarray.reshape(a, new))
            for a in rows]
    dt = result_dtype(*rows)
    return concatenate([convert_element_type(a, dt) if isinstance(a, Tracer)
                        else np.asarray(a, dt) for a in rows], 0)


def _contains_tracer(x):
    if isinstance(x, Tracer):
        return True
    if isinstance(x, (list, tuple)):
        return any(_contains_tracer(e) for e in x)
    return False


def weak_scalar(x, dt):
    """The Python number of value ``x`` whose (weak) type has dtype ``dt``, bound as a weak
    literal; None where no Python number type has that dtype.

    >>> weak_scalar(2, np.dtype(np.float64))
    2.0
    """
    py = _PY_NUMBER.get(dtype_kind(dt))
    if py is None:
        return None
    v = py(x)
    return v if get_aval(v).dtype == dt else None


def const_as(x, dt):
    """A non-tracer operand in dtype ``dt``: a Python number stays one (a weak literal)
    where a Python number type has ``dt``, anything else becomes an array."""
    if isinstance(x, _PY_SCALARS):
        w = weak_scalar(x, dt)
        if w is not None:
            return w
    return np.asarray(x, dt)


def all_weak(args) -> bool:
    """Whether every operand is weakly typed (a weak tracer or WeakArray, a Python number
    other than a bool): ``promote``'s result (of a numeric dtype) is weak then.

    >>> all_weak((1.0, 2)), all_weak((1.0, True))
    (True, False)
    """
    for a in args:        # (a loop: no generator on the eager paths that ask)
        if isinstance(a, (Tracer, WeakArray)):
            if not a.weak_type:
                return False
        elif not isinstance(a, _PY_SCALARS) or isinstance(a, bool):
            return False
    return True


def promote(name, *args, dtype=None, weak_literals=False, checked=None, ranks=True):
    """Convert ``args`` to one dtype and one broadcast shape (tracers stay tracers).

    Python scalars become arrays of the promoted dtype; the result is weak only
    if every argument was weak (as JAX: a weak-typed traced step counter ``t`` makes
    ``0.9 ** t`` weak, so multiplying it into float32 arrays keeps them float32), and
    then the Python scalars become weak constants: Python numbers (weak literals) with
    ``weak_literals`` (for callers that read no ``dtype`` off a scalar), else converts
    in the outermost trace. ``checked``: whether ``numpy_dtype_promotion="strict"``
    checks the operands' dtypes (default: when no ``dtype`` is given); ``ranks``: whether
    ``numpy_rank_promotion`` checks their ranks.
    """
    if _promotion_mode.ACTIVE:       # numpy_rank_promotion / numpy_dtype_promotion
        _promotion_mode.check_operands(name, args, dtype is None if checked is None else checked,
                                       ranks)
    dt = canonical_dtype(dtype) if dtype is not None else canonical_dtype(result_dtype(*args))
    shape = broadcast_shapes(name, *[shape_of(a) for a in args])
    weak = dtype is None and dtype_kind(dt) in "iufc" and all_weak(args)
    out = []
    for a in args:
        if isinstance(a, (Tracer, WeakArray)):
            a = convert_element_type(a, dt, a.weak_type and (weak or a.dtype == dt))
        elif weak:
            w = weak_scalar(a, dt) if weak_literals and not shape else None
            a = w if w is not None else bind_outermost(
                convert_element_type_p, (np.asarray(a, dtype=dt),),
                dict(new_dtype=dt, weak_type=True))
        else:
            a = np.asarray(a, dtype=dt)
        out.append(broadcast_to_shape(a, shape))
    return out


def broadcast_to_shape(x, shape):
    """numpy-style broadcast (align trailing axes) via broadcast_in_dim."""
    s = shape_of(x)
    shape = tuple(shape)
    if tuple(s) == shape:
        return x
    nd = len(shape)
    dims = tuple(range(nd - len(s), nd))
    if not isinstance(x, (Tracer, WeakArray)):     # (a weak array stays weak)
        return broadcast_constant(x, shape, dims)
    return broadcast_in_dim(x, shape, dims)


def canonicalize_axis(axis, ndim, name="axis"):
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(axis).__name__} "
                        f"{axis!r:.60}") from None
    if not -ndim <= a < ndim:
        raise ValueError(f"{name} {axis} is out of bounds for an array of rank {ndim}")
    return a % ndim


def canonicalize_axes(axis, ndim):
    """A sorted tuple of non-negative axes (None means all)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    axes = tuple(canonicalize_axis(a, ndim) for a in axis)
    if len(set(axes)) != len(axes):
        raise ValueError(f"repeated axis in {axis}")
    return tuple(sorted(axes))


def broadcasts_exactly(vshape, shape) -> bool:
    """Whether ``vshape`` broadcasts to ``shape`` itself (not to a larger shape).

    >>> broadcasts_exactly((3,), (2, 3)), broadcasts_exactly((2, 3), (3,))
    (True, False)
    """
    try:
        return np.broadcast_shapes(tuple(vshape), tuple(shape)) == tuple(shape)
    except ValueError:
        return False


def complex_nan(z):
    """Where a complex ``z`` holds a NaN in either part (numpy's isnan)."""
    return bitwise_or(ne(real(z), real(z)), ne(imag(z), imag(z)))


def complex_extremum(name: str, x, y):
    """numpy's ``maximum``/``minimum`` (``name``) of complex ``x`` and ``y``: the first
    operand holding a NaN, else the larger (smaller) in lexicographic order, ``x`` on a
    tie (the ``max``/``min`` primitives take real operands only; JAX's ignores NaNs).

    >>> z = np.array([1 + 2j, np.nan + 0j]); w = np.array([1 + 3j, 5j])
    >>> complex_extremum("maximum", z, w).tolist()
    [(1+3j), (nan+0j)]
    """
    shape = np.broadcast_shapes(np.shape(x), np.shape(y))
    x, y = (v if np.shape(v) == shape else broadcast_in_dim(
        v, shape, tuple(range(len(shape) - np.ndim(v), len(shape)))) for v in (x, y))
    better = ordered("greater_equal", ge, x, y) if name == "maximum" else \
        ordered("less_equal", le, x, y)
    pick_x = bitwise_or(complex_nan(x), bitwise_and(bitwise_not(complex_nan(y)), better))
    return select_n(pick_x, y, x)


def complex_arg(name: str, x, ax: int, dtype):
    """numpy's argmax/argmin (``name``) of complex ``x`` along ``ax``: the first element
    holding a NaN, else the first lexicographic maximum (minimum), the largest real part
    and then the largest imaginary part among those (the primitives take real operands).

    >>> int(complex_arg("argmax", np.array([1 + 2j, 3 - 1j, 3 + 0j, 3 - 2j]), 0, np.int64))
    2
    """
    big = name == "argmax"
    red = reduce_max if big else reduce_min
    re, im = real(x), imag(x)
    kept = tuple(d for d in range(np.ndim(x)) if d != ax)

    def extreme(v):
        return broadcast_in_dim(red(v, (ax,)), np.shape(x), kept)
    cand = eq(re, extreme(re))
    im = select_n(cand, full(np.shape(x), -np.inf if big else np.inf, im.dtype), im)
    hit = bitwise_and(cand, eq(im, extreme(im)))
    nan = complex_nan(x)
    first = [argmax(convert_element_type(m, np.int32), ax, dtype) for m in (hit, nan)]
    return select_n(reduce_or(nan, (ax,)), *first)


def ordered(name, compare, x, y):
    """``compare(x, y)``; for complex ``<``, ``<=``, ``>``, ``>=`` in numpy's and jax.numpy's
    order: the real parts, then the imaginary parts where those tie (the comparison
    primitives take real operands only)."""
    if dtype_kind(x.dtype) != "c" or name not in ("less", "less_equal", "greater", "greater_equal"):
        return compare(x, y)
    rx, ry = real(x), real(y)
    return select_n(eq(rx, ry), compare(rx, ry), compare(imag(x), imag(y)))
