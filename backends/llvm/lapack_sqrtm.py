"""``sqrtm`` natively: the principal matrix square root by the Schur method, per matrix
of a stack, no Python per call.

It does what the host implementation (``functrans.primitives.linalg_sqrtm``) does, step
for step, in complex128 whatever the input (float32/complex64 results are rounded at
the end, as the host rounds them): the column-major copy of each matrix to LAPACK
``zgees`` (``jobvs='V'``, ``sort='N'``, the workspace ``scipy.linalg.schur`` asks for,
so ``t`` and ``z`` are the host's bits), then the upper-triangular root ``r`` of ``t``
by the column recurrence ``r_ii = csqrt(t_ii)``, ``r_ij = (t_ij - sum_{i<k<j} r_ik r_kj)
/ (r_ii + r_jj)`` (the sum in order, k upward; numpy's Smith division; a zero numerator
gives 0, JAX's rule), then ``(z r) z^H`` by two BLAS ``zgemm`` calls. A matrix holding
inf or NaN, or for which ``zgees`` reports failure, gives NaN + 0j, as on the host.
Needs LAPACK, a complex BLAS ``zgemm`` and libm's ``csqrt`` (x86-64 System V);
elsewhere ``sqrtm`` stays a host step.

>>> from backends.llvm.equations import NATIVE
>>> NATIVE["sqrtm"].complex
True
"""
from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from .blas import gemm_calls, has_gemm
from .equations import if_then, native
from .lapack import available, char_cell, column_major, int_cell, nonfinite_status, \
    routine_decl, stack_count
from .lapack_eig import Bufs, cast_complex
from .lapack_schur import gees_lwork
from .lltypes import C128, F64, I32, I64, const, lltype
from .ops_complex import LIBM_ABI, add, div, libm_call, make, mul, parts
from .values import Val

__all__: list[str] = []

_KDT = np.dtype(np.complex128)
_NO_TRANS, _CONJ_TRANS = 111, 113


def _c64(v):
    return ir.Constant(I64, v)


def _supports_sqrtm(eqn, planner):
    dt = eqn.inputs[0].aval.dtype
    return (dt.kind in "fc" and dt.itemsize in (4, 8, 16) and available() and LIBM_ABI and
            has_gemm(_KDT))


def _to_complex(lw, fn, bufs, val, a):
    """The stack ``val`` (aval ``a``) copied column-major per matrix, as complex128."""
    if a.dtype == _KDT:
        mats, _ = bufs.new(a.shape, _KDT)
        lw.copy(fn, val, mats, dst_strides=column_major(a.shape))
        return mats
    narrow, _ = bufs.new(a.shape, a.dtype)
    lw.copy(fn, val, narrow, dst_strides=column_major(a.shape))
    mats, _ = bufs.new(a.shape, _KDT)
    zero = ir.Constant(F64, 0.0)

    def widen(x):
        return x if x.type == F64 else fn.b.fpext(x, F64)

    def one(e):
        v = lw.load(fn, narrow, a.dtype, e)
        re, im = (v, zero) if a.dtype.kind == "f" else parts(fn.b, v)
        lw.store(fn, mats, _KDT, e, make(fn.b, C128, widen(re), widen(im)))
    fn.loop(a.size, one)
    return mats


def _triangular_root(lw, fn, n, t, r, acc):
    """Emit: the row-major ``r`` (zeroed here) = the upper-triangular root of the
    column-major upper-triangular ``t`` (both n × n complex128); ``acc`` a 16-byte cell."""
    zero = const(_KDT, 0j)
    fn.loop(n * n, lambda e: lw.store(fn, r, _KDT, e, zero))
    at_t = lambda i, j: fn.b.add(i, fn.b.mul(j, _c64(n)))    # noqa: E731
    at_r = lambda i, j: fn.b.add(fn.b.mul(i, _c64(n)), j)    # noqa: E731
    fn.loop(n, lambda j: lw.store(fn, r, _KDT, at_r(j, j),
                                  libm_call(fn.b, "sqrt", lw.load(fn, t, _KDT, at_t(j, j)))))

    def column(j):
        def row(q):             # i = j - 1 - q: upward from the diagonal
            b = fn.b
            i = b.sub(b.sub(j, _c64(1)), q)
            b.store(zero, acc)

            def term(p):        # k = i + 1 + p
                bb = fn.b
                k = bb.add(bb.add(i, _c64(1)), p)
                prod = mul(bb, lw.load(fn, r, _KDT, at_r(i, k)), lw.load(fn, r, _KDT, at_r(k, j)))
                bb.store(add(bb, bb.load(acc, typ=C128), prod), acc)
            fn.loop(q, term)
            b = fn.b
            s = b.load(acc, typ=C128)
            (tr, ti), (sr, si) = parts(b, lw.load(fn, t, _KDT, at_t(i, j))), parts(b, s)
            num = make(b, C128, b.fsub(tr, sr), b.fsub(ti, si))
            den = add(b, lw.load(fn, r, _KDT, at_r(i, i)), lw.load(fn, r, _KDT, at_r(j, j)))
            nr, ni = parts(b, num)
            f0 = ir.Constant(F64, 0.0)
            is_zero = b.and_(b.fcmp_ordered("==", nr, f0), b.fcmp_ordered("==", ni, f0))
            lw.store(fn, r, _KDT, at_r(i, j), b.select(is_zero, zero, div(b, num, den)))
        fn.loop(j, row)
    fn.loop(n, column)


