"""``schur`` natively: LAPACK ``?gees`` (scipy's ``cython_lapack`` pointers, registered by
``lapack``) called from the generated code, per matrix of a stack, no Python per call.

It does what the host implementation (``scipy.linalg.schur`` per matrix) does, so the
results are the same bits: the column-major copy of each matrix, in its own precision
(scipy calls ``sgees``/``cgees`` for float32/complex64), to ``?gees`` with
``jobvs='V'``, ``sort='N'`` (no select function; ``bwork`` unreferenced) and the
workspace scipy asks LAPACK for (the same query, made when the program is compiled);
``t`` (LAPACK's overwritten matrix) and the Schur vectors come back transposed into the
row-major outputs. A matrix holding inf or NaN, or for which LAPACK reports failure
(``info != 0``), gives NaN (NaN + 0j) in both outputs, as the host implementation does.
Empty matrices or stacks have nothing to do.

>>> from backends.llvm.equations import NATIVE
>>> NATIVE["schur"].complex
True
"""
from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from jaxpr_ir import ShapedArray
from .equations import if_then, native
from .lapack import (available, char_cell, column_major, int_cell, nonfinite_status,
                     routine_decl, stack_count)
from .lltypes import I32, I64, const, lltype
from .values import Val

try:
    from scipy.linalg import lapack as _scipy_lapack
except ImportError:     # pragma: no cover (scipy is a dependency)
    _scipy_lapack = None

__all__ = ["gees_lwork"]

_PREFIX = {np.dtype(np.float64): "d", np.dtype(np.float32): "s",
           np.dtype(np.complex128): "z", np.dtype(np.complex64): "c"}


def gees_lwork(dtype, n: int) -> int:
    """The ``?gees`` workspace (elements) for an n × n matrix, as ``scipy.linalg.schur``
    sizes it: LAPACK's answer to a workspace query (it depends on n only), at least the
    documented minimum.

    >>> gees_lwork(np.float64, 4) >= 12
    True
    """
    dtype = np.dtype(dtype)
    minimum = max(1, (2 if dtype.kind == "c" else 3) * n)
    if _scipy_lapack is None:      # pragma: no cover
        return minimum
    gees = getattr(_scipy_lapack, _PREFIX[dtype] + "gees")
    result = gees(lambda *x: None, np.zeros((n, n), dtype), lwork=-1)
    return max(1, int(result[-2][0].real.astype(np.int_)))


def _supports_schur(eqn, planner):
    return eqn.inputs[0].aval.dtype in _PREFIX and available()


def _stack_buffer(lw, fn, held, shape, dtype):
    ref, owned = lw.new_buffer(fn, ShapedArray(shape, dtype), False)
    if owned:
        held.append(ref)
    return ref


@native("schur", _supports_schur, complex=True)
def _schur(lw, fn, eqn, ins, outs):
    a = eqn.inputs[0].aval
    n = a.shape[-1]
    nb = stack_count(a)
    if n == 0 or nb == 0:
        return
    dt = np.dtype(a.dtype)
    cplx = dt.kind == "c"
    rdt = np.dtype(np.float32 if dt in (np.float32, np.complex64) else np.float64)
    lwork = gees_lwork(dt, n)
    held = []
    mats = _stack_buffer(lw, fn, held, a.shape, dt)       # column-major; becomes t
    vecs = _stack_buffer(lw, fn, held, a.shape, dt)       # column-major Schur vectors
    work = _stack_buffer(lw, fn, held, (lwork,), dt)
    w1 = _stack_buffer(lw, fn, held, (n,), dt)            # w (complex) or wr
    w2 = _stack_buffer(lw, fn, held, (n,), rdt)           # rwork (complex) or wi
    bwork = _stack_buffer(lw, fn, held, (n,), np.int32)   # unreferenced with sort='N'
    lw.copy(fn, ins[0], fn.ptr(mats), dst_strides=column_major(a.shape))
    c = dict(jobvs=char_cell(fn, "V"), sort=char_cell(fn, "N"), n=int_cell(fn, n),
             sdim=int_cell(fn, 0), lwork=int_cell(fn, lwork), info=int_cell(fn, 0),
             status=int_cell(fn, 0))
    gees = routine_decl(lw, dt, "gees", 15)
    select = ir.Constant(ir.PointerType(), None)
    ft = lltype(dt)
    m_ptr, v_ptr = fn.ptr(mats), fn.ptr(vecs)
    nn = ir.Constant(I64, n * n)
    nan = const(dt, complex(float("nan"), 0.0) if cplx else float("nan"))

    def one_matrix(bi):
        b = fn.b
        pa = b.gep(m_ptr, [b.mul(bi, nn)], source_etype=ft)
        pv = b.gep(v_ptr, [b.mul(bi, nn)], source_etype=ft)
        nonfinite_status(lw, fn, pa, rdt, n * n * (2 if cplx else 1), c["status"])
        ok = lambda: fn.b.icmp_signed("==", fn.b.load(c["status"], typ=I32),  # noqa: E731
                                      ir.Constant(I32, 0))

        def factor():
            head = [c["jobvs"], c["sort"], select, c["n"], pa, c["n"], c["sdim"]]
            ws = [fn.ptr(w1)] if cplx else [fn.ptr(w1), fn.ptr(w2)]
            tail = [pv, c["n"], fn.ptr(work), c["lwork"]]
            tail += [fn.ptr(w2), fn.ptr(bwork), c["info"]] if cplx else \
                [fn.ptr(bwork), c["info"]]
            fn.b.call(gees, head + ws + tail)
            fn.b.store(fn.b.load(c["info"], typ=I32), c["status"])
        if_then(fn, ok(), factor)

        def poison():
            fn.loop(n * n, lambda i: lw.store(fn, pa, dt, i, nan))
            fn.loop(n * n, lambda i: lw.store(fn, pv, dt, i, nan))
        if_then(fn, fn.b.not_(ok()), poison)
    fn.loop(nb, one_matrix)
    strides = tuple(column_major(a.shape))
    lw.copy(fn, Val(dt, a.shape, ref=mats, strides=strides, offset=0), fn.ptr(outs[0]))
    lw.copy(fn, Val(dt, a.shape, ref=vecs, strides=strides, offset=0), fn.ptr(outs[1]))
    for ref in held:
        lw.release(ref)
