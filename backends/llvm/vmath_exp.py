"""The exp and log families of the vectorisable math (see ``vmath``): exp, exp2, expm1,
log, log2, log10, log1p for float64 and float32, registered into ``vmath``. Their
reductions (``exp_reduce``, ``log_parts``...) are shared with ``vmath_hyp``.

>>> import llvmlite.ir as ir
>>> from backends.llvm import vmath
>>> vmath.function(ir.Module(), "log1p", ir.FloatType()).name
'ft_log1p_f32'
"""
from __future__ import annotations

import math

import numpy as np

from .vmath import register

# --------------------------------------------------------------------------- exp family

LOG2E = 1.4426950408889634
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
    """ln 2 as (hi, lo): n*hi is exact for the n the reductions produce."""
    return _LN2_F64 if v.f64 else _LN2_F32


def expm1_poly(v, r):
    """e**r - 1 for |r| <= ln2/2 (relative accuracy, r + r*r*P(r))."""
    p = v.poly(r, _EXP_F64 if v.f64 else _EXP_F32)
    return v.fma(v.mul(r, r), p, r)


def exp_reduce(v, x):
    """(n as float, r) with x = n*ln2 + r, |r| <= ~ln2/2, for clamped finite x."""
    hi, lo = ln2(v)
    nf = v.rint(v.mul(x, v.c(LOG2E)))
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
    nf = v.rint(v.mul(xc, v.c(LOG2E)))
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
        t = v.mul(g, v.c(LOG2E))
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
