"""``slogdet``, ``svd`` and ``lu`` natively: LAPACK ``?getrf`` and ``?gesdd`` (scipy's
``cython_lapack`` pointers, registered by ``lapack``) called from the generated code.

Each factors a column-major copy of each matrix, as numpy.linalg and scipy's
``lu_factor`` do, so the factors are LAPACK's for A itself (the same routines: the
same singular vectors, signs included, and the same pivots). ``slogdet`` follows numpy's loop: the sign of the row swaps times the
signs of U's diagonal, and the sum of ``log|u_ii|`` in order (libm's log); an exactly
singular matrix (``info > 0``) gives sign 0 and ``-inf``. ``svd``'s workspace is sized
by LAPACK's own query when the program is compiled; a matrix for which ``?gesdd``
fails (``info != 0``: no convergence, NaN input) gives NaN outputs, as the numpy
implementation does. ``lu`` takes real float32/float64 only (complex ``lu`` has no
primitive). Complex ``cholesky``,
``det``, ``slogdet`` are numpy.linalg's: ``zpotrf``/``zgetrf`` in complex128 (numpy
computes complex64 in double and rounds), then numpy's own loops, bit for bit; so are
``qr`` and ``svd`` (non-empty) of every dtype: ``?geqrf`` + ``?orgqr``/``?ungqr`` and
``?gesdd`` in double (``sgesdd``'s singular vectors differ in sign from ``dgesdd``'s, so
float32 under jit disagreed with eager). The real ``cholesky`` and ``det`` emitters
(``lapack``) are registered here beside them.

>>> sorted(n for n in ("slogdet", "svd", "lu") if n in NATIVE)
['lu', 'slogdet', 'svd']
"""
from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from jaxpr_ir import ShapedArray
from .equations import NATIVE, if_then, native
from .lapack import (available, char_cell, cholesky_real, column_major, det_real,
                     fill_if_failed, int_cell, nonfinite_status, routine_decl, stack_count)
from .lapack_eig import Bufs, cast_complex, double_column_major
from .ops_complex import make
from .lltypes import F64, I32, I64, const, lltype
from .values import Val
from .vmath import libm_decl

try:
    from scipy.linalg import lapack as _scipy_lapack
except ImportError:     # pragma: no cover (scipy is a dependency)
    _scipy_lapack = None

__all__ = ["gesdd_lwork"]


def _c64(v):
    return ir.Constant(I64, v)


_FLOATS = tuple(np.dtype(d) for d in (np.float32, np.float64, np.complex64, np.complex128))


def _supports_cholesky(eqn, planner):
    return eqn.inputs[0].aval.dtype in _FLOATS and available()


@native("cholesky", _supports_cholesky, complex=True)
def _cholesky(lw, fn, eqn, ins, outs):
    # complex as numpy.linalg.cholesky (the host step): zpotrf('L') of the column-major
    # copy in complex128 (numpy computes complex64 in double and rounds), the strict
    # upper triangle zeroed; info != 0 (not positive definite, NaN pivot) gives nan+0j
    a = eqn.inputs[0].aval
    if a.dtype.kind != "c":
        return cholesky_real(lw, fn, eqn, ins, outs)
    n = a.shape[-1]
    nb = stack_count(a)
    if n == 0 or nb == 0:
        return
    cdt, kdt = a.dtype, np.dtype(np.complex128)
    bufs = Bufs(lw, fn)
    mats = double_column_major(lw, fn, bufs, ins[0], a, kdt)
    potrf = routine_decl(lw, kdt, "potrf", 5)
    uplo, n_cell, info = char_cell(fn, "L"), int_cell(fn, n), int_cell(fn, 0)
    out, ct = fn.ptr(outs[0]), lltype(cdt)
    zero = ir.Constant(lltype(kdt), None)

    def one_matrix(bi):
        bb = fn.b
        pa = bb.gep(mats, [bb.mul(bi, _c64(n * n))], source_etype=lltype(kdt))
        po = bb.gep(out, [bb.mul(bi, _c64(n * n))], source_etype=ct)
        bb.call(potrf, [uplo, n_cell, pa, n_cell, info])

        def row(r):
            def cell(c):
                b2 = fn.b
                v = lw.load(fn, pa, kdt, b2.add(r, b2.mul(c, _c64(n))))
                v = b2.select(b2.icmp_signed(">", c, r), zero, v)
                lw.store(fn, po, cdt, b2.add(b2.mul(r, _c64(n)), c), cast_complex(b2, v, ct))
            fn.loop(n, cell)
        fn.loop(n, row)
        fill_if_failed(lw, fn, info, [(po, n * n)], cdt)
    fn.loop(nb, one_matrix)
    bufs.release()


