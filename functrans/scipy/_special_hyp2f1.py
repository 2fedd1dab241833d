"""Gauss's hypergeometric function ``hyp2f1(a, b, c, x)`` for real arguments.

The value follows scipy's (cephes') plan, in whole-array loops of functrans operations (so
``jit`` compiles it to native code on the CPU backend):

- Gauss's series for -1/2 <= x <= 9/10, after Euler's transformation
  (1-x)^(c-a-b) 2F1(c-a, c-b; c; x) when c-a-b < 0 (its terms then fall faster);
- Pfaff's transformation (1-x)^(-a) 2F1(a, c-b; c; x/(x-1)) for x < -1/2;
- for 9/10 < x < 1 the series in 1-x (AMS 55 15.3.6), or, when c-a-b is an integer,
  its logarithmic limit (15.3.10-12, a digamma series, as JAX's and cephes');
- polynomials (a, b, c-a or c-b a non-positive integer) summed exactly, and Gauss's
  theorem at x = 1.

Where the real function has no finite value it returns JAX's ``inf``: c a non-positive
integer, x = 1 with c-a-b <= 0, x > 1 (except polynomials, whose value is returned).
"""
from __future__ import annotations

import numpy as np

from .. import numpy as fnp
from ..custom_derivatives import custom_jvp
from ..primitives.control_flow import fori_loop, while_loop
from ..lax_special import lgamma
from ._special_gamma import as_float, digamma, gammasgn
from ..typing import Array, ArrayLike

__all__ = ["hyp2f1"]

_MAX_TERMS = 3000       # Gauss's series (x <= 0.9 after the transformations above)
_DERIV_TERMS = 1500     # the parameter derivatives' series (fixed length: differentiable)


def _nonpos_int(v):
    return (v <= 0) & (v == fnp.floor(v))


def _series(a, b, c, x):
    """sum_k (a)_k (b)_k / ((c)_k k!) x^k, until every element's term is below eps of its
    sum (a term that becomes exactly zero ends a polynomial)."""
    t = x.dtype.type
    eps = t(np.finfo(x.dtype).eps)

    def cond(s):
        k, term, total = s
        return (k < _MAX_TERMS) & fnp.any(fnp.abs(term) > eps * fnp.abs(total))

    def body(s):
        k, term, total = s
        kf = k.astype(x.dtype)
        term = term * ((a + kf) * (b + kf) / ((c + kf) * (kf + t(1))) * x)
        return k + 1, term, total + term

    one = fnp.ones_like(x)
    return while_loop(cond, body, (fnp.asarray(0, np.int32), one, one))[2]


def _rgamma_ratio(num, den):
    """prod Gamma(num) / prod Gamma(den), zero where a denominator is at a pole (one
    gammaln over the stacked arguments: less code to compile)."""
    t = (num + den)[0].dtype.type
    args = fnp.stack(fnp.broadcast_arrays(*num, *den))
    lg = lgamma(args)          # not gammaln's custom_jvp wrapper: quicker to trace
    sg = fnp.where(_nonpos_int(args), t(1), gammasgn(args))
    n = len(num)
    log = fnp.sum(lg[:n], axis=0) - fnp.sum(lg[n:], axis=0)
    sign = fnp.prod(sg, axis=0)
    pole = fnp.any(_nonpos_int(args[n:]), axis=0)
    return fnp.where(pole, t(0), sign * fnp.exp(log))


def _near_one_generic(a, b, c, x):
    """15.3.6: c-a-b = d not an integer; two series in 1-x."""
    t = x.dtype.type
    d = c - a - b
    s = t(1) - x
    f1 = _series(a, b, t(1) - d, s)
    f2 = _series(c - a, c - b, d + t(1), s)
    return (_rgamma_ratio([c, d], [c - a, c - b]) * f1
            + _rgamma_ratio([c, -d], [a, b]) * s ** d * f2)


