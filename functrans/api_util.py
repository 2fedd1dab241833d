"""Helpers shared by the public transforms: flattening pytrees around a function,
tracing it, argnums handling.

>>> flat, out_tree = flatten_fun(lambda x, y: {"s": x}, tree_structure((1, 2)))
>>> flat(5, 6), out_tree()
([5], PyTreeDef({'s': *}))
"""
from __future__ import annotations

import inspect
import operator
from typing import Any, Callable, TypeVar

import numpy as np

from jaxpr_ir import dtype_kind

from .key_array import KeyArray
from .tracing import Tracer, get_aval, trace_to_jaxpr
from .tree_util import (register_pytree_node, tree_flatten, tree_map,  # noqa: F401
                        tree_structure, tree_unflatten)


_F = TypeVar("_F", bound=Callable[..., Any])

# JAX's float0: the tangent dtype of integer and boolean values (no data); jvp takes it
FLOAT0 = np.dtype([("float0", np.void, 0)])


class _Float0Zeros:
    """A float0 array as a pytree node with no leaves (its shape is the node's data):
    a jitted function's float0 output rides in the output structure, not the program."""
    __slots__ = ("shape",)

    def __init__(self, shape):
        self.shape = shape


register_pytree_node(_Float0Zeros, lambda z: ((), z.shape),
                     lambda shape, _: np.zeros(shape, FLOAT0))


def float0_as_structure(tree: Any) -> Any:
    """``tree`` with each float0 array (``grad(..., allow_int=True)``'s zeros) made part of
    the structure: unflattening gives the float0 zeros back; no dtype-less leaf is traced.

    >>> out = float0_as_structure((1.0, np.zeros(2, FLOAT0)))
    >>> len(tree_flatten(out)[0]), tree_unflatten(tree_structure(out), [1.0])[1].dtype == FLOAT0
    (1, True)
    """
    return tree_map(lambda x: _Float0Zeros(x.shape) if getattr(x, "dtype", None) == FLOAT0
                    else x, tree)


def key_float0(tree: Any) -> Any:
    """``tree`` with each typed key's tangent (a key over float0 words, as the key's
    pytree node carries it) made JAX's: float0 zeros of the key's shape.

    >>> key_float0((KeyArray(np.zeros((3, 2), FLOAT0)),))[0].shape
    (3,)
    """
    return tree_map(lambda x: np.zeros(x.shape, FLOAT0) if isinstance(x, KeyArray) else x,
                    tree, is_leaf=lambda x: isinstance(x, KeyArray))


def key_tangent_words(primals: Any, tangents: Any) -> Any:
    """``tangents`` with JAX's float0 tangent of a typed key in ``primals`` (shape
    ``key.shape``) made the float0 zeros of its uint32 words, so the two trees match
    (``key_float0``'s inverse); ``tangents`` unchanged when the trees differ otherwise.

    >>> k = KeyArray(np.zeros((3, 2), np.uint32))
    >>> key_tangent_words((k,), (np.zeros(3, FLOAT0),))[0].shape
    (3,)
    """
    def fix(p, t):
        if isinstance(p, KeyArray) and getattr(t, "dtype", None) == FLOAT0:
            return KeyArray(np.zeros(tuple(np.shape(t)) + (2,), FLOAT0))
        return t
    if not any(isinstance(x, KeyArray) for x in tree_flatten(
            primals, is_leaf=lambda x: isinstance(x, KeyArray))[0]):
        return tangents
    try:
        return tree_map(fix, primals, tangents, is_leaf=lambda x: isinstance(x, KeyArray))
    except (TypeError, ValueError):
        return tangents             # the caller's own check names the mismatch


def keep_metadata(wrapper: _F, fun: Callable[..., Any]) -> _F:
    """Give the function a transform returns the identity of the function it transforms.

    Copies ``__name__``, ``__qualname__``, ``__doc__`` and ``__module__`` from ``fun``
    and sets ``__wrapped__ = fun`` (so ``inspect.signature`` shows ``fun``'s
    parameters). Unlike ``functools.update_wrapper`` it neither merges ``__dict__`` (a
    jitted or custom-derivative object's state would leak into the wrapper) nor copies
    ``__annotations__`` (a gradient does not return what ``fun`` returns). A callable
    without a name (``functools.partial``) lends its type's name.

    >>> def f(x):
    ...     "Doubles x."
    ...     return 2 * x
    >>> g = keep_metadata(lambda x: f(x) + 1, f)
    >>> g.__name__, g.__doc__, g.__wrapped__ is f
    ('f', 'Doubles x.', True)
    """
    name = getattr(fun, "__name__", None) or type(fun).__name__
    wrapper.__name__ = name
    wrapper.__qualname__ = getattr(fun, "__qualname__", None) or name
    wrapper.__doc__ = getattr(fun, "__doc__", None)
    wrapper.__module__ = getattr(fun, "__module__", None) or wrapper.__module__
    wrapper.__wrapped__ = fun
    return wrapper


