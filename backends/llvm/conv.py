"""``conv_general_dilated`` natively: shifted GEMMs on a zero-padded grid, BLAS
``?gemm`` called from the generated code (the library ``blas`` found), float32/float64.

Every configuration of the primitive is lowered (window strides, padding with negative
pads cropping, lhs and kernel dilation, feature or batch groups, any dimension numbers,
0 to 3+ spatial dimensions) when the operands and the result share one float dtype and a
BLAS was found; integer, complex and mixed-precision convolutions stay the numpy impl.

In canonical layout (``x`` (N, C, X...), ``w`` (O, I, K...)) with the lhs dilated and
padded into a zero grid of ``S`` elements (C-order strides ``g``), an output position
``y`` and a kernel tap ``k`` are flat grid offsets ``pos(y) = sum y_j s_j g_j`` and
``off(k) = sum k_j rd_j g_j``, and

    out[n, o, y] = sum_{c, k} xp[n, c, pos(y) + off(k)] * w[o, c, k]

(a valid output never reads past its own image's grid). Two ways to make GEMMs of it:

*few taps* (a forward convolution, the lhs cotangent): per output image (spread over
the thread pool, each thread with its own scratch, in cache), the image's channels are
padded into ``xp`` (I, S), then one GEMM per tap ``acc (O, m) += w_k (O, I) @ xp[:, off(k):]``
(``ldb = S``, beta 1 after the first; no im2col copy), then the valid positions of
``acc`` are copied to the output. With window strides > 1 (a tap's windows are then no
shifted view) or few channels per group (GEMMs with a contraction of I < 16 waste the
BLAS), every tap's windows are gathered into ``cols`` (I*K, Y) for one GEMM per image and
group (im2col, in the thread's scratch). With fewer than 16 output channels per group
the per-image GEMMs are transposed (the output positions as their rows).

An lhs-dilated stride-1 convolution (the lhs cotangent of a strided one) with 16+
channels is split by output phase (``y = r + ld v`` per dim): each phase's outputs get
only the taps that reach real lhs elements, as shifted GEMMs over the undilated padded
image, instead of GEMMs over the dilated grid's zeros.

With at most ``DIRECT_MAX_OUT`` output channels per group (numpy's 1-d ``convolve``, a
depthwise convolution) and stride 1, the taps are no GEMMs but vector loops, ``acc[o,
:] += w_k[o, ci] * xp[ci, off(k):]`` per tap and channel: the GEMMs there are
matrix-vector products of degenerate shapes running at scalar speed.

*few outputs* (a kernel cotangent: the "kernel" is an image, the output a few taps):
per lhs feature ``i`` (spread over the pool in a fixed number of blocks, each summed in
order into a part of its own, the parts added in order: the same bits on any number of
threads) the taps' elements ``xp[b, i, pos(y) + off(k)]`` of every (b, y) are gathered
into ``cols`` (N'*Y, K) and ``part (N'*Y, O) += cols @ w[:, i, :].T``: one GEMM with N'*Y
rows per feature (a 64x64 product contracting a whole batch of grids, one per output
position, runs at a fraction of the BLAS's speed). When N'*Y is large, the kernel is
embedded in a zero grid ``we`` (O, I, S) at its taps and one GEMM per output position
contracts channels and grid at once: ``out[:, :, y] = xp[:, :, pos(y):] (N', I*S) @
we (O, I*S).T``.

Threads: the pool splits the images (or positions); while it runs, the BLAS is set to
one thread (its ``set_num_threads``, restored after) so that each thread's GEMMs run on
that thread instead of queueing for the BLAS's own. With the pool off (one free core,
``FUNCTRANS_NUM_THREADS=1``), a forked process or a single work item, everything runs on
the calling thread and the BLAS keeps the count ``threads.balance`` gave it.

>>> "conv_general_dilated" in NATIVE
True
"""
from __future__ import annotations

import itertools

import llvmlite.ir as ir
import numpy as np

from jaxpr_ir import ShapedArray
from ..fusion import contiguous_strides
from . import blas
from .conv_gemm import NO_TRANS, TRANS, at, gemm, lin, parallel, permuted, slots, zero
from .equations import NATIVE, native
from .lltypes import I64, emit_loop as loop, emit_nest as nest, lltype
from .values import Val

__all__: list = []

