"""Host steps inside native control flow: an equation with no native code, met inside a
``cond`` branch or a ``while``/``scan`` body, is called back into Python from the
generated loop, so the loop itself stays native (before, one such equation made the
whole loop a host step, its body interpreted iteration by iteration).

The generated code calls ``ft_host_call(i64 id, ptr *buffers)``: a ctypes callback
(taking the GIL, which the calling thread holds anyway: a segment runs as a builtin
function) that finds ``HostCall`` ``id`` in this module's registry, wraps the
buffers (the inputs, made contiguous, then the outputs) as numpy arrays of their
compile-time shapes and dtypes, runs the primitive's numpy ``impl`` and writes its
results into the output buffers, cast as the top-level host steps cast them.

Errors: an exception raised by the impl (or a result of the wrong shape) is kept and
its address returned; the generated code then sets it as the current exception
(``PyErr_SetObject``) and returns NULL from the segment, so the call raises that very
exception (a note names the host step) with no later iteration run and no output
written afterwards. A registry entry lives as long as the fusion plan of the program
that emitted it (``weakref.finalize``), which the executable holds along with its code.

Counting: ``count(plan)`` gives the call sites inside a program's control flow
(``Executable.cost_analysis()["host callbacks"]``); they are not ``"host steps"``,
which stay the top-level equations that split the program into segments.

>>> callable_eqn(type("E", (), {"primitive": type("P", (), {"impl": None})()})())
False
"""
from __future__ import annotations

import ctypes
import itertools
import weakref

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np

from .lltypes import I8, I64
from .values import PTR

__all__ = ["callable_eqn", "emit", "count"]

_REGISTRY: dict = {}                 # id -> HostCall
_IDS = itertools.count(1)
_ERRORS: list = []                  # the last exceptions handed to generated code
_KEEP_ERRORS = 16
_OB_TYPE = 8                        # PyObject: Py_ssize_t ob_refcnt, PyTypeObject *ob_type
_SITES: dict = {}                   # id(top-level plan) -> its call sites' ids


def _fail(exc):
    """Keep ``exc`` alive for the generated code and return its address."""
    _ERRORS.append(exc)
    del _ERRORS[:-_KEEP_ERRORS]
    return id(exc)


def _array(addr, nbytes, shape, dtype, writeable):
    if nbytes == 0:
        return np.zeros(shape, dtype)
    a = np.frombuffer((ctypes.c_char * nbytes).from_address(addr), dtype).reshape(shape)
    if not writeable:
        a.flags.writeable = False
    return a


class HostCall:
    """One call site: the equation, its literal inputs, its buffers' shapes and dtypes.
    The numpy views of the buffers are kept and reused while their addresses stay the
    same (every iteration of a loop, usually): the pointer table and the views are
    each swapped in as one (key, value) tuple, so concurrent calls never mix."""

    def __init__(self, eqn, lits):
        self.eqn, self.lits = eqn, lits           # lits: {input position: numpy value}
        self.prim, self.params = eqn.primitive, eqn.params
        self.name = eqn.primitive.name
        bufs = [x.aval for i, x in enumerate(eqn.inputs) if i not in lits]
        self.n_in = len(bufs)
        bufs += [v.aval for v in eqn.outvars]
        self.specs = [(int(a.size) * np.dtype(a.dtype).itemsize, tuple(a.shape),
                       np.dtype(a.dtype), k >= self.n_in) for k, a in enumerate(bufs)]
        k = iter(range(self.n_in))
        self.order = [(-1, lits[i]) if i in lits else (next(k), None)
                      for i in range(len(eqn.inputs))]
        self._table = (None, None)
        self._views = (None, None)

    def _buffers(self, ptrs):
        table = self._table
        if table[0] != ptrs:
            n = len(self.specs)
            table = self._table = (ptrs, np.frombuffer(
                (ctypes.c_char * (8 * n)).from_address(ptrs), np.uint64) if n else np.zeros(0))
        key = table[1].tobytes()
        views = self._views
        if views[0] != key:
            views = self._views = (key, [_array(int(a), *spec)
                                         for a, spec in zip(table[1], self.specs)])
        return views[1]

    def _run(self, ptrs):
        bufs = self._buffers(ptrs)
        try:
            # the impl gets copies (the buffers are the loop's memory, reused after the
            # call: an impl keeping its operand, or a traceback holding it, keeps a copy)
            args = [np.array(bufs[j]) if j >= 0 else lit for j, lit in self.order]
            res = self.prim.impl(*args, **self.params)
            if not self.prim.multiple_results:
                res = (res,)
            results = []
            for (_, shape, dt, _), r in zip(self.specs[self.n_in:], res):
                a = np.asarray(r, dtype=dt)
                if a.shape != shape:
                    raise RuntimeError(f"llvm backend: host step '{self.name}' returned shape "
                                       f"{a.shape}, expected {shape}")
                results.append(a)
            for dst, a in zip(bufs[self.n_in:], results):
                np.copyto(dst, a)
        finally:
            del bufs                         # no view of the buffers in a traceback
        return 0

    def __call__(self, ptrs):
        try:
            return self._run(ptrs)
        except BaseException as e:          # noqa: BLE001  (re-raised by the caller)
            try:
                e.add_note(f"(in host step '{self.name}', called back from a compiled loop "
                           "or branch)")
            except Exception:                # noqa: BLE001
                pass
            return _fail(e)


@ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)
def _trampoline(ident, ptrs):
    try:
        call = _REGISTRY.get(ident)
        if call is None:
            return _fail(RuntimeError(f"llvm backend: host call {ident} is gone (its program "
                                      "was freed)"))
        return call(ptrs)
    except BaseException as e:              # noqa: BLE001
        return _fail(e)


llvm.add_symbol("ft_host_call", ctypes.cast(_trampoline, ctypes.c_void_p).value)
llvm.add_symbol("ft_pyerr_setobject",
                ctypes.cast(ctypes.pythonapi.PyErr_SetObject, ctypes.c_void_p).value)


def callable_eqn(eqn) -> bool:
    """Whether ``eqn`` (a host step) can be called back from generated code: it has an impl."""
    return getattr(eqn.primitive, "impl", None) is not None


def count(plan) -> int:
    """The host call sites emitted for ``plan`` (a program's top-level fusion plan)."""
    return len(_SITES.get(id(plan), ()))


def _forget(key):
    for ident in _SITES.pop(key, ()):
        _REGISTRY.pop(ident, None)


def _declare(module, name, ret, args):
    f = module.globals.get(name)
    return f if f is not None else ir.Function(module, ir.FunctionType(ret, args), name)


def emit(lw, fn, eqn, ins, outs):
    """Emit the call of host step ``eqn`` into ``fn`` (a sub-jaxpr's step): ``ins`` are
    its operands (``values.Val``), ``outs`` its output buffers (``values.Ref``)."""
    b = fn.b
    lits, ptrs, temps = {}, [], []
    for i, v in enumerate(ins):
        if v.lit is not None:
            lits[i] = np.full(v.shape, v.lit, v.dtype)
            continue
        ref, t = lw.materialize(fn, v)
        if t is not None:
            temps.append(t)
        ptrs.append(fn.ptr(ref))
    ptrs += [fn.ptr(o) for o in outs]
    call = HostCall(eqn, lits)
    ident = next(_IDS)
    _REGISTRY[ident] = call
    if id(lw.plan) not in _SITES:
        _SITES[id(lw.plan)] = []
        weakref.finalize(lw.plan, _forget, id(lw.plan))
    _SITES[id(lw.plan)].append(ident)
    arr = fn.alloca(8 * max(len(ptrs), 1))
    for k, p in enumerate(ptrs):
        b.store(p, b.gep(arr, [ir.Constant(I64, k)], source_etype=PTR))
    host = _declare(lw.module, "ft_host_call", I64, [I64, PTR])
    err = b.call(host, [ir.Constant(I64, ident), arr])
    bad = fn.fn.append_basic_block("host_call_failed")
    ok = fn.fn.append_basic_block("host_call_done")
    b.cbranch(b.icmp_unsigned("!=", err, ir.Constant(I64, 0)), bad, ok)
    eb = ir.IRBuilder(bad)
    exc = eb.inttoptr(err, PTR)
    typ = eb.load(eb.gep(exc, [ir.Constant(I64, _OB_TYPE)], source_etype=I8), typ=PTR)
    seterr = _declare(lw.module, "ft_pyerr_setobject", ir.VoidType(), [PTR, PTR])
    eb.call(seterr, [typ, exc])
    eb.ret(ir.Constant(PTR, None))
    b.position_at_end(ok)
    for t in temps:
        lw.release(t)
