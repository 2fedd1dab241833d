"""LLVM itself: the host target machine, the O3 pipeline of the new pass manager
(loop and SLP vectorisation on), verification, object code and the JIT.

Compilation goes IR text -> verified module -> optimised module -> object code
(bytes); loading puts object code into an MCJIT engine and returns function
addresses. Splitting at object code is what makes the on-disk cache possible.

>>> host_key().startswith(triple())
True
"""
from __future__ import annotations

import functools
import threading
import time
from contextlib import contextmanager

import llvmlite
import llvmlite.binding as llvm

LOCK = threading.RLock()   # LLVM's context is not safe to drive from several threads


@functools.lru_cache(maxsize=None)
def _initialized():
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_native_asmparser()
    return True


@functools.lru_cache(maxsize=None)
def target_machine():
    """The target machine for this host's CPU name and features, at opt level 3."""
    return new_target_machine()


def new_target_machine():
    """A fresh host target machine (an MCJIT engine takes ownership of its own)."""
    _initialized()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                        features=llvm.get_host_cpu_features().flatten(),
                                        opt=3, codemodel="jitdefault")


@functools.lru_cache(maxsize=None)
def triple() -> str:
    _initialized()
    return llvm.get_process_triple()


@functools.lru_cache(maxsize=None)
def data_layout() -> str:
    return str(target_machine().target_data)


@functools.lru_cache(maxsize=None)
def host_key() -> str:
    """What compiled object code depends on besides the IR: triple, CPU, features, llvmlite."""
    _initialized()
    return (f"{triple()}|{llvm.get_host_cpu_name()}|{llvm.get_host_cpu_features().flatten()}"
            f"|llvmlite-{llvmlite.__version__}")


def parse_and_verify(ir_text: str):
    """Parse textual IR and run LLVM's verifier; raises RuntimeError naming the problem."""
    _initialized()
    with LOCK:
        mod = llvm.parse_assembly(ir_text)
        mod.verify()
        return mod


def optimize(mod):
    """Run the O3 pipeline with loop and SLP vectorisation over ``mod`` in place."""
    tm = target_machine()
    with LOCK:
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pto.loop_vectorization = True
        pto.slp_vectorization = True
        pto.loop_unrolling = True
        pto.loop_interleaving = True
        pb = llvm.create_pass_builder(tm, pto)
        mpm = pb.getModulePassManager()
        mpm.run(mod, pb)
        return mod


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


def compile_object(ir_text: str, timings=None, stage=None) -> tuple:
    """(object code bytes, optimised IR text) for a module in textual IR; the seconds of
    each LLVM stage are added to ``timings`` (a dict) when given, and ``stage(name)`` is
    called as each long stage starts."""
    with timed(timings, "llvm parse+verify"):
        mod = parse_and_verify(ir_text)
    if stage is not None:
        stage("llvm optimise")
    with timed(timings, "llvm optimise"):
        optimize(mod)
    with LOCK:
        with timed(timings, "llvm parse+verify"):
            mod.verify()
        if stage is not None:
            stage("llvm emit object")
        with timed(timings, "llvm emit object"):
            obj = target_machine().emit_object(mod)
        return obj, str(mod)


class Loaded:
    """Object code living in an MCJIT engine; keeps the engine (and the code) alive."""

    def __init__(self, obj: bytes):
        with LOCK:
            tm = new_target_machine()   # owned (and freed) by the engine
            empty = llvm.parse_assembly(f'target triple = "{triple()}"\n')
            self._engine = llvm.create_mcjit_compiler(empty, tm)
            self._engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
            self._engine.finalize_object()

    def address(self, name: str) -> int:
        with LOCK:
            addr = self._engine.get_function_address(name)
        if not addr:
            raise RuntimeError(f"llvm backend: symbol {name!r} missing from the compiled object")
        return addr
