"""The one compile path: ``compile_closed`` simplifies a closed jaxpr and hands it to a
backend; tools watch it through hooks.

``jit``, ``jit(f).lower(...).compile()`` and the nested-call primitive (``pjit``) all
compile here. A tool (stage dumps and the compile log in ``dump``, ``debug_nans`` in
``debug``) subclasses ``CompileHook`` and registers it with ``add_hook``; while no hook
is ``active()`` a compile runs no tool code at all.

Compiled executables are kept in ``LRUCache`` objects, bounded by the option
``compile_cache_size``; ``clear_compiled()`` empties every one of them and
``clear_backend_caches()`` the caches of the backends compiled for, whose in-memory
caches the option ``backend_cache_size`` bounds (each backend is told its value when
first compiled for and whenever it changes).

Where a compile's time went: an observed compile (a hook active) records seconds per
stage in ``Compilation.timings``: ``trace`` (given by the caller), ``simplify: <pass>``
for each pass of ``jaxpr_ir.passes.PIPELINE``, ``backend: <stage>`` for each stage the
backend reports (``exe.compile_timings``); ``format_timings`` prints them.

An equation (at any depth) whose primitive's ``compile_error(eqn)`` rule returns a
message stops the compile with ``ValueError(message)``. Before simplifying, a top-level
equation whose primitive has a ``compile_inline(eqn, backend)`` rule is replaced by the equations that rule returns, when it returns any: a
shard_map runs its body inside the program this way on the CPU backend.

A compile slower than the option ``progress_after_seconds`` prints one progress line on
stderr (the backend's ``progress.ProgressLine``) when stderr is a terminal or
``log_compiles`` is on, unless ``show_progress`` is off.

>>> from jaxpr_ir import ClosedJaxpr, Jaxpr, Var, ShapedArray
>>> a = Var(ShapedArray((), "float64"))
>>> exe = compile_closed(ClosedJaxpr(Jaxpr([], [a], [], [a])), "interpret", name="ident")
>>> [float(y) for y in exe(2.0)]
[2.0]
"""
from __future__ import annotations

import gc
import importlib
import itertools
import sys
import threading
import time
import weakref

import numpy as np

from backends import default_backend, get_backend
from jaxpr_ir import ClosedJaxpr, Eqn, Jaxpr, Literal
from jaxpr_ir.passes import simplify
from . import config

__all__ = ["compile_closed", "CompileHook", "Compilation", "JitCause", "add_hook",
           "remove_hook", "observed", "LRUCache", "clear_compiled", "clear_backend_caches",
           "format_timings", "backend_donates", "cache_entries", "peak_temp_bytes",
           "temp_bytes"]


# ------------------------------------------------------------------ bounded caches

_CACHES = weakref.WeakSet()   # every LRUCache, so that clear_compiled reaches them all