def flatten_fun(fun, in_tree, has_aux=False):
    """A function of flat leaves returning flat leaves; ``out_tree()`` tells the output
    structure after the first call (and ``aux()`` the aux output when ``has_aux``)."""
    box = {}

    def flat_fun(*leaves):
        args = tree_unflatten(in_tree, leaves)
        out = fun(*args)
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError("has_aux=True requires the function to return a pair "
                                f"(output, aux), got {type(out).__name__}")
            out, box["aux"] = out
        leaves_out, box["tree"] = tree_flatten(out)
        return leaves_out

    def out_tree():
        return box["tree"]

    flat_fun.out_tree = out_tree
    flat_fun.aux = lambda: box.get("aux")
    return flat_fun, out_tree


class StrictStatic:
    """A static argument in a cache key: equal only to an equal value of the same type,
    shown as the value. Python has ``1 == 1.0 == True`` (one hash), but they trace
    differently (``fnp.full(2, n)`` is int64, float64 or bool), so one must not reuse
    another's compiled function (JAX compares static arguments the same way).

    >>> StrictStatic(1) == StrictStatic(1.0), StrictStatic(1) == StrictStatic(1), StrictStatic(2)
    (False, True, 2)
    """
    __slots__ = ("value", "_hash")

    def __init__(self, value: Any):
        self.value, self._hash = value, hash(value)

    def __eq__(self, other: object) -> bool:
        return (type(other) is StrictStatic and type(other.value) is type(self.value)
                and bool(other.value == self.value))

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return repr(self.value)


def abstract_and_concrete(args):
    avals = [get_aval(x) for x in args]
    vals = [x.val if isinstance(x, Tracer) else x for x in args]
    return avals, vals


def trace_flat(flat_fun, args, concrete=True, name="trace", detaches=None):
    """Trace ``flat_fun`` on the flat ``args``; with ``concrete`` the tracers carry
    the arguments' values (so Python control flow works). ``detaches``: the trace
    differentiates (see ``tracing.Trace``)."""
    avals, vals = abstract_and_concrete(args)
    for i, x in enumerate(args):
        if isinstance(x, Tracer):
            continue
        if not isinstance(x, (np.ndarray, np.generic, bool, int, float, complex)):
            raise TypeError(f"argument {i} of type {type(x).__name__} is not a valid "
                            f"array: {x!r:.60}")
    return trace_to_jaxpr(flat_fun, avals, vals if concrete else None, name=name,
                          detaches=detaches, in_sources=list(args))


def as_array(x):
    """Normalise a user leaf: lists/tuples of numbers are not leaves, numbers stay."""
    if isinstance(x, (Tracer, np.ndarray, np.generic, bool, int, float, complex)):
        if type(x) is int and not -2 ** 63 <= x < 2 ** 63:
            # as JAX: it would become a (weak) int64, which the CPU backend wrapped silently
            # (jit(lambda n: n * 2)(2**63) gave 0)
            raise OverflowError(
                f"Python int argument {x} does not fit in int64, the type a Python int "
                f"argument takes; pass np.uint64({x}) if it fits in 64 bits unsigned, "
                f"else a float")
        if isinstance(x, (np.ndarray, np.generic)) and dtype_kind(x.dtype) in "OUSVMm":
            raise TypeError(f"argument of dtype {x.dtype} is not a valid array (object and "
                            f"string arrays are not numeric): {x!r:.60}")
        if isinstance(x, np.ma.MaskedArray):   # its mask would be dropped silently (JAX raises)
            raise ValueError("numpy masked arrays are not supported as arguments of a "
                             "transformed function; use x.filled() for a plain array")
        return x
    if x is None or getattr(x, "__device_array__", False):   # device arrays stay put
        return x
    try:
        arr = np.asarray(x)
    except Exception:
        arr = None
    if arr is None or arr.dtype == object or dtype_kind(arr.dtype) in "USV":
        raise TypeError(f"argument of type {type(x).__name__} is not a valid array: {x!r:.60} "
                        f"(a transformed function takes arrays, numbers and pytrees of them; "
                        f"under jit, mark a non-array argument static with static_argnums or "
                        f"static_argnames, or close over it)")
    return arr


