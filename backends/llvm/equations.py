"""Equations with a native emitter of their own (not fused into a kernel loop nest):
layout copies, iota, concatenate, pad, dynamic slices, gather and scatter here;
``dot_general`` in ``blas``; ``cond``/``while``/``scan`` in ``control`` (they register
here with ``native``; ``program`` imports them).

``NATIVE[name] = NativeOp(emit, supports)``; ``emit(lw, fn, eqn, ins, outs)`` gets the
``program.Lowering``, the segment ``program.Fn``, the operands as ``values.Val`` and the
output buffers as ``values.Ref`` (contiguous, already allocated). ``supports(eqn,
planner)`` gets the program's planner too (``program.plan_jaxpr``), for equations
holding sub-jaxprs.

Safety: dynamic starts are clamped into ``[0, dim - size]``, gather indices into
``[0, dim - 1]`` (``"fill"`` mode reads zeros for a row out of range), and scatter
rows with an index out of range are skipped (``"drop"``), so no index, whatever its
value, makes the generated code read or write outside a buffer.

>>> sorted(n for n in NATIVE if n.startswith("dyn"))
['dynamic_slice', 'dynamic_update_slice']
"""
from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from ..fusion import contiguous_strides
from .lltypes import I1, I64, lltype
from .ops import choose
from .values import Val

__all__ = ["NATIVE", "NativeOp"]


class NativeOp:
    """An emitter and its ``supports(eqn, planner)`` test; ``complex``: the emitter
    handles complex operands and results (``program.classify`` asks no other);
    ``raw``: it only moves and compares its values' bits, so it takes every dtype that
    its ``supports`` test admits (int8, float16, ...), not only the backend's own."""

    def __init__(self, emit, supports=None, complex=False, raw=False):
        self.emit = emit
        self._supports = supports
        self.complex = complex
        self.raw = raw

    def supports(self, eqn, planner):
        """Whether ``eqn`` has native code (``planner`` plans its sub-jaxprs, if any)."""
        return True if self._supports is None else bool(self._supports(eqn, planner))


NATIVE: dict = {}


def native(name, supports=None, complex=False, raw=False):
    def deco(f):
        NATIVE[name] = NativeOp(f, supports, complex, raw)
        return f
    return deco


def to_i64(fn, v, dtype):
    """An integer register value widened to i64 (zero-extended for uint32 and bool) for
    signed comparisons with extents: a uint64 of 2**63 or more saturates to 2**63 - 1, so
    that it stays out of range (clamps high) as the huge index it is, not negative."""
    dtype = np.dtype(dtype)
    if v.type == I64:
        if dtype.kind != "u":
            return v
        b = fn.b
        return b.select(b.icmp_signed("<", v, ir.Constant(I64, 0)),
                        ir.Constant(I64, 2**63 - 1), v)
    return fn.b.zext(v, I64) if dtype.kind in "ub" else fn.b.sext(v, I64)


def clamp(fn, v, lo, hi):
    """min(max(v, lo), hi) on i64 (hi wins when hi < lo)."""
    b = fn.b
    v = b.select(b.icmp_signed("<", v, ir.Constant(I64, lo)), ir.Constant(I64, lo), v)
    return b.select(b.icmp_signed(">", v, ir.Constant(I64, hi)), ir.Constant(I64, hi), v)


def if_then(fn, cond, body):
    b = fn.b
    then = fn.fn.append_basic_block("then")
    done = fn.fn.append_basic_block("endif")
    b.cbranch(cond, then, done)
    b.position_at_end(then)
    body()
    b.branch(done)
    b.position_at_end(done)


# --------------------------------------------------------------------------- layout

@native("reshape", complex=True)    # reached only when the operand is not dense (no view)
def _reshape(lw, fn, eqn, ins, outs):
    lw.copy(fn, ins[0], fn.ptr(outs[0]))


@native("copy", complex=True)
def _copy(lw, fn, eqn, ins, outs):
    lw.copy(fn, ins[0], fn.ptr(outs[0]))


