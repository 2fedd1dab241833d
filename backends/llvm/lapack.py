"""``cholesky``, ``solve``, ``triangular_solve`` and ``det`` natively: LAPACK
``?potrf``, ``?gesv``, BLAS ``?trsm``, ``?getrf`` called from the generated code, no
Python per call; ``solve`` and ``triangular_solve`` take complex matrices too
(``?gesv``, ``?trsm``), the others real ones only (complex ``cholesky`` and ``det``,
and ``qr`` and ``svd`` of every dtype, are ``lapack_decomp``'s; ``eigh`` and ``pinv``
are ``lapack_spectral``'s). This module registers every routine the emitters call.

The routines are scipy's (``scipy.linalg.cython_lapack`` exports each as a C
function pointer in ``__pyx_capi__``, 32-bit integers, every argument by pointer);
their addresses are registered with LLVM under stable names (``ft_lapack_dsyevd``...)
so the IR text, and the disk cache, do not depend on where scipy is mapped. Without
scipy the primitive stays a host step (its numpy implementation).

LAPACK is column-major: a row-major symmetric matrix is read as its transpose, so the
row-major lower triangle is LAPACK's upper one (cholesky); ``solve``
copies its operands into column-major order and the solution back. A matrix for which
LAPACK reports failure (``info != 0``: not positive definite,
singular) gives NaN outputs, as the numpy implementations do.

>>> isinstance(available(), bool)
True
"""
from __future__ import annotations

import ctypes
import functools
import glob
import os

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np

from jaxpr_ir import ShapedArray
from .equations import if_then, native

try:    # optional: without scipy, the LAPACK primitives stay host steps
    from scipy.linalg import cython_blas, cython_lapack
except ImportError:   # pragma: no cover (scipy is a dependency)
    cython_blas = cython_lapack = None
from . import threads
from .lltypes import I8, I32, I64, const, lltype
from .values import Val

_ROUTINES = ("dsyevd", "ssyevd", "dpotrf", "spotrf", "dgesv", "sgesv", "dgetrf", "sgetrf",
             "dtrtrs", "strtrs", "dgeqrf", "sgeqrf", "dorgqr", "sorgqr", "dgesdd", "sgesdd",
             "dgeev", "sgeev", "zgeev", "cgeev", "zgesv", "cgesv", "dgees", "sgees",
             "zgees", "cgees")
_ROUTINES += ("zpotrf", "cpotrf", "zgetrf", "cgetrf", "zgeqrf", "zungqr",   # complex
              "zgesdd", "zheevd")
# ?trsm, not ?trtrs, for triangular_solve: no singularity check, so a zero pivot gives
# IEEE infs and NaNs as JAX's triangular solves do (trtrs's NaN fill hid them)
_BLAS_ROUTINES = ("dtrsm", "strsm", "ztrsm", "ctrsm", "dgemm", "zgemm")   # + pinv's gemm
_PREFIX = {np.dtype(np.float64): "d", np.dtype(np.float32): "s",
           np.dtype(np.complex128): "z", np.dtype(np.complex64): "c"}


def _capsule_pointer(capsule):
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule))


def _register_thread_setter():
    """Let ``threads.balance`` set the thread count of the OpenBLAS scipy's LAPACK runs
    on (scipy's wheel carries its own, apart from numpy's): without it a factorisation
    under load spawns a thread per core beside the busy ones (eigh 256² ran ~50×
    slower, measured on 2 shared cores)."""
    import scipy
    root = os.path.dirname(scipy.__file__)
    for path in sorted(glob.glob(os.path.join(root, "../scipy.libs/libscipy_openblas*.so*")) +
                       sorted(glob.glob(os.path.join(root, ".libs/libopenblas*.so*")))):
        try:
            lib = ctypes.CDLL(path)     # already loaded by cython_lapack: the same handle
        except OSError:
            continue
        for name in ("scipy_openblas_set_num_threads", "openblas_set_num_threads"):
            f = getattr(lib, name, None)
            if f is not None:
                f.argtypes = [ctypes.c_int]
                f.restype = None
                threads.add_blas_setter(f)
                return


