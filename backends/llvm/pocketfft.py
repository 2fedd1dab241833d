"""``fft`` natively: numpy's own pocketfft loops called from the generated code, no
Python per call, the same numbers as the numpy implementation (bit for bit).

numpy (2.x) ships pocketfft as five generalized ufuncs in ``numpy.fft._pocketfft_umath``
(``fft``, ``ifft``, ``rfft_n_even``, ``rfft_n_odd``, ``irfft``; signature
``(n),()->(m)``, loops ``Dd->D`` and ``Ff->F``). Their C inner loops
``loop(char **args, npy_intp *dims, npy_intp *steps, void *data)`` and ``data``
pointers sit in the ``PyUFuncObject`` (numpy's public ``ufuncobject.h``: ``functions``,
``data``, ``ntypes``, ``name``, ``types`` after the object header and four ints). They
are read with ctypes and trusted only when what is read there agrees with what the
ufunc says of itself (nin/nout/nargs, ``ntypes``, ``__name__``, the type codes of
``ufunc.types``, a FORWARD/BACKWARD flag behind ``fft``'s/``ifft``'s data) and each loop
lies inside the ``_pocketfft_umath`` library (``dladdr``); else ``fft`` stays the host
step it was (its numpy impl). Loops and flags are registered with LLVM under stable
names (``ft_pocketfft_fft_d``...) so the IR text, and the disk cache, do not depend on
where numpy is mapped.

A transform over k axes is k one-axis passes, in the order and with the scale factors
``numpy.fft.fftn``/``ifftn``/``rfftn``/``irfftn`` use (the impl calls them): FFT and
IFFT last axis first, IFFT scaling each pass by ``1/n`` of its axis (``np.reciprocal``
in the real dtype, passed as the loop's second operand, as numpy passes it); RFFT the
real pass on the last axis, then the others last first; IRFFT the complex inverse
passes first axis first, into a complex temporary, then the real inverse pass. Each
pass is one or more loop calls over strided operands (the loop takes any strides:
the first pass reads the operand where it lies, the later ones run in place in the
output), the pass's outer dimension the one of smallest output stride (so the loop's
vectorised path serves it as it serves numpy), a generated loop nest over the rest.
Single precision: numpy passes the forward passes' scale as the Python int 1, which
selects the double loops (``Dd->D``), so numpy widens the operand, transforms in
double and rounds each pass's result to single precision; the code does the same
(the inverse passes' scale is a float32 and runs the float loops).

Errors: the loops catch C++ exceptions (only ``bad_alloc`` can happen for a valid
call) and set a Python exception, taking the GIL the segment already holds; the code
checks ``PyErr_Occurred`` after each call and returns NULL from the segment, so the
call raises that exception. Threads: pocketfft's plan cache has no lock in numpy's
build, so the loops are called only from the segment's own thread (never inside a
parallel kernel), which holds the GIL: two compiled transforms never run at once (a
numpy transform in another Python thread, which releases the GIL, races with them as
it races with another numpy transform).

>>> isinstance(available(), bool)
True
"""
from __future__ import annotations

import ctypes
import functools
import os

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np

from .equations import native
from jaxpr_ir import ShapedArray
from .lltypes import I8, I64, const, lltype
from .values import PTR

__all__ = ["available"]

_KINDS = ("fft", "ifft", "rfft_n_even", "rfft_n_odd", "irfft")
_FORWARD = ("fft", "rfft_n_even", "rfft_n_odd")
_LOOP_OF = {np.dtype(np.float64): "d", np.dtype(np.float32): "f",
            np.dtype(np.complex128): "d", np.dtype(np.complex64): "f"}
_REAL = {np.dtype(np.complex128): np.dtype(np.float64),
         np.dtype(np.complex64): np.dtype(np.float32)}


class _Layout(ctypes.Structure):
    """The head of numpy 2.x's ``PyUFuncObject`` after ``PyObject_HEAD``."""
    _fields_ = [("nin", ctypes.c_int), ("nout", ctypes.c_int), ("nargs", ctypes.c_int),
                ("identity", ctypes.c_int), ("functions", ctypes.c_void_p),
                ("data", ctypes.c_void_p), ("ntypes", ctypes.c_int),
                ("reserved1", ctypes.c_int), ("name", ctypes.c_char_p),
                ("types", ctypes.c_void_p)]


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _library_of(addr):
    """The file of the shared library mapping ``addr`` ('' when unknown)."""
    try:
        dladdr = ctypes.CDLL(None).dladdr
    except (OSError, AttributeError):
        return ""
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    info = _DlInfo()
    if not dladdr(ctypes.c_void_p(addr), ctypes.byref(info)) or not info.dli_fname:
        return ""
    return os.path.basename(info.dli_fname.decode(errors="replace"))


