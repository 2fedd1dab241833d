"""Native ``sort``: every row along ``dimension`` sorted stably by its keys' unsigned
radix keys (``sort_radix``), the other operands gathered through the sorting
permutation; rows split over the thread pool when there are many (registers in
``equations.NATIVE``; the package imports this module).

The order is the primitive's numpy impl exactly (``np.argsort(kind="stable")`` /
``np.lexsort`` then ``take_along_axis``): ascending, stable for every ``is_stable``
(numpy's is), a NaN after every number (NaNs tie with each other), ``-0.0`` and
``0.0`` equal (their order kept), signed and unsigned integers and bools by value, and
several keys lexicographically, the first most significant.

Per row: the last key's radix keys are written to a buffer (with the positions
``0..n-1`` beside them when other operands ride along) and sorted; each earlier key
is then read through the positions so far and sorted stably on top (LSD over the
keys). Outputs: with passengers, every operand gathered through the positions, its
bits moved as they are; a lone key is decoded from its sorted radix keys, and where
the row held a ``-0.0`` or a NaN other than the canonical one, the zeros' and NaNs'
runs are rewritten with the row's own zeros and NaNs in their order (they tie, so the
stable order is the order they came in).

>>> from backends.llvm.equations import NATIVE
>>> "sort" in NATIVE
True
"""
from __future__ import annotations

import math

import llvmlite.ir as ir
import numpy as np

from jaxpr_ir import ShapedArray, dtype_kind
from ..fusion import contiguous_strides
from .conv_gemm import parallel, slots
from .equations import native
from .lltypes import I1, I32, I64, emit_loop
from .sort_lanes import LaneGroup, lane_bytes, lanes_for
from .sort_radix import decode_bits, float_parts, hist_bytes, key_bits, key_width, row_sorter
from .values import PTR

__all__: list = []

PARALLEL_MIN = 1 << 14      # elements from which several rows are split over the threads


def _c(v, t=I64):
    return ir.Constant(t, v)


def _sort_supported(eqn, planner):
    nk = eqn.params["num_keys"]   # keys of any width (float16, bfloat16, int8); passengers as bits
    return all(dtype_kind(x.aval.dtype) in "fiub" and x.aval.dtype.itemsize <= 8
               for x in eqn.inputs[:nk]) and \
        all(x.aval.dtype.kind != "O" and x.aval.dtype.itemsize in (1, 2, 4, 8, 16)
            for x in eqn.inputs)


def _raw(dtype):
    return ir.IntType(8 * np.dtype(dtype).itemsize)


def _align(nbytes):
    return (nbytes + 63) // 64 * 64