def _psi_series(a, b, e, d1, ax, s, y, p, psi1):
    """The digamma series of 15.3.10-12 (JAX's and cephes' loop), summed to convergence;
    the four digammas move up by one each step (psi(z + 1) = psi(z) + 1/z)."""
    t = s.dtype.type
    eps = t(np.finfo(s.dtype).eps)
    z = (t(2), t(2) + e, a + t(1) + d1, b + t(1) + d1)
    psi0 = tuple(psi1[i] for i in range(4))       # digamma(z)

    def cond(st):
        k, q = st[0], st[1]
        return (k < 250) & fnp.any(fnp.abs(q) >= eps * fnp.abs(st[2]))

    def body(st):
        k, _, y, p, psi = st
        tt = k.astype(s.dtype)
        q = p * (psi[0] + psi[1] - psi[2] - psi[3] - ax)
        p = p * s * (a + tt + d1) / (tt + t(1)) * (b + tt + d1) / (tt + t(1) + e)
        psi = tuple(f + t(1) / (v + tt - t(1)) for f, v in zip(psi, z))
        return k + 1, q, y + q, p, psi

    return while_loop(cond, body, (fnp.asarray(1, np.int32), y, y, p, psi0))[2]


def _near_one_log(a, b, c, x):
    """15.3.10-12: c-a-b = d an integer (x close to 1), as JAX's _hyp2f1_digamma_transform."""
    t = x.dtype.type
    d = c - a - b
    s = t(1) - x
    rd = fnp.round(d)
    pos = rd >= 0
    e = fnp.abs(d)
    d1 = fnp.where(pos, d, t(0))
    d2 = fnp.where(pos, t(0), d)
    ard = fnp.abs(rd)
    ax = fnp.log(s)
    z = fnp.stack(fnp.broadcast_arrays(t(1), t(1) + e, a + d1, b + d1))
    psi = digamma(z)                                # one digamma for the four
    y = (psi[0] + psi[1] - psi[2] - psi[3] - ax)
    rg = _rgamma_ratio([], [e + t(1)])
    y = y * rg
    p = (a + d1) * (b + d1) * s * rg / (e + t(1))   # 1 / Gamma(e + 2)
    y = _psi_series(a, b, e, d1, ax, s, y, p, psi + t(1) / z)

    def finite_body(i, st):          # y1 = sum of the |d| - 1 finite terms
        tt, p, y1 = st
        live = i.astype(s.dtype) < ard
        p = p * s * (a + tt + d2) * (b + tt + d2) / (t(1) - e + tt)
        p = p / (tt + t(1))
        return tt + t(1), p, y1 + fnp.where(live, p, t(0))

    n_fin = fnp.max(ard).astype(np.int32)
    one = fnp.ones_like(x)
    y1 = fori_loop(1, n_fin, finite_body, (fnp.zeros_like(x), one, one))[2]
    y1 = y1 * _rgamma_ratio([c, e], [a + d1, b + d1])
    ylog = y * _rgamma_ratio([c], [a + d2, b + d2])
    ylog = fnp.where(fnp.remainder(ard, t(2)) != 0, -ylog, ylog)
    q = s ** rd
    mixed = fnp.where(rd > 0, ylog * q + y1, ylog + y1 * q)
    return fnp.where(rd == 0, y * _rgamma_ratio([c], [a, b]), mixed)