def _read(ufunc):
    """{'d'/'f': (loop address, data address or 0)} of a pocketfft gufunc, or None when
    its struct does not read as the layout above says it should."""
    head = _Layout.from_address(id(ufunc) + object.__basicsize__)
    if (head.nin, head.nout, head.nargs) != (ufunc.nin, ufunc.nout, 3) or \
            head.ntypes != ufunc.ntypes or not head.functions or not head.types or \
            head.name != ufunc.__name__.encode():
        return None
    codes = ctypes.string_at(head.types, head.ntypes * 3)
    funcs = (ctypes.c_void_p * head.ntypes).from_address(head.functions)
    data = (ctypes.c_void_p * head.ntypes).from_address(head.data) if head.data else None
    out = {}
    for i, sig in enumerate(ufunc.types):
        want = bytes(np.dtype(c).num for c in sig.replace("->", ""))
        if codes[3 * i:3 * i + 3] != want:
            return None
        loop = sig[1]
        if loop in "df":
            out[loop] = (funcs[i], (data[i] or 0) if data is not None else 0)
    if set(out) != {"d", "f"} or not all(f for f, _ in out.values()):
        return None
    if not all(_library_of(f).startswith("_pocketfft_umath") for f, _ in out.values()):
        return None
    return out


@functools.lru_cache(maxsize=None)
def _library():
    """{(kind, 'd'/'f'): (loop symbol, data symbol or None)} registered with LLVM, or None
    when numpy's gufuncs are not there or do not read as expected."""
    if os.environ.get("FUNCTRANS_NO_POCKETFFT"):
        return None
    try:
        from numpy.fft import _pocketfft_umath as pfu
    except ImportError:      # pragma: no cover (numpy < 2)
        return None
    read = {}
    for kind in _KINDS:
        u = getattr(pfu, kind, None)
        got = None if not isinstance(u, np.ufunc) else _read(u)
        if got is None:
            return None
        read[kind] = got
    for kind, direction in (("fft", True), ("ifft", False)):   # data: &pocketfft::FORWARD..
        for _, d in read[kind].values():
            if not d or bool(ctypes.c_uint8.from_address(d).value) != direction:
                return None
    out = {}
    for kind, loops in read.items():
        for c, (f, d) in loops.items():
            name = f"ft_pocketfft_{kind}_{c}"
            llvm.add_symbol(name, f)
            data = None
            if d:
                data = f"{name}_data"
                llvm.add_symbol(data, d)
            out[kind, c] = (name, data)
    llvm.add_symbol("ft_pyerr_occurred",
                    ctypes.cast(ctypes.pythonapi.PyErr_Occurred, ctypes.c_void_p).value)
    return out


def available() -> bool:
    """Whether numpy's pocketfft loops were found (``FUNCTRANS_NO_POCKETFFT=1`` turns
    them off: ``fft`` is then a host step)."""
    return _library() is not None


def _supports(eqn, planner):
    dt = eqn.inputs[0].aval.dtype
    return dt in _LOOP_OF and min(eqn.params["fft_lengths"]) >= 1 and available()


def passes(fft_type, lengths, ndim, dtype):
    """[(axis, loop kind, scale)] of a transform, numpy's order and factors.

    >>> passes("IFFT", (2, 4), 3, np.complex128)
    [(2, 'ifft', 0.25), (1, 'ifft', 0.5)]
    """
    k = len(lengths)
    axes = list(range(ndim - k, ndim))
    real = np.dtype(dtype) if np.dtype(dtype).kind == "f" else _REAL[np.dtype(dtype)]
    inv = {ax: float(np.reciprocal(n, dtype=real)) for ax, n in zip(axes, lengths)}
    n_last = lengths[-1]
    if fft_type == "FFT":
        return [(ax, "fft", 1.0) for ax in reversed(axes)]
    if fft_type == "IFFT":
        return [(ax, "ifft", inv[ax]) for ax in reversed(axes)]
    if fft_type == "RFFT":
        first = "rfft_n_even" if n_last % 2 == 0 else "rfft_n_odd"
        return [(axes[-1], first, 1.0)] + [(ax, "fft", 1.0) for ax in reversed(axes[:-1])]
    return [(ax, "ifft", inv[ax]) for ax in axes[:-1]] + [(axes[-1], "irfft", inv[axes[-1]])]


