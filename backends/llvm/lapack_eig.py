"""``eig`` natively: LAPACK ``?geev`` (scipy's ``cython_lapack`` pointers, registered by
``lapack``) called from the generated code, per matrix of a stack, no Python per call.

It does what the numpy implementation (``numpy.linalg.eig``/``eigvals`` through
``host_multi``) does, so the results are the same bits: the column-major copy of each
matrix, in double precision (numpy.linalg computes float32/complex64 in double and
rounds the results), to ``dgeev``/``zgeev`` with ``jobvl='N'`` and ``jobvr='V'``
(eigenvalues only: ``'N'``) and the workspace LAPACK's own query asks for (sized when
the program is compiled). ``dgeev`` gives ``wr``, ``wi`` and real vectors, assembled
as numpy assembles them: ``w = wr + i·wi``; a column whose ``wi`` is 0 is a real
vector (imaginary parts +0); otherwise columns j, j+1 hold the pair
``vr[:, j] ± i·vr[:, j+1]``. ``zgeev`` gives ``w`` and ``vr`` directly. A matrix holding inf or NaN, or for which LAPACK
reports failure (``info != 0``), gives NaN + 0j in all its outputs, as numpy's
``LinAlgError`` does in ``host_multi``. Empty matrices or stacks have nothing to do.

>>> from backends.llvm.equations import NATIVE
>>> NATIVE["eig"].complex
True
"""
from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from jaxpr_ir import ShapedArray
from .equations import if_then, native
from .lapack import (available, char_cell, column_major, int_cell, nonfinite_status,
                     routine_decl, stack_count)
from .lltypes import F64, I32, I64, const, lltype
from .ops_complex import make

try:
    from scipy.linalg import lapack as _scipy_lapack
except ImportError:     # pragma: no cover (scipy is a dependency)
    _scipy_lapack = None

__all__ = ["Bufs", "cast_complex", "double_column_major", "geev_lwork"]

_PREFIX = {np.dtype(np.float64): "d", np.dtype(np.float32): "s",
           np.dtype(np.complex128): "z", np.dtype(np.complex64): "c"}


def _c64(v):
    return ir.Constant(I64, v)


def geev_lwork(dtype, n: int, compute_v: bool) -> int:
    """The ``?geev`` workspace (elements) for an n × n matrix: LAPACK's own optimal size
    (asked once, when the program is compiled), at least the documented minimum.

    >>> geev_lwork(np.float64, 4, True) >= 16
    True
    """
    dtype = np.dtype(dtype)
    cplx = dtype.kind == "c"
    minimum = max(1, 2 * n if cplx else (4 if compute_v else 3) * n)
    query = 0
    if _scipy_lapack is not None:
        q = getattr(_scipy_lapack, _PREFIX[dtype] + "geev_lwork")
        work, info = q(n, compute_vl=0, compute_vr=int(compute_v))
        query = int(np.real(work)) if info == 0 else 0
    return max(minimum, query)


def _supports_eig(eqn, planner):
    a = eqn.inputs[0].aval      # left eigenvectors (jobvl='V'): the host step
    return a.dtype in _PREFIX and available() and not eqn.params.get("compute_vl", False)


class Bufs:
    """The workspace buffers of one eig step, released together."""

    def __init__(self, lw, fn):
        self.lw, self.fn, self.held = lw, fn, []

    def new(self, shape, dtype):
        ref, owned = self.lw.new_buffer(self.fn, ShapedArray(shape, dtype), False)
        if owned:
            self.held.append(ref)
        return self.fn.ptr(ref), ref

    def release(self):
        for ref in self.held:
            self.lw.release(ref)


@native("eig", _supports_eig, complex=True)
def _eig(lw, fn, eqn, ins, outs):
    a = eqn.inputs[0].aval
    n = a.shape[-1]
    nb = stack_count(a)
    if n == 0 or nb == 0:
        return
    cplx = a.dtype.kind == "c"
    kdt = np.dtype(np.complex128 if cplx else np.float64)   # numpy computes in double
    cdt = eqn.outvars[0].aval.dtype
    uv = eqn.params["compute_v"]
    lwork = geev_lwork(kdt, n, uv)
    bufs = Bufs(lw, fn)
    mats = double_column_major(lw, fn, bufs, ins[0], a, kdt)
    work, _ = bufs.new((lwork,), kdt)
    vr = bufs.new((n, n), kdt)[0] if uv else work      # not referenced when jobvr='N'
    cells = dict(jobvl=char_cell(fn, "N"), jobvr=char_cell(fn, "V" if uv else "N"),
                 n=int_cell(fn, n), one=int_cell(fn, 1), ldvr=int_cell(fn, n if uv else 1),
                 lwork=int_cell(fn, lwork), info=int_cell(fn, 0), status=int_cell(fn, 0))
    geev = routine_decl(lw, kdt, "geev", 14)
    w_out = fn.ptr(outs[0])
    v_out = fn.ptr(outs[1]) if uv else None
    if cplx:
        rwork, _ = bufs.new((2 * n,), np.float64)
        wz, _ = bufs.new((n,), kdt)
    else:
        wr, _ = bufs.new((n,), np.float64)
        wi, _ = bufs.new((n,), np.float64)
    status = cells["status"]

    def one_matrix(bi):
        bb = fn.b
        pa = bb.gep(mats, [bb.mul(bi, _c64(n * n))], source_etype=lltype(kdt))
        pw = bb.gep(w_out, [bb.mul(bi, _c64(n))], source_etype=lltype(cdt))
        pv = bb.gep(v_out, [bb.mul(bi, _c64(n * n))], source_etype=lltype(cdt)) if uv else None
        nonfinite_status(lw, fn, pa, np.float64, n * n * (2 if cplx else 1), status)
        ok = lambda: fn.b.icmp_signed("==", fn.b.load(status, typ=I32),  # noqa: E731
                                      ir.Constant(I32, 0))

        def factor():
            c = cells
            if cplx:
                args = [c["jobvl"], c["jobvr"], c["n"], pa, c["n"], wz, work, c["one"], vr,
                        c["ldvr"], work, c["lwork"], rwork, c["info"]]
            else:
                args = [c["jobvl"], c["jobvr"], c["n"], pa, c["n"], wr, wi, work, c["one"], vr,
                        c["ldvr"], work, c["lwork"], c["info"]]
            fn.b.call(geev, args)
            fn.b.store(fn.b.load(c["info"], typ=I32), status)

        def results():
            if not cplx:
                _assemble_real(lw, fn, n, cdt, wr, wi, vr, pw, pv)
                return
            fn.loop(n, lambda j: lw.store(fn, pw, cdt, j, cast_complex(fn.b, lw.load(
                fn, wz, kdt, j), lltype(cdt))))
            if uv:
                _transpose_into(lw, fn, n, kdt, cdt, vr, pv)
        if_then(fn, ok(), factor)
        if_then(fn, ok(), results)
        nan = const(cdt, complex(float("nan"), 0.0))

        def poison():
            fn.loop(n, lambda i: lw.store(fn, pw, cdt, i, nan))
            if uv:
                fn.loop(n * n, lambda i: lw.store(fn, pv, cdt, i, nan))
        if_then(fn, fn.b.not_(ok()), poison)
    fn.loop(nb, one_matrix)
    bufs.release()


