"""Vectorisable trigonometry in LLVM IR (see ``vmath``): sin, cos, tan, atan, atan2,
asin, acos for float64 and float32.

sin/cos/tan reduce x = n*pi/2 + r with a Cody–Waite scheme: float64 subtracts pi/2 in
three 33-bit parts (each n*part exact for |n| < 2**20) with error-free sums, keeping r
as a double-double; float32 uses three float parts with fused multiply-adds (as numpy's
own float32 SIMD code). Lanes beyond the range where that is exact (|x| > 2**19 for
float64, 71476 for float32; also inf and nan) take a rarely taken branch to the libm
routine, which reduces exactly (Payne–Hanek); the loop vectoriser predicates it, so
the common lanes stay SIMD.

>>> import llvmlite.ir as ir
>>> from backends.llvm import vmath
>>> vmath.function(ir.Module(), "sin", ir.FloatType()).name
'ft_sin_f32'
"""
from __future__ import annotations

import math

from .vmath import I1, VM, register

# pi/2 in 33-bit parts (float64) / float parts (float32)
_PIO2_F64 = (1.5707963267341256, 6.077100506303966e-11, 2.0222662487111665e-21,
             8.4784276603689e-32)
_PIO2_F32 = (1.5707963705062866, -4.371138828673793e-08, -1.7151245100058819e-15)
_2OPI = 0.6366197723675814
_BIG = {True: 2.0 ** 19 * 1.5, False: 71476.0625}    # |x| above: the libm lane

# (sin(r) - r) / r**3 and (cos(r) - 1 + r**2/2) / r**4 in z = r**2, |r| <= pi/4
_SIN_F64 = (-0.16666666666666666, 0.008333333333330924, -0.00019841269836727563,
            2.7557316088502966e-06, -2.5051129244861375e-08, 1.591796082091353e-10)
_SIN_F32 = (-0.166666641831398, 0.008332745172083378, -0.00019587359565775841)
_COS_F64 = (0.041666666666666664, -0.0013888888888887387, 2.4801587298753095e-05,
            -2.755731726602377e-07, 2.0876145212072782e-09, -1.1382563965656381e-11)
_COS_F32 = (0.0416666641831398, -0.0013888301327824593, 2.4547607608838007e-05)


def _reduce(v: VM, x):
    """(hi, lo, q): x = (4k + q)*pi/2 + hi + lo, |hi + lo| <= ~pi/4 (lo = 0 for float)."""
    nf = v.rint(v.mul(x, v.c(_2OPI)))
    if v.f64:
        p1, p2, p3, p4 = _PIO2_F64
        r = v.sub(x, v.mul(nf, v.c(p1)))                     # exact
        y1, e1 = v.two_sum(r, v.neg(v.mul(nf, v.c(p2))))     # n*p2, n*p3 exact
        y2, e2 = v.two_sum(y1, v.neg(v.mul(nf, v.c(p3))))
        lo = v.sub(v.add(e1, e2), v.mul(nf, v.c(p4)))
        hi = v.add(y2, lo)
        lo = v.add(v.sub(y2, hi), lo)
    else:
        r = x
        for p in _PIO2_F32:
            r = v.fma_exact(v.neg(nf), v.c(p), r)
        hi, lo = r, v.c(0.0)
    q = v.b.and_(v.toint(nf), v.i(3))
    return hi, lo, q


def _kernels(v: VM, hi, lo):
    """(sin(hi + lo), cos(hi + lo)) for |hi + lo| <= ~pi/4."""
    z = v.mul(hi, hi)
    sp = v.poly(z, _SIN_F64 if v.f64 else _SIN_F32)
    cp = v.poly(z, _COS_F64 if v.f64 else _COS_F32)
    hz = v.mul(z, v.c(0.5))
    w = v.sub(v.c(1.0), hz)
    if v.f64:
        # sin: hi + (hi*z*S + lo*(1 - z/2)); cos: 1 - z/2 + z*z*C - hi*lo, with the
        # rounding of 1 - z/2 put back
        s = v.add(hi, v.fma(v.mul(hi, z), sp, v.mul(lo, w)))
        tail = v.sub(v.mul(v.mul(z, z), cp), v.mul(hi, lo))
        c = v.add(w, v.add(v.sub(v.sub(v.c(1.0), w), hz), tail))
    else:
        s = v.fma(v.mul(hi, z), sp, hi)
        c = v.add(w, v.fma(v.mul(z, z), cp, v.sub(v.sub(v.c(1.0), w), hz)))
    return s, c


