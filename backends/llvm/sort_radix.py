"""The row sorter of the native ``sort``: a stable sort of unsigned integer keys (with
their positions beside them when other operands ride along): a sorting network for
short rows, networks and merges for a little longer ones, else an LSD radix sort of byte digits.

``sort`` maps every key to an unsigned integer of its width whose order is the sort's
(``key_bits``; ``decode_bits`` maps it back): an integer with its sign bit flipped, a
float's bits in IEEE total order after ``-0.0`` is made ``0.0`` and every NaN the one
positive quiet NaN, so NaNs tie after ``inf`` and the zeros tie, as in the primitive's
numpy impl. Sorting those keys stably is then one order for every dtype.

The row sorter ``i1 f(ptr A, ptr IA, ptr B, ptr IB, ptr H, i64 n)`` sorts the ``n``
keys of ``A`` (positions ``IA``) and returns whether the result ended in ``B`` /
``IB``; ``H`` is its histogram scratch (``hist_bytes``). Rows of up to ``NET_MAX``
keys are sorted in registers by a sorting network; up to ``SMALL`` (64-bit keys: 256,
narrower: 96) in blocks of 16 so, then merged bottom-up branch-free; longer ones get one histogram pass counting every byte digit at once, then
one stable scatter per digit, from the least significant, skipping a digit all keys
share (the high bytes of small integers, the sign byte of positive floats). Each row
sorter is compiled once per process (and kept in the disk cache) in a module of its
own, which programs call: a jitted sort's module holds only its loops over the rows,
so it compiles as fast as any other kernel.

>>> key_width(np.dtype("float32")), key_width(np.dtype("bool"))
(4, 1)
"""
from __future__ import annotations

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np

from jaxpr_ir import dtype_kind

from . import cache, engine
from .lltypes import I1, I8, I32, I64, Routine, emit_loop
from .values import PTR

__all__ = ["SMALL", "NET_MAX", "key_width", "key_bits", "decode_bits", "row_sorter",
           "hist_bytes", "float_parts", "network", "network_levels"]

SMALL = {1: 96, 2: 96, 4: 96, 8: 256}   # rows up to this long (by key bytes): merges
NET_MAX = 16        # rows this short are sorted in registers by a sorting network


def _c(v, t=I64):
    return ir.Constant(t, v)


def key_width(dtype) -> int:
    """The key's bytes for ``dtype`` (a bool's is one)."""
    return np.dtype(dtype).itemsize


def float_parts(dtype):
    """(sign bit, exponent mask, the canonical NaN's bits) of a float dtype's bits."""
    dtype = np.dtype(dtype)
    w = 8 * dtype.itemsize
    nmant = int(np.finfo(dtype).nmant)
    exp = ((1 << (w - 1)) - 1) & ~((1 << nmant) - 1)
    return 1 << (w - 1), exp, exp | (1 << (nmant - 1))


def key_bits(b, dtype, bits):
    """The unsigned sort key of one element's bits (an integer of its width; a bool's
    byte as 0 / 1)."""
    dtype = np.dtype(dtype)
    t = bits.type
    if dtype == np.bool_:
        return b.zext(b.icmp_unsigned("!=", bits, _c(0, t)), t)
    if dtype.kind == "u":
        return bits
    w = t.width
    sign = _c(1 << (w - 1), t)
    if dtype_kind(dtype) != "f":
        return b.xor(bits, sign)
    _, exp, nan = float_parts(dtype)
    mag = b.and_(bits, _c((1 << (w - 1)) - 1, t))
    bits = b.select(b.icmp_unsigned("==", mag, _c(0, t)), _c(0, t), bits)
    bits = b.select(b.icmp_unsigned(">", mag, _c(exp, t)), _c(nan, t), bits)
    flip = b.or_(b.ashr(bits, _c(w - 1, t)), sign)
    return b.xor(bits, flip)


