"""``eigh`` and ``pinv`` natively, real and complex: LAPACK ``dsyevd``/``zheevd`` and
``dgesdd``/``zgesdd`` + BLAS ``dgemm``/``zgemm`` (scipy's ``cython_lapack`` and
``cython_blas`` pointers, registered by ``lapack``) called from the generated code,
per matrix of a stack, no Python per call.

Each does what the host step the eager interpreter runs does, through the same library
(scipy's LAPACK and BLAS), so the results are the same bits: the column-major copy of
each matrix in double precision (as numpy.linalg, which computes float32/complex64 in
double and rounds the results) and the workspace LAPACK's own query asks for (asked
when the program is compiled: the size picks the routines' blocked or unblocked
paths). OpenBLAS's threaded kernels round by thread count: matrices large enough to be
threaded (n ~ 100 and up) agree when both paths ran at the count ``threads.balance``
last set, as they do once a compiled program has run.

``eigh``: ``?heevd``/``?syevd`` with ``jobz='V'`` and the caller's triangle, then the
eigenvector phase of ``canonical_signs`` in double (the first entry of largest
magnitude, within 2^-20, made real and non-negative: ``re² + im²`` to find it, the
column times ``conj(lead) * (1/hypot(lead))`` as real products), then rounded.
``pinv``: ``?gesdd`` (``jobz='S'``), ``s⁺ = 1/s`` above ``rtol * s[0]`` (else 0),
``M = (U s⁺) Vt`` by ``?gemm`` and ``P = Mᴴ``: the host step makes the same
``?gemm`` call through ``scipy.linalg.blas``. A matrix holding inf or NaN (for
``eigh``: in the triangle it reads), or one for which LAPACK reports failure
(``info != 0``), gives NaN (``nan + 0j``) outputs, as the host steps do: LAPACK leaves
such input undefined.

>>> from backends.llvm.equations import NATIVE
>>> NATIVE["eigh"].complex and NATIVE["pinv"].complex
True
"""
from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from .equations import if_then, native
from .lapack import available, char_cell, fill_if_failed, int_cell, nonfinite_status, \
    routine_decl, stack_count
from .lapack_eig import Bufs, cast_complex, double_column_major
from .lltypes import F64, I32, I64, const, lltype
from .ops_complex import make
from .vmath import libm_decl

try:
    from scipy.linalg import lapack as _scipy_lapack
except ImportError:     # pragma: no cover (scipy is a dependency)
    _scipy_lapack = None

__all__ = ["heevd_work", "gesdd_work"]

_FLOATS = tuple(np.dtype(d) for d in (np.float32, np.float64, np.complex64, np.complex128))
_THRESHOLD = 1.0 - 2.0 ** -20       # canonical_signs' relative tie band


def _c64(v):
    return ir.Constant(I64, v)


def _double(dtype):
    return np.dtype(np.complex128 if np.dtype(dtype).kind == "c" else np.float64)


def heevd_work(dtype, n: int, lower: bool) -> tuple[int, int, int]:
    """``(lwork, lrwork, liwork)`` of ``zheevd`` (complex ``dtype``; lrwork 0 for
    ``dsyevd``) with eigenvectors: LAPACK's own query, as numpy asks it.

    >>> heevd_work(np.complex128, 3, True)[0] >= 2 * 3 + 9
    True
    """
    cplx = np.dtype(dtype).kind == "c"
    minimum = (2 * n + n * n, 1 + 5 * n + 2 * n * n, 3 + 5 * n) if cplx else \
        (1 + 6 * n + 2 * n * n, 0, 3 + 5 * n)
    if _scipy_lapack is None:   # pragma: no cover
        return minimum
    if cplx:
        work, iwork, rwork, info = _scipy_lapack.zheevd_lwork(n, compute_v=1, lower=int(lower))
        sizes = (int(np.real(work)), int(rwork), int(iwork))
    else:
        work, iwork, info = _scipy_lapack.dsyevd_lwork(n, compute_v=1, lower=int(lower))
        sizes = (int(work), 0, int(iwork))
    return tuple(max(1, s) for s in sizes) if info == 0 else minimum


