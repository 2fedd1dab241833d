"""Vectorisable math in LLVM IR: branch-free exp/log-family routines written with
arithmetic, bit manipulation and selects (Cody–Waite range reduction + polynomials),
emitted as ``alwaysinline`` internal functions so that they inline into kernel loops
and the loop vectoriser turns them into SIMD code (a scalar libm call would not be).

Every routine exists for float64 and natively for float32 (own reductions and
polynomials; no widening to double), follows numpy's special values (±0 with its sign
where numpy keeps it, subnormals, ±inf, nan, the overflow/underflow thresholds) and is
within a few ulp of numpy (tests/test_llvm_math.py measures the ulp distances).

This module holds the emission helpers (``VM``), the registry of routines (``BODIES``,
filled by ``register``) and the exp/log family; ``vmath_trig`` (sin, cos, tan, atan,
atan2, asin, acos) and ``vmath_hyp`` (tanh, logistic, sinh, cosh, asinh, acosh, atanh,
pow, erf) register the rest. Use ``call(module, builder, name, *args)``.

The polynomial coefficients are near-minimax fits (relative error, mpmath, Lawson
iteration on Chebyshev nodes) of the tail functions named next to each table.

>>> import llvmlite.ir as ir
>>> m = ir.Module()
>>> function(m, "exp", ir.DoubleType()).name
'ft_exp_f64'
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math

import llvmlite.ir as ir
import numpy as np

from .lltypes import F64, I1, I32, I64

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


def call(module, builder, name, *args):
    """Emit a call of routine ``name`` (inlined by the optimiser) on LLVM float values."""
    return builder.call(function(module, name, args[0].type), list(args))


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
        import llvmlite.binding as llvm
        llvm.add_symbol(sym, ctypes.cast(getattr(_LIBM, cname), ctypes.c_void_p).value)
        _REGISTERED.add(sym)
    return sym


_VFS = (2, 4, 8, 16)


@functools.lru_cache(maxsize=None)
def _host_has_avx512():
    """Whether llvm.ldexp vectorises (to vscalef); elsewhere it becomes libm calls."""
    import llvmlite.binding as llvm
    from . import engine
    engine.triple()                                   # initialises LLVM
    return bool(llvm.get_host_cpu_features().get("avx512f", False))


def libm_decl(module, cname, ty, nargs):
    """The declaration of libm's ``cname`` (under ``libm_symbol``), with vector variants.

    The loop vectoriser refuses loops holding calls it cannot widen, so the declaration
    names vector variants (``vector-function-abi-variant``), masked and unmasked, for
    2..16 lanes; each calls the scalar routine for its active lanes only and returns
    at once when none is active, which is the common case of a rare branch.
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
    for n in _VFS:
        for masked in (True, False):
            vname = f"ft_v{cname}_{'m' if masked else 'n'}{n}"
            _vector_variant(module, fn, vname, ty, nargs, n, masked)
            variants.append(f"_ZGV_LLVM_{'M' if masked else 'N'}{n}{params}_{sym}({vname})")
    # llvmlite knows no string attributes: add the raw text to the attribute set
    set.add(fn.attributes, f'"vector-function-abi-variant"="{",".join(variants)}"')
    return fn


def _vector_variant(module, scalar, name, ty, nargs, n, masked):
    """``name(<n x ty> x..., [<n x i1> mask])``: libm on the (active) lanes.

    The entry only tests whether any lane is active (``alwaysinline``, so that an
    inliner run after vectorisation puts the test into the loop); the lanes loop lives
    in a ``noinline cold`` function, which keeps register spills off the hot path."""
    vt, mt = ir.VectorType(ty, n), ir.VectorType(I1, n)
    argtys = [vt] * nargs + [mt]
    slow = ir.Function(module, ir.FunctionType(vt, argtys), name + "_lanes")
    slow.linkage = "internal"
    for a in ("noinline", "cold", "nounwind"):
        slow.attributes.add(a)
    b = ir.IRBuilder(slow.append_basic_block("entry"))
    xs, mask, acc = slow.args[:nargs], slow.args[nargs], slow.args[0]
    for k in range(n):
        lane = ir.Constant(I32, k)
        before = b.block
        with b.if_then(b.extract_element(mask, lane)):
            r = b.call(scalar, [b.extract_element(x, lane) for x in xs])
            new = b.insert_element(acc, r, lane)
            end = b.block
        phi = b.phi(vt)
        phi.add_incoming(new, end)
        phi.add_incoming(acc, before)
        acc = phi
    b.ret(acc)

    fn = ir.Function(module, ir.FunctionType(vt, argtys[:nargs] + ([mt] if masked else [])),
                     name)
    fn.attributes.add("nounwind")
    fn.attributes.add("alwaysinline")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    xs = list(fn.args[:nargs])
    if not masked:
        b.ret(b.call(slow, xs + [ir.Constant(mt, [1] * n)]))
        return
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


