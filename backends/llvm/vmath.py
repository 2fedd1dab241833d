"""Vectorisable math in LLVM IR: branch-free exp/log-family routines written with
arithmetic, bit manipulation and selects (Cody–Waite range reduction + polynomials),
emitted as ``alwaysinline`` internal functions so that they inline into kernel loops
and the loop vectoriser turns them into SIMD code (a scalar libm call would not be).

Every routine exists for float64 and float32; the float32 ones are native (own reductions
and polynomials) except pow, erf and erfc, which compute in float64, still SIMD, and round
once (as glibc's powf does). Each follows numpy's special values (±0 with its sign
where numpy keeps it, subnormals, ±inf, nan, the overflow/underflow thresholds) and is
within a few ulp of numpy (tests/test_llvm_math.py measures the ulp distances).

This module is the core: the emission helpers (``VM``), libm for rare lanes, the
registry of routines (``BODIES``, filled by ``register``) and the per-process library of
compiled routines small kernels call (it compiles through ``cache``; the routines'
modules and ``ops`` import this one, never the reverse). The routines register
themselves from their own modules: ``vmath_exp`` (exp, exp2, expm1, log, log2, log10,
log1p), ``vmath_trig`` (sin, cos, tan, atan, atan2, asin, acos) and ``vmath_hyp``
(tanh, logistic, sinh, cosh, asinh, acosh, atanh, pow, erf, erfc); the op table (``ops``)
imports them. Use ``call(module, builder, name, *args)``.

The polynomial coefficients are near-minimax fits (relative error, mpmath, Lawson
iteration on Chebyshev nodes) of the tail functions named next to each table.

>>> import llvmlite.ir as ir
>>> from backends.llvm import vmath_exp  # registers exp
>>> function(ir.Module(), "exp", ir.DoubleType()).name
'ft_exp_f64'
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np

from . import cache, engine
from .lltypes import F64, I1, I8, I32, I64

BODIES: dict = {}        # name -> (number of arguments, body(vm, *args) -> value)


def register(name, nargs=1):
    """Decorator: ``body(vm, *args)`` emits routine ``name`` into the current function."""
    def deco(body):
        BODIES[name] = (nargs, body)
        return body
    return deco


def function(module, name, ty):
    """The internal alwaysinline function ``ft_<name>_<f64|f32>``, defined on first use."""
    nargs, body = BODIES[name]
    fname = f"ft_{name}_{'f64' if ty == F64 else 'f32'}"
    fn = module.globals.get(fname)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ty, [ty] * nargs), fname)
        fn.linkage = "internal"
        fn.attributes.add("alwaysinline")
        fn.attributes.add("nounwind")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        b.ret(body(VM(module, b, ty), *fn.args))
    return fn


INLINE_USES = 2     # uses of one routine per module inlined; later ones call a shared copy


def call(module, builder, name, *args, library=False):
    """Emit a call of routine ``name`` on LLVM float values: the first ``INLINE_USES``
    uses in a module are inlined by the optimiser, later ones call ``shared``'s one copy
    (so a module with hundreds of sines optimises one sine, not hundreds). With
    ``library`` (kernels over few elements), a one-argument routine is called from the
    process's compiled ``library`` instead: the module then holds no copy at all."""
    ty = args[0].type
    if library and BODIES[name][0] == 1:
        return builder.call(library_function(module, name, ty), list(args))
    # a compute-bound loop (a few-element kernel calling the library is not: measured
    # 1-4% slower with 512-bit loops on the 64-element hessian workload)
    engine.prefer_wide_vectors(builder.function)
    uses = module.__dict__.setdefault("_ft_vmath_uses", {})
    key = (name, str(ty))
    uses[key] = uses.get(key, 0) + 1
    # binary routines (pow, atan2) stay inlined: LLVM's verifier rejects the vector
    # variants of a two-argument shared copy ("invalid name for a VFABI variant")
    inline = uses[key] <= INLINE_USES or BODIES[name][0] != 1
    fn = function(module, name, ty) if inline else shared(module, name, ty)
    return builder.call(fn, list(args))