def decode_bits(b, dtype, key):
    """The bits whose key is ``key`` (``key_bits`` inverted on canonical values)."""
    dtype = np.dtype(dtype)
    t = key.type
    if dtype.kind in "ub":
        return key
    sign = _c(1 << (t.width - 1), t)
    if dtype_kind(dtype) != "f":
        return b.xor(key, sign)
    neg = b.icmp_unsigned("<", key, sign)
    return b.select(neg, b.not_(key), b.xor(key, sign))


def network(n: int) -> list:
    """Batcher's odd-even merge sorting network of ``n`` inputs: its comparators
    ``(i, j)``, ``i < j``, in order (the power-of-two network without the comparators
    reaching past ``n``: those would meet a +inf padding and never swap).

    >>> network(3)
    [(0, 1), (0, 2), (1, 2)]
    """
    return [(a, b) for a, b, _ in network_levels(n)]


def network_levels(n: int) -> list:
    """``network(n)``'s comparators as ``(i, j, p)``: ``p`` the merge level, the
    comparators of the levels below ``p`` staying inside aligned blocks of ``2p``
    (those of levels up to 8 sort each aligned block of 16 on its own).

    >>> network_levels(3)
    [(0, 1, 1), (0, 2, 2), (1, 2, 2)]
    """
    p2 = 1 << max(n - 1, 0).bit_length()
    pairs, p = [], 1
    while p < p2:
        k = p
        while k >= 1:
            for j in range(k % p, p2 - k, 2 * k):
                for i in range(min(k, p2 - j - k)):
                    if (i + j) // (2 * p) == (i + j + k) // (2 * p):
                        pairs.append((i + j, i + j + k, p))
            k //= 2
        p *= 2
    return [t for t in pairs if t[1] < n]


def hist_bytes(width: int, big: bool) -> int:
    """Bytes of the histogram scratch of keys of ``width`` bytes."""
    return width * 256 * (8 if big else 4)