@native("sqrtm", _supports_sqrtm, complex=True)
def _sqrtm(lw, fn, eqn, ins, outs):
    a = eqn.inputs[0].aval
    n = a.shape[-1]
    nb = stack_count(a)
    if n == 0 or nb == 0:
        return
    cdt = np.dtype(eqn.outvars[0].aval.dtype)
    stack = (nb, n, n)
    lwork = gees_lwork(_KDT, n)
    bufs = Bufs(lw, fn)
    mats = _to_complex(lw, fn, bufs, ins[0], a)          # column-major; becomes t
    vecs, vecs_ref = bufs.new(stack, _KDT)               # column-major Schur vectors
    roots, _ = bufs.new(stack, _KDT)                     # row-major triangular roots
    work, _ = bufs.new((lwork,), _KDT)
    w, _ = bufs.new((n,), _KDT)
    rwork, _ = bufs.new((n,), np.float64)
    bwork, _ = bufs.new((n,), np.int32)                  # unreferenced with sort='N'
    failed, _ = bufs.new((nb,), np.int32)
    c = dict(jobvs=char_cell(fn, "V"), sort=char_cell(fn, "N"), n=int_cell(fn, n),
             sdim=int_cell(fn, 0), lwork=int_cell(fn, lwork), info=int_cell(fn, 0),
             status=int_cell(fn, 0))
    gees = routine_decl(lw, _KDT, "gees", 15)
    acc = fn.alloca(16)
    ft = lltype(_KDT)
    nn = _c64(n * n)
    status = c["status"]

    def one_matrix(bi):
        b = fn.b
        pa = b.gep(mats, [b.mul(bi, nn)], source_etype=ft)
        pv = b.gep(vecs, [b.mul(bi, nn)], source_etype=ft)
        pr = b.gep(roots, [b.mul(bi, nn)], source_etype=ft)
        nonfinite_status(lw, fn, pa, np.float64, 2 * n * n, status)
        ok = lambda: fn.b.icmp_signed("==", fn.b.load(status, typ=I32),  # noqa: E731
                                      ir.Constant(I32, 0))

        def factor():
            fn.b.call(gees, [c["jobvs"], c["sort"], ir.Constant(ir.PointerType(), None),
                             c["n"], pa, c["n"], c["sdim"], w, pv, c["n"], work, c["lwork"],
                             rwork, bwork, c["info"]])
            fn.b.store(fn.b.load(c["info"], typ=I32), status)
        if_then(fn, ok(), factor)
        if_then(fn, ok(), lambda: _triangular_root(lw, fn, n, pa, pr, acc))
        lw.store(fn, failed, np.int32, bi, fn.b.load(status, typ=I32))
    fn.loop(nb, one_matrix)
    _products(lw, fn, bufs, (nb, n), vecs_ref, roots, cdt, fn.ptr(outs[0]), failed)
    bufs.release()


def _products(lw, fn, bufs, sizes, vecs_ref, roots, cdt, out, failed):
    """Emit: ``out`` = ``(z r) z^H`` per matrix (rounded to ``cdt``), NaN + 0j where
    ``failed`` (an i32 per matrix) is set."""
    nb, n = sizes
    stack = (nb, n, n)
    zr, _ = bufs.new(stack, _KDT)                        # z row-major
    lw.copy(fn, Val(_KDT, stack, ref=vecs_ref, strides=tuple(column_major(stack)), offset=0),
            zr)
    zrt, _ = bufs.new(stack, _KDT)
    gemm_calls(lw, fn, _KDT, (_NO_TRANS, _NO_TRANS), (nb, n, n, n), (zr, n, n * n),
               (roots, n, n * n), zrt)
    dest = out if cdt == _KDT else bufs.new(stack, _KDT)[0]
    gemm_calls(lw, fn, _KDT, (_NO_TRANS, _CONJ_TRANS), (nb, n, n, n), (zrt, n, n * n),
               (zr, n, n * n), dest)
    ct = lltype(cdt)
    if cdt != _KDT:
        fn.loop(nb * n * n, lambda e: lw.store(fn, out, cdt, e, cast_complex(
            fn.b, lw.load(fn, dest, _KDT, e), ct)))
    nan = const(cdt, complex(float("nan"), 0.0))

    def poison(bi):
        bad = fn.b.icmp_signed("!=", lw.load(fn, failed, np.int32, bi), ir.Constant(I32, 0))

        def fill():
            base = fn.b.mul(bi, _c64(n * n))
            fn.loop(n * n, lambda e: lw.store(fn, out, cdt, fn.b.add(base, e), nan))
        if_then(fn, bad, fill)
    fn.loop(nb, poison)
