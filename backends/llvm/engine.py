"""LLVM itself: the host target machine, the O3 pipeline of the new pass manager
(loop and SLP vectorisation on), verification, object code and the JIT.

Compilation goes IR text -> verified module -> optimised module -> object code
(bytes); loading puts object code into an MCJIT engine and returns function
addresses. Splitting at object code is what makes the on-disk cache possible. The
parts of a split module (``split``) compile concurrently (``compile_objects``: one
LLVM context and target machine per thread) and load into one engine.

>>> host_key().startswith(triple())
True
"""
from __future__ import annotations

import functools
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import ctypes

import llvmlite
import llvmlite.binding as llvm
from llvmlite.binding import ffi

from . import threads

LOCK = threading.RLock()   # LLVM's context is not safe to drive from several threads

# LoopUnroll's options. O3 fully unrolls any loop whose unrolled cost is under 300, before
# the vectorisers run: small loop nests the loop vectoriser would have handled whole
# became long scalar runs (a 40-line ``x - mean`` kernel of a ResNet step became 1,024
# vector stores once SLP got to it; the RK45 solve's 8-element kernels ran as scalar
# code). Full unrolling is kept for loops of at most 4 steps and a cost under 100; the
# loop vectoriser takes the rest, and loops that must be unrolled ask for it
# (``kernels._unroll_full_md``). Measured against O3's defaults (one thread, CPU time,
# alternated processes): ResNet training step compile 36 s -> 13 s, 100-step LSTM
# 7.5 s -> 2.5 s, the RK45 solve runs in 0.15 ms instead of 0.31 ms, and every other
# cliff2 program and benchmark workload within run-to-run noise. Process-wide options:
# numba's compiles in this process see them too.
LLVM_OPTIONS = ("-unroll-threshold=100", "-unroll-full-max-count=4")


@functools.lru_cache(maxsize=None)
def _initialized():
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_native_asmparser()
    for option in LLVM_OPTIONS:
        llvm.set_option("functrans", option)
    return True


@functools.lru_cache(maxsize=None)
def target_machine():
    """The target machine for this host's CPU name and features, at opt level 3."""
    return new_target_machine()


# CPUs whose 512-bit vector units run at full clock. LLVM's tuning for AVX-512 CPUs prefers
# 256-bit vectors (older Xeons lower their clock for 512-bit work), and names virtual
# Sapphire Rapids hosts "rocketlake". Compute-bound loops (those calling a vmath routine:
# ``prefer_wide_vectors``) are faster with 16 float32 lanes there; memory-bound ones are
# not, so the preference is per function, not the target's. Measured on a Sapphire Rapids
# host (16K-element kernels, one thread, CPU time, two alternated runs): float32 sin / exp
# / log / tanh / softmax 0.77-0.82 of the 256-bit time, float64 0.65-0.75, erf 0.72-0.91;
# but a plain multiply or polynomial over 4K-1M elements 1.05-1.28 with 512-bit vectors.
_FULL_WIDTH_FEATURES = ("avx512fp16",)           # Sapphire Rapids and later Xeons
_FULL_WIDTH_NAMES = ("znver4", "znver5")          # AMD: 512-bit work at full clock
WIDE_ATTRIBUTE = '"prefer-vector-width"="512"'


def wide_vectors(cpu: str, features) -> bool:
    """Whether compute-bound loops should use 512-bit vectors on this CPU (``features``:
    name -> bool).

    >>> wide_vectors("skylake-avx512", {"avx512f": True}), wide_vectors("znver4", {"avx512f": True})
    (False, True)
    """
    if not features.get("avx512f"):
        return False
    return cpu in _FULL_WIDTH_NAMES or any(features.get(f) for f in _FULL_WIDTH_FEATURES)


@functools.lru_cache(maxsize=None)
def _host_cpu() -> tuple:
    """(CPU name, feature string, wide vectors?): asking LLVM costs ~0.2 ms, and every
    compile makes a target machine for its engine."""
    _initialized()
    cpu, features = llvm.get_host_cpu_name(), llvm.get_host_cpu_features()
    return cpu, features.flatten(), wide_vectors(cpu, features)


def prefer_wide_vectors(fn) -> None:
    """Ask for 512-bit loops in llvmlite function ``fn`` where this host runs them at full
    clock (the attribute is in the IR text, so the disk cache's key sees it)."""
    if _host_cpu()[2]:
        set.add(fn.attributes, WIDE_ATTRIBUTE)    # a string attribute llvmlite does not list


def inherit_wide_vectors(caller, callee) -> None:
    """A kernel inlined into ``caller`` (a segment, a chunk) brings its preference along:
    the loop vectoriser runs after inlining, on the caller's attributes."""
    if WIDE_ATTRIBUTE in callee.attributes and "noinline" not in callee.attributes:
        set.add(caller.attributes, WIDE_ATTRIBUTE)