@functools.lru_cache(maxsize=None)
def _library():
    """{routine: address} registered with LLVM, or None without scipy."""
    if os.environ.get("FUNCTRANS_NO_LAPACK") or cython_lapack is None:
        return None
    out = {}
    for name in _ROUTINES:
        addr = _capsule_pointer(cython_lapack.__pyx_capi__[name])
        llvm.add_symbol(f"ft_lapack_{name}", addr)
        out[name] = addr
    for name in _BLAS_ROUTINES:     # scipy's BLAS beside its LAPACK (the same library)
        addr = _capsule_pointer(cython_blas.__pyx_capi__[name])
        llvm.add_symbol(f"ft_lapack_{name}", addr)
        out[name] = addr
    _register_thread_setter()
    return out


def available() -> bool:
    """Whether scipy's LAPACK was found (``FUNCTRANS_NO_LAPACK=1`` turns it off)."""
    return _library() is not None


def _declare(lw, name, nargs):
    f = lw.module.globals.get(name)
    if f is None:
        f = ir.Function(lw.module, ir.FunctionType(ir.VoidType(), [ir.PointerType()] * nargs),
                        name)
    return f


def int_cell(fn, value):
    cell = fn.alloca(4)
    fn.eb.store(ir.Constant(I32, value), cell)
    return cell


def char_cell(fn, ch):
    cell = fn.alloca(1)
    fn.eb.store(ir.Constant(I8, ord(ch)), cell)
    return cell


def routine_decl(lw, dt, stem, nargs):
    """The declaration of LAPACK's ``?<stem>`` for dtype ``dt`` (d, s, z or c)."""
    return _declare(lw, f"ft_lapack_{_PREFIX[np.dtype(dt)]}{stem}", nargs)


def nonfinite_status(lw, fn, ptr, rdt, count, status) -> None:
    """Emit: ``status`` (an i32 cell) = 0 when the ``count`` reals of dtype ``rdt`` at
    ``ptr`` are all finite, else 1 (a complex matrix: its 2n parts). LAPACK leaves inf
    and NaN input undefined, so the emitters check before they call."""
    fn.b.store(ir.Constant(I32, 0), status)
    zero = const(rdt, 0.0)

    def check(e):       # x - x is NaN exactly for inf and NaN
        b = fn.b
        v = lw.load(fn, ptr, rdt, e)
        bad = b.fcmp_unordered("uno", b.fsub(v, v), zero)
        b.store(b.select(bad, ir.Constant(I32, 1), b.load(status, typ=I32)), status)
    fn.loop(count, check)


def stack_count(aval) -> int:
    """How many matrices a stack of shape ``(..., m, n)`` holds (1 for one matrix)."""
    return int(np.prod(aval.shape[:-2], dtype=np.int64))


def fill_if_failed(lw, fn, info, ptrs_sizes, dt):
    failed = fn.b.icmp_signed("!=", fn.b.load(info, typ=I32), ir.Constant(I32, 0))
    nan = const(dt, float("nan"))         # complex: nan + 0j, as numpy's np.full

    def poison():
        for ptr, size in ptrs_sizes:
            fn.loop(size, lambda i, p=ptr: lw.store(fn, p, dt, i, nan))
    if_then(fn, failed, poison)


def cholesky_real(lw, fn, eqn, ins, outs):
    """Real ``cholesky`` (``?potrf``); ``lapack_decomp`` registers it beside the complex."""
    a = eqn.inputs[0].aval
    n = a.shape[-1]
    nb = stack_count(a)
    if n == 0 or nb == 0:
        return
    dt = a.dtype
    ft = lltype(dt)
    routine = routine_decl(lw, dt, "potrf", 5)
    out = fn.ptr(outs[0])
    lw.copy(fn, ins[0], out)        # factor in place, in the output
    uplo, n_cell, info = char_cell(fn, "U"), int_cell(fn, n), int_cell(fn, 0)
    zero = ir.Constant(ft, 0.0)
    nn = ir.Constant(I64, n * n)

    def one(bi):
        p = fn.b.gep(out, [fn.b.mul(bi, nn)], source_etype=ft)
        fn.b.call(routine, [uplo, n_cell, p, n_cell, info])

        def clear_row(r):      # the row-major strict upper triangle still holds A
            def cell(c):
                bb = fn.b
                above = bb.icmp_signed(">", c, r)
                idx = bb.add(bb.mul(r, ir.Constant(I64, n)), c)
                cur = lw.load(fn, p, dt, idx)
                lw.store(fn, p, dt, idx, bb.select(above, zero, cur))
            fn.loop(n, cell)
        fn.loop(n, clear_row)
        fill_if_failed(lw, fn, info, [(p, n * n)], dt)
    fn.loop(nb, one)


