"""Vectorisable hyperbolic functions, logistic, pow and erf in LLVM IR (see ``vmath``),
for float64 and float32, built on the exp/log family.

pow(x, y) = exp(y*log|x|) with log|x| as a double-double and y*log|x| as an exact
product, so that the result keeps full accuracy up to the overflow threshold; float32
pow goes through float64 log/exp once (as glibc's powf does), still SIMD. numpy's
(C99's) special cases are selected explicitly.

>>> import llvmlite.ir as ir
>>> from backends.llvm import vmath
>>> vmath.function(ir.Module(), "pow", ir.DoubleType()).name
'ft_pow_f64'
"""
from __future__ import annotations

import math

from .lltypes import F64
from .vmath import VM, register
from .vmath_exp import LOG2E, expm1_poly, ln2

# (tanh(x) - x) / x**3 in z = x**2, |x| <= 0.55
_TANH_F64 = (-0.3333333333333333, 0.13333333333332714, -0.053968253967434404,
             0.02186948849368338, -0.008863234398166494, 0.0035921103830219253,
             -0.0014556618625694863, 0.0005889362026396782, -0.0002346351635031766,
             8.511379281957136e-05, -2.0603198380856937e-05)
_TANH_F32 = (-0.3333333134651184, 0.13333113491535187, -0.05390944331884384,
             0.021309472620487213, -0.006610366981476545)


@register("tanh")
def _tanh(v, x):
    ax = v.abs(x)
    z = v.mul(x, x)
    small = v.fma(v.mul(x, z), v.poly(z, _TANH_F64 if v.f64 else _TANH_F32), x)
    e = v.call("exp", v.add(ax, ax))              # saturates: 2/inf = 0
    large = v.sub(v.c(1.0), v.div(v.c(2.0), v.add(e, v.c(1.0))))
    small = v.sel(v.eq(x, v.c(0.0)), x, small)               # tanh(-0) = -0
    return v.sel(v.lt(ax, v.c(0.55)), small, v.copysign(large, x))


@register("logistic")
def _logistic(v, x):
    # as numpy computes it in the interpreter: 1 / (1 + exp(-x))
    return v.div(v.c(1.0), v.add(v.c(1.0), v.call("exp", v.neg(x))))


def half_exp(v: VM, a):
    """e**a / 2 for a >= 0 (or nan), finite up to sinh/cosh's own overflow threshold."""
    isnan = v.isnan(a)
    ac = v.clamp(a, 0.0, 711.0 if v.f64 else 90.0)
    ac = v.sel(isnan, v.c(0.0), ac)
    hi, lo = ln2(v)
    nf = v.rint(v.mul(ac, v.c(LOG2E)))
    r = v.sub(v.sub(ac, v.mul(nf, v.c(hi))), v.mul(nf, v.c(lo)))
    p = v.add(v.c(1.0), expm1_poly(v, r))
    return v.sel(isnan, a, v.scale2(p, v.b.sub(v.toint(nf), v.i(1))))


@register("sinh")
def _sinh(v, x):
    ax = v.abs(x)
    em = v.call("expm1", ax)
    small = v.mul(v.c(0.5), v.add(em, v.div(em, v.add(em, v.c(1.0)))))
    h = half_exp(v, ax)
    large = v.sub(h, v.div(v.c(0.25), h))
    return v.copysign(v.sel(v.lt(ax, v.c(1.0)), small, large), x)


@register("cosh")
def _cosh(v, x):
    h = half_exp(v, v.abs(x))
    return v.add(h, v.div(v.c(0.25), h))


_LN2_FULL = math.log(2.0)


@register("asinh")
def _asinh(v, x):
    ax = v.abs(x)
    a2 = v.mul(ax, ax)
    t = v.add(ax, v.div(a2, v.add(v.c(1.0), v.sqrt(v.add(v.c(1.0), a2)))))
    mid = v.call("log1p", t)
    big = v.add(v.call("log", ax), v.c(_LN2_FULL))
    res = v.sel(v.gt(ax, v.pick(2.0 ** 28, 2.0 ** 12)), big, mid)
    return v.copysign(res, x)


@register("acosh")
def _acosh(v, x):
    t = v.sub(x, v.c(1.0))
    mid = v.call("log1p", v.add(t, v.sqrt(v.fma(t, t, v.add(t, t)))))
    big = v.add(v.call("log", x), v.c(_LN2_FULL))
    res = v.sel(v.gt(x, v.pick(2.0 ** 28, 2.0 ** 12)), big, mid)
    return v.sel(v.lt(x, v.c(1.0)), v.c(math.nan), res)


@register("atanh")
def _atanh(v, x):
    ax = v.abs(x)
    two = v.add(ax, ax)
    t = v.fma(two, v.div(ax, v.sub(v.c(1.0), ax)), two)     # 2a/(1-a), accurate for small a
    res = v.copysign(v.mul(v.c(0.5), v.call("log1p", t)), x)
    return v.sel(v.gt(ax, v.c(1.0)), v.c(math.nan), res)


# --------------------------------------------------------------------------- pow

# (atanh(s)/s - 1 - s**2/3) / s**4 in z = s**2 (s <= 0.1716), and 2/3 as hi + lo
_LOG_R2 = (0.2, 0.14285714285714685, 0.11111111110827632, 0.0909090916775599,
           0.0769229747584759, 0.06667402597914177, 0.05853112431172809, 0.05861640507619157)
_TWO_THIRDS = (0.6666666666666666, 3.700743415417188e-17)