FEATURE_ROWS_MAX = 4096     # N' * Y at most for the per-feature kernel-cotangent GEMMs
NARROW_BELOW = 16           # fewer output channels per group: GEMMs with the outputs as rows
SHIFT_MIN_CHANNELS = 16     # fewer input channels per group: one im2col GEMM per image
PHASE_TAPS_MAX = 256        # taps of an lhs-dilated convolution split by output phase
IM2COL_MAX = 1 << 24        # elements of a thread's im2col (more: shifted views if stride 1)
COLS_MAX = 1 << 22          # elements of a thread's gathered windows there (16 MiB in f32)
DIRECT_MAX_OUT = 2          # output channels per group at most: stride-1 taps as vector loops


def _supports(eqn, planner):
    x, w = eqn.inputs[0].aval, eqn.inputs[1].aval
    out = eqn.outvars[0].aval
    if not (x.dtype == w.dtype == out.dtype and x.dtype in (np.float32, np.float64)):
        return False
    if not blas.available():
        return False
    if blas._library()["int"] == 32:     # every GEMM extent must fit the BLAS's int
        c = _Conv(eqn)
        return max(c.C * c.S * max(c.N, c.O), c.O * c.I * c.S, c.I * c.kt * c.yt,
                   c.N2 * c.yt * c.kt) < 2**31
    return True