def _loop_dims(shape, in_strides, out_strides, axis):
    """The dimensions other than ``axis`` a pass runs over, size-1 ones dropped and
    neighbours both sides walk contiguously merged: [(size, in stride, out stride)]."""
    dims = [(shape[d], in_strides[d], out_strides[d]) for d in range(len(shape))
            if d != axis]
    groups, cur = [], []
    for d in range(len(shape)):          # no merging across the transformed axis
        if d == axis:
            groups.append(cur)
            cur = []
        elif shape[d] != 1:
            cur.append(dims[d - (d > axis)])
    groups.append(cur)
    out = []
    for g in groups:
        merged = []
        for n, si, so in g:
            if merged and merged[-1][1] == si * n and merged[-1][2] == so * n:
                m = merged.pop()
                merged.append((m[0] * n, si, so))
            else:
                merged.append((n, si, so))
        out += merged
    return out


def _declare(module, name, ret, args):
    f = module.globals.get(name)
    return f if f is not None else ir.Function(module, ir.FunctionType(ret, args), name)


def _data_global(module, name):
    g = module.globals.get(name)
    if g is None:
        g = ir.GlobalVariable(module, I8, name)     # a declaration: numpy's flag
    return g


def _i64_cells(fn, values):
    cells = fn.alloca(8 * len(values))
    for k, v in enumerate(values):
        fn.eb.store(ir.Constant(I64, int(v)),
                    fn.eb.gep(cells, [ir.Constant(I64, k)], source_etype=I64))
    return cells


def _base(fn, val):
    """A byte pointer to ``val``'s first element."""
    p = fn.ptr(val.ref)
    off = val.offset * val.dtype.itemsize
    return fn.b.gep(p, [ir.Constant(I64, off)], source_etype=I8) if off else p


def _one_pass(lw, fn, symbols, src, dst, axis, scale):
    """One loop kind along ``axis`` from Val ``src`` to Val ``dst`` (same buffer: in place)."""
    loop_name, data_name = symbols
    isz, osz = src.dtype.itemsize, dst.dtype.itemsize
    dims = _loop_dims(dst.shape, src.strides, dst.strides, axis)
    if dims:
        at = min(range(len(dims)), key=lambda i: (abs(dims[i][2]), -i))
        n_outer, si, so = dims.pop(at)
    else:
        n_outer, si, so = 1, 0, 0
    real = dst.dtype if dst.dtype.kind == "f" else _REAL[dst.dtype]
    module = lw.module
    loop = _declare(module, loop_name, ir.VoidType(), [PTR, PTR, PTR, PTR])
    data = ir.Constant(PTR, None) if data_name is None else _data_global(module, data_name)
    occurred = _declare(module, "ft_pyerr_occurred", PTR, [])
    sizes = _i64_cells(fn, [n_outer, src.shape[axis], dst.shape[axis]])
    steps = _i64_cells(fn, [si * isz, 0, so * osz, src.strides[axis] * isz,
                            dst.strides[axis] * osz])
    factor = fn.alloca(real.itemsize)
    fn.eb.store(const(real, scale), factor)
    args = fn.alloca(3 * 8)
    fn.eb.store(factor, fn.eb.gep(args, [ir.Constant(I64, 1)], source_etype=PTR))
    ibase, obase = _base(fn, src), _base(fn, dst)

    def call(idxs):
        b = fn.b
        ip, op = ibase, obase
        for ix, (_, s_in, s_out) in zip(idxs, dims):
            if s_in:
                ip = b.gep(ip, [b.mul(ix, ir.Constant(I64, s_in * isz))], source_etype=I8)
            if s_out:
                op = b.gep(op, [b.mul(ix, ir.Constant(I64, s_out * osz))], source_etype=I8)
        b.store(ip, args)
        b.store(op, b.gep(args, [ir.Constant(I64, 2)], source_etype=PTR))
        b.call(loop, [args, sizes, steps, data])
        failed = b.icmp_unsigned("!=", b.call(occurred, []), ir.Constant(PTR, None))
        bad = fn.fn.append_basic_block("fft_failed")
        ok = fn.fn.append_basic_block("fft_done")
        b.cbranch(failed, bad, ok)
        ir.IRBuilder(bad).ret(ir.Constant(PTR, None))
        b.position_at_end(ok)
    fn.nest([n for n, _, _ in dims], call)


