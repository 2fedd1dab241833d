"""Native cumulative scans and index-of-extreme reductions: ``cumsum``, ``cumprod``,
``cummax``, ``cummin`` (forwards or ``reverse``) and ``argmax``, ``argmin``, along any
``axis`` (they register in ``equations.NATIVE``; ``program`` imports this module).

The semantics are the primitives' numpy impls, exactly: a running value is
``out[k] = op(out[k - 1], x[k])`` in scan order (``np.add.accumulate`` and friends),
so sums and products round as numpy's and integers wrap (complex sums and products
too: each part added, the textbook product); a running max/min is
JAX's ``max`` (a NaN propagates, ``-0.0`` is below ``0.0`` in either order).
``argmax``/``argmin`` give the first index of the extreme, a NaN
counting as the extreme (the first NaN's index), as ``np.argmax`` does.

Loops: the operand is read through its view (strided, broadcast or a literal), the
output is contiguous. With nothing after ``axis`` the running value stays in a register
along the axis; otherwise the loop is outer x axis x inner, the inner loop over
contiguous rows (the previous row of the output, or for argmax a temporary row of
best values). Every index stays inside its extent: an axis of length 0 writes nothing
(argmax's shape rule rejects it), one of length 1 copies.

>>> from backends.llvm.equations import NATIVE
>>> sorted(n for n in NATIVE if n.startswith(("cum", "arg")))
['argmax', 'argmin', 'cummax', 'cummin', 'cumprod', 'cumsum']
"""
from __future__ import annotations

from types import SimpleNamespace

import llvmlite.ir as ir
import numpy as np

from jaxpr_ir import ShapedArray
from ..fusion import contiguous_strides
from .equations import native
from .lltypes import I1, I64, lltype
from .ops import REDUCTIONS, choose
from .ops_complex import add as complex_add, mul as complex_mul

__all__ = ["combine", "better"]

_BLOCK = 16       # elements an argmax search tests at once


def combine(fn, name, dtype, acc, x):
    """The running value after ``acc`` meets ``x`` for scan ``name`` (register values).

    >>> import llvmlite.ir as ir
    >>> f = ir.Function(ir.Module(), ir.FunctionType(ir.DoubleType(), []), "f")
    >>> class Fn: b = ir.IRBuilder(f.append_basic_block())
    >>> one = ir.Constant(ir.DoubleType(), 1.0)
    >>> combine(Fn, "cumsum", "float64", one, one).opname
    'fadd'
    """
    b, k = fn.b, np.dtype(dtype).kind
    if k == "c":            # complex: numpy's rules (ops_complex), cumsum/cumprod only
        return (complex_add if name == "cumsum" else complex_mul)(b, acc, x)
    if name == "cumsum":
        return b.fadd(acc, x) if k == "f" else b.add(acc, x)
    if name == "cumprod":
        return b.fmul(acc, x) if k == "f" else b.mul(acc, x)
    return choose(fn, dtype, acc, x, name == "cummax")


def better(fn, dtype, x, best, biggest):
    """Whether ``x`` replaces ``best`` in a first-occurrence argmax (argmin when not
    ``biggest``): strictly beyond it, or a NaN when ``best`` is not one.

    >>> import llvmlite.ir as ir
    >>> f = ir.Function(ir.Module(), ir.FunctionType(ir.IntType(1), []), "f")
    >>> class Fn: b = ir.IRBuilder(f.append_basic_block())
    >>> one = ir.Constant(ir.IntType(32), 1)
    >>> better(Fn, "int32", one, one, True).opname
    'icmp'
    """
    b, k = fn.b, np.dtype(dtype).kind
    pred = ">" if biggest else "<"
    if k == "f":
        # unordered: beyond best, or either a NaN; and best is not a NaN
        return b.and_(b.fcmp_unordered(pred, x, best), b.fcmp_ordered("ord", best, best))
    return b.icmp_signed(pred, x, best) if k == "i" else b.icmp_unsigned(pred, x, best)


