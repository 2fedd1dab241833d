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
``acc`` are copied to the output. With window strides > 1 a tap's windows are not one
shifted view: each tap's are gathered into ``cols`` (I, Y) for its GEMM.

*few outputs* (a kernel cotangent: the "kernel" is an image, the output a few taps):
the kernel is embedded in a zero grid ``we`` (O, I, S) at its taps, and per output
position (spread over the pool) one GEMM contracts channels and grid at once:
``out[:, :, y] = xp[:, :, pos(y):] (N, I*S) @ we (O, I*S).T``.

Threads: the pool splits the images (or positions); while it runs, the BLAS is set to
one thread (its ``set_num_threads``, restored after) so that each thread's GEMMs run on
that thread instead of queueing for the BLAS's own. With the pool off (one free core,
``FUNCTRANS_NUM_THREADS=1``), a forked process or a single work item, everything runs on
the calling thread and the BLAS keeps the count ``threads.balance`` gave it.

>>> _Conv.__name__
'_Conv'
"""
from __future__ import annotations

import ctypes

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np

from jaxpr_ir import ShapedArray
from ..fusion import contiguous_strides
from . import blas, threads
from .equations import native
from .lltypes import I32, I64, lltype
from .values import PTR, Val

_NO_TRANS, _TRANS = 111, 112
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


def _supports(eqn, planner):
    x, w = eqn.inputs[0].aval, eqn.inputs[1].aval
    out = eqn.outvars[0].aval
    if not (x.dtype == w.dtype == out.dtype and x.dtype in (np.float32, np.float64)):
        return False
    if not blas.available():
        return False
    if blas._library()["int"] == 32:     # every GEMM extent must fit the BLAS's int
        c = _Conv(eqn)
        return max(c.C * c.S * max(c.N, c.O), c.O * c.I * c.S) < 2**31
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
        self.dtype = oa.dtype


def _permuted(val, order):
    shape = tuple(val.shape[d] for d in order)
    if val.lit is not None:
        return Val(val.dtype, shape, lit=val.lit)
    return Val(val.dtype, shape, ref=val.ref, strides=tuple(val.strides[d] for d in order),
               offset=val.offset)


# --------------------------------------------------------------------------- IR helpers

class _Body:
    """A function under construction with ``b`` its builder (the pool's body)."""

    def __init__(self, func):
        self.fn = func
        self.b = ir.IRBuilder(func.append_basic_block("entry"))


def _loop(h, n, body, start=None):
    """``for i in range(start, start + n): body(i)`` in ``h`` (n an int or i64 value)."""
    b = h.b
    if isinstance(n, int):
        if n <= 0:
            return
        n = ir.Constant(I64, n)
    pre = b.block
    head = h.fn.append_basic_block("head")
    blk = h.fn.append_basic_block("loop")
    done = h.fn.append_basic_block("done")
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(ir.Constant(I64, 0), pre)
    b.cbranch(b.icmp_signed("<", i, n), blk, done)
    b.position_at_end(blk)
    body(i if start is None else b.add(i, start))
    i.add_incoming(b.add(i, ir.Constant(I64, 1), flags=("nsw",)), b.block)
    b.branch(head)
    b.position_at_end(done)


def _nest(h, dims, body):
    idxs = []

    def level(d):
        if d == len(dims):
            body(list(idxs))
            return

        def inner(i):
            idxs.append(i)
            level(d + 1)
            idxs.pop()
        _loop(h, dims[d], inner)
    level(0)


def _lin(b, base, idxs, strides):
    """base + sum idx * stride as an i64 (constant strides, zero ones skipped)."""
    o = base if isinstance(base, ir.Value) else ir.Constant(I64, base)
    for i, s in zip(idxs, strides):
        if s:
            o = b.add(o, b.mul(i, ir.Constant(I64, s)))
    return o


def _at(b, ptr, dtype, index):
    index = index if isinstance(index, ir.Value) else ir.Constant(I64, index)
    return b.gep(ptr, [index], source_etype=lltype(dtype))


def _extern(module, name, ret, args):
    f = module.globals.get(name)
    return f if f is not None else ir.Function(module, ir.FunctionType(ret, args), name)


def _gemm(h, module, dt, transb, m, n, k, a, lda, bp, ldb, beta, c, ldc):
    """One row-major ``C = A @ op(B) + beta C`` call (extents ints or i64 values)."""
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
    b.call(f, [ir.Constant(I32, 101), ir.Constant(I32, _NO_TRANS), ir.Constant(I32, transb),
               v(m), v(n), v(k), ir.Constant(ft, 1.0), a, v(lda), bp, v(ldb), beta, c, v(ldc)])


def _zero(h, ptr, dt, n):
    z = ir.Constant(lltype(dt), 0.0)
    _loop(h, n, lambda i: h.b.store(z, _at(h.b, ptr, dt, i)))


def _parallel(lw, fn, name, count, ptrs, emit_body):
    """Run ``emit_body(h, lo, hi, ptrs_in_body, slot)`` over ``[0, count)``: split by the
    thread pool (the BLAS set to one thread meanwhile) when it is on and ``count`` > 1,
    else on this thread. ``slot`` < ``_slots()`` is the caller's own scratch index."""
    module = lw.module
    bty = ir.FunctionType(ir.VoidType(), [PTR, PTR, PTR, PTR])
    body = ir.Function(module, bty, lw.name(name))
    body.linkage = "internal"
    body.attributes.add("nounwind")
    h = _Body(body)
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
    counter = b.alloca(I64)
    b.store(ir.Constant(I64, 0), counter)
    datap = b.alloca(PTR, size=ir.Constant(I64, len(ptrs) + 1))
    for j, p in enumerate(list(ptrs) + [counter]):
        b.store(p, b.gep(datap, [ir.Constant(I64, j)], source_etype=PTR))
    argp = b.alloca(PTR)
    b.store(ir.Constant(PTR, None), argp)
    dimp = b.alloca(I64)
    b.store(ir.Constant(I64, count), dimp)
    stepp = b.alloca(I64)
    b.store(ir.Constant(I64, 1), stepp)
    if count < 2 or _slots() < 2:
        b.call(body, [argp, dimp, stepp, datap])
        return
    glob = lambda nm: module.globals.get(nm) or ir.GlobalVariable(module, I32, nm)
    nthr = b.load(glob("ft_num_threads"), typ=I32)
    nthr = b.select(b.icmp_signed(">", nthr, ir.Constant(I32, _slots())),
                    ir.Constant(I32, _slots()), nthr)
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


def _slots() -> int:
    """Scratch copies: one per pool thread (1 without a pool or BLAS thread control)."""
    return threads.num_threads() if _thread_control() else 1


# --------------------------------------------------------------------------- emitter

@native("conv_general_dilated", _supports)
def _conv(lw, fn, eqn, ins, outs):
    c = _Conv(eqn)
    optr = fn.ptr(outs[0])
    if eqn.outvars[0].aval.size == 0:
        return
    if c.I == 0 or any(n <= 0 for n in c.cnt):     # no product, or no lhs element in the grid
        _zero(fn, optr, c.dtype, eqn.outvars[0].aval.size)
        return
    x = _permuted(ins[0], c.ls)
    w = _permuted(ins[1], c.rs)
    ostr = contiguous_strides(eqn.outvars[0].aval.shape)
    ocs = tuple(ostr[d] for d in c.os)           # canonical (N', O, Y...) output strides
    if c.kt <= c.yt:
        _few_taps(lw, fn, c, x, w, optr, ocs)
    else:
        _few_outputs(lw, fn, c, x, w, optr, ocs)


def _buffer(lw, fn, dt, n):
    ref, _ = lw.new_buffer(fn, ShapedArray((max(n, 1),), dt), False)
    return ref


def _few_taps(lw, fn, c, x, w, optr, ocs):
    dt = c.dtype
    nsp = len(c.ksz)
    # the kernel as (K..., O, I): w_k is rows q*Oq.. of one contiguous (O, I) block
    wk = _buffer(lw, fn, dt, c.kt * c.O * c.I)
    lw.copy(fn, _permuted(w, tuple(range(2, 2 + nsp)) + (0, 1)), fn.ptr(wk))
    m = c.pos_max + 1 if c.unit else c.yt         # GEMM columns
    ldc = c.S if c.unit else c.yt                  # acc's row stride
    per = c.I * c.S + c.Oq * ldc + (0 if c.unit else c.I * c.yt)
    scratch = _buffer(lw, fn, dt, per * _slots())
    lit = x.lit
    ptrs = [fn.ptr(wk), fn.ptr(scratch), optr] + ([] if lit is not None else [fn.ptr(x.ref)])

    def body(h, lo, hi, p, slot):
        b = h.b
        wkp, scr, op = p[0], p[1], p[2]
        xp = b.gep(scr, [b.mul(slot, ir.Constant(I64, per))], source_etype=lltype(dt))
        acc = b.gep(xp, [ir.Constant(I64, c.I * c.S)], source_etype=lltype(dt))
        cols = b.gep(acc, [ir.Constant(I64, c.Oq * ldc)], source_etype=lltype(dt))
        _zero(h, xp, dt, c.I * c.S)

        def image(n):
            def group(q):
                _pad_image(h, c, x, p[3] if lit is None else None, xp, n, q)
                _tap_gemms(h, lw.module, c, wkp, xp, acc, q, m, cols)
                _crop(h, c, acc, op, n, q, ocs, ldc)
            _loop(h, c.Q, group)
        _loop(h, b.sub(hi, lo), image, start=lo)
    _parallel(lw, fn, "conv_taps", c.N2, ptrs, body)
    for r in (wk, scratch):
        lw.release(r)


def _image_base(h, c, n, q):
    """(lhs image index, first channel) that group ``q`` of output image ``n`` reads."""
    b = h.b
    nin = b.add(n, b.mul(q, ir.Constant(I64, c.N2))) if c.B > 1 else n
    c0 = b.mul(q, ir.Constant(I64, c.I)) if c.G > 1 else ir.Constant(I64, 0)
    return nin, c0


def _pad_image(h, c, x, xptr, xp, n, q):
    """xp[ci, grid] = the lhs image's channels of group q, in the grid's valid part."""
    b = h.b
    dt = c.dtype
    nin, c0 = _image_base(h, c, n, q)
    if x.lit is not None:
        val = ir.Constant(lltype(dt), float(x.lit))
    xs = x.strides if x.lit is None else (0,) * len(x.shape)
    base = None
    if x.lit is None:
        base = _lin(b, x.offset + sum(s0 * st for s0, st in zip(c.src0, xs[2:])),
                    [nin, c0], xs[:2])
    dst0 = sum(d * g for d, g in zip(c.dst0, c.g))

    def row(idxs):
        ci, sp = idxs[0], idxs[1:]
        bb = h.b
        v = val if x.lit is not None else bb.load(
            _at(bb, xptr, dt, _lin(bb, _lin(bb, base, [ci], xs[1:2]), sp, xs[2:])),
            typ=lltype(dt))
        bb.store(v, _at(bb, xp, dt, _lin(bb, dst0, [ci] + sp, (c.S,) + c.dstep)))
    _nest(h, [c.I] + list(c.cnt), row)


def _tap_gemms(h, module, c, wkp, xp, acc, q, m, cols):
    """acc (Oq, m) = sum over taps of w_k[q block] @ xp[:, off(k):] (row stride S, stride
    1), or of w_k[q block] @ cols with the tap's strided windows gathered into ``cols``."""
    dt = c.dtype
    kst = contiguous_strides(c.ksz)
    offs = tuple(r * g for r, g in zip(c.rd, c.g))

    def tap(ks):
        b = h.b
        kidx = _lin(b, 0, ks, kst)
        off = _lin(b, 0, ks, offs)
        a = _at(b, wkp, dt, b.add(b.mul(kidx, ir.Constant(I64, c.O * c.I)),
                                  b.mul(q, ir.Constant(I64, c.Oq * c.I))))
        beta = b.select(b.icmp_signed("==", kidx, ir.Constant(I64, 0)),
                        ir.Constant(lltype(dt), 0.0), ir.Constant(lltype(dt), 1.0))
        if c.unit:
            _gemm(h, module, dt, _NO_TRANS, c.Oq, m, c.I, a, c.I, _at(b, xp, dt, off), c.S,
                  beta, acc, c.S)
            return
        src = _at(b, xp, dt, off)

        def gather(idxs):
            bb = h.b
            ci, ys = idxs[0], idxs[1:]
            v = bb.load(_at(bb, src, dt, _lin(bb, 0, [ci] + ys, (c.S,) + c.ps)),
                        typ=lltype(dt))
            bb.store(v, _at(bb, cols, dt, _lin(bb, 0, [ci] + ys, contiguous_strides(
                (c.I,) + c.ysz))))
        _nest(h, [c.I] + list(c.ysz), gather)
        _gemm(h, module, dt, _NO_TRANS, c.Oq, m, c.I, a, c.I, cols, c.yt, beta, acc, c.yt)
    _nest(h, list(c.ksz), tap)


def _crop(h, c, acc, op, n, q, ocs, ldc):
    """out[n, q*Oq + o, y] = acc[o, pos(y)] (acc's rows ``ldc`` apart: the grid, or dense)."""
    dt = c.dtype
    ys = c.g if c.unit else contiguous_strides(c.ysz)

    def elem(idxs):
        b = h.b
        o, yi = idxs[0], idxs[1:]
        v = b.load(_at(b, acc, dt, _lin(b, b.mul(o, ir.Constant(I64, ldc)), yi, ys)),
                   typ=lltype(dt))
        oo = b.add(b.mul(q, ir.Constant(I64, c.Oq)), o)
        d = _lin(b, _lin(b, 0, [n, oo], ocs[:2]), yi, ocs[2:])
        b.store(v, _at(b, op, dt, d))
    _nest(h, [c.Oq] + list(c.ysz), elem)


def _few_outputs(lw, fn, c, x, w, optr, ocs):
    dt = c.dtype
    nsp = len(c.ksz)
    # the whole lhs padded (N, C, grid), the kernel embedded at its taps (O, I, grid)
    xp = _buffer(lw, fn, dt, c.N * c.C * c.S)
    _zero(fn, fn.ptr(xp), dt, c.N * c.C * c.S)
    xv = x.reshaped((c.N, c.C) + c.cnt, offset=x.offset if x.lit is not None else
                    x.offset + sum(s0 * st for s0, st in zip(c.src0, x.strides[2:])))
    lw.copy(fn, xv, fn.ptr(xp), (c.C * c.S, c.S) + c.dstep,
            sum(d * g for d, g in zip(c.dst0, c.g)))
    we = _buffer(lw, fn, dt, c.O * c.I * c.S)
    _zero(fn, fn.ptr(we), dt, c.O * c.I * c.S)
    lw.copy(fn, w, fn.ptr(we), (c.I * c.S, c.S) + tuple(r * g for r, g in zip(c.rd, c.g)))
    t = _buffer(lw, fn, dt, c.yt * c.N2 * c.O)          # (Y..., N', O)
    m = c.I * c.S - c.pos_max
    ysz = c.ysz

    def body(h, lo, hi, p, slot):
        xpp, wep, tp = p

        def position(y):
            b = h.b
            pos, rem = ir.Constant(I64, 0), y
            for j in reversed(range(nsp)):
                yj = b.urem(rem, ir.Constant(I64, ysz[j])) if j else rem
                rem = b.udiv(rem, ir.Constant(I64, ysz[j])) if j else rem
                pos = b.add(pos, b.mul(yj, ir.Constant(I64, c.ps[j])))

            def group(q):
                bb = h.b
                a0 = bb.mul(q, ir.Constant(I64, (c.N2 * c.C * c.S if c.B > 1 else 0)
                                           + (c.I * c.S if c.G > 1 else 0)))
                a = _at(bb, xpp, dt, bb.add(a0, pos))
                bw = _at(bb, wep, dt, bb.mul(q, ir.Constant(I64, c.Oq * c.I * c.S)))
                cc = _at(bb, tp, dt, bb.add(bb.mul(y, ir.Constant(I64, c.N2 * c.O)),
                                            bb.mul(q, ir.Constant(I64, c.Oq))))
                _gemm(h, lw.module, dt, _TRANS, c.N2, c.Oq, m, a, c.C * c.S, bw, c.I * c.S,
                      0.0, cc, c.O)
            _loop(h, c.Q, group)
        _loop(h, h.b.sub(hi, lo), position, start=lo)
    _parallel(lw, fn, "conv_outputs", c.yt, [fn.ptr(xp), fn.ptr(we), fn.ptr(t)], body)
    tv = Val(dt, ysz + (c.N2, c.O), ref=t, strides=contiguous_strides(ysz + (c.N2, c.O)))
    lw.copy(fn, _permuted(tv, (nsp, nsp + 1) + tuple(range(nsp))), optr, ocs)
    for r in (xp, we, t):
        lw.release(r)
