"""What the native convolution (``conv``) emits with: BLAS ``?gemm`` calls from the
generated code (the library ``blas`` found), loops, and ``parallel``, which spreads work
items over the thread pool with the BLAS set to one thread meanwhile (each thread's
GEMMs then run on that thread instead of queueing for the BLAS's own) and gives each
call of the body a scratch ``slot`` of its own.

>>> isinstance(slots(), int)
True
"""
from __future__ import annotations

import ctypes

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np

from . import blas, threads
from .lltypes import I32, I64, emit_loop as loop, lltype
from .values import PTR, Val

__all__ = ["NO_TRANS", "TRANS", "Body", "lin", "at", "gemm", "zero", "parallel",
           "slots", "permuted"]

NO_TRANS, TRANS = 111, 112
_SETTERS = ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_",
            "scipy_openblas_set_num_threads", "openblas_set_num_threads")
_GETTERS = ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_",
            "scipy_openblas_get_num_threads", "openblas_get_num_threads")
_STATE: dict = {}


def _thread_control() -> bool:
    """Register the BLAS's get/set_num_threads as ``ft_blas_get_threads`` /
    ``ft_blas_set_threads``; False when the library has none (then no pool)."""
    if "ok" not in _STATE:
        lib = blas._library()
        found = None
        if lib is not None:
            for s, g in zip(_SETTERS, _GETTERS):
                fs, fg = getattr(lib["lib"], s, None), getattr(lib["lib"], g, None)
                if fs is not None and fg is not None:
                    found = (fs, fg)
                    break
        if found is not None:
            llvm.add_symbol("ft_blas_set_threads", ctypes.cast(found[0], ctypes.c_void_p).value)
            llvm.add_symbol("ft_blas_get_threads", ctypes.cast(found[1], ctypes.c_void_p).value)
        _STATE["ok"] = found is not None
    return _STATE["ok"]


def permuted(val, order):
    shape = tuple(val.shape[d] for d in order)
    if val.lit is not None:
        return Val(val.dtype, shape, lit=val.lit)
    return Val(val.dtype, shape, ref=val.ref, strides=tuple(val.strides[d] for d in order),
               offset=val.offset)


# --------------------------------------------------------------------------- IR helpers

class Body:
    """A function under construction with ``b`` its builder (the pool's body)."""

    def __init__(self, func):
        self.fn = func
        self.b = ir.IRBuilder(func.append_basic_block("entry"))


def lin(b, base, idxs, strides):
    """base + sum idx * stride as an i64 (constant strides, zero ones skipped)."""
    o = base if isinstance(base, ir.Value) else ir.Constant(I64, base)
    for i, s in zip(idxs, strides):
        if s:
            o = b.add(o, b.mul(i, ir.Constant(I64, s)))
    return o


def at(b, ptr, dtype, index):
    index = index if isinstance(index, ir.Value) else ir.Constant(I64, index)
    return b.gep(ptr, [index], source_etype=lltype(dtype))


def _extern(module, name, ret, args):
    f = module.globals.get(name)
    return f if f is not None else ir.Function(module, ir.FunctionType(ret, args), name)


def gemm(h, module, dt, trans, m, n, k, a, lda, bp, ldb, beta, c, ldc):
    """One row-major ``C = op(A) @ op(B) + beta C`` call, ``trans`` the two flags
    (extents ints or i64 values)."""
    lib = blas._library()
    it = I64 if lib["int"] == 64 else I32
    ft = lltype(dt)
    name = "ft_cblas_dgemm" if dt == np.float64 else "ft_cblas_sgemm"
    f = _extern(module, name, ir.VoidType(), [I32, I32, I32, it, it, it, ft, PTR, it, PTR, it,
                                              ft, PTR, it])
    b = h.b

    def v(x):
        if isinstance(x, int):
            return ir.Constant(it, x)
        return x if it == I64 else b.trunc(x, it)
    beta = beta if isinstance(beta, ir.Value) else ir.Constant(ft, beta)
    b.call(f, [ir.Constant(I32, 101), ir.Constant(I32, trans[0]), ir.Constant(I32, trans[1]),
               v(m), v(n), v(k), ir.Constant(ft, 1.0), a, v(lda), bp, v(ldb), beta, c, v(ldc)])


