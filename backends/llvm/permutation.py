"""``lu_pivots_to_permutation`` natively (registers in ``equations.NATIVE``; the package
imports this module): per row of pivots, the identity permutation of
``permutation_size`` with positions ``i`` and ``pivots[i]`` swapped in turn, as the
primitive's numpy impl does.

Out-of-range pivots: the impl raises ``ValueError``. The generated code first checks
every pivot lies in ``[0, permutation_size)``; when one does not, it calls the impl
back (``host_calls``), which raises that very error out of the compiled call, so no
swap ever reads or writes outside a row.

>>> from backends.llvm.equations import NATIVE
>>> "lu_pivots_to_permutation" in NATIVE
True
"""
from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from . import host_calls
from .equations import native
from .lltypes import I1, I32, I64

__all__: list = []


def _c(v, t=I64):
    return ir.Constant(t, v)


@native("lu_pivots_to_permutation", lambda eqn, planner: host_calls.callable_eqn(eqn))
def _pivots(lw, fn, eqn, ins, outs):
    n = eqn.params["permutation_size"]
    shape = ins[0].shape
    k = shape[-1]
    rows = int(np.prod(shape[:-1], dtype=np.int64))
    if rows == 0 or n == 0:
        return
    ref, tmp = lw.materialize(fn, ins[0])
    piv, out = fn.ptr(ref), fn.ptr(outs[0])
    bad = fn.alloca(1)
    b = fn.b
    b.store(_c(0, I1), bad)

    def check(i):
        bb = fn.b
        p = bb.load(bb.gep(piv, [i], source_etype=I32), typ=I32)
        off = bb.or_(bb.icmp_signed("<", p, _c(0, I32)), bb.icmp_signed(">=", p, _c(n, I32)))
        bb.store(bb.or_(bb.load(bad, typ=I1), off), bad)
    fn.loop(rows * k, check)
    b = fn.b
    host = fn.fn.append_basic_block("pivots_host")
    run = fn.fn.append_basic_block("pivots_native")
    done = fn.fn.append_basic_block("pivots_done")
    b.cbranch(b.load(bad, typ=I1), host, run)
    b.position_at_end(host)
    host_calls.emit(lw, fn, eqn, ins, outs)       # raises the impl's ValueError
    fn.b.branch(done)
    fn.b.position_at_end(run)

    def row(r):
        bb = fn.b
        base = bb.mul(r, _c(n))
        pbase = bb.mul(r, _c(k))

        def at(j):
            return fn.b.gep(out, [fn.b.add(base, j)], source_etype=I32)
        fn.loop(n, lambda j: fn.b.store(fn.b.trunc(j, I32), at(j)))

        def swap(i):
            bb = fn.b
            p = bb.sext(bb.load(bb.gep(piv, [bb.add(pbase, i)], source_etype=I32), typ=I32), I64)
            x, y = bb.load(at(i), typ=I32), bb.load(at(p), typ=I32)
            bb.store(y, at(i))
            bb.store(x, at(p))
        fn.loop(k, swap)
    fn.loop(rows, row)
    fn.b.branch(done)
    fn.b.position_at_end(done)
    if tmp is not None:
        lw.release(tmp)