# CPUs whose LLVM tuning prefers 256-bit vectors though they have AVX-512 (Intel's, from
# Skylake-SP on): a loop there without WIDE_ATTRIBUTE vectorises for 256-bit registers
_PREFER_256_NAMES = ("skylake-avx512", "cascadelake", "cooperlake", "cannonlake",
                     "icelake-client", "icelake-server", "rocketlake", "tigerlake",
                     "sapphirerapids", "emeraldrapids", "graniterapids")


@functools.lru_cache(maxsize=None)
def vector_bits(wide: bool):
    """The vector register width (bits) the loop vectoriser plans for in a function with
    (``wide``) or without ``WIDE_ATTRIBUTE`` on this host, or None where that is not
    certain (an AVX-512 CPU whose tuning this table does not know, or no AVX)."""
    cpu, features, _ = _host_cpu()
    has = set(f[1:] for f in features.split(",") if f.startswith("+"))
    if "avx512f" in has:
        return 512 if wide else (256 if cpu in _PREFER_256_NAMES else None)
    return 256 if "avx" in has and not wide else None


def new_target_machine():
    """A fresh host target machine (an MCJIT engine takes ownership of its own)."""
    cpu, features, _ = _host_cpu()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=cpu, features=features, opt=3,
                                        codemodel="jitdefault")


@functools.lru_cache(maxsize=None)
def triple() -> str:
    _initialized()
    return llvm.get_process_triple()


@functools.lru_cache(maxsize=None)
def data_layout() -> str:
    return str(target_machine().target_data)


@functools.lru_cache(maxsize=None)
def host_key() -> str:
    """What compiled object code depends on besides the IR: triple, CPU, features,
    llvmlite and the pass options (``LLVM_OPTIONS``)."""
    cpu, features, _ = _host_cpu()
    return f"{triple()}|{cpu}|{features}|llvmlite-{llvmlite.__version__}|{' '.join(LLVM_OPTIONS)}"


def parse_and_verify(ir_text: str):
    """Parse textual IR and run LLVM's verifier; raises RuntimeError naming the problem."""
    _initialized()
    with LOCK:
        mod = llvm.parse_assembly(ir_text)
        mod.verify()
        return mod


def optimize(mod, tm=None):
    """Run the O3 pipeline with loop and SLP vectorisation over ``mod`` in place (with
    ``tm``, a thread's own target machine, outside the lock: ``compile_objects``)."""
    def run():
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pto.loop_vectorization = True
        pto.slp_vectorization = True
        pto.loop_unrolling = True
        pto.loop_interleaving = True
        pb = llvm.create_pass_builder(tm or target_machine(), pto)
        pb.getModulePassManager().run(mod, pb)
        return mod
    if tm is not None:
        return run()
    with LOCK:
        return run()


@contextmanager
def timed(timings, stage: str):
    """Add the seconds the ``with`` body takes to ``timings[stage]`` (None: time nothing).

    >>> t = {}
    >>> with timed(t, "x"):
    ...     pass
    >>> list(t)
    ['x']
    """
    if timings is None:
        yield
        return
    t0 = time.perf_counter()
    try:
        yield
    finally:
        timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - t0


def compile_object(ir_text: str, timings=None, stage=None) -> bytes:
    """Object code for a module in textual IR; the seconds of each LLVM stage are added
    to ``timings`` (a dict) when given, and ``stage(name)`` is called as each long stage
    starts. The optimised IR is not printed (~0.4 ms on a small module): whoever wants
    it optimises again (``Executable.as_text``)."""
    with timed(timings, "llvm parse+verify"):
        mod = parse_and_verify(ir_text)
    if stage is not None:
        stage("llvm optimise")
    with timed(timings, "llvm optimise"):
        optimize(mod)
    with LOCK:           # no second verification: O3 keeps a verified module valid
        if stage is not None:
            stage("llvm emit object")
        with timed(timings, "llvm emit object"):
            return target_machine().emit_object(mod)


def workers() -> int:
    """How many threads compile the parts of one module: the cores this process may use,
    at most the user's thread limit (``FUNCTRANS_NUM_THREADS``, ``OMP_NUM_THREADS``...)."""
    limit = threads.user_limit()
    return max(1, min(threads.usable_cores(), limit or threads.usable_cores()))


_THREAD = threading.local()
_POOL: list = []      # the threads compiling parts 1.. of a module (each keeps its _THREAD.tm)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_POOL.clear)


def _part_pool() -> ThreadPoolExecutor:
    """Threads kept for compiling module parts: a thread and its target machine made per
    compile cost ~0.3 ms (0.1 + 0.21 ms) of a 10-step sin chain's ~14. A forked child
    starts a pool of its own (the parent's threads do not exist there)."""
    with LOCK:
        if not _POOL:
            _POOL.append(ThreadPoolExecutor(max(1, threads.usable_cores() - 1),
                                            thread_name_prefix="functrans-llvm"))
        return _POOL[0]


def _unlocked(name):
    """llvmlite's C function ``name`` without the one lock llvmlite puts around every
    call (``ffi._lib_fn_wrapper``), which would run the threads' LLVM work one at a
    time; only for objects one thread owns (its context, module, pass and target
    machines), which LLVM allows to be used concurrently. The locked call where
    llvmlite keeps no such wrapper."""
    fn = getattr(ffi.lib, name)
    return getattr(fn, "_cfn", fn)


