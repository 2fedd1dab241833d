"""Staging out: ``jit`` and ``make_jaxpr`` (``eval_shape``: stages.py).

``jit`` traces with abstract values (no concrete values, so Python control flow
on arguments raises ``ConcretizationError``), simplifies the jaxpr and hands it
to a backend. Compiled code is cached per (argument structure, shapes, dtypes,
weak types, static values).

>>> import functrans as ft, functrans.numpy as fnp
>>> f = ft.jit(lambda x: x * 2.0)
>>> f(fnp.ones(2)).tolist()
[2.0, 2.0]
"""
from __future__ import annotations

import functools
import inspect
import threading
import time
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from jaxpr_ir import ClosedJaxpr
from .api_util import (FAST_SCALARS, FAST_SIG, StrictStatic, as_array, donated_positions,
                       fast_key, flat_leaves, flatten_fun, flattening, float0_as_structure,
                       keys_unwrapped, mixed_key, static_positions_and_names,
                       with_scalars_converted)
from . import trace_events
from .compiler import (JitCause, LRUCache, backend_donates, clear_backend_caches,
                       clear_compiled, compile_closed, observed)
from .primitives.call import pjit_p
from .primitives.control_flow_common import axis_env_key, hoist
from .shard_map_specs import typing_key
from .primitives.control_flow_eager import eager_vetoes
from .array import Array
from .device import host_device, sharding_constraint
from .array import DeletedArray, mark_owned, take_donation
from .jit_shared import clear as clear_shared, every_shared, shared
from .key_array import KeyArray
from .tracing import Tracer, get_aval, own_constants, trace_to_jaxpr, wrap
from .weak_values import WeakArray, weak_outputs, weakened, weakening as _weakening
from .tree_def import treedef_is_strict_leaf
from .tree_util import tree_flatten, tree_unflatten
from .stages import (Compiled, Lowered, ShapeDtypeStruct, Traced, abstractify,  # noqa: F401
                     eval_shape)   # (re-exports)
from . import config as _config
from .traceback_util import filter_traceback as _filter_traceback   # ---- tools


def _static_key(value, i_or_name):
    try:
        hash(value)
    except TypeError:
        raise ValueError(f"non-hashable static argument {i_or_name!r}: static arguments must be "
                         f"hashable, got {type(value).__name__} {value!r:.60}") from None
    return StrictStatic(value)     # 1, 1.0 and True are equal, but trace differently


def _split_static(fun, args, kwargs, static_argnums, static_argnames):
    """(dynamic positional args, dynamic kwargs, static key, a function of the dynamic args)."""
    static_argnums = tuple(a % len(args) if -len(args) <= a < len(args) else a
                           for a in static_argnums)
    static = []
    for i in static_argnums:
        if i < len(args):
            static.append((i, _static_key(args[i], i)))
    for n in static_argnames:
        if n in kwargs:
            static.append((n, _static_key(kwargs[n], n)))
    dyn_args = tuple(a for i, a in enumerate(args) if i not in static_argnums)
    dyn_kwargs = {k: v for k, v in kwargs.items() if k not in static_argnames}
    static_pos = {i: args[i] for i in static_argnums if i < len(args)}
    static_kw = {k: kwargs[k] for k in static_argnames if k in kwargs}

    def f(dargs, dkwargs):
        it = iter(dargs)
        full = [static_pos[i] if i in static_pos else next(it) for i in range(len(args))]
        return fun(*full, **dkwargs, **static_kw)

    return dyn_args, dyn_kwargs, tuple(static), f


def _unshared(out, inputs):
    """A result never shares memory with an argument (the interpreter returns an input it
    passes through, or a view of one): a caller's later write must not change it."""
    if isinstance(out, np.ndarray) and any(
            isinstance(x, np.ndarray) and np.may_share_memory(out, x) for x in inputs):
        return out.copy()
    return out


_WITH_FAST = weakref.WeakSet()       # Jitted objects holding fast-path runners


