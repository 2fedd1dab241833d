"""Weakly typed eager arrays: values made from Python scalars, as JAX's ``weak_type``.

Under a trace a value made from a Python scalar is weakly typed (``f64[]{weak}``): it
adapts to the other operand's dtype (float32 + weak float64 is float32). Eagerly such a
value is a ``WeakArray`` (an ``Array`` whose ``weak_type`` is True), so that a program
gives the same dtypes eagerly and under ``jit``. An eager operation with a weak input
is computed through the traced code path, in a throwaway trace whose tracers carry their
values: the dtype and weak type of its result are then those ``jit`` gives, by
construction (one promotion rule). Operations on strong Arrays never come here.

A WeakArray stays weak only where the library says so: a numpy view or copy of one, or
numpy's own function of one, is a strong ``Array``.

>>> import functrans.numpy as fnp, numpy as np
>>> w = fnp.asarray(2.0)
>>> w
Array(2., dtype=float64, weak_type=True)
>>> (np.ones(2, np.float32) * w).dtype, (w + 1).weak_type, fnp.sum(w).weak_type
(dtype('float32'), True, False)
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxpr_ir import ShapedArray, aval_of
from . import eager_values, tracing
from .array import Array
from .eager_values import WEAK_NUMBERS, unshared, weak_operands, wrap  # noqa: F401
from .numpy_warnings import QUIET, QUIET_VAR, quiet_call
from .tracing import EAGER_CHECK, Tracer, end_trace, get_aval, new_trace

__all__ = ["WeakArray", "weak_view", "weak_call", "traced_when_weak", "weak_bind", "weak_operands", "weak_outputs",
           "weakened", "weakening", "typed_like", "WEAK_SCALARS", "WEAKISH", "PY_DTYPES"]

# Python scalar types: weakly typed values (their avals are; see jaxpr_ir.aval_of)
WEAK_SCALARS = frozenset((bool, int, float, complex))


class WeakArray(Array):
    """An eager ``Array`` with a weak type (``weak_type`` True): made from a Python scalar
    (``fnp.asarray(1.0)``), or computed from weak values only. See the module doc.

    >>> import functrans.numpy as fnp
    >>> fnp.asarray(1).weak_type, fnp.asarray([1]).weak_type
    (True, False)
    """
    weak_type = True

    def __array_finalize__(self, obj):
        Array.__array_finalize__(self, obj)
        if type(obj) is WeakArray:       # numpy's view or copy of a weak array: strong
            self.__class__ = Array

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        out = Array.__array_wrap__(self, arr, context, return_scalar)
        if type(out) is WeakArray:       # a numpy function's result: strong
            out.__class__ = Array
        return out

    def __repr__(self):
        return Array.__repr__(self)[:-1] + ", weak_type=True)"

    def round(self, decimals=0, out=None):     # dtype kept: weak kept, as JAX's (round(x))
        return typed_like(self, Array.round(self, decimals, out))

    def __copy__(self):                         # copy.copy / deepcopy keep the type (JAX)
        return typed_like(self, np.ndarray.copy(self))

    def __deepcopy__(self, memo):
        return self.__copy__()


def weak_view(x: np.ndarray) -> WeakArray:
    """``x`` (a numpy array of a supported dtype) as a weakly typed Array (a view).

    >>> weak_view(np.array(1.5))
    Array(1.5, dtype=float64, weak_type=True)
    """
    return np.asarray(x).view(WeakArray)


def typed_like(x, out: np.ndarray):
    """``out``, a numpy result that keeps the type of ``x`` (a reshape, a broadcast, an
    indexed view), as an Array: weakly typed when ``x`` is a WeakArray.

    >>> typed_like(weak_view(np.array(1.0)), np.ones(2)).weak_type
    True
    """
    return np.asarray(out).view(WeakArray) if type(x) is WeakArray else wrap(out)


def _eager(t, args=()):
    """A tracer of a throwaway trace (its value known) as an eager Array with its type;
    a constant the traced code made (a strong numpy array) as an Array."""
    if not isinstance(t, Tracer):
        return wrap(t) if isinstance(t, np.ndarray) and type(t) is not WeakArray else t
    if t.val is None:
        raise RuntimeError(f"internal error: an eager operation on weakly typed values "
                           f"gave no value for {t.aval.str_short()}")
    return _typed(np.asarray(t.val), t.aval, args)


def _typed(val: np.ndarray, aval: ShapedArray, args=()):
    """The value ``val`` of an eager operation on ``args`` as an eager Array of type
    ``aval`` (a WeakArray where ``aval`` is weak)."""
    if val.dtype != aval.dtype:          # numpy computed a Python scalar in its own type
        val = val.astype(aval.dtype)
    val = unshared(val, args)
    if EAGER_CHECK:
        EAGER_CHECK[0]("weak", val)
    return val.view(WeakArray) if aval.weak_type else wrap(val)


def _as_tracers(trace, args, scalars: bool):
    """``args`` with each WeakArray (and with ``scalars`` each Python scalar) made an
    input of ``trace`` carrying its value; other arguments as they are."""
    out = []
    for a in args:
        t = type(a)
        if t is WeakArray:
            out.append(trace.new_arg(ShapedArray(a.shape, a.dtype, True), a.view(np.ndarray)))
        elif scalars and t in WEAK_SCALARS:
            aval = aval_of(a)
            out.append(trace.new_arg(aval, np.asarray(a, aval.dtype)))
        else:
            out.append(a)
    return out


def weak_call(fn: Callable[..., Any], args: Sequence[Any], np_fn=None) -> Any:
    """``fn(*args)`` for an eager call with weakly typed arguments (WeakArrays, Python
    scalars): run on tracers that carry their values, so ``fn``'s traced code decides the
    result's dtype and weak type, as under ``jit``. ``fn`` returns one array or a tuple
    or list of them. ``np_fn``: ``fn``'s numpy function, for Python numbers alone (see
    ``_numbers_call``).

    >>> import functrans.numpy as fnp
    >>> weak_call(fnp.sin, (0.0,))
    Array(0., dtype=float64, weak_type=True)
    """
    key = (fn, *map(_number_kind, args)) if np_fn is not None else None
    if key is not None and any(k is None for k in key):   # (np.dtype("f8") == None)
        key = None
    if key is not None and key in _NUMBER_TYPES:
        out = _numbers_call(np_fn, args, _NUMBER_TYPES[key])
        if out is not None:
            return out
    trace = new_trace("weak eager")
    try:
        out = fn(*_as_tracers(trace, args, True))
    finally:
        end_trace(trace)
    if isinstance(out, (tuple, list)):
        return type(out)(_eager(o, args) for o in out)
    out = _eager(out, args)
    if key is not None and isinstance(out, Array):
        _NUMBER_TYPES[key] = (out.dtype, type(out) is WeakArray)
    return out


def traced_when_weak(fn: Callable) -> Callable:
    """``fn`` (an fnp function whose eager path calls numpy, which types every result
    strongly), except that an eager call whose first argument is weakly typed (a
    WeakArray, a Python int, float or complex) and whose other arguments hold no tracer
    runs ``fn``'s traced path in a throwaway trace (``weak_call``): the result is typed as
    under ``jit``, weak where the traced rule keeps the type (a flip, a sort, a copy).

    >>> import functrans.numpy as fnp
    >>> traced_when_weak(fnp.flip)(fnp.broadcast_to(fnp.asarray(1.0), (2,))).weak_type
    True
    """
    def call(a, *args, **kwargs):
        if (type(a) is WeakArray or type(a) in WEAK_NUMBERS) and not _has_tracer(args, kwargs):
            return weak_call(lambda t: fn(t, *args, **kwargs), (a,))
        return fn(a, *args, **kwargs)
    call.__name__, call.__qualname__, call.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    call.__module__, call.__wrapped__ = fn.__module__, fn
    return call


def _has_tracer(args, kwargs) -> bool:
    """Whether a tracer is among ``args`` and ``kwargs``' values (one level of lists and
    tuples looked into)."""
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tracer) or (isinstance(a, (list, tuple))
                                     and any(isinstance(b, Tracer) for b in a)):
            return True
    return False


# (fn, argument kinds) -> (dtype, weak) that fn's traced path gave those kinds once
_NUMBER_TYPES: dict = {}
_CANONICAL = {int: np.dtype(np.int64), float: np.dtype(np.float64),
              complex: np.dtype(np.complex128)}


def _number_kind(a):
    """A Python number's type (bools excluded), a WeakArray's dtype, else None."""
    t = type(a)
    return t if t in _CANONICAL else a.dtype if t is WeakArray else None


def _numbers_call(np_fn, args, typed):
    """``np_fn`` of Python numbers (no bools) and WeakArrays by numpy (numbers in their
    canonical dtypes), as a strong Array's eager operation computes them, typed as
    ``weak_call``'s traced path typed the same kinds before (a dtype is decided by types,
    not values): 1-2 µs where a throwaway trace takes 5-15. None (the traced path
    decides) where numpy would not give that dtype, or raises (an int beyond int64,
    2 ** -1, shapes that do not broadcast)."""
    dtype, weak = typed
    token = QUIET_VAR.set(QUIET)
    try:
        r = np.asarray(np_fn(*[a.view(np.ndarray) if type(a) is WeakArray
                               else np.asarray(a, _CANONICAL[type(a)]) for a in args]))
    except (OverflowError, ValueError, TypeError, ZeroDivisionError):
        return None
    finally:
        QUIET_VAR.reset(token)
    if r.dtype != dtype:
        return None
    if EAGER_CHECK:
        EAGER_CHECK[0]("weak", r)
    return r.view(WeakArray) if weak else wrap(r)


def weak_bind(prim, args, params):
    """``bind``'s eager path when the result may be weak (a WeakArray argument, only
    Python scalars, or a ``weak_type`` parameter; no effect): the primitive's abstract
    evaluation gives the result's type. None where the trace computes no value (a
    collective), for bind's own eager path."""
    if not (prim.multiple_results or prim.subjaxpr_params or getattr(prim, "defer_concrete", False)) \
            and all(type(a) in _PLAIN for a in args):
        return _weak_process(prim, args, params)
    trace = new_trace("weak eager")
    try:
        out = trace.process(prim, _as_tracers(trace, args, False), params)
    finally:
        end_trace(trace)
    outs = out if prim.multiple_results else [out]
    if any(o.val is None for o in outs):
        return None
    outs = [_eager(o, args) for o in outs]
    return outs if prim.multiple_results else outs[0]