def gesdd_work(dtype, m: int, n: int) -> int:
    """The ``?gesdd`` workspace for the reduced factors (``jobz='S'``) of an m × n
    matrix, in ``dtype``'s double precision: LAPACK's own query, as numpy asks it.

    >>> gesdd_work(np.complex64, 4, 3) >= 2 * 3 + 4 + 9 + 3
    True
    """
    kdt = _double(dtype)
    k, big = min(m, n), max(m, n)
    minimum = 2 * k + big + k * k + k if kdt.kind == "c" else 4 * k * k + 7 * k + big
    if _scipy_lapack is None:   # pragma: no cover
        return minimum
    query = _scipy_lapack.zgesdd_lwork if kdt.kind == "c" else _scipy_lapack.dgesdd_lwork
    work, info = query(m, n, compute_uv=1, full_matrices=0)
    return max(1, int(np.real(work))) if info == 0 else minimum


def _supports(eqn, planner):
    return eqn.inputs[0].aval.dtype in _FLOATS and available()


def _triangle_status(lw, fn, pa, kdt, n, lower, status):
    """``status`` = 1 when the read triangle of the column-major ``pa`` holds inf or
    NaN (either part of a complex entry), else 0."""
    fn.b.store(ir.Constant(I32, 0), status)
    parts = 2 if kdt.kind == "c" else 1

    def column(c):
        def row(r):
            b = fn.b
            inside = b.icmp_signed(">=" if lower else "<=", r, c)
            e = b.mul(b.add(r, b.mul(c, _c64(n))), _c64(parts))
            for p in range(parts):
                v = lw.load(fn, pa, np.float64, b.add(e, _c64(p)))
                bad = b.and_(inside, b.fcmp_unordered("uno", b.fsub(v, v), ir.Constant(F64, 0)))
                b.store(b.select(bad, ir.Constant(I32, 1), b.load(status, typ=I32)), status)
        fn.loop(n, row)
    fn.loop(n, column)


def _canonical_phase(lw, fn, col, kdt, n, cells, hypot):
    """``canonical_signs`` on one column (``col``: its n contiguous double entries):
    NaN-propagating max of the magnitudes, the first row within 2^-20 of it (row 0 when
    none), then the column negated (real, lead < 0) or turned by the lead's phase."""
    best, at = cells
    cplx = kdt.kind == "c"
    zero = ir.Constant(F64, 0.0)

    def parts(r):
        v = lw.load(fn, col, kdt, r)
        return (fn.b.extract_value(v, 0), fn.b.extract_value(v, 1)) if cplx else (v, None)

    def magnitude(r):
        re, im = parts(r)
        if cplx:        # re² + im², unfused, as numpy computes it
            return fn.b.fadd(fn.b.fmul(re, re), fn.b.fmul(im, im))
        return fn.b.select(fn.b.fcmp_ordered("<", re, zero), fn.b.fneg(re), re)

    fn.b.store(zero, best)

    def track_max(r):       # np.max: NaN once any magnitude is NaN
        b = fn.b
        m, cur = magnitude(r), b.load(best, typ=F64)
        take = b.and_(b.fcmp_unordered("ugt", m, cur), b.fcmp_ordered("ord", cur, cur))
        b.store(b.select(take, m, cur), best)
    fn.loop(n, track_max)
    thr = fn.b.fmul(fn.b.load(best, typ=F64), ir.Constant(F64, _THRESHOLD))
    fn.b.store(_c64(0), at)

    def track_first(i):     # walk up from the last row: the last hit is the first row
        b = fn.b
        r = b.sub(_c64(n - 1), i)
        hit = b.fcmp_ordered(">=", magnitude(r), thr)
        b.store(b.select(hit, r, b.load(at, typ=I64)), at)
    fn.loop(n, track_first)
    lead_re, lead_im = parts(fn.b.load(at, typ=I64))
    if not cplx:
        def flip(r):
            lw.store(fn, col, kdt, r, fn.b.fneg(lw.load(fn, col, kdt, r)))
        if_then(fn, fn.b.fcmp_ordered("<", lead_re, zero), lambda: fn.loop(n, flip))
        return
    size = fn.b.call(hypot, [lead_re, lead_im])

    def turn():
        b = fn.b
        scale = b.fdiv(ir.Constant(F64, 1.0), size)
        pr, pi = b.fmul(lead_re, scale), b.fmul(b.fneg(lead_im), scale)

        def one(r):
            b2 = fn.b
            vr, vi = parts(r)
            re = b2.fsub(b2.fmul(vr, pr), b2.fmul(vi, pi))
            im = b2.fadd(b2.fmul(vr, pi), b2.fmul(vi, pr))
            lw.store(fn, col, kdt, r, make(b2, lltype(kdt), re, im))
        fn.loop(n, one)
    if_then(fn, fn.b.fcmp_ordered(">", size, zero), turn)