class _RowJob:
    """The per-row work inside the pool's body ``h``: ``ptrs`` the inputs' (non-literal
    ones, in order), then the outputs', then the scratch."""

    def __init__(self, h, eqn, ins, ptrs, scratch, per):
        self.h, self.b, self.ins = h, h.b, ins
        self.dim, self.nk = eqn.params["dimension"], eqn.params["num_keys"]
        self.shape = ins[0].shape
        self.n = self.shape[self.dim]
        live = [v for v in ins if v.lit is None]
        self.inp = {id(v): p for v, p in zip(live, ptrs)}
        self.outp = ptrs[len(live):len(live) + len(ins)]
        self.indexed = len(ins) > 1
        _, self.offs, self.big = _layout(eqn, ins)
        self.per = per              # a slot's scratch bytes
        self.it = I64 if self.big else I32
        self.scratch = scratch
        entry = h.fn.entry_basic_block
        self.eb = ir.IRBuilder(entry)
        self.eb.position_at_start(entry)

    def var(self, typ, init):
        p = self.eb.alloca(typ)
        self.b.store(init, p)
        return p

    def read(self, v, base, k):
        """The bits of operand ``v``'s element ``k`` of the row at element ``base``."""
        b, t = self.b, _raw(v.dtype)
        if v.lit is not None:
            return ir.Constant(t, int.from_bytes(np.asarray(v.lit, v.dtype).tobytes(), "little"))
        off = b.add(base, b.mul(k, _c(v.strides[self.dim]))) if v.strides[self.dim] else base
        return b.load(b.gep(self.inp[id(v)], [off], source_etype=t), typ=t)

    def at(self, base, typ, i):
        return self.b.gep(base, [i], source_etype=typ)

    def row(self, bases, obase, slot):
        b, n, it = self.b, self.n, self.it
        s = b.gep(self.scratch, [b.mul(slot, _c(self.per))], source_etype=ir.IntType(8))
        A, B, IA, IB, H = (b.gep(s, [_c(o)], source_etype=ir.IntType(8)) for o in self.offs)
        if not self.indexed:
            IA = IB = ir.Constant(PTR, None)
        lone_float = not self.indexed and dtype_kind(self.ins[0].dtype) == "f"
        if lone_float:
            counts = [self.var(I64, _c(0)), self.var(I64, _c(0)), self.var(I1, _c(0, I1))]
        for stage, j in enumerate(reversed(range(self.nk))):
            v = self.ins[j]
            kt = _raw(v.dtype)

            def load(k, v=v, kt=kt, first=stage == 0, A=A, IA=IA):
                pos = k if first or not self.indexed else \
                    self._widen(b.load(self.at(IA, it, k), typ=it))
                bits = self.read(v, bases[j], pos)
                key = key_bits(b, v.dtype, bits)
                b.store(key, self.at(A, kt, k))
                if first and self.indexed:
                    b.store(b.trunc(k, it) if it != I64 else k, self.at(IA, it, k))
                if lone_float:
                    self._tally(counts, v.dtype, bits, key)
            emit_loop(self.h, n, load)
            flip = b.call(row_sorter(self.h.fn.module, key_width(v.dtype), self.indexed,
                                     self.big), [A, IA, B, IB, H, _c(n)])
            A, B = b.select(flip, B, A), b.select(flip, A, B)
            if self.indexed:
                IA, IB = b.select(flip, IB, IA), b.select(flip, IA, IB)
        self._store(A, IA, bases, obase)
        if lone_float:
            self._fix_zeros_nans(counts, bases[0], obase)

    def _widen(self, p):
        return self.b.zext(p, I64) if self.it != I64 else p

    def _tally(self, counts, dtype, bits, key):
        """Count the negatives and NaNs; note a -0.0 or a NaN not canonical."""
        b, t = self.b, bits.type
        sign, exp, nan = float_parts(dtype)
        mag = b.and_(bits, _c(sign - 1, t))
        isnan = b.icmp_unsigned(">", mag, _c(exp, t))
        neg = b.icmp_unsigned("<", key, _c(sign, t))
        b.store(b.add(b.load(counts[0], typ=I64), b.zext(neg, I64)), counts[0])
        b.store(b.add(b.load(counts[1], typ=I64), b.zext(isnan, I64)), counts[1])
        odd = b.or_(b.icmp_unsigned("==", bits, _c(sign, t)),
                    b.and_(isnan, b.icmp_unsigned("!=", bits, _c(nan, t))))
        b.store(b.or_(b.load(counts[2], typ=I1), odd), counts[2])

    def _out(self, j, obase, k):
        ostr = contiguous_strides(self.shape)[self.dim]
        at = self.b.add(obase, self.b.mul(k, _c(ostr)))
        return self.at(self.outp[j], _raw(self.ins[j].dtype), at)

    def _store(self, A, IA, bases, obase):
        b, it = self.b, self.it

        def put(k):
            if not self.indexed:
                kt = _raw(self.ins[0].dtype)
                key = b.load(self.at(A, kt, k), typ=kt)
                b.store(decode_bits(b, self.ins[0].dtype, key), self._out(0, obase, k))
                return
            src = self._widen(b.load(self.at(IA, it, k), typ=it))
            for j, v in enumerate(self.ins):
                b.store(self.read(v, bases[j], src), self._out(j, obase, k))
        emit_loop(self.h, self.n, put)

    def _fix_zeros_nans(self, counts, base, obase):
        """Rewrite the zeros' and NaNs' runs with the row's own, in their order."""
        b, v = self.b, self.ins[0]
        t = _raw(v.dtype)
        sign, exp, _ = float_parts(v.dtype)
        fix, done = self.h.fn.append_basic_block("fix"), self.h.fn.append_basic_block("fixed")
        b.cbranch(b.load(counts[2], typ=I1), fix, done)
        b.position_at_end(fix)
        zp = self.var(I64, b.load(counts[0], typ=I64))
        np_ = self.var(I64, b.sub(_c(self.n), b.load(counts[1], typ=I64)))

        def one(k):
            bits = self.read(v, base, k)
            mag = b.and_(bits, _c(sign - 1, t))
            for cond, p in ((b.icmp_unsigned("==", mag, _c(0, t)), zp),
                            (b.icmp_unsigned(">", mag, _c(exp, t)), np_)):
                with b.if_then(cond):
                    pos = b.load(p, typ=I64)
                    b.store(bits, self._out(0, obase, pos))
                    b.store(b.add(pos, _c(1)), p)
        emit_loop(self.h, self.n, one)
        b.branch(done)
        b.position_at_end(done)


