"""Lowering a whole jaxpr into native *segment* functions with one buffer plan.

The jaxpr's steps (``backends.fusion.plan``) run inside ONE LLVM function per
*segment*; a new segment starts only after a host step (an equation with no native
code, run through its numpy ``impl``). A jaxpr without host steps is one function.

Calling convention: a segment is a CPython ``METH_FASTCALL`` function
``PyObject *seg(PyObject *self, PyObject *const *slots, Py_ssize_t n)`` whose
arguments are numpy arrays: the inputs, the outputs (allocated by the caller), the
constants, the workspace (a uint8 array) and one slot per host-step result. The data
pointer of each array is read from the array object itself (``PyArrayObject.data``,
at a fixed offset of numpy's ABI), so a call converts nothing. It returns ``None``, or
``NotImplemented`` without doing any work when the slot count is wrong or an input is
not a C-contiguous aligned array (the caller then converts and calls again).

Plug-ins: this module imports what emits code (``kernels`` and ``row_kernels`` for
fused kernels, ``equations``, ``blas``, ``control`` and ``scans`` for equations with an
emitter of their own, the op table ``ops``) and none imports it back: an emitter gets the
``Lowering`` as an argument, ``control`` plans sub-jaxprs with the ``plan_jaxpr`` passed
down. Composites are decomposed (``backends.decompose``) before planning: pieces fuse.

Buffers: every value that lives in memory is contiguous. Small values local to one
segment live on the stack (``alloca``: LLVM keeps them in registers); the others live
in an output buffer before that output's first write (``Lender``, as XLA's buffer
assignment: a backward pass keeps its saved activations in the gradients' buffers), or
get a byte range of the workspace from an arena that reuses dead buffers of the same
size (liveness per step). Outputs are written in place into the caller's arrays.

>>> STACK_MAX
256
"""
from __future__ import annotations

import sys

import llvmlite.ir as ir
import numpy as np

from jaxpr_ir import Literal, ShapedArray
from .. import fusion
from ..decompose import decompose
from ..fusion import ELEMENTWISE, OPAQUE, REDUCE, HostStep, Kernel, contiguous_strides
from . import blas, control, engine, lapack, lapack_eig, ops_complex, scans  # noqa: F401
from . import lapack_schur, lapack_sqrtm  # noqa: F401
from . import conv  # noqa: F401  (registers conv_general_dilated: shifted GEMMs)
from . import top_k  # noqa: F401  (registers top_k: a heap per row)
from .equations import NATIVE
from . import half, host_calls, rewrite
from .kernels import (OWN_FUNCTION_ELEMENTS, OWN_FUNCTION_EQNS, WORKSPACE, KernelEmitter,
                      array_size, count_source)
from .lltypes import I64, const, load_elem, storage, stored
from .ops import REDUCTIONS, TABLE, heavy
from .row_kernels import RowEmitter
from .segments import OUTLINE_BODIES, OUTLINE_STEPS, Chunk, Fn, kernel_chunks, outline
from .values import PTR, Arena, Lender, Ref, Val, nbytes, raw_const, raw_type

STACK_MAX = 256          # bytes: values this small and segment-local live in registers
_STACK_TOTAL = 1 << 16
# equations per fused kernel: LLVM's time on one loop body grows faster than linearly
# (a chain of 4,000 adds in one loop: 6 s of optimisation; 1,000: 0.3 s)
MAX_KERNEL_EQNS = 512
_INCREF_NONE = sys.version_info < (3, 12)   # None is immortal from 3.12 on


# --------------------------------------------------------------------------- what is native

NATIVE_DTYPES = frozenset(np.dtype(d) for d in
                          ("float64", "float32", "int64", "uint64", "int32", "uint32", "int16",
                           "uint16", "int8", "uint8", "bool"))