def column_major(shape):
    """Element strides of ``shape`` (..., r, c) stored column-major per matrix."""
    r, c = shape[-2:]
    batch = list(shape[:-2])
    strides, acc = [], r * c
    for d in reversed(batch):
        strides.insert(0, acc)
        acc *= d
    return strides + [1, r]


def _supports_solve(eqn, planner):
    return eqn.inputs[0].aval.dtype in _PREFIX and available()


@native("solve", _supports_solve, complex=True)     # complex: ?zgesv / ?cgesv
def _solve(lw, fn, eqn, ins, outs):
    a, b = eqn.inputs[0].aval, eqn.inputs[1].aval
    n, k = a.shape[-1], b.shape[-1]
    nb = stack_count(a)
    if n == 0 or k == 0 or nb == 0:
        return
    dt = a.dtype
    ft = lltype(dt)
    routine = routine_decl(lw, dt, "gesv", 8)
    mats, own_a = lw.new_buffer(fn, ShapedArray(a.shape, dt), False)
    rhs, own_b = lw.new_buffer(fn, ShapedArray(b.shape, dt), False)
    piv, own_p = lw.new_buffer(fn, ShapedArray((n,), np.int32), False)
    lw.copy(fn, ins[0], fn.ptr(mats), dst_strides=column_major(a.shape))
    lw.copy(fn, ins[1], fn.ptr(rhs), dst_strides=column_major(b.shape))
    n_cell, k_cell, info = int_cell(fn, n), int_cell(fn, k), int_cell(fn, 0)
    m_ptr, r_ptr = fn.ptr(mats), fn.ptr(rhs)

    def one(bi):
        bb = fn.b
        pa = bb.gep(m_ptr, [bb.mul(bi, ir.Constant(I64, n * n))], source_etype=ft)
        pb = bb.gep(r_ptr, [bb.mul(bi, ir.Constant(I64, n * k))], source_etype=ft)
        bb.call(routine, [n_cell, k_cell, pa, n_cell, fn.ptr(piv), pb, n_cell, info])
        fill_if_failed(lw, fn, info, [(pb, n * k)], dt)
    fn.loop(nb, one)
    solution = Val(dt, b.shape, ref=rhs, strides=tuple(column_major(b.shape)), offset=0)
    lw.copy(fn, solution, fn.ptr(outs[0]))
    for ref, owned in ((mats, own_a), (rhs, own_b), (piv, own_p)):
        if owned:
            lw.release(ref)


def det_real(lw, fn, eqn, ins, outs):
    """Real ``det`` (``?getrf``); ``lapack_decomp`` registers it beside the complex."""
    # det(A) = det(Aᵀ): factor the row-major buffer as LAPACK's column-major Aᵀ = P L U;
    # det = prod(diag U) * (-1)^(row swaps). An exactly singular matrix (info > 0) still
    # has its factorization, with a zero pivot: det 0, as numpy.
    a = eqn.inputs[0].aval
    n = a.shape[-1]
    nb = stack_count(a)
    dt = a.dtype
    ft = lltype(dt)
    out = fn.ptr(outs[0])
    if n == 0:
        fn.loop(nb, lambda i: lw.store(fn, out, dt, i, ir.Constant(ft, 1.0)))
        return
    if nb == 0:
        return
    routine = routine_decl(lw, dt, "getrf", 6)
    mats, own_m = lw.new_buffer(fn, ShapedArray(a.shape, dt), False)
    piv, own_p = lw.new_buffer(fn, ShapedArray((n,), np.int32), False)
    lw.copy(fn, ins[0], fn.ptr(mats))
    n_cell, info = int_cell(fn, n), int_cell(fn, 0)
    acc = fn.alloca(8)
    m_ptr, p_ptr = fn.ptr(mats), fn.ptr(piv)

    def one(bi):
        bb = fn.b
        pa = bb.gep(m_ptr, [bb.mul(bi, ir.Constant(I64, n * n))], source_etype=ft)
        bb.call(routine, [n_cell, n_cell, pa, n_cell, p_ptr, info])
        bb.store(ir.Constant(ft, 1.0), acc)

        def step(i):
            b2 = fn.b
            u = lw.load(fn, pa, dt, b2.mul(i, ir.Constant(I64, n + 1)))
            swapped = b2.icmp_signed("!=", lw.load(fn, p_ptr, np.int32, i),
                                     b2.trunc(b2.add(i, ir.Constant(I64, 1)), I32))
            factor = b2.select(swapped, b2.fneg(u), u)
            b2.store(b2.fmul(b2.load(acc, typ=ft), factor), acc)
        fn.loop(n, step)
        lw.store(fn, out, dt, bi, fn.b.load(acc, typ=ft))
    fn.loop(nb, one)
    for ref, owned in ((mats, own_m), (piv, own_p)):
        if owned:
            lw.release(ref)