def _complex_slogdet(lw, fn, a, val, finish):
    """numpy.linalg's complex slogdet of each matrix of ``val`` (aval ``a``, n > 0):
    zgetrf of the column-major copy in complex128 (numpy computes complex64 in double),
    sign = ±1 from the row swaps times each ``u_ii / hypot(u_ii)`` (numpy's complex
    product, in order), log = the sum of ``log(hypot(u_ii))``; info > 0 gives 0 and
    -inf. ``finish(bi, sign_re, sign_im, log)`` stores matrix ``bi``'s results."""
    n = a.shape[-1]
    nb = stack_count(a)
    kdt = np.dtype(np.complex128)
    bufs = Bufs(lw, fn)
    mats = double_column_major(lw, fn, bufs, val, a, kdt)
    piv, _ = bufs.new((n,), np.int32)
    getrf = routine_decl(lw, kdt, "getrf", 6)
    hypot, log = libm_decl(lw.module, "hypot", F64, 2), libm_decl(lw.module, "log", F64, 1)
    n_cell, info = int_cell(fn, n), int_cell(fn, 0)
    sr, si, acc = fn.alloca(8), fn.alloca(8), fn.alloca(8)
    one, zero = ir.Constant(F64, 1.0), ir.Constant(F64, 0.0)

    def one_matrix(bi):
        bb = fn.b
        pa = bb.gep(mats, [bb.mul(bi, _c64(n * n))], source_etype=lltype(kdt))
        bb.call(getrf, [n_cell, n_cell, pa, n_cell, piv, info])
        for cell, v in ((sr, one), (si, zero), (acc, zero)):
            bb.store(v, cell)

        def swaps(i):
            b2 = fn.b
            swapped = b2.icmp_signed("!=", lw.load(fn, piv, np.int32, i),
                                     b2.trunc(b2.add(i, _c64(1)), I32))
            s = b2.load(sr, typ=F64)
            b2.store(b2.select(swapped, b2.fneg(s), s), sr)
        fn.loop(n, swaps)

        def diagonal(i):
            b2 = fn.b
            u = lw.load(fn, pa, kdt, b2.mul(i, _c64(n + 1)))
            ur, ui = b2.extract_value(u, 0), b2.extract_value(u, 1)
            mag = b2.call(hypot, [ur, ui])
            er, ei = b2.fdiv(ur, mag), b2.fdiv(ui, mag)
            ar, ai = b2.load(sr, typ=F64), b2.load(si, typ=F64)
            b2.store(b2.fsub(b2.fmul(ar, er), b2.fmul(ai, ei)), sr)
            b2.store(b2.fadd(b2.fmul(ar, ei), b2.fmul(ai, er)), si)
            b2.store(b2.fadd(b2.load(acc, typ=F64), b2.call(log, [mag])), acc)
        fn.loop(n, diagonal)
        failed = fn.b.icmp_signed("!=", fn.b.load(info, typ=I32), ir.Constant(I32, 0))

        def singular():
            for cell, v in ((sr, zero), (si, zero), (acc, ir.Constant(F64, float("-inf")))):
                fn.b.store(v, cell)
        if_then(fn, failed, singular)
        finish(bi, fn.b.load(sr, typ=F64), fn.b.load(si, typ=F64), fn.b.load(acc, typ=F64))
    fn.loop(nb, one_matrix)
    bufs.release()