_SHARED_LANES = {"f64": (4, 8), "f32": (8, 16)}   # 2 lanes: not vectorised


def shared(module, name, ty):
    """``ft_<name>_<f64|f32>_shared``: routine ``name`` as a ``noinline`` function with
    vector variants (``vector-function-abi-variant``) for the widths the loop vectoriser
    picks, so a vectorised kernel loop calls one SIMD copy instead of inlining its own.
    Each variant loops over its lanes calling the inlined routine, a loop forced to
    vectorise at exactly that width (``llvm.loop.vectorize.width``)."""
    nargs, _ = BODIES[name]
    sfx = "f64" if ty == F64 else "f32"
    fname = f"ft_{name}_{sfx}_shared"
    fn = module.globals.get(fname)
    if fn is not None:
        return fn
    body = function(module, name, ty)
    fn = ir.Function(module, ir.FunctionType(ty, [ty] * nargs), fname)
    fn.linkage = "internal"
    for a in ("noinline", "nounwind"):
        fn.attributes.add(a)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(b.call(body, list(fn.args)))
    variants = []
    for n in _SHARED_LANES[sfx]:
        vname = f"{fname}_v{n}"
        _lane_loop(module, body, vname, ty, nargs, n)
        variants.append(f"_ZGV_LLVM_N{n}{'v' * nargs}_{fname}({vname})")
    set.add(fn.attributes, f'"vector-function-abi-variant"="{",".join(variants)}"')
    return fn


def _lane_loop(module, body, name, ty, nargs, n):
    """``name(<n x ty> x...)``: ``body`` on each lane, in a loop vectorised at width n.
    External linkage: nothing calls it before the vectoriser does, and an internal
    function without callers would be deleted first."""
    vt, at = ir.VectorType(ty, n), ir.ArrayType(ty, n)
    fn = ir.Function(module, ir.FunctionType(vt, [vt] * nargs), name)
    for a in ("noinline", "nounwind"):
        fn.attributes.add(a)
    entry = fn.append_basic_block("entry")
    loop = fn.append_basic_block("lanes")
    done = fn.append_basic_block("done")
    b = ir.IRBuilder(entry)
    ins = []
    for x in fn.args:
        slot = _opaque_alloca(b, at)
        b.store(x, slot)
        ins.append(slot)
    out = _opaque_alloca(b, at)
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(ir.Constant(I64, 0), entry)
    zero = ir.Constant(I64, 0)
    xs = [b.load(b.gep(p, [zero, i], inbounds=True, source_etype=at), typ=ty) for p in ins]
    b.store(b.call(body, xs), b.gep(out, [zero, i], inbounds=True, source_etype=at))
    nxt = b.add(i, ir.Constant(I64, 1), flags=("nuw", "nsw"))
    i.add_incoming(nxt, loop)
    br = b.cbranch(b.icmp_unsigned("<", nxt, ir.Constant(I64, n)), loop, done)
    br.set_metadata("llvm.loop", _vectorize_loop_md(module, n))
    b.position_at_end(done)
    b.ret(b.load(out, typ=vt))


def _opaque_alloca(b, ty):
    a = b.alloca(ty)
    a.align = 64                   # whole vectors are stored here: their alignment
    a.type = ir.PointerType()      # an opaque pointer, as every pointer in these modules
    return a


def _scalar_loop_md(module):
    """A loop ID asking for neither unrolling nor vectorisation."""
    off = module.add_metadata([ir.MetaDataString(module, "llvm.loop.vectorize.enable"),
                               ir.Constant(I1, 0)])
    nounroll = module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.disable")])
    uses = module.__dict__.setdefault("_ft_loop_ids", [])
    md = module.add_metadata([ir.MetaDataString(module, f"ft.loop.{len(uses)}")])
    uses.append(md)
    md.operands = (md, off, nounroll)
    return md