def clear_caches() -> None:
    """Forget every compiled executable: every jitted function's cache and fast paths,
    the nested-call cache, and the backends' compiled code and idle workspaces (as
    ``jax.clear_caches``). The next call of a jitted function compiles again.

    >>> import functrans as ft
    >>> f = ft.jit(lambda x: x + 1.0)
    >>> _ = f(1.0); ft.clear_caches(); f.cache_info()["entries"]
    0
    """
    clear_compiled()
    _drop_fast_paths()
    clear_shared()
    clear_backend_caches()


def _drop_fast_paths(*_option_change):
    # a debugging tool turned on must see every call: forget the native shortcuts
    for j in list(_WITH_FAST):
        j._fast.clear()
    for caches in every_shared():
        caches[2].clear()


def _slow_path(jitted):
    """``jitted._call_slow`` for a fast runner that wrappers of the same function share:
    it holds ``jitted`` and its function weakly (the shared caches must not keep the
    function alive); a runner is called through a live wrapper, so the function lives."""
    try:
        ref, fun_ref = weakref.ref(jitted), weakref.ref(jitted.fun)
    except TypeError:       # not weakly referable: its caches are its own (jit_shared)
        return lambda args: jitted._call_slow(args, {})
    backend, inline = jitted.backend, jitted.inline

    def slow(args):
        j = ref() or Jitted(fun_ref(), (), (), (), backend, inline)
        return j._call_slow(args, {})
    return slow


_config._listeners.append(_drop_fast_paths)


class _JitSwitch(threading.local):
    # disabled: this thread's innermost disable_jit(flag), None outside any; everywhere: the
    # disable_jit option (config), for threads outside a disable_jit(); anywhere: threads in
    # a disable_jit(True), plus one while the option is on (class-wide: the fast test)
    disabled, anywhere, everywhere = None, 0, False


jit_switch = _JitSwitch()


def jit_disabled() -> bool:
    """Whether ``jit`` functions run as plain Python in this thread now (``disable_jit``)."""
    here = jit_switch.disabled
    return bool(_JitSwitch.everywhere if here is None else here)


def _disable_jit_option(name, old, new):
    if name == "disable_jit":
        _JitSwitch.everywhere = new
        _JitSwitch.anywhere += 1 if new else -1


_config.on_update(_disable_jit_option)
eager_vetoes.append(jit_disabled)    # under disable_jit, eager loops stay interpreted too


