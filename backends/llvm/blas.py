"""``dot_general`` natively: BLAS gemm for float32/float64/complex64/complex128 (the
OpenBLAS numpy ships), generated loops for tiny or integer products.

The library is the one numpy's wheel carries (``numpy.libs/libscipy_openblas*.so``, or
the ``cblas_?gemm`` symbols of any BLAS numpy loaded); its ``cblas_dgemm``/
``cblas_sgemm`` addresses are registered with LLVM under stable names
(``ft_cblas_dgemm``...), so the IR text (and the disk cache) does not depend on where
the library is mapped. Row-major throughout (``CblasRowMajor``); an operand whose
layout is neither ``(batch, free, contract)`` nor ``(batch, contract, free)`` is first
copied into that order. Without a BLAS (or its complex ``?gemm``), large float (complex)
products stay host steps.

>>> isinstance(available(), bool)
True
"""
from __future__ import annotations

import ctypes
import functools
import glob
import os
import time

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np

from jaxpr_ir import ShapedArray
from . import threads
from .equations import native
from .lltypes import I32, I64, lltype
from .ops_complex import add as complex_add, mul as complex_mul
from .values import Val

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
TINY = 4096          # multiply-adds below which generated loops beat a BLAS call


def _candidates():
    import numpy
    root = os.path.dirname(numpy.__file__)
    for pat in ("../numpy.libs/libscipy_openblas*.so*", "../numpy.libs/libopenblas*.so*",
                ".libs/libopenblas*.so*", "../numpy.dylibs/libscipy_openblas*.dylib"):
        yield from sorted(glob.glob(os.path.join(root, pat)))


@functools.lru_cache(maxsize=None)
def _library():
    """{'d': address, 's': address, 'int': 64 or 32} or None when no usable BLAS."""
    if os.environ.get("FUNCTRANS_NO_BLAS"):
        return None
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for d, s, bits in (("scipy_cblas_dgemm64_", "scipy_cblas_sgemm64_", 64),
                           ("cblas_dgemm64_", "cblas_sgemm64_", 64),
                           ("scipy_cblas_dgemm", "scipy_cblas_sgemm", 32),
                           ("cblas_dgemm", "cblas_sgemm", 32)):
            try:
                fd, fs = getattr(lib, d), getattr(lib, s)
            except AttributeError:
                continue
            out = {"d": ctypes.cast(fd, ctypes.c_void_p).value,
                   "s": ctypes.cast(fs, ctypes.c_void_p).value, "int": bits, "lib": lib,
                   "path": path}
            for p, name in (("z", d.replace("dgemm", "zgemm")), ("c", s.replace("sgemm", "cgemm"))):
                f = getattr(lib, name, None)      # complex: alpha and beta by pointer
                out[p] = None if f is None else ctypes.cast(f, ctypes.c_void_p).value
            for p in "dszc":
                if out[p] is not None:
                    llvm.add_symbol(f"ft_cblas_{p}gemm", out[p])
            _register_thread_setter(lib, bits)
            return out
    return None


def _register_thread_setter(lib, bits):
    """Let ``threads.balance`` set this OpenBLAS's thread count (its own C function)."""
    for name in ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_",
                 "scipy_openblas_set_num_threads", "openblas_set_num_threads"):
        f = getattr(lib, name, None)
        if f is not None:
            f.argtypes = [ctypes.c_int]
            f.restype = None
            threads.add_blas_setter(f)     # also applies a count balance() already chose
            return


_EAGER_CHECKED = [-1e9]


def balance_threads() -> None:
    """Set this BLAS (numpy's) to the cores free now, as ``threads.balance`` does before
    each compiled program: eager products (numpy's matmul/einsum, the impl of
    ``dot_general``) call it too, at most every ``threads.BALANCE_SECONDS``. On a loaded
    2-core machine OpenBLAS's two spinning threads cost a 256x256 product 5-15x its
    one-thread CPU time (and wall time). Before any compiled program started the pool
    only the BLAS is set (starting the pool imports numba: half a second)."""
    if _library() is None:
        return
    if threads.pool_started():
        threads.balance()
        return
    now = time.monotonic()
    if now - _EAGER_CHECKED[0] < threads.BALANCE_SECONDS:
        return
    _EAGER_CHECKED[0] = now
    free = threads.free_cores(1)
    limit = threads.user_limit()
    for setter in threads.BLAS_SETTERS:
        setter(free if limit is None else min(free, limit))


def available() -> bool:
    """Whether a BLAS was found (``FUNCTRANS_NO_BLAS=1`` turns it off)."""
    return _library() is not None


def gemm_sizes(eqn):
    """(lhs free dims, rhs free dims, batch, M, N, K) of a ``dot_general`` equation."""
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    la, ra = eqn.inputs[0].aval, eqn.inputs[1].aval
    lf = [d for d in range(la.ndim) if d not in lc and d not in lb]
    rf = [d for d in range(ra.ndim) if d not in rc and d not in rb]
    p = lambda a, ds: int(np.prod([a.shape[d] for d in ds], dtype=np.int64))
    return lf, rf, p(la, lb), p(la, lf), p(ra, rf), p(la, lc)