class _Sorter(Routine):
    """Builds one row sorter (see the module's docstring)."""

    def __init__(self, module, name, width, indexed, big):
        self.kt = ir.IntType(8 * width)
        self.it = I64 if big else I32          # positions and counts
        self.width, self.indexed = width, indexed
        self.fn = ir.Function(module, ir.FunctionType(I1, [PTR] * 5 + [I64]), name)
        self.fn.linkage = "internal"
        self.fn.attributes.add("nounwind")
        for a in self.fn.args[:5]:
            a.add_attribute("noalias")
        self.eb = ir.IRBuilder(self.fn.append_basic_block("entry"))
        body = self.fn.append_basic_block("body")
        self.b = ir.IRBuilder(body)
        self.A, self.IA, self.B, self.IB, self.H, self.n = self.fn.args
        self.memset = module.declare_intrinsic("llvm.memset", [PTR, I64])
        self.memcpy = module.declare_intrinsic("llvm.memcpy", [PTR, PTR, I64])
        self.body = body

    # ---------------------------------------------------------------- merges
    def while_(self, cond, body):
        b = self.b
        head, blk, done = self.block("w_head"), self.block("w_body"), self.block("w_end")
        b.branch(head)
        b.position_at_end(head)
        b.cbranch(cond(), blk, done)
        b.position_at_end(blk)
        body()
        b.branch(head)
        b.position_at_end(done)

    def _min(self, x, y):
        return self.b.select(self.b.icmp_signed("<", x, y), x, y)

    def merge(self, s, d, si, di, lo, mid, hi):
        """d[lo:hi] = the stable merge of s[lo:mid] and s[mid:hi] (branch-free: the
        right run's key goes first only when strictly smaller), positions alongside."""
        b, kt, it = self.b, self.kt, self.it
        i, j, k = self.var(I64, lo), self.var(I64, mid), self.var(I64, lo)

        def step():
            iv, jv, kv = b.load(i, typ=I64), b.load(j, typ=I64), b.load(k, typ=I64)
            x, y = self.get(s, kt, iv), self.get(s, kt, jv)
            take = b.icmp_unsigned("<", y, x)
            self.put(d, kt, kv, b.select(take, y, x))
            if self.indexed:
                self.put(di, it, kv, b.select(take, self.get(si, it, jv), self.get(si, it, iv)))
            inc = b.zext(take, I64)
            b.store(b.add(jv, inc), j)
            b.store(b.add(iv, b.sub(_c(1), inc)), i)
            b.store(b.add(kv, _c(1)), k)
        self.while_(lambda: b.and_(b.icmp_signed("<", b.load(i, typ=I64), mid),
                                   b.icmp_signed("<", b.load(j, typ=I64), hi)), step)
        iv, jv, kv = b.load(i, typ=I64), b.load(j, typ=I64), b.load(k, typ=I64)
        for lo_, hi_, to in ((iv, mid, kv), (jv, hi, b.add(kv, b.sub(mid, iv)))):
            for base_s, base_d, t, size in ((s, d, kt, self.width),) + \
                    (((si, di, it, it.width // 8),) if self.indexed else ()):
                b.call(self.memcpy, [b.gep(base_d, [to], source_etype=t),
                                     b.gep(base_s, [lo_], source_etype=t),
                                     b.mul(b.sub(hi_, lo_), _c(size)), _c(0, I1)])

    def merge_sort(self, net):
        """Blocks of NET_MAX sorted by the network, then merged bottom-up between the
        two buffers; returns whether the result is in B / IB."""
        b, it = self.b, self.it
        lo = self.var(I64, _c(0))

        def block():
            lv = b.load(lo, typ=I64)
            ia = b.gep(self.IA, [lv], source_etype=it) if self.indexed else self.IA
            b.call(net, [b.gep(self.A, [lv], source_etype=self.kt), ia,
                         self._min(_c(NET_MAX), b.sub(self.n, lv))])
            b.store(b.add(lv, _c(NET_MAX)), lo)
        self.while_(lambda: b.icmp_signed("<", b.load(lo, typ=I64), self.n), block)
        src, dst = self.var(PTR, self.A), self.var(PTR, self.B)
        isrc, idst = self.var(PTR, self.IA), self.var(PTR, self.IB)
        flip, w = self.var(I1, _c(0, I1)), self.var(I64, _c(NET_MAX))

        def level():
            wv = b.load(w, typ=I64)
            s, d = b.load(src, typ=PTR), b.load(dst, typ=PTR)
            si, di = b.load(isrc, typ=PTR), b.load(idst, typ=PTR)
            b.store(_c(0), lo)

            def pair():
                lv = b.load(lo, typ=I64)
                mid = self._min(b.add(lv, wv), self.n)
                hi = self._min(b.add(mid, wv), self.n)
                self.merge(s, d, si, di, lv, mid, hi)
                b.store(hi, lo)
            self.while_(lambda: b.icmp_signed("<", b.load(lo, typ=I64), self.n), pair)
            for p, v in ((src, d), (dst, s), (isrc, di), (idst, si)):
                b.store(v, p)
            b.store(b.not_(b.load(flip, typ=I1)), flip)
            b.store(b.mul(wv, _c(2)), w)
        self.while_(lambda: b.icmp_signed("<", b.load(w, typ=I64), self.n), level)
        return b.load(flip, typ=I1)

    # ---------------------------------------------------------------- radix
    def digit(self, v, shift):
        return self.b.zext(self.b.trunc(self.b.lshr(v, shift), I8), I64)

    def histogram(self):
        b, it, kt = self.b, self.it, self.kt
        nbytes = hist_bytes(self.width, it == I64)
        b.call(self.memset, [self.H, _c(0, I8), _c(nbytes), _c(0, I1)])

        def count(k):
            v = self.get(self.A, kt, k)
            for j in range(self.width):
                slot = b.gep(self.H, [b.add(_c(256 * j), self.digit(v, _c(8 * j, kt)))],
                             source_etype=it)
                b.store(b.add(b.load(slot, typ=it), _c(1, it)), slot)
        emit_loop(self, self.n, count)

    def radix(self):
        """Histograms, then a stable scatter per digit not shared by every key."""
        b, it, kt = self.b, self.it, self.kt
        self.histogram()
        src, dst = self.var(PTR, self.A), self.var(PTR, self.B)
        isrc, idst = self.var(PTR, self.IA), self.var(PTR, self.IB)
        flip = self.var(I1, _c(0, I1))
        n_it = b.trunc(self.n, it) if it != I64 else self.n

        def digit_pass(j):
            s, d = b.load(src, typ=PTR), b.load(dst, typ=PTR)
            si, di = b.load(isrc, typ=PTR), b.load(idst, typ=PTR)
            shift = b.trunc(b.mul(j, _c(8)), kt) if kt != I64 else b.mul(j, _c(8))
            h = b.gep(self.H, [b.mul(j, _c(256))], source_etype=it)
            first = self.get(h, it, self.digit(self.get(s, kt, _c(0)), shift))
            go, skip = self.block("pass"), self.block("pass_end")
            b.cbranch(b.icmp_unsigned("!=", first, n_it), go, skip)
            b.position_at_end(go)
            total = self.var(it, _c(0, it))

            def prefix(dg):
                c = self.get(h, it, dg)
                t = b.load(total, typ=it)
                self.put(h, it, dg, t)
                b.store(b.add(t, c), total)
            emit_loop(self, 256, prefix)

            def scatter(k):
                v = self.get(s, kt, k)
                slot = b.gep(h, [self.digit(v, shift)], source_etype=it)
                p = b.load(slot, typ=it)
                b.store(b.add(p, _c(1, it)), slot)
                pz = b.zext(p, I64) if it != I64 else p
                self.put(d, kt, pz, v)
                if self.indexed:
                    self.put(di, it, pz, self.get(si, it, k))
            emit_loop(self, self.n, scatter)
            b.store(d, src)
            b.store(s, dst)
            b.store(di, isrc)
            b.store(si, idst)
            b.store(b.not_(b.load(flip, typ=I1)), flip)
            b.branch(skip)
            b.position_at_end(skip)
        emit_loop(self, self.width, digit_pass)
        return b.load(flip, typ=I1)

    # ---------------------------------------------------------------- networks
    def networks(self):
        """Rows of 2..NET_MAX: the sorting network of 4, 8 or 16 (min / max in
        registers), the missing keys all ones (they sort last; only the row's own ``n``
        are written back). With positions it sorts ``key << 8 | k``: by (key, place
        k), so stable; the place then fetches the position that was at it."""
        b, kt, it, n = self.b, self.kt, self.it, self.n
        wt = ir.IntType(max(16, 1 << (kt.width + 7).bit_length())) if self.indexed else kt
        lo, hi = (_intrinsic(self.fn.module, f"llvm.{m}.i{wt.width}", wt)
                  for m in ("umin", "umax"))
        done = self.block("net_done")
        tmp = self.eb.alloca(it, size=_c(NET_MAX)) if self.indexed else None
        for size in (4, 8, 16):
            blk, other = self.block(f"net{size}"), self.block(f"net{size}_no")
            b.cbranch(b.icmp_signed("<=", n, _c(size)), blk, other)
            b.position_at_end(blk)
            vals = []
            for k in range(size):
                real = b.icmp_signed("<", _c(k), n)
                at = b.select(real, _c(k), _c(0))
                v = self.get(self.A, kt, at)
                if self.indexed:
                    self.put(tmp, it, _c(k), self.get(self.IA, it, at))
                    v = b.or_(b.shl(b.zext(v, wt), _c(8, wt)), _c(k, wt))
                vals.append(b.select(real, v, _c((1 << wt.width) - 1, wt)))
            for x, y in network(size):
                vals[x], vals[y] = b.call(lo, [vals[x], vals[y]]), b.call(hi, [vals[x], vals[y]])
            for k, v in enumerate(vals):
                with b.if_then(b.icmp_signed("<", _c(k), n)):
                    if self.indexed:
                        place = b.zext(b.trunc(v, ir.IntType(4)), I64)
                        self.put(self.IA, it, _c(k), self.get(tmp, it, place))
                        v = b.trunc(b.lshr(v, _c(8, wt)), kt)
                    self.put(self.A, kt, _c(k), v)
            b.branch(done)
            b.position_at_end(other)
        b.branch(done)
        b.position_at_end(done)
        b.ret(_c(0, I1))

    def network_fn(self):
        """The networks as an internal function ``net(ptr A, ptr IA, i64 n)``."""
        keep = self.fn, self.b, self.eb, self.A, self.IA, self.n
        f = ir.Function(self.fn.module, ir.FunctionType(I1, [PTR, PTR, I64]),
                        self.fn.name + "_net")
        f.linkage = "internal"
        f.attributes.add("nounwind")
        self.fn, (self.A, self.IA, self.n) = f, f.args
        entry = f.append_basic_block("entry")
        self.eb = ir.IRBuilder(entry)
        body = f.append_basic_block("body")
        self.b = ir.IRBuilder(body)
        self.networks()
        self.eb.branch(body)
        self.fn, self.b, self.eb, self.A, self.IA, self.n = keep
        return f

    def build(self):
        net = self.network_fn()
        b = self.b
        tiny, small, big = self.block("tiny"), self.block("small"), self.block("big")
        b.cbranch(b.icmp_signed("<=", self.n, _c(NET_MAX)), tiny, small)
        b.position_at_end(tiny)
        b.call(net, [self.A, self.IA, self.n])
        b.ret(_c(0, I1))
        b.position_at_end(small)
        b.cbranch(b.icmp_signed("<=", self.n, _c(SMALL[self.width])), self.block("merges"),
                  big)
        b.position_at_end(self.fn.blocks[-1])
        self.b.ret(self.merge_sort(net))
        self.b.position_at_end(big)
        self.b.ret(self.radix())
        self.eb.branch(self.body)


_LIBRARY: dict = {}      # (width, indexed, big) -> the loaded module, kept for the process


def _intrinsic(module, name, t):
    """``t name(t, t)`` declared in ``module``."""
    f = module.globals.get(name)
    return f if f is not None else ir.Function(module, ir.FunctionType(t, [t, t]), name)


def _name(width, indexed, big):
    return f"ft_rsort_u{8 * width}" + ("_idx" if indexed else "") + ("_big" if big else "")


def _load(width, indexed, big):
    """Compile (or read from the disk cache) and load one row sorter once per process,
    and give its symbol to LLVM's resolver."""
    key = (width, indexed, big)
    if key not in _LIBRARY:
        with engine.LOCK:
            if key not in _LIBRARY:
                mod = ir.Module(name=f"ft_library_{_name(*key)}")
                mod.triple, mod.data_layout = engine.triple(), engine.data_layout()
                sorter = _Sorter(mod, _name(*key), width, indexed, big)
                sorter.fn.linkage = "external"
                sorter.build()
                loaded, _ = cache.load(str(mod))
                llvm.add_symbol(_name(*key), loaded.address(_name(*key)))
                _LIBRARY[key] = loaded
    return _LIBRARY[key]


def row_sorter(module, width: int, indexed: bool, big: bool):
    """The declaration in ``module`` of the row sorter of ``width``-byte keys
    (positions beside them when ``indexed``; 64-bit positions and counts when
    ``big``), its library loaded."""
    _load(width, indexed, big)
    name = _name(width, indexed, big)
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(I1, [PTR] * 5 + [I64]), name)
        fn.attributes.add("nounwind")
    return fn
