"""Running a lowered jaxpr: native segments called as CPython builtins, host steps
through numpy in between.

Each segment function (see ``program``) is wrapped as a real builtin function object
(``PyCFunction_NewEx`` over a ``METH_FASTCALL`` method definition), so calling it from
Python costs what calling ``len`` costs: no ctypes argument conversion. Its
arguments are the slot arrays: inputs, outputs, constants, workspace, host results.

``Program.__call__(*args)`` is the general path (converts its arguments, runs every
step, workspace from a small pool so concurrent calls never share one);
``fast_runner`` gives the jit cache-hit path for one-segment programs: allocate the
outputs, one native call.

>>> import numpy as np
>>> _materialise(np.arange(3.0), (2, 3), (0, 1), 0).tolist()
[[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]
"""
from __future__ import annotations

import ctypes
import threading

import llvmlite.binding as llvm
import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..fusion import View
from . import threads

llvm.add_symbol("ft_py_none", id(None))
llvm.add_symbol("ft_py_notimplemented", id(NotImplemented))

_METH_FASTCALL = 0x80


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


_new_function = ctypes.pythonapi.PyCFunction_NewEx
_new_function.restype = ctypes.py_object
_new_function.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]


def builtin(addr, name):
    """A builtin function object calling the METH_FASTCALL C function at ``addr``; the
    method definition it points to is kept alive as an attribute of the holder."""
    md = _MethodDef(name.encode(), addr, _METH_FASTCALL, None)
    fn = _new_function(ctypes.addressof(md), None, None)
    return fn, md


def _materialise(base, shape, strides, offset):
    """A (read-only) numpy view of ``base`` with element ``strides`` and ``offset``."""
    flat = np.ascontiguousarray(base).reshape(-1)
    it = flat.itemsize
    return as_strided(flat[offset:], shape, tuple(s * it for s in strides), writeable=False)


HELD_WORKSPACE = 4096     # bytes: a workspace this small stays with its program
POOL_KEEP = 2             # idle workspaces the process keeps for the next call


class WorkspacePool:
    """Workspaces lent per call (a program holds none but the tiny ones), so compiled
    executables for many shapes share a few buffers instead of each keeping its own.
    ``take(n)`` lends the smallest idle buffer of at least ``n`` bytes (a segment reads
    only the byte ranges its plan assigned) or a new one; ``give`` returns it, and
    only the ``POOL_KEEP`` largest idle buffers are kept.

    >>> pool = WorkspacePool()
    >>> a = pool.take(100); pool.give(a); pool.take(50) is a
    True
    """

    def __init__(self):
        self.idle = []
        self.lock = threading.Lock()

    def take(self, n):
        with self.lock:
            fits = [(b.size, i) for i, b in enumerate(self.idle) if b.size >= n]
            if fits:
                return self.idle.pop(min(fits)[1])
        return np.zeros(n, np.uint8)

    def give(self, b):
        with self.lock:
            self.idle.append(b)
            if len(self.idle) > POOL_KEEP:
                self.idle.sort(key=len)   # drop the smallest
                del self.idle[0]

    def clear(self):
        """Drop the idle buffers (their memory goes back to the allocator)."""
        with self.lock:
            self.idle.clear()

    def held_bytes(self):
        with self.lock:
            return sum(b.size for b in self.idle)


POOL = WorkspacePool()


def _balanced(seg):
    """``seg`` after ``threads.balance()`` (thread counts follow the free cores)."""
    balance = threads.balance

    def call(*slots):
        balance()
        return seg(*slots)
    return call


def _with_pooled_workspace(seg, n):
    """``seg`` with a workspace of ``n`` bytes from POOL appended to its slots."""
    take, give = POOL.take, POOL.give

    def call(*slots):
        ws = take(n)
        try:
            return seg(*slots, ws)
        finally:
            give(ws)
    return call


