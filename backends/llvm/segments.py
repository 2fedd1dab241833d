"""The native functions a lowered program is made of: the segment (``Fn``, one per run
of native steps between host steps) and, inside it, the functions of its top-level
steps that loop (``StepFn``).

A segment is a CPython ``METH_FASTCALL`` function (``program`` describes the calling
convention). Each top-level equation with an emitter of its own (a dot_general's batch
loop and transposes, a reshape's copy, a pad, a while loop...) is emitted into a function
of its own, ``step<N>(slots, stack buffers...)``, which the segment calls (``outline``):
one function holding every step's loop nests was too large for LLVM's per-function
passes, whose time grows faster than a function's size (the loop vectoriser, loop
strength reduction and induction-variable passes over the 286 loops of a 4-layer GPT
training step's segment), and one function cannot be compiled on two threads
(``split``). A step without loops is always inlined back: it is a call or a few stores. A program
with fewer than OUTLINE_STEPS such steps keeps them in its segment: its LLVM time is
small, and a scalar loop outlined (then inlined back) got its carries promoted to
registers and vectorised with shuffles: the Lorenz RK4 Jacobian's (jacfwd) loop ran 1.4x
slower.
A control-flow body with many steps that loop (a while loop's body: an adaptive RK45
step with its forward Jacobian, ~250 kernels and ~100 loops of other steps over 8
elements) is emitted in chunks of CHUNK_LOOPS such steps, each a function of its own
(``Chunk``) that inlines its kernels: LLVM's loop
vectoriser (with this LLVM's assertions, which verify the whole function after each loop
it vectorises) and loop passes took time growing with the square of the loops in one
function (256 eight-element loops: 0.99 s in one function, 0.31 s in 16 of 16).
A step function returns null when it failed (an exception is set: a host callback's
error, say), else its ``slots`` argument; the segment then returns null too.

>>> STEP_PREFIX
'step'
"""
from __future__ import annotations

import llvmlite.ir as ir

from . import engine
from .lltypes import I1, I8, I32, I64, emit_loop, emit_nest
from .values import PTR, Ref

__all__ = ["Fn", "StepFn", "STEP_PREFIX", "OUTLINE_STEPS", "OUTLINE_BODIES", "outline", "Chunk",
           "kernel_chunks", "CHUNK_LOOPS", "CHUNK_MIN_LOOPS"]

_DATA_OFFSET = 16        # PyArrayObject: PyObject_HEAD, then char *data
_FLAGS_OFFSET = 64       # ... int nd, npy_intp *dimensions, *strides, base, descr, int flags
_NEEDED_FLAGS = 0x1 | 0x100   # NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED
STEP_PREFIX = "step"     # the names of outlined step functions (``split`` knows them)
OUTLINE_STEPS = 8        # top-level steps with emitters of their own before they are outlined
OUTLINE_BODIES = 2       # steps with bodies (scans, while loops) before steps are outlined
STEP_TMPS = 4            # workspace temporaries a step function gets as arguments (StepFn)
CHUNK_MIN_LOOPS = 48     # looping kernels in one plan before its kernel runs are chunked
CHUNK_LOOPS = 24         # looping kernels per chunk
_REACHABLE = ("slot", "ws", "lent")   # buffers a step function finds from ``slots``