def _complex_det_or_slogdet(lw, fn, eqn, ins, outs):
    a = eqn.inputs[0].aval
    n = a.shape[-1]
    nb = stack_count(a)
    cdt = a.dtype
    ct = lltype(cdt)
    outs_p = [fn.ptr(o) for o in outs]
    if nb == 0:
        return
    if n == 0:
        for p, v in zip(outs_p, (1.0, 0.0)):
            dt = cdt if v else np.dtype(cdt.char.lower())
            fn.loop(nb, lambda i, p=p, v=v, dt=dt: lw.store(fn, p, dt, i, const(dt, v)))
        return
    pt = ct.elements[0]

    def narrow(b, v):
        return v if pt == F64 else b.fptrunc(v, pt)

    if eqn.primitive.name == "det":     # numpy: sign * (exp(log) + 0j), complex product
        exp = libm_decl(lw.module, "exp", F64, 1)

        def finish(bi, s_re, s_im, logdet):
            b = fn.b
            e, z = b.call(exp, [logdet]), ir.Constant(F64, 0.0)
            re = b.fsub(b.fmul(s_re, e), b.fmul(s_im, z))
            im = b.fadd(b.fmul(s_re, z), b.fmul(s_im, e))
            lw.store(fn, outs_p[0], cdt, bi, cast_complex(b, make(b, lltype(np.complex128),
                                                                  re, im), ct))
    else:
        def finish(bi, s_re, s_im, logdet):
            b = fn.b
            lw.store(fn, outs_p[0], cdt, bi, make(b, ct, narrow(b, s_re), narrow(b, s_im)))
            lw.store(fn, outs_p[1], np.dtype(cdt.char.lower()), bi, narrow(b, logdet))
    _complex_slogdet(lw, fn, a, ins[0], finish)


def _supports_det(eqn, planner):
    return eqn.inputs[0].aval.dtype in _FLOATS and available()


@native("det", _supports_det, complex=True)
def _det(lw, fn, eqn, ins, outs):
    if eqn.inputs[0].aval.dtype.kind == "c":
        return _complex_det_or_slogdet(lw, fn, eqn, ins, outs)
    return det_real(lw, fn, eqn, ins, outs)


@native("slogdet", _supports_det, complex=True)
def _slogdet(lw, fn, eqn, ins, outs):
    a = eqn.inputs[0].aval
    if a.dtype.kind == "c":
        return _complex_det_or_slogdet(lw, fn, eqn, ins, outs)
    n = a.shape[-1]
    nb = stack_count(a)
    dt = a.dtype
    ft = lltype(dt)
    sign_out, log_out = fn.ptr(outs[0]), fn.ptr(outs[1])
    one, zero = ir.Constant(ft, 1.0), ir.Constant(ft, 0.0)
    if nb == 0:
        return
    if n == 0:
        fn.loop(nb, lambda i: (lw.store(fn, sign_out, dt, i, one),
                               lw.store(fn, log_out, dt, i, zero)))
        return
    getrf = routine_decl(lw, dt, "getrf", 6)
    log = libm_decl(lw.module, "log" if dt == np.float64 else "logf", ft, 1)
    mats, own_m = lw.new_buffer(fn, ShapedArray(a.shape, dt), False)
    piv, own_p = lw.new_buffer(fn, ShapedArray((n,), np.int32), False)
    lw.copy(fn, ins[0], fn.ptr(mats), dst_strides=column_major(a.shape))
    n_cell, info = int_cell(fn, n), int_cell(fn, 0)
    sign_acc, log_acc = fn.alloca(8), fn.alloca(8)
    m_ptr, p_ptr = fn.ptr(mats), fn.ptr(piv)

    def one_matrix(bi):
        bb = fn.b
        pa = bb.gep(m_ptr, [bb.mul(bi, _c64(n * n))], source_etype=ft)
        bb.call(getrf, [n_cell, n_cell, pa, n_cell, p_ptr, info])
        bb.store(one, sign_acc)
        bb.store(zero, log_acc)

        def swaps(i):       # numpy: the permutation's sign first
            b2 = fn.b
            swapped = b2.icmp_signed("!=", lw.load(fn, p_ptr, np.int32, i),
                                     b2.trunc(b2.add(i, _c64(1)), I32))
            s = b2.load(sign_acc, typ=ft)
            b2.store(b2.select(swapped, b2.fneg(s), s), sign_acc)
        fn.loop(n, swaps)

        def diagonal(i):    # then each pivot's sign and log|pivot|, in order
            b2 = fn.b
            u = lw.load(fn, pa, dt, b2.mul(i, _c64(n + 1)))
            negative = b2.fcmp_ordered("<", u, zero)
            s = b2.load(sign_acc, typ=ft)
            b2.store(b2.select(negative, b2.fneg(s), s), sign_acc)
            mag = b2.select(negative, b2.fneg(u), u)
            b2.store(b2.fadd(b2.load(log_acc, typ=ft), b2.call(log, [mag])), log_acc)
        fn.loop(n, diagonal)
        failed = fn.b.icmp_signed("!=", fn.b.load(info, typ=I32), ir.Constant(I32, 0))

        def singular():
            fn.b.store(zero, sign_acc)
            fn.b.store(ir.Constant(ft, float("-inf")), log_acc)
        if_then(fn, failed, singular)
        lw.store(fn, sign_out, dt, bi, fn.b.load(sign_acc, typ=ft))
        lw.store(fn, log_out, dt, bi, fn.b.load(log_acc, typ=ft))
    fn.loop(nb, one_matrix)
    for ref, owned in ((mats, own_m), (piv, own_p)):
        if owned:
            lw.release(ref)