# --------------------------------------------------------------------------- addressing

class _Layout:
    """The loops of one equation: outer dims (before ``axis``), the axis, inner dims
    (after it), size-1 dims dropped; element strides of the operand and the output."""

    def __init__(self, lw, fn, x, axis, out_strides):
        shape = x.shape
        xs = list(x.strides) if x.lit is None else [0] * len(shape)
        self.lw, self.fn, self.x = lw, fn, x
        self.n, self.xstep = shape[axis], xs[axis]
        self.ostep = out_strides.get(axis, 0)
        keep = lambda ds: [d for d in ds if shape[d] != 1]       # noqa: E731
        self.outer = keep(range(axis))
        self.inner = keep(range(axis + 1, len(shape)))
        self.shape, self.xs, self.os = shape, xs, out_strides
        self.ptr = None if x.lit is not None else fn.ptr(x.ref)
        self.lit = None if x.lit is None else lw.const(x.dtype, x.lit)

    def offsets(self, dims, idxs, xbase, obase):
        """(operand, output) element offsets after adding ``idxs`` over ``dims``."""
        b = self.fn.b
        for d, i in zip(dims, idxs):
            if self.xs[d]:
                xbase = b.add(xbase, b.mul(i, ir.Constant(I64, self.xs[d])))
            if self.os.get(d):
                obase = b.add(obase, b.mul(i, ir.Constant(I64, self.os[d])))
        return xbase, obase

    def at_axis(self, xbase, obase, k):
        """Offsets moved to position ``k`` (an i64 value) along the axis."""
        b = self.fn.b
        if self.xstep:
            xbase = b.add(xbase, b.mul(k, ir.Constant(I64, self.xstep)))
        if self.ostep:
            obase = b.add(obase, b.mul(k, ir.Constant(I64, self.ostep)))
        return xbase, obase

    def read(self, off):
        if self.lit is not None:
            return self.lit
        return self.lw.load(self.fn, self.ptr, self.x.dtype, off)

    def over_outer(self, body):
        """``body(xbase, obase)`` for every outer position."""
        start = ir.Constant(I64, self.x.offset)
        self.fn.nest([self.shape[d] for d in self.outer],
                     lambda idxs: body(*self.offsets(self.outer, idxs, start,
                                                     ir.Constant(I64, 0))))

    def over_inner(self, xbase, obase, body):
        """``body(xoff, ooff, inner linear index)`` for every inner position."""
        dims = [self.shape[d] for d in self.inner]
        lin = contiguous_strides(dims)

        def at(idxs):
            b = self.fn.b
            t = ir.Constant(I64, 0)
            for i, s in zip(idxs, lin):
                t = b.add(t, b.mul(i, ir.Constant(I64, s)))
            body(*self.offsets(self.inner, idxs, xbase, obase), t)
        self.fn.nest(dims, at)


def _after_first(fn, n, body):
    """``body(k)`` for k = 1 .. n - 1 (i64 values)."""
    fn.loop(n - 1, lambda i: body(fn.b.add(i, ir.Constant(I64, 1))))


def _slot(lw, fn, dtype):
    """A one-element stack cell (promoted to a register by LLVM) and its accessors."""
    p = fn.alloca(np.dtype(dtype).itemsize)
    zero = ir.Constant(I64, 0)
    return (lambda: lw.load(fn, p, dtype, zero)), (lambda v: lw.store(fn, p, dtype, zero, v))


# --------------------------------------------------------------------------- scans