# --------------------------------------------------------------------------- exp family

_LOG2E = 1.4426950408889634
# ln 2 split so that n*hi is exact for the n that occur: (hi, lo) per precision
_LN2_F64 = (6.93147180369123816490e-01, 1.90821492927058770002e-10)     # hi: 32 zero bits
_LN2_F32 = (0.693145751953125, 1.428606765330187e-06)                    # hi: 9 zero bits
_LN2 = math.log(2.0)

# (e**r - 1 - r) / r**2 on |r| <= ln2/2
_EXP_F64 = (0.5000000000000001, 0.16666666666666644, 0.04166666666662435,
            0.008333333333356086, 0.0013888888917118333, 0.00019841269784989148,
            2.480152142687249e-05, 2.7557355170433873e-06, 2.7620032351443287e-07,
            2.506828528370243e-08)
_EXP_F32 = (0.5, 0.16666577756404877, 0.04166685417294502, 0.008363140746951103,
            0.0013901268830522895)


def ln2(v):
    return _LN2_F64 if v.f64 else _LN2_F32


def expm1_poly(v, r):
    """e**r - 1 for |r| <= ln2/2 (relative accuracy, r + r*r*P(r))."""
    p = v.poly(r, _EXP_F64 if v.f64 else _EXP_F32)
    return v.fma(v.mul(r, r), p, r)


def exp_reduce(v, x):
    """(n as float, r) with x = n*ln2 + r, |r| <= ~ln2/2, for clamped finite x."""
    hi, lo = ln2(v)
    nf = v.rint(v.mul(x, v.c(_LOG2E)))
    r = v.sub(x, v.mul(nf, v.c(hi)))
    return nf, v.sub(r, v.mul(nf, v.c(lo)))


@register("exp")
def _exp(v, x):
    isnan = v.isnan(x)
    # clamped so that n stays small (results still over/underflow exactly); a nan
    # lane computes garbage (even poison through fptosi) that the last select drops
    xc = v.clamp(x, *((-746.0, 710.0) if v.f64 else (-104.0, 89.0)))
    nf, r = exp_reduce(v, xc)
    p = v.add(v.c(1.0), expm1_poly(v, r))
    return v.sel(isnan, x, v.scale2(p, v.toint(nf)))


@register("exp2")
def _exp2(v, x):
    isnan = v.isnan(x)
    xc = v.clamp(x, *((-1080.0, 1025.0) if v.f64 else (-152.0, 129.0)))
    xc = v.sel(isnan, v.c(0.0), xc)
    nf = v.rint(xc)
    r = v.mul(v.sub(xc, nf), v.c(_LN2))          # x - n is exact
    p = v.add(v.c(1.0), expm1_poly(v, r))
    return v.sel(isnan, x, v.scale2(p, v.toint(nf)))


@register("expm1")
def _expm1(v, x):
    # expm1(x) = 2**n (expm1(r) + 1) - 1 = (expm1(r) + (1 - 2**-n)) * 2**n
    xc = v.clamp(x, *((-40.0, 710.0) if v.f64 else (-20.0, 89.0)))
    xc = v.sel(v.isnan(x), v.c(0.0), xc)
    hi, lo = ln2(v)
    nf = v.rint(v.mul(xc, v.c(_LOG2E)))
    rh = v.sub(xc, v.mul(nf, v.c(hi)))           # exact
    nlo = v.mul(nf, v.c(lo))
    r = v.sub(rh, nlo)
    corr = v.sub(v.sub(rh, r), nlo)              # what rounding r lost
    em = expm1_poly(v, r)
    em = v.fma(corr, v.add(em, v.c(1.0)), em)
    n = v.toint(nf)
    # 1 - 2**-n; for n beyond the precision it is 1 (and 2**-n would leave the range)
    big = v.b.icmp_signed(">", n, v.i(v.mant + 3))
    t = v.pow2i(v.b.sub(v.i(0), v.b.select(big, v.i(0), n)))
    t = v.sel(big, v.c(0.0), t)
    u = v.add(em, v.sub(v.c(1.0), t))
    res = v.scale2(u, n)
    res = v.sel(v.eq(x, v.c(0.0)), x, res)      # -0 stays -0
    return v.sel(v.isnan(x), x, res)


# --------------------------------------------------------------------------- log family

# (atanh(s)/s - 1) / s**2 in z = s**2, s = f/(2+f) for 1+f in [sqrt(2)/2, sqrt(2)]
_LOG_F64 = (0.3333333333333335, 0.19999999999949591, 0.14285714313051578,
            0.11111105558131867, 0.09091445170338151, 0.07665842433703852,
            0.0730843296719908)