def gesdd_lwork(dtype, m: int, n: int, compute_uv: bool, full_matrices: bool) -> int:
    """The ``?gesdd`` workspace for an m × n matrix: LAPACK's own optimal size (asked
    once, when the program is compiled), at least the documented minimum.

    >>> gesdd_lwork(np.float64, 4, 3, True, False) >= 4 * 9 + 6 * 3 + 4
    True
    """
    k, big = min(m, n), max(m, n)
    if compute_uv:      # the minimum of LAPACK's documentation, old and new
        minimum = max(4 * k * k + 6 * k + big, 3 * k * k + max(big, 4 * k * k + 4 * k))
    else:
        minimum = 3 * k + max(big, 7 * k)
    query = 0
    if _scipy_lapack is not None:
        q = _scipy_lapack.dgesdd_lwork if np.dtype(dtype) == np.float64 else \
            _scipy_lapack.sgesdd_lwork
        work, info = q(m, n, compute_uv=int(compute_uv), full_matrices=int(full_matrices))
        query = int(work) if info == 0 else 0
    return max(1, minimum, query)


def _call_if_finite(lw, fn, call, ptr, real_dt, count, info):
    """``call()`` when the ``count`` reals (``real_dt``) at ``ptr`` are all finite; else
    ``info`` = 1 without calling, so the caller's NaN fill runs, as the host step's
    (LAPACK leaves non-finite input undefined: numpy's svd gives NaN singular values
    beside finite vectors, or LinAlgError, by shape; a hang was reported once)."""
    bad = int_cell(fn, 0)
    nonfinite_status(lw, fn, ptr, real_dt, count, bad)
    finite = fn.b.icmp_signed("==", fn.b.load(bad, typ=I32), ir.Constant(I32, 0))
    if_then(fn, finite, call)
    if_then(fn, fn.b.not_(finite), lambda: fn.b.store(ir.Constant(I32, 1), info))


def _supports_svd(eqn, planner):
    a = eqn.inputs[0].aval
    return a.dtype in _FLOATS and available() and a.shape[-1] > 0 and a.shape[-2] > 0


