"""Native ``top_k``: the ``k`` largest entries of each row (the last axis) by selection,
not by sorting the row: a binary heap of the ``k`` best seen so far, its root the
worst of them, so an entry that does not beat the root costs one comparison (most of
a long row); the heap is then sorted in place (heapsort), best first. O(n log k) per
row, where a sort is O(n log n) and moves every entry.

The order is the primitive's numpy impl exactly (``primitives.sorting._np_top_k_key``):
descending in IEEE total order, as JAX's top_k (a NaN first unless its sign bit is
set, then it is last; ``0.0`` before ``-0.0``), equal bits by the lower index;
integers by value. The values written are the operand's own bits.

>>> from backends.llvm.equations import NATIVE
>>> "top_k" in NATIVE
True
"""
from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from jaxpr_ir import ShapedArray
from .equations import native
from .lltypes import I32, I64, Routine, load_elem, storage
from .values import PTR

__all__: list = []

_DTYPES = frozenset(np.dtype(d) for d in ("float64", "float32", "int64", "int32", "uint64",
                                          "uint32"))


def _c(v):
    return ir.Constant(I64, v)


class _Selector(Routine):
    """Builds ``void f(ptr x, i64 n, i64 k, ptr hv, ptr hi, ptr outv, ptr outi)``: the
    top ``k`` of the contiguous row ``x[0:n]`` (0 < k <= n) into ``outv`` (values) and
    ``outi`` (int32 positions), with ``hv``/``hi`` (k values, k i64) as the heap."""

    def __init__(self, module, name, dtype):
        self.dtype = np.dtype(dtype)
        self.t = storage(self.dtype)
        self.fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR, I64, I64] + [PTR] * 4),
                              name)
        self.fn.linkage = "internal"
        self.fn.attributes.add("nounwind")
        self.eb = ir.IRBuilder(self.fn.append_basic_block("entry"))
        body = self.fn.append_basic_block("body")
        self.b = ir.IRBuilder(body)
        self.body = body
        self.x, self.n, self.k, self.hv, self.hi, self.outv, self.outi = self.fn.args

    # ---------------------------------------------------------------- small tools
    def loop(self, cond, body):
        """while cond(): body() -- ``body`` returns False to break out (its own blocks)."""
        b = self.b
        head, blk, done = self.block("head"), self.block("loop"), self.block("done")
        b.branch(head)
        b.position_at_end(head)
        b.cbranch(cond(), blk, done)
        b.position_at_end(blk)
        body(done)
        if not self.b.block.is_terminated:
            self.b.branch(head)
        b.position_at_end(done)

    def if_(self, cond, then):
        t, done = self.block("then"), self.block("endif")
        self.b.cbranch(cond, t, done)
        self.b.position_at_end(t)
        then()
        if not self.b.block.is_terminated:
            self.b.branch(done)
        self.b.position_at_end(done)

    # ---------------------------------------------------------------- order
    def key(self, v):
        """The value compared: a float's bits as a signed integer, magnitude bits flipped
        when negative (IEEE total order); an integer itself."""
        if self.dtype.kind != "f":
            return v
        b = self.b
        it = ir.IntType(8 * self.dtype.itemsize)
        i = b.bitcast(v, it)
        sign = b.ashr(i, ir.Constant(it, 8 * self.dtype.itemsize - 1))
        return b.xor(i, b.and_(sign, ir.Constant(it, (1 << (8 * self.dtype.itemsize - 1)) - 1)))

    def beats(self, a, c):
        """Whether a later entry ``a`` comes before ``c`` (an earlier one: a tie does not)."""
        b = self.b
        a, c = self.key(a), self.key(c)
        return b.icmp_unsigned(">", a, c) if self.dtype.kind == "u" else b.icmp_signed(">", a, c)

    def better(self, a, ai, c, ci):
        """Whether (a, index ai) comes before (c, ci) in top_k's order."""
        b = self.b
        tie = b.icmp_signed("==", self.key(a), self.key(c))
        return b.or_(self.beats(a, c), b.and_(tie, b.icmp_signed("<", ai, ci)))

    def sift_down(self, v, vi, size):
        """Put (v, vi) at the root of the heap hv[0:size] (root: the worst) and sift it
        down below every child worse than it."""
        b, t = self.b, self.t
        pos = self.var(I64, _c(0))

        def step(done):
            p = b.load(pos)
            c = b.add(b.mul(p, _c(2)), _c(1))
            stop = self.block("stop")
            go = self.block("go")
            b.cbranch(b.icmp_signed(">=", c, size), done, go)
            b.position_at_end(go)
            c2 = b.add(c, _c(1))
            cv, ci = self.get(self.hv, t, c), self.get(self.hi, I64, c)
            has2 = b.icmp_signed("<", c2, size)
            c2s = b.select(has2, c2, c)
            c2v, c2i = self.get(self.hv, t, c2s), self.get(self.hi, I64, c2s)
            right = b.and_(has2, self.better(cv, ci, c2v, c2i))    # the right child is worse
            wc = b.select(right, c2, c)
            wv, wi = b.select(right, c2v, cv), b.select(right, c2i, ci)
            move = self.better(v, vi, wv, wi)                        # the child is worse than v
            up = self.block("up")
            b.cbranch(move, up, stop)
            b.position_at_end(up)
            self.put(self.hv, t, p, wv)
            self.put(self.hi, I64, p, wi)
            b.store(wc, pos)
            b.branch(self.loop_head)
            b.position_at_end(stop)
            b.branch(done)
        self._loop_forever(step)
        p = b.load(pos)
        self.put(self.hv, t, p, v)
        self.put(self.hi, I64, p, vi)

    def _loop_forever(self, body):
        b = self.b
        head, blk, done = self.block("head"), self.block("loop"), self.block("done")
        b.branch(head)
        b.position_at_end(head)
        b.branch(blk)
        b.position_at_end(blk)
        saved, self.loop_head = getattr(self, "loop_head", None), head
        body(done)
        self.loop_head = saved
        b.position_at_end(done)

    def sift_up(self, v, vi, start):
        """Insert (v, vi) at hv[start], moving up past every parent better than it."""
        b, t = self.b, self.t
        pos = self.var(I64, start)

        def step(done):
            p = b.load(pos)
            go, up, stop = self.block("go"), self.block("up"), self.block("stop")
            b.cbranch(b.icmp_signed(">", p, _c(0)), go, done)
            b.position_at_end(go)
            par = b.sdiv(b.sub(p, _c(1)), _c(2))
            pv, pi = self.get(self.hv, t, par), self.get(self.hi, I64, par)
            b.cbranch(self.better(pv, pi, v, vi), up, stop)     # v is worse: it goes up
            b.position_at_end(up)
            self.put(self.hv, t, p, pv)
            self.put(self.hi, I64, p, pi)
            b.store(par, pos)
            b.branch(self.loop_head)
            b.position_at_end(stop)
            b.branch(done)
        self._loop_forever(step)
        p = b.load(pos)
        self.put(self.hv, t, p, v)
        self.put(self.hi, I64, p, vi)

    # ---------------------------------------------------------------- the function
    def build(self):
        b, t = self.b, self.t
        i = self.var(I64, _c(0))

        def scan(done):
            ii = b.load(i)
            v = load_elem(b, b.gep(self.x, [ii], source_etype=t), self.dtype)
            filling = b.icmp_signed("<", ii, self.k)
            fill, rest, nxt = self.block("fill"), self.block("rest"), self.block("next")
            b.cbranch(filling, fill, rest)
            b.position_at_end(fill)
            self.sift_up(v, ii, ii)
            b.branch(nxt)
            b.position_at_end(rest)
            self.if_(self.beats(v, self.get(self.hv, t, _c(0))),     # the root: the worst
                     lambda: self.sift_down(v, ii, self.k))
            b.branch(nxt)
            b.position_at_end(nxt)
            b.store(b.add(ii, _c(1)), i)
        self.loop(lambda: b.icmp_signed("<", b.load(i), self.n), scan)
        # heapsort: the worst left goes last, so hv[0] ends the best
        end = self.var(I64, b.sub(self.k, _c(1)))

        def pop(done):
            e = b.load(end)
            rv, ri = self.get(self.hv, t, _c(0)), self.get(self.hi, I64, _c(0))
            self.sift_down(self.get(self.hv, t, e), self.get(self.hi, I64, e), e)
            self.put(self.hv, t, e, rv)
            self.put(self.hi, I64, e, ri)
            b.store(b.sub(e, _c(1)), end)
        self.loop(lambda: b.icmp_signed(">", b.load(end), _c(0)), pop)
        j = self.var(I64, _c(0))

        def out(done):
            jj = b.load(j)
            self.put(self.outv, t, jj, self.get(self.hv, t, jj))
            self.put(self.outi, I32, jj, b.trunc(self.get(self.hi, I64, jj), I32))
            b.store(b.add(jj, _c(1)), j)
        self.loop(lambda: b.icmp_signed("<", b.load(j), self.k), out)
        b.ret_void()
        self.eb.branch(self.body)


