"""Vectorisable math in LLVM IR: branch-free exp and log (Cody–Waite range reduction
and a polynomial), emitted as ``alwaysinline`` functions so that they inline into
kernel loops and the loop vectoriser turns them into SIMD code (a libm call would
stay scalar). float32 goes through the float64 code (widen, compute, round once).

Accuracy: within 1-2 ulp of numpy over the whole range, with numpy's special values
(±0, subnormals, ±inf, nan); see tests/test_llvm_backend.py.

>>> import llvmlite.ir as ir
>>> m = ir.Module()
>>> exp_f64(m).name
'ft_exp_f64'
"""
from __future__ import annotations

import math

import llvmlite.ir as ir

F64 = ir.DoubleType()
I64 = ir.IntType(64)
I1 = ir.IntType(1)

_LN2_HI = 6.93147180369123816490e-01   # ln 2 with 32 trailing zero bits: n*hi is exact
_LN2_LO = 1.90821492927058770002e-10
_LOG2E = 1.0 / math.log(2.0)


def _c(v):
    return ir.Constant(F64, v)


def _intrinsic(module, name, ret, args):
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, args), name)
    return fn


def _horner(b, module, x, coeffs):
    """coeffs[0] + x*(coeffs[1] + x*(...)), with fmuladd (fused where the CPU can)."""
    fma = _intrinsic(module, "llvm.fmuladd.f64", F64, [F64, F64, F64])
    acc = _c(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        acc = b.call(fma, [acc, x, _c(c)])
    return acc


def _new_fn(module, name):
    fn = module.globals.get(name)
    if fn is not None:
        return fn, None
    fn = ir.Function(module, ir.FunctionType(F64, [F64]), name)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    fn.attributes.add("nounwind")
    return fn, ir.IRBuilder(fn.append_basic_block("entry"))


def _pow2(b, n):
    """2.0**n for an i64 n in [-1022, 1023], built from the exponent bits."""
    return b.bitcast(b.shl(b.add(n, ir.Constant(I64, 1023)), ir.Constant(I64, 52)), F64)


def exp_f64(module):
    """``double ft_exp_f64(double)``: e**x, numpy's special values, ~1 ulp."""
    fn, b = _new_fn(module, "ft_exp_f64")
    if b is None:
        return fn
    x = fn.args[0]
    rint = _intrinsic(module, "llvm.rint.f64", F64, [F64])
    isnan = b.fcmp_unordered("uno", x, x)
    # clamp so that n stays small (results still over/underflow exactly); nan -> 0 here
    xc = b.select(b.fcmp_ordered(">", x, _c(710.0)), _c(710.0), x)
    xc = b.select(b.fcmp_ordered("<", xc, _c(-746.0)), _c(-746.0), xc)
    xc = b.select(isnan, _c(0.0), xc)
    nf = b.call(rint, [b.fmul(xc, _c(_LOG2E))])
    r = b.fsub(xc, b.fmul(nf, _c(_LN2_HI)))
    r = b.fsub(r, b.fmul(nf, _c(_LN2_LO)))
    # e**r on |r| <= ln2/2: Taylor series to degree 13 (truncation < 1e-17)
    p = _horner(b, module, r, [1.0 / math.factorial(k) for k in range(14)])
    n = b.fptosi(nf, I64)
    n1 = b.ashr(n, ir.Constant(I64, 1))
    n2 = b.sub(n, n1)
    res = b.fmul(b.fmul(p, _pow2(b, n1)), _pow2(b, n2))   # two steps: subnormal results
    b.ret(b.select(isnan, x, res))
    return fn


def log_f64(module):
    """``double ft_log_f64(double)``: natural log, numpy's special values, ~1 ulp."""
    fn, b = _new_fn(module, "ft_log_f64")
    if b is None:
        return fn
    x = fn.args[0]
    # subnormals: scale into the normal range first
    sub = b.fcmp_ordered("<", x, _c(2.2250738585072014e-308))
    xs = b.select(sub, b.fmul(x, _c(2.0 ** 54)), x)
    bits = b.bitcast(xs, I64)
    e = b.sub(b.lshr(bits, ir.Constant(I64, 52)), ir.Constant(I64, 1023))
    e = b.select(sub, b.sub(e, ir.Constant(I64, 54)), e)
    mbits = b.or_(b.and_(bits, ir.Constant(I64, (1 << 52) - 1)), ir.Constant(I64, 1023 << 52))
    m = b.bitcast(mbits, F64)                       # in [1, 2)
    big = b.fcmp_ordered(">", m, _c(math.sqrt(2.0)))
    m = b.select(big, b.fmul(m, _c(0.5)), m)       # in [sqrt(2)/2, sqrt(2)]
    e = b.select(big, b.add(e, ir.Constant(I64, 1)), e)
    f = b.fsub(m, _c(1.0))                          # exact (Sterbenz)
    s = b.fdiv(f, b.fadd(_c(2.0), f))
    z = b.fmul(s, s)
    # log(1+f) = 2 atanh(s) = f - s*(f - 2T), T = sum_k z**k / (2k+1), k >= 1
    t = b.fmul(z, _horner(b, module, z, [1.0 / (2 * k + 1) for k in range(1, 12)]))
    log1pf = b.fsub(f, b.fmul(s, b.fsub(f, b.fmul(_c(2.0), t))))
    ef = b.sitofp(e, F64)
    res = b.fadd(b.fmul(ef, _c(_LN2_HI)), b.fadd(log1pf, b.fmul(ef, _c(_LN2_LO))))
    # special values: x < 0 or nan -> nan (nan itself passes), 0 -> -inf, +inf -> +inf
    res = b.select(b.fcmp_ordered("==", x, _c(math.inf)), x, res)
    res = b.select(b.fcmp_ordered("==", x, _c(0.0)), _c(-math.inf), res)
    res = b.select(b.fcmp_ordered("<", x, _c(0.0)), _c(math.nan), res)
    res = b.select(b.fcmp_unordered("uno", x, x), x, res)
    b.ret(res)
    return fn