def double_column_major(lw, fn, bufs, val, a, kdt):
    """The stack ``val`` (aval ``a``) copied column-major per matrix, in double precision
    (``kdt``): numpy.linalg computes a single-precision matrix in double."""
    mats, _ = bufs.new(a.shape, kdt)
    if a.dtype == kdt:
        lw.copy(fn, val, mats, dst_strides=column_major(a.shape))
        return mats
    narrow, _ = bufs.new(a.shape, a.dtype)
    lw.copy(fn, val, narrow, dst_strides=column_major(a.shape))
    single = np.dtype(np.float32)
    fn.loop(a.size * (2 if a.dtype.kind == "c" else 1), lambda e: lw.store(
        fn, mats, np.float64, e, fn.b.fpext(lw.load(fn, narrow, single, e), F64)))
    return mats


def _narrow(b, v, t):
    """The float ``v`` rounded to float type ``t`` (itself when already one)."""
    return v if v.type == t else b.fptrunc(v, t)


def cast_complex(b, z, ct):
    """The complex ``z`` as complex type ``ct`` (parts rounded as numpy's astype)."""
    if z.type == ct:
        return z
    re, im = b.extract_value(z, 0), b.extract_value(z, 1)
    t = ct.elements[0]
    return make(b, ct, _narrow(b, re, t), _narrow(b, im, t))


def _transpose_into(lw, fn, n, kdt, cdt, vr, pv):
    """The column-major complex ``vr`` (dtype ``kdt``) into the row-major output ``pv``
    (dtype ``cdt``)."""
    def row(r):
        def cell(c):
            b = fn.b
            v = cast_complex(b, lw.load(fn, vr, kdt, b.add(r, b.mul(c, _c64(n)))), lltype(cdt))
            lw.store(fn, pv, cdt, b.add(b.mul(r, _c64(n)), c), v)
        fn.loop(n, cell)
    fn.loop(n, row)


def _assemble_real(lw, fn, n, cdt, wr, wi, vr, pw, pv):
    """numpy's complex eigenvalues and eigenvectors (dtype ``cdt``) from ``dgeev``'s
    ``wr``, ``wi`` and column-major ``vr`` (``pv`` None: eigenvalues only)."""
    ct, rdt = lltype(cdt), np.dtype(np.float64)
    pt = ct.elements[0]
    zero = ir.Constant(F64, 0.0)

    def value(j):
        b = fn.b
        lw.store(fn, pw, cdt, j, make(b, ct, _narrow(b, lw.load(fn, wr, rdt, j), pt),
                                     _narrow(b, lw.load(fn, wi, rdt, j), pt)))
    fn.loop(n, value)
    if pv is None:
        return
    pending = fn.alloca(1)      # column j is the second of a conjugate pair
    fn.b.store(ir.Constant(ir.IntType(8), 0), pending)

    def column(j):
        b = fn.b
        second = b.icmp_unsigned("!=", b.load(pending, typ=ir.IntType(8)),
                                 ir.Constant(ir.IntType(8), 0))
        real = b.fcmp_ordered("==", lw.load(fn, wi, rdt, j), zero)
        first = b.and_(b.not_(second), b.not_(real))
        nxt = b.select(b.icmp_signed("<", b.add(j, _c64(1)), _c64(n)), b.add(j, _c64(1)), j)
        re_col = b.select(second, b.sub(j, _c64(1)), j)
        im_col = b.select(second, j, nxt)
        has_im = b.or_(second, first)
        b.store(b.zext(first, ir.IntType(8)), pending)

        def cell(r):
            b2 = fn.b
            re = lw.load(fn, vr, rdt, b2.add(r, b2.mul(re_col, _c64(n))))
            im = lw.load(fn, vr, rdt, b2.add(r, b2.mul(im_col, _c64(n))))
            im = b2.select(has_im, b2.select(second, b2.fneg(im), im), zero)
            lw.store(fn, pv, cdt, b2.add(b2.mul(r, _c64(n)), j),
                     make(b2, ct, _narrow(b2, re, pt), _narrow(b2, im, pt)))
        fn.loop(n, cell)
    fn.loop(n, column)