def _lanes(eqn, ins, rows):
    """Rows per lane group (``sort_lanes``) of this sort, 0 for row by row."""
    n = ins[0].shape[eqn.params["dimension"]]
    lanes = lanes_for(ins[0].dtype, len(ins) > 1, n) if eqn.params["num_keys"] == 1 else 0
    return lanes if rows >= lanes else 0


def _layout(eqn, ins, lanes=0):
    """A row's scratch: its bytes, the offsets of its two key buffers, two position
    buffers and the histograms, and whether positions need 64 bits; a lane group's
    scratch follows (at ``_align`` of the row's part)."""
    n = ins[0].shape[eqn.params["dimension"]]
    big = n >= 2 ** 31
    width = max(key_width(k.dtype) for k in ins[:eqn.params["num_keys"]])
    kb = _align(n * width)
    ib = _align(n * (8 if big else 4)) if len(ins) > 1 else 0
    row = 2 * kb + 2 * ib + hist_bytes(width, big)
    return _align(row) + (lane_bytes(n, lanes) if lanes else 0), \
        (0, kb, 2 * kb, 2 * kb + ib, 2 * kb + 2 * ib), big


def _offsets(b, r, val_like, dims, shape):
    """Per operand (``val_like``: (strides, offset) or None for a literal) the element
    offset of row ``r`` (i64) over the non-sorted ``dims``."""
    idxs, rest = [], r
    for d in reversed(dims):
        idxs.append((d, b.urem(rest, _c(shape[d]))))
        rest = b.udiv(rest, _c(shape[d]))
    out = []
    for sv in val_like:
        if sv is None:
            out.append(_c(0))
            continue
        strides, o = sv[0], _c(sv[1])
        for d, i in idxs:
            if strides[d]:
                o = b.add(o, b.mul(i, _c(strides[d])))
        out.append(o)
    return out


@native("sort", _sort_supported, complex=True, raw=True)     # passengers move as bits
def _sort(lw, fn, eqn, ins, outs):
    dim = eqn.params["dimension"]
    shape = ins[0].shape
    if any(d == 0 for d in shape):
        return
    others = [d for d in range(len(shape)) if d != dim]
    rows = math.prod(shape[d] for d in others)
    lanes = _lanes(eqn, ins, rows)
    units = math.ceil(rows / max(lanes, 1))       # rows, or lane groups (the last partial)
    threaded = units >= 2 and rows * shape[dim] >= PARALLEL_MIN and slots() > 1
    nslot = slots() if threaded else 1
    count = units if threaded else 1
    per_unit = math.ceil(units / count)
    size = _layout(eqn, ins, lanes)[0]
    ref, owned = lw.new_buffer(fn, ShapedArray((nslot * size,), np.uint8), True)
    live = [v for v in ins if v.lit is None]
    ptrs = [fn.ptr(v.ref) for v in live] + [fn.ptr(o) for o in outs] + [fn.ptr(ref)]
    ostr = contiguous_strides(shape)
    layout = [None if v.lit is not None else (v.strides, v.offset) for v in ins] + \
        [(ostr, 0)]

    def body(h, lo, hi, inner, slot):
        job = _RowJob(h, eqn, ins, inner[:-1], inner[-1], size)
        b = h.b
        u0 = b.mul(lo, _c(per_unit))
        u1 = b.mul(hi, _c(per_unit))
        u1 = b.select(b.icmp_signed("<", u1, _c(units)), u1, _c(units))

        def offsets(r):
            offs = _offsets(h.b, r, layout, others, shape)
            return offs[:-1], offs[-1]

        def one(r):
            job.b = h.b
            job.row(*offsets(r), slot)
        if not lanes:
            emit_loop(h, b.sub(u1, u0), one, u0)
            return
        group = LaneGroup(job, lanes, offsets, _align(_layout(eqn, ins)[0]))

        def one_group(g):
            r0 = h.b.mul(g, _c(lanes))
            full = h.b.icmp_signed("<=", h.b.add(r0, _c(lanes)), _c(rows))
            with h.b.if_else(full) as (whole, tail):
                with whole:
                    group.emit(r0, slot)
                with tail:
                    emit_loop(h, h.b.sub(_c(rows), r0), one, r0)
        emit_loop(h, b.sub(u1, u0), one_group, u0)
    parallel(lw, fn, "sort_rows", count, ptrs, body)
    if owned:
        lw.release(ref)
