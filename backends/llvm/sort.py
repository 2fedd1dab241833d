"""Native ``sort``: every row along ``dimension`` sorted by a stable merge sort, the
other operands gathered through the sorting permutation (registers in
``equations.NATIVE``; the package imports this module).

The order is the primitive's numpy impl exactly (``np.argsort(kind="stable")`` /
``np.lexsort`` then ``take_along_axis``): ascending, stable for every ``is_stable``
(numpy's is), a NaN after every number (NaNs tie with each other), ``-0.0`` and
``0.0`` equal (their order kept), signed and unsigned integers and bools by value, and
several keys lexicographically, the first most significant.

Per row: the first key is copied into a contiguous buffer (with the positions
``0..n-1`` beside it when other operands ride along), runs of ``_RUN`` are sorted by
insertion, then merged bottom-up between two buffers (a branch-free merge; a pair of
runs already in order is copied). A later key is read through the position only when
the earlier keys tie. The row sorter is one LLVM function per key dtypes, called per
row; the outputs are then written: the first key from the sorted buffer, every other
operand gathered (its bits moved as they are).

>>> from backends.llvm.equations import NATIVE
>>> "sort" in NATIVE
True
"""
from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from jaxpr_ir import ShapedArray
from ..fusion import contiguous_strides
from .equations import native
from .lltypes import I1, I8, I64, load_elem, storage
from .values import PTR

__all__: list = []

_RUN = 16          # elements sorted by insertion before the merges


def _c(v):
    return ir.Constant(I64, v)


def _reg(dtype):
    """The type a key lives as in the sort buffers (a bool as a 0/1 byte)."""
    return storage(dtype)


def _less(b, dtype, x, y):
    """x < y in the sort's order (a NaN after everything, NaNs equal)."""
    k = np.dtype(dtype).kind
    if k == "f":
        return b.or_(b.fcmp_ordered("<", x, y),
                     b.and_(b.fcmp_unordered("uno", y, y), b.fcmp_ordered("ord", x, x)))
    return b.icmp_signed("<", x, y) if k == "i" else b.icmp_unsigned("<", x, y)


