"""Vectorisable hyperbolic functions, logistic, pow, erf and erfc in LLVM IR (see ``vmath``),
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
from .vmath_exp import LOG2E, exp_reduce, expm1_poly, ln2

# (tanh(x) - x) / x**3 in z = x**2, |x| <= 0.55
_TANH_F64 = (-0.3333333333333333, 0.13333333333332714, -0.053968253967434404,
             0.02186948849368338, -0.008863234398166494, 0.0035921103830219253,
             -0.0014556618625694863, 0.0005889362026396782, -0.0002346351635031766,
             8.511379281957136e-05, -2.0603198380856937e-05)
_TANH_F32 = (-0.3333333134651184, 0.13333113491535187, -0.05390944331884384,
             0.021309472620487213, -0.006610366981476545)


@register("tanh")
def _tanh(v, x):
    if not v.f64:
        return _tanh_f32(v, x)
    ax = v.abs(x)
    z = v.mul(x, x)
    small = v.fma(v.mul(x, z), v.poly(z, _TANH_F64), x)
    e = v.call("exp", v.add(ax, ax))              # saturates: 2/inf = 0
    large = v.sub(v.c(1.0), v.div(v.c(2.0), v.add(e, v.c(1.0))))
    small = v.sel(v.eq(x, v.c(0.0)), x, small)               # tanh(-0) = -0
    return v.sel(v.lt(ax, v.c(0.55)), small, v.copysign(large, x))


_SHIFTER = 12582912.0          # 1.5 * 2**23: adding it rounds a float below 2**22 to an integer


def _tanh_f32(v, x):
    """float32 tanh within 1.4 ulp (0.56 below 0.35), with ~30 vector operations instead of
    the float64 scheme's ~40 (exp's scaling and special cases): tanh(a) = (e**2a - 1) /
    (e**2a + 1) with e**2a = 2**n e**r and p = e**r - 1 is (p + 1 - 2**-n) / (p + 1 + 2**-n),
    and, once n > 3, 1 - 2**(1-n) / (p + 1 + 2**-n), whose quotient is small, so the
    result keeps its low bits near 1. No 2**n scaling (it cancels), one division."""
    ax = v.abs(x)
    a = v.sel(v.gt(ax, v.c(9.1)), v.c(9.1), ax)  # tanh(9.1) rounds to 1; nan stays nan
    a2 = v.add(a, a)
    k = v.fma(a2, v.c(LOG2E), v.c(_SHIFTER))      # n = rint(2a / ln 2) in k's low bits
    nf = v.sub(k, v.c(_SHIFTER))
    hi, lo = ln2(v)
    r = v.fma(nf, v.c(-lo), v.fma(nf, v.c(-hi), a2))       # n * hi is exact
    p = expm1_poly(v, r)
    # 2**-n as (127 - n) << 23 from k's bits (a nan lane's garbage meets a nan p)
    t = v.flt(v.b.sub(v.i(0x3F800000), v.b.shl(v.bits(k), v.i(23))))
    den = v.add(p, v.add(v.c(1.0), t))
    far = v.gt(nf, v.c(3.0))
    q = v.div(v.sel(far, v.add(t, t), v.add(p, v.sub(v.c(1.0), t))), den)
    large = v.copysign(v.sel(far, v.sub(v.c(1.0), q), q), x)
    # below 0.35 the quotient's roundings reach 2.4 ulp; the odd polynomial stays in 0.56
    z = v.mul(x, x)
    small = v.copysign(v.fma(v.mul(x, z), v.poly(z, _TANH_F32), x), x)     # tanh(-0) = -0
    return v.sel(v.lt(ax, v.c(0.35)), small, large)


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


# --------------------------------------------------------------------------- erf, erfc
# W. J. Cody, "Rational Chebyshev approximations for the error function", Math. Comp. 23
# (1969), coefficients of his CALERF (netlib specfun), lowest power first (the ones of
# functrans/scipy/_special_erf.py): erf(a) = a A(a^2)/B(a^2) for a < 0.46875 (erf: 1/2),
# erfcx(a) = exp(a^2) erfc(a) = C(a)/D(a) up to a = 4 and (1/sqrt(pi) - s P(s)/Q(s))/a,
# s = 1/a^2, beyond; erfc = erfcx exp(-a^2), erf = 1 - erfc there. Branch-free: every
# lane evaluates every interval's polynomials and selects. float32 is evaluated in
# float64 and rounded once.
_ERF_SPLIT = 0.46875
# erf(a) = a (c + z A2(z)/B(z)), z = a^2, c = 2/sqrt(pi) as hi + lo: A2_k = A_(k+1) -
# c B_(k+1) (40 digits, then rounded), Cody's A_0 - c B_0 = -3.2e-13 dropped (a relative
# 1e-16 at 0; without it the rational is within 3e-18 of erf), so that the leading term
# x c is one fma rounding and the rest a small correction
_TWO_BY_SQRTPI = (1.1283791670955126, 1.533545961316588e-17)
_ERF_A2 = (-1069.7925297128231, -161.48816355220197, -23.470081283314354,
           -0.9426014609109095)
_ERF_B = (2.84423683343917062e3, 1.28261652607737228e3, 2.44024637934444173e2,
          2.36012909523441209e1, 1.0)
_ERFCX_C = (1.23033935479799725e3, 2.05107837782607147e3, 1.71204761263407058e3,
            8.81952221241769090e2, 2.98635138197400131e2, 6.61191906371416295e1,
            8.88314979438837594e0, 5.64188496988670089e-1, 2.15311535474403846e-8)
_ERFCX_D = (1.23033935480374942e3, 3.43936767414372164e3, 4.36261909014324716e3,
            3.29079923573345963e3, 1.62138957456669019e3, 5.37181101862009858e2,
            1.17693950891312499e2, 1.57449261107098347e1, 1.0)
_ERFCX_P = (6.58749161529837803e-4, 1.60837851487422766e-2, 1.25781726111229246e-1,
            3.60344899949804439e-1, 3.05326634961232344e-1, 1.63153871373020978e-2)
_ERFCX_Q = (2.33520497626869185e-3, 6.05183413124413191e-2, 5.27905102951428412e-1,
            1.87295284992346047e0, 2.56852019228982242e0, 1.0)


def _poly_dd(v: VM, x, coeffs, steps):
    """The polynomial at x >= 0 (positive coefficients), its last ``steps`` Horner steps
    compensated (Ogita, Rump and Oishi's error-free transformations): (hi, lo)."""
    h, lo = v.poly(x, coeffs[steps:]), v.c(0.0)
    for k in reversed(coeffs[:steps]):
        p = v.mul(h, x)
        pe = v.fma_exact(h, x, v.neg(p))            # h x = p + pe exactly
        h, se = v.two_sum(p, v.c(k))
        lo = v.fma(lo, x, v.add(pe, se))
    return h, lo


def _quotients(v: VM, a, steps, split=_ERF_SPLIT):
    """(near, q_hi, q_lo) for a = |x| (nan: near): near where a < split, q = A2(z)/
    B(z), z = a^2, there, exp(a^2) erfc(a) = C(a)/D(a) up to 4 (``steps`` Horner steps
    of each compensated: plain, C/D is up to 4 ulp off, erfc up to 4 ulp, glibc's 3; all
    8, 2 ulp at twice the time), (1/sqrt(pi) - s P(s)/Q(s))/a, s = 1/a^2, beyond it, as
    (u Q'(u)/sqrt(pi) - P'(u)) / (a u Q'(u)), u = a^2, P', Q' the reversed polynomials
    (a clamped to 28, where erfc is 0). Every lane takes one division, 1/den: q_hi =
    num/den to an ulp, q_lo its error from the exact residual."""
    near = v.b.not_(v.ge(a, v.c(split)))
    mid = v.lt(a, v.c(4.0))
    zn = v.sel(near, v.mul(a, a), v.c(0.0))
    m = v.sel(mid, a, v.c(4.0))
    ch, cl = _poly_dd(v, m, _ERFCX_C, steps)
    dh, dl = _poly_dd(v, m, _ERFCX_D, steps)
    bb = v.clamp(v.sel(mid, v.c(4.0), a), 4.0, 28.0)
    u = v.mul(bb, bb)
    uq = v.mul(u, v.poly(u, _ERFCX_Q[::-1]))
    fnum = v.fma(uq, v.c(1 / math.sqrt(math.pi)), v.neg(v.poly(u, _ERFCX_P[::-1])))
    num = v.sel(near, v.poly(zn, _ERF_A2), v.sel(mid, ch, fnum))
    den = v.sel(near, v.poly(zn, _ERF_B), v.sel(mid, dh, v.mul(uq, bb)))
    nlo = v.sel(mid, v.sel(near, v.c(0.0), cl), v.c(0.0))
    dlo = v.sel(mid, v.sel(near, v.c(0.0), dl), v.c(0.0))
    inv = v.div(v.c(1.0), den)
    qh = v.mul(num, inv)
    r = v.add(v.fma_exact(v.neg(qh), den, num), v.sub(nlo, v.mul(qh, dlo)))
    return near, qh, v.mul(r, inv)


def _erfc_far(v: VM, a, fh, fl, top=28.0, rough=False):
    """erfc(a) for a >= _ERF_SPLIT or +inf (float64) from erfcx(a) = fh + fl: times
    exp(-a^2), with a = h + d, h on a 1/16 grid (h^2 exact), and -a^2 = -h^2 - 2hd - d^2
    reduced by n ln2 as a double-double (no rounding error of a^2 amplified by exp),
    scaled by 2**n last (one rounding for subnormal results). With ``top`` below 28
    (erf: a clamped there; there 2**n is normal), erfc as a double-double (hi, lo)
    instead. ``rough`` (float32's lanes): exp(-a^2) plainly, ~25% less time."""
    ac = v.sel(v.lt(a, v.c(top)), a, v.c(top))      # erfc underflows from 27.3 on
    if rough:       # for float32: exp(-a^2) with a relative 1e-14 (a^2 eps) suffices
        nf, r = exp_reduce(v, v.neg(v.mul(ac, ac)))
        res = v.fma(fh, expm1_poly(v, r), v.add(fh, fl))
        if top >= 28.0:
            return v.scale2(res, v.toint(nf))
        return v.mul(res, v.pow2i(v.toint(nf))), v.c(0.0)
    h = v.mul(v.intr("floor", v.mul(ac, v.c(16.0))), v.c(1 / 16))
    d = v.sub(ac, h)                                # exact, in [0, 1/16)
    h2 = v.add(h, h)
    t = v.mul(h2, d)
    te = v.fma_exact(h2, d, v.neg(t))               # 2hd = t + te exactly
    big = v.neg(v.mul(h, h))                        # exact
    hi, lo = ln2(v)
    nf = v.rint(v.mul(v.sub(big, t), v.c(LOG2E)))
    y = v.sub(v.add(big, v.mul(nf, v.c(-hi))), t)   # big - n hi is exact
    r = v.sub(y, v.add(v.mul(d, d), v.add(te, v.mul(nf, v.c(lo)))))
    # (fh + fl)(1 + em) = fh + (fh em + fl), rounded once
    rest = v.fma(fh, expm1_poly(v, r), fl)
    if top >= 28.0:
        return v.scale2(v.add(fh, rest), v.toint(nf))
    rh, rl = v.two_sum(fh, rest)
    scale = v.pow2i(v.toint(nf))
    return v.mul(rh, scale), v.mul(rl, scale)


def _near(v: VM, x, qh, ql):
    """x (c_lo + z q), z = x^2: erf(x) = x c_hi + this near 0 (q = A2(z)/B(z))."""
    return v.mul(x, v.fma(v.mul(x, x), v.add(qh, ql), v.c(_TWO_BY_SQRTPI[1])))


def _erf_f64(v: VM, x, steps):
    a = v.abs(x)
    # erf's own split at 1/2 (Cody's A/B is fitted up to there: 5e-18 off): beyond it
    # erf > 1/2 > erfc, errors of erfc count half; 1 - erfc(a) from erfc as hi + lo
    # (rounded first, it would cost erf another ulp); beyond a = 6, erfc < 2e-17, erf = 1
    near, qh, ql = _quotients(v, a, steps, split=0.5)
    th, tl = _erfc_far(v, v.sel(near, v.c(1.0), a), qh, ql, top=6.0, rough=steps == 0)
    big = v.copysign(v.sub(v.sub(v.c(1.0), th), tl), x)
    xn = v.sel(near, x, v.c(0.0))
    small = v.fma_exact(xn, v.c(_TWO_BY_SQRTPI[0]), _near(v, xn, qh, ql))  # -0 stays -0
    return v.sel(near, small, big)


def _erfc_f64(v: VM, x, steps):
    a = v.abs(x)
    near, qh, ql = _quotients(v, a, steps)
    tail = _erfc_far(v, v.sel(near, v.c(1.0), a), qh, ql, rough=steps == 0)
    tail = v.sel(v.lt(x, v.c(0.0)), v.sub(v.c(2.0), tail), tail)
    xn = v.sel(near, x, v.c(0.0))
    one_minus = v.fma_exact(v.neg(xn), v.c(_TWO_BY_SQRTPI[0]), v.c(1.0))
    return v.sel(near, v.sub(one_minus, _near(v, xn, qh, ql)), tail)


# float32 erfc (Shepherd and Laframboise's form, fitted here): (1 + 2a) erfcx(a) =
# Q(s), s = ((a - K)/(a + K) - c) / h mapped onto [-1, 1] for a in [0, 10.5], K = 3,
# Q of degree 16 least-squares at 4000 Chebyshev nodes against scipy's erfcx: within a
# relative 8e-14 of erfcx over [0, 10.5] when evaluated in float64 (erfc(10.06) is
# under half float32's least subnormal, so a is clamped to 10.5 and rounds to 0 there)
_ERFC32_K = 3.0
_ERFC32_S = (1.5714285714285712, -3.0)      # s (a + K) = 11/7 a - 3
_ERFC32_Q = (1.2790438059868892, -0.06932188310625956, -0.10750965848435723,
             0.12927986029099978, -0.07808605365592872, 0.02881741757873968,
             -0.005414553098266827, -0.0003411916502167443, 0.00040273776910549784,
             -2.6113760373200736e-05, -2.7421433449782357e-05, 2.9926014306245664e-06,
             2.2252425310923496e-06, -1.900395544851851e-07, -1.986980859005746e-07,
             5.2974256041144785e-09, 1.3583710906757179e-08)


def _erfc_f32(v: VM, x):
    """float32 erfc in float64 lanes, one polynomial for every |x| and one division:
    erfc(a) = Q(s) / (1 + 2a) exp(-a^2) (a^2 of a float32 is exact in float64, so exp
    adds no amplified error), 2 - erfc(a) for x < 0, rounded once: within 0.5 ulp and a
    relative 1e-13 of erfc."""
    w = VM(v.m, v.b, F64)
    xd = v.b.fpext(x, F64)
    a = w.abs(xd)
    a = w.sel(w.lt(a, w.c(10.5)), a, w.c(10.5))             # NaN too: selected back last
    den = w.fma(a, w.c(2.0), w.c(1.0))
    d = w.mul(w.add(a, w.c(_ERFC32_K)), den)                # 3 .. 302
    r = v.b.fpext(v.div(v.c(1.0), v.b.fptrunc(d, v.t)), F64)   # 1/d to 2**-24: float32's
    r = w.fma(r, w.fma(w.neg(d), r, w.c(1.0)), r)           # division, one Newton step to
    r = w.fma(r, w.fma(w.neg(d), r, w.c(1.0)), r)           # 2**-48, another to float64's
    s = w.mul(w.fma(a, w.c(_ERFC32_S[0]), w.c(_ERFC32_S[1])), w.mul(den, r))
    q = w.mul(w.poly(s, _ERFC32_Q), w.mul(w.add(a, w.c(_ERFC32_K)), r))
    nf, t = exp_reduce(w, w.neg(w.mul(a, a)))               # -a^2 >= -110.25: 2**n normal
    res = w.mul(w.fma(q, expm1_poly(w, t), q), w.pow2i(w.toint(nf)))
    res = w.sel(w.lt(xd, w.c(0.0)), w.sub(w.c(2.0), res), res)
    return v.b.fptrunc(w.sel(w.isnan(xd), xd, res), v.t)


def _in_f64(body):
    """``body`` for float64 (4 compensated steps); float32 widened, evaluated in float64
    (plain Horner, plain exp(-a^2): a few float64 ulp are far below float32's half ulp)
    and rounded once."""
    def routine(v, x):
        if v.f64:
            return body(v, x, 4)
        w = VM(v.m, v.b, F64)
        return v.b.fptrunc(body(w, v.b.fpext(x, F64), 0), v.t)
    return routine


register("erf")(_in_f64(_erf_f64))
_ERFC_F64 = _in_f64(_erfc_f64)


@register("erfc")
def _erfc(v, x):
    return _ERFC_F64(v, x) if v.f64 else _erfc_f32(v, x)