def classify(eqn):
    """ELEMENTWISE / REDUCE / OPAQUE when this backend generates code for ``eqn``, else
    None (a host step): the op table (``ops``) for fused elementwise code and
    reductions, ``equations.NATIVE`` for equations with an emitter of their own.

    >>> from jaxpr_ir import Eqn, Var, ShapedArray, primitives
    >>> import functrans  # registers the primitives
    >>> a = Var(ShapedArray((3,), "float64"))
    >>> classify(Eqn(primitives["sin"], [a], [Var(a.aval)], {}))
    'elementwise'
    """
    name = eqn.primitive.name
    odd = {x.aval.dtype for x in (*eqn.inputs, *eqn.outvars)} - NATIVE_DTYPES
    op = NATIVE.get(name)
    if odd and not ops_complex.supports_complex(eqn, odd) and not half.native_convert(eqn) \
            and not half.native_move(eqn, odd) and not (op is not None and op.raw):
        return None              # (complex: where a rule says; float16: see ``half``)
    if op is not None:
        return OPAQUE if op.supports(eqn, plan_jaxpr) else None
    if eqn.primitive.multiple_results:
        return None
    if name in REDUCTIONS:
        return REDUCE if eqn.inputs[0].aval.dtype.kind in REDUCTIONS[name].kinds else None
    row = TABLE.get(name)
    return ELEMENTWISE if row is not None and row.supports(eqn) else None


def plan_jaxpr(jaxpr) -> fusion.Plan:
    """The fusion plan of ``jaxpr`` for this backend, composites decomposed first (so
    their pieces fuse) and products rewritten (``rewrite``: a transposed product, an
    update by a product); the plan's inputs and outputs are ``jaxpr``'s own variables.

    >>> import numpy as np, functrans as ft
    >>> from functrans import lax
    >>> [type(s).__name__ for s in plan_jaxpr(ft.make_jaxpr(lax.rsqrt)(np.ones(4)).jaxpr).steps]
    ['Kernel']
    """
    jaxpr = decompose(half.widen(jaxpr), TABLE, NATIVE_DTYPES)
    jaxpr = rewrite.fold_dot_updates(rewrite.fold_dot_transposes(jaxpr))
    return fusion.plan(jaxpr, classify, row_fusion=True, max_kernel_eqns=MAX_KERNEL_EQNS,
                       recompute=_cheap)


def _cheap(eqn) -> bool:
    """Worth recomputing in each kernel that reads it rather than saving (fusion's
    ``recompute``): elementwise here and not compute-heavy (``ops.heavy``)."""
    return classify(eqn) == ELEMENTWISE and not heavy(eqn)


def emitter(module, name, kernel, views, noalias=True, count=False, ws=None, same=None):
    """The emitter of ``kernel`` (a row kernel, ``kernel.phases``, has its own); for
    ``count``, ``ws`` and ``same`` see ``KernelEmitter``."""
    if kernel.phases:
        assert not same, "a row kernel never writes over its input (control.in_place)"
        return RowEmitter(module, name, kernel, views, noalias)
    return KernelEmitter(module, name, kernel, views, noalias, count, ws, same)


def _has_body(step) -> bool:
    """Whether a step runs sub-jaxprs (a scan's or a while loop's body): a program with
    OUTLINE_BODIES of them outlines its steps, so that each body compiles on a thread
    of its own (``split``)."""
    ps = getattr(getattr(step, "eqn", None), "params", {})
    return any(hasattr(v, "jaxpr") or isinstance(v, (tuple, list)) and
               any(hasattr(x, "jaxpr") for x in v) for v in ps.values())


def _loops(step):
    """None for a host step, else whether the step's code loops (``kernel_chunks``): an
    equation with an emitter of its own is taken to, a kernel when it has more than one
    element and is inlined."""
    if isinstance(step, HostStep):
        return None
    if not isinstance(step, Kernel):
        return True
    return int(np.prod(step.shape, dtype=np.int64)) > 1 and not (
        len(step.eqns) >= OWN_FUNCTION_EQNS and np.prod(step.shape) >= OWN_FUNCTION_ELEMENTS)


# --------------------------------------------------------------------------- liveness

def _base(x, views):
    if isinstance(x, Literal):
        return None
    v = views.get(x)
    if v is not None:
        return v.base if not isinstance(v.base, Literal) else None
    return x


def _step_eqns(s):
    return s.eqns if isinstance(s, Kernel) else [s.eqn]


def _step_outputs(s):
    return list(s.outputs) if isinstance(s, Kernel) else list(s.eqn.outvars)


def liveness(plan, outvars):
    """(def step, last use step) of every buffer var; outputs live to the end."""
    defs, last = {}, {}
    for i, s in enumerate(plan.steps):
        for e in _step_eqns(s):
            for x in e.inputs:
                b = _base(x, plan.views)
                if b is not None:
                    last[b] = i
        for o in _step_outputs(s):
            defs[o] = i
            last.setdefault(o, i)
    end = len(plan.steps)
    for x in outvars:
        b = _base(x, plan.views)
        if b is not None:
            last[b] = end
    return defs, last


