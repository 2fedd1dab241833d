"""LLVM IR for row kernels (``fusion.Kernel`` with ``phases``).

A row kernel's loop shape is ``row shape + inner shape``. The function loops over the
rows (the kept leading dimensions, collapsed where every access allows) in blocks of
``block`` rows along the last row dimension, and runs each phase over the block's
rows in turn: an ``INNER`` phase loops over a row's inner dimensions, a ``ROW`` phase
computes once per row. The block is one row when rows are long: the later phases then
re-read the row from cache, and the heavy phase prefetches the next row meanwhile, so a
logsumexp or softmax reads its input from memory once, and memory time hides under
compute. Short rows go 16 to a block, so that a ``ROW`` phase is a loop over rows the
vectoriser turns into SIMD (per-row ``exp``/``log`` on one row at a time would be
scalar code).

Per-row values live in block-sized stack arrays (registers, for a block of one);
reads of them through broadcast views load the row's element once per row. Reduction
accumulators are stack slots LLVM promotes to registers, so inner loops vectorise, with
``reassoc`` on the reduction only. Values of the loop shape an inner phase defines and
a later one reads go through stack scratch rows unless they are outputs anyway. Rows
are independent, so a large row kernel with transcendental work is split over threads
by rows, running the serial run's per-row code (the same results, bit for bit).

>>> RowEmitter.__mro__[1].__name__
'KernelEmitter'
"""
from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from jaxpr_ir import Literal
from ..fusion import INNER, View, contiguous_strides
from . import threads
from .kernels import KernelEmitter
from .lltypes import I64, lltype, storage, stored
from .ops import REDUCTIONS, heavy
from .values import Access

__all__ = ["RowEmitter"]

_LINES_PER_CHUNK = 8     # cache lines of the next row prefetched per chunk of the loop
_BLOCK = 16              # rows per block when rows are short...
_BLOCK_ROWS_BELOW = 512  # ...shorter than this many elements
_BLOCK_SCRATCH = 1 << 16  # bytes of scratch rows a block may keep on the stack
KEEP_ROLLED = True       # the row loops of short-row kernels are not unrolled (``keep_rolled``)


def keep_rolled(module, fn):
    """Ask LLVM not to unroll the loops of ``fn`` that run a number of times known only
    at run time (``llvm.loop.unroll.disable`` on their back edges): a short-row
    kernel's loops over the rows of a block. Loops of a constant trip count (over a
    row's elements) are left to LLVM.

    LLVM unrolled each loop over a block's rows with the fully unrolled row loops
    inside it: a transformer step's module grew from ~1,400 to 8,300 instructions
    (3,500 with this), and its LLVM time 2.6x. Marking the constant-trip loops too
    gained little more (2,800) and cost run time (per-example grads of 100-element
    rows: 1.2x slower)."""
    seen = set()
    disable = module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.disable")])
    uses = module.__dict__.setdefault("_ft_loop_ids", [])
    for blk in fn.blocks:
        seen.add(blk.name)
        br = blk.terminator
        if not isinstance(br, ir.instructions.ConditionalBranch) or \
                not any(t.name in seen for t in br.operands[1:]):
            continue
        cmp = br.operands[0]
        if not isinstance(cmp, ir.instructions.CompareInstr) or \
                isinstance(cmp.operands[1], ir.Constant):
            continue
        md = module.add_metadata([ir.MetaDataString(module, f"ft.loop.{len(uses)}")])
        uses.append(md)
        md.operands = (md, disable)     # self-referential, as LLVM requires
        br.set_metadata("llvm.loop", md)