def _narrow(b, v, dt):
    if dt.kind == "c":
        return cast_complex(b, v, lltype(dt))
    return v if lltype(dt) == F64 else b.fptrunc(v, lltype(dt))


@native("eigh", _supports, complex=True)
def _eigh(lw, fn, eqn, ins, outs):
    a = eqn.inputs[0].aval
    n = a.shape[-1]
    nb = stack_count(a)
    if n == 0 or nb == 0:
        return
    vdt, wdt = a.dtype, eqn.outvars[1].aval.dtype
    kdt = _double(vdt)
    cplx, lower = kdt.kind == "c", eqn.params["lower"]
    lwork, lrwork, liwork = heevd_work(kdt, n, lower)
    bufs = Bufs(lw, fn)
    mats = double_column_major(lw, fn, bufs, ins[0], a, kdt)
    w, _ = bufs.new((n,), np.float64)
    work, _ = bufs.new((lwork,), kdt)
    iwork, _ = bufs.new((liwork,), np.int32)
    c = dict(jobz=char_cell(fn, "V"), uplo=char_cell(fn, "L" if lower else "U"),
             n=int_cell(fn, n), lwork=int_cell(fn, lwork), lrwork=int_cell(fn, lrwork),
             liwork=int_cell(fn, liwork), info=int_cell(fn, 0))
    head = [c["jobz"], c["uplo"], c["n"], None, c["n"], w, work, c["lwork"]]
    if cplx:
        rwork, _ = bufs.new((lrwork,), np.float64)
        tail = [rwork, c["lrwork"], iwork, c["liwork"], c["info"]]
    else:
        tail = [iwork, c["liwork"], c["info"]]
    routine = routine_decl(lw, kdt, "heevd" if cplx else "syevd", len(head) + len(tail))
    hypot = libm_decl(lw.module, "hypot", F64, 2)
    cells = (fn.alloca(8), fn.alloca(8))
    info, kt = c["info"], lltype(kdt)
    v_out, w_out = fn.ptr(outs[0]), fn.ptr(outs[1])

    def one_matrix(bi):
        bb = fn.b
        pa = bb.gep(mats, [bb.mul(bi, _c64(n * n))], source_etype=kt)
        pv = bb.gep(v_out, [bb.mul(bi, _c64(n * n))], source_etype=lltype(vdt))
        pw = bb.gep(w_out, [bb.mul(bi, _c64(n))], source_etype=lltype(wdt))
        _triangle_status(lw, fn, pa, kdt, n, lower, info)
        ok = lambda: fn.b.icmp_signed("==", fn.b.load(info, typ=I32),  # noqa: E731
                                      ir.Constant(I32, 0))
        if_then(fn, ok(), lambda: fn.b.call(routine, head[:3] + [pa] + head[4:] + tail))

        def results():
            fn.loop(n, lambda j: lw.store(fn, pw, wdt, j, _narrow(
                fn.b, lw.load(fn, w, np.float64, j), wdt)))

            def column(j):
                col = fn.b.gep(pa, [fn.b.mul(j, _c64(n))], source_etype=kt)
                _canonical_phase(lw, fn, col, kdt, n, cells, hypot)
            fn.loop(n, column)

            def row(r):
                def cell(j):
                    b = fn.b
                    v = lw.load(fn, pa, kdt, b.add(r, b.mul(j, _c64(n))))
                    lw.store(fn, pv, vdt, b.add(b.mul(r, _c64(n)), j), _narrow(b, v, vdt))
                fn.loop(n, cell)
            fn.loop(n, row)
        if_then(fn, ok(), results)
        fill_if_failed(lw, fn, info, [(pw, n)], wdt)
        fill_if_failed(lw, fn, info, [(pv, n * n)], vdt)
    fn.loop(nb, one_matrix)
    bufs.release()