def check_callable(fun: Any, fname: str) -> None:
    """Raise TypeError naming ``fname`` unless ``fun`` is callable: a transform of a
    non-function fails where it is written, not at the first call.

    >>> check_callable(3, "grad")
    Traceback (most recent call last):
    TypeError: grad expects a callable, got int (3)
    """
    if not callable(fun):
        raise TypeError(f"{fname} expects a callable, got {type(fun).__name__} ({fun!r:.60})")


def normalize_argnums(argnums, nargs, fname):
    single = isinstance(argnums, (int, np.integer))
    nums = (int(argnums),) if single else tuple(int(a) for a in argnums)
    for a in nums:
        if not -nargs <= a < nargs:
            raise TypeError(f"{fname}: argnums {argnums} out of range for a function called "
                            f"with {nargs} positional argument(s)")
    return single, tuple(a % nargs for a in nums)


# ------------------------------------------------------------------ jit's fast path keys

FAST_SIG = operator.attrgetter("shape", "dtype", "__class__")   # an array argument's key
# Python scalars on the fast path: their key is their type (their aval is a weak-typed
# scalar of this dtype), and they are converted to a 0-d array of it for the native call
FAST_SCALARS = {int: np.dtype(np.int64), float: np.dtype(np.float64),
                bool: np.dtype(np.bool_), complex: np.dtype(np.complex128)}


FAST_DEPTH = 8    # tuples and lists nested deeper than this take the slow path


def mixed_key(args, depth: int = 0) -> tuple:
    """jit's fast-path key for arguments among which are Python scalars (which have no
    ``shape``) or plain tuples and lists: a scalar's type in place of (shape, dtype,
    class), a tuple's or list's class and its items' keys. Raises AttributeError for
    anything else without a shape, and for nesting deeper than ``FAST_DEPTH``.

    >>> mixed_key((np.zeros(2), 1.5, (np.ones(3, np.float32),)))[1:]
    (<class 'float'>, (<class 'tuple'>, (((3,), dtype('float32'), <class 'numpy.ndarray'>),)))
    """
    if depth > FAST_DEPTH:
        raise AttributeError("arguments nested too deep for jit's fast path")
    return tuple(a.__class__ if a.__class__ in FAST_SCALARS
                 else (a.__class__, mixed_key(a, depth + 1)) if a.__class__ in (tuple, list)
                 else FAST_SIG(a) for a in args)


def fast_key(args) -> Any:
    """jit's fast-path key of a call's positional arguments (``mixed_key`` unless all are
    arrays)."""
    try:
        return FAST_SIG(args[0]) if len(args) == 1 else tuple(map(FAST_SIG, args))
    except AttributeError:
        return mixed_key(args)


def flat_leaves(args, out: list, leaf_types: tuple | None = None, depth: int = 0) -> bool:
    """Append the leaves of ``args`` (nested plain tuples and lists) to ``out`` in
    ``tree_flatten``'s order; False at the first leaf whose type is not one of
    ``leaf_types`` exactly (None: any leaf) or past ``FAST_DEPTH`` levels.

    >>> out = []; flat_leaves(((np.ones(1), [np.zeros(2)]), np.ones(3)), out, (np.ndarray,))
    True
    >>> [a.size for a in out]
    [1, 2, 3]
    """
    if depth > FAST_DEPTH:
        return False
    for a in args:
        if a.__class__ in (tuple, list):
            if not flat_leaves(a, out, leaf_types, depth + 1):
                return False
        elif leaf_types is not None and type(a) not in leaf_types:
            return False
        else:
            out.append(a)
    return True


def flattening(run: Callable[..., Any]) -> Callable[..., Any]:
    """``run`` (taking the leaves) called with arguments that hold tuples and lists of
    arrays, flattened by ``flat_leaves`` (the leaves' types were checked when the fast
    path was registered, and the key checks them on every call)."""
    def call(*args):
        flat: list = []
        flat_leaves(args, flat)
        return run(*flat)
    return call