def _log_dd(v: VM, a):
    """log(a) as a double-double (hi, lo) for positive finite float64 a (~2**-100)."""
    tiny = v.lt(a, v.c(2.2250738585072014e-308))
    a = v.sel(tiny, v.mul(a, v.c(2.0 ** 54)), a)
    bits = v.bits(a)
    ei = v.b.sub(v.b.lshr(bits, v.i(52)), v.i(1023))
    ei = v.b.select(tiny, v.b.sub(ei, v.i(54)), ei)
    m = v.flt(v.b.or_(v.b.and_(bits, v.i((1 << 52) - 1)), v.i(1023 << 52)))
    big = v.gt(m, v.c(math.sqrt(2.0)))
    m = v.sel(big, v.mul(m, v.c(0.5)), m)
    ei = v.b.select(big, v.b.add(ei, v.i(1)), ei)
    e = v.b.sitofp(ei, v.t)
    f = v.sub(m, v.c(1.0))
    dh = v.add(v.c(2.0), f)
    dl = v.sub(f, v.sub(dh, v.c(2.0)))                       # 2 + f = dh + dl exactly
    sh = v.div(f, dh)
    rem = v.sub(v.fma_exact(v.neg(sh), dh, f), v.mul(sh, dl))
    sl = v.div(rem, dh)                                      # f/(2+f) = sh + sl
    # log(1+f) = 2s + 2s**3/3 + 2s**5 R2(s**2): the cubic term as a double-double too
    zh = v.mul(sh, sh)
    zl = v.fma_exact(sh, sh, v.neg(zh))
    ch = v.mul(zh, sh)
    cl = v.add(v.fma_exact(zh, sh, v.neg(ch)), v.fma(zl, sh, v.mul(v.mul(v.c(3.0), zh), sl)))
    th = v.mul(ch, v.c(_TWO_THIRDS[0]))
    tl = v.add(v.fma_exact(ch, v.c(_TWO_THIRDS[0]), v.neg(th)),
               v.fma(ch, v.c(_TWO_THIRDS[1]), v.mul(cl, v.c(_TWO_THIRDS[0]))))
    t2 = v.mul(v.mul(v.add(sh, sh), v.mul(zh, zh)), v.poly(zh, _LOG_R2))
    hi, lo = ln2(v)
    h, l = v.two_sum(v.mul(e, v.c(hi)), v.add(sh, sh))
    h, l2 = v.two_sum(h, th)
    l = v.add(v.add(l, l2), v.add(v.add(tl, t2), v.fma(e, v.c(lo), v.add(sl, sl))))
    h2 = v.add(h, l)
    return h2, v.add(v.sub(h, h2), l)


def _pow_abs_f64(v: VM, a, y):
    """a**y for a = |x| (float64), exact at a = 0 and inf; nan handled by the caller."""
    h, l = _log_dd(v, a)
    h = v.sel(v.eq(a, v.c(0.0)), v.c(-math.inf), h)
    h = v.sel(v.eq(a, v.c(math.inf)), v.c(math.inf), h)
    th = v.mul(y, h)
    tl = v.fma(y, l, v.fma_exact(y, h, v.neg(th)))
    tl = v.sel(v.lt(v.abs(th), v.c(1000.0)), tl, v.c(0.0))   # inf/nan/huge: no low part
    tc = v.clamp(th, -1100.0, 1100.0)
    tc = v.sel(v.isnan(th), v.c(0.0), tc)
    hi, lo = ln2(v)
    nf = v.rint(v.mul(tc, v.c(LOG2E)))
    r = v.add(v.sub(v.sub(tc, v.mul(nf, v.c(hi))), v.mul(nf, v.c(lo))), tl)
    p = v.add(v.c(1.0), expm1_poly(v, r))
    return v.scale2(p, v.toint(nf))


@register("pow", nargs=2)
def _pow(v, x, y):
    a = v.abs(x)
    if v.f64:
        res = _pow_abs_f64(v, a, y)
    else:
        w = VM(v.m, v.b, F64)
        a64, y64 = v.b.fpext(a, F64), v.b.fpext(y, F64)
        res = v.b.fptrunc(w.call("exp", w.mul(y64, w.call("log", a64))), v.t)
    fy = v.intr("floor", y)
    y_int = v.eq(fy, y)
    half = v.mul(y, v.c(0.5))
    y_odd = v.b.and_(y_int, v.b.fcmp_unordered("!=", v.mul(v.intr("floor", half), v.c(2.0)), y))
    xneg = v.signbit(x)
    res = v.sel(v.b.and_(xneg, y_odd), v.neg(res), res)
    neg_finite = v.b.and_(v.lt(x, v.c(0.0)), v.gt(x, v.c(-math.inf)))
    res = v.sel(v.b.and_(neg_finite, v.b.not_(y_int)), v.c(math.nan), res)
    res = v.sel(v.b.or_(v.isnan(x), v.isnan(y)), v.c(math.nan), res)
    one = v.c(1.0)
    res = v.sel(v.b.and_(v.eq(x, v.c(-1.0)), v.eq(v.abs(y), v.c(math.inf))), one, res)
    res = v.sel(v.eq(x, one), one, res)
    return v.sel(v.eq(y, v.c(0.0)), one, res)


@register("erf")
def _erf(v, x):
    # not yet a polynomial: libm's erf/erff per lane, through the vector variants of
    # ``libm_decl`` (so the rest of a fused loop still vectorises)
    return v.libm("erf", x)