class _Row:
    """Builds the row sorter ``i1 f(ptr A, ptr IA, ptr B, ptr IB, i64 n, ptr K1..)``:
    sorts A (the first key; IA the positions when ``indexed``) of length n, returns
    whether the result ended in B/IB. K1.. are the later keys' contiguous rows."""

    def __init__(self, module, name, dtypes, indexed):
        self.dtypes, self.indexed = [np.dtype(d) for d in dtypes], indexed
        args = [PTR, PTR, PTR, PTR, I64] + [PTR] * (len(dtypes) - 1)
        self.fn = ir.Function(module, ir.FunctionType(I1, args), name)
        self.fn.linkage = "internal"
        self.fn.attributes.add("nounwind")
        entry = self.fn.append_basic_block("entry")
        self.eb = ir.IRBuilder(entry)
        self.body = self.fn.append_basic_block("body")
        self.b = ir.IRBuilder(self.body)
        self.A, self.IA, self.B, self.IB, self.n = self.fn.args[:5]
        self.keys = self.fn.args[5:]
        self.t = _reg(self.dtypes[0])
        self.memcpy = module.declare_intrinsic("llvm.memcpy", [PTR, PTR, I64])

    # ---------------------------------------------------------------- small tools
    def var(self, typ, init):
        p = self.eb.alloca(typ)
        self.b.store(init, p)
        return p

    def ld(self, p):
        return self.b.load(p)

    def while_(self, cond, body):
        b = self.b
        head = self.fn.append_basic_block("w_head")
        blk = self.fn.append_basic_block("w_body")
        done = self.fn.append_basic_block("w_end")
        b.branch(head)
        b.position_at_end(head)
        b.cbranch(cond(), blk, done)
        b.position_at_end(blk)
        body()
        b.branch(head)
        b.position_at_end(done)

    def if_(self, cond, then, other=None):
        b = self.b
        t = self.fn.append_basic_block("then")
        e = self.fn.append_basic_block("else")
        done = self.fn.append_basic_block("endif")
        b.cbranch(cond, t, e)
        b.position_at_end(t)
        then()
        b.branch(done)
        b.position_at_end(e)
        if other is not None:
            other()
        b.branch(done)
        b.position_at_end(done)

    def at(self, base, typ, i):
        return self.b.gep(base, [i], source_etype=typ)

    def get(self, base, typ, i):
        return self.b.load(self.at(base, typ, i), typ=typ)

    def put(self, base, typ, i, v):
        self.b.store(v, self.at(base, typ, i))

    def copy(self, dst, src, typ, lo, hi, to, size):
        """dst[to : to + hi - lo] = src[lo:hi] (elements of ``typ``, ``size`` bytes)."""
        b = self.b
        nb = b.mul(b.sub(hi, lo), _c(size))
        b.call(self.memcpy, [self.at(dst, typ, to), self.at(src, typ, lo), nb, ir.Constant(I1, 0)])

    # ---------------------------------------------------------------- order
    def less(self, x, xi, y, yi):
        """(x, position xi) before (y, position yi): the first key, then the later ones."""
        b = self.b
        lt = _less(b, self.dtypes[0], x, y)
        if len(self.dtypes) == 1:
            return lt
        tie = b.not_(b.or_(lt, _less(b, self.dtypes[0], y, x)))
        later = ir.Constant(I1, 0)
        for dt, kp in reversed(list(zip(self.dtypes[1:], self.keys))):
            t = _reg(dt)
            u, v = self.get(kp, t, xi), self.get(kp, t, yi)
            l2 = _less(b, dt, u, v)
            later = b.or_(l2, b.and_(b.not_(b.or_(l2, _less(b, dt, v, u))), later))
        return b.or_(lt, b.and_(tie, later))

    # ---------------------------------------------------------------- passes
    def insertion(self, lo, hi):
        b, t = self.b, self.t
        i = self.var(I64, b.add(lo, _c(1)))

        def outer():
            iv = self.ld(i)
            v = self.get(self.A, t, iv)
            vi = self.get(self.IA, I64, iv) if self.indexed else None
            j = self.var(I64, iv)
            go = self.var(I1, ir.Constant(I1, 0))

            def cond():
                jv = self.ld(j)
                b.store(ir.Constant(I1, 0), go)
                self.if_(b.icmp_signed(">", jv, lo), lambda: b.store(self.less(
                    v, vi, self.get(self.A, t, b.sub(jv, _c(1))),
                    self.get(self.IA, I64, b.sub(jv, _c(1))) if self.indexed else None), go))
                return self.ld(go)

            def shift():
                jv = self.ld(j)
                jm = b.sub(jv, _c(1))
                self.put(self.A, t, jv, self.get(self.A, t, jm))
                if self.indexed:
                    self.put(self.IA, I64, jv, self.get(self.IA, I64, jm))
                b.store(jm, j)
            self.while_(cond, shift)
            jv = self.ld(j)
            self.put(self.A, t, jv, v)
            if self.indexed:
                self.put(self.IA, I64, jv, vi)
            b.store(b.add(iv, _c(1)), i)
        self.while_(lambda: b.icmp_signed("<", self.ld(i), hi), outer)

    def merge(self, src, isrc, dst, idst, lo, mid, hi):
        b, t = self.b, self.t
        i, j, k = self.var(I64, lo), self.var(I64, mid), self.var(I64, lo)

        def both():
            return b.and_(b.icmp_signed("<", self.ld(i), mid), b.icmp_signed("<", self.ld(j), hi))

        def step():
            iv, jv, kv = self.ld(i), self.ld(j), self.ld(k)
            x, y = self.get(src, t, iv), self.get(src, t, jv)
            xi = self.get(isrc, I64, iv) if self.indexed else None
            yi = self.get(isrc, I64, jv) if self.indexed else None
            take = self.less(y, yi, x, xi)      # the right run's element strictly first
            self.put(dst, t, kv, b.select(take, y, x))
            if self.indexed:
                self.put(idst, I64, kv, b.select(take, yi, xi))
            inc = b.zext(take, I64)
            b.store(b.add(jv, inc), j)
            b.store(b.add(iv, b.sub(_c(1), inc)), i)
            b.store(b.add(kv, _c(1)), k)
        self.while_(both, step)
        iv, jv, kv = self.ld(i), self.ld(j), self.ld(k)
        self._copy_pair(dst, idst, src, isrc, iv, mid, kv)
        self._copy_pair(dst, idst, src, isrc, jv, hi, b.add(kv, b.sub(mid, iv)))

    def _copy_pair(self, dst, idst, src, isrc, lo, hi, to):
        self.copy(dst, src, self.t, lo, hi, to, self.dtypes[0].itemsize)
        if self.indexed:
            self.copy(idst, isrc, I64, lo, hi, to, 8)

    def build(self):
        b, n = self.b, self.n
        lo = self.var(I64, _c(0))

        def run():
            lv = self.ld(lo)
            hi = b.add(lv, _c(_RUN))
            hi = b.select(b.icmp_signed("<", hi, n), hi, n)
            self.insertion(lv, hi)
            b.store(b.add(lv, _c(_RUN)), lo)
        self.while_(lambda: b.icmp_signed("<", self.ld(lo), n), run)
        src, dst = self.var(PTR, self.A), self.var(PTR, self.B)
        isrc, idst = self.var(PTR, self.IA), self.var(PTR, self.IB)
        flip, w = self.var(I1, ir.Constant(I1, 0)), self.var(I64, _c(_RUN))

        def level():
            wv = self.ld(w)
            s, d, si, di = self.ld(src), self.ld(dst), self.ld(isrc), self.ld(idst)
            b.store(_c(0), lo)

            def pair():
                lv = self.ld(lo)
                mid = b.add(lv, wv)
                mid = b.select(b.icmp_signed("<", mid, n), mid, n)
                hi = b.add(mid, wv)
                hi = b.select(b.icmp_signed("<", hi, n), hi, n)
                in_order = self.var(I1, b.icmp_signed(">=", mid, hi))

                def check():
                    m1 = b.sub(mid, _c(1))
                    b.store(b.not_(self.less(
                        self.get(s, self.t, mid), self.get(si, I64, mid) if self.indexed else None,
                        self.get(s, self.t, m1), self.get(si, I64, m1) if self.indexed else None)),
                        in_order)
                self.if_(self.ld(in_order), lambda: None, check)
                self.if_(self.ld(in_order), lambda: self._copy_pair(d, di, s, si, lv, hi, lv),
                         lambda: self.merge(s, si, d, di, lv, mid, hi))
                b.store(hi, lo)
            self.while_(lambda: b.icmp_signed("<", self.ld(lo), n), pair)
            b.store(d, src)
            b.store(s, dst)
            b.store(di, isrc)
            b.store(si, idst)
            b.store(b.not_(self.ld(flip)), flip)
            b.store(b.mul(wv, _c(2)), w)
        self.while_(lambda: b.icmp_signed("<", self.ld(w), n), level)
        b.ret(self.ld(flip))
        self.eb.branch(self.body)