def _optimize_unlocked(mod, tm):
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = pto.slp_vectorization = True
    pto.loop_unrolling = pto.loop_interleaving = True
    pb = llvm.create_pass_builder(tm, pto)
    mpm = pb.getModulePassManager()
    _unlocked("LLVMPY_RunNewModulePassManager")(mpm, mod, pb)


def _emit_unlocked(mod, tm) -> bytes:
    with ffi.OutputString() as err:
        mb = _unlocked("LLVMPY_TargetMachineEmitToMemory")(tm, mod, 1, err)
        if not mb:
            raise RuntimeError(str(err))
    try:
        return ctypes.string_at(ffi.lib.LLVMPY_GetBufferStart(mb), ffi.lib.LLVMPY_GetBufferSize(mb))
    finally:
        ffi.lib.LLVMPY_DisposeMemoryBuffer(mb)


def _compile_part(text, times, started):
    """Object code of one part, in the calling thread's own LLVM context and target
    machine (LLVM allows one thread per context); seconds per stage into ``times``."""
    tm = getattr(_THREAD, "tm", None)
    if tm is None:
        tm = _THREAD.tm = new_target_machine()
    ctx = llvm.create_context()
    t0 = time.perf_counter()
    mod = llvm.parse_assembly(text, context=ctx)
    mod.verify()
    t1 = time.perf_counter()
    _optimize_unlocked(mod, tm)
    t2 = time.perf_counter()
    started()
    obj = _emit_unlocked(mod, tm)
    t3 = time.perf_counter()
    mod.close()
    times.update({"llvm parse+verify": t1 - t0, "llvm optimise": t2 - t1,
                  "llvm emit object": t3 - t2})
    return obj


def compile_objects(texts: list, timings=None, stage=None) -> list:
    """Object code of each module text, compiled concurrently (part 0 on this thread).

    ``timings`` gets the wall time of the whole, shared among the stages in proportion
    to the threads' own times per stage (so the stages still sum to the wall time)."""
    if len(texts) == 1:
        return [compile_object(texts[0], timings, stage)]
    if stage is not None:
        stage("llvm optimise")
    once = threading.Lock()
    emitting = []

    def started():
        with once:
            if not emitting:
                emitting.append(True)
                if stage is not None:
                    stage("llvm emit object")
    objs, times, errors = [None] * len(texts), [{} for _ in texts], []

    def work(i):
        try:
            objs[i] = _compile_part(texts[i], times[i], started)
        except Exception as e:       # raised again on the calling thread
            errors.append(e)
    t0 = time.perf_counter()
    helpers = [_part_pool().submit(work, i) for i in range(1, len(texts))]
    work(0)
    for t in helpers:
        t.result()
    if errors:
        raise errors[0]
    wall = time.perf_counter() - t0
    if timings is not None:
        per = {k: sum(t.get(k, 0.0) for t in times) for k in times[0]}
        total = sum(per.values()) or 1.0
        for k, v in per.items():
            timings[k] = timings.get(k, 0.0) + wall * v / total
    return objs


def _empty_module():
    return llvm.parse_assembly(f'target triple = "{triple()}"\n')


@functools.lru_cache(maxsize=None)
def _empty_object() -> bytes:
    """Object code of the empty module an MCJIT engine is created with (it takes one)."""
    with LOCK:
        return target_machine().emit_object(_empty_module())


def _loader_target_machine():
    """A target machine for an engine that generates no code (it only loads object code
    and serves its empty module's from the cache): no CPU name or features, whose
    parsing is most of a host target machine's 0.15 ms (0.02 ms without). The data
    layout, all the engine takes from it, depends on the triple alone."""
    _initialized()
    return llvm.Target.from_default_triple().create_target_machine(
        cpu="", features="", opt=0, codemodel="jitdefault")


class Loaded:
    """Object code living in an MCJIT engine; keeps the engine (and the code) alive.
    ``obj``: one object's bytes or a list of them (the parts of one module, linked).

    The engine's own (empty) module is served from an object cache holding its object
    code: else ``finalize_object`` puts it through a whole code generator pipeline,
    ~60% of loading a small program (0.5 ms of 0.8, of 2.1 in a process with much to
    collect: measured alternately, ``Loaded`` of the 10-step sin chain's grad)."""

    def __init__(self, obj):
        empty_obj = _empty_object()
        with LOCK:
            tm = _loader_target_machine()   # owned (and freed) by the engine
            self._engine = llvm.create_mcjit_compiler(_empty_module(), tm)
            self._engine.set_object_cache(getbuffer_func=lambda _module: empty_obj)
            for o in ([obj] if isinstance(obj, bytes) else obj):
                self._engine.add_object_file(llvm.ObjectFileRef.from_data(o))
            self._engine.finalize_object()

    def address(self, name: str) -> int:
        with LOCK:
            addr = self._engine.get_function_address(name)
        if not addr:
            raise RuntimeError(f"llvm backend: symbol {name!r} missing from the compiled object")
        return addr