def _unit_interval(a, b, c, x):
    """-1/2 <= x < 1, no polynomial: the series, or the transformations about x = 1."""
    t = x.dtype.type
    d = c - a - b
    near = x > t(0.9)
    log_case = fnp.abs(d - fnp.round(d)) <= t(50 * np.finfo(x.dtype).eps)
    # each branch sees its own elements; the others get a harmless argument (x = 0)
    xs = fnp.where(near, t(0), x)
    euler = d < 0
    ser = _series(fnp.where(euler, c - a, a), fnp.where(euler, c - b, b), c, xs)
    ser = fnp.where(euler, (t(1) - xs) ** d * ser, ser)
    sel = near & ~log_case
    xg, dg = fnp.where(sel, x, t(0.95)), fnp.where(sel, d, t(0.5))
    ag, bg = fnp.where(sel, a, t(0.5)), fnp.where(sel, b, t(0.5))
    gen = _near_one_generic(ag, bg, ag + bg + dg, xg)
    sel = near & log_case
    xl, dl = fnp.where(sel, x, t(0.95)), fnp.where(sel, fnp.round(d), t(0))
    al, bl = fnp.where(sel, a, t(0.5)), fnp.where(sel, b, t(0.5))
    lg = _near_one_log(al, bl, al + bl + dl, xl)
    return fnp.where(near, fnp.where(log_case, lg, gen), ser)


def _value(a, b, c, x):
    t = x.dtype.type
    inf = t(np.inf)
    d = c - a - b
    poly = _nonpos_int(a) | _nonpos_int(b)
    poly_euler = ~poly & (_nonpos_int(c - a) | _nonpos_int(c - b)) & (
        (x < 1) | (d == fnp.floor(d)))
    c_pole = _nonpos_int(c)
    # the polynomials, summed exactly at any x
    xp = fnp.where(poly, x, t(0))
    p_val = _series(a, b, c, xp)
    xe = fnp.where(poly_euler & (x != 1), x, t(0))
    e_val = (t(1) - xe) ** d * _series(c - a, c - b, c, xe)
    # Pfaff for x < -1/2: (1-x)^-a 2F1(a, c-b; c; x/(x-1)), or the mirror image in a, b
    # when that one is the polynomial
    pf = x < t(-0.5)
    swap = _nonpos_int(c - a)
    aa, bb = fnp.where(swap, b, a), fnp.where(swap, a, b)
    xx = fnp.where(pf, x / (x - t(1)), x)
    general = ~poly & ~poly_euler & (x < 1) & fnp.isfinite(x)
    xx = fnp.where(general, xx, t(0))
    inner = _unit_interval(aa, fnp.where(pf, c - bb, bb), c, xx)
    g_val = fnp.where(pf, (t(1) - fnp.where(general, x, t(0))) ** (-aa) * inner, inner)
    gauss = fnp.where(d > 0, _rgamma_ratio([c, fnp.where(d > 0, d, t(1))], [c - a, c - b]),
                      inf)
    out = fnp.where(x == 1, gauss, fnp.where(x > 1, inf, g_val))
    out = fnp.where(fnp.isnan(x) | (fnp.isinf(x) & ~poly), t(np.nan), out)
    out = fnp.where(poly_euler & (x != 1), e_val, out)
    out = fnp.where(poly, p_val, out)
    out = fnp.where(c_pole, inf, out)
    return fnp.where((x == 0) | (((a == 0) | (b == 0)) & (c != 0)), t(1), out)


def _param_derivatives(a, b, c, x):
    """d/da, d/db, d/dc of Gauss's series, its terms laid out on a last axis
    (cumulative products and sums: differentiable again, and quick eagerly):
    d/da term_k = term_k sum_{j<k} 1 / (a + j), or, past a zero factor a + n = 0 (a
    polynomial), the product without that factor. NaN where the series has not
    converged (|x| close to or above 1): no silent wrong number."""
    t = x.dtype.type
    j = fnp.arange(_DERIV_TERMS, dtype=x.dtype)
    a_, b_, c_, x_ = (v[..., None] for v in (a, b, c, x))
    u = x_ / ((c_ + j) * (j + t(1)))
    r = (a_ + j) * (b_ + j) * u

    def head(v):                       # [1, v_0, v_0 v_1, ...]: term k = product of k ratios
        return fnp.concatenate([fnp.ones_like(v[..., :1]), fnp.cumprod(v[..., :-1], axis=-1)],
                               axis=-1)

    def lead(v):                       # [0, v_0, v_0 + v_1, ...]
        return fnp.concatenate([fnp.zeros_like(v[..., :1]), fnp.cumsum(v[..., :-1], axis=-1)],
                               axis=-1)

    term = head(r)

    def by_upper(p, q):                # d/dp of the terms, p an upper parameter
        zero = (p + j) == 0
        inv = fnp.where(zero, t(0), t(1) / fnp.where(zero, t(1), p + j))
        past = lead(zero.astype(x.dtype)) > 0
        without = head(fnp.where(zero, (q + j) * u, r))
        return fnp.where(past, without, term * lead(inv))

    dc = -term * lead(t(1) / (c_ + j))
    out = []
    for d in (by_upper(a_, b_), by_upper(b_, a_), dc):
        total = fnp.sum(d, axis=-1)
        last = fnp.abs(d[..., -1]) + fnp.abs(term[..., -1])
        ok = (fnp.abs(x) < 1) & (last <= t(1e3 * np.finfo(x.dtype).eps) * fnp.abs(total))
        out.append(fnp.where(ok | (last == 0), total, t(np.nan)))
    return out


