"""The CPU backend: fused native code through llvmlite.

``compile(closed_jaxpr)`` type-checks the jaxpr, plans it (``backends.fusion``: fused
kernels, views, native steps, host steps), lowers the whole of it into ONE native
function per segment (``program``, with its plug-ins: fused kernels in ``kernels`` and
``row_kernels``, the op table ``ops``, per-equation emitters in ``equations``, ``blas``,
``scans`` (cumulative ops, argmax/argmin) and ``control``; a new segment only after a
host step), optimises and
JITs the module (``engine``, through the object-code ``cache``; a large module's kernels
in one module per core, compiled concurrently: ``split``), and returns an
``Executable`` running it (``runtime``). The compiled plan is cached in memory by the
jaxpr's structure (``jaxpr_ir.structure.structural_key``: equal exactly when the printed
texts are, built without printing; it carries every input type) and the donation set, so compiling the
same jaxpr again does no planning or code generation; only the constants are bound
anew. That cache keeps the ``PLAN_CACHE_SIZE`` most recently used plans (a plan holds
its JIT-compiled machine code, so an unbounded cache would grow with every new shape);
``set_cache_size(n)`` bounds it and the object-code cache (functrans calls it with its
option ``backend_cache_size``), ``cache_entries()`` counts what both hold.

What a compile cost is on the executable: ``compile_timings`` (seconds per stage, also
in ``cost_analysis()``); ``compile(..., progress=...)`` reports kernels built and LLVM
stages as they start (``progress.ProgressLine`` prints them for slow compiles). What a
call costs in memory: ``temp_bytes``, the workspace, lent per call by one process pool
(``runtime.POOL``) rather than held per executable; ``clear_caches()`` drops compiled
code and idle workspaces.

>>> from jaxpr_ir import ClosedJaxpr, Jaxpr, Var, ShapedArray
>>> a = Var(ShapedArray((), "float64"))
>>> [float(v) for v in compile(ClosedJaxpr(Jaxpr([], [a], [], [a])))(2.0)]
[2.0]
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict

from jaxpr_ir import ClosedJaxpr, check
from jaxpr_ir.cost import plan_cost
from jaxpr_ir.structure import structural_key
from .. import fusion
from . import cache, engine, runtime
from . import host_calls, lapack_decomp, permutation, pocketfft, sort  # noqa: F401  (they register)
from . import lapack_spectral  # noqa: F401  (registers eigh and pinv)
from .fold import fold_identical
from .program import Lowering
from .runtime import Program, builtin
from .split import looped_callees, split_module

__all__ = ["compile", "Executable", "stats", "clear_plans", "clear_caches", "PLAN_CACHE_SIZE",
           "set_cache_size", "cache_entries"]

PLAN_CACHE_SIZE = 512     # compiled plans kept (LRU); ``set_cache_size`` changes it
_PLANS: OrderedDict = OrderedDict()
_LOCK = threading.Lock()
stats = {"plans built": 0, "plan hits": 0}
_BLAS_HOST_STEPS = frozenset({"conv_general_dilated"})   # host steps that run BLAS products

class CompiledPlan:
    """Everything about a compiled jaxpr but its constants' values."""

    def __init__(self, closed, lw, segments, ir_text, loaded, opt_text):
        jaxpr = closed.jaxpr
        self.plan = lw.plan
        self.in_avals = [v.aval for v in jaxpr.invars]
        self.out_avals = [x.aval for x in jaxpr.outvars]
        self.const_avals = [v.aval for v in jaxpr.constvars]
        self.ws_size = lw.arena.top
        self.ws_slot = lw.ws_slot
        self.nslots = lw.nslots
        self.segments = segments
        self.ir_text, self.opt_text, self.loaded = ir_text, opt_text, loaded
        # BLAS products, LAPACK calls, parallel kernels or host steps whose numpy impl
        # runs BLAS products (convolutions): thread counts are balanced per call
        self.threaded = (any(k in ir_text for k in ("ft_cblas_", "ft_lapack_", "ft_parallel_for"))
                         or any(kind == "host" and item[0].primitive.name in _BLAS_HOST_STEPS
                                for kind, item in segments))
        self.n_kernels = lw.kernels
        self.folded = lw.folded       # functions compiled once for several call sites
        self.aliases = dict(lw.aliases)
        self.functions = {}
        self._keep = []
        for kind, item in segments:
            if kind == "native" and item not in self.functions:
                f, md = builtin(loaded.address(item), item)
                self.functions[item] = f
                self._keep.append(md)