def _selector(module, dtype):
    name = "ft_top_k_" + np.dtype(dtype).str.lstrip("<>|=")
    if name not in module.globals:
        _Selector(module, name, dtype).build()
    return module.globals[name]


@native("top_k", lambda eqn, planner: eqn.inputs[0].aval.dtype in _DTYPES)
def _top_k(lw, fn, eqn, ins, outs):
    k = eqn.params["k"]
    shape = ins[0].shape
    n = shape[-1]
    if k == 0 or any(d == 0 for d in shape):
        return
    dtype = ins[0].dtype
    src, tmp = lw.materialize(fn, ins[0])          # contiguous rows
    temps = [r for r in (tmp,) if r is not None]
    heap = []
    for dt in (dtype, np.int64):
        ref, owned = lw.new_buffer(fn, ShapedArray((k,), dt), True)
        heap.append(fn.ptr(ref))
        if owned:
            temps.append(ref)
    select = _selector(lw.module, dtype)
    t = storage(dtype)
    xs, ov, oi = fn.ptr(src), fn.ptr(outs[0]), fn.ptr(outs[1])

    def row(idxs):
        b = fn.b
        r = _c(0)
        for d, ix in zip(shape[:-1], idxs):
            r = b.add(b.mul(r, _c(d)), ix)
        b.call(select, [b.gep(xs, [b.mul(r, _c(n))], source_etype=t), _c(n), _c(k), *heap,
                        b.gep(ov, [b.mul(r, _c(k))], source_etype=t),
                        b.gep(oi, [b.mul(r, _c(k))], source_etype=I32)])
    fn.nest(list(shape[:-1]), row)
    for ref in temps:
        lw.release(ref)

