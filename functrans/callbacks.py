"""Calling back into Python from transformed code, as JAX's ``jax.pure_callback``,
``jax.experimental.io_callback`` and ``jax.debug.callback``.

Each is one primitive whose ``callback`` param is an index into this module's table of
callbacks (a plain int, so jaxprs print, parse and cache as usual); the entry holds the
Python function and the pytree structures of its arguments and results. The impl calls
it with numpy arrays, so under ``jit`` a callback is a host step (inside a compiled loop,
called back from it). None of them is run while a function is traced
(``defer_concrete``).

- ``pure_callback`` has results and no effects (dead-code elimination may drop an unused
  one, as in JAX). No JVP (JAX's error: wrap it in ``custom_jvp``); under ``vmap`` the
  ``vmap_method`` says how: ``"sequential"`` calls it once per lane, ``"expand_dims"``
  once with unbatched arguments given a leading axis of size 1, ``"broadcast_all"``
  once with every argument broadcast to the batch.
- ``io_callback`` has results and effects (never dropped, never merged); not
  differentiable; under ``vmap`` it runs once per lane (an ``ordered`` one refuses).
- ``debug.callback`` has effects and no results: under ``grad``/``jvp`` it sees the
  primal values, once; under ``vmap`` it runs once per lane.

>>> import functrans as ft, functrans.numpy as fnp, numpy as np
>>> f = ft.jit(lambda x: ft.pure_callback(np.sin, ft.ShapeDtypeStruct(x.shape, x.dtype), x))
>>> f(fnp.zeros(2)).tolist()
[0.0, 0.0]
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from jaxpr_ir import ShapedArray
from .api_util import as_array
from .primitives.base import EffectPrimitive, Primitive, move_batch_axis, not_mapped_size
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["pure_callback", "io_callback", "debug_callback", "effects_barrier",
           "pure_callback_p", "io_callback_p", "debug_callback_p"]

_VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                 "legacy_vectorized")


class _Entry:
    """A callback: ``call(leaves)`` calls ``fun`` on the arguments rebuilt from numpy
    leaves and returns its results' leaves, checked against ``out_avals``."""

    def __init__(self, fun, in_tree, out_tree, out_avals, kind):
        self.fun, self.in_tree, self.out_tree = fun, in_tree, out_tree
        self.out_avals, self.kind = list(out_avals), kind

    def call(self, leaves):
        args, kwargs = tree_unflatten(self.in_tree, [np.asarray(x) for x in leaves])
        out = self.fun(*args, **kwargs)
        if self.out_tree is None:                       # debug.callback: no results
            return []
        flat, tree = tree_flatten(out)
        if tree != self.out_tree:
            raise TypeError(f"{self.kind}: the callback returned a value of structure {tree}, "
                            f"but result_shape_dtypes has structure {self.out_tree}")
        return [_check_result(self.kind, i, x, a) for i, (x, a) in
                enumerate(zip(flat, self.out_avals))]


class _Lanes(_Entry):
    """``entry`` called once per lane of a batch of ``size`` (axis 0 of every leaf), its
    results stacked."""

    def __init__(self, entry, size):
        super().__init__(entry.fun, entry.in_tree, entry.out_tree,
                         [ShapedArray((size,) + a.shape, a.dtype) for a in entry.out_avals],
                         entry.kind)
        self.entry, self.size = entry, size

    def call(self, leaves):
        lanes = [self.entry.call([np.asarray(x)[i] for x in leaves]) for i in range(self.size)]
        return [np.stack([lane[k] for lane in lanes]) if lanes else np.zeros(a.shape, a.dtype)
                for k, a in enumerate(self.out_avals)]


class _Vectorized(_Entry):
    """``entry``'s function called once on batched leaves: results have the batch axis."""

    def __init__(self, entry, size):
        super().__init__(entry.fun, entry.in_tree, entry.out_tree,
                         [ShapedArray((size,) + a.shape, a.dtype) for a in entry.out_avals],
                         entry.kind)


def _check_result(kind, i, x, want):
    a = np.asarray(x)
    if a.shape != want.shape:
        raise ValueError(f"{kind}: result {i} of the callback has shape {a.shape}, but "
                         f"result_shape_dtypes says {want.str_short()}")
    if a.dtype != want.dtype:
        raise TypeError(f"{kind}: result {i} of the callback has dtype {a.dtype}, but "
                        f"result_shape_dtypes says {want.str_short()}")
    return a