def zero(h, ptr, dt, n):
    z = ir.Constant(lltype(dt), 0.0)
    loop(h, n, lambda i: h.b.store(z, at(h.b, ptr, dt, i)))


def parallel(lw, fn, name, count, ptrs, emit_body):
    """Run ``emit_body(h, lo, hi, ptrs_in_body, slot)`` over ``[0, count)``: split by the
    thread pool (the BLAS set to one thread meanwhile) when it is on and ``count`` > 1,
    else on this thread. ``slot`` < ``slots()`` is the caller's own scratch index."""
    module = lw.module
    bty = ir.FunctionType(ir.VoidType(), [PTR, PTR, PTR, PTR])
    body = ir.Function(module, bty, lw.name(name))
    body.linkage = "internal"
    body.attributes.add("nounwind")
    h = Body(body)
    args, dims, _, data = body.args
    b = h.b
    lo = b.ptrtoint(b.load(args, typ=PTR), I64)
    hi = b.add(lo, b.load(dims, typ=I64))
    inner = [b.load(b.gep(data, [ir.Constant(I64, j)], source_etype=PTR), typ=PTR)
             for j in range(len(ptrs) + 1)]
    slot = b.atomic_rmw("add", inner[-1], ir.Constant(I64, 1), "monotonic")
    run = body.append_basic_block("run")
    out = body.append_basic_block("out")
    b.cbranch(b.icmp_unsigned("<", lo, hi), run, out)
    b.position_at_end(run)
    emit_body(h, lo, hi, inner[:-1], slot)
    h.b.branch(out)
    h.b.position_at_end(out)
    h.b.ret_void()

    b = fn.b
    # the call's blocks live in the entry block's frame (``fn.alloca``): in a loop body a
    # fresh alloca per iteration would grow the stack with every trip
    counter, argp, dimp, stepp = (fn.alloca(8) for _ in range(4))
    datap = fn.alloca(8 * (len(ptrs) + 1))
    b.store(ir.Constant(I64, 0), counter)
    for j, p in enumerate(list(ptrs) + [counter]):
        b.store(p, b.gep(datap, [ir.Constant(I64, j)], source_etype=PTR))
    b.store(ir.Constant(PTR, None), argp)
    b.store(ir.Constant(I64, count), dimp)
    b.store(ir.Constant(I64, 1), stepp)
    if count < 2 or slots() < 2:
        b.call(body, [argp, dimp, stepp, datap])
        return
    glob = lambda nm: module.globals.get(nm) or ir.GlobalVariable(module, I32, nm)
    nthr = b.load(glob("ft_num_threads"), typ=I32)
    nthr = b.select(b.icmp_signed(">", nthr, ir.Constant(I32, slots())),
                    ir.Constant(I32, slots()), nthr)
    pid = b.load(glob("ft_pool_pid"), typ=I32)
    getpid = _extern(module, "getpid", I32, [])
    ok = b.and_(b.icmp_signed(">", nthr, ir.Constant(I32, 1)),
                b.icmp_signed("==", b.call(getpid, []), pid))
    with b.if_else(ok) as (then, other):
        with then:
            setn = _extern(module, "ft_blas_set_threads", ir.VoidType(), [I32])
            getn = _extern(module, "ft_blas_get_threads", I32, [])
            old = b.call(getn, [])
            b.call(setn, [ir.Constant(I32, 1)])
            pf = _extern(module, "ft_parallel_for", ir.VoidType(), [PTR] * 5 + [I64, I64, I32])
            b.call(pf, [body, argp, dimp, stepp, datap, ir.Constant(I64, 0),
                        ir.Constant(I64, 1), nthr])
            b.call(setn, [old])
        with other:
            b.call(body, [argp, dimp, stepp, datap])


def slots() -> int:
    """Scratch copies: one per pool thread (1 without a pool or BLAS thread control)."""
    return threads.num_threads() if _thread_control() else 1