def _scale_column(lw, fn, u, s, kdt, m, ell, cutoff):
    """Column ``ell`` of the column-major (m, k) ``u`` times s⁺[ell]: 1/s[ell] above
    ``cutoff``, else 0 (each part of a complex entry: real products)."""
    b = fn.b
    one, zero = ir.Constant(F64, 1.0), ir.Constant(F64, 0.0)
    sv = lw.load(fn, s, np.float64, ell)
    keep = b.fcmp_ordered(">", sv, cutoff)
    inv = b.select(keep, b.fdiv(one, b.select(keep, sv, one)), zero)

    def cell(r):
        b2 = fn.b
        e = b2.add(r, b2.mul(ell, _c64(m)))
        v = lw.load(fn, u, kdt, e)
        if kdt.kind == "c":
            v = make(b2, lltype(kdt), b2.fmul(b2.extract_value(v, 0), inv),
                     b2.fmul(b2.extract_value(v, 1), inv))
        else:
            v = b2.fmul(v, inv)
        lw.store(fn, u, kdt, e, v)
    fn.loop(m, cell)


@native("pinv", _supports, complex=True)
def _pinv(lw, fn, eqn, ins, outs):
    a = eqn.inputs[0].aval
    m, n = a.shape[-2:]
    nb = stack_count(a)
    if nb == 0 or m == 0 or n == 0:
        return
    k, pdt = min(m, n), a.dtype
    kdt = _double(pdt)
    cplx, kt = kdt.kind == "c", lltype(kdt)
    lwork = gesdd_work(kdt, m, n)
    bufs = Bufs(lw, fn)
    mats = double_column_major(lw, fn, bufs, ins[0], a, kdt)
    work, _ = bufs.new((lwork,), kdt)
    iwork, _ = bufs.new((8 * k,), np.int32)
    s, _ = bufs.new((k,), np.float64)
    u, _ = bufs.new((m, k), kdt)
    vt, _ = bufs.new((k, n), kdt)
    prod, _ = bufs.new((m, n), kdt)
    c = dict(jobz=char_cell(fn, "S"), m=int_cell(fn, m), n=int_cell(fn, n),
             k=int_cell(fn, k), lwork=int_cell(fn, lwork), info=int_cell(fn, 0),
             no=char_cell(fn, "N"))
    alpha, beta = fn.alloca(kdt.itemsize), fn.alloca(kdt.itemsize)
    fn.eb.store(const(kdt, 1.0), alpha)
    fn.eb.store(const(kdt, 0.0), beta)
    args = [c["jobz"], c["m"], c["n"], None, c["m"], s, u, c["m"], vt, c["k"], work,
            c["lwork"]]
    if cplx:
        lrwork = k * max(5 * k + 7, 2 * max(m, n) + 2 * k + 1) + 7 * k
        args.append(bufs.new((lrwork,), np.float64)[0])
    args += [iwork, c["info"]]
    gesdd = routine_decl(lw, kdt, "gesdd", len(args))
    gemm = routine_decl(lw, kdt, "gemm", 13)
    info = c["info"]
    rtol = ir.Constant(F64, float(eqn.params["rtol"]))
    p_out = fn.ptr(outs[0])

    def one_matrix(bi):
        bb = fn.b
        pa = bb.gep(mats, [bb.mul(bi, _c64(m * n))], source_etype=kt)
        po = bb.gep(p_out, [bb.mul(bi, _c64(m * n))], source_etype=lltype(pdt))
        nonfinite_status(lw, fn, pa, np.float64, m * n * (2 if cplx else 1), info)
        ok = lambda: fn.b.icmp_signed("==", fn.b.load(info, typ=I32),  # noqa: E731
                                      ir.Constant(I32, 0))
        if_then(fn, ok(), lambda: fn.b.call(gesdd, args[:3] + [pa] + args[4:]))

        def results():
            cutoff = fn.b.fmul(rtol, lw.load(fn, s, np.float64, _c64(0)))
            fn.loop(k, lambda ell: _scale_column(lw, fn, u, s, kdt, m, ell, cutoff))
            fn.b.call(gemm, [c["no"], c["no"], c["m"], c["n"], c["k"], alpha, u, c["m"], vt,
                             c["k"], beta, prod, c["m"]])

            def conj_cell(e):       # P (n x m, row-major) = Mᴴ: M's column-major buffer
                b = fn.b
                v = lw.load(fn, prod, kdt, e)
                if cplx:
                    v = b.insert_value(v, b.fneg(b.extract_value(v, 1)), 1)
                lw.store(fn, po, pdt, e, _narrow(b, v, pdt))
            fn.loop(m * n, conj_cell)
        if_then(fn, ok(), results)
        fill_if_failed(lw, fn, info, [(po, m * n)], pdt)
    fn.loop(nb, one_matrix)
    bufs.release()