class Jitted:
    """A jit-compiled function (see ``jit``)."""

    def __init__(self, fun, static_argnums, static_argnames, donate_argnums, backend,
                 inline=False):
        self.fun = fun
        static_argnums, static_argnames, donate_argnums = (     # None means none, as JAX
            () if a is None else a for a in (static_argnums, static_argnames, donate_argnums))
        if isinstance(static_argnums, int):
            static_argnums = (static_argnums,)
        if isinstance(static_argnames, str):
            static_argnames = (static_argnames,)
        self.static_argnums, self.static_argnames = static_positions_and_names(
            fun, tuple(static_argnums), tuple(static_argnames))
        self.donate_argnums = tuple(donate_argnums) if not isinstance(donate_argnums, int) \
            else (donate_argnums,)
        both = set(self.static_argnums) & set(self.donate_argnums)
        if both:      # a static argument is hashed into the cache key, never a buffer
            raise ValueError(f"jit: arguments {sorted(both)} of {self._name()} are both static "
                             "(static_argnums/static_argnames) and donated "
                             "(donate_argnums/donate_argnames); they cannot be both")
        self.backend = backend
        self.inline = bool(inline)   # traced calls run fun in the caller's trace
        # the signature key -> (executable, output tree); key -> (jaxpr, consts, out_tree)
        # traced under a transform; (shape, dtype, type) per positional array -> native
        # runner: shared by the wrappers of one function and options (jit_shared)
        self._cache, self._staged, self._fast = shared(
            fun, (self.static_argnums, self.static_argnames, self.donate_argnums, backend,
                  self.inline, type(self)), lambda: (LRUCache(), LRUCache(), {}))
        self._last_key = None      # the key of the latest compile, for the compile log
        self._hits = 0
        self._misses = 0
        self._trace_seconds = None   # the latest trace's duration, for compile timings
        functools.update_wrapper(self, fun)

    def _trace(self, args, kwargs):
        dyn_args, dyn_kwargs, static, f = _split_static(
            self.fun, args, kwargs, self.static_argnums, self.static_argnames)
        flat, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        flat = [as_array(x) for x in flat]
        if DeletedArray in map(type, flat):
            flat[list(map(type, flat)).index(DeletedArray)].item()   # raises: deleted
        avals = tuple(get_aval(x) for x in flat)
        key = (in_tree, tuple((a.shape, a.dtype, a.weak_type) for a in avals), static)
        return flat, in_tree, avals, key, f

    def _stage(self, in_tree, avals, f, sources=None):
        if _config.read("no_tracing"):
            raise RuntimeError(f"re-tracing function {self._name()} for `jit`, but "
                               "'no_tracing' is set")
        t0 = time.perf_counter()
        flat_fun, out_tree = flatten_fun(lambda a, k: float0_as_structure(f(a, k)), in_tree)
        # under a transform, f's constants stay in its own jaxpr (not in the enclosing
        # trace, as closed-over tracers), so that the trace can serve the next call
        with own_constants():
            jaxpr, consts, _ = trace_to_jaxpr(
                flat_fun, list(avals), None, name=f"jit({getattr(self.fun, '__name__', 'fun')})",
                in_sources=sources)
        self._trace_seconds = time.perf_counter() - t0
        return jaxpr, consts, out_tree()

    def lower(self, *args, **kwargs) -> Lowered:
        """The traced and optimised stage for these arguments: arrays, scalars or their
        types (``ShapeDtypeStruct``s), as JAX's ``jit(f).lower(*args)``.

        >>> import functrans as ft
        >>> ft.jit(lambda x: 2 * x).lower(ft.ShapeDtypeStruct((), "float32")).compile()(1.0)
        Array(2., dtype=float32)
        """
        dyn_args, dyn_kwargs, _, f = _split_static(
            self.fun, args, kwargs, self.static_argnums, self.static_argnames)
        flat, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        avals = tuple(abstractify(x) for x in flat)
        jaxpr, consts, out_tree = self._stage(in_tree, avals, f)
        if any(isinstance(c, Tracer) for c in consts):
            raise TypeError("lower: the function closes over a traced value; lower it outside "
                            "the enclosing transform")
        static = {a % len(args) for a in self.static_argnums if -len(args) <= a < len(args)}
        donated = [i in self.donate_argnums or i - len(args) in self.donate_argnums
                   for i, a in enumerate(args) if i not in static
                   for _ in tree_flatten(a)[0]]
        return Lowered(ClosedJaxpr(jaxpr, consts), self.backend, out_tree, self._name(),
                       in_tree, avals, donated + [False] * (len(avals) - len(donated)))

    def trace(self, *args, **kwargs) -> Traced:
        """The traced stage for these arguments, as JAX's ``jit(f).trace(*args)``:
        ``.jaxpr`` (the traced jaxpr), ``.out_info`` (output ShapeDtypeStructs),
        ``.lower()``.

        >>> import functrans as ft
        >>> print(ft.jit(lambda x: x * 2.0).trace(1.0).jaxpr)
        { lambda ; a:f64[]{weak}. let
            b:f64[]{weak} = mul a 2.0:f64[]{weak}
          in (b,) }
        """
        return Traced(self.lower(*args, **kwargs), self._name())

    def _name(self):
        return f"jit({getattr(self.fun, '__name__', 'fun')})"

    def __call__(self, *args, **kwargs):
        if _JitSwitch.anywhere and jit_disabled():   # disable_jit(): run as Python
            return self.fun(*args, **kwargs)
        if not kwargs and self._fast:
            # fast path: positional arrays and scalars whose signature already has a
            # native runner
            try:
                run = self._fast[FAST_SIG(args[0]) if len(args) == 1
                                 else tuple(map(FAST_SIG, args))]
            except AttributeError:   # a Python scalar, tuple or list among the arguments
                try:
                    run = self._fast.get(mixed_key(args)) if self._fast else None
                except (AttributeError, TypeError):
                    run = None
            except (KeyError, TypeError, IndexError):
                run = None
            if run is not None:
                self._hits += 1      # (a profiler trace times the native call as it is)
                return trace_events.timed_call(self._name(), trace_events.now(), run, args) \
                    if trace_events.ACTIVE else run(*args)
        try:
            return self._call_slow(args, kwargs)
        except Exception as e:   # ---- tools: drop this frame too (traceback_util)
            _filter_traceback(e)
            raise

    def _call_slow(self, args, kwargs):
        t0 = trace_events.now() if trace_events.ACTIVE else 0   # profiler trace: dispatch
        flat, in_tree, avals, key, f = self._trace(args, kwargs)
        if self.inline and any(isinstance(x, Tracer) for x in flat):
            return self.fun(*args, **kwargs)    # jit(inline=True): the caller's trace records it
        entry = self._cache.get(key)
        if entry is not None and not any(isinstance(x, Tracer) for x in flat):
            self._hits += 1
            exe, out_tree, weak = entry
            if not kwargs:   # a signature compiled for another leaf type (0-d array, np.int64)
                self._register_fast(args, kwargs, exe, out_tree, weak)
            return tree_unflatten(out_tree, weakened(self._run(exe, args, flat, t0), weak))
        jaxpr, consts, out_tree, held = self._stage_cached(key, in_tree, avals, f, flat)
        if any(isinstance(x, Tracer) for x in flat) or any(isinstance(c, Tracer) for c in consts):
            # unoptimised: inlining would drop custom_jvp/custom_vjp/checkpoint equations,
            # whose rules the enclosing transform needs (pjit's impl optimises); a reused
            # trace binds the same body, so pjit's rules find what they derived from it
            body, hoisted = held or hoist(ClosedJaxpr(jaxpr, consts))
            outs = pjit_p.bind(*hoisted, *flat, jaxpr=body,
                               name=getattr(self.fun, "__name__", "fun"), backend=self.backend)
            return tree_unflatten(out_tree, outs)
        self._misses += 1
        dyn_args, dyn_kwargs, _, _ = _split_static(self.fun, args, kwargs, self.static_argnums,
                                                   self.static_argnames)
        cause = JitCause(self.fun, args, dyn_args, dyn_kwargs, self.static_argnums, key,
                         self._last_key)
        exe = compile_closed(ClosedJaxpr(jaxpr, consts), self.backend, name=self._name(),
                             donate=self._donated_flat(args), cause=cause,
                             trace_seconds=self._trace_seconds)
        self._last_key = key
        weak = weak_outputs(jaxpr.out_avals)     # those weakly typed: WeakArrays, as JAX's
        self._cache.put(key, (exe, out_tree, weak))
        self._register_fast(args, kwargs, exe, out_tree, weak)
        return tree_unflatten(out_tree, weakened(
            self._run(exe, args, flat, t0 and trace_events.now()), weak))

    def _stage_cached(self, key, in_tree, avals, f, flat):
        """``_stage``, reusing the jaxpr traced for the same signature under a transform
        (grad(jit(f)) or vmap(jit(f)) called again traces f once, as JAX's), unless it
        closed over a tracer. The axis env is part of the key: a collective or
        ``axis_size`` in f reads the names and sizes of the enclosing vmaps and meshes."""
        reuse = any(isinstance(x, Tracer) for x in flat)
        if reuse:
            key = (key, axis_env_key(), typing_key(flat))
        staged = self._staged.get(key) if reuse else None
        if staged is not None:
            return staged
        try:
            staged = self._stage(in_tree, avals, f, flat if reuse else None)
        except Exception as e:   # ---- tools: the traceback ends in user code (traceback_util)
            _filter_traceback(e)
            raise
        if reuse and not any(isinstance(c, Tracer) for c in staged[1]):
            staged = (*staged, hoist(ClosedJaxpr(staged[0], staged[1])))
            self._staged.put(key, staged)
            return staged
        return (*staged, None)

    def _run(self, exe, args, flat, t0=0):
        """Call a compiled function. Donated arguments hand over their buffer only when
        functrans owns it (``array.take_donation``; the Array is then deleted); any other
        donated array is passed read-only, so the backend writes into a private copy.
        Outputs over fresh buffers are marked donatable in turn."""
        taken = ()
        if self.donate_argnums and self._backend_donates():
            flat = list(flat)
            taken = []
            for i in self._donated_flat(args):
                buf = take_donation(flat[i])
                if buf is not None:
                    flat[i] = buf
                    taken.append(i)
                elif isinstance(flat[i], np.ndarray):
                    view = flat[i].view(np.ndarray)
                    view.flags.writeable = False
                    flat[i] = view
        outs = trace_events.timed_call(self._name(), t0, exe, flat) if t0 else exe(*flat)
        inputs = {id(x) for i, x in enumerate(flat) if i not in taken}
        return [mark_owned(wrap(o)) if type(o) is np.ndarray and o.flags.owndata
                and id(o) not in inputs else wrap(_unshared(o, flat)) for o in outs]

    def _backend_donates(self) -> bool:
        return backend_donates(self.backend)

    def _donated_flat(self, args):
        """Flat argument positions of the leaves of the donated positional arguments."""
        if not self.donate_argnums:
            return ()
        n = len(args)
        static = {a % n for a in self.static_argnums if -n <= a < n}
        donated = {a % n for a in self.donate_argnums if -n <= a < n}
        out, pos = [], 0
        for i, a in enumerate(args):
            if i in static:
                continue
            k = len(tree_flatten(a)[0])
            if i in donated:
                out.extend(range(pos, pos + k))
            pos += k
        return tuple(out)

    def _register_fast(self, args, kwargs, exe, out_tree, weak=None):
        """Give this signature a native fast path when the backend has one: positional
        plain arrays, Python scalars and numpy scalars only, no static or donated
        arguments, no debugging tools."""
        fast_runner = getattr(exe, "fast_runner", None)
        cls, leaves = Array, (np.ndarray, Array, WeakArray)
        nested = any(a.__class__ in (tuple, list) for a in args)   # a model's parameters
        if (fast_runner is None or kwargs or self.static_argnums or self.static_argnames
                or self.donate_argnums
                or not (flat_leaves(args, [], leaves) if nested else
                        all(type(a) in leaves or type(a) in FAST_SCALARS or isinstance(a, np.generic)
                            or (type(a) is KeyArray and type(a._base) in (np.ndarray, cls))
                            for a in args))
                or observed()):       # last: it asks every tool's hook
            return
        single = treedef_is_strict_leaf(out_tree)
        run = fast_runner(cls, single=single)
        if run is None:
            return
        run = run if weak is None else _weakening(run, weak, single)
        if not single:
            inner = run
            run = lambda *a: tree_unflatten(out_tree, inner(*a))   # noqa: E731
        if nested:
            run = flattening(run)
        elif not all(type(a) in leaves for a in args):
            if any(type(a) is KeyArray for a in args):
                run = keys_unwrapped(run, _slow_path(self))
            run = with_scalars_converted(run, args, _slow_path(self))
        if len(self._fast) >= _config.read("compile_cache_size"):
            self._fast.clear()   # bounded like the compile cache (the runners hold executables)
        self._fast[fast_key(args)] = run
        _WITH_FAST.add(self)

    def clear_cache(self) -> None:
        """Forget this function's compiled executables (as ``jax.jit(f).clear_cache()``);
        the next call compiles again.

        >>> import functrans as ft
        >>> f = ft.jit(lambda x: x * 2.0)
        >>> _ = f(1.0); f.clear_cache(); f.cache_info()["entries"]
        0
        """
        self._cache.clear()
        self._staged.clear()
        self._fast.clear()
        self._last_key = None

    def cache_info(self) -> dict:
        return {"hits": self._hits, "misses": self._misses, "entries": len(self._cache)}

    def __repr__(self):
        return f"<jit({getattr(self.fun, '__qualname__', None) or self.__name__})>"

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)