def _scan(lw, fn, eqn, ins, outs):
    name = eqn.primitive.name
    x, (axis, rev) = ins[0], (eqn.params["axis"], eqn.params["reverse"])
    if any(d == 0 for d in x.shape):
        return
    dt, optr = x.dtype, fn.ptr(outs[0])
    cs = contiguous_strides(x.shape)
    lay = _Layout(lw, fn, x, axis, dict(enumerate(cs)))
    n = lay.n

    def pos(k):
        return fn.b.sub(ir.Constant(I64, n - 1), k) if rev else k
    first = ir.Constant(I64, n - 1 if rev else 0)

    def row(xbase, obase):
        if not lay.inner:                       # the running value in a register
            get, put = _slot(lw, fn, dt)
            xo, oo = lay.at_axis(xbase, obase, first)
            v = lay.read(xo)
            lw.store(fn, optr, dt, oo, v)
            put(v)

            def step(k):
                xo, oo = lay.at_axis(xbase, obase, pos(k))
                v = combine(fn, name, dt, get(), lay.read(xo))
                lw.store(fn, optr, dt, oo, v)
                put(v)
            _after_first(fn, n, step)
            return
        xf, of = lay.at_axis(xbase, obase, first)
        lay.over_inner(xf, of, lambda xo, oo, t: lw.store(fn, optr, dt, oo, lay.read(xo)))
        back = ir.Constant(I64, cs[axis] if rev else -cs[axis])     # the previous row

        def step(k):
            xk, ok = lay.at_axis(xbase, obase, pos(k))

            def elem(xo, oo, t):
                prev = lw.load(fn, optr, dt, fn.b.add(oo, back))
                lw.store(fn, optr, dt, oo, combine(fn, name, dt, prev, lay.read(xo)))
            lay.over_inner(xk, ok, elem)
        _after_first(fn, n, step)
    lay.over_outer(row)


def _scan_supported(eqn, planner):
    kind = eqn.inputs[0].aval.dtype.kind
    return kind in "fiu" or (kind == "c" and eqn.primitive.name in ("cumsum", "cumprod"))


for _name in ("cumsum", "cumprod", "cummax", "cummin"):
    native(_name, _scan_supported, complex=True)(_scan)


# --------------------------------------------------------------------------- argmax / argmin

def _index(fn, k, idt):
    return fn.b.trunc(k, lltype(idt)) if lltype(idt).width < 64 else k


def _find_first(fn, n, hit):
    """(the first k in [0, n) with ``hit(k)`` true, whether there is one): i64 and i1
    values (k is 0 when there is none); ``n`` an int or i64 value. A loop that leaves
    at the hit."""
    b = fn.b
    n = ir.Constant(I64, n) if isinstance(n, int) else n
    pre = b.block
    head = fn.fn.append_basic_block("find")
    body = fn.fn.append_basic_block("find_body")
    done = fn.fn.append_basic_block("found")
    b.branch(head)
    b.position_at_end(head)
    k = b.phi(I64)
    k.add_incoming(ir.Constant(I64, 0), pre)
    b.cbranch(b.icmp_signed("<", k, n), body, done)
    b.position_at_end(body)
    h = hit(k)
    last = b.block
    k.add_incoming(b.add(k, ir.Constant(I64, 1), flags=("nsw",)), last)
    b.cbranch(h, done, head)
    b.position_at_end(done)
    r, found = b.phi(I64), b.phi(I1)
    r.add_incoming(ir.Constant(I64, 0), head)
    r.add_incoming(k, last)
    found.add_incoming(ir.Constant(I1, 0), head)
    found.add_incoming(ir.Constant(I1, 1), last)
    return r, found