def static_positions_and_names(fun, nums, names):
    """``static_argnums`` and ``static_argnames`` completed from ``fun``'s signature, so a
    static argument is static passed by position or by keyword (as JAX does); either
    naming a parameter ``fun`` does not have raises ValueError."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):      # no signature (a builtin): taken as given
        return nums, names
    kinds = inspect.Parameter
    positional = [p for p in params if p.kind in (kinds.POSITIONAL_ONLY,
                                                  kinds.POSITIONAL_OR_KEYWORD)]
    var_pos = any(p.kind == kinds.VAR_POSITIONAL for p in params)
    var_kw = any(p.kind == kinds.VAR_KEYWORD for p in params)
    bad = [i for i in nums if not (-len(positional) <= i < len(positional))]
    if bad and not var_pos:
        raise ValueError(f"jit: static_argnums {tuple(bad)} out of range: "
                         f"{getattr(fun, '__name__', 'the function')} takes "
                         f"{len(positional)} positional argument(s)")
    if not var_pos:      # negative positions count from the signature, not the call
        nums = tuple(i % len(positional) for i in nums)
    by_name = {p.name: i for i, p in enumerate(positional) if p.kind != kinds.POSITIONAL_ONLY}
    keyword = {p.name for p in params if p.kind in (kinds.POSITIONAL_OR_KEYWORD,
                                                    kinds.KEYWORD_ONLY)}
    _check_keyword_names("static_argnames", fun, params, names)
    unknown = [n for n in names if n not in keyword]
    if unknown and not var_kw:
        raise ValueError(f"jit: static_argnames {tuple(unknown)} are not parameters of "
                         f"{getattr(fun, '__name__', 'the function')} "
                         f"(its parameters: {', '.join(p.name for p in params)})")
    nums = tuple(dict.fromkeys(
        nums + tuple(by_name[n] for n in names if n in by_name)))
    names = tuple(dict.fromkeys(names + tuple(
        positional[i].name for i in nums if -len(positional) <= i < len(positional)
        and positional[i].name in by_name)))
    return nums, names


def _check_keyword_names(what, fun, params, names) -> None:
    """A name of a positional-only or ``*args`` parameter can't be passed by keyword, so
    naming it in ``static_argnames``/``donate_argnames`` is a ValueError (as JAX), even
    when ``**kwargs`` would take an unknown name."""
    bad = [p.name for p in params if p.name in names and p.kind in (
        p.POSITIONAL_ONLY, p.VAR_POSITIONAL)]
    if bad:
        raise ValueError(f"jit: {what} {tuple(bad)} name positional-only or *args parameters "
                         f"of {getattr(fun, '__name__', 'the function')}; use the argnums")


def donated_positions(fun, nums, names) -> tuple:
    """``donate_argnums`` with the positions of the parameters ``names`` added; a position
    ``fun`` does not have raises ValueError (JAX's check: it was silently never donated)."""
    nums = (nums,) if isinstance(nums, int) else tuple(nums)
    names = (names,) if isinstance(names, str) else tuple(names)
    try:
        sig = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):      # no signature (a builtin): taken as given
        return nums
    params = [p for p in sig if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    bad = [i for i in nums if not -len(params) <= i < len(params)]
    if bad and not any(p.kind == p.VAR_POSITIONAL for p in sig):
        raise ValueError(f"jit: donate_argnums {tuple(bad)} out of range: "
                         f"{getattr(fun, '__name__', 'the function')} takes "
                         f"{len(params)} positional argument(s)")
    if not any(p.kind == p.VAR_POSITIONAL for p in sig):
        nums = tuple(i % len(params) for i in nums)   # from the signature, as static_argnums
    _check_keyword_names("donate_argnames", fun, list(sig), names)
    where = {p.name: i for i, p in enumerate(params)}
    unknown = [n for n in names if n not in where]
    if unknown and not any(p.kind == p.VAR_KEYWORD for p in sig):   # JAX: **kwargs may take it
        raise ValueError(f"jit: donate_argnames {tuple(unknown)} are not positional "
                         f"parameters of {getattr(fun, '__name__', 'the function')}")
    return tuple(dict.fromkeys(nums + tuple(where[n] for n in names if n in where)))


# ---------------------------------------------------------------- jit's fast-path runners

def keys_unwrapped(run, slow):
    """``run`` for calls with typed PRNG keys among the arguments: each key passes its
    uint32 words (a key over a tracer, under an outer trace, takes the ``slow`` path)."""
    def run_keys(*a):
        flat = [x._base if x.__class__ is KeyArray else x for x in a]
        if any(isinstance(x, Tracer) for x in flat):
            return slow(a)
        return run(*flat)
    return run_keys


def with_scalars_converted(run, args, slow):
    """``run`` for calls whose scalar arguments (Python numbers, numpy scalars) become
    0-d arrays first; a Python int beyond int64 takes the ``slow`` path (the compile
    path's own conversion decides what it means)."""
    convert = tuple(FAST_SCALARS.get(a.__class__) or
                    (a.dtype if isinstance(a, np.generic) else None) for a in args)
    asarray = np.asarray

    def run_scalars(*a):
        try:
            flat = [x if dt is None else asarray(x, dt) for x, dt in zip(a, convert)]
        except OverflowError:
            return slow(a)
        return run(*flat)
    return run_scalars