@custom_jvp
def _hyp2f1(a, b, c, x):
    return _value(a, b, c, x)


@_hyp2f1.defjvp
def _hyp2f1_jvp(primals, tangents):
    a, b, c, x = primals
    ta, tb, tc, tx = tangents
    out = _hyp2f1(a, b, c, x)
    t = x.dtype.type
    dx = a * b / c * _hyp2f1(a + t(1), b + t(1), c + t(1), x)
    # in a, b, c: Gauss's series' derivatives, through Pfaff's transformation for
    # x < -1/2 (F = (1-x)^-a G(a, c-b; c; x/(x-1)), the chain rule on G's derivatives)
    pf = x < t(-0.5)
    xs = fnp.where(pf, x, t(-1))
    w = fnp.where(pf, xs / (xs - t(1)), x)
    ga, gb, gc = _param_derivatives(a, fnp.where(pf, c - b, b), c, w)
    scale = (t(1) - xs) ** (-a)
    da = fnp.where(pf, scale * ga - fnp.log1p(-xs) * out, ga)
    db = fnp.where(pf, -scale * gb, gb)
    dc = fnp.where(pf, scale * (gb + gc), gc)
    return out, dx * tx + da * ta + db * tb + dc * tc


def hyp2f1(a: ArrayLike, b: ArrayLike, c: ArrayLike, x: ArrayLike) -> Array:
    """Gauss's hypergeometric function 2F1(a, b; c; x) = sum (a)_k (b)_k / (c)_k x^k / k!
    for real arguments (scipy.special.hyp2f1), with the transformations that make it
    accurate on the whole real line below 1 (about 1e-14 relative, less where
    c-a-b is within ~1e-8 of an integer). ``inf`` where the real function has no finite
    value (c a non-positive integer, x > 1, x = 1 with c-a-b <= 0), as JAX's; polynomials
    (a or b a non-positive integer) are summed exactly at every x.

    Differentiable to any order in x (d/dx = a b / c 2F1(a+1, b+1; c+1; x)); in a, b and
    c through the derivatives of Gauss's series (after Pfaff's transformation for
    x < -1/2), which converge slowly as x/(x-1) or x nears 1: NaN where they have not
    converged (x above about 0.98 or below about -50), where JAX's give inaccurate
    numbers (and NaN at a non-positive integer a, where these are right).

    >>> from functrans.scipy.special import hyp2f1
    >>> round(float(hyp2f1(1.0, 1.0, 2.0, 0.5)), 12)     # -log(1 - x) / x
    1.38629436112
    """
    a, b, c, x = as_float(a, b, c, x)
    dt = x.dtype
    # in float64, rounded once: float32's series was 15 ulp off
    a, b, c, x = fnp.broadcast_arrays(*(v.astype(np.float64) for v in (a, b, c, x)))
    return _hyp2f1(a, b, c, x).astype(dt)