def _sincos(v: VM, x, which):
    big = v.b.not_(v.le(v.abs(x), v.c(_BIG[v.f64])))        # also inf and nan
    xs = v.sel(big, v.c(0.0), x)
    hi, lo, q = _reduce(v, xs)
    s, c = _kernels(v, hi, lo)
    odd = v.b.trunc(q, I1)
    if which == "tan":
        res = v.sel(odd, v.neg(v.div(c, s)), v.div(s, c))
    else:
        if which == "cos":            # cos(x) = sin(x + pi/2): one quadrant on
            q = v.b.add(q, v.i(1))
            odd = v.b.trunc(q, I1)
        res = v.sel(odd, c, s)
        flip = v.b.icmp_unsigned("!=", v.b.and_(q, v.i(2)), v.i(0))
        res = v.sel(flip, v.neg(res), res)
    if which != "cos":
        res = v.sel(v.eq(x, v.c(0.0)), x, res)                 # sin(-0) = -0
    return v.rare(big, res, lambda: v.libm(which, x))


@register("sin")
def _sin(v, x):
    return _sincos(v, x, "sin")


@register("cos")
def _cos(v, x):
    return _sincos(v, x, "cos")


@register("tan")
def _tan(v, x):
    return _sincos(v, x, "tan")


# --------------------------------------------------------------------------- inverse functions

# (atan(t) - t) / t**3 in z = t**2, |t| <= tan(pi/8)
_ATAN_F64 = (-0.3333333333333333, 0.1999999999999561, -0.14285714284683662,
             0.11111111016525804, -0.09090904625967271, 0.0769218422726582,
             -0.06664525124020484, 0.058582606628650336, -0.05086001739431609,
             0.039246759065525175, -0.019194448874559362)
_ATAN_F32 = (-0.3333333134651184, 0.19999545812606812, -0.14264121651649475,
             0.10745265334844589, -0.06456373631954193)
_PI = (3.141592653589793, 1.2246467991473532e-16)
_PIO2 = (1.5707963267948966, 6.123233995736766e-17)
_PIO4 = (0.7853981633974483, 3.061616997868383e-17)


def atan_pos(v: VM, a):
    """atan(a) for a >= 0 (or nan): reduced to |t| <= tan(pi/8) around 0, pi/4, pi/2."""
    mid = v.gt(a, v.c(math.tan(math.pi / 8)))
    high = v.gt(a, v.c(math.tan(3 * math.pi / 8)))
    t = v.sel(mid, v.div(v.sub(a, v.c(1.0)), v.add(a, v.c(1.0))), a)
    t = v.sel(high, v.neg(v.div(v.c(1.0), a)), t)
    bhi = v.sel(high, v.c(_PIO2[0]), v.sel(mid, v.c(_PIO4[0]), v.c(0.0)))
    blo = v.sel(high, v.c(_PIO2[1]), v.sel(mid, v.c(_PIO4[1]), v.c(0.0)))
    z = v.mul(t, t)
    p = v.poly(z, _ATAN_F64 if v.f64 else _ATAN_F32)
    return v.add(bhi, v.add(t, v.fma(v.mul(t, z), p, blo)))


@register("atan")
def _atan(v, x):
    return v.copysign(atan_pos(v, v.abs(x)), x)


@register("atan2", nargs=2)
def _atan2(v, y, x):
    ay, ax = v.abs(y), v.abs(x)
    t = v.div(ay, ax)
    both_inf = v.b.and_(v.eq(ay, v.c(math.inf)), v.eq(ax, v.c(math.inf)))
    t = v.sel(both_inf, v.c(1.0), t)
    t = v.sel(v.b.and_(v.eq(ay, v.c(0.0)), v.eq(ax, v.c(0.0))), v.c(0.0), t)
    a = atan_pos(v, t)
    a = v.sel(v.signbit(x), v.add(v.c(_PI[0]), v.sub(v.c(_PI[1]), a)), a)
    return v.sel(v.isnan(x), x, v.copysign(a, y))


def _acos_abs(v: VM, a):
    """(asin(a), acos(a)) pieces for 0 <= a: 1 - a*a rounded once below 1/2, exact
    factors above."""
    one = v.c(1.0)
    lowhalf = v.lt(a, v.c(0.5))
    d2 = v.sel(lowhalf, v.fma(v.neg(a), a, one), v.mul(v.sub(one, a), v.add(one, a)))
    return lowhalf, d2


@register("asin")
def _asin(v, x):
    a = v.abs(x)
    _, d2 = _acos_abs(v, a)
    return v.copysign(atan_pos(v, v.div(a, v.sqrt(d2))), x)


@register("acos")
def _acos(v, x):
    a = v.abs(x)
    lowhalf, d2 = _acos_abs(v, a)
    one = v.c(1.0)
    # |x| < 1/2: pi/2 - asin(x); else 2*atan(sqrt((1-|x|)/(1+|x|))), mirrored for x < 0
    mid = v.sub(v.c(_PIO2[0]), v.sub(v.copysign(atan_pos(v, v.div(a, v.sqrt(d2))), x),
                                     v.c(_PIO2[1])))
    ac = v.mul(v.c(2.0), atan_pos(v, v.sqrt(v.div(v.sub(one, a), v.add(one, a)))))
    ac = v.sel(v.signbit(x), v.add(v.c(_PI[0]), v.sub(v.c(_PI[1]), ac)), ac)
    return v.sel(lowhalf, mid, ac)