@native("svd", _supports_svd, complex=True)
def _svd(lw, fn, eqn, ins, outs):
    # as numpy.linalg.svd (the host step): ?gesdd of the column-major copy in double
    # (numpy computes float32 and complex64 in double and rounds: sgesdd's singular
    # vectors may differ from dgesdd's in sign), LAPACK's workspace query; info != 0
    # gives NaN outputs (nan + 0j), as host_multi
    a = eqn.inputs[0].aval
    m, n = a.shape[-2:]
    k = min(m, n)
    nb = stack_count(a)
    if nb == 0:
        return
    cdt = a.dtype
    cplx = cdt.kind == "c"
    kdt = np.dtype(np.complex128 if cplx else np.float64)
    rdt = np.dtype(cdt.char.lower())
    full, uv = eqn.params["full_matrices"], eqn.params["compute_uv"]
    ucols, vrows = (m, n) if full else (k, k)
    lwork = _zgesdd_lwork(m, n, uv, full) if cplx else gesdd_lwork(kdt, m, n, uv, full)
    bufs = Bufs(lw, fn)
    mats = double_column_major(lw, fn, bufs, ins[0], a, kdt)
    work, _ = bufs.new((lwork,), kdt)
    rwork = []      # zgesdd's real workspace, between lwork and iwork
    if cplx:
        rwork = [bufs.new((k * max(5 * k + 7, 2 * max(m, n) + 2 * k + 1) + 7 * k,),
                          np.float64)[0]]
    iwork, _ = bufs.new((8 * k,), np.int32)
    sbuf, _ = bufs.new((k,), np.float64)
    u_ptr = bufs.new((m, ucols), kdt)[0] if uv else work     # not referenced by jobz='N'
    v_ptr = bufs.new((vrows, n), kdt)[0] if uv else work
    cells = dict(jobz=char_cell(fn, "N" if not uv else "A" if full else "S"),
                 m=int_cell(fn, m), n=int_cell(fn, n), ldu=int_cell(fn, m if uv else 1),
                 ldvt=int_cell(fn, vrows if uv else 1), lwork=int_cell(fn, lwork),
                 info=int_cell(fn, 0))
    gesdd = routine_decl(lw, kdt, "gesdd", 14 + len(rwork))
    s_out = fn.ptr(outs[0])

    def one_matrix(bi):
        bb = fn.b
        pa = bb.gep(mats, [bb.mul(bi, _c64(m * n))], source_etype=lltype(kdt))
        _call_if_finite(lw, fn, lambda: fn.b.call(gesdd, [
            cells["jobz"], cells["m"], cells["n"], pa, cells["m"], sbuf, u_ptr, cells["ldu"],
            v_ptr, cells["ldvt"], work, cells["lwork"]] + rwork + [iwork, cells["info"]]),
            pa, np.float64, (2 if cplx else 1) * m * n, cells["info"])
        ps = fn.b.gep(s_out, [fn.b.mul(bi, _c64(k))], source_etype=lltype(rdt))
        fn.loop(k, lambda i: lw.store(fn, ps, rdt, i, _narrow_to(
            fn.b, lw.load(fn, sbuf, np.float64, i), lltype(rdt))))
        fill_if_failed(lw, fn, cells["info"], [(ps, k)], rdt)
        if uv:
            ct = lltype(cdt)
            pu = fn.b.gep(fn.ptr(outs[1]), [fn.b.mul(bi, _c64(m * ucols))], source_etype=ct)
            pv = fn.b.gep(fn.ptr(outs[2]), [fn.b.mul(bi, _c64(vrows * n))], source_etype=ct)
            _to_row_major(lw, fn, (u_ptr, kdt), (pu, cdt), m, ucols)
            _to_row_major(lw, fn, (v_ptr, kdt), (pv, cdt), vrows, n)
            fill_if_failed(lw, fn, cells["info"], [(pu, m * ucols), (pv, vrows * n)], cdt)
    fn.loop(nb, one_matrix)
    bufs.release()


def _to_row_major(lw, fn, src, dst, rows, cols):
    """The column-major ``rows`` x ``cols`` matrix ``src`` (pointer, double dtype) into
    the row-major ``dst`` (pointer, output dtype), each entry rounded once."""
    (sp, kdt), (dp, cdt) = src, dst
    cast = cast_complex if cdt.kind == "c" else _narrow_to

    def row(r):
        def cell(c):
            b = fn.b
            v = lw.load(fn, sp, kdt, b.add(r, b.mul(c, _c64(rows))))
            lw.store(fn, dp, cdt, b.add(b.mul(r, _c64(cols)), c), cast(b, v, lltype(cdt)))
        fn.loop(cols, cell)
    fn.loop(rows, row)


def _supports_lu(eqn, planner):
    a = eqn.inputs[0].aval
    return (a.dtype in (np.float32, np.float64) and available() and a.shape[-1] > 0
            and a.shape[-1] == a.shape[-2])      # rectangular: the impl, as a host step