class _ShardedJitted(Jitted):
    """``jit(f, in_shardings=..., out_shardings=...)``: a functrans process is one device,
    so the shardings are checked records (``device.sharding_constraint``: each leaf's shape
    against the spec) and eager results carry ``out_shardings``, as ``device_put`` gives."""

    def __init__(self, fun, in_shardings, out_shardings, *a, **k):
        self.in_shardings, self.out_shardings = in_shardings, out_shardings

        @functools.wraps(fun)
        def checked(*args, **kwargs):
            if in_shardings is not None:
                if kwargs:
                    raise ValueError("jit does not support kwargs when in_shardings is "
                                     "specified.")
                ins = in_shardings if isinstance(in_shardings, (tuple, list)) and \
                    len(in_shardings) == len(args) else [in_shardings] * len(args)
                args = [a if s is None else sharding_constraint(a, s, "jit in_shardings")
                        for a, s in zip(args, ins)]
            return fun(*args, **kwargs)
        super().__init__(checked, *a, **k)

    def __call__(self, *args, **kwargs):
        out, s = super().__call__(*args, **kwargs), self.out_shardings
        if s is None:
            return out
        if isinstance(s, (tuple, list)) and isinstance(out, (tuple, list)) and len(s) == len(out):
            return type(out)(o if si is None else sharding_constraint(o, si, "jit out_shardings")
                             for o, si in zip(out, s))
        return sharding_constraint(out, s, "jit out_shardings")