def _search(fn, n, hit):
    """The first k in [0, n) with ``hit(k)`` (0 when none), ``_BLOCK`` elements a test
    (their compares SIMD), then one by one inside the block that hit (or the tail)."""
    c = lambda v: ir.Constant(I64, v)     # noqa: E731
    nb = n // _BLOCK
    if nb == 0:
        return _find_first(fn, n, hit)[0]

    def any_hit(q):
        q0 = fn.b.mul(q, c(_BLOCK))
        acc = hit(q0)
        for j in range(1, _BLOCK):
            acc = fn.b.or_(acc, hit(fn.b.add(q0, c(j))))
        return acc
    q, in_block = _find_first(fn, nb, any_hit)
    b = fn.b
    start = b.select(in_block, b.mul(q, c(_BLOCK)), c(nb * _BLOCK))
    count = b.select(in_block, c(_BLOCK), c(n - nb * _BLOCK))
    k, found = _find_first(fn, count, lambda i: hit(fn.b.add(start, i)))
    return b.select(found, b.add(start, k), c(0))


def _arg_along(lw, fn, lay, dt, biggest, store):
    """argmax/argmin with nothing after the axis, in two passes per row: the extreme
    (a reduction the loop vectoriser makes SIMD: llvm.maximum propagates NaN), then the
    first element equal to it (the first NaN when it is NaN)."""
    red = REDUCTIONS["reduce_max" if biggest else "reduce_min"]
    em = SimpleNamespace(b=fn.b, module=lw.module)
    n = lay.n

    def row(xbase, obase):
        get, put = _slot(lw, fn, dt)
        put(lw.const(dt, red.identity(dt)))
        fn.loop(n, lambda k: put(red.combine(em, dt, get(), lay.read(lay.at_axis(
            xbase, obase, k)[0]))))
        m = get()

        def hit(k):
            b, v = fn.b, lay.read(lay.at_axis(xbase, obase, k)[0])
            if dt.kind == "f":
                return b.or_(b.fcmp_ordered("==", v, m), b.fcmp_unordered("uno", v, v))
            return b.icmp_unsigned("==", v, m)
        store(obase, _search(fn, n, hit))
    lay.over_outer(row)


def _arg(lw, fn, eqn, ins, outs):
    x, axis = ins[0], eqn.params["axis"]
    biggest = eqn.primitive.name == "argmax"
    out = eqn.outvars[0].aval
    if out.size == 0 or x.shape[axis] == 0:   # (the shape rule rejects an empty axis)
        return
    dt, idt, optr = x.dtype, out.dtype, fn.ptr(outs[0])
    cs = contiguous_strides(out.shape)
    ostr = {d: cs[d - (d > axis)] for d in range(len(x.shape)) if d != axis}
    lay = _Layout(lw, fn, x, axis, ostr)
    n, zero = lay.n, ir.Constant(I64, 0)
    if not lay.inner:
        _arg_along(lw, fn, lay, dt, biggest,
                   lambda o, k: lw.store(fn, optr, idt, o, _index(fn, k, idt)))
        return
    m = int(np.prod([x.shape[d] for d in lay.inner], dtype=np.int64))
    tmp, owned = lw.new_buffer(fn, ShapedArray((m,), dt), True)
    bptr = fn.ptr(tmp)

    def rows(xbase, obase):
        def init(xo, oo, t):
            lw.store(fn, bptr, dt, t, lay.read(xo))
            lw.store(fn, optr, idt, oo, _index(fn, zero, idt))
        lay.over_inner(xbase, obase, init)

        def step(k):
            xk, _ = lay.at_axis(xbase, obase, k)
            kv = _index(fn, k, idt)

            def elem(xo, oo, t):
                b = fn.b
                v, best = lay.read(xo), lw.load(fn, bptr, dt, t)
                up = better(fn, dt, v, best, biggest)
                lw.store(fn, bptr, dt, t, b.select(up, v, best))
                lw.store(fn, optr, idt, oo, b.select(up, kv, lw.load(fn, optr, idt, oo)))
            lay.over_inner(xk, obase, elem)
        _after_first(fn, n, step)
    lay.over_outer(rows)
    if owned:
        lw.release(tmp)


def _arg_supported(eqn, planner):
    return eqn.inputs[0].aval.dtype.kind in "fiub"


native("argmax", _arg_supported)(_arg)
native("argmin", _arg_supported)(_arg)