@native("iota")
def _iota(lw, fn, eqn, ins, outs):
    shape, d = eqn.params["shape"], eqn.params["dimension"]
    dtype = np.dtype(eqn.params["dtype"])
    ptr = fn.ptr(outs[0])
    cs = contiguous_strides(shape)
    if any(n == 0 for n in shape):
        return

    def body(idxs):
        b = fn.b
        o = ir.Constant(I64, 0)
        for i, s in zip(idxs, cs):
            o = b.add(o, b.mul(i, ir.Constant(I64, s)))
        t = lltype(dtype)
        v = b.sitofp(idxs[d], t) if dtype.kind == "f" else b.trunc(idxs[d], t) \
            if t.width < 64 else idxs[d]
        lw.store(fn, ptr, dtype, o, v)
    fn.nest(list(shape), body)


@native("concatenate", complex=True)
def _concatenate(lw, fn, eqn, ins, outs):
    d = eqn.params["dimension"]
    out = eqn.outvars[0].aval
    cs = contiguous_strides(out.shape)
    ptr, at = fn.ptr(outs[0]), 0
    for v in ins:
        lw.copy(fn, v, ptr, cs, at * cs[d])
        at += v.shape[d]


def _fill(lw, fn, ptr, dtype, n, value):
    if n:
        fn.loop(n, lambda i: lw.store(fn, ptr, dtype, i, value))


