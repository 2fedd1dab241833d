"""Short rows of the native ``sort`` sorted many at a time: a group of ``L`` rows is
transposed into a scratch of ``n`` vectors of ``L`` lanes (vector ``k`` holds every
row's element ``k``, lane ``l`` row ``l``), one sorting network of ``n`` inputs runs
over the vectors (each comparator one vector ``umin`` and ``umax``: ``L`` rows'
comparisons at once), and the rows are transposed back.

The lanes hold the rows' unsigned radix keys (``sort_radix.key_bits``), so the order is
the row sorter's: a lone key as its key, of any width (64-byte vectors: 16 float32 or
int32 rows, 8 float64 rows); with other operands riding along (argsort, passengers), a
key of up to 4 bytes as ``key << 32 | k`` in 64-bit lanes, which orders by key, then
by place: the stable order, every value distinct, so an unstable network gives it; an
8-byte key beside its place ``k`` in a second vector, each comparator ordering the pairs
(key, place) by a compare and selects.
A lone float key's ``-0.0`` and non-canonical NaNs (the keys made them ``0.0`` and the
canonical NaN) are put back as the row sorter does (``_RowJob._fix_zeros_nans``) in
the rows flagged on the way in as holding one, after counting their negatives and NaNs.

The network is Batcher's odd-even merge network (``sort_radix.network``): its levels
below 16 sort each aligned block of 16 elements on its own, so full blocks of 16
vectors are sorted first in registers (one unrolled network of 16 looped over the
blocks; not for 8-byte keys beside their places), and the rest of the comparators are
a constant table of pairs in the program's module, walked by one loop: the code is
the same small loops for every ``n``, compiled once per process (``network_fn``) and
called with the table; a program holds only its transposes.

>>> lanes_for(np.dtype("float32"), False, 1000), lanes_for(np.dtype("float64"), True, 600)
(16, 0)
"""
from __future__ import annotations

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np

from jaxpr_ir import dtype_kind
from . import cache, engine
from .lltypes import I1, I32, I64, Routine, emit_loop
from .sort_radix import decode_bits, float_parts, key_bits, network, network_levels
from .values import PTR

__all__ = ["LANES_MAX", "PLACES_MAX", "WIDE_MAX", "lanes_for", "lane_bytes", "LaneGroup",
           "network_fn"]

LANES_MAX = 1024        # rows up to this long are sorted in lane groups (from 2 elements)
PLACES_MAX = 768        # with places beside keys of up to 4 bytes (the radix passes win
WIDE_MAX = 512          # above), and beside 8-byte keys
VECTOR_BYTES = 64       # one vector of lanes (an AVX-512 register; LLVM splits it elsewhere)
BLOCK = 16              # aligned blocks of this many vectors are first sorted in registers


def _c(v, t=I64):
    return ir.Constant(t, v)


def lanes_for(dtype, indexed: bool, n: int) -> int:
    """Rows per lane group for rows of ``n`` keys of ``dtype`` (0: row by row): 64 bytes
    of keys, or of 64-bit ``key << 32 | place`` (or 8-byte keys) when positions ride
    along; rows of 2..``LANES_MAX`` (with places: ..``PLACES_MAX``, beside 8-byte keys
    ..``WIDE_MAX``)."""
    wide = indexed and np.dtype(dtype).itemsize == 8
    if not 2 <= n <= (WIDE_MAX if wide else PLACES_MAX if indexed else LANES_MAX):
        return 0
    return VECTOR_BYTES // (8 if indexed else np.dtype(dtype).itemsize)


def lane_bytes(n: int, lanes: int) -> int:
    """Scratch bytes of one lane group of rows of ``n``: the vectors (two per element
    for an 8-byte key with places) and a flag per row (i64)."""
    return 2 * n * VECTOR_BYTES + 8 * lanes


def _table(module, n, blocks):
    """The comparator pairs of ``network(n)`` as a constant ``[2m x i32]`` in ``module``
    (shared by every sort of rows of ``n`` in it) and ``m``; without those of the first
    ``blocks`` aligned blocks of ``BLOCK`` elements below level ``BLOCK`` (they sort
    each such block on its own, done in registers first)."""
    pairs = [(i, j) for i, j, p in network_levels(n) if p >= BLOCK or j >= blocks * BLOCK]
    name = f"ft_sort_network_{n}_{blocks}"
    g = module.globals.get(name)
    if g is None:
        flat = [v for p in pairs for v in p]
        t = ir.ArrayType(I32, len(flat))
        g = ir.GlobalVariable(module, t, name)
        g.initializer = ir.Constant(t, flat)
        g.global_constant = True
        g.linkage = "internal"
    return g, len(pairs)