class Program:
    """The steps of one compiled jaxpr bound to its constants; ``__call__(*args)``."""

    def __init__(self, compiled, consts):
        self.compiled = compiled
        self.in_avals = compiled.in_avals
        self.n_in = len(self.in_avals)
        self.out_specs = [(tuple(a.shape), a.dtype) for a in compiled.out_avals]
        self.consts = [np.ascontiguousarray(np.asarray(c, dtype=a.dtype))
                       for c, a in zip(consts, compiled.const_avals)]
        self.ws_size = compiled.ws_size
        self.ws_slot = compiled.ws_slot
        self.nslots = compiled.nslots
        self.steps = []
        for kind, item in compiled.segments:
            if kind == "native":
                self.steps.append(("native", compiled.functions[item]))
            else:
                self.steps.append(("host", self._host(*item)))
        self.aliases = compiled.aliases
        # a tiny workspace stays here (no pool traffic on the dispatch path); larger
        # ones are lent per call by POOL
        self._held = np.zeros(self.ws_size, np.uint8) if self.ws_size <= HELD_WORKSPACE \
            else None
        self.fast = None
        if len(self.steps) == 1 and not self.aliases:
            self.fast = self.steps[0][1]
            self._tail = tuple(self.consts) + ((self._held,) if self._held is not None else ())

    def _host(self, eqn, ins, outs):
        impl, params = eqn.primitive.impl, eqn.params
        multi = eqn.primitive.multiple_results
        name = eqn.primitive.name
        if impl is None:
            raise NotImplementedError(f"llvm backend: primitive '{name}' has neither code "
                                      "generation nor an implementation")
        ws_slot = self.ws_slot
        # whether each view is dense, and its size, are fixed at compile time
        dense = [spec[0] != "lit" and View(None, spec[4], tuple(spec[5]), spec[6]).dense
                 for spec in ins]
        sizes = [int(np.prod(spec[4], dtype=np.int64)) if spec[0] != "lit" else 0
                 for spec in ins]

        def step(slots):
            args = []
            ws = slots[ws_slot]
            for spec, is_dense, n in zip(ins, dense, sizes):
                if spec[0] == "lit":
                    args.append(spec[1])
                    continue
                _, where, dtype, bshape, shape, strides, offset = spec
                if where[0] == "slot":
                    base = slots[where[1]]
                else:
                    base = ws[where[1]:where[1] + where[2]].view(dtype).reshape(bshape)
                if is_dense:
                    args.append(base.reshape(-1)[offset:offset + n].reshape(shape))
                else:
                    args.append(_materialise(base, shape, strides, offset))
            with np.errstate(all="ignore"):   # IEEE results (inf, nan) as native code's
                res = impl(*args, **params)
            if not multi:
                res = (res,)
            for (k, dt, shape), r in zip(outs, res):
                a = np.asarray(r, dtype=dt)
                if a.shape != tuple(shape):
                    raise RuntimeError(f"llvm backend: host step '{name}' returned shape "
                                       f"{a.shape}, expected {tuple(shape)}")
                if not (a.flags.c_contiguous and a.flags.aligned) or np.may_share_memory(a, ws):
                    a = np.array(a, order="C", copy=True)
                slots[k] = a
        return step

    def _convert(self, args):
        if len(args) != self.n_in:
            raise TypeError(f"compiled function takes {self.n_in} arguments, got {len(args)}")
        out = []
        for i, (a, av) in enumerate(zip(args, self.in_avals)):
            a = np.asarray(a)
            if a.shape != tuple(av.shape):
                raise TypeError(f"compiled function: argument {i} has shape {a.shape}, but it "
                                f"was compiled for {av.str_short()}")
            if a.dtype != av.dtype or not (a.flags.c_contiguous and a.flags.aligned):
                # a copy: ascontiguousarray returns a contiguous unaligned array as it is,
                # which the native code then rejected (a view at an odd byte offset)
                a = np.array(a, dtype=av.dtype, order="C")
            out.append(a)
        return out

    def __call__(self, *args, outs=None):
        args = self._convert(args)
        if outs is None:
            outs = [np.empty(s, d) for s, d in self.out_specs]
        for j, d in self.aliases.items():
            # the output takes over the donated input's buffer: only a writeable array
            # that no other argument overlaps (else a private copy of it)
            a = args[d]
            if not a.flags.writeable or any(np.may_share_memory(a, b)
                                            for i, b in enumerate(args) if i != d):
                a = args[d] = np.array(a, order="C", copy=True)
            outs[j] = a
        if self.compiled.threaded:
            threads.balance()
        ws = POOL.take(self.ws_size)     # concurrent calls never share a workspace
        try:
            slots = [*args, *outs, *self.consts, ws]
            slots.extend([None] * (self.nslots - len(slots)))
            for kind, item in self.steps:
                if kind == "native":
                    if item(*slots) is not None:
                        raise RuntimeError("llvm backend: a native segment rejected its "
                                           "arguments")
                else:
                    item(slots)
        finally:
            POOL.give(ws)
        return outs

    def fast_runner(self, cls=None, single=False):
        """A callable ``run(*arrays)`` for arguments already known to have the compiled
        shapes and dtypes (and to be ndarrays): one native call, outputs of type ``cls``
        (an ndarray subclass, or ndarray). Returns the output itself when ``single``,
        else a list. A program with host steps runs its steps (``__call__``)."""
        seg = self.fast
        if seg is None:
            # host steps (e.g. a collective calling MPI): still skip the caller's retrace
            return self._stepped_runner(cls, single)
        if self._held is None:      # the workspace is lent by POOL for each call
            seg = _with_pooled_workspace(seg, self.ws_size)
        if self.compiled.threaded:
            seg = _balanced(seg)
        tail = self._tail
        specs = self.out_specs
        empty = np.empty
        slow = self.__call__

        if single and len(specs) == 1:
            shape, dt = specs[0]
            if cls is None or cls is np.ndarray:
                def run(*args):
                    o = empty(shape, dt)
                    if seg(*args, o, *tail) is not None:
                        return slow(*args)[0]
                    return o
            else:
                def run(*args):
                    o = cls(shape, dt)       # uninitialised, like np.empty
                    if seg(*args, o, *tail) is not None:
                        return slow(*args)[0].view(cls)
                    return o
            return run

        def run_many(*args):
            outs = [empty(s, d) for s, d in specs] if cls is None else [cls(s, d) for s, d in specs]
            if seg(*args, *outs, *tail) is not None:
                outs = slow(*args)
                if cls is not None:
                    outs = [o.view(cls) for o in outs]
            return outs
        return run_many

    def _stepped_runner(self, cls, single):
        """``fast_runner`` for a program with several steps: ``__call__``, outputs as ``cls``."""
        slow = self.__call__
        if cls is None or cls is np.ndarray:
            return (lambda *args: slow(*args)[0]) if single and len(self.out_specs) == 1 \
                else slow
        if single and len(self.out_specs) == 1:
            return lambda *args: slow(*args)[0].view(cls)
        return lambda *args: [o.view(cls) for o in slow(*args)]