@native("pad", complex=True)
def _pad(lw, fn, eqn, ins, outs):
    x, pv = ins
    out = eqn.outvars[0].aval
    ptr = fn.ptr(outs[0])
    _fill(lw, fn, ptr, out.dtype, out.size, lw.scalar(fn, pv))
    cs = contiguous_strides(out.shape)
    shape, sstr, dstr, soff, doff = [], [], [], 0, 0
    for k, (lo, hi, it) in enumerate(eqn.params["padding_config"]):
        n, step = x.shape[k], it + 1
        first = 0 if lo >= 0 else (-lo + step - 1) // step     # first operand index kept
        last = min(n, (out.shape[k] - 1 - lo) // step + 1) if out.shape[k] > 0 else 0
        cnt = last - first
        if cnt <= 0:
            return
        shape.append(cnt)
        sstr.append(x.strides[k] if x.lit is None else 0)
        dstr.append(cs[k] * step)
        soff += first * (x.strides[k] if x.lit is None else 0)
        doff += (lo + first * step) * cs[k]
    src = Val(x.dtype, shape, lit=x.lit, ref=x.ref, strides=sstr, offset=x.offset + soff)
    lw.copy(fn, src, ptr, dstr, doff)


# --------------------------------------------------------------------------- dynamic slices

def _starts(lw, fn, vals, shape, sizes):
    """Clamped start indices (i64 values), as JAX: into [0, dim - size]."""
    out = []
    for v, d, n in zip(vals, shape, sizes):
        s = to_i64(fn, lw.scalar(fn, v), v.dtype)
        out.append(clamp(fn, s, 0, d - n))
    return out


def _dyn_offset(fn, starts, strides):
    b = fn.b
    o = ir.Constant(I64, 0)
    for s, st in zip(starts, strides):
        if st:
            o = b.add(o, b.mul(s, ir.Constant(I64, st)))
    return o


@native("dynamic_slice", complex=True)
def _dynamic_slice(lw, fn, eqn, ins, outs):
    x, starts = ins[0], ins[1:]
    sizes = eqn.params["slice_sizes"]
    if any(n == 0 for n in sizes):
        return
    st = _starts(lw, fn, starts, x.shape, sizes)
    src = x.reshaped(sizes)   # x's strides and offset, a smaller shape
    off = _dyn_offset(fn, st, x.strides) if x.lit is None else None
    lw.copy(fn, src, fn.ptr(outs[0]), src_offset=off)


@native("dynamic_update_slice", complex=True)
def _dynamic_update_slice(lw, fn, eqn, ins, outs):
    x, u, starts = ins[0], ins[1], ins[2:]
    ptr = fn.ptr(outs[0])
    lw.copy(fn, x, ptr)
    if any(n == 0 for n in u.shape):
        return
    st = _starts(lw, fn, starts, x.shape, u.shape)
    cs = contiguous_strides(x.shape)
    lw.copy(fn, u, ptr, cs, _dyn_offset(fn, st, cs))


# --------------------------------------------------------------------------- gather / scatter

@native("gather", complex=True)
def _gather(lw, fn, eqn, ins, outs):
    k, mode = eqn.params["num_index_dims"], eqn.params["index_mode"]
    xa, ia = eqn.inputs[0].aval, eqn.inputs[1].aval
    out = eqn.outvars[0].aval
    optr = fn.ptr(outs[0])
    if out.size == 0:
        return
    rest = int(np.prod(xa.shape[k:], dtype=np.int64))
    if any(d == 0 for d in xa.shape[:k]) or rest == 0:
        zero = lw.const(out.dtype, 0)
        _fill(lw, fn, optr, out.dtype, out.size, zero)
        return
    xref, t1 = lw.materialize(fn, ins[0])
    iref, t2 = lw.materialize(fn, ins[1])
    xptr, iptr = fn.ptr(xref), fn.ptr(iref)
    nb = int(np.prod(ia.shape[:-1], dtype=np.int64))
    cs = contiguous_strides(xa.shape)
    zero = lw.const(out.dtype, 0)

    def row(bi):
        b = fn.b
        off, inr = _row_offset(lw, fn, iptr, ia.dtype, bi, k, xa.shape, cs)
        obase = b.mul(bi, ir.Constant(I64, rest))

        def elem(r):
            v = lw.load(fn, xptr, xa.dtype, b.add(off, r))
            if mode == "fill":
                v = fn.b.select(inr, v, zero)
            lw.store(fn, optr, out.dtype, b.add(obase, r), v)
        fn.loop(rest, elem)
    fn.loop(nb, row)
    for t in (t1, t2):
        if t is not None:
            lw.release(t)


def _row_offset(lw, fn, iptr, idt, bi, k, shape, cs):
    """Clamped element offset of row ``bi``'s window, and whether it was in range."""
    b = fn.b
    inr = ir.Constant(I1, 1)
    off = ir.Constant(I64, 0)
    base = b.mul(bi, ir.Constant(I64, k))
    for j in range(k):
        v = to_i64(fn, lw.load(fn, iptr, idt, b.add(base, ir.Constant(I64, j))), idt)
        ok = b.and_(b.icmp_signed(">=", v, ir.Constant(I64, 0)),
                    b.icmp_signed("<", v, ir.Constant(I64, shape[j])))
        inr = b.and_(inr, ok)
        v = clamp(fn, v, 0, shape[j] - 1)
        off = b.add(off, b.mul(v, ir.Constant(I64, cs[j])))
    return off, inr


def _combine(fn, mode, dtype, cur, u):
    b, k = fn.b, np.dtype(dtype).kind
    if mode == "set":
        return u
    if mode == "add":
        return b.fadd(cur, u) if k == "f" else b.or_(cur, u) if k == "b" else b.add(cur, u)
    if mode == "mul":
        return b.fmul(cur, u) if k == "f" else b.and_(cur, u) if k == "b" else b.mul(cur, u)
    return choose(fn, dtype, cur, u, mode == "max")


def _scatter_supports(eqn, planner):    # complex: written, not combined
    return eqn.inputs[0].aval.dtype.kind != "c" or eqn.params["mode"] == "set"


@native("scatter", _scatter_supports, complex=True)
def _scatter(lw, fn, eqn, ins, outs):
    k, mode = eqn.params["num_index_dims"], eqn.params["mode"]
    clip = eqn.params["index_mode"] == "clip"
    xa, ia = eqn.inputs[0].aval, eqn.inputs[1].aval
    optr = fn.ptr(outs[0])
    lw.copy(fn, ins[0], optr)
    rest = int(np.prod(xa.shape[k:], dtype=np.int64))
    nb = int(np.prod(ia.shape[:-1], dtype=np.int64))
    if rest == 0 or nb == 0 or any(d == 0 for d in xa.shape[:k]):
        return
    iref, t1 = lw.materialize(fn, ins[1])
    uref, t2 = lw.materialize(fn, ins[2])
    iptr, uptr = fn.ptr(iref), fn.ptr(uref)
    cs = contiguous_strides(xa.shape)
    dt = xa.dtype

    def row(bi):
        b = fn.b
        inr = ir.Constant(I1, 1)
        off = ir.Constant(I64, 0)
        base = b.mul(bi, ir.Constant(I64, k))
        for j in range(k):
            v = to_i64(fn, lw.load(fn, iptr, ia.dtype, b.add(base, ir.Constant(I64, j))),
                       ia.dtype)
            if clip:
                v = clamp(fn, v, 0, xa.shape[j] - 1)
            ok = b.and_(b.icmp_signed(">=", v, ir.Constant(I64, 0)),
                        b.icmp_signed("<", v, ir.Constant(I64, xa.shape[j])))
            inr = b.and_(inr, ok)
            off = b.add(off, b.mul(v, ir.Constant(I64, cs[j])))
        ubase = b.mul(bi, ir.Constant(I64, rest))

        def write():
            def elem(r):
                bb = fn.b
                at = bb.add(off, r)
                u = lw.load(fn, uptr, dt, bb.add(ubase, r))
                cur = lw.load(fn, optr, dt, at) if mode != "set" else None
                lw.store(fn, optr, dt, at, _combine(fn, mode, dt, cur, u))
            fn.loop(rest, elem)
        if_then(fn, inr, write)
    fn.loop(nb, row)
    for t in (t1, t2):
        if t is not None:
            lw.release(t)


# --------------------------------------------------------------------------- random bits

_THREEFRY_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
_THREEFRY_PARITY = 0x1BD11BDA


def _read_at(lw, fn, v, ptr, idxs):
    """Element ``idxs`` of Val ``v`` (strided, broadcast or a literal) as a register."""
    if v.lit is not None:
        return lw.const(v.dtype, v.lit)
    b, o = fn.b, ir.Constant(I64, v.offset)
    for i, s in zip(idxs, v.strides):
        if s:
            o = b.add(o, b.mul(i, ir.Constant(I64, s)))
    return lw.load(fn, ptr, v.dtype, o)


def _threefry_block(b, k0, k1, x0, x1):
    """Threefry-2x32, 20 rounds, on i32 registers (wrapping arithmetic, as uint32)."""
    c = lambda n: ir.Constant(k0.type, n)       # noqa: E731
    ks = (k0, k1, b.xor(b.xor(k0, k1), c(_THREEFRY_PARITY)))
    x0, x1 = b.add(x0, ks[0]), b.add(x1, ks[1])
    for r in range(20):
        rot = _THREEFRY_ROTATIONS[r % 8]
        x0 = b.add(x0, x1)
        x1 = b.or_(b.shl(x1, c(rot)), b.lshr(x1, c(32 - rot)))
        x1 = b.xor(x1, x0)
        if r % 4 == 3:                               # key injection every 4 rounds
            s = (r + 1) // 4
            x0 = b.add(x0, ks[s % 3])
            x1 = b.add(b.add(x1, ks[(s + 1) % 3]), c(s))
    return x0, x1


@native("threefry2x32")
def _threefry2x32(lw, fn, eqn, ins, outs):
    """Random bits natively: one independent block per element (the loop vectorises),
    the same bits as the primitive's numpy impl."""
    shape = eqn.outvars[0].aval.shape
    dtype = eqn.outvars[0].aval.dtype
    ptrs = [None if v.lit is not None else fn.ptr(v.ref) for v in ins]
    o0, o1 = fn.ptr(outs[0]), fn.ptr(outs[1])
    cs = contiguous_strides(shape)

    def body(idxs):
        b = fn.b
        k0, k1, x0, x1 = (_read_at(lw, fn, v, p, idxs) for v, p in zip(ins, ptrs))
        y0, y1 = _threefry_block(b, k0, k1, x0, x1)
        o = ir.Constant(I64, 0)
        for i, s in zip(idxs, cs):
            o = b.add(o, b.mul(i, ir.Constant(I64, s)))
        lw.store(fn, o0, dtype, o, y0)
        lw.store(fn, o1, dtype, o, y1)
    fn.nest(list(shape), body)