def _minmax(module, vt):
    out = []
    for m in ("umin", "umax"):
        name = f"llvm.{m}.v{vt.count}i{vt.element.width}"
        f = module.globals.get(name)
        out.append(f if f is not None else ir.Function(module, ir.FunctionType(vt, [vt, vt]),
                                                       name))
    return out


class LaneGroup:
    """Emits the sort of the ``lanes`` rows from row ``r0`` through the row job ``job``
    (``sort._RowJob``: its reads, outputs and zero / NaN fix-up); ``offsets(r)`` gives a
    row's operand bases and output base (i64 element offsets)."""

    def __init__(self, job, lanes, offsets, scratch_at):
        self.job, self.lanes, self.offsets = job, lanes, offsets
        self.scratch_at = scratch_at      # byte offset of the group's scratch in a slot
        key = job.ins[0]
        self.key = key
        self.kt = ir.IntType(8 * key.dtype.itemsize)
        self.et = I64 if job.indexed else self.kt
        self.vt = ir.VectorType(self.et, lanes)
        self.lone_float = not job.indexed and dtype_kind(key.dtype) == "f"
        self.wide = job.indexed and key.dtype.itemsize == 8     # (key, place) vector pairs

    def emit(self, r0, slot):
        job = self.job
        b, n = job.b, job.n
        base = b.gep(job.scratch, [b.add(b.mul(slot, _c(job.per)), _c(self.scratch_at))],
                     source_etype=ir.IntType(8))
        counts = b.gep(base, [_c(2 * n * VECTOR_BYTES)], source_etype=ir.IntType(8))
        self._load(base, counts, r0)
        self._network(base)
        self._store(base, counts, r0)

    def _cell(self, base, k, lane, place=False):
        """Row ``lane``'s element ``k`` (its place's, ``place``, of a wide key)."""
        b = self.job.b
        if self.wide:
            k = b.add(b.mul(k, _c(2)), _c(int(place)))
        return b.gep(base, [b.add(b.mul(k, _c(self.lanes)), lane)], source_etype=self.et)

    def _load(self, base, counts, r0):
        """Every row's keys (with their places) into its lane; a lone float key's
        negatives, NaNs and whether it held a -0.0 or another NaN, per row."""
        job = self.job
        b = job.b

        def row(lane):
            bases = self.offsets(b.add(r0, lane))[0]
            odd = job.var(I1, _c(0, I1)) if self.lone_float else None

            def one(k):
                bits = job.read(self.key, bases[0], k)
                key = key_bits(b, self.key.dtype, bits)
                if self.wide:
                    b.store(k, self._cell(base, k, lane, True))
                    val = key
                else:
                    val = b.or_(b.shl(b.zext(key, I64), _c(32)), k) if job.indexed else key
                b.store(val, self._cell(base, k, lane))
                if odd:
                    b.store(b.or_(b.load(odd, typ=I1), self._odd(bits)), odd)
            emit_loop(job.h, job.n, one)
            if odd:
                b.store(b.zext(b.load(odd, typ=I1), I64), b.gep(counts, [lane],
                                                                source_etype=I64))
        emit_loop(job.h, self.lanes, row)

    def _odd(self, bits):
        """Whether a float key's bits are -0.0 or a NaN other than the canonical one."""
        b, t = self.job.b, bits.type
        sign, exp, nan = float_parts(self.key.dtype)
        isnan = b.icmp_unsigned(">", b.and_(bits, _c(sign - 1, t)), _c(exp, t))
        return b.or_(b.icmp_unsigned("==", bits, _c(sign, t)),
                     b.and_(isnan, b.icmp_unsigned("!=", bits, _c(nan, t))))

    def _fix_row(self, base, obase):
        """A row that held a -0.0 or another NaN: its negatives and NaNs counted, then
        its zeros' and NaNs' runs rewritten with its own (``_RowJob._fix_zeros_nans``)."""
        job = self.job
        b = job.b
        tally = [job.var(I64, _c(0)), job.var(I64, _c(0)), job.var(I1, _c(0, I1))]

        def count(k):
            bits = job.read(self.key, base, k)
            job._tally(tally, self.key.dtype, bits, key_bits(b, self.key.dtype, bits))
        emit_loop(job.h, job.n, count)
        job._fix_zeros_nans(tally, base, obase)

    def _network(self, base):
        job = self.job
        module = job.h.fn.module
        blocks = 0 if self.wide else job.n // BLOCK
        table, m = _table(module, job.n, blocks)
        job.b.call(network_fn(module, self.vt, self.wide),
                   [base, job.b.bitcast(table, PTR), _c(m), _c(blocks)])

    def _store(self, base, counts, r0):
        """Every row back from its lane: a lone key decoded (its zeros and NaNs put back
        where it held odd ones), else every operand gathered through the places."""
        job = self.job
        b = job.b

        def row(lane):
            offs = self.offsets(b.add(r0, lane))
            bases, obase = offs[0], offs[1]

            def one(k):
                val = b.load(self._cell(base, k, lane), typ=self.et)
                if not job.indexed:
                    b.store(decode_bits(b, self.key.dtype, val), job._out(0, obase, k))
                    return
                src = b.load(self._cell(base, k, lane, True), typ=I64) if self.wide \
                    else b.and_(val, _c(0xFFFFFFFF))
                for j, v in enumerate(job.ins):
                    b.store(job.read(v, bases[j], src), job._out(j, obase, k))
            emit_loop(job.h, job.n, one)
            if self.lone_float:
                odd = b.load(b.gep(counts, [lane], source_etype=I64), typ=I64)
                with b.if_then(b.icmp_unsigned("!=", odd, _c(0))):
                    self._fix_row(bases[0], obase)

        emit_loop(job.h, self.lanes, row)