class Executable:
    """A compiled jaxpr: ``run(*flat_args) -> list of numpy arrays``, plus introspection."""

    def __init__(self, closed, compiled, program):
        self.compile_timings = {}   # seconds per compile stage, set by compile()
        self.jaxpr = closed
        self.compiled = compiled
        self.plan = compiled.plan
        self._program = program
        self.fast_runner = program.fast_runner
        self.temp_bytes = compiled.ws_size    # peak temporaries of a call (the workspace)

    def __call__(self, *args):
        return self._program(*args)

    def as_text(self) -> str:
        """The module's LLVM IR before and after optimisation."""
        c = self.compiled
        if c.opt_text is None:   # loaded from the disk cache: optimise again to show it
            mod = engine.parse_and_verify(c.ir_text)
            c.opt_text = str(engine.optimize(mod))
        return ("; ---- LLVM IR before optimisation\n" + c.ir_text +
                "\n; ---- LLVM IR after optimisation (O3, vectorised)\n" + c.opt_text)

    def cost_analysis(self) -> dict:
        """flops, transcendentals and bytes accessed of the plan (the one cost model,
        ``jaxpr_ir.cost.plan_cost``: 2·M·N·K per product, each kernel reading its inputs
        (views at their base) and writing its outputs once), step counts (``host steps``:
        top-level equations run by numpy between segments; ``host callbacks``: call
        sites inside compiled loops and branches, ``host_calls``; ``functions folded``:
        kernels and steps emitted more than once but compiled once, ``fold``), workspace."""
        native = host = 0
        for s in self.plan.steps:
            if isinstance(s, fusion.HostStep):
                host += 1
            else:
                native += 1
        segs = sum(1 for k, _ in self.compiled.segments if k == "native")
        return {**plan_cost(self.plan),
                "kernels": native + host, "native kernels": native, "host steps": host,
                "host callbacks": host_calls.count(self.plan),
                "native segments": segs, "functions folded": self.compiled.folded,
                "workspace bytes": self.compiled.ws_size,
                "temp bytes": self.temp_bytes,
                **{f"compile seconds: {k}": v for k, v in self.compile_timings.items()}}


def _build(closed, donate, timings, progress):
    with engine.timed(timings, "check"):
        check(closed)
    lw = Lowering(closed, donate, timings, progress)
    with engine.timed(timings, "IR build"):
        segments = lw.build()
        lw.folded = fold_identical(lw.module, looped_callees(lw.module))
        ir_text, parts = split_module(lw.module, engine.workers())
    stage = None
    if progress is not None:
        def stage(name):
            progress(name, lw.kernels, max(lw.kernels, lw.n_kernels), lw.n_eqns)
    loaded, opt_text = cache.load(parts if len(parts) > 1 else ir_text, timings, stage)
    with engine.timed(timings, "bind functions"):
        return CompiledPlan(closed, lw, segments, ir_text, loaded, opt_text)


supports_donation = True


def compile(closed, donate=(), progress=None):
    """Compile a ClosedJaxpr for this CPU; see the module docstring. ``donate``: flat
    input positions whose buffers outputs may take over (``jit(donate_argnums=...)``).

    The executable's ``compile_timings`` says where this call's time went (seconds per
    stage: plan cache lookup, fusion plan, IR build, each LLVM stage, load; ``total``).
    ``progress(stage, kernels done, kernels in all, equations)`` is called as kernels
    are emitted and as each LLVM stage starts, then once with stage ``"done"``
    (``progress.ProgressLine`` prints it for slow compiles)."""
    t0 = time.perf_counter()
    timings = {}
    with engine.timed(timings, "plan cache lookup"):
        key = (structural_key(closed.jaxpr), tuple(donate))
        with _LOCK:
            compiled = _PLANS.get(key)
            if compiled is not None:
                _PLANS.move_to_end(key)
    if compiled is None:
        with engine.LOCK:
            compiled = _build(closed, donate, timings, progress)
        with _LOCK:
            _PLANS[key] = compiled
            _trim_plans()
        stats["plans built"] += 1
    else:
        stats["plan hits"] += 1
    exe = Executable(closed, compiled, Program(compiled, closed.consts))
    timings["total"] = time.perf_counter() - t0
    exe.compile_timings = timings
    if progress is not None:
        progress("done", compiled.n_kernels, compiled.n_kernels, len(closed.jaxpr.eqns))
    return exe


def clear_caches():
    """Forget compiled code held in memory (plans, object code) and the idle workspaces.

    >>> clear_caches(); runtime.POOL.held_bytes()
    0
    """
    cache.clear_memory()          # also clears the plan cache (cache.ON_CLEAR)
    runtime.POOL.clear()


def clear_plans():
    """Forget the in-memory plan cache (tests use it to exercise the object caches)."""
    with _LOCK:
        _PLANS.clear()


def _trim_plans():
    while len(_PLANS) > PLAN_CACHE_SIZE:     # call with _LOCK held
        _PLANS.popitem(last=False)


def set_cache_size(n: int) -> None:
    """Keep at most ``n`` compiled plans and ``n`` loaded object modules in memory (the
    least recently used beyond are dropped, now and later); the default is 512 each."""
    global PLAN_CACHE_SIZE
    if int(n) < 1:
        raise ValueError(f"the plan cache keeps at least one plan, got {n!r}")
    cache.set_size(n)
    with _LOCK:
        PLAN_CACHE_SIZE = int(n)
        _trim_plans()


def cache_entries() -> dict:
    """How many entries the in-memory caches hold.

    >>> sorted(cache_entries())
    ['objects', 'plans']
    """
    return {"plans": len(_PLANS), "objects": cache.entries()}


cache.ON_CLEAR.append(clear_plans)
