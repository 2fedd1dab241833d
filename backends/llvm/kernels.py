"""LLVM IR for fused kernels, with llvmlite.ir.

``KernelEmitter`` builds one internal function per ``fusion.Kernel`` (a loop nest over
the kernel's shape computing its fused equations through the op table ``ops.TABLE``,
folding reductions through ``ops.REDUCTIONS``; the loop vectoriser makes it SIMD),
``void k<i>(ptr noalias buf0, ptr noalias buf1, ...)``, which ``program`` calls from the
segment function (LLVM inlines it there, turning ``noalias`` into alias scopes). Row
kernels (``Kernel.phases``) have their own emitter, ``row_kernels.RowEmitter``.

Compile time: a long kernel over many elements stays a function of its own
(``OWN_FUNCTION_EQNS``), and a program that is one small flat kernel takes its element
count at run time (``count_source``), so its object code serves every shape of a rank.

>>> KernelEmitter.__name__
'KernelEmitter'
"""
from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from jaxpr_ir import Literal
from ..fusion import View, contiguous_strides
from . import engine, threads, vmath
from .lltypes import I64, access_group, const, load_elem, loop_id, storage, stored
from .ops import REDUCTIONS, TABLE, heavy
from .values import Access

__all__ = ["KernelEmitter", "collapse", "count_source", "array_size", "WORKSPACE"]

_DIMS_OFFSET = 32        # PyArrayObject: ..., char *data, int nd, npy_intp *dimensions
# kernels this long over this many elements stay functions of their own, called (a few
# ns) rather than inlined into the segment: LLVM's time on one function grows faster
# than its size (the 1,000-step sin chain's 18 kernels: 2.6 s inlined, 1.2 s called)
OWN_FUNCTION_EQNS = 64
OWN_FUNCTION_ELEMENTS = 256
WORKSPACE = "workspace"   # in ``buffers``: the argument is the workspace's base pointer
# a loop over a run-time count with this many equations folds its tail into masked
# vector iterations (``_loop_md``): LLVM's time on the scalar tail copy it saves
# grows with the body, the run time the masks cost (~2 ns an iteration: 8% of sin(x)*2
# on 1,000 doubles, ~1% of the 10-step sin chain's grad) does not
FOLD_TAIL_EQNS = 32
# a transposing kernel (``KernelEmitter._tile_axis``) walks TILE x TILE tiles when it has
# at least TILE_MIN_ELEMENTS elements (fewer fit in cache as they are)
TILE = 32
TILE_MIN_ELEMENTS = 4096
TILE_UNROLL_EQNS = 16     # a tile's element loop is unrolled in kernels this small (_unroll_full_md)
# an elementwise kernel of at least this many equations marks its innermost loop parallel
# (``_loop_md``); LLVM's dependence analysis of a loop body compares its loads and
# stores pair by pair
PARALLEL_LOOP_EQNS = 16


def collapse(shape, accesses):
    """Drop size-1 loop dims and merge adjacent dims every access walks contiguously."""
    keep = [d for d in range(len(shape)) if shape[d] != 1]
    dims = [shape[d] for d in keep]
    for a in accesses:
        a.strides = [a.strides[d] for d in keep]
    i = len(dims) - 1
    while i > 0:
        if all(a.strides[i - 1] == a.strides[i] * dims[i] for a in accesses):
            dims[i - 1] *= dims[i]
            del dims[i]
            for a in accesses:
                a.strides[i - 1] = a.strides[i]
                del a.strides[i]
        i -= 1
    return dims