class _Network(Routine):
    """Builds ``void f(ptr base, ptr table, i64 m, i64 blocks)``: the ``blocks`` first
    aligned blocks of ``BLOCK`` vectors at ``base`` sorted in registers, then the ``m``
    comparators of ``table`` (vector indices, doubled for (key, place) pairs)."""

    def __init__(self, module, name, vt, wide):
        self.vt, self.wide = vt, wide
        self.fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR, PTR, I64, I64]),
                              name)
        self.fn.attributes.add("nounwind")
        self.eb = ir.IRBuilder(self.fn.append_basic_block("entry"))
        self.b = self.eb
        self.lo, self.hi = _minmax(module, vt)

    def build(self):
        base, table, m, blocks = self.fn.args
        b, vt = self.b, self.vt
        if not self.wide:
            def block(g):
                at = [b.gep(base, [b.add(b.mul(g, _c(BLOCK)), _c(i))], source_etype=vt)
                      for i in range(BLOCK)]
                vals = [b.load(p, typ=vt, align=8) for p in at]
                for i, j in network(BLOCK):
                    vals[i], vals[j] = (b.call(self.lo, [vals[i], vals[j]]),
                                        b.call(self.hi, [vals[i], vals[j]]))
                for p, v in zip(at, vals):
                    b.store(v, p, align=8)
            emit_loop(self, blocks, block)
        emit_loop(self, m, lambda t: self.comparator(base, table, t))
        self.b.ret_void()

    def comparator(self, base, table, t):
        b, vt = self.b, self.vt
        step = 2 if self.wide else 1
        i, j = (b.mul(b.zext(self.get(table, I32, b.add(b.mul(t, _c(2)), _c(d))), I64),
                      _c(step)) for d in (0, 1))
        pi, pj = (b.gep(base, [x], source_etype=vt) for x in (i, j))
        x, y = b.load(pi, typ=vt, align=8), b.load(pj, typ=vt, align=8)
        if not self.wide:
            b.store(b.call(self.lo, [x, y]), pi, align=8)
            b.store(b.call(self.hi, [x, y]), pj, align=8)
            return
        qi, qj = (b.gep(p, [_c(1)], source_etype=vt) for p in (pi, pj))
        u, v = b.load(qi, typ=vt, align=8), b.load(qj, typ=vt, align=8)
        swap = b.or_(b.icmp_unsigned("<", y, x),       # (y, v) before (x, u)
                     b.and_(b.icmp_unsigned("==", y, x), b.icmp_unsigned("<", v, u)))
        for p, q, first, second in ((pi, qi, (y, v), (x, u)), (pj, qj, (x, u), (y, v))):
            b.store(b.select(swap, first[0], second[0]), p, align=8)
            b.store(b.select(swap, first[1], second[1]), q, align=8)


_LIBRARY: dict = {}      # function name -> its loaded module, kept for the process


def network_fn(module, vt, wide: bool):
    """The declaration in ``module`` of the lane network over vectors ``vt`` (8-byte
    keys beside their places: ``wide``), compiled once per process (and kept in the
    disk cache) in a module of its own, so a program holds only its own loops."""
    name = f"ft_lanes_net_{vt.count}xi{vt.element.width}" + ("_wide" if wide else "")
    if name not in _LIBRARY:
        with engine.LOCK:
            if name not in _LIBRARY:
                mod = ir.Module(name=f"ft_library_{name}")
                mod.triple, mod.data_layout = engine.triple(), engine.data_layout()
                _Network(mod, name, vt, wide).build()
                loaded, _ = cache.load(str(mod))
                llvm.add_symbol(name, loaded.address(name))
                _LIBRARY[name] = loaded
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR, PTR, I64, I64]), name)
        fn.attributes.add("nounwind")
    return fn