# --------------------------------------------------------------------------- the lowering

class Lowering:
    """Builds the module for one jaxpr; ``segments`` lists what a call runs, in order:
    ``("native", function name)`` or ``("host", HostCall)``."""

    def __init__(self, closed, donate=(), timings=None, progress=None):
        jaxpr = closed.jaxpr
        self.progress = progress   # progress(stage, done, total, equations) or None
        self.jaxpr = jaxpr
        self.module = ir.Module(name="functrans")
        self.module.triple = engine.triple()
        self.module.data_layout = engine.data_layout()
        self.arena = Arena()
        self.n_in, self.n_out = len(jaxpr.invars), len(jaxpr.outvars)
        self.n_const = len(jaxpr.constvars)
        self.ws_slot = self.n_in + self.n_out + self.n_const
        self.nslots = self.ws_slot + 1
        self.segments = []
        self.counter = 0
        self.kernels = 0
        self._globals = {}
        with engine.timed(timings, "fusion plan"):
            self.plan = plan_jaxpr(jaxpr)
        self.n_eqns = len(jaxpr.eqns)
        self.n_kernels = sum(1 for s in self.plan.steps if isinstance(s, Kernel))
        self.outlining = sum(1 for s in self.plan.steps
                             if not isinstance(s, (Kernel, HostStep))) >= OUTLINE_STEPS \
            or sum(map(_has_body, self.plan.steps)) >= OUTLINE_BODIES
        self.donate = tuple(donate)
        self.aliases = {}          # output position -> donated input position sharing its buffer
        self.shared_kernels = set()   # ids of kernels writing over one of their inputs

    # ------------------------------------------------------------------ helpers
    def name(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def _extern(self, name):
        g = self._globals.get(name)
        if g is None:
            g = self._globals[name] = ir.GlobalVariable(self.module, I64, name)   # ob_refcnt
            g.linkage = "external"
        return g

    def none_ptr(self, b):
        return self.new_ref(b, "ft_py_none")

    def new_ref(self, b, name):
        """A new reference to the singleton ``name`` (None or NotImplemented)."""
        g = self._extern(name)
        if _INCREF_NONE:
            rc = b.load(g, typ=I64)
            b.store(b.add(rc, ir.Constant(I64, 1)), g)
        return g

    def val(self, x, env, views):
        """The Val reading ``x`` (a Literal or var) in ``env`` with the plan's ``views``."""
        if isinstance(x, Literal):
            return Val(x.aval.dtype, (), lit=x.val)
        v = views.get(x)
        if v is not None:
            if isinstance(v.base, Literal):
                return Val(x.aval.dtype, x.aval.shape, lit=v.base.val)
            return Val(x.aval.dtype, x.aval.shape, ref=env[v.base], strides=v.strides,
                       offset=v.offset)
        return Val(x.aval.dtype, x.aval.shape, ref=env[x],
                   strides=contiguous_strides(x.aval.shape), offset=0)

    liveness = staticmethod(liveness)     # for ``control``'s in-place carries

    def plan_of(self, jaxpr):
        """(fusion plan, whether every step is native) of a sub-jaxpr (``control``)."""
        return control.sub_plan(jaxpr, plan_jaxpr)

    def val_of_ref(self, ref):
        a = ref.aval
        return Val(a.dtype, a.shape, ref=ref, strides=contiguous_strides(a.shape), offset=0)

    def new_buffer(self, fn, aval, local):
        """A fresh buffer for ``aval``: on the stack when small and ``local``, else the
        workspace. Returns (Ref, owned: whether the arena range must be released)."""
        n = nbytes(aval)
        if local and n <= STACK_MAX and fn.stack + n <= _STACK_TOTAL:
            return Ref("stack", fn.alloca(n), aval), False
        return Ref("ws", self.arena.alloc(n), aval), True

    def release(self, ref):
        if ref.kind == "ws":
            self.arena.release(ref.where, nbytes(ref.aval))

    # ------------------------------------------------------------------ element access
    const = staticmethod(const)     # the op table's rules call em.const(dtype, value)

    def elem_ptr(self, fn, ptr, dtype, index):
        return fn.b.gep(ptr, [index], source_etype=storage(dtype))

    def load(self, fn, ptr, dtype, index):
        return load_elem(fn.b, self.elem_ptr(fn, ptr, dtype, index), dtype)

    def store(self, fn, ptr, dtype, index, v):
        fn.b.store(stored(fn.b, v, dtype), self.elem_ptr(fn, ptr, dtype, index))

    def scalar(self, fn, val):
        """The register value of a scalar Val."""
        if val.lit is not None:
            return self.const(val.dtype, val.lit)
        return self.load(fn, fn.ptr(val.ref), val.dtype, ir.Constant(I64, val.offset))

    # ------------------------------------------------------------------ copies
    def copy(self, fn, src, dst_ptr, dst_strides=None, dst_offset=0, src_offset=None):
        """Write Val ``src`` (its shape) at ``dst_ptr`` with element strides/offset (offsets
        may be i64 values; default: contiguous at 0). ``src_offset`` adds to src's offset."""
        shape = src.shape
        dst_strides = list(dst_strides or contiguous_strides(shape))
        b = fn.b
        if any(d == 0 for d in shape):
            return
        if src.lit is not None:
            value = raw_const(src.dtype, src.lit)
            src_strides = [0] * len(shape)
        else:
            value = None
            src_strides = list(src.strides)
            sptr = fn.ptr(src.ref)
        # drop size-1 dims, merge dims both sides walk contiguously
        keep = [d for d in range(len(shape)) if shape[d] != 1]
        dims = [shape[d] for d in keep]
        ss = [src_strides[d] for d in keep]
        ds = [dst_strides[d] for d in keep]
        i = len(dims) - 1
        while i > 0:
            if ss[i - 1] == ss[i] * dims[i] and ds[i - 1] == ds[i] * dims[i]:
                dims[i - 1] *= dims[i]
                ss[i - 1], ds[i - 1] = ss[i], ds[i]
                del dims[i], ss[i], ds[i]
            i -= 1

        def off(base, idxs, strides):
            o = base if isinstance(base, ir.Value) else ir.Constant(I64, base)
            for ix, s in zip(idxs, strides):
                if s:
                    o = b.add(o, b.mul(ix, ir.Constant(I64, s)))
            return o

        s0 = src.offset if src_offset is None else (
            b.add(ir.Constant(I64, src.offset), src_offset) if isinstance(src_offset, ir.Value)
            else src.offset + src_offset)

        def body(idxs):
            v = value
            st = raw_type(src.dtype)
            if v is None:
                v = b.load(b.gep(sptr, [off(s0, idxs, ss)], source_etype=st), typ=st)
            b.store(v, b.gep(dst_ptr, [off(dst_offset, idxs, ds)], source_etype=st))
        fn.nest(dims, body)

    def materialize(self, fn, val, local=True):
        """A contiguous Ref holding ``val`` (itself when already one) and the temp to release."""
        if val.contiguous:
            return val.ref, None
        ref, owned = self.new_buffer(fn, ShapedArray(val.shape, val.dtype), local)
        self.copy(fn, val, fn.ptr(ref))
        return ref, (ref if owned else None)

    # ------------------------------------------------------------------ steps
    def emit_steps(self, fn, plan, env, outvars, dests, local, top=False):
        """Emit ``plan``'s steps into ``fn`` (into new segments at host steps when ``top``).

        ``dests``: {outvar position: Ref} where outputs should be written when defined
        here. Returns (fn, {outvar position placed in its dest}, [owned outvar Refs])."""
        views = plan.views
        defs, last = liveness(plan, outvars)
        placed = {}
        dest_of = {}
        for j, x in enumerate(outvars):
            if isinstance(x, Literal) or x in views or j not in dests:
                continue
            if x in defs and x not in dest_of:
                dest_of[x] = j
        owned = {}
        dying = {}                 # step -> vars last used there (one pass, not per step)
        for v, li in last.items():
            dying.setdefault(li, []).append(v)
        seg_local = self._segment_locals(plan, defs, last) if top else None
        apart = top and self.outlining
        lent = self._lend(plan, outvars, dest_of, defs, last, seg_local) if top else {}
        # a control-flow body's kernel runs in chunks (at the top level kernels fold instead)
        chunks = {} if top else kernel_chunks([_loops(s) for s in plan.steps])
        chunk, end = None, 0
        for i, s in enumerate(plan.steps):
            if chunk is not None and i == end:
                chunk = chunk.end()
            if i in chunks:               # a run of kernels in a function of its own
                chunk, end = Chunk(self, fn), chunks[i]
            if isinstance(s, HostStep) and top:     # inside control flow: a host call
                fn = self._host(fn, s, env, views)
                continue
            outs = []
            for o in _step_outputs(s):
                if o in env:       # defined in place already (never: SSA), keep
                    outs.append(env[o])
                    continue
                if o in dest_of:
                    ref = dests[dest_of[o]]
                    placed[dest_of[o]] = True
                else:
                    if o in lent:
                        ref = Ref("lent", lent[o], o.aval)
                    else:
                        is_local = local if not top else (o in seg_local)
                        inner = chunk is not None and last.get(o, i) < end
                        ref, own = self.new_buffer(chunk if inner else fn, o.aval, is_local)
                        if own:
                            owned[o] = ref
                env[o] = ref
                outs.append(ref)
            fn.empty = False
            if isinstance(s, Kernel):
                self._kernel(chunk or fn, s, env, views)
            else:
                ins = [self.val(x, env, views) for x in s.eqn.inputs]
                op = host_calls if isinstance(s, HostStep) else NATIVE[s.eqn.primitive.name]
                if apart:          # its own function (``segments``): LLVM's time stays linear
                    outline(self, fn, lambda f, s=s, op=op, ins=ins, outs=outs:
                            op.emit(self, f, s.eqn, ins, outs), [v.ref for v in ins], outs)
                else:
                    op.emit(self, chunk or fn, s.eqn, ins, outs)
            for v in dying.get(i, ()):
                if v in owned:
                    self.release(owned.pop(v))
        if chunk is not None:
            chunk.end()
        keep = [owned[x] for x in outvars if not isinstance(x, Literal) and x in owned]
        return fn, placed, keep

    def _lend(self, plan, outvars, dest_of, defs, last, seg_local):
        """{temporary: (output slot, byte offset)}: the top-level temporaries that live
        in an output buffer before its first write (``Lender``). Lent: outputs a native
        step writes whole, that no input is donated to (a kernel writing over its input
        reads it there) and that the program returns once. Placed latest death first:
        fewer outputs are still unwritten then (a backward pass's last layers)."""
        lender, times = Lender(), {}
        for x in outvars:
            times[id(x)] = times.get(id(x), 0) + 1
        for x, j in dest_of.items():
            if j not in self.aliases and times[id(x)] == 1 and \
                    not isinstance(plan.steps[defs[x]], HostStep):
                lender.add(self.n_in + j, nbytes(x.aval), x.aval.dtype.alignment, defs[x])
        temps = [(o, i) for i, s in enumerate(plan.steps) if not isinstance(s, HostStep)
                 for o in _step_outputs(s) if o not in dest_of and o in seg_local
                 and nbytes(o.aval) > STACK_MAX] if lender.outs else []
        temps.sort(key=lambda t: (-last[t[0]], t[1]))
        placed = ((o, lender.place(nbytes(o.aval), o.aval.dtype.alignment, i, last[o]))
                  for o, i in temps)
        return {o: at for o, at in placed if at is not None}

    def _segment_locals(self, plan, defs, last):
        """Top-level vars that may live on the stack or in an output: defined and dead in
        one segment, never read by a host step."""
        seg, n = [], 0
        for s in plan.steps:
            if isinstance(s, HostStep):
                n += 1
            seg.append(n)
        seg.append(n + 1)          # outputs: the end
        host_read = set()
        for s in plan.steps:
            if isinstance(s, HostStep):
                for x in s.eqn.inputs:
                    b = _base(x, plan.views)
                    if b is not None:
                        host_read.add(b)
        return {v for v, d in defs.items()
                if v not in host_read and seg[d] == seg[last.get(v, d)]}

    def _kernel(self, fn, k, env, views):
        self.kernels += 1
        if self.progress is not None:
            self.progress("IR build", self.kernels, max(self.kernels, self.n_kernels),
                          self.n_eqns)
        src = count_source(self.plan, k, env)     # its IR then serves every count
        # outputs written over an input in place (a loop carry: control.in_place)
        same = {o: x for o in k.outputs for x in k.inputs
                if x not in views and env.get(x) is env[o]}
        em = emitter(self.module, self.name("k"), k, views, id(k) not in self.shared_kernels,
                     src is not None, lambda v: env[v].where if env[v].kind == "ws" else None,
                     same)
        em.emit()
        if isinstance(fn, Chunk) and "noinline" not in em.fn.attributes:
            em.fn.attributes.add("alwaysinline")     # one call site; never folded
        args = [fn.slot_data(self.ws_slot) if v is WORKSPACE else fn.ptr(env[v])
                for v in em.buffers]
        if em.count_arg:
            args.append(array_size(fn.eb, fn.slot_obj(src[0]), src[1]))
        engine.inherit_wide_vectors(fn.fn, em.fn)
        fn.b.call(em.fn, args)

    def _host(self, fn, s, env, views):
        """Close the current segment, run ``s`` in Python, open the next segment."""
        self.segments.append(("native", fn))     # finished in build(), once nslots is known
        ins = []
        for x in s.eqn.inputs:
            if isinstance(x, Literal):
                ins.append(("lit", np.asarray(x.val, x.aval.dtype)))
                continue
            v = self.val(x, env, views)
            if v.lit is not None:
                ins.append(("lit", np.full(v.shape, v.lit, v.dtype)))
                continue
            r = v.ref
            where = ("slot", r.where) if r.kind == "slot" else ("ws", r.where, nbytes(r.aval))
            ins.append(("ref", where, r.aval.dtype, r.aval.shape, v.shape, v.strides, v.offset))
        outs = []
        for o in s.eqn.outvars:
            k = self.nslots
            self.nslots += 1
            env[o] = Ref("slot", k, o.aval)
            outs.append((k, o.aval.dtype, o.aval.shape))
        self.segments.append(("host", (s.eqn, ins, outs)))
        return Fn(self, self.name("seg"))

    # ------------------------------------------------------------------ donation
    def _plan_aliases(self):
        """Pair donated inputs with outputs that may be written over them: an output of
        the same type defined by a kernel (not a reduction) that is the input's last
        reader and reads it only at the element it writes."""
        jaxpr, plan = self.jaxpr, self.plan
        defs, last = liveness(plan, jaxpr.outvars)
        step_of = {}
        for i, s in enumerate(plan.steps):
            if isinstance(s, Kernel):
                for o in s.outputs:
                    if o not in s.reduced:
                        step_of[o] = i
        outs = [x for x in jaxpr.outvars if not isinstance(x, Literal)]
        taken = set()
        for d in self.donate:
            if not 0 <= d < len(jaxpr.invars):
                continue
            v = jaxpr.invars[d]
            if v in outs:
                continue
            for j, x in enumerate(jaxpr.outvars):
                if isinstance(x, Literal) or j in taken or x not in step_of:
                    continue
                if jaxpr.outvars.index(x) != j or x.aval.shape != v.aval.shape or \
                        x.aval.dtype != v.aval.dtype:
                    continue
                i = step_of[x]
                if last.get(v, -1) > i:
                    continue
                k = plan.steps[i]
                if k.phases and last.get(v, -1) == i:
                    continue      # a later phase may read v after an earlier one wrote x
                direct = all(_base(y, plan.views) is not v or y is v
                             for e in k.eqns for y in e.inputs)
                if last.get(v, -1) == i and not (direct and tuple(k.shape) == v.aval.shape):
                    continue
                self.aliases[j] = d
                taken.add(j)
                if last.get(v, -1) == i:
                    self.shared_kernels.add(id(k))
                break

    # ------------------------------------------------------------------ driver
    def build(self):
        jaxpr = self.jaxpr
        if self.donate:
            self._plan_aliases()
        env = {}
        for k, v in enumerate(jaxpr.invars):
            env[v] = Ref("slot", k, v.aval)
        for k, v in enumerate(jaxpr.constvars):
            env[v] = Ref("slot", self.n_in + self.n_out + k, v.aval)
        out_refs = {j: Ref("slot", self.n_in + j, x.aval) for j, x in enumerate(jaxpr.outvars)}
        fn = Fn(self, self.name("seg"))
        fn, placed, _ = self.emit_steps(fn, self.plan, env, jaxpr.outvars, out_refs, False,
                                       top=True)
        for j, x in enumerate(jaxpr.outvars):
            if j in placed:
                continue
            fn.empty = False
            v, out = self.val(x, env, self.plan.views), out_refs[j]
            if self.outlining:
                outline(self, fn, lambda f, v=v, out=out: self.copy(f, v, f.ptr(out)), [v.ref],
                        [out])
            else:
                self.copy(fn, v, fn.ptr(out))
        self.segments.append(("native", fn))
        first = True
        for kind, item in self.segments:
            if kind == "native":
                item.finish(self.nslots, range(self.n_in) if first else ())
                first = False
        # drop segments that do nothing (between two host steps, say)
        self.segments = [(k, (it.fn.name if k == "native" else it)) for k, it in self.segments
                         if k != "native" or not it.empty or it is self.segments[0][1]]
        return self.segments