def _vectorize_loop_md(module, width):
    """A loop ID (self-referential, as LLVM requires) asking for vectorisation at
    ``width`` and no unrolling."""
    enable = module.add_metadata([ir.MetaDataString(module, "llvm.loop.vectorize.enable"),
                                  ir.Constant(I1, 1)])
    wmd = module.add_metadata([ir.MetaDataString(module, "llvm.loop.vectorize.width"),
                               ir.Constant(I32, width)])
    # no unrolling: the full unroller runs before the vectoriser and would turn the lanes
    # into straight scalar code
    nounroll = module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.disable")])
    uses = module.__dict__.setdefault("_ft_loop_ids", [])
    md = module.add_metadata([ir.MetaDataString(module, f"ft.loop.{len(uses)}")])
    uses.append(md)
    md.operands = (md, enable, wmd, nounroll)   # after caching: the key stays unique
    return md


# --------------------------------------------------------------------------- libm for rare lanes

_LIBM = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
_REGISTERED: set = set()


def libm_symbol(cname):
    """Our own symbol for libm's ``cname``, registered with LLVM's JIT resolver.

    Under its own name LLVM would recognise e.g. ``sin`` as a library function and may
    turn it into a speculatable intrinsic, hoisting it out of the rarely taken branch
    it sits in; an unknown name stays a plain (predicated) call.
    """
    sym = "ft_libm_" + cname
    if sym not in _REGISTERED:
        llvm.add_symbol(sym, ctypes.cast(getattr(_LIBM, cname), ctypes.c_void_p).value)
        _REGISTERED.add(sym)
    return sym


# the widths the loop vectoriser picks for float64 / float32 kernels on x86 (128- to
# 512-bit vectors); offering more variants only gave LLVM more unused code to optimise
# and emit (a kernel with one sine compiled 2x slower with all of 2..16 lanes, masked
# and unmasked, at the same run time)
_LIBM_LANES = {"f64": (4, 8), "f32": (8, 16)}


@functools.lru_cache(maxsize=None)
def _host_has_avx512():
    """Whether llvm.ldexp vectorises (to vscalef); elsewhere it becomes libm calls."""
    engine.triple()                                   # initialises LLVM
    return bool(llvm.get_host_cpu_features().get("avx512f", False))


def libm_decl(module, cname, ty, nargs):
    """The declaration of libm's ``cname`` (under ``libm_symbol``), with vector variants.

    The loop vectoriser refuses loops holding calls it cannot widen, so the declaration
    names vector variants (``vector-function-abi-variant``) for the widths of
    ``_LIBM_LANES``; each calls the scalar routine for its active lanes only and returns
    at once when none is active, which is the common case of a rare branch. They are
    masked variants only: the calls sit in predicated branches, and LLVM calls a masked
    variant with an all-true mask where a call is not predicated.
    """
    sym = libm_symbol(cname)
    fn = module.globals.get(sym)
    if fn is not None:
        return fn
    fn = ir.Function(module, ir.FunctionType(ty, [ty] * nargs), sym)
    fn.attributes.add("nounwind")
    fn.attributes.add("readnone")
    params = "v" * nargs
    variants = []
    for n in _LIBM_LANES["f64" if ty == F64 else "f32"]:
        vname = f"ft_v{cname}_m{n}"
        _vector_variant(module, fn, vname, ty, nargs, n)
        variants.append(f"_ZGV_LLVM_M{n}{params}_{sym}({vname})")
    # llvmlite knows no string attributes: add the raw text to the attribute set
    set.add(fn.attributes, f'"vector-function-abi-variant"="{",".join(variants)}"')
    return fn