class LRUCache:
    """A mapping that forgets its least recently used entry beyond ``size`` entries
    (``None``: the option ``compile_cache_size``, read at each insertion).

    >>> c = LRUCache(2); c.put("a", 1); c.put("b", 2); c.get("a"); c.put("c", 3)
    1
    >>> c.get("b") is None, len(c)
    (True, 2)
    """

    def __init__(self, size: int | None = None):
        # key -> [value, tick of its last use]: a hit costs one lookup (jit's keys hash
        # their argument structure in Python, so a second lookup to reorder would show)
        self._entries = {}
        self._tick = itertools.count()
        self._size = size
        self._lock = threading.Lock()   # insertions and evictions from several threads
        _CACHES.add(self)

    def get(self, key):
        """The value stored under ``key`` (now the most recently used), or None."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        entry[1] = next(self._tick)
        return entry[0]

    def put(self, key, value) -> None:
        """Store ``value``; drops the least recently used entries beyond the size."""
        size = self._size if self._size is not None else config.read("compile_cache_size")
        with self._lock:
            self._entries[key] = [value, next(self._tick)]
            while len(self._entries) > max(size, 1):   # on a compile only: a scan is cheap
                oldest = min(self._entries.items(), key=lambda kv: kv[1][1])[0]
                del self._entries[oldest]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


def clear_compiled() -> None:
    """Forget every cached executable (jit's and the nested-call primitive's).

    >>> clear_compiled()
    """
    for cache in list(_CACHES):
        cache.clear()


def cache_entries() -> list:
    """The number of entries of every live ``LRUCache`` (jit's, the nested calls').

    >>> all(n >= 0 for n in cache_entries())
    True
    """
    return [len(cache) for cache in list(_CACHES)]


_USED_BACKENDS: dict = {}   # module name -> backend module, every backend compiled for


def clear_backend_caches() -> None:
    """Call ``clear_caches()`` of every backend compiled for so far that has one (the
    CPU backend's compiled plans, object code and idle workspaces).

    >>> clear_backend_caches()
    """
    for be in list(_USED_BACKENDS.values()):
        clear = getattr(be, "clear_caches", None)
        if clear is not None:
            clear()


def _size_backend_caches(be) -> None:
    """Bound ``be``'s in-memory caches by the option ``backend_cache_size``, where the
    backend has them (``set_cache_size``: the CPU backend's plans and object code);
    backends cannot read functrans's options, so they are told."""
    setter = getattr(be, "set_cache_size", None)
    if setter is not None:
        setter(config.read("backend_cache_size"))


@config.on_update
def _backend_cache_size_changed(name, old, new):
    if name == "backend_cache_size":
        for be in list(_USED_BACKENDS.values()):
            _size_backend_caches(be)


# ------------------------------------------------------------------ hooks

class JitCause:
    """Why ``jit`` compiles: the cache key that missed, the previous compile's key, and
    the call (so a compile log can name the argument that changed)."""
    __slots__ = ("fun", "args", "dyn_args", "dyn_kwargs", "static_argnums", "key", "prev_key")

    def __init__(self, fun, args, dyn_args, dyn_kwargs, static_argnums, key, prev_key):
        self.fun, self.args = fun, args
        self.dyn_args, self.dyn_kwargs = dyn_args, dyn_kwargs
        self.static_argnums = static_argnums
        self.key, self.prev_key = key, prev_key


class Compilation:
    """One run of ``compile_closed`` as the hooks see it. ``cause`` is a ``JitCause`` for
    a jit call, None for a body compiled for a nested call; ``notes`` is where a hook
    keeps what it needs between its calls; ``seconds`` is the backend's compile time."""
    __slots__ = ("name", "backend", "traced", "cause", "optimized", "seconds", "notes",
                 "timings")

    def __init__(self, name, backend, traced, cause):
        self.name, self.backend, self.traced, self.cause = name, backend, traced, cause
        self.optimized, self.seconds, self.notes = None, 0.0, {}
        self.timings = {}   # stage -> seconds: trace, simplify: <pass>, backend: <stage>


def format_timings(timings: dict, sep: str = ", ") -> str:
    """``timings`` (stage -> seconds) as text, in milliseconds, in the order recorded.

    >>> format_timings({"trace": 0.0012, "backend: total": 0.25})
    'trace 1.2 ms, backend: total 250.0 ms'
    """
    return sep.join(f"{k} {v * 1e3:.1f} ms" for k, v in timings.items())


class CompileHook:
    """An observer of the compile path; subclasses override what they need.

    ``start`` runs first, ``stage(c, pass_name, jaxpr)`` after each pass of
    ``jaxpr_ir.passes.PIPELINE``, ``compiled(c, exe)`` last and returns the executable
    to use (possibly wrapped). ``keeps_inputs``: the hook re-reads the arguments after a
    call, so input buffers must not be donated. ``sees_calls``: while it is active, calls
    take the slow path (no native shortcut), as a hook that wraps the executable needs.
    """
    keeps_inputs = False
    sees_calls = True

    def active(self) -> bool:
        return True

    def start(self, c: Compilation) -> None:
        pass

    def stage(self, c: Compilation, pass_name: str, jaxpr) -> None:
        pass

    def compiled(self, c: Compilation, exe):
        return exe


_HOOKS: list = []


def add_hook(hook: CompileHook) -> CompileHook:
    """Register ``hook`` (hooks run in registration order); returns it."""
    _HOOKS.append(hook)
    return hook


def remove_hook(hook: CompileHook) -> None:
    _HOOKS.remove(hook)


def observed() -> bool:
    """Whether a hook that sees calls is active (then calls go through the slow path)."""
    return any(h.sees_calls and h.active() for h in _HOOKS)


# ------------------------------------------------------------------ the compile path

def backend_donates(backend: str | None) -> bool:
    """Whether ``backend`` (None: the default) lets outputs take over donated inputs.

    >>> backend_donates("interpret")
    False
    """
    return bool(getattr(get_backend(backend), "supports_donation", False))


_PROGRESS_LINES: dict = {}   # backend module name -> its ProgressLine class, or None


def _progress_line(be, name):
    """The backend's progress printer for this compile, or None: off by option, when
    stderr is no terminal and no compile log is asked for, or for a backend without
    one (the CPU backend has ``progress.ProgressLine``)."""
    if not config.read("show_progress"):
        return None
    isatty = getattr(sys.stderr, "isatty", None)
    if not (config.read("log_compiles") or (isatty is not None and isatty())):
        return None
    cls = _PROGRESS_LINES.get(be.__name__, False)
    if cls is False:
        try:   # a backend's optional submodule, imported by name like get_backend does
            cls = importlib.import_module(be.__name__ + ".progress").ProgressLine
        except (ImportError, AttributeError):
            cls = None
        _PROGRESS_LINES[be.__name__] = cls
    return None if cls is None else cls(name, after=config.read("progress_after_seconds"))


def _backend_compile(be, closed, donate, name):
    kwargs = {}
    if donate and getattr(be, "supports_donation", False):
        kwargs["donate"] = donate
    progress = _progress_line(be, name)
    if progress is None:
        return be.compile(closed, **kwargs)
    try:
        return be.compile(closed, progress=progress, **kwargs)
    finally:   # a failed compile too: no line may appear after it (the line's timer)
        progress("done", 0, 0, 0)


def _snapshot_consts(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``closed`` with a private copy of each writable array it closes over, so that a
    compiled function sees them as they were when traced (as in JAX): the caller's later
    writes into a captured numpy array (or an Array viewing one) change neither later
    results nor earlier ones, and never mix old and new values in one result (a folded
    ``c + 0.0`` and a live ``c`` did)."""
    consts = closed.consts
    if not any(isinstance(c, np.ndarray) and c.flags.writeable for c in consts):
        return closed
    return ClosedJaxpr(closed.jaxpr, [np.array(c, copy=True, subok=False)
                                      if isinstance(c, np.ndarray) and c.flags.writeable
                                      else c for c in consts])


_GC_LOCK = threading.Lock()
_GC_PAUSES = [0, False]     # compiles running, whether the collector was on before them


class _GCPaused:
    """Python's cyclic garbage collector off while compiles run (back on, if it was, when
    the last ends): a compile allocates many objects that live until it ends, so each
    full collection rescans them all (11% of the sin chain's 1,000-step compile)."""

    def __enter__(self):
        with _GC_LOCK:
            if _GC_PAUSES[0] == 0:
                _GC_PAUSES[1] = gc.isenabled()
                gc.disable()
            _GC_PAUSES[0] += 1

    def __exit__(self, *exc):
        with _GC_LOCK:
            _GC_PAUSES[0] -= 1
            if _GC_PAUSES[0] == 0 and _GC_PAUSES[1]:
                gc.enable()


def compile_closed(closed: ClosedJaxpr, backend: str | None = None, *, name: str = "fun",
                   donate: tuple = (), cause: JitCause | None = None,
                   trace_seconds: float | None = None):
    """Simplify ``closed`` (``jaxpr_ir.passes.simplify``) and compile it for ``backend``
    (None: the default backend); the active hooks observe each stage. ``donate``: flat
    argument positions whose buffers the executable may reuse, where the backend can.
    ``trace_seconds``: how long the caller took to trace ``closed`` (for the timings).
    The cyclic garbage collector pauses meanwhile.
    """
    with _GCPaused():
        return _compile_closed(closed, backend, name, donate, cause, trace_seconds)


def _inline_rules(closed, backend):
    """Each top-level equation whose primitive has a ``compile_inline(eqn, backend)`` rule
    that returns a replacement: (equations, new const vars, their values, {output var:
    atom} for outputs no equation defines). A shard_map runs its body inside the compiled
    program this way (``primitives.collectives_native.inline_shard_map``)."""
    j = closed.jaxpr
    rules = [getattr(e.primitive, "compile_inline", None) for e in j.eqns]
    if not any(rules):
        return closed
    env, eqns = {}, []
    cvars, consts = list(j.constvars), list(closed.consts)

    def sub(a):
        return a if isinstance(a, Literal) else env.get(a, a)
    for e, rule in zip(j.eqns, rules):
        if env:
            e = Eqn(e.primitive, [sub(a) for a in e.inputs], e.outvars, e.params, e.source)
        got = rule(e, backend) if rule is not None else None
        if got is None:
            eqns.append(e)
            continue
        new, new_vars, values, outs = got
        eqns += new
        cvars += new_vars
        consts += values
        env.update(outs)
    return ClosedJaxpr(Jaxpr(cvars, j.invars, eqns, [sub(v) for v in j.outvars]), consts)


def _refuse(jaxpr) -> None:
    """Raise ``ValueError`` with the message of an equation, at any depth, whose primitive
    has a ``compile_error(eqn) -> str | None`` rule that gives one (checkify's ``check``
    staged without ``checkify``: JAX's error)."""
    for e in jaxpr.eqns:
        rule = getattr(e.primitive, "compile_error", None)
        msg = rule(e) if rule is not None else None
        if msg:
            raise ValueError(msg)
        for k in e.primitive.subjaxpr_params:
            sub = e.params.get(k)
            for c in (sub if isinstance(sub, (tuple, list)) else (sub,)):
                if c is not None:
                    _refuse(getattr(c, "jaxpr", c))


def _compile_closed(closed, backend, name, donate, cause, trace_seconds):
    _refuse(closed.jaxpr)
    closed = _inline_rules(_snapshot_consts(closed), backend or default_backend())
    be = get_backend(backend)
    if be.__name__ not in _USED_BACKENDS:
        _USED_BACKENDS[be.__name__] = be
        _size_backend_caches(be)
    hooks = [h for h in _HOOKS if h.active()]
    if not hooks:
        return _backend_compile(be, simplify(closed), donate, name)
    c = Compilation(name, backend or default_backend(), closed, cause)
    if trace_seconds is not None:
        c.timings["trace"] = trace_seconds
    for h in hooks:
        h.start(c)
    t_pass = [time.perf_counter()]

    def observe(pass_name, jaxpr):
        c.timings[f"simplify: {pass_name}"] = time.perf_counter() - t_pass[0]
        for h in hooks:
            h.stage(c, pass_name, jaxpr)
        t_pass[0] = time.perf_counter()    # the hooks' own time (dumps) is not the pass's

    c.optimized = simplify(closed, observe)
    if any(h.keeps_inputs for h in hooks):
        donate = ()
    t0 = time.perf_counter()
    exe = _backend_compile(be, c.optimized, donate, name)
    c.seconds = time.perf_counter() - t0
    stages = getattr(exe, "compile_timings", None) or {"total": c.seconds}
    c.timings.update((f"backend: {k}", v) for k, v in stages.items())
    for h in hooks:
        exe = h.compiled(c, exe)
    return exe


# ------------------------------------------------------------------ cost reporting

def _nbytes(v) -> int:
    a = v.aval
    n = 1
    for d in a.shape:
        n *= int(d)
    return n * a.dtype.itemsize


def peak_temp_bytes(closed) -> int:
    """The peak of live temporaries when ``closed``'s equations run in order, each value
    freed after its last use: the bytes of intermediates (neither inputs, consts nor
    outputs) live at once, outputs of each equation counted while its inputs still live.
    A sub-jaxpr's own temporaries are not added (its outputs are).

    >>> import functrans as ft, functrans.numpy as fnp, numpy as np
    >>> closed = ft.make_jaxpr(lambda a: fnp.sin(fnp.cos(fnp.sin(a))))(np.ones(4))
    >>> peak_temp_bytes(closed)    # sin's output and cos's output live at once
    64
    """
    j = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
    outs = {v for v in j.outvars if not isinstance(v, Literal)}
    temps = {v for e in j.eqns for v in e.outvars if v not in outs}
    last = {}     # temp -> index of the equation reading it last
    for i, e in enumerate(j.eqns):
        for x in e.inputs:
            if x in temps:
                last[x] = i
    live = peak = 0
    for i, e in enumerate(j.eqns):
        live += sum(_nbytes(v) for v in e.outvars if v in temps)
        peak = max(peak, live)
        dead = {x for x in e.inputs if x in temps and last[x] == i}
        dead.update(v for v in e.outvars if v in temps and v not in last)
        live -= sum(_nbytes(x) for x in dead)
    return peak


def temp_bytes(exe, closed) -> int:
    """The compiled executable's peak temporaries: what its backend's buffer plan
    allocates (``cost_analysis()["temp bytes"]``, the llvm backend's workspace) where it
    reports that, else ``peak_temp_bytes`` of the optimised jaxpr."""
    ca = getattr(exe, "cost_analysis", None)
    if ca is not None:
        cost = ca()
        for key in ("temp bytes", "workspace bytes"):
            if cost.get(key) is not None:
                return int(cost[key])
    return peak_temp_bytes(closed)
