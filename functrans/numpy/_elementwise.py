"""Elementwise functions of ``functrans.numpy``.

Eagerly (no tracer among the arguments) each calls numpy at once, whose numpy 2
promotion is the library's; under a trace the arguments are promoted and
broadcast explicitly and the strict primitive is bound. The output dtype under
a trace is the one numpy's own type resolution picks for the promoted dtype
(asked once per dtype on empty arrays), so eager and traced results agree.
Small dtypes that no input has (int8 for ``bool % bool``, float16 for ``sin(bool)``) are
widened to int64 / float64; int8, uint8, float16 inputs keep theirs (uint8 200 + 200 is 144).

>>> import functrans.numpy as fnp
>>> fnp.multiply(fnp.ones(2, "float32"), 2.0).dtype
dtype('float32')
>>> fnp.true_divide(3, 2).item()
1.5
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from jaxpr_ir import bfloat16, dtype_kind

from ..array import (Array, Array as _Array, numpy_floor_divide, numpy_maximum,
                     numpy_minimum, numpy_remainder, numpy_sign)
from ..key_array import KeyArray
from ..numpy_warnings import QUIET, QUIET_VAR, quiet_call
from ..tracing import EAGER_CHECK, Tracer, wrap
from ..weak_values import PY_DTYPES, WEAKISH as _WEAKISH, WeakArray, weak_call
from ..trace_events import ACTIVE as TRACE_ON, timed
from ..primitives import elementwise as E
from . import _promotion_mode
from ._complex_traced import complex_fext, complex_rint, complex_sign
from ._util import (broadcast_shapes, check_args, check_arraylike, check_dtypes, promote,
                    complex_extremum, const_as, ordered, result_dtype, shape_of, weakly)
from ..typing import ArrayLike
from ._out_dtypes import (SUPPORTED, WIDEN, bf16_call, has_bf16, kept_small,  # noqa: F401
                          out_dtype_of)

# (plus the functions generated from the op table's rows, at the end)
__all__ = [
    "add", "floor_divide", "power", "pow", "remainder", "mod", "fmax", "fmin",
    "positive", "abs", "absolute", "sign", "reciprocal",
    "deg2rad", "rad2deg", "degrees", "radians", "floor", "ceil",
    "isnan", "isinf", "isfinite",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_invert", "invert",
    "left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift",
]
# where, clip, real, imag, conj(ugate) are in _elementwise_select, written with this one

def _shape_error(np_fn, args):
    """After numpy raised ValueError: raise ours naming the function and both shapes
    (numpy's "operands could not be broadcast" names neither); return if shapes agree."""
    name = getattr(np_fn, "__name__", "elementwise")
    broadcast_shapes(name if name != "<lambda>" else "elementwise",
                     *[shape_of(a) for a in args])


def eager_call(np_fn, args):
    """numpy's result (IEEE values, no warning: ``numpy_warnings``); unsupported result
    dtypes are recomputed in the widened dtype; bfloat16 in float32 (``_out_dtypes``)."""
    if has_bf16(args):
        return wrap(bf16_call(np_fn, args))
    token = QUIET_VAR.set(QUIET)
    try:
        r = timed(np_fn, *args) if TRACE_ON else np_fn(*args)   # timed: profiler trace
    except ValueError:
        _shape_error(np_fn, args)
        raise
    except TypeError:
        check_dtypes(getattr(np_fn, "__name__", "elementwise"), *args)
        raise
    finally:
        QUIET_VAR.reset(token)
    if r.dtype not in SUPPORTED and not kept_small(r.dtype, args):
        wide = WIDEN[dtype_kind(r.dtype)]
        r = quiet_call(np_fn, *[np.asarray(a, dtype=wide) for a in args])
    return r.view(_Array) if isinstance(r, np.ndarray) else wrap(r)


# The hot eager paths: a ufunc on an ndarray subclass takes a slower route in numpy, so
# Arrays are passed as base-class views and the result is wrapped once. A weakly typed
# x (a Python scalar, a WeakArray; for two operands, a WeakArray or both weak) goes
# through ``fn``'s traced path instead (``weak_values.weak_call``), which types it.

def _eager1(np_fn, x, fn=None):
    if getattr(x, "dtype", None) is bfloat16:
        return eager_call(np_fn, (x,))
    if type(x) is _Array:
        x = x.view(np.ndarray)
    elif type(x) in _WEAKISH and fn:
        return weak_call(fn, (x,), np_fn)
    token = QUIET_VAR.set(QUIET)     # IEEE results without numpy's warnings, as JAX
    try:
        r = timed(np_fn, x) if TRACE_ON else np_fn(x)
    except TypeError:
        check_dtypes(getattr(np_fn, "__name__", "elementwise"), x)
        raise
    finally:
        QUIET_VAR.reset(token)
    if r.dtype not in SUPPORTED and not kept_small(r.dtype, (x,)):
        return eager_call(np_fn, (x,))
    if EAGER_CHECK:        # debug_nans / debug_infs while on (functrans.debug)
        EAGER_CHECK[0](np_fn.__name__, r)
    return r.view(_Array) if type(r) is np.ndarray else wrap(r)


def _eager2(np_fn, x, y, fn=None):
    if _promotion_mode.ACTIVE:
        _promotion_mode.check_operands(np_fn.__name__, (x, y))
    if getattr(x, "dtype", None) is bfloat16 or getattr(y, "dtype", None) is bfloat16:
        return eager_call(np_fn, (x, y))      # (has_bf16 inlined: this is the hot path)
    tx = type(x)
    if tx is _Array:
        x = x.view(np.ndarray)
    elif tx in _WEAKISH and (tx is WeakArray or type(y) in _WEAKISH) and fn:
        return weak_call(fn, (x, y), np_fn) if type(y) in _WEAKISH or x.ndim or x.dtype not in PY_DTYPES \
            else _eager2(np_fn, x.item(), y, fn)   # a strong y: numpy's Python-number rule
    if type(y) is _Array:
        y = y.view(np.ndarray)
    elif type(y) is WeakArray and fn:
        return weak_call(fn, (x, y)) if y.ndim or y.dtype not in PY_DTYPES else _eager2(np_fn, x, y.item(), fn)
    token = QUIET_VAR.set(QUIET)     # IEEE results without numpy's warnings, as JAX
    try:
        r = timed(np_fn, x, y) if TRACE_ON else np_fn(x, y)
    except ValueError:
        _shape_error(np_fn, (x, y))
        raise
    except TypeError:
        check_dtypes(getattr(np_fn, "__name__", "elementwise"), x, y)
        raise
    except OverflowError:     # a Python int outside the array's dtype: converted as by jit
        if not fn:
            raise
        return weak_call(fn, (x, y))
    finally:
        QUIET_VAR.reset(token)
    if r.dtype not in SUPPORTED and not kept_small(r.dtype, (x, y)):
        return eager_call(np_fn, (x, y))
    if EAGER_CHECK:        # debug_nans / debug_infs while on (functrans.debug)
        EAGER_CHECK[0](np_fn.__name__, r)
    return r.view(_Array) if type(r) is np.ndarray else wrap(r)


def cast_to(x, dtype):
    """Convert a tracer or array to ``dtype`` only if its dtype differs (weak types survive,
    to a numeric dtype: a weak int's ``sin`` or ``/ 2`` is a weak float, as in JAX)."""
    if x.dtype == dtype:
        return x
    weak = getattr(x, "weak_type", False) and dtype_kind(dtype) in "iufc"
    return E.convert_element_type(x, dtype, weak)


# --------------------------------------------------------------------------- builders

def _named(f, name, doc, example=None):
    """``f`` named ``name`` with docstring ``doc``, plus a doctest from ``example``
    ((code, expected output)) when there is one."""
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    if example:
        f.__doc__ += f"\n\n>>> import functrans.numpy as fnp\n>>> {example[0]}\n{example[1]}\n"
    return f


def _unary(name, np_fn, traced, example=None):
    """A unary function: numpy eagerly; under a trace, convert to numpy's output dtype
    and apply ``traced`` (a primitive wrapper or a composition)."""
    out_dtypes = {}     # input dtype -> numpy's output dtype, memoised for the traced path

    def f(x: ArrayLike) -> Array:
        if not isinstance(x, Tracer):
            check_args(name, x)
            return _eager1(np_fn, x, f)
        dt = x.aval.dtype
        out = out_dtypes.get(dt)
        if out is None:
            out = out_dtypes[dt] = out_dtype_of(name, np_fn, dt)
        return traced(x if out == dt else cast_to(x, out))
    return _named(f, name, f"Elementwise ``numpy.{np_fn.__name__}``.", example)


def _binary(name, np_fn, traced, example=None):
    """A binary function: promote (NEP 50), broadcast, convert to numpy's output dtype."""
    def f(x: ArrayLike, y: ArrayLike) -> Array:
        if not (isinstance(x, Tracer) or isinstance(y, Tracer)):
            check_args(name, x, y)
            return _eager2(np_fn, x, y, f)
        if isinstance(x, Tracer) and isinstance(y, Tracer):
            xa, ya = x.aval, y.aval
            # the common traced case: same type, nothing weak, so nothing to promote
            if (xa.dtype == ya.dtype and xa.shape == ya.shape and not xa.weak_type
                    and not ya.weak_type and out_dtype_of(name, np_fn, xa.dtype, xa.dtype) == xa.dtype):
                return traced(x, y)
        check_args(name, x, y)
        x, y = promote(name, x, y, weak_literals=True)
        pdt = (x if isinstance(x, Tracer) else y).dtype
        dt = out_dtype_of(name, np_fn, pdt, pdt)
        return traced(*[cast_to(v, dt) if isinstance(v, Tracer) else const_as(v, dt)
                        for v in (x, y)])
    return _named(f, name, f"Elementwise ``numpy.{np_fn.__name__}`` with broadcasting and "
                  "NEP 50 promotion.", example)


def _predicate(name, np_fn, traced, truth_values=False, on_keys=None):
    """A binary function with a bool result: promote to one dtype, then compare; with
    ``truth_values`` (the logical functions) the operands are converted to bool first;
    ``on_keys`` compares typed keys (the others reject them)."""
    def f(x: ArrayLike, y: ArrayLike) -> Array:
        if on_keys is not None and (isinstance(x, KeyArray) or isinstance(y, KeyArray)):
            return on_keys(x, y) if isinstance(x, KeyArray) else on_keys(y, x)
        if not (isinstance(x, Tracer) or isinstance(y, Tracer)):
            check_args(name, x, y)
            return _eager2(np_fn, x, y, f)
        check_args(name, x, y)
        if truth_values:
            # conversion to bool is truthiness (nan is true), as numpy
            return traced(*promote(name, x, y, dtype=np.bool_, checked=True))
        whole = _outside_range(np_fn, x, y)
        if whole is not None:      # x == x: True in every element (integers have no NaN)
            x, y = promote(name, *((x, 0) if type(y) is int else (0, y)))
            return (E.eq if whole else E.ne)(x, x) if isinstance(x, Tracer) else \
                (E.eq if whole else E.ne)(y, y)
        x, y = promote(name, x, y)
        out_dtype_of(name, np_fn, x.dtype, y.dtype)   # the dtype check
        return ordered(name, traced, x, y)
    return _named(f, name, f"Elementwise ``numpy.{np_fn.__name__}``"
                  + (" of the truth values." if truth_values else ": a bool array."))


def _outside_range(np_fn, x, y):
    """Where one operand is a Python int outside the integer dtype the comparison takes
    (``int8 < 300``), numpy 2's answer, the same for every element (as eagerly): the
    comparison of the dtype's bound nearest the int; else None. (JAX wraps 300 to 44.)"""
    v = y if type(y) is int else x if type(x) is int else None
    if v is None:
        return None
    dt = np.dtype(result_dtype(x, y))
    if dtype_kind(dt) not in "iu" or np.iinfo(dt).min <= v <= np.iinfo(dt).max:
        return None
    bound = dt.type(np.iinfo(dt).max if v > 0 else np.iinfo(dt).min)
    return bool(np_fn(bound, v) if v is y else np_fn(v, bound))


def _eager_numpy(np_fn):
    """Decorator for a unary function written as its traced path only: with no tracer
    the argument is checked and ``np_fn``'s result is returned wrapped; a weakly typed
    one (a Python number, a WeakArray) takes the traced path (``weak_call``), typed as
    under jit (``isnan(1.0)`` a weak bool, as JAX's)."""
    def decorate(traced):
        name = traced.__name__

        def f(x):
            if not isinstance(x, Tracer):
                check_args(name, x)
                if type(x) in _WEAKISH and type(x) is not bool:
                    return weak_call(f, (x,), np_fn)
                return wrap(quiet_call(np_fn, x))
            return traced(x)
        return functools.wraps(traced)(f)
    return decorate


# --------------------------------------------------------------------------- arithmetic

add = _binary("add", np.add, E.add, example=("fnp.add(1, 2).item()", "3"))
remainder = mod = _binary("remainder", numpy_remainder, E.rem,
                          example=("fnp.remainder(-7, 3).item()", "2"))


def _floor_divide_traced(x, y):
    if dtype_kind(x.dtype) in "iu":
        return E.div(x, y)            # the integer div primitive floors, and x // 0 == 0
    if x.dtype in (np.float16, bfloat16):      # in float32, rounded once (x - x mod y
        f32 = np.dtype(np.float32)             # overflowed: float16 -65504 // 597 was -inf)
        return cast_to(_floor_divide_traced(cast_to(x, f32), cast_to(y, f32)), x.dtype)
    # numpy's float floor_divide: (x - x mod y) / y, rounded to the integer it is near;
    # x / y (inf or nan) where y == 0, and never 0 * inf where y is infinite
    m = E.rem(x, y)
    q = E.round(E.div(E.sub(x, m), y))
    q = E.select_n(E.eq(y, E.full_like(y, 0)), q, E.div(x, y))
    # JAX's: a zero quotient has y's sign, and for a finite x over an infinite y (where
    # x - x mod y was inf - inf) the quotient is -1 if x is nonzero of the other sign
    zero = E.full_like(q, 0)
    q = E.select_n(E.eq(q, zero), q, E.copysign(zero, y))
    inf = E.full_like(q, np.inf)
    over_inf = E.bitwise_and(E.eq(E.abs(y), inf), E.lt(E.abs(x), inf))
    other = E.bitwise_and(E.ne(x, zero), E.ne(E.lt(x, zero), E.lt(y, zero)))
    return E.select_n(over_inf, q, E.select_n(other, E.copysign(zero, y), E.full_like(q, -1)))


floor_divide = _binary("floor_divide", numpy_floor_divide, _floor_divide_traced,
                       example=("fnp.floor_divide(-7, 2).item()", "-4"))


def _fmax_traced(x, y):
    # JAX's where(x > y | isnan(y), x, y): a tie gives y, its derivative too (maximum
    # splits it), and so fmax(0.0, -0.0) is -0.0 (jitted JAX and eager alike)
    if dtype_kind(x.dtype) not in "fc":
        return E.max(x, y)
    if dtype_kind(x.dtype) == "c":
        return complex_fext("fmax", x, y)
    return E.select_n(E.bitwise_or(E.gt(x, y), E.ne(y, y)), y, x)


def _fmin_traced(x, y):
    if dtype_kind(x.dtype) not in "fc":
        return E.min(x, y)
    if dtype_kind(x.dtype) == "c":
        return complex_fext("fmin", x, y)
    return E.select_n(E.bitwise_or(E.lt(x, y), E.ne(y, y)), y, x)


def _tie_gives_y(np_fn):
    def f(x, y):     # numpy's fmax/fmin give x on a tie (of signed zeros); JAX gives y
        out = np_fn(x, y)
        if dtype_kind(out.dtype) != "f" or not (out == 0).any():
            return out
        return np.asarray(np.where(np.equal(x, y), y, out), out.dtype)
    f.__name__ = np_fn.__name__
    return f


fmax = _binary("fmax", _tie_gives_y(np.fmax), _fmax_traced)
fmin = _binary("fmin", _tie_gives_y(np.fmin), _fmin_traced)


def power(x: ArrayLike, y: ArrayLike) -> Array:
    """``x ** y`` elementwise with numpy 2 dtypes; a Python int exponent under a trace
    becomes ``integer_pow`` (exact repeated multiplication; ints stay ints).

    >>> import functrans.numpy as fnp
    >>> fnp.power(fnp.arange(4), 2).tolist()
    [0, 1, 4, 9]
    """
    if not (isinstance(x, Tracer) or isinstance(y, Tracer)):
        check_args("power", x, y)
        return _eager2(np.power, x, y, power)
    if isinstance(y, (int, np.integer)) and not isinstance(y, (bool, np.bool_)) \
            and isinstance(x, Tracer):
        dt = out_dtype_of("power", np.power, result_dtype(x, y), result_dtype(x, y))
        return E.integer_pow(cast_to(x, dt), int(y))
    check_args("power", x, y)
    x, y = promote("power", x, y, weak_literals=True)
    pdt = (x if isinstance(x, Tracer) else y).dtype
    dt = out_dtype_of("power", np.power, pdt, pdt)
    x, y = (cast_to(v, dt) if isinstance(v, Tracer) else const_as(v, dt) for v in (x, y))
    return E.pow(x, y)


pow = power


# --------------------------------------------------------------------------- unary arithmetic

positive = _unary("positive", np.positive, lambda x: x)
sign = _unary("sign", numpy_sign,
              lambda x: E.sign(x) if dtype_kind(x.dtype) != "c" else complex_sign(x))


def _abs_traced(x):
    if dtype_kind(x.dtype) in "bu":
        return x
    return E.abs(x)


def abs(x: ArrayLike) -> Array:  # noqa: A001 (numpy's name)
    """Elementwise absolute value; integers stay integers, bools stay bools.

    >>> import functrans.numpy as fnp
    >>> fnp.abs(-3).item()
    3
    """
    if not isinstance(x, Tracer):
        check_args("abs", x)
        return weak_call(abs, (x,)) if type(x) in _WEAKISH else eager_call(np.absolute, (x,))
    return _abs_traced(x)


absolute = abs


def _reciprocal_traced(x):
    if dtype_kind(x.dtype) in "fc":
        return E.reciprocal(x)
    # numpy on integers: C integer division 1 / x (0 unless |x| == 1); 1 / 0 gives the
    # most negative int32 / int64 (so 0 once int8 / int16 keep its low bits; 0 unsigned)
    one, zero = E.full_like(x, 1), E.full_like(x, 0)
    unit = E.eq(x, one)
    if dtype_kind(x.dtype) == "i":
        unit = E.bitwise_or(unit, E.eq(x, E.full_like(x, -1)))
    out = E.select_n(unit, zero, x)
    if dtype_kind(x.dtype) == "i" and np.dtype(x.dtype).itemsize >= 4:
        out = E.select_n(E.eq(x, zero), out, E.full_like(x, np.iinfo(x.dtype).min))
    return out


reciprocal = _unary("reciprocal", np.reciprocal, _reciprocal_traced)


# --------------------------------------------------------------------------- transcendental

def _scale_const(num, den):
    # numpy: x times num/den in x's precision; float16 in float32, rounded once (numpy's loop)
    def scale(x):
        y = cast_to(x, np.promote_types(x.dtype, np.float32))
        return cast_to(E.mul(y, E.full_like(y, y.dtype.type(num) / y.dtype.type(den))), x.dtype)
    return scale


deg2rad = radians = _unary("deg2rad", np.deg2rad, _scale_const(np.pi, 180.0))
rad2deg = degrees = _unary("rad2deg", np.rad2deg, _scale_const(180.0, np.pi))


# --------------------------------------------------------------------------- rounding

def _integral_or(prim):
    # integers and bools are already integral: numpy returns them unchanged
    return lambda x: x if dtype_kind(x.dtype) in "iub" else prim(x)


floor = _unary("floor", np.floor, _integral_or(E.floor),
               example=("fnp.floor(-0.5).item()", "-1.0"))
ceil = _unary("ceil", np.ceil, _integral_or(E.ceil))


# --------------------------------------------------------------------------- predicates

@_eager_numpy(np.isnan)
def isnan(x: ArrayLike) -> Array:
    """Elementwise ``x != x`` (False for integers).

    >>> import functrans.numpy as fnp
    >>> fnp.isnan(fnp.nan).item()
    True
    """
    return E.ne(x, x)


@_eager_numpy(np.isinf)
def isinf(x: ArrayLike) -> Array:
    """Elementwise: is ``x`` plus or minus infinity.

    >>> import functrans.numpy as fnp
    >>> fnp.isinf(-fnp.inf).item()
    True
    """
    if dtype_kind(x.dtype) not in "f":
        out_dtype_of("isinf", np.isinf, x.dtype)
        return E.ne(x, x) if dtype_kind(x.dtype) != "c" else \
            E.bitwise_or(isinf(E.real(x)), isinf(E.imag(x)))
    return E.eq(E.abs(x), E.full_like(x, np.inf))


@_eager_numpy(np.isfinite)
def isfinite(x: ArrayLike) -> Array:
    """Elementwise: neither infinite nor nan.

    >>> import functrans.numpy as fnp
    >>> fnp.isfinite(1.0).item()
    True
    """
    if dtype_kind(x.dtype) == "f":
        return E.is_finite(x)
    if dtype_kind(x.dtype) == "c":
        return E.bitwise_and(isfinite(E.real(x)), isfinite(E.imag(x)))
    return E.eq(x, x)


equal = _predicate("equal", np.equal, E.eq, on_keys=operator.eq)
not_equal = _predicate("not_equal", np.not_equal, E.ne, on_keys=operator.ne)
less = _predicate("less", np.less, E.lt)
less_equal = _predicate("less_equal", np.less_equal, E.le)
greater = _predicate("greater", np.greater, E.gt)
greater_equal = _predicate("greater_equal", np.greater_equal, E.ge)


# --------------------------------------------------------------------------- logical / bitwise

logical_and = _predicate("logical_and", np.logical_and, E.bitwise_and, truth_values=True)
logical_or = _predicate("logical_or", np.logical_or, E.bitwise_or, truth_values=True)
logical_xor = _predicate("logical_xor", np.logical_xor, E.bitwise_xor, truth_values=True)


@_eager_numpy(np.logical_not)
def logical_not(x: ArrayLike) -> Array:
    """Elementwise ``not x`` (truthiness).

    >>> import functrans.numpy as fnp
    >>> fnp.logical_not(0).item()
    True
    """
    return weakly(E.bitwise_not(cast_to(x, np.dtype(np.bool_))), x.weak_type)   # (JAX's type)


bitwise_and = _binary("bitwise_and", np.bitwise_and, E.bitwise_and,
                      example=("fnp.bitwise_and(12, 10).item()", "8"))
bitwise_or = _binary("bitwise_or", np.bitwise_or, E.bitwise_or)
bitwise_xor = _binary("bitwise_xor", np.bitwise_xor, E.bitwise_xor)
invert = bitwise_not = bitwise_invert = _unary("invert", np.invert, E.bitwise_not)
left_shift = bitwise_left_shift = _binary("left_shift", np.left_shift, E.shift_left)


def _right_shift_traced(x, y):
    # numpy's right shift is arithmetic for signed integers, logical for unsigned
    if dtype_kind(x.dtype) == "u":
        return E.shift_right_logical(x, y)
    return E.shift_right_arithmetic(x, y)


right_shift = bitwise_right_shift = _binary("right_shift", np.right_shift, _right_shift_traced)



# --------------------------------------------------------------------------- generated rows
# Every op-table row with a numpy twin (``OpRow.fnp``) whose numpy semantics are the
# primitive's once numpy's dtype promotion is applied becomes a function here; the rows
# with more numpy semantics than their primitive (integers passed through by floor/ceil
# and abs, integer reciprocal and powers, sign on complex...) are written by hand above.
_HAND_WRITTEN = frozenset({"sign", "floor", "ceil", "isfinite", "abs", "reciprocal",
                           "remainder", "power"})
_EXAMPLES = {"true_divide": ("fnp.true_divide(1, 4).item()", "0.25"),
             "negative": ("fnp.negative(2).item()", "-2"), "exp": ("fnp.exp(0.0).item()", "1.0"),
             "log": ("fnp.log(1.0).item()", "0.0"),
             "sqrt": ("fnp.sqrt(4).item()", "2.0"), "sin": ("fnp.sin(0.0).item()", "0.0"),
             "square": ("fnp.square(3).item()", "9"),
             "hypot": ("fnp.hypot(3.0, 4.0).item()", "5.0"),
             "logaddexp2": ("fnp.logaddexp2(1.0, 1.0).item()", "2.0")}


def _row_impl(name: str):
    """The op-table row's own impl under numpy's name, where it is numpy's function made
    right for complex numbers as JAX's: log1p accurate for small z (numpy computes
    log(1 + z)), expm1 and tanh with the Array API's values at infinite and NaN parts."""
    impl = next(r.impl for r in E.UNARY_TABLE if r.name == name)
    ufunc = getattr(np, name)

    def f(x):
        if type(x) is np.ndarray and x.dtype.kind != "c":    # the hot real case: numpy's
            return ufunc(x)
        return impl(x)
    f.__name__ = f.__qualname__ = name
    return f


# numpy's maximum/minimum give the first of two signed zeros; JAX orders -0.0 below +0.0
_EAGER = {"maximum": numpy_maximum, "minimum": numpy_minimum,
          **{name: _row_impl(name) for name in ("log1p", "expm1", "tanh")}}


def _extremum(prim, name):
    """Traced maximum/minimum; either operand may be a weak Python literal
    (``maximum(0.1, weak traced float)``), so the dtype is read off the tracer."""
    def f(x, y):
        dt = (x if isinstance(x, Tracer) else y).dtype
        if dtype_kind(dt) != "c":
            return prim(x, y)
        return complex_extremum(name, *[v if isinstance(v, Tracer) else np.asarray(v, dt)
                                        for v in (x, y)])
    return f


_TRACED = {name: _extremum(prim, name) for name, prim in (("maximum", E.max), ("minimum", E.min))}
_TRACED["rint"] = lambda x: complex_rint(x) if dtype_kind(x.dtype) == "c" else E.round(x)
# numpy's other names for the same functions
_ALIASES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
            "acosh": "arccosh", "atanh": "arctanh", "atan2": "arctan2",
            "divide": "true_divide"}


def _generated() -> dict:
    out = {}
    for row in E.LINEAR_TABLE + E.UNARY_TABLE + E.BINARY_TABLE:
        if row.fnp and row.fnp not in _HAND_WRITTEN:
            build = _unary if E.ARITY[row.name] == 1 else _binary
            out[row.fnp] = build(row.fnp, _EAGER.get(row.fnp, getattr(np, row.fnp)),
                                 _TRACED.get(row.fnp, getattr(E, row.name)),
                                 example=_EXAMPLES.get(row.fnp))
    out.update({alias: out[name] for alias, name in _ALIASES.items()})
    return out


GENERATED = _generated()
globals().update(GENERATED)
__all__ += sorted(GENERATED)