class KernelEmitter:
    """Builds one kernel function; ``self.b`` is the IRBuilder the TABLE rows use."""

    count_arg = False       # the trip count is the function's last argument (count_source)
    own = False             # a function of its own, never inlined (OWN_FUNCTION_EQNS)
    same: dict = {}         # {output: input sharing its argument} (never one: row kernels)
    independent = False     # the innermost loop is marked parallel (``_loop_md``)
    _group = None           # meanwhile, the access group of its loads and stores

    def __init__(self, module, name, kernel, views, noalias=True, count=False, ws=None,
                 same=None):
        self.module, self.kernel, self.views = module, kernel, views
        self.buffers = []           # Vars whose buffers are the function's arguments, in order
        # {output: input}: the output is written over the input, read at the same element
        # (a loop carry updated in place): one argument for both, the input loaded first
        self.same = dict(same or {})
        # without noalias an output may be a donated input's buffer (``_plan_aliases``):
        # every input is then loaded before any store too
        self.first_reads = list(self.same.values()) if noalias else list(kernel.inputs)
        size = int(np.prod(kernel.shape, dtype=np.int64))
        self.own = len(kernel.eqns) >= OWN_FUNCTION_EQNS and size >= OWN_FUNCTION_ELEMENTS
        # a kernel of its own reads workspace buffers at constant offsets from one base
        # (``ws(var)``: the byte offset, or None), as an inlined one does, not through a
        # pointer argument each (a hundred of them: spilled, reloaded every iteration)
        self._ws = ws if self.own and ws is not None else (lambda var: None)
        accesses = {}               # var -> Access (inputs and outputs)
        shape = kernel.shape
        for x in kernel.inputs:
            v = views.get(x) or View(x, x.aval.shape, contiguous_strides(x.aval.shape), 0)
            if isinstance(v.base, Literal):
                continue
            accesses[x] = self._access(v.base, v.strides, v.offset, x.aval.dtype)
        self.reduce_info = {}
        for e in kernel.eqns:
            if e.outvars[0] in kernel.reduced:
                out = e.outvars[0]
                axes = e.params["axes"]
                kept = [d for d in range(len(shape)) if d not in axes]
                ostr = contiguous_strides(out.aval.shape)
                strides = [0] * len(shape)
                for j, d in enumerate(kept):
                    strides[d] = ostr[j]
                self.reduce_info[out] = self._access(out, strides, 0, out.aval.dtype)
        for o in kernel.outputs:
            if o not in self.reduce_info:
                accesses[o] = self._access(o, contiguous_strides(shape), 0, o.aval.dtype)
        self.accesses = accesses
        self.dims = collapse(shape, list(accesses.values()) + list(self.reduce_info.values()))
        self.parallel = noalias and self._parallelisable()
        # every iteration reads its inputs and writes its own output elements (no
        # reduction; buffers distinct, an in-place output read at the element it writes)
        self.independent = noalias and not self.reduce_info and \
            len(kernel.eqns) >= PARALLEL_LOOP_EQNS
        # the trip count as a last i64 argument: one object code for every such count
        self.count_arg = count and not self.parallel and len(self.dims) == 1 and \
            1 < self.dims[0] <= vmath.LIBRARY_MAX_ELEMENTS
        self._declare(module, name, noalias, shape)
        self.b = ir.IRBuilder(self.fn.append_basic_block("entry"))
        self.argv = list(self.fn.args)

    def _declare(self, module, name, noalias, shape):
        """The kernel's function: one pointer per buffer, internal, inlined when tiny,
        never when long and large (``OWN_FUNCTION_EQNS``)."""
        count = [I64] if self.count_arg else []
        fnty = ir.FunctionType(ir.VoidType(), [ir.PointerType()] * len(self.buffers) + count)
        self.fn = ir.Function(module, fnty, name)
        if noalias:
            for a in self.fn.args[:len(self.buffers)]:
                a.add_attribute("noalias")
        self.fn.attributes.add("nounwind")
        self.fn.linkage = "internal"
        size = int(np.prod(shape, dtype=np.int64))
        if size <= 16 and not self.count_arg:
            self.fn.attributes.add("alwaysinline")
        elif self.own:
            self.fn.attributes.add("noinline")

    def _parallelisable(self):
        """Large compute-bound kernels whose outer loop iterations are independent:
        every reduction keeps the outer dimension, so each row's accumulator belongs to
        one thread. Memory-bound ones (plain arithmetic) stay serial: one core already
        nearly saturates the memory bus, and waking threads only adds jitter."""
        if not any(heavy(e) for e in self.kernel.eqns):
            return False
        if not self.dims or self.dims[0] < 2 or any(d <= 0 for d in self.kernel.shape):
            return False
        if int(np.prod(self.dims, dtype=np.int64)) < threads.MIN_ELEMENTS:
            return False
        if any(not a.strides or a.strides[0] == 0 for a in self.reduce_info.values()):
            return False
        return threads.num_threads() > 1

    def _arg(self, var):
        var = self.same.get(var, var)
        if var not in self.buffers:
            self.buffers.append(var)
        return self.buffers.index(var)

    def _access(self, var, strides, offset, dtype):
        at = self._ws(var)
        if at is None or at % dtype.itemsize:
            return Access(self._arg(var), strides, offset, dtype)
        return Access(self._arg(WORKSPACE), strides, offset + at // dtype.itemsize, dtype)

    # ------------------------------------------------------------------ memory
    def _ptr(self, acc, idxs):
        """The element's address: the offset plus index x stride per dimension, with no
        multiply by 1 or add of 0 (a hundred accesses' worth of instructions less for
        Python to build and print and LLVM to parse and fold)."""
        off = None
        for i, s in zip(idxs, acc.strides):
            if s:
                t = i if s == 1 else self.b.mul(i, ir.Constant(I64, s))
                off = t if off is None else self.b.add(off, t)
        if off is None:
            off = ir.Constant(I64, acc.offset)
        elif acc.offset:
            off = self.b.add(off, ir.Constant(I64, acc.offset))
        return self.b.gep(self.argv[acc.arg], [off], inbounds=True,
                          source_etype=storage(acc.dtype))

    def load(self, acc, idxs):
        if self._group is None:
            return load_elem(self.b, self._ptr(acc, idxs), acc.dtype)
        v = self.b.load(self._ptr(acc, idxs), typ=storage(acc.dtype))
        v.set_metadata("llvm.access.group", self._group)
        return self.b.icmp_unsigned("!=", v, ir.Constant(v.type, 0)) \
            if acc.dtype == np.bool_ else v

    def store(self, acc, idxs, v):
        st = self.b.store(stored(self.b, v, acc.dtype), self._ptr(acc, idxs))
        if self._group is not None:
            st.set_metadata("llvm.access.group", self._group)

    const = staticmethod(const)     # the op table's rules call em.const(dtype, value)

    def _literal(self, x):
        """The constant ``x`` reads when it is a literal or a view of one, else None."""
        if isinstance(x, Literal):
            return self.const(x.aval.dtype, x.val)
        v = self.views.get(x)
        if v is not None and isinstance(v.base, Literal):
            return self.const(x.aval.dtype, v.base.val)
        return None

    def _emit_value(self, e, ins):
        """The value of the elementwise equation ``e`` on the values ``ins`` (the rule
        may read ``self.eqn``)."""
        self.eqn = e
        return TABLE[e.primitive.name].emit(self, e, *ins)

    # ------------------------------------------------------------------ loops
    def _loop_nest(self, dims, body, lo=None, hi=None):
        """Loops over ``dims`` calling ``body(indices)``; the outer one may run over the
        values ``[lo, hi)`` instead (a thread's share; lo < hi)."""
        idxs = []

        def level(d):
            if d == len(dims):
                body(idxs)
                return
            pre = self.b.block
            loop = self.fn.append_basic_block(f"loop{d}")
            self.b.branch(loop)
            self.b.position_at_end(loop)
            i = self.b.phi(I64, name=f"i{d}")
            i.add_incoming(lo if (d == 0 and lo is not None) else ir.Constant(I64, 0), pre)
            idxs.append(i)
            inner = d == len(dims) - 1 and self.independent and body == self._body
            if inner:
                self._group = access_group(self.module)
            level(d + 1)
            group, self._group = self._group, None
            idxs.pop()
            nxt = self.b.add(i, ir.Constant(I64, 1), flags=("nuw", "nsw"))
            i.add_incoming(nxt, self.b.block)
            done = self.fn.append_basic_block(f"done{d}")
            end = hi if (d == 0 and hi is not None) else ir.Constant(I64, dims[d])
            counted = d == 0 and self.count_arg and dims is self.dims
            fold = counted and len(self.kernel.eqns) >= FOLD_TAIL_EQNS
            if counted:
                end = self.argv[-1]
            br = self.b.cbranch(self.b.icmp_unsigned("<", nxt, end), loop, done)
            if fold or group is not None:
                width = self._fold_width() if fold else None
                br.set_metadata("llvm.loop", _loop_md(self.module, fold, group, width))
            self.b.position_at_end(done)

        level(0)

    def _fold_width(self):
        """The width the loop vectoriser would pick for this kernel's tail-folded loop,
        where that is certain: every buffer and value of one float dtype (or bool), so
        the widest type is that float and the vectoriser takes the most lanes a
        register holds (``engine.vector_bits``). Told the width, it plans that one width
        instead of costing each (the 10-step sin chain's grad: 12% fewer instructions
        in LLVM, the same object code; tests/test_llvm_vector_width.py)."""
        floats = {np.dtype(a.dtype) for a in self.accesses.values()}
        floats |= {np.dtype(v.aval.dtype) for e in self.kernel.eqns for v in e.outvars}
        floats.discard(np.dtype(bool))
        if len(floats) != 1 or next(iter(floats)) not in (np.float32, np.float64):
            return None
        bits = engine.vector_bits(engine.WIDE_ATTRIBUTE in self.fn.attributes)
        return bits // (8 * next(iter(floats)).itemsize) if bits else None

    def emit(self):
        k = self.kernel
        # reductions start from their identity
        for e in k.eqns:
            out = e.outvars[0]
            if out in self.reduce_info:
                acc = self.reduce_info[out]
                ident = self.const(out.aval.dtype, REDUCTIONS[e.primitive.name].identity(out.aval.dtype))
                flat = Access(acc.arg, [1], acc.offset, acc.dtype)
                n = out.aval.size
                if n:
                    self._loop_nest([n], lambda idxs: self.store(flat, idxs, ident))
        if all(self.dims) and all(d > 0 for d in k.shape):
            if self.parallel:
                self._emit_parallel()
            else:
                self._loops()
        self.b.ret_void()

    def _loops(self, lo=None, hi=None):
        """The kernel's loop nest; the outer loop over ``[lo, hi)`` when given. A kernel
        reading some input across its innermost axis (a transpose) walks tiles
        (``_tile_axis``, ``_tiled_nest``)."""
        j = self._tile_axis()
        if j is None:
            self._loop_nest(self.dims, self._body, lo, hi)
        else:
            self._tiled_nest(j, lo, hi)

    def _tile_axis(self):
        """The axis ``j`` to tile with the innermost one, or None: a kernel with no
        reduction (tiling reorders nothing else) where some input steps far (a cache
        line or more) along the innermost axis and by one element along ``j``. Walking
        the output row-major would miss cache (and TLB) on every such read; tiles of
        ``TILE`` x ``TILE`` keep both its rows and the output's in cache."""
        dims = self.dims
        if self.reduce_info or self.count_arg or len(dims) < 2:
            return None
        if dims[-1] < TILE or int(np.prod(dims, dtype=np.int64)) < TILE_MIN_ELEMENTS:
            return None
        for a in self.accesses.values():
            if abs(a.strides[-1]) * a.dtype.itemsize < 64:
                continue
            for j in range(len(dims) - 2, -1, -1):
                if a.strides[j] == 1 and dims[j] >= TILE:
                    return j
        return None

    def _tiled_nest(self, j, lo, hi):
        """Loops over ``self.dims`` with axes ``j`` and the last walked in tiles: the
        other axes outside in order, then the tile loops of ``j`` and the last, then
        the element loops, ``j``'s innermost: the input then streams along its unit
        stride and the output's rows of the tile stay in cache (2048 x 1024 float32
        ``a.T + 0``: 2.2 ms, against 5.9 ms with the last axis innermost and 11.5 ms
        untiled; 32 beat 16 and 64 for float32 and float64); a tile at an edge is cut
        short. The outer axis runs over ``[lo, hi)`` when given (a thread's share; any
        split is exact: each element lies in one tile of one share)."""
        dims, n = self.dims, len(self.dims)
        last = n - 1
        idxs = [None] * n
        c = lambda v: ir.Constant(I64, v)
        bounds = [(c(0), c(d)) for d in dims]
        if lo is not None:
            bounds[0] = (lo, hi)

        def tile(tj, tl, row_end, md):
            def col(k):
                idxs[last] = k

                def row(i):
                    idxs[j] = i
                    self._body(list(idxs))
                self._range(tj, row_end, 1, row, md=md)
            self._range(tl, self._min(self.b.add(tl, c(TILE)), bounds[last][1]), 1, col)

        def elements(tj, tl):
            whole = self.b.add(tj, c(TILE), flags=("nsw",))
            if len(self.kernel.eqns) > TILE_UNROLL_EQNS:
                tile(tj, tl, self._min(whole, bounds[j][1]), None)
                return
            # a whole tile's element loop runs exactly TILE steps: unrolled fully
            with self.b.if_else(self.b.icmp_signed("<=", whole, bounds[j][1])) as (full, edge):
                with full:
                    tile(tj, tl, whole, _unroll_full_md(self.module))
                with edge:
                    tile(tj, tl, bounds[j][1], None)

        def level(d):
            if d == n:
                self._range(bounds[j][0], bounds[j][1], TILE, lambda tj: self._range(
                    bounds[last][0], bounds[last][1], TILE, lambda tl: elements(tj, tl)))
                return
            if d in (j, last):
                level(d + 1)
                return

            def at(i):
                idxs[d] = i
                level(d + 1)
            self._range(bounds[d][0], bounds[d][1], 1, at)
        level(0)

    def _min(self, x, y):
        """The smaller of two i64 values."""
        return self.b.select(self.b.icmp_signed("<", x, y), x, y)

    def _range(self, start, end, step, body, md=None):
        """``for i in range(start, end, step): body(i)``, bottom-tested: the caller
        knows ``start < end``."""
        pre = self.b.block
        loop = self.fn.append_basic_block("tloop")
        self.b.branch(loop)
        self.b.position_at_end(loop)
        i = self.b.phi(I64)
        i.add_incoming(start, pre)
        body(i)
        nxt = self.b.add(i, ir.Constant(I64, step), flags=("nuw", "nsw"))
        i.add_incoming(nxt, self.b.block)
        done = self.fn.append_basic_block("tdone")
        br = self.b.cbranch(self.b.icmp_signed("<", nxt, end), loop, done)
        if md is not None:
            br.set_metadata("llvm.loop", md)
        self.b.position_at_end(done)

    def _emit_parallel(self):
        """The loops go into a body function run by the thread pool over shares of the
        outer dimension (``threads``); this function calls it, or runs it serially
        when threading is off or the process was forked."""
        P = ir.PointerType()
        wrapper, wb, wargs = self.fn, self.b, self.argv
        bty = ir.FunctionType(ir.VoidType(), [P, P, P, P])
        body = ir.Function(self.module, bty, self.fn.name + ".par")
        body.linkage = "internal"
        body.attributes.add("nounwind")
        # one compiled body for both calls below: inlined into the serial call, it would
        # be vectorised with the caller's attributes (another vector width: other sums)
        body.attributes.add("noinline")
        self.fn, self.b = body, ir.IRBuilder(body.append_basic_block("entry"))
        args, dims, _, data = body.args
        lo = self.b.ptrtoint(self.b.load(args, typ=P), I64)
        hi = self.b.add(lo, self.b.load(dims, typ=I64))
        self.argv = [self.b.load(self.b.gep(data, [ir.Constant(I64, j)], source_etype=P), typ=P)
                     for j in range(len(wargs))]
        run = self.fn.append_basic_block("run")
        out = self.fn.append_basic_block("out")
        self.b.cbranch(self.b.icmp_unsigned("<", lo, hi), run, out)
        self.b.position_at_end(run)
        self._loops(lo, hi)
        self.b.branch(out)
        self.b.position_at_end(out)
        self.b.ret_void()
        self.fn, self.b, self.argv = wrapper, wb, wargs
        b = self.b
        n = len(wargs)
        datap = b.alloca(P, size=ir.Constant(I64, n))
        for j, a in enumerate(wargs):
            b.store(a, b.gep(datap, [ir.Constant(I64, j)], source_etype=P))
        argp = b.alloca(P)
        b.store(ir.Constant(P, None), argp)
        dimp = b.alloca(I64)
        b.store(ir.Constant(I64, self.dims[0]), dimp)
        stepp = b.alloca(I64)
        b.store(ir.Constant(I64, 1), stepp)
        I32 = ir.IntType(32)
        glob = lambda name: self.module.globals.get(name) or ir.GlobalVariable(self.module, I32, name)
        nthr = b.load(glob("ft_num_threads"), typ=I32)
        pid = b.load(glob("ft_pool_pid"), typ=I32)
        getpid = self.module.globals.get("getpid") or ir.Function(self.module, ir.FunctionType(I32, []), "getpid")
        ok = b.and_(b.icmp_signed(">", nthr, ir.Constant(I32, 1)), b.icmp_signed("==", b.call(getpid, []), pid))
        with b.if_else(ok) as (then, other):
            with then:
                pf = self.module.globals.get("ft_parallel_for") or ir.Function(
                    self.module, ir.FunctionType(ir.VoidType(), [P] * 5 + [I64, I64, I32]), "ft_parallel_for")
                b.call(pf, [body, argp, dimp, stepp, datap, ir.Constant(I64, 0), ir.Constant(I64, 1), nthr])
            with other:
                b.call(body, [argp, dimp, stepp, datap])

    def _body(self, idxs):
        env = {}

        def read(x):
            c = self._literal(x)
            if c is not None:
                return c
            if x not in env:
                env[x] = self.load(self.accesses[x], idxs)
            return env[x]

        for x in self.first_reads:     # before any store over it
            read(x)
        for e in self.kernel.eqns:
            ins = [read(x) for x in e.inputs]
            out = e.outvars[0]
            if out in self.reduce_info:
                red = REDUCTIONS[e.primitive.name]
                acc = self.reduce_info[out]
                cur = self.load(acc, idxs)
                self.store(acc, idxs, red.combine(self, out.aval.dtype, cur, ins[0]))
                continue
            v = env[out] = self._emit_value(e, ins)
            if out in self.accesses:
                self.store(self.accesses[out], idxs, v)


def _unroll_full_md(module):
    """A loop ID asking LoopUnroll to unroll the loop fully: put on the innermost element
    loop of a whole tile (exactly ``TILE`` steps, along the output's strided axis) in a
    kernel of at most ``TILE_UNROLL_EQNS`` equations, so the unrolled size stays far
    below LLVM's limit for the request (past it LLVM warns on stderr); edge tiles keep
    their loop. Left to the unroll cost threshold, the vectoriser turned this loop into
    scatters wherever the threshold sat below ~300: a 32 x 512 ``a + b.T`` took 34 us
    instead of 8.5 us and a 100-step LSTM's gradient ran 1.65x slower."""
    full = module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.full")])
    uses = module.__dict__.setdefault("_ft_loop_ids", [])
    md = module.add_metadata([ir.MetaDataString(module, f"ft.loop.{len(uses)}")])
    uses.append(md)
    md.operands = (md, full)     # self-referential, as LLVM requires
    return md


def _loop_md(module, fold, group, width=None):
    """A loop ID for a kernel's loop. With ``fold``, it asks the vectoriser to fold the
    loop's tail into masked vector
    iterations (``llvm.loop.vectorize.predicate.enable``) rather than add a scalar copy
    of the body for it: a loop over a run-time count then holds its body once, which
    halves LLVM's time on it (the 10-step sin chain's grad: ~3 ms of ~19). Loads and
    stores are masked; the math library's calls stay unmasked (they read and write no
    memory, so the inactive lanes are computed and dropped). Where the tail cannot be
    folded (a call with memory effects) LLVM falls back to the scalar copy.

    With an access ``group`` (``lltypes.access_group``: on every load and store of the
    loop's body), the loop is marked parallel (``lltypes.loop_id``): no iteration
    reads what another writes, so LLVM's loop access analysis skips its dependence
    checks, which compare the body's memory accesses pair by pair (the forward kernel
    of the 100-step sin chain's grad, 100 stores into the workspace: optimised in 45 ms
    instead of 65, the same object code). ``width``: the vectoriser's width, when the
    caller knows it (``KernelEmitter._fold_width``)."""
    ops = (module.add_metadata([
        ir.MetaDataString(module, "llvm.loop.vectorize.predicate.enable"),
        ir.Constant(ir.IntType(1), 1)]),) if fold else ()
    if width:
        ops += (module.add_metadata([ir.MetaDataString(module, "llvm.loop.vectorize.width"),
                                     ir.Constant(ir.IntType(32), width)]),)
    return loop_id(module, *ops, parallel=group)


def count_source(plan, kernel, env):
    """When ``kernel`` is all of the top-level ``plan``: (slot, rank) of one of its
    outputs held in a caller's array of exactly its element count, which a call reads
    that count from, so that the program's IR (and its object code, cached by IR text)
    serves every count and a new shape needs no LLVM; else None."""
    if len(plan.steps) != 1 or plan.steps[0] is not kernel:
        return None
    n = int(np.prod(kernel.shape, dtype=np.int64))
    full = [o for o in kernel.outputs if o not in kernel.reduced]
    full += [x for x in kernel.inputs if not isinstance(x, Literal) and x not in plan.views]
    for x in full:
        ref = env.get(x)
        if ref is not None and ref.kind == "slot" and x.aval.size == n:
            return ref.where, len(x.aval.shape)
    return None


def array_size(b, obj, rank):
    """The element count of the numpy array ``obj`` (a PyArrayObject pointer) of
    ``rank`` dimensions, read from its ``dimensions`` at run time."""
    dp = b.load(b.gep(obj, [ir.Constant(I64, _DIMS_OFFSET)], source_etype=ir.IntType(8)),
                typ=ir.PointerType())
    n = None
    for j in range(rank):
        d = b.load(b.gep(dp, [ir.Constant(I64, j)], source_etype=I64), typ=I64)
        n = d if n is None else b.mul(n, d)
    return n