_PREFIX = {np.dtype(np.float64): "d", np.dtype(np.float32): "s",
           np.dtype(np.complex128): "z", np.dtype(np.complex64): "c"}


def has_gemm(dtype) -> bool:
    """Whether a BLAS ``?gemm`` serves ``dtype`` (a float or complex dtype).

    >>> has_gemm(np.int32)
    False
    """
    lib = _library()
    return lib is not None and lib.get(_PREFIX.get(np.dtype(dtype))) is not None


def _supports(eqn, planner):
    la, ra = eqn.inputs[0].aval, eqn.inputs[1].aval
    out = eqn.outvars[0].aval
    if la.dtype != ra.dtype or out.dtype != la.dtype or la.dtype.kind not in "fiuc":
        return False
    _, _, nb, m, n, k = gemm_sizes(eqn)
    return la.dtype.kind in "iu" or has_gemm(la.dtype) or nb * m * n * k <= 64 * TINY


def _permuted(val, order):
    """``val`` read with its dimensions in ``order`` (a lit stays a lit)."""
    shape = tuple(val.shape[d] for d in order)
    if val.lit is not None:
        return Val(val.dtype, shape, lit=val.lit)
    return Val(val.dtype, shape, ref=val.ref, strides=tuple(val.strides[d] for d in order),
               offset=val.offset)


def _merged(val, groups):
    """Per dimension group, the stride of the group read as one dimension (0 when its
    size is 1), or None when some group is not dense."""
    out, at = [], 0
    for g in groups:
        dims = [d for d in range(at, at + g) if val.shape[d] != 1]
        at += g
        for x, y in zip(dims[:-1], dims[1:]):
            if val.strides[x] != val.strides[y] * val.shape[y]:
                return None
        out.append(val.strides[dims[-1]] if dims else 0)
    return out


@native("dot_general", _supports, complex=True)
def _dot_general(lw, fn, eqn, ins, outs):
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lf, rf, nb, m, n, k = gemm_sizes(eqn)
    out = eqn.outvars[0].aval
    optr = fn.ptr(outs[0])
    if out.size == 0:
        return
    dt = out.dtype
    # A as (batch, M, K) and B as (batch, K, N), each a strided Val
    a = _permuted(ins[0], tuple(lb) + tuple(lf) + tuple(lc))
    bv = _permuted(ins[1], tuple(rb) + tuple(rc) + tuple(rf))
    groups_a = (len(lb), len(lf), len(lc))
    groups_b = (len(rb), len(rc), len(rf))
    gemm = dt.kind in "fc" and has_gemm(dt) and nb * m * n * k > TINY
    alpha = eqn.params.get("accumulate")
    if alpha is not None and not (gemm and dt.kind == "f"):
        raise NotImplementedError(   # rewrite.fold_dot_updates admits only BLAS products
            f"dot_general with accumulate= needs a real BLAS product, got {dt} {(nb, m, n, k)}")
    if k == 0:
        zero = lw.const(dt, 0)
        fn.loop(out.size, lambda i: lw.store(fn, optr, dt, i, zero))
        return
    if not gemm:
        _loops(lw, fn, a, bv, groups_a, groups_b, (nb, m, n, k), optr, dt)
        return
    temps = []
    ta, a_ptr, lda, sa = _gemm_operand(lw, fn, a, groups_a, (nb, m, k), temps)
    tb, b_ptr, ldb, sb = _gemm_operand(lw, fn, bv, groups_b, (nb, k, n), temps)
    c = ins[2] if alpha is not None else None
    if c is not None and not (c.ref is outs[0] and c.contiguous):
        lw.copy(fn, c, optr)   # out = c + alpha * product: c copied in, then beta = 1
    gemm_calls(lw, fn, dt, (ta, tb), (nb, m, n, k), (a_ptr, lda, sa), (b_ptr, ldb, sb), optr,
               1.0 if alpha is None else alpha, 0.0 if alpha is None else 1.0)
    for t in temps:
        lw.release(t)


def _gemm_operand(lw, fn, v, groups, sizes, temps):
    """(trans flag, pointer, leading dimension, batch stride) of an operand viewed as
    (batch, rows, cols); copies it into that order when its layout does not fit."""
    nb, rows, cols = sizes
    if v.lit is None:
        mg = _merged(v, groups)
        if mg is not None:
            sbat, srow, scol = mg
            base = fn.b.gep(fn.ptr(v.ref), [ir.Constant(I64, v.offset)],
                            source_etype=_elt(v.dtype))
            if cols == 1 or scol == 1:
                ld = srow if rows > 1 else max(cols, 1)
                if ld >= max(1, cols):
                    return _NO_TRANS, base, ld, sbat
            if rows == 1 or srow == 1:
                ld = scol if cols > 1 else max(rows, 1)
                if ld >= max(1, rows):
                    return _TRANS, base, ld, sbat
    ref, own = lw.new_buffer(fn, ShapedArray(v.shape, v.dtype), False)
    lw.copy(fn, v, fn.ptr(ref))
    if own:
        temps.append(ref)
    return _NO_TRANS, fn.ptr(ref), max(cols, 1), rows * cols