def jit(fun: Callable[..., Any] | None = None, *, in_shardings: Any = None,
        out_shardings: Any = None, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (), donate_argnums: int | Sequence[int] = (),
        donate_argnames: str | Sequence[str] = (), backend: str | None = None,
        keep_unused: bool = False, inline: bool = False, device: Any = None,
        compiler_options: dict | None = None, abstracted_axes: Any = None) -> Any:
    """Compile ``fun``: trace it once per argument signature, optimise, run native code.

    Usable as ``@jit``, ``@jit(backend=...)`` or ``jit(f, static_argnums=...)``. The
    first call with a new signature (argument structure, shapes, dtypes, weak types and
    static values) traces ``fun`` with abstract values, simplifies the jaxpr and compiles
    it; later calls with that signature reuse the executable. Because tracing sees no
    values, Python control flow on a traced argument raises ``ConcretizationError``
    (use ``lax.cond``, ``fnp.where`` or a static argument).

    Args:
      fun: the function to compile; arguments are arrays, Python scalars or pytrees of
        them (static arguments may be any hashable value). With ``fun`` omitted, ``jit``
        returns a decorator taking the other arguments.
      static_argnums: positions of arguments passed to ``fun`` as Python values rather
        than traced: an int or a sequence of ints (negative counts from the end). They
        must be hashable; each new value traces and compiles again.
      static_argnames: the same, for arguments passed by keyword: a name or a sequence
        of names.
      donate_argnums: positions of arguments whose buffers the compiled code may reuse
        for its outputs (saving an allocation and a copy). Do not read a donated array
        after the call: its contents may have been overwritten. Only the CPU backend
        uses donation; the others ignore it.
      donate_argnames: the same, by parameter name (a name or a sequence of names): the
        argument at that parameter's position is donated when passed by position.
      backend: where the compiled code runs: ``"cpu"`` (LLVM through llvmlite),
        ``"cuda"`` (Numba-CUDA) or ``"interpret"`` (the numpy reference interpreter).
        None uses ``FUNCTRANS_BACKEND`` if set, else ``"cpu"`` (``"interpret"`` when
        llvmlite cannot be imported).
      keep_unused: accepted for JAX's signature (every argument is passed either way).
      inline: when True, a call under another trace (an enclosing ``jit``, ``grad``,
        ``vmap``...) runs ``fun`` in that trace, adding its equations to the caller's
        jaxpr instead of one ``pjit`` equation. Eager calls still compile.
      in_shardings: JAX's shardings of the arguments (a ``NamedSharding``, a
        ``PartitionSpec`` under ``set_mesh``, a ``SingleDeviceSharding``, None; one for
        all or a tuple of them): one process is one device, so each leaf is checked.
      out_shardings: the same for the outputs; eager results carry them. device: the
        host's (JAX's; another device raises).
      compiler_options: accepted, unused (no XLA flags). abstracted_axes: only None.

    Returns:
      The compiled function, a ``Jitted`` object with ``fun``'s ``__name__``,
      ``__qualname__``, ``__doc__``, ``__module__`` and ``__wrapped__``; also
      ``.lower(*args)`` (the optimised jaxpr, then ``.compile()``), ``.cache_info()`` and
      ``.clear_cache()`` (``ft.clear_caches()`` clears every cache at once).
      Under another transform (``grad``, ``vmap``, ...) it is staged as one ``pjit``
      equation that the transform differentiates or batches.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> @ft.jit
    ... def f(x):
    ...     return x + 1.0
    >>> float(f(1.0))
    2.0
    >>> f
    <jit(f)>
    >>> power = ft.jit(lambda x, n: x ** n, static_argnums=1, backend="interpret")
    >>> float(power(2.0, 3)), float(power(2.0, 4)), power.cache_info()["misses"]
    (8.0, 16.0, 2)
    """
    if fun is None:
        options = {k: v for k, v in locals().items() if k != "fun"}
        return lambda f: jit(f, **options)
    if not callable(fun):
        raise TypeError(f"jit expects a callable, got {type(fun).__name__}")
    if (device is not None and device != host_device()) or abstracted_axes is not None:
        raise ValueError(f"jit: functrans runs on the host ({host_device()!r}; backend= picks "
                         f"another backend) without dynamic shapes (abstracted_axes): got "
                         f"device={device!r}, abstracted_axes={abstracted_axes!r}")
    if donate_argnames or donate_argnums not in ((), None):
        donate_argnums = donated_positions(fun, donate_argnums, donate_argnames)
    if in_shardings is not None or out_shardings is not None:
        return _ShardedJitted(fun, in_shardings, out_shardings, static_argnums,
                              static_argnames, donate_argnums, backend, inline)
    return Jitted(fun, static_argnums, static_argnames, donate_argnums, backend, inline)