_LOG_F32 = (0.33333343267440796, 0.19994382560253143, 0.1479024440050125)


def log_parts(v, x, subnormals=True):
    """(e, g) with log(x) = e*ln2 + g, e an integer (as float), |g| <= ~ln2/2, for
    positive finite x (garbage elsewhere: the caller selects the special values)."""
    if subnormals:
        tiny = v.lt(x, v.pick(2.2250738585072014e-308, 1.1754943508222875e-38))
        k = 54 if v.f64 else 24
        x = v.sel(tiny, v.mul(x, v.c(2.0 ** k)), x)
    bits = v.bits(x)
    e = v.b.sub(v.b.lshr(bits, v.i(v.mant)), v.i(v.bias))
    if subnormals:
        e = v.b.select(tiny, v.b.sub(e, v.i(k)), e)
    m = v.flt(v.b.or_(v.b.and_(bits, v.i((1 << v.mant) - 1)), v.i(v.bias << v.mant)))
    big = v.gt(m, v.c(math.sqrt(2.0)))
    m = v.sel(big, v.mul(m, v.c(0.5)), m)        # in [sqrt(2)/2, sqrt(2)]
    e = v.b.select(big, v.b.add(e, v.i(1)), e)
    f = v.sub(m, v.c(1.0))                       # exact
    s = v.div(f, v.add(v.c(2.0), f))
    z = v.mul(s, s)
    t = v.mul(z, v.poly(z, _LOG_F64 if v.f64 else _LOG_F32))
    # log(1+f) = 2 atanh(s) = f - s*f + 2*s*t = f - s*(f - 2t)
    g = v.sub(f, v.mul(s, v.sub(f, v.mul(v.c(2.0), t))))
    return v.b.sitofp(e, v.t), g


def log_specials(v, x, res):
    """numpy's log at the special points: x < 0 -> nan, 0 -> -inf, inf -> inf, nan."""
    res = v.sel(v.eq(x, v.c(math.inf)), x, res)
    res = v.sel(v.eq(x, v.c(0.0)), v.c(-math.inf), res)
    res = v.sel(v.lt(x, v.c(0.0)), v.c(math.nan), res)
    return v.sel(v.isnan(x), x, res)


@register("log")
def _log(v, x):
    e, g = log_parts(v, x)
    hi, lo = ln2(v)
    return log_specials(v, x, v.add(v.mul(e, v.c(hi)), v.add(g, v.mul(e, v.c(lo)))))


_LOG2E_HI_LO = (1.4426950408889634, 2.0355273740931033e-17)
_LOG10E = 0.4342944819032518
_LOG10_2 = math.log10(2.0)


@register("log2")
def _log2(v, x):
    e, g = log_parts(v, x)
    if v.f64:
        hi, lo = _LOG2E_HI_LO
        t = v.fma(g, v.c(hi), v.mul(g, v.c(lo)))
    else:
        t = v.mul(g, v.c(_LOG2E))
    return log_specials(v, x, v.add(e, t))


@register("log10")
def _log10(v, x):
    e, g = log_parts(v, x)
    # e*log10(2): hi part with trailing zeros so that the product is exact
    hi = float(np.float32(_LOG10_2)) if v.f64 else float(np.float32(np.float16(_LOG10_2)))
    lo = _LOG10_2 - hi
    rest = v.fma(g, v.c(_LOG10E), v.mul(e, v.c(lo)))
    return log_specials(v, x, v.add(v.mul(e, v.c(hi)), rest))


@register("log1p")
def _log1p(v, x):
    u = v.add(v.c(1.0), x)
    e, g = log_parts(v, u, subnormals=False)
    # u = 1 + x rounded; c = (1 + x) - u exactly, log1p(x) = log(u) + c/u
    two = v.ge(u, v.c(2.0))
    c = v.sel(two, v.sub(v.c(1.0), v.sub(u, x)), v.sub(x, v.sub(u, v.c(1.0))))
    hi, lo = ln2(v)
    res = v.add(v.mul(e, v.c(hi)), v.add(g, v.fma(e, v.c(lo), v.div(c, u))))
    res = v.sel(v.lt(v.abs(x), v.pick(2.0 ** -54, 2.0 ** -25)), x, res)   # keeps -0
    res = v.sel(v.eq(x, v.c(math.inf)), x, res)
    res = v.sel(v.eq(x, v.c(-1.0)), v.c(-math.inf), res)
    res = v.sel(v.lt(x, v.c(-1.0)), v.c(math.nan), res)
    return v.sel(v.isnan(x), x, res)


from . import vmath_hyp, vmath_trig  # noqa: E402,F401  (they register their routines)