@native("lu", _supports_lu)
def _lu(lw, fn, eqn, ins, outs):
    # as the numpy implementation (scipy's lu_factor: ?getrf of A itself, column-major):
    # 0-based pivots, the permutation they make, and NaN / identity pivots for a matrix
    # holding inf or NaN (LAPACK's result is undefined there)
    a = eqn.inputs[0].aval
    n = a.shape[-1]
    nb = stack_count(a)
    if nb == 0:
        return
    dt = a.dtype
    ft = lltype(dt)
    getrf = routine_decl(lw, dt, "getrf", 6)
    mats, own_m = lw.new_buffer(fn, ShapedArray(a.shape, dt), False)
    lw.copy(fn, ins[0], fn.ptr(mats), dst_strides=column_major(a.shape))
    n_cell, info, finite = int_cell(fn, n), int_cell(fn, 0), int_cell(fn, 1)
    m_ptr, piv_out, perm_out = fn.ptr(mats), fn.ptr(outs[1]), fn.ptr(outs[2])
    i32 = lambda v: ir.Constant(I32, v)     # noqa: E731

    def one_matrix(bi):
        bb = fn.b
        pa = bb.gep(m_ptr, [bb.mul(bi, _c64(n * n))], source_etype=ft)
        pp = bb.gep(piv_out, [bb.mul(bi, _c64(n))], source_etype=I32)
        pq = bb.gep(perm_out, [bb.mul(bi, _c64(n))], source_etype=I32)
        bb.store(i32(1), finite)

        def check(e):       # x - x is NaN exactly for inf and NaN
            b2 = fn.b
            v = lw.load(fn, pa, dt, e)
            bad = b2.fcmp_unordered("uno", b2.fsub(v, v), ir.Constant(ft, 0.0))
            b2.store(b2.select(bad, i32(0), b2.load(finite, typ=I32)), finite)
        fn.loop(n * n, check)
        ok = fn.b.icmp_signed("!=", fn.b.load(finite, typ=I32), i32(0))

        def factor():
            fn.b.call(getrf, [n_cell, n_cell, pa, n_cell, pp, info])
            fn.loop(n, lambda i: lw.store(fn, pp, np.int32, i, fn.b.sub(
                lw.load(fn, pp, np.int32, i), i32(1))))

        def poison():
            fn.loop(n * n, lambda e: lw.store(fn, pa, dt, e, ir.Constant(ft, float("nan"))))
            fn.loop(n, lambda i: lw.store(fn, pp, np.int32, i, fn.b.trunc(i, I32)))
        if_then(fn, ok, factor)
        if_then(fn, fn.b.not_(ok), poison)
        fn.loop(n, lambda i: lw.store(fn, pq, np.int32, i, fn.b.trunc(i, I32)))

        def swap(i):        # row i was swapped with row pivots[i], in turn
            b2 = fn.b
            j = b2.sext(lw.load(fn, pp, np.int32, i), I64)
            pi, pj = lw.load(fn, pq, np.int32, i), lw.load(fn, pq, np.int32, j)
            lw.store(fn, pq, np.int32, i, pj)
            lw.store(fn, pq, np.int32, j, pi)
        fn.loop(n, swap)
    fn.loop(nb, one_matrix)
    src = Val(dt, a.shape, ref=mats, strides=tuple(column_major(a.shape)), offset=0)
    lw.copy(fn, src, fn.ptr(outs[0]))
    if own_m:
        lw.release(mats)


def _supports_qr(eqn, planner):
    return eqn.inputs[0].aval.dtype in _FLOATS and available()


@native("qr", _supports_qr, complex=True)
def _qr(lw, fn, eqn, ins, outs):
    # as numpy.linalg.qr (the host step): ?geqrf + ?orgqr/?ungqr in double (numpy
    # computes float32/complex64 in double and rounds), R = triu of the first rows. An m x 0
    # matrix has no reflectors: its complete Q is the identity (for real input too)
    a = eqn.inputs[0].aval
    m, n = a.shape[-2:]
    nb = stack_count(a)
    qdt, qcols = a.dtype, eqn.outvars[0].aval.shape[-1]
    if nb == 0 or m == 0 or qcols == 0:
        return
    if n == 0:
        q_out = fn.ptr(outs[0])
        fn.loop(nb * m * qcols, lambda e: lw.store(fn, q_out, qdt, e, fn.b.select(
            fn.b.icmp_signed("==", fn.b.urem(fn.b.urem(e, _c64(m * m)), _c64(m + 1)),
                             _c64(0)), const(qdt, 1.0),
            const(qdt, 0.0))))
        return
    _qr_in_double(lw, fn, eqn, ins, outs)