def make_jaxpr(fun: Callable[..., Any], static_argnums: int | Sequence[int] = (),
               return_shape: bool = False) -> Callable[..., Any]:
    """A function returning the traced (abstract) jaxpr of ``fun`` for given arguments.

    ``static_argnums`` (an int or ints): arguments given as Python values, not traced.
    Arguments may be ``ShapeDtypeStruct``s. ``return_shape``: also return the output's
    ``ShapeDtypeStruct`` pytree, as JAX's.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> print(ft.make_jaxpr(fnp.sin)(1.0))
    { lambda ; a:f64[]{weak}. let
        b:f64[]{weak} = sin a
      in (b,) }
    """
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)

    def make(*args, **kwargs):
        dyn_args, dyn_kwargs, static, f = _split_static(fun, args, kwargs, static_argnums, ())
        flat, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        if DeletedArray in map(type, flat):
            flat[list(map(type, flat)).index(DeletedArray)].item()   # raises: deleted
        flat_fun, out_tree = flatten_fun(lambda a, k: f(a, k), in_tree)
        try:
            jaxpr, consts, _ = trace_to_jaxpr(flat_fun, [abstractify(x) for x in flat], None,
                                              name="make_jaxpr")
        except Exception as e:   # ---- tools: the traceback ends in user code (traceback_util)
            _filter_traceback(e)
            raise
        if not return_shape:
            return ClosedJaxpr(jaxpr, consts)
        return ClosedJaxpr(jaxpr, consts), tree_unflatten(out_tree(), [
            ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in jaxpr.out_avals])

    return make