def _elt(dtype):
    return lltype(dtype)


def gemm_calls(lw, fn, dt, trans, dims, A, B, optr, alpha=1.0, beta=0.0) -> None:
    """Emit ``nb`` row-major ``?gemm`` calls ``C = alpha op(A) op(B) + beta C``:
    ``trans`` the two CBLAS flags (111 no transpose, 112 transpose, 113 conjugate
    transpose), ``dims`` = (nb, m, n, k), ``A``/``B`` = (pointer, leading dimension,
    elements between batch members), ``optr`` the contiguous (nb, m, n) result."""
    lib = _library()
    it = I64 if lib["int"] == 64 else I32
    ft = _elt(dt)
    name = f"ft_cblas_{_PREFIX[dt]}gemm"
    # alpha and beta: by value for real types, by pointer for complex ones
    if dt.kind == "c":
        pa, pb = fn.alloca(dt.itemsize), fn.alloca(dt.itemsize)
        fn.eb.store(lw.const(dt, alpha), pa)
        fn.eb.store(lw.const(dt, beta), pb)
        alpha, beta, st = pa, pb, ir.PointerType()
    else:
        alpha, beta, st = ir.Constant(ft, alpha), ir.Constant(ft, beta), ft
    f = lw.module.globals.get(name)
    if f is None:
        f = ir.Function(lw.module, ir.FunctionType(ir.VoidType(), [
            I32, I32, I32, it, it, it, st, ir.PointerType(), it, ir.PointerType(), it, st,
            ir.PointerType(), it]), name)
    nb, m, n, k = dims
    (a_ptr, lda, sa), (b_ptr, ldb, sb) = A, B
    c = lambda v: ir.Constant(it, v)

    def one(bi):
        b = fn.b
        pa = b.gep(a_ptr, [b.mul(bi, ir.Constant(I64, sa))], source_etype=ft)
        pb = b.gep(b_ptr, [b.mul(bi, ir.Constant(I64, sb))], source_etype=ft)
        pc = b.gep(optr, [b.mul(bi, ir.Constant(I64, m * n))], source_etype=ft)
        b.call(f, [ir.Constant(I32, _ROW_MAJOR), ir.Constant(I32, trans[0]),
                   ir.Constant(I32, trans[1]), c(m), c(n), c(k), alpha, pa, c(lda), pb,
                   c(ldb), beta, pc, c(max(n, 1))])
    fn.loop(nb, one)


def _loops(lw, fn, a, bv, ga, gb, dims, optr, dt):
    """out[b, i, j] = sum_k a[b, i, k] * bv[b, k, j] as plain loops over strided reads
    (the dimension groups are walked with their own strides, so views need no copy)."""
    nb, m, n, k = dims
    sa = _group_walk(a, ga)
    sb = _group_walk(bv, gb)
    kind = dt.kind

    def body(idxs):
        bi, i, j = idxs
        b = fn.b
        acc_ptr = b.gep(optr, [b.add(b.mul(b.add(b.mul(bi, ir.Constant(I64, m)), i),
                                           ir.Constant(I64, n)), j)], source_etype=_elt(dt))
        lw_zero = lw.const(dt, 0)
        b.store(lw_zero, acc_ptr)

        def red(kk):
            bb = fn.b
            x = _read(lw, fn, a, [bi, i, kk], sa)
            y = _read(lw, fn, bv, [bi, kk, j], sb)
            cur = bb.load(acc_ptr, typ=_elt(dt))
            if kind == "c":
                new = complex_add(bb, cur, complex_mul(bb, x, y))
            else:
                new = bb.fadd(cur, bb.fmul(x, y)) if kind == "f" else bb.add(cur, bb.mul(x, y))
            bb.store(new, acc_ptr)
        fn.loop(k, red)
    fn.nest([nb, m, n], body)


def _group_walk(v, groups):
    """For each dimension group, a function i64 index -> element offset (unravels the
    group's index over its dimensions with their strides)."""
    walks, at = [], 0
    for g in groups:
        dims = list(range(at, at + g))
        at += g
        walks.append((dims, [v.shape[d] for d in dims],
                      [0 if v.lit is not None else v.strides[d] for d in dims]))
    return walks


def _read(lw, fn, v, idxs, walks):
    if v.lit is not None:
        return lw.const(v.dtype, v.lit)
    b = fn.b
    o = ir.Constant(I64, v.offset)
    for i, (dims, sizes, strides) in zip(idxs, walks):
        rem = i
        for d in reversed(range(len(dims))):
            if d == 0:
                q = rem
            else:
                q = b.urem(rem, ir.Constant(I64, sizes[d]))
                rem = b.udiv(rem, ir.Constant(I64, sizes[d]))
            if strides[d]:
                o = b.add(o, b.mul(q, ir.Constant(I64, strides[d])))
    return lw.load(fn, fn.ptr(v.ref), v.dtype, o)