def _weak_process(prim, args, params):
    """``weak_bind`` of a single-result primitive on numbers and arrays: what a throwaway
    trace's ``process`` does with them, without recording the equation (6-15 µs there,
    2-4 here): the abstract evaluation types the result, the impl computes it from the
    same values (a WeakArray as its base view).

    >>> from functrans.primitives.basic import add_p
    >>> _weak_process(add_p, (1.0, 2.0), {})
    Array(3., dtype=float64, weak_type=True)
    """
    key = None if params else (prim, *map(type, args))
    out_aval = _NUMBERS_AVAL.get(key) if key is not None else None
    if out_aval is None:
        out_aval = prim.abstract_eval(*[get_aval(a) for a in args], **params)
        if key is not None and all(t in _CANONICAL for t in key[1:]):
            _NUMBERS_AVAL[key] = out_aval     # Python numbers of these types: this type
    vals = [a.view(np.ndarray) if type(a) is WeakArray else a for a in args]
    return _typed(np.asarray(quiet_call(prim.impl, *vals, **params)), out_aval, args)


# (primitive, Python number types) -> the result type its abstract evaluation gave them
_NUMBERS_AVAL: dict = {}


def weakened(outs: list, weak: tuple | None) -> list:
    """A compiled function's outputs ``outs``, those whose type is weak (``weak[i]``;
    None: none is) as WeakArrays.

    >>> weakened([np.ones(1), np.ones(1)], (False, True))[1].weak_type
    True
    """
    if weak is None:
        return outs
    return [weak_view(o) if w else o for o, w in zip(outs, weak)]


def weak_outputs(avals) -> tuple | None:
    """Which of a jaxpr's output types ``avals`` are weak (None: none is)."""
    weak = tuple(a.weak_type for a in avals)
    return weak if any(weak) else None


def weakening(run: Callable, weak: tuple, single: bool) -> Callable:
    """A compiled function's fast runner ``run`` (returning its only output with
    ``single``, else the list) whose outputs are typed as ``weakened`` says."""
    if single:
        return lambda *a: weak_view(run(*a))
    return lambda *a: weakened(run(*a), weak)


WEAKISH = WEAK_SCALARS | {WeakArray}     # the types of weakly typed eager values
# the argument types _weak_process takes (others, e.g. keys or device arrays, are traced)
_PLAIN = WEAKISH | {np.ndarray, Array}
# the dtypes of Python numbers: a 0-d WeakArray of one with a strong operand is that number
# to numpy's NEP 50 promotion, the eager rule of Python scalars (the same as jit's)
PY_DTYPES = frozenset(np.dtype(d) for d in ("int64", "float64", "complex128"))
tracing.WEAK_ARRAY = eager_values.WEAK_ARRAY = WeakArray
eager_values.WEAK_BIND[:] = [weak_bind]