def _supports_trsm(eqn, planner):
    return ({x.aval.dtype for x in eqn.inputs} <= set(_PREFIX) and
            eqn.inputs[0].aval.dtype == eqn.inputs[1].aval.dtype and available())


# complex: ?ztrsm / ?ctrsm in the operands' own precision, as the host step's scipy trsm;
# transpose_a is 'T' (conjugation is lax.linalg's conj of a, before the primitive)
@native("triangular_solve", _supports_trsm, complex=True)
def _triangular_solve(lw, fn, eqn, ins, outs):
    a, b = eqn.inputs[0].aval, eqn.inputs[1].aval
    p = eqn.params
    n = a.shape[-1]
    nb = stack_count(a)
    rows, cols = b.shape[-2:]
    if n == 0 or rows == 0 or cols == 0 or nb == 0:
        return
    dt = a.dtype
    ft = lltype(dt)
    routine = routine_decl(lw, dt, "trsm", 11)
    mats, own_a = lw.new_buffer(fn, ShapedArray(a.shape, dt), False)
    lw.copy(fn, ins[0], fn.ptr(mats), dst_strides=column_major(a.shape))
    out = fn.ptr(outs[0])
    if p["left_side"]:
        # op(A) X = B: B column-major in a temp, solved in place, copied back
        rhs, own_b = lw.new_buffer(fn, ShapedArray(b.shape, dt), False)
        lw.copy(fn, ins[1], fn.ptr(rhs), dst_strides=column_major(b.shape))
        trans, nrhs, target = p["transpose_a"], cols, fn.ptr(rhs)
    else:
        # X op(A) = B  <=>  op(A)ᵀ Xᵀ = Bᵀ, and Bᵀ column-major is B row-major: in place
        rhs, own_b = None, False
        lw.copy(fn, ins[1], out)
        trans, nrhs, target = not p["transpose_a"], rows, out
    # op(A) X = 1 * X, A n x n, X n x nrhs: ?trsm(side, uplo, transa, diag, m, n, alpha,
    # A, lda, B, ldb); a zero pivot divides by zero (JAX's infs), nothing is checked
    cells = [char_cell(fn, "L"), char_cell(fn, "L" if p["lower"] else "U"),
             char_cell(fn, "T" if trans else "N"),
             char_cell(fn, "U" if p["unit_diagonal"] else "N"), int_cell(fn, n),
             int_cell(fn, nrhs)]
    alpha = fn.alloca(np.dtype(dt).itemsize)
    fn.eb.store(const(dt, 1.0), alpha)
    m_ptr = fn.ptr(mats)

    def one(bi):
        bb = fn.b
        pa = bb.gep(m_ptr, [bb.mul(bi, ir.Constant(I64, n * n))], source_etype=ft)
        pb = bb.gep(target, [bb.mul(bi, ir.Constant(I64, rows * cols))], source_etype=ft)
        bb.call(routine, cells + [alpha, pa, cells[4], pb, cells[4]])
    fn.loop(nb, one)
    if rhs is not None:
        solution = Val(dt, b.shape, ref=rhs, strides=tuple(column_major(b.shape)), offset=0)
        lw.copy(fn, solution, out)
    for ref, owned in ((mats, own_a), (rhs, own_b)):
        if owned:
            lw.release(ref)