def _lanes_loop(module, slow, scalar, ty, nargs, n):
    """``slow``'s body: a loop over the n lanes calling ``scalar`` on the active ones.
    A loop (kept rolled and scalar) rather than n unrolled lanes: the same work at run
    time on this cold path, a constant amount of code for the compiler."""
    # the mask goes through memory as bytes: an <n x i1> vector is stored bit-packed
    vt, at, mt_arr = ir.VectorType(ty, n), ir.ArrayType(ty, n), ir.ArrayType(I8, n)
    entry = slow.append_basic_block("entry")
    loop = slow.append_basic_block("lane")
    call = slow.append_basic_block("call")
    step = slow.append_basic_block("step")
    done = slow.append_basic_block("done")
    b = ir.IRBuilder(entry)
    ins = []
    for x in slow.args[:nargs]:
        p = _opaque_alloca(b, at)
        b.store(x, p)
        ins.append(p)
    out, mask = _opaque_alloca(b, at), _opaque_alloca(b, mt_arr)
    b.store(slow.args[0], out)
    b.store(b.zext(slow.args[nargs], ir.VectorType(I8, n)), mask)
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(ir.Constant(I64, 0), entry)
    zero = ir.Constant(I64, 0)
    active = b.icmp_unsigned("!=", b.load(b.gep(mask, [zero, i], inbounds=True,
                                                 source_etype=mt_arr), typ=I8),
                             ir.Constant(I8, 0))
    b.cbranch(active, call, step)
    b.position_at_end(call)
    xs = [b.load(b.gep(p, [zero, i], inbounds=True, source_etype=at), typ=ty) for p in ins]
    b.store(b.call(scalar, xs), b.gep(out, [zero, i], inbounds=True, source_etype=at))
    b.branch(step)
    b.position_at_end(step)
    nxt = b.add(i, ir.Constant(I64, 1), flags=("nuw", "nsw"))
    i.add_incoming(nxt, step)
    br = b.cbranch(b.icmp_unsigned("<", nxt, ir.Constant(I64, n)), loop, done)
    br.set_metadata("llvm.loop", _scalar_loop_md(module))
    b.position_at_end(done)
    b.ret(b.load(out, typ=vt))


def _vector_variant(module, scalar, name, ty, nargs, n):
    """``name(<n x ty> x..., <n x i1> mask)``: libm on the active lanes.

    The entry only tests whether any lane is active (``alwaysinline``, so that an
    inliner run after vectorisation puts the test into the loop); the lanes loop lives
    in a ``noinline cold`` function, which keeps register spills off the hot path."""
    vt, mt = ir.VectorType(ty, n), ir.VectorType(I1, n)
    argtys = [vt] * nargs + [mt]
    slow = ir.Function(module, ir.FunctionType(vt, argtys), name + "_lanes")
    slow.linkage = "internal"
    for a in ("noinline", "cold", "nounwind"):
        slow.attributes.add(a)
    _lanes_loop(module, slow, scalar, ty, nargs, n)

    fn = ir.Function(module, ir.FunctionType(vt, argtys), name)
    fn.attributes.add("nounwind")
    fn.attributes.add("alwaysinline")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    xs = list(fn.args[:nargs])
    work = fn.append_basic_block("work")
    idle = fn.append_basic_block("idle")
    mask = fn.args[nargs]
    anyb = b.icmp_unsigned("!=", b.bitcast(mask, ir.IntType(n)), ir.Constant(ir.IntType(n), 0))
    b.cbranch(anyb, work, idle)
    b.position_at_end(idle)
    b.ret(xs[0])
    b.position_at_end(work)
    b.ret(b.call(slow, xs + [mask]))


# --------------------------------------------------------------------------- emission helpers