class Fn:
    """One segment function under construction; ``b`` is the builder of its body."""

    def __init__(self, lw, name):
        self.lw = lw
        self.fn = ir.Function(lw.module, ir.FunctionType(PTR, [PTR, PTR, I64]), name)
        self.fn.attributes.add("nounwind")
        self.pre = self.fn.append_basic_block("pre")
        self._start(self.fn.args[1])

    def _start(self, slots):
        self.slots = slots
        self.entry = self.fn.append_basic_block("entry")
        self.eb = ir.IRBuilder(self.entry)
        self.body = self.fn.append_basic_block("body")
        self.b = ir.IRBuilder(self.body)
        self._data = {}
        self.stack = 0
        self.empty = True

    def slot_obj(self, k):      # loaded once, in the entry block: it dominates every use
        if ("obj", k) not in self._data:
            p = self.eb.gep(self.slots, [ir.Constant(I64, k)], source_etype=PTR)
            self._data["obj", k] = self.eb.load(p, typ=PTR)
        return self._data["obj", k]

    def slot_data(self, k):
        if k not in self._data:
            dp = self.eb.gep(self.slot_obj(k), [ir.Constant(I64, _DATA_OFFSET)], source_etype=I8)
            self._data[k] = self.eb.load(dp, typ=PTR)
        return self._data[k]

    def ptr(self, ref):
        if ref.kind == "slot":
            return self.slot_data(ref.where)
        if ref.kind in ("ws", "lent"):      # lent: (output slot, byte offset)
            slot, off = (self.lw.ws_slot, ref.where) if ref.kind == "ws" else ref.where
            base = self.slot_data(slot)
            return self.b.gep(base, [ir.Constant(I64, off)], source_etype=I8) if off else base
        return ref.where

    def alloca(self, n):
        a = self.eb.alloca(ir.ArrayType(I8, max(n, 1)))
        a.align = 16
        self.stack += n
        a.type = PTR        # an opaque pointer like every other buffer (the IR is the same)
        return a

    def loop(self, n, body):
        """``for i in range(n): body(i)`` (n an int or an i64 value); top-tested."""
        emit_loop(self, n, body)

    def nest(self, dims, body):
        """Loop nest over ``dims`` (ints); ``body(list of i64 indices)``."""
        emit_nest(self, dims, body)

    def finish(self, nslots, check):
        """Close the function: slot-count and input-layout checks, then the body."""
        self.b.ret(self.lw.none_ptr(self.b))
        pb = ir.IRBuilder(self.pre)
        bad = self.fn.append_basic_block("bad")
        pb.cbranch(pb.icmp_signed("==", self.fn.args[2], ir.Constant(I64, nslots)), self.entry, bad)
        bb = ir.IRBuilder(bad)
        bb.ret(self.lw.new_ref(bb, "ft_py_notimplemented"))
        ok = ir.Constant(I1, 1)
        for k in check:
            obj = self.slot_obj(k)
            fp = self.eb.gep(obj, [ir.Constant(I64, _FLAGS_OFFSET)], source_etype=I8)
            flags = self.eb.load(fp, typ=I32)
            good = self.eb.icmp_unsigned("==", self.eb.and_(flags, ir.Constant(I32, _NEEDED_FLAGS)),
                                         ir.Constant(I32, _NEEDED_FLAGS))
            ok = self.eb.and_(ok, good)
        self.eb.cbranch(ok, self.body, bad)


class StepFn(Fn):
    """The function of one top-level step: ``ptr step(ptr slots, ptr buffer..., ptr
    tmp...)``; the buffers are the data pointers of the step's operands and results
    (``refs``, in order; the caller computes them), so that the same step on buffers
    elsewhere (the next layer's) is the same function (``fold``). So are its temporaries
    in the workspace (a dot_general's transposed operands): the first STEP_TMPS it asks
    for come in the ``tmp`` arguments (``tmps``: their offsets; the caller passes null
    for the unused), any further one at its offset from the last. Their offsets differ
    from layer to layer; in the step's code, they made each layer's copy a function of
    its own. Anything else is reached from ``slots`` as in a segment."""

    def __init__(self, lw, name, refs):
        self.lw = lw
        n = 1 + len(refs)
        self.fn = ir.Function(lw.module, ir.FunctionType(PTR, [PTR] * (n + STEP_TMPS)), name)
        self.fn.linkage = "internal"
        self.fn.attributes.add("nounwind")
        self._start(self.fn.args[0])
        self._args = {_key(r): a for r, a in zip(refs, self.fn.args[1:])}
        self._tmp_args = self.fn.args[n:]
        self.tmps = []              # workspace offsets the ``tmp`` arguments point at

    def ptr(self, ref):
        a = self._args.get(_key(ref))
        if a is not None:
            return a
        if ref.kind != "ws":
            return super().ptr(ref)
        if ref.where not in self.tmps and len(self.tmps) < STEP_TMPS:
            self.tmps.append(ref.where)
        j = self.tmps.index(ref.where) if ref.where in self.tmps else len(self.tmps) - 1
        off = ref.where - self.tmps[j]
        tmp = self._tmp_args[j]
        return self.b.gep(tmp, [ir.Constant(I64, off)], source_etype=I8) if off else tmp

    def close(self):
        """End the body (return ``slots``: success); True when the function loops."""
        self.b.ret(self.slots)
        self.eb.branch(self.body)
        order = {blk.name: i for i, blk in enumerate(self.fn.blocks)}
        return any(order[t.name] <= order[blk.name] for blk in self.fn.blocks
                   for t in _targets(blk.terminator))


def _key(ref):
    """What identifies a buffer: its kind and place (an LLVM value by identity)."""
    w = ref.where
    return ref.kind, (id(w) if isinstance(w, ir.Value) else w)


def _targets(term):
    out = [op for op in getattr(term, "operands", ()) if isinstance(op, ir.Block)]
    if isinstance(term, ir.SwitchInstr):
        out += [term.default] + [blk for _, blk in term.cases]
    return out