def _convert(lw, fn, src, dst):
    """``dst = src`` between Vals of one shape, float32 <-> float64 or complex64 <->
    complex128 (each part widened or rounded to nearest, as numpy casts)."""
    parts = 2 if src.dtype.kind == "c" else 1
    sr = src.dtype if parts == 1 else _REAL[src.dtype]
    dr = dst.dtype if parts == 1 else _REAL[dst.dtype]
    sp, dp = fn.ptr(src.ref), fn.ptr(dst.ref)
    widen = dr.itemsize > sr.itemsize

    def body(idxs):
        b = fn.b
        si, di = ir.Constant(I64, src.offset * parts), ir.Constant(I64, dst.offset * parts)
        for ix, s, d in zip(idxs, src.strides, dst.strides):
            if s:
                si = b.add(si, b.mul(ix, ir.Constant(I64, s * parts)))
            if d:
                di = b.add(di, b.mul(ix, ir.Constant(I64, d * parts)))
        for p in range(parts):
            q = ir.Constant(I64, p)
            v = lw.load(fn, sp, sr, b.add(si, q))
            v = b.fpext(v, lltype(dr)) if widen else b.fptrunc(v, lltype(dr))
            lw.store(fn, dp, dr, b.add(di, q), v)
    fn.nest(list(src.shape), body)


def _temp(lw, fn, shape, dtype, temps):
    ref, own = lw.new_buffer(fn, ShapedArray(shape, dtype), False)
    if own:
        temps.append(ref)
    return lw.val_of_ref(ref)


def _widened_pass(lw, fn, symbols, src, dst, axis, temps):
    """A forward pass of single-precision data the way ``numpy.fft`` runs it: its scale,
    the Python int 1, selects the double loop (``Dd->D``), so numpy widens the operand,
    transforms in double and rounds the result to single precision."""
    wide = {np.dtype(np.float32): np.dtype(np.float64),
            np.dtype(np.complex64): np.dtype(np.complex128)}
    a = _temp(lw, fn, src.shape, wide[src.dtype], temps)
    _convert(lw, fn, src, a)
    out = a if a.dtype == wide[dst.dtype] else _temp(lw, fn, dst.shape, wide[dst.dtype], temps)
    _one_pass(lw, fn, symbols, a, out, axis, 1.0)
    _convert(lw, fn, out, dst)


@native("fft", _supports, complex=True)
def _fft(lw, fn, eqn, ins, outs):
    fft_type = eqn.params["fft_type"]
    lengths = tuple(eqn.params["fft_lengths"])
    x, out = eqn.inputs[0].aval, eqn.outvars[0].aval
    if x.size == 0 or out.size == 0:
        return
    lib = _library()
    single = _LOOP_OF[x.dtype] == "f"
    temps = []
    src = ins[0]
    if src.lit is not None:
        ref, t = lw.materialize(fn, src)
        if t is not None:
            temps.append(t)
        src = lw.val_of_ref(ref)
    dest = lw.val_of_ref(outs[0])
    plan = passes(fft_type, lengths, x.ndim, x.dtype)
    mid = dest
    if fft_type == "IRFFT" and len(plan) > 1:       # the complex passes: into a temporary
        mid = _temp(lw, fn, x.shape, x.dtype, temps)
    for axis, kind, scale in plan:
        target = mid if kind == "ifft" and fft_type == "IRFFT" else dest
        if single and kind in _FORWARD:
            _widened_pass(lw, fn, lib[kind, "d"], src, target, axis, temps)
        else:
            _one_pass(lw, fn, lib[kind, _LOOP_OF[x.dtype]], src, target, axis, scale)
        src = target
    for t in temps:
        lw.release(t)