class VM:
    """Emission helpers bound to one IRBuilder and one float type (double or float)."""

    def __init__(self, module, b, ty):
        self.m, self.b, self.t = module, b, ty
        self.f64 = ty == F64
        self.it = I64 if self.f64 else I32
        self.mant = 52 if self.f64 else 23
        self.bias = 1023 if self.f64 else 127
        self.sfx = "f64" if self.f64 else "f32"

    # constants
    def c(self, v):
        return ir.Constant(self.t, float(v) if self.f64 else float(np.float32(v)))

    def i(self, v):
        return ir.Constant(self.it, int(v))

    def pick(self, v64, v32):
        """A constant: v64 for double, v32 for float."""
        return self.c(v64 if self.f64 else v32)

    # calls
    def intr(self, name, *args):
        fname = f"llvm.{name}.{self.sfx}"
        fn = self.m.globals.get(fname)
        if fn is None:
            fn = ir.Function(self.m, ir.FunctionType(self.t, [self.t] * len(args)), fname)
        return self.b.call(fn, list(args))

    def call(self, name, *args):
        return call(self.m, self.b, name, *args)

    def libm(self, cname, *args):
        """A scalar libm call (only ever on rarely taken branches; see ``libm_decl``)."""
        return self.b.call(libm_decl(self.m, cname if self.f64 else cname + "f", self.t,
                                     len(args)), list(args))

    def rare(self, cond, fast, slow):
        """``slow()`` where cond (expected false) holds, else the value ``fast``."""
        before = self.b.block
        with self.b.if_then(cond, likely=False):
            s = slow()
            slow_end = self.b.block
        phi = self.b.phi(self.t)
        phi.add_incoming(s, slow_end)
        phi.add_incoming(fast, before)
        return phi

    # arithmetic
    def add(self, a, b):
        return self.b.fadd(a, b)

    def sub(self, a, b):
        return self.b.fsub(a, b)

    def mul(self, a, b):
        return self.b.fmul(a, b)

    def div(self, a, b):
        return self.b.fdiv(a, b)

    def neg(self, a):
        return self.b.fneg(a)

    def fma(self, a, b, c):
        """a*b + c, fused where the CPU can (accuracy does not depend on it)."""
        return self.intr("fmuladd", a, b, c)

    def fma_exact(self, a, b, c):
        """a*b + c rounded once (the fma instruction; a libm call on CPUs without it)."""
        return self.intr("fma", a, b, c)

    def poly(self, x, coeffs):
        """coeffs[0] + x*coeffs[1] + ... by Horner's rule."""
        acc = self.c(coeffs[-1])
        for k in reversed(coeffs[:-1]):
            acc = self.fma(acc, x, self.c(k))
        return acc

    def abs(self, x):
        return self.intr("fabs", x)

    def copysign(self, mag, sgn):
        return self.intr("copysign", mag, sgn)

    def rint(self, x):
        return self.intr("rint", x)

    def sqrt(self, x):
        return self.intr("sqrt", x)

    def two_sum(self, a, b):
        """(s, e) with s = fl(a + b) and s + e = a + b exactly."""
        s = self.add(a, b)
        bb = self.sub(s, a)
        e = self.add(self.sub(a, self.sub(s, bb)), self.sub(b, bb))
        return s, e

    # comparisons and selects (ordered: false on nan)
    def lt(self, a, b):
        return self.b.fcmp_ordered("<", a, b)

    def le(self, a, b):
        return self.b.fcmp_ordered("<=", a, b)

    def gt(self, a, b):
        return self.b.fcmp_ordered(">", a, b)

    def ge(self, a, b):
        return self.b.fcmp_ordered(">=", a, b)

    def eq(self, a, b):
        return self.b.fcmp_ordered("==", a, b)

    def isnan(self, a):
        return self.b.fcmp_unordered("uno", a, a)

    def sel(self, cond, a, b):
        return self.b.select(cond, a, b)

    def clamp(self, x, lo, hi):
        x = self.sel(self.gt(x, self.c(hi)), self.c(hi), x)
        return self.sel(self.lt(x, self.c(lo)), self.c(lo), x)

    # bits
    def bits(self, x):
        return self.b.bitcast(x, self.it)

    def flt(self, i):
        return self.b.bitcast(i, self.t)

    def toint(self, x):
        """fptosi of an integral value known to be in range (never nan)."""
        return self.b.fptosi(x, self.it)

    def signbit(self, x):
        return self.b.icmp_signed("<", self.bits(x), self.i(0))

    def pow2i(self, n):
        """2.0**n for an integer n in the normal exponent range."""
        return self.flt(self.b.shl(self.b.add(n, self.i(self.bias)), self.i(self.mant)))

    def scale2(self, p, n):
        """p * 2**n for n up to twice the exponent range (subnormal and overflowing
        results round once): one vscalef on AVX-512, else two exact steps."""
        if _host_has_avx512():
            name = f"llvm.ldexp.{self.sfx}.i32"
            fn = self.m.globals.get(name)
            if fn is None:
                fn = ir.Function(self.m, ir.FunctionType(self.t, [self.t, I32]), name)
            return self.b.call(fn, [p, n if n.type == I32 else self.b.trunc(n, I32)])
        n1 = self.b.ashr(n, self.i(1))
        return self.mul(self.mul(p, self.pow2i(n1)), self.pow2i(self.b.sub(n, n1)))