def outline(lw, fn, emit, ins, outs):
    """Emit one step through ``emit(step_fn)`` into a function of its own called from
    segment ``fn``; ``ins``, ``outs``: the Refs of the step's operands (None for a
    literal) and results. A step with loops is never inlined (``noinline``; ``split`` may
    move it to another part), one without always is."""
    args, seen = [], set()
    for r in [*ins, *outs]:
        if r is not None and _key(r) not in seen:
            seen.add(_key(r))
            args.append(r)
    step = StepFn(lw, lw.name(STEP_PREFIX), args)
    emit(step)
    fails = any(isinstance(blk.terminator, ir.Ret) for blk in step.fn.blocks)
    step.fn.attributes.add("noinline" if step.close() else "alwaysinline")
    tmps = [fn.ptr(Ref("ws", off, None)) for off in step.tmps]
    tmps += [ir.Constant(PTR, None)] * (STEP_TMPS - len(tmps))
    engine.inherit_wide_vectors(fn.fn, step.fn)
    res = fn.b.call(step.fn, [fn.slots] + [fn.ptr(r) for r in args] + tmps)
    if fails:                          # a failure path returned null: so does the segment
        _check(fn, res)


def _check(fn, res):
    """In ``fn``: return null when the call's result ``res`` is null (it failed)."""
    bad = fn.fn.append_basic_block("step_failed")
    ok = fn.fn.append_basic_block("step_done")
    fn.b.cbranch(fn.b.icmp_unsigned("==", res, ir.Constant(PTR, None)), bad, ok)
    ir.IRBuilder(bad).ret(ir.Constant(PTR, None))
    fn.b.position_at_end(ok)


def kernel_chunks(flags: list) -> dict:
    """{first step: end step} of the runs of consecutive native steps emitted as ``Chunk``s;
    ``flags[i]`` is None where step i is a host step, else whether its code loops. Only
    plans with CHUNK_MIN_LOOPS looping kernels are chunked, CHUNK_LOOPS of them a chunk;
    a run with fewer than two stays in its caller.

    >>> kernel_chunks([True] * 60 + [None, True, False, True])
    {0: 24, 24: 48, 48: 60, 61: 64}
    >>> kernel_chunks([True] * 10)
    {}
    """
    if sum(1 for f in flags if f) < CHUNK_MIN_LOOPS:
        return {}
    out, start, n = {}, None, 0
    for i, f in enumerate([*flags, None]):
        if f is None or (f and n == CHUNK_LOOPS):
            if n >= 2:
                out[start] = i
            start, n = None, 0
        if f is None:
            continue
        if start is None:
            start = i
        n += bool(f)
    return out



class Chunk(Fn):
    """A run of kernels in a function of its own, ``ptr chunk(ptr slots, ptr argv)``,
    called once from ``caller`` where the run stands (never inlined back: see the module
    docstring). A buffer the chunk cannot reach from ``slots`` (the caller's stack
    buffers, a scan's row pointers) comes in ``argv``, which the caller fills as the
    chunk first asks for each (``ptr``); one defined and dead inside the chunk is
    allocated on its own stack, and a pointer computed in it (a scan's row inside the
    chunk) is its own value."""

    def __init__(self, lw, caller):
        self.lw, self.caller, self.refs = lw, caller, []
        self.fn = ir.Function(lw.module, ir.FunctionType(PTR, [PTR, PTR]), lw.name(STEP_PREFIX))
        self.fn.linkage = "internal"
        self.fn.attributes.add("nounwind")
        self.fn.attributes.add("noinline")
        self._start(self.fn.args[0])

    def ptr(self, ref):
        blk = getattr(ref.where, "parent", None)      # its own: a value computed here
        if ref.kind in _REACHABLE or (isinstance(blk, ir.Block) and blk.parent is self.fn):
            return super().ptr(ref)
        k = ("arg", _key(ref))
        if k not in self._data:
            p = self.eb.gep(self.fn.args[1], [ir.Constant(I64, len(self.refs))], source_etype=PTR)
            self._data[k] = self.eb.load(p, typ=PTR)
            self.refs.append(ref)
        return self._data[k]

    def end(self):
        """Close the chunk and call it from the caller (which returns null when the
        chunk failed, as after an outlined step)."""
        fails = any(isinstance(blk.terminator, ir.Ret) for blk in self.fn.blocks)
        self.b.ret(self.slots)
        self.eb.branch(self.body)
        c = self.caller
        argv = c.alloca(8 * len(self.refs)) if self.refs else ir.Constant(PTR, None)
        for j, r in enumerate(self.refs):
            c.b.store(c.ptr(r), c.b.gep(argv, [ir.Constant(I64, j)], source_etype=PTR))
        engine.inherit_wide_vectors(c.fn, self.fn)
        res = c.b.call(self.fn, [c.slots, argv])
        if fails:
            _check(c, res)