_ENTRIES: list = []
_DERIVED: dict = {}
_BASE: dict = {}      # (function, structures, avals, kind) -> its index: one entry each


def _register(entry) -> int:
    _ENTRIES.append(entry)
    return len(_ENTRIES) - 1


def _derived(kind, index, size) -> int:
    """The table index of entry ``index`` batched by ``kind`` over ``size`` lanes (one per
    triple, so a function traced again does not grow the table)."""
    key = (kind, index, size)
    if key not in _DERIVED:
        _DERIVED[key] = _register(kind(_ENTRIES[index], size))
    return _DERIVED[key]


def _abstract_eval(*avals, callback, **params):
    return _ENTRIES[callback].out_avals


def _impl(*leaves, callback, **params):
    return _ENTRIES[callback].call(leaves)


def _no_transpose(cts, *args, **params):
    return [None] * len(args)


def _batched_leaves(args, dims, how):
    size = not_mapped_size(args, dims)
    if how == "broadcast_all" or how == "sequential":
        return size, [move_batch_axis(x, d, 0, size) for x, d in zip(args, dims)]
    return size, [move_batch_axis(x, d, 0) if d is not None else
                  move_batch_axis(x, None, 0, 1) for x, d in zip(args, dims)]


# ------------------------------------------------------------------ pure_callback

pure_callback_p = Primitive("pure_callback", multiple_results=True)
pure_callback_p.defer_concrete = True


def _pure_jvp(primals, tangents, **params):
    raise ValueError("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use "
                     "callbacks while taking gradients.")


def _pure_batch(args, dims, *, callback, vmap_method):
    if vmap_method not in _VMAP_METHODS:
        raise NotImplementedError(
            "vmap is only supported for the pure_callback primitive when vmap_method is one "
            "of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got vmap_method={vmap_method!r}.")
    how = "sequential" if vmap_method.startswith("sequential") else vmap_method
    size, leaves = _batched_leaves(args, dims, how)
    kind = _Lanes if how == "sequential" else _Vectorized
    outs = pure_callback_p.bind(*leaves, callback=_derived(kind, callback, size),
                                vmap_method=vmap_method)
    return outs, [0] * len(outs)


pure_callback_p.def_rules(abstract_eval=_abstract_eval, impl=_impl, jvp=_pure_jvp,
                          transpose=_no_transpose, batch=_pure_batch)


# ------------------------------------------------------------------ io_callback

io_callback_p = EffectPrimitive("io_callback", multiple_results=True)
io_callback_p.defer_concrete = True


def _io_jvp(primals, tangents, **params):
    raise ValueError("IO callbacks do not support JVP.")


def _io_batch(args, dims, *, callback, ordered):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    size, leaves = _batched_leaves(args, dims, "sequential")
    outs = io_callback_p.bind(*leaves, callback=_derived(_Lanes, callback, size),
                              ordered=ordered)
    return outs, [0] * len(outs)


io_callback_p.def_rules(abstract_eval=_abstract_eval, impl=_impl, jvp=_io_jvp,
                        transpose=_no_transpose, batch=_io_batch)


# ------------------------------------------------------------------ debug.callback

debug_callback_p = EffectPrimitive("debug_callback", multiple_results=True)
debug_callback_p.defer_concrete = True


def _debug_jvp(primals, tangents, **params):
    debug_callback_p.bind(*primals, **params)     # the primal values, once; no outputs
    return [], []


def _debug_batch(args, dims, *, callback, ordered):
    size, leaves = _batched_leaves(args, dims, "sequential")
    debug_callback_p.bind(*leaves, callback=_derived(_Lanes, callback, size), ordered=ordered)
    return [], []


debug_callback_p.def_rules(abstract_eval=_abstract_eval, impl=_impl, jvp=_debug_jvp,
                           transpose=_no_transpose, batch=_debug_batch)


# ------------------------------------------------------------------ the public functions

def _result_avals(kind, result_shape_dtypes):
    flat, tree = tree_flatten(result_shape_dtypes)
    avals = []
    for i, s in enumerate(flat):
        if not (hasattr(s, "shape") and hasattr(s, "dtype")):
            raise TypeError(f"{kind}: result_shape_dtypes leaf {i} must have .shape and "
                            f".dtype (a ShapeDtypeStruct or an array), got {type(s).__name__}")
        avals.append(ShapedArray(tuple(s.shape), np.dtype(s.dtype)))
    return tree, avals