# --------------------------------------------------------------------------- the library
# Small kernels spend far more time in LLVM optimising an inlined routine than running
# it: a kernel over at most LIBRARY_MAX_ELEMENTS elements calls the routine from a module
# compiled once per process (and kept in the disk cache), so its own module stays tiny
# (a sine kernel: ~12 ms to compile instead of ~65). Inlined, LLVM shares work between
# the routines of one loop body (sin and cos share their range reduction), which calls
# cannot: measured on 1,000 elements, sin+cos runs in 11.2 us instead of 9.0 (one
# routine, or exp with tanh: the same time); at 4,000 elements the gap grows to 1.5x,
# hence the small bound. Larger kernels inline as before.

LIBRARY_MAX_ELEMENTS = 1024    # kernels over at most this many elements call the library
_LIBRARY: dict = {}            # (name, dtype) -> the loaded module, kept for the process


def _library_name(name, ty):
    return f"ft_lib_{name}_{'f64' if ty == F64 else 'f32'}"


def _library_module(name, ty) -> str:
    """The IR of routine ``name``'s library: the scalar function and its vector
    variants (``_lane_loop`` at the widths of ``_SHARED_LANES``), all external."""
    sfx = "f64" if ty == F64 else "f32"
    mod = ir.Module(name=f"ft_library_{name}_{sfx}")
    mod.triple, mod.data_layout = engine.triple(), engine.data_layout()
    nargs, _ = BODIES[name]
    body = function(mod, name, ty)
    scalar = ir.Function(mod, ir.FunctionType(ty, [ty] * nargs), _library_name(name, ty))
    for a in ("noinline", "nounwind"):
        scalar.attributes.add(a)
    b = ir.IRBuilder(scalar.append_basic_block("entry"))
    b.ret(b.call(body, list(scalar.args)))
    for n in _SHARED_LANES[sfx]:
        _lane_loop(mod, body, f"{_library_name(name, ty)}_v{n}", ty, nargs, n)
    return str(mod)


def _load_library(name, ty):
    """Compile (or read from the disk cache) and load routine ``name``'s library once
    per process, and give its symbols to LLVM's resolver for the kernels that call it."""
    key = (name, str(ty))
    if key not in _LIBRARY:
        with engine.LOCK:
            if key not in _LIBRARY:
                loaded, _ = cache.load(_library_module(name, ty))
                base = _library_name(name, ty)
                sfx = "f64" if ty == F64 else "f32"
                for sym in [base] + [f"{base}_v{n}" for n in _SHARED_LANES[sfx]]:
                    llvm.add_symbol(sym, loaded.address(sym))
                _LIBRARY[key] = loaded
    return _LIBRARY[key]


def library_function(module, name, ty):
    """The declaration of routine ``name``'s library function in ``module``, with its
    vector variants (``vector-function-abi-variant``), for the loop vectoriser to call.
    The variants are the library's own symbols. A declaration nothing calls yet would
    be deleted before the vectoriser runs: ``split`` lists the variants each module
    text declares in ``@llvm.compiler.used`` (no code; a one-line caller per variant
    cost ~0.3 ms of LLVM time each)."""
    _load_library(name, ty)
    base = _library_name(name, ty)
    fn = module.globals.get(base)
    if fn is not None:
        return fn
    nargs, _ = BODIES[name]
    sfx = "f64" if ty == F64 else "f32"
    fn = ir.Function(module, ir.FunctionType(ty, [ty] * nargs), base)
    for a in ("nounwind", "readnone"):
        fn.attributes.add(a)
    variants = []
    for n in _SHARED_LANES[sfx]:
        vt = ir.VectorType(ty, n)
        target = ir.Function(module, ir.FunctionType(vt, [vt] * nargs), f"{base}_v{n}")
        for a in ("nounwind", "readnone"):
            target.attributes.add(a)
        variants.append(f"_ZGV_LLVM_N{n}{'v' * nargs}_{base}({base}_v{n})")
    set.add(fn.attributes, f'"vector-function-abi-variant"="{",".join(variants)}"')
    return fn