class _Conv:
    """The canonical sizes of one convolution equation and its padded grid."""

    def __init__(self, eqn):
        p = eqn.params
        ls, rs, os_ = p["dimension_numbers"]
        xa, wa, oa = eqn.inputs[0].aval, eqn.inputs[1].aval, eqn.outvars[0].aval
        self.ls, self.rs, self.os = ls, rs, os_
        self.N, self.C = xa.shape[ls[0]], xa.shape[ls[1]]
        self.O, self.I = wa.shape[rs[0]], wa.shape[rs[1]]
        self.xsz = tuple(xa.shape[d] for d in ls[2:])
        self.ksz = tuple(wa.shape[d] for d in rs[2:])
        self.ysz = tuple(oa.shape[d] for d in os_[2:])
        self.G, self.B = p["feature_group_count"], p["batch_group_count"]
        self.Q = max(self.G, self.B)
        self.N2 = self.N // self.B
        self.Oq = self.O // self.Q
        self.pad = p["padding"]
        self.rd, self.s, self.ld = p["rhs_dilation"], p["window_strides"], p["lhs_dilation"]
        dil = tuple((n - 1) * d + 1 if n else 0 for n, d in zip(self.xsz, self.ld))
        self.grid = tuple(n + lo + hi for n, (lo, hi) in zip(dil, self.pad))
        self.S = int(np.prod(self.grid, dtype=np.int64))
        self.g = contiguous_strides(self.grid)
        self.kt = int(np.prod(self.ksz, dtype=np.int64))
        self.yt = int(np.prod(self.ysz, dtype=np.int64))
        self.ps = tuple(s * g for s, g in zip(self.s, self.g))     # grid step per output
        self.pos_max = sum((y - 1) * p for y, p in zip(self.ysz, self.ps))
        # the lhs elements that land in the grid (at dst0 + t * dstep): first, count
        self.src0 = tuple(-(min(lo, 0) // d) for (lo, _), d in zip(self.pad, self.ld))
        self.dst0 = tuple(f * d + lo for f, d, (lo, _) in zip(self.src0, self.ld, self.pad))
        self.cnt = tuple(min(n - 1, (gr - 1 - lo) // d) - f + 1 for n, gr, d, f, (lo, _) in
                         zip(self.xsz, self.grid, self.ld, self.src0, self.pad))
        self.dstep = tuple(d * g for d, g in zip(self.ld, self.g))
        self.unit = all(v == 1 for v in self.s)     # shifted views, else a gather per tap
        self.narrow = self.Oq < NARROW_BELOW        # few output channels: GEMMs transposed
        self.dtype = oa.dtype


# --------------------------------------------------------------------------- emitter

@native("conv_general_dilated", _supports)
def _conv(lw, fn, eqn, ins, outs):
    c = _Conv(eqn)
    optr = fn.ptr(outs[0])
    if eqn.outvars[0].aval.size == 0:
        return
    if c.I == 0 or any(n <= 0 for n in c.cnt):     # no product, or no lhs element in the grid
        zero(fn, optr, c.dtype, eqn.outvars[0].aval.size)
        return
    x = permuted(ins[0], c.ls)
    w = permuted(ins[1], c.rs)
    ostr = contiguous_strides(eqn.outvars[0].aval.shape)
    ocs = tuple(ostr[d] for d in c.os)           # canonical (N', O, Y...) output strides
    if c.kt <= c.yt and c.unit and any(d > 1 for d in c.ld) and c.I >= SHIFT_MIN_CHANNELS \
            and c.kt <= PHASE_TAPS_MAX:
        _phase_taps(lw, fn, c, x, w, optr, ocs)
    elif c.kt <= c.yt:
        _few_taps(lw, fn, c, x, w, optr, ocs)
    elif c.N2 * c.yt <= FEATURE_ROWS_MAX and c.N2 * c.yt * c.kt <= COLS_MAX:
        _few_outputs_per_feature(lw, fn, c, x, w, optr, ocs)
    else:
        _few_outputs(lw, fn, c, x, w, optr, ocs)


def _buffer(lw, fn, dt, n):
    ref, _ = lw.new_buffer(fn, ShapedArray((max(n, 1),), dt), False)
    return ref


def _few_taps(lw, fn, c, x, w, optr, ocs):
    dt = c.dtype
    nsp = len(c.ksz)
    direct = c.unit and c.Oq <= DIRECT_MAX_OUT
    shift = direct or (c.unit and (c.I >= SHIFT_MIN_CHANNELS or c.I * c.kt * c.yt > IM2COL_MAX))
    # shifted views: the kernel as (K..., O, I), w_k rows q*Oq.. of a contiguous (O, I)
    # block; im2col: as (O, I*K), rows q*Oq.. for group q
    wk = _buffer(lw, fn, dt, c.kt * c.O * c.I)
    lw.copy(fn, permuted(w, tuple(range(2, 2 + nsp)) + (0, 1)) if shift else w, fn.ptr(wk))
    m = c.pos_max + 1 if shift else c.yt          # GEMM columns
    ldc = c.S if shift else c.yt                   # acc's row stride
    per = c.I * c.S + c.Oq * ldc + (0 if shift else c.I * c.kt * c.yt)
    scratch = _buffer(lw, fn, dt, per * slots())
    lit = x.lit
    ptrs = [fn.ptr(wk), fn.ptr(scratch), optr] + ([] if lit is not None else [fn.ptr(x.ref)])

    def body(h, lo, hi, p, slot):
        b = h.b
        wkp, scr, op = p[0], p[1], p[2]
        xp = b.gep(scr, [b.mul(slot, ir.Constant(I64, per))], source_etype=lltype(dt))
        acc = b.gep(xp, [ir.Constant(I64, c.I * c.S)], source_etype=lltype(dt))
        cols = b.gep(acc, [ir.Constant(I64, c.Oq * ldc)], source_etype=lltype(dt))
        zero(h, xp, dt, c.I * c.S)

        def image(n):
            def group(q):
                _pad_image(h, c, x, p[3] if lit is None else None, xp, n, q)
                if direct:
                    _tap_loops(h, c, wkp, xp, acc, q, m)
                elif shift:
                    _tap_gemms(h, lw.module, c, wkp, xp, acc, q, m)
                else:
                    _im2col_gemm(h, lw.module, c, wkp, xp, acc, q, cols)
                _crop(h, c, acc, op, n, q, ocs, shift, c.narrow and not direct)
            loop(h, c.Q, group)
        loop(h, b.sub(hi, lo), image, start=lo)
    parallel(lw, fn, "conv_taps", c.N2, ptrs, body)
    for r in (wk, scratch):
        lw.release(r)


def _image_base(h, c, n, q):
    """(lhs image index, first channel) that group ``q`` of output image ``n`` reads."""
    b = h.b
    nin = b.add(n, b.mul(q, ir.Constant(I64, c.N2))) if c.B > 1 else n
    c0 = b.mul(q, ir.Constant(I64, c.I)) if c.G > 1 else ir.Constant(I64, 0)
    return nin, c0


def _pad_image(h, c, x, xptr, xp, n, q, place=None):
    """xp[ci, grid] = the lhs image's channels of group q, in the grid's valid part;
    ``place`` = (first position, step per element, grid size) when not ``c``'s grid."""
    b = h.b
    dt = c.dtype
    nin, c0 = _image_base(h, c, n, q)
    if x.lit is not None:
        val = ir.Constant(lltype(dt), float(x.lit))
    xs = x.strides if x.lit is None else (0,) * len(x.shape)
    base = None
    if x.lit is None:
        base = lin(b, x.offset + sum(s0 * st for s0, st in zip(c.src0, xs[2:])),
                    [nin, c0], xs[:2])
    dst0, dstep, size = place or (sum(d * g for d, g in zip(c.dst0, c.g)), c.dstep, c.S)

    def row(idxs):
        ci, sp = idxs[0], idxs[1:]
        bb = h.b
        v = val if x.lit is not None else bb.load(
            at(bb, xptr, dt, lin(bb, lin(bb, base, [ci], xs[1:2]), sp, xs[2:])),
            typ=lltype(dt))
        bb.store(v, at(bb, xp, dt, lin(bb, dst0, [ci] + sp, (size,) + dstep)))
    nest(h, [c.I] + list(c.cnt), row)


def _tap_gemms(h, module, c, wkp, xp, acc, q, m):
    """acc (Oq, m; rows S apart) = sum over taps of w_k[q block] @ xp[:, off(k):]."""
    dt = c.dtype
    kst = contiguous_strides(c.ksz)
    offs = tuple(r * g for r, g in zip(c.rd, c.g))

    def tap(ks):
        b = h.b
        kidx = lin(b, 0, ks, kst)
        off = lin(b, 0, ks, offs)
        a = at(b, wkp, dt, b.add(b.mul(kidx, ir.Constant(I64, c.O * c.I)),
                                 b.mul(q, ir.Constant(I64, c.Oq * c.I))))
        beta = b.select(b.icmp_signed("==", kidx, ir.Constant(I64, 0)),
                        ir.Constant(lltype(dt), 0.0), ir.Constant(lltype(dt), 1.0))
        xs = at(b, xp, dt, off)
        if c.narrow:        # acc.T (m, Oq) += xp[:, off(k):].T @ w_k[q block].T
            gemm(h, module, dt, (TRANS, TRANS), m, c.Oq, c.I, xs, c.S, a, c.I, beta, acc, c.Oq)
        else:
            gemm(h, module, dt, (NO_TRANS, NO_TRANS), c.Oq, m, c.I, a, c.I, xs, c.S, beta,
                 acc, c.S)
    nest(h, list(c.ksz), tap)


def _tap_loops(h, c, wkp, xp, acc, q, m):
    """acc (Oq, m; rows S apart) = sum over taps k and channels ci of w_k[q*Oq + o, ci] *
    xp[ci, off(k):], one vector loop (an axpy over the grid) per (tap, o, ci). With one
    or two output channels the GEMMs are matrix-vector products: per tap a BLAS call of
    a degenerate shape, or an im2col copy of every window, both ~1 ns per product (the
    1-d convolve of 1e4 by 101 taps: ~1 ms, numpy 0.2 ms)."""
    dt = c.dtype
    zero(h, acc, dt, c.Oq * c.S)
    kst = contiguous_strides(c.ksz)
    offs = tuple(r * g for r, g in zip(c.rd, c.g))

    def tap(ks):
        b = h.b
        kbase = b.add(b.mul(lin(b, 0, ks, kst), ir.Constant(I64, c.O * c.I)),
                      b.mul(q, ir.Constant(I64, c.Oq * c.I)))
        off = lin(b, 0, ks, offs)

        def pair(idxs):
            o, ci = idxs
            bb = h.b
            wv = bb.load(at(bb, wkp, dt, lin(bb, kbase, [o, ci], (c.I, 1))), typ=lltype(dt))
            src = at(bb, xp, dt, lin(bb, off, [ci], (c.S,)))
            dst = at(bb, acc, dt, lin(bb, 0, [o], (c.S,)))

            def axpy(j):
                b2 = h.b
                xv = b2.load(at(b2, src, dt, j), typ=lltype(dt))
                d = at(b2, dst, dt, j)
                b2.store(b2.fadd(b2.load(d, typ=lltype(dt)), b2.fmul(wv, xv)), d)
            loop(h, m, axpy)
        nest(h, [c.Oq, c.I], pair)
    nest(h, list(c.ksz), tap)


def _im2col_gemm(h, module, c, wkp, xp, acc, q, cols):
    """cols[(ci, k), y] = xp[ci, off(k) + pos(y)]; acc (Oq, Y) = w[q block] (Oq, I*K) @ cols."""
    dt = c.dtype
    offs = tuple(r * g for r, g in zip(c.rd, c.g))
    dst = contiguous_strides((c.I,) + c.ksz + c.ysz)

    def gather(idxs):
        b = h.b
        v = b.load(at(b, xp, dt, lin(b, 0, idxs, (c.S,) + offs + c.ps)), typ=lltype(dt))
        b.store(v, at(b, cols, dt, lin(b, 0, idxs, dst)))
    nest(h, [c.I] + list(c.ksz) + list(c.ysz), gather)
    b = h.b
    k = c.I * c.kt
    a = at(b, wkp, dt, b.mul(q, ir.Constant(I64, c.Oq * k)))
    if c.narrow:            # acc.T (Y, Oq) = cols.T @ w[q block].T
        gemm(h, module, dt, (TRANS, TRANS), c.yt, c.Oq, k, cols, c.yt, a, k, 0.0, acc, c.Oq)
    else:
        gemm(h, module, dt, (NO_TRANS, NO_TRANS), c.Oq, c.yt, k, a, k, cols, c.yt, 0.0, acc,
             c.yt)


def _crop(h, c, acc, op, n, q, ocs, shift, narrow):
    """out[n, q*Oq + o, y] = acc[o, pos(y)] (``shift``: acc's columns on the grid, else
    dense; ``narrow``: acc transposed)."""
    dt = c.dtype
    ys = c.g if shift else contiguous_strides(c.ysz)
    ldc = 1 if narrow else (c.S if shift else c.yt)
    if narrow:
        ys = tuple(v * c.Oq for v in ys)

    def elem(idxs):
        b = h.b
        o, yi = idxs[0], idxs[1:]
        v = b.load(at(b, acc, dt, lin(b, b.mul(o, ir.Constant(I64, ldc)), yi, ys)),
                   typ=lltype(dt))
        oo = b.add(b.mul(q, ir.Constant(I64, c.Oq)), o)
        d = lin(b, lin(b, 0, [n, oo], ocs[:2]), yi, ocs[2:])
        b.store(v, at(b, op, dt, d))
    nest(h, [c.Oq] + list(c.ysz), elem)


def _phase_plan(c):
    """An lhs-dilated stride-1 convolution split by output phase: per spatial dim, for
    each residue r of the output position (y = r + ld v), the count of such outputs and
    the taps that reach a real lhs element, ``(k, e)`` with the lhs element ``v + e``
    (relative to the first one in the grid); and the undilated grid holding them
    (``lo`` zeros before the lhs elements, ``size`` positions)."""
    plan = []
    for j in range(len(c.ksz)):
        ld, rd, d0 = c.ld[j], c.rd[j], c.dst0[j]
        per_r = []
        for r in range(ld):
            taps = [(k, (r + k * rd - d0) // ld) for k in range(c.ksz[j])
                    if (r + k * rd - d0) % ld == 0]
            per_r.append((r, len(range(r, c.ysz[j], ld)), taps))
        used = [(yr, e) for _, yr, taps in per_r if yr for _, e in taps]
        lo = max([0] + [-e for _, e in used])
        size = max([lo + c.cnt[j]] + [yr + e + lo for yr, e in used])
        plan.append((per_r, lo, size))
    return plan


def _phase_taps(lw, fn, c, x, w, optr, ocs):
    """The lhs-dilated stride-1 convolution (the lhs cotangent of a strided one) without
    the dilation's zeros: per output phase, the taps that reach lhs elements as shifted
    GEMMs over the undilated padded image (``prod(ld)`` times less work than the dilated
    grid), each phase's outputs then written ``ld`` apart."""
    dt = c.dtype
    nsp = len(c.ksz)
    plan = _phase_plan(c)
    grid = tuple(size for _, _, size in plan)
    g2 = contiguous_strides(grid)
    s2 = int(np.prod(grid, dtype=np.int64))
    wk = _buffer(lw, fn, dt, c.kt * c.O * c.I)
    lw.copy(fn, permuted(w, tuple(range(2, 2 + nsp)) + (0, 1)), fn.ptr(wk))
    per = (c.I + c.Oq) * s2
    scratch = _buffer(lw, fn, dt, per * slots())
    lit = x.lit
    ptrs = [fn.ptr(wk), fn.ptr(scratch), optr] + ([] if lit is not None else [fn.ptr(x.ref)])
    place = (sum(lo * g for (_, lo, _), g in zip(plan, g2)), g2, s2)

    def body(h, lo, hi, p, slot):
        b = h.b
        xq = b.gep(p[1], [b.mul(slot, ir.Constant(I64, per))], source_etype=lltype(dt))
        acc = b.gep(xq, [ir.Constant(I64, c.I * s2)], source_etype=lltype(dt))
        zero(h, xq, dt, c.I * s2)

        def image(n):
            def group(q):
                _pad_image(h, c, x, p[3] if lit is None else None, xq, n, q, place)
                for combo in itertools.product(*[per_r for per_r, _, _ in plan]):
                    _phase(h, lw.module, c, plan, g2, combo, p[0], xq, acc, p[2], n, q, ocs)
            loop(h, c.Q, group)
        loop(h, b.sub(hi, lo), image, start=lo)
    parallel(lw, fn, "conv_phases", c.N2, ptrs, body)
    for r in (wk, scratch):
        lw.release(r)


def _phase(h, module, c, plan, g2, combo, wkp, xq, acc, op, n, q, ocs):
    """One output phase (one residue per dim): its taps' GEMMs into acc, then its
    outputs (zeros when no tap reaches the lhs)."""
    dt = c.dtype
    yrs = [yr for _, yr, _ in combo]
    if 0 in yrs:
        return
    kst = contiguous_strides(c.ksz)
    taps = list(itertools.product(*[taps for _, _, taps in combo]))
    m = sum((yr - 1) * g for yr, g in zip(yrs, g2)) + 1
    s2 = g2[0] * plan[0][2]
    for t, tap in enumerate(taps):
        b = h.b
        kidx = sum(k * ks for (k, _), ks in zip(tap, kst))
        off = sum((e + lo) * g for (_, e), (_, lo, _), g in zip(tap, plan, g2))
        a = at(b, wkp, dt, b.add(ir.Constant(I64, kidx * c.O * c.I),
                                 b.mul(q, ir.Constant(I64, c.Oq * c.I))))
        xs = at(b, xq, dt, off)
        beta = 0.0 if t == 0 else 1.0
        if c.narrow:
            gemm(h, module, dt, (TRANS, TRANS), m, c.Oq, c.I, xs, s2, a, c.I, beta, acc, c.Oq)
        else:
            gemm(h, module, dt, (NO_TRANS, NO_TRANS), c.Oq, m, c.I, a, c.I, xs, s2, beta,
                 acc, s2)
    ldc, vs = (1, tuple(g * c.Oq for g in g2)) if c.narrow else (s2, g2)
    base = sum(r * st for (r, _, _), st in zip(combo, ocs[2:]))
    ystep = tuple(ld * st for ld, st in zip(c.ld, ocs[2:]))
    zero_v = ir.Constant(lltype(dt), 0.0)

    def elem(idxs):
        b = h.b
        o, vi = idxs[0], idxs[1:]
        v = zero_v if not taps else b.load(
            at(b, acc, dt, lin(b, b.mul(o, ir.Constant(I64, ldc)), vi, vs)), typ=lltype(dt))
        oo = b.add(b.mul(q, ir.Constant(I64, c.Oq)), o)
        b.store(v, at(b, op, dt, lin(b, lin(b, base, [n, oo], ocs[:2]), vi, ystep)))
    nest(h, [c.Oq] + yrs, elem)


def _padded_lhs(lw, fn, c, x):
    """The whole lhs padded into its grids (N, C, S), in the workspace."""
    dt = c.dtype
    xp = _buffer(lw, fn, dt, c.N * c.C * c.S)
    zero(fn, fn.ptr(xp), dt, c.N * c.C * c.S)
    xv = x.reshaped((c.N, c.C) + c.cnt, offset=x.offset if x.lit is not None else
                    x.offset + sum(s0 * st for s0, st in zip(c.src0, x.strides[2:])))
    lw.copy(fn, xv, fn.ptr(xp), (c.C * c.S, c.S) + c.dstep,
            sum(d * g for d, g in zip(c.dst0, c.g)))
    return xp


def _grid_operands(lw, fn, c, x, w):
    """The whole lhs padded into its grids (N, C, S) and the kernel embedded in a zero
    grid at its taps (O, I, S), both in the workspace."""
    dt = c.dtype
    xp = _padded_lhs(lw, fn, c, x)
    we = _buffer(lw, fn, dt, c.O * c.I * c.S)
    zero(fn, fn.ptr(we), dt, c.O * c.I * c.S)
    lw.copy(fn, w, fn.ptr(we), (c.I * c.S, c.S) + tuple(r * g for r, g in zip(c.rd, c.g)))
    return xp, we


def _position(h, c, y):
    """pos(y) of the flat output index ``y`` (an i64)."""
    b = h.b
    pos, rem = ir.Constant(I64, 0), y
    for j in reversed(range(len(c.ysz))):
        yj = b.urem(rem, ir.Constant(I64, c.ysz[j])) if j else rem
        rem = b.udiv(rem, ir.Constant(I64, c.ysz[j])) if j else rem
        pos = b.add(pos, b.mul(yj, ir.Constant(I64, c.ps[j])))
    return pos


def _few_outputs(lw, fn, c, x, w, optr, ocs):
    """Per output position y: out[:, q block, y] = xp[q block][:, :, pos(y):] @ we[q].T,
    contracting channels and grid at once (rows: the N' images)."""
    dt = c.dtype
    nsp = len(c.ksz)
    xp, we = _grid_operands(lw, fn, c, x, w)
    t = _buffer(lw, fn, dt, c.yt * c.N2 * c.O)          # (Y..., N', O)
    m = c.I * c.S - c.pos_max

    def body(h, lo, hi, p, slot):
        xpp, wep, tp = p

        def position(y):
            pos = _position(h, c, y)

            def group(q):
                bb = h.b
                a0 = bb.mul(q, ir.Constant(I64, (c.N2 * c.C * c.S if c.B > 1 else 0)
                                           + (c.I * c.S if c.G > 1 else 0)))
                a = at(bb, xpp, dt, bb.add(a0, pos))
                bw = at(bb, wep, dt, bb.mul(q, ir.Constant(I64, c.Oq * c.I * c.S)))
                cc = at(bb, tp, dt, bb.add(bb.mul(y, ir.Constant(I64, c.N2 * c.O)),
                                           bb.mul(q, ir.Constant(I64, c.Oq))))
                gemm(h, lw.module, dt, (NO_TRANS, TRANS), c.N2, c.Oq, m, a, c.C * c.S, bw,
                     c.I * c.S, 0.0, cc, c.O)
            loop(h, c.Q, group)
        loop(h, h.b.sub(hi, lo), position, start=lo)
    parallel(lw, fn, "conv_outputs", c.yt, [fn.ptr(xp), fn.ptr(we), fn.ptr(t)], body)
    tv = Val(dt, c.ysz + (c.N2, c.O), ref=t, strides=contiguous_strides(c.ysz + (c.N2, c.O)))
    lw.copy(fn, permuted(tv, (nsp, nsp + 1) + tuple(range(nsp))), optr, ocs)
    for r in (xp, we, t):
        lw.release(r)


def _few_outputs_per_feature(lw, fn, c, x, w, optr, ocs):
    """Per lhs feature i: the taps' elements ``xp[b, i, pos(y) + off(k)]`` of every (b, y)
    gathered into ``cols`` (N'*Y, K), then ``part[q] (N'*Y, Oq) += cols @ w[q block, i].T``
    (the kernel dense: no holes of a kernel dilation in the contraction). One
    GEMM with N'*Y rows per feature: a better shape than a few rows (N') with a long
    contraction when the batch N' is small. The features are cut into a fixed number of
    blocks (the pool's size), each summed in order into a part of its own, the parts
    added in order at the end: the same sums however many threads run the blocks."""
    dt = c.dtype
    xp = _padded_lhs(lw, fn, c, x)
    wd = _buffer(lw, fn, dt, c.O * c.I * c.kt)          # the kernel (O, I, K) contiguous
    lw.copy(fn, w, fn.ptr(wd))
    m = c.kt
    offs = tuple(r * g for r, g in zip(c.rd, c.g))
    rows = c.N2 * c.yt
    part = c.Q * rows * c.Oq
    items = c.Q * c.I
    nsl = max(1, min(slots(), items))            # blocks of features
    parts = _buffer(lw, fn, dt, nsl * part)
    zero(fn, fn.ptr(parts), dt, nsl * part)
    cols = _buffer(lw, fn, dt, slots() * rows * m)

    def body(h, lo, hi, p, slot):
        xpp, wep, pp, cp = p
        b = h.b
        cs = at(b, cp, dt, b.mul(slot, ir.Constant(I64, rows * m)))

        def block(k):
            bk = h.b
            mine = at(bk, pp, dt, bk.mul(k, ir.Constant(I64, part)))
            first = bk.udiv(bk.mul(k, ir.Constant(I64, items)), ir.Constant(I64, nsl))
            end = bk.udiv(bk.mul(bk.add(k, ir.Constant(I64, 1)), ir.Constant(I64, items)),
                          ir.Constant(I64, nsl))
            loop(h, bk.sub(end, first), lambda t: item(t, mine), start=first)

        def item(t, mine):
            bb = h.b
            q = bb.udiv(t, ir.Constant(I64, c.I))
            i = bb.urem(t, ir.Constant(I64, c.I))
            chan = bb.add(bb.mul(q, ir.Constant(I64, c.I)), i) if c.G > 1 else i
            base = lin(bb, 0, [q, chan], (c.N2 * c.C * c.S if c.B > 1 else 0, c.S))

            def window(idxs):
                b2 = h.b
                row = b2.add(b2.mul(idxs[0], ir.Constant(I64, c.yt)), idxs[1])
                src = at(b2, xpp, dt, b2.add(lin(b2, base, [idxs[0]], (c.C * c.S,)),
                                             _position(h, c, idxs[1])))
                dst = at(b2, cs, dt, b2.mul(row, ir.Constant(I64, m)))

                def tap(ks):
                    b4 = h.b
                    v = b4.load(at(b4, src, dt, lin(b4, 0, ks, offs)), typ=lltype(dt))
                    b4.store(v, at(b4, dst, dt, lin(b4, 0, ks, contiguous_strides(c.ksz))))
                nest(h, list(c.ksz), tap)
            nest(h, [c.N2, c.yt], window)
            b3 = h.b
            bw = at(b3, wep, dt, lin(b3, 0, [q, i], (c.Oq * c.I * m, m)))
            cc = at(b3, mine, dt, b3.mul(q, ir.Constant(I64, rows * c.Oq)))
            gemm(h, lw.module, dt, (NO_TRANS, TRANS), rows, c.Oq, m, cs, m, bw, c.I * m,
                 1.0, cc, c.Oq)
        loop(h, b.sub(hi, lo), block, start=lo)
    parallel(lw, fn, "conv_features", nsl,
             [fn.ptr(xp), fn.ptr(wd), fn.ptr(parts), fn.ptr(cols)], body)
    _sum_parts(fn, c, fn.ptr(parts), nsl, optr, ocs)
    for r in (xp, wd, parts, cols):
        lw.release(r)


def _sum_parts(fn, c, pp, nsl, optr, ocs):
    """out[n, q*Oq + o, y] = the sum over the ``nsl`` parts (Q, N'*Y, Oq), in order."""
    dt = c.dtype
    rows = c.N2 * c.yt
    part = c.Q * rows * c.Oq

    def out(idxs):
        b = fn.b
        q, n, y, o = idxs
        src = lin(b, 0, [q, n, y, o], (rows * c.Oq, c.yt * c.Oq, c.Oq, 1))
        v = b.load(at(b, pp, dt, src), typ=lltype(dt))
        for s_ in range(1, nsl):
            v = b.fadd(v, b.load(at(b, pp, dt, b.add(src, ir.Constant(I64, s_ * part))),
                                 typ=lltype(dt)))
        yo = _out_position(fn, c, y, ocs)
        dst = lin(b, yo, [n, b.add(b.mul(q, ir.Constant(I64, c.Oq)), o)], ocs[:2])
        b.store(v, at(b, optr, dt, dst))
    nest(fn, [c.Q, c.N2, c.yt, c.Oq], out)


def _out_position(h, c, y, ocs):
    """The output element offset of the flat output index ``y`` (an i64)."""
    b = h.b
    off, rem = ir.Constant(I64, 0), y
    for j in reversed(range(len(c.ysz))):
        yj = b.urem(rem, ir.Constant(I64, c.ysz[j])) if j else rem
        rem = b.udiv(rem, ir.Constant(I64, c.ysz[j])) if j else rem
        off = b.add(off, b.mul(yj, ir.Constant(I64, ocs[2 + j])))
    return off