def _bind_callback(prim, kind, callback, result_shape_dtypes, args, kwargs, **params):
    if not callable(callback):
        raise TypeError(f"{kind}: the callback must be callable, got "
                        f"{type(callback).__name__}")
    leaves, in_tree = tree_flatten((args, kwargs))
    leaves = [as_array(x) for x in leaves]
    if result_shape_dtypes is None and prim is debug_callback_p:
        out_tree, avals = None, []
    else:
        out_tree, avals = _result_avals(kind, result_shape_dtypes)
    key = (callback, in_tree, out_tree, tuple(avals), kind)
    try:
        index = _BASE.get(key)
    except TypeError:                 # an unhashable callable: a new entry each call
        key, index = None, None
    if index is None:
        index = _register(_Entry(callback, in_tree, out_tree, avals, kind))
        if key is not None:
            _BASE[key] = index
    outs = prim.bind(*leaves, callback=index, **params)
    return None if out_tree is None else tree_unflatten(out_tree, outs)


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                  sharding: Any = None, vmap_method: str | None = None,
                  **kwargs: Any) -> Any:
    """Call the pure Python function ``callback(*args, **kwargs)`` on numpy arrays from
    inside any transform (JAX's ``jax.pure_callback``); its results must have the shapes
    and dtypes of ``result_shape_dtypes`` (a pytree of ``ShapeDtypeStruct`` or arrays).

    It may be called any number of times, or not at all when its result is unused. Not
    differentiable (use ``custom_jvp``/``custom_vjp`` around it); under ``vmap``,
    ``vmap_method`` must be ``"sequential"`` (a call per lane), ``"expand_dims"`` (one
    call, unbatched arguments with a leading axis of size 1) or ``"broadcast_all"`` (one
    call, every argument broadcast). ``sharding`` is accepted for JAX's signature.

    >>> import functrans as ft, functrans.numpy as fnp, numpy as np
    >>> def f(x):
    ...     return ft.pure_callback(np.cos, ft.ShapeDtypeStruct(x.shape, x.dtype), x,
    ...                             vmap_method="sequential")
    >>> ft.vmap(f)(fnp.zeros(2)).tolist()
    [1.0, 1.0]
    """
    return _bind_callback(pure_callback_p, "pure_callback", callback, result_shape_dtypes,
                          args, kwargs, vmap_method=vmap_method)


def io_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                sharding: Any = None, ordered: bool = False, **kwargs: Any) -> Any:
    """Call ``callback(*args, **kwargs)``, a function with side effects, on numpy arrays
    when the computation runs (JAX's ``jax.experimental.io_callback``): never dropped or
    merged, once per call (per lane under ``vmap``, where an ``ordered`` one is refused).
    Calls run in program order on this single host either way. Not differentiable.

    >>> import functrans as ft, numpy as np
    >>> seen = []
    >>> def log(x):
    ...     seen.append(float(x)); return np.float64(len(seen))
    >>> _ = ft.jit(lambda x: io_callback(log, ft.ShapeDtypeStruct((), np.float64), x))(2.0)
    >>> seen
    [2.0]
    """
    return _bind_callback(io_callback_p, "io_callback", callback, result_shape_dtypes,
                          args, kwargs, ordered=bool(ordered))


def debug_callback(callback: Callable[..., None] | None = None, *args: Any,
                   ordered: bool = False, partitioned: bool = False, **kwargs: Any) -> Any:
    """Call ``callback(*args, **kwargs)`` on numpy arrays when the computation runs, for
    debugging (JAX's ``jax.debug.callback``): under ``grad``/``jvp`` with the primal
    values, once; under ``vmap`` once per lane; its return value is ignored. With no
    callback it returns a decorator.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> _ = ft.grad(lambda x: (ft.debug.callback(print, x), x * x)[1])(3.0)
    3.0
    """
    if callback is None:
        return functools.partial(debug_callback, *args, ordered=ordered,
                                 partitioned=partitioned, **kwargs)
    _bind_callback(debug_callback_p, "debug.callback", callback, None, args, kwargs,
                   ordered=bool(ordered))
    return None


def effects_barrier() -> None:
    """Wait until every callback and print issued so far has run (JAX's
    ``jax.effects_barrier``): here they run synchronously, so there is nothing to wait for.

    >>> effects_barrier()
    """
    return None