def _qr_in_double(lw, fn, eqn, ins, outs):
    # ?geqrf + ?orgqr/?ungqr of the column-major copy in double, as numpy.linalg.qr
    # (float32 in sgeqrf gave Q columns of another sign than eager for rank-deficient
    # input, where a reflector's pivot is rounding noise)
    a = eqn.inputs[0].aval
    m, n = a.shape[-2:]
    nb = stack_count(a)
    k = min(m, n)
    qcols, rrows = eqn.outvars[0].aval.shape[-1], eqn.outvars[1].aval.shape[-2]
    cdt = a.dtype
    kdt = np.dtype(np.complex128 if cdt.kind == "c" else np.float64)
    ct, kt = lltype(cdt), lltype(kdt)
    cast = cast_complex if cdt.kind == "c" else _narrow_to
    geqrf = routine_decl(lw, kdt, "geqrf", 8)
    ungqr = routine_decl(lw, kdt, "ungqr" if cdt.kind == "c" else "orgqr", 9)
    lwork = 64 * max(m, n, qcols)
    bufs = Bufs(lw, fn)
    mats = double_column_major(lw, fn, bufs, ins[0], a, kdt)
    q_ptr, _ = bufs.new((m, qcols), kdt)
    tau, _ = bufs.new((k,), kdt)
    work, _ = bufs.new((lwork,), kdt)
    m_cell, n_cell, k_cell = int_cell(fn, m), int_cell(fn, n), int_cell(fn, k)
    q_cell, lw_cell, info = int_cell(fn, qcols), int_cell(fn, lwork), int_cell(fn, 0)
    q_out, r_out = fn.ptr(outs[0]), fn.ptr(outs[1])
    zero = ir.Constant(kt, None)

    def one_matrix(bi):
        bb = fn.b
        pa = bb.gep(mats, [bb.mul(bi, _c64(m * n))], source_etype=kt)
        bb.call(geqrf, [m_cell, n_cell, pa, m_cell, tau, work, lw_cell, info])
        pr = bb.gep(r_out, [bb.mul(bi, _c64(rrows * n))], source_etype=ct)

        def r_row(i):
            def r_cell(j):
                b2 = fn.b
                v = lw.load(fn, pa, kdt, b2.add(i, b2.mul(j, _c64(m))))
                v = b2.select(b2.icmp_signed("<=", i, j), v, zero)
                lw.store(fn, pr, cdt, b2.add(b2.mul(i, _c64(n)), j), cast(b2, v, ct))
            fn.loop(n, r_cell)
        fn.loop(rrows, r_row)
        filled = min(n, qcols) * m        # the reflectors, column-major with lda m
        fn.loop(filled, lambda e: lw.store(fn, q_ptr, kdt, e, lw.load(fn, pa, kdt, e)))
        fn.loop(m * qcols - filled, lambda e: lw.store(
            fn, q_ptr, kdt, fn.b.add(e, _c64(filled)), zero))
        fn.b.call(ungqr, [m_cell, q_cell, k_cell, q_ptr, m_cell, tau, work, lw_cell, info])
        pq = fn.b.gep(q_out, [fn.b.mul(bi, _c64(m * qcols))], source_etype=ct)
        _to_row_major(lw, fn, (q_ptr, kdt), (pq, cdt), m, qcols)
    fn.loop(nb, one_matrix)
    bufs.release()


def _zgesdd_lwork(m, n, compute_uv, full_matrices):
    """numpy's ``zgesdd`` workspace: LAPACK's own query, as numpy asks it (the size
    picks gesdd's path, so the same size gives the same bits)."""
    k, big = min(m, n), max(m, n)
    minimum = 2 * k + big + (k * k + k if compute_uv else 0)
    if _scipy_lapack is None:   # pragma: no cover
        return minimum
    work, info = _scipy_lapack.zgesdd_lwork(m, n, compute_uv=int(compute_uv),
                                            full_matrices=int(full_matrices))
    return max(1, int(np.real(work))) if info == 0 else minimum


def _narrow_to(b, v, t):
    return v if v.type == t else b.fptrunc(v, t)