def _row_sorter(module, dtypes, indexed):
    """The module's row sorter for key ``dtypes`` (built once per module)."""
    name = "ft_sort_" + "_".join(d.str.lstrip("<>|=") for d in dtypes) + \
        ("_idx" if indexed else "")
    if name not in module.globals:
        _Row(module, name, dtypes, indexed).build()
    return module.globals[name]


# --------------------------------------------------------------------------- the equation

def _offset(fn, val, dims, idxs):
    """The element offset of ``val`` at ``idxs`` over its dims ``dims`` (i64)."""
    b, o = fn.b, _c(val.offset)
    for d, i in zip(dims, idxs):
        if val.strides[d]:
            o = b.add(o, b.mul(i, _c(val.strides[d])))
    return o


def _read_key(lw, fn, val, off):
    """One key element in its sort-buffer form (a bool as a 0/1 byte)."""
    v = lw.const(val.dtype, val.lit) if val.lit is not None else \
        load_elem(fn.b, fn.b.gep(fn.ptr(val.ref), [off], source_etype=storage(val.dtype)),
                  val.dtype)
    return fn.b.zext(v, I8) if val.dtype == np.bool_ else v


def _raw(dtype):
    return ir.IntType(8 * np.dtype(dtype).itemsize)


def _read_raw(lw, fn, val, off):
    """One element's bits (a literal as its bits)."""
    t = _raw(val.dtype)
    if val.lit is not None:
        return ir.Constant(t, int.from_bytes(np.asarray(val.lit, val.dtype).tobytes(), "little"))
    return fn.b.load(fn.b.gep(fn.ptr(val.ref), [off], source_etype=t), typ=t)