def _collapse_part(dims, accesses, lo, hi):
    """Collapse loop dimensions ``lo:hi`` (drop size-1 ones, merge adjacent ones every
    access walks contiguously); returns the new dims of that part. Strides of each
    access are rewritten in place for that part only."""
    keep = [d for d in range(lo, hi) if dims[d] != 1]
    out = [dims[d] for d in keep]
    strides = {id(a): [a.strides[d] for d in keep] for a in accesses}
    i = len(out) - 1
    while i > 0:
        if all(strides[id(a)][i - 1] == strides[id(a)][i] * out[i] for a in accesses):
            out[i - 1] *= out[i]
            del out[i]
            for a in accesses:
                st = strides[id(a)]
                st[i - 1] = st[i]
                del st[i]
        i -= 1
    for a in accesses:
        a.strides = a.strides[:lo] + strides[id(a)] + a.strides[hi:]
    return out


class RowEmitter(KernelEmitter):
    """Builds one row kernel function (same interface as ``KernelEmitter``)."""

    def __init__(self, module, name, kernel, views, noalias=True):
        self.module, self.kernel, self.views = module, kernel, views
        self.buffers = []
        shape, r = tuple(kernel.shape), kernel.outer
        n_inner = len(shape) - r
        self.accesses = {}     # var -> Access over the loop shape (inner phases)
        self.row_acc = {}      # var -> Access over the loop shape, 0 on inner dims (row phases)
        inputs = set(kernel.inputs)
        for ph in kernel.phases:
            for e in ph.eqns:
                for x in e.inputs:
                    if not isinstance(x, Literal) and x in inputs:
                        self._input_access(x, ph.kind == INNER, n_inner)
        outputs = set(kernel.outputs)
        for ph in kernel.phases:
            for e in ph.eqns:
                o = e.outvars[0]
                if o not in outputs:
                    continue
                if ph.kind == INNER and o not in kernel.reduced:
                    self.accesses[o] = Access(self._arg(o), contiguous_strides(shape), 0,
                                               o.aval.dtype)
                else:
                    self.row_acc[o] = Access(self._arg(o), list(contiguous_strides(shape[:r]))
                                              + [0] * n_inner, 0, o.aval.dtype)
        every = list(self.accesses.values()) + list(self.row_acc.values())
        odims = _collapse_part(list(shape), every, 0, r)
        if not odims:               # one row: a loop of one, so there is a last row dim
            odims = [1]
            for a in every:
                a.strides.insert(0, 0)
        k = len(odims)
        self.idims = _collapse_part(odims + list(shape[r:]), every, k, k + n_inner)
        self.dims = odims
        self.inner_size = int(np.prod(shape[r:], dtype=np.int64))
        self.scratch_vars = [v for v in kernel.carried if v not in outputs]
        self._plan_row_values()
        scratch_row = self.inner_size * sum(v.aval.dtype.itemsize for v in self.scratch_vars)
        # short rows go in blocks, so that the per-row phases run as loops over the
        # block's rows (vectorised) instead of once per row in scalar code
        self.block = 1 if self.inner_size >= _BLOCK_ROWS_BELOW else max(
            1, min(_BLOCK, _BLOCK_SCRATCH // max(scratch_row, 1)))
        self.reduce_info = {}
        self._plan_prefetch()
        self._declare(module, name, noalias, shape)
        if int(np.prod(shape, dtype=np.int64)) > 16 and self.block * scratch_row > 4096:
            # its scratch rows then live on the stack for one call only, not for the
            # whole segment function it would be inlined into
            self.fn.attributes.add("noinline")
        # the entry block holds only stack slots (``_entry_alloca``) and a branch, so
        # inserting a slot never moves the builder's insertion point
        entry = self.fn.append_basic_block("entry")
        start = self.fn.append_basic_block("start")
        ir.IRBuilder(entry).branch(start)
        self.b = ir.IRBuilder(start)
        self.argv = list(self.fn.args)
        self.parallel = noalias and self._parallelisable()

    def _plan_row_values(self):
        """``phase_reads``: per phase, the per-row values of earlier phases it reads;
        ``row_values``: all of them (each kept in a block-sized array)."""
        k = self.kernel
        defined = {}
        for i, ph in enumerate(k.phases):
            for e in ph.eqns:
                defined[e.outvars[0]] = i
        self.phase_reads, self.row_values = {}, []
        for i, ph in enumerate(k.phases):
            reads = []
            for e in ph.eqns:
                for x in e.inputs:
                    if isinstance(x, Literal):
                        continue
                    v = self.views.get(x)
                    base = v.base if v is not None else x
                    if defined.get(base, i) < i and base.aval.shape != tuple(k.shape) \
                            and base not in reads:
                        reads.append(base)
            self.phase_reads[id(ph)] = reads
            self.row_values += [v for v in reads if v not in self.row_values]

    def _input_access(self, x, inner, n_inner):
        v = self.views.get(x) or View(x, x.aval.shape, contiguous_strides(x.aval.shape), 0)
        if isinstance(v.base, Literal):
            return
        # a row phase's loop shape is the row shape, or it with size-1 inner dims
        strides = list(v.strides) if inner else list(v.strides[:self.kernel.outer]) + [0] * n_inner
        (self.accesses if inner else self.row_acc)[x] = Access(
            self._arg(v.base), strides, v.offset, x.aval.dtype)

    def _parallelisable(self):
        """Rows are independent: split them when the kernel is large and compute-bound
        (see ``KernelEmitter._parallelisable`` for why memory-bound ones stay serial)."""
        if not any(heavy(e) for e in self.kernel.eqns):
            return False
        if not self.dims or self.dims[0] < 2 or any(d <= 0 for d in self.kernel.shape):
            return False
        if int(np.prod(self.kernel.shape, dtype=np.int64)) < threads.MIN_ELEMENTS:
            return False
        return threads.num_threads() > 1

    def emit(self):
        if all(d > 0 for d in self.kernel.shape[:self.kernel.outer]):
            if self.parallel:
                self._emit_parallel()
            else:
                self._loops()
        self.b.ret_void()
        if KEEP_ROLLED and self.block > 1:
            for f in (self.fn, self.module.globals.get(self.fn.name + ".par")):
                if f is not None:
                    keep_rolled(self.module, f)

    # ------------------------------------------------------------------ blocks of rows
    def _entry_alloca(self, typ, n=1):
        """A stack slot in the current function's entry block (static: not per row)."""
        eb = ir.IRBuilder(self.fn.entry_basic_block)
        eb.position_at_start(self.fn.entry_basic_block)
        a = eb.alloca(typ, size=ir.Constant(I64, n) if n != 1 else None)
        a.align = 32
        return a

    def _count_loop(self, n, body):
        """``for i in range(n): body(i)`` for an i64 value ``n >= 1`` (no loop when 1)."""
        if isinstance(n, ir.Constant) and n.constant == 1:
            body(ir.Constant(I64, 0))
            return
        b = self.b
        pre = b.block
        loop = self.fn.append_basic_block("rows")
        b.branch(loop)
        b.position_at_end(loop)
        i = b.phi(I64)
        i.add_incoming(ir.Constant(I64, 0), pre)
        body(i)
        nxt = b.add(i, ir.Constant(I64, 1), flags=("nuw", "nsw"))
        i.add_incoming(nxt, b.block)
        done = self.fn.append_basic_block("rows.done")
        b.cbranch(b.icmp_unsigned("<", nxt, n), loop, done)
        b.position_at_end(done)

    def _loops(self, lo=None, hi=None):
        """Rows in blocks of ``self.block`` along the last row dimension (threads split
        the first one, ``[lo, hi)``). Per call: the scratch rows, the per-row values of
        a block, the reduction accumulators (one per thread when threaded)."""
        nb = self.block
        self.scratch = {v: self._entry_alloca(storage(v.aval.dtype), nb * max(self.inner_size, 1))
                        for v in self.scratch_vars}
        self.rowarr = {v: self._entry_alloca(lltype(v.aval.dtype), nb) for v in self.row_values}
        self.acc_slots = {}
        one_dim = len(self.dims) == 1
        first = lo if (one_dim and lo is not None) else ir.Constant(I64, 0)
        end = hi if (one_dim and hi is not None) else ir.Constant(I64, self.dims[-1])
        B = ir.Constant(I64, nb)

        def blocks(oidx):
            b = self.b
            count = b.sub(end, first)
            if nb != 1:
                count = b.udiv(b.add(count, ir.Constant(I64, nb - 1)), B)

            def block(k):
                start = b.add(first, b.mul(k, B))
                rows = B if nb == 1 else b.select(b.icmp_unsigned("<", b.sub(end, start), B),
                                                  b.sub(end, start), B)
                for ph in self.kernel.phases:
                    run = self._inner_row if ph.kind == INNER else self._row_row

                    def row(j, ph=ph, run=run):
                        run(ph, list(oidx) + [b.add(start, j)], j)
                    self._count_loop(rows, row)
            self._count_loop(count, block)

        if one_dim:
            self._loop_nest([], blocks)
        else:
            self._loop_nest(self.dims[:-1], blocks, lo, hi)

    def _row_env(self, ph, j):
        """The per-row values (of earlier phases) phase ``ph`` reads, loaded for row ``j``
        of the block."""
        env = {}
        for x in self.phase_reads[id(ph)]:
            t = lltype(x.aval.dtype)
            env[x] = self.b.load(self.b.gep(self.rowarr[x], [j], source_etype=t), typ=t)
        return env

    def _set_row_value(self, out, v, oidx, j):
        if out in self.rowarr:
            t = lltype(out.aval.dtype)
            self.b.store(v, self.b.gep(self.rowarr[out], [j], source_etype=t))
        if out in self.row_acc:
            self.store(self.row_acc[out], oidx, v)

    def _row_value(self, x, rowenv):
        v = self.views.get(x)
        base = v.base if v is not None else x
        return rowenv.get(base)

    def _inner_row(self, ph, oidx, j):
        rowenv = self._row_env(ph, j)
        reds = {}
        for e in ph.eqns:
            out = e.outvars[0]
            if out in self.kernel.reduced:
                dtype = out.aval.dtype
                slot = self.acc_slots.get(out) or self._entry_alloca(lltype(dtype))
                self.acc_slots[out] = slot
                self.b.store(self.const(dtype, REDUCTIONS[e.primitive.name].identity(dtype)), slot)
                reds[out] = slot
        if self.inner_size > 0:
            body = lambda iidx: self._inner_body(ph, oidx, list(iidx), j, rowenv, reds)  # noqa: E731
            if ph is self.prefetch_phase:
                self._prefetching_loop(oidx, body)
            else:
                self._loop_nest(self.idims, body)
        for out, slot in reds.items():
            self._set_row_value(out, self.b.load(slot, typ=lltype(out.aval.dtype)), oidx, j)

    # ------------------------------------------------------------------ prefetch
    def _plan_prefetch(self):
        """The phase that prefetches the next row's inputs, and what it prefetches.

        A row kernel's first phase reads a row from memory with little work per element
        (a max, a sum), a later one computes on the row from cache (exp, log...). While
        the core computes, the memory bus idles; prefetching the next row then makes the
        next first phase read from cache too, so memory time hides under compute time.
        Only a later inner phase with transcendental work prefetches (elsewhere the bus
        is not idle), over one contiguous inner dimension, one cache line at a time."""
        self.prefetch_phase, self.prefetch = None, []
        inner = [p for p in self.kernel.phases if p.kind == INNER]
        heavy_phases = [p for p in inner[1:] if any(heavy(e) for e in p.eqns)]
        if not heavy_phases or len(self.idims) != 1 or not self.dims:
            return
        first = {x for e in inner[0].eqns for x in e.inputs}
        k = len(self.dims)
        for x, acc in self.accesses.items():
            if x in first and x in self.kernel.inputs and acc.strides[k] == 1 \
                    and acc.strides[k - 1] != 0 and all(a.arg != acc.arg for a in self.prefetch):
                self.prefetch.append(acc)
        if not self.prefetch:
            return
        self.chunk = _LINES_PER_CHUNK * 64 // max(a.dtype.itemsize for a in self.prefetch)
        if self.idims[0] >= self.chunk:
            self.prefetch_phase = heavy_phases[0]

    def _prefetching_loop(self, oidx, body):
        """The inner loop in chunks of ``self.chunk`` elements, each prefetching its
        columns of the next row first (the remainder chunk prefetches nothing)."""
        n, c = self.idims[0], self.chunk
        full, rem = divmod(n, c)
        k = len(self.dims)
        i32 = ir.IntType(32)
        pf = self.module.globals.get("llvm.prefetch.p0") or ir.Function(
            self.module, ir.FunctionType(ir.VoidType(), [ir.PointerType(), i32, i32, i32]),
            "llvm.prefetch.p0")

        def chunk(cidx):
            start = self.b.mul(cidx[0], ir.Constant(I64, c))
            for acc in self.prefetch:
                # the same row of the next block
                off = ir.Constant(I64, acc.offset + self.block * acc.strides[k - 1])
                for i, st in zip(oidx, acc.strides):
                    off = self.b.add(off, self.b.mul(i, ir.Constant(I64, st)))
                # no inbounds: past the last row this points outside the buffer, which a
                # prefetch may do (it never faults)
                p = self.b.gep(self.argv[acc.arg], [self.b.add(off, start)],
                               source_etype=storage(acc.dtype))
                for line in range(0, c * acc.dtype.itemsize, 64):
                    q = self.b.gep(p, [ir.Constant(I64, line)], source_etype=ir.IntType(8))
                    self.b.call(pf, [q, ir.Constant(i32, 0), ir.Constant(i32, 3),
                                     ir.Constant(i32, 1)])
            self._loop_nest([c], lambda j: body([self.b.add(start, j[0])]))

        self._loop_nest([full], chunk)
        if rem:
            self._loop_nest([rem], lambda j: body([self.b.add(ir.Constant(I64, full * c), j[0])]))

    def _scratch_ptr(self, var, iidx, j):
        off = self.b.mul(j, ir.Constant(I64, max(self.inner_size, 1)))
        for i, s in zip(iidx, contiguous_strides(self.idims)):
            off = self.b.add(off, self.b.mul(i, ir.Constant(I64, s)))
        return self.b.gep(self.scratch[var], [off], inbounds=True,
                          source_etype=storage(var.aval.dtype))

    def _inner_body(self, ph, oidx, iidx, j, rowenv, reds):
        idxs = oidx + iidx
        env = {}

        def read(x):
            c = self._literal(x)
            if c is not None:
                return c
            if x in env:
                return env[x]
            v = self._row_value(x, rowenv)
            if v is None:
                if x in self.scratch:
                    v = self.b.load(self._scratch_ptr(x, iidx, j), typ=storage(x.aval.dtype))
                    if x.aval.dtype == np.bool_:
                        v = self.b.trunc(v, ir.IntType(1))
                else:
                    v = self.load(self.accesses[x], idxs)
                env[x] = v
            return v

        for e in ph.eqns:
            ins = [read(x) for x in e.inputs]
            out = e.outvars[0]
            if out in reds:
                t = lltype(out.aval.dtype)
                cur = self.b.load(reds[out], typ=t)
                self.b.store(REDUCTIONS[e.primitive.name].combine(self, out.aval.dtype, cur,
                                                                  ins[0]), reds[out])
                continue
            v = env[out] = self._emit_value(e, ins)
            if out in self.accesses:
                self.store(self.accesses[out], idxs, v)
            if out in self.scratch:
                self.b.store(stored(self.b, v, out.aval.dtype), self._scratch_ptr(out, iidx, j))

    def _row_row(self, ph, oidx, j):
        rowenv = self._row_env(ph, j)

        def read(x):
            c = self._literal(x)
            if c is not None:
                return c
            v = self._row_value(x, rowenv)
            return v if v is not None else self.load(self.row_acc[x], oidx)

        for e in ph.eqns:
            ins = [read(x) for x in e.inputs]
            out = e.outvars[0]
            v = rowenv[out] = self._emit_value(e, ins)
            self._set_row_value(out, v, oidx, j)