def _sort_supported(eqn, planner):
    nk = eqn.params["num_keys"]
    return all(x.aval.dtype.kind in "fiub" for x in eqn.inputs[:nk]) and \
        all(x.aval.dtype.kind != "O" for x in eqn.inputs)


@native("sort", _sort_supported, complex=True)     # complex passengers move as bits
def _sort(lw, fn, eqn, ins, outs):
    dim, nk = eqn.params["dimension"], eqn.params["num_keys"]
    shape = ins[0].shape
    n = shape[dim]
    if any(d == 0 for d in shape):
        return
    keys = ins[:nk]
    indexed = len(ins) > 1
    rowfn = _row_sorter(lw.module, [k.dtype for k in keys], indexed)
    temps = []

    def buf(dtype):
        ref, owned = lw.new_buffer(fn, ShapedArray((n,), dtype), True)
        if owned:
            temps.append(ref)
        return fn.ptr(ref)
    A, B = buf(keys[0].dtype), buf(keys[0].dtype)
    IA, IB = (buf(np.int64), buf(np.int64)) if indexed else (ir.Constant(PTR, None),) * 2
    K = [buf(k.dtype) for k in keys[1:]]
    others = [d for d in range(len(shape)) if d != dim]
    ostr = contiguous_strides(shape)
    out_ptrs = [fn.ptr(o) for o in outs]
    t0 = _reg(keys[0].dtype)

    def row(idxs):
        b = fn.b
        bases = [_offset(fn, v, others, idxs) if v.lit is None else _c(0) for v in ins]
        obase = _c(0)
        for d, i in zip(others, idxs):
            obase = b.add(obase, b.mul(i, _c(ostr[d])))

        def along(v, base, k):
            return base if v.lit is not None or not v.strides[dim] else \
                fn.b.add(base, fn.b.mul(k, _c(v.strides[dim])))

        def load_row(k):
            fn.b.store(_read_key(lw, fn, keys[0], along(keys[0], bases[0], k)),
                       fn.b.gep(A, [k], source_etype=t0))
            if indexed:
                fn.b.store(k, fn.b.gep(IA, [k], source_etype=I64))
            for j, (kv, kp) in enumerate(zip(keys[1:], K), 1):
                fn.b.store(_read_key(lw, fn, kv, along(kv, bases[j], k)),
                           fn.b.gep(kp, [k], source_etype=_reg(kv.dtype)))
        fn.loop(n, load_row)
        flip = b.call(rowfn, [A, IA, B, IB, _c(n)] + K)
        res = fn.b.select(flip, B, A)
        ires = fn.b.select(flip, IB, IA) if indexed else None

        def store_row(k):
            bb = fn.b
            ok = bb.add(obase, bb.mul(k, _c(ostr[dim])))
            r0 = bb.load(bb.gep(res, [k], source_etype=t0), typ=t0)
            bb.store(r0, bb.gep(out_ptrs[0], [ok], source_etype=t0))
            if not indexed:
                return
            src = bb.load(bb.gep(ires, [k], source_etype=I64), typ=I64)
            for j in range(1, len(ins)):
                if j < nk:
                    t = _reg(ins[j].dtype)
                    v = bb.load(bb.gep(K[j - 1], [src], source_etype=t), typ=t)
                else:
                    v = _read_raw(lw, fn, ins[j], along(ins[j], bases[j], src))
                    t = v.type
                bb.store(v, bb.gep(out_ptrs[j], [ok], source_etype=t))
        fn.loop(n, store_row)
    fn.nest([shape[d] for d in others], row)
    for r in temps:
        lw.release(r)
