"""The regularized incomplete gamma and beta functions: a power series or a
continued fraction (modified Lentz), whichever converges fast for the argument,
each run to convergence in one ``while_loop``.  Derivatives are ``custom_jvp``
rules: the closed form in ``x``; in the shape parameters the forward derivative of
the same iteration (``jvp`` of the loop, evaluated with unit tangents), multiplied
by the incoming tangent so that reverse mode only transposes a product. For the
incomplete gamma function the derivative is iterated with the value until both have
converged (``igamma_grad_a``, and ``random_gamma_grad``, the implicit gradient of gamma
draws, which ``functrans.random.gamma`` differentiates by).
"""
from __future__ import annotations

import numpy as np

from .. import numpy as fnp
from ..autodiff import jvp
from ..custom_derivatives import custom_jvp
from ._special_gamma import as_float, betaln, converge, digamma, gammaln
from ..typing import Array, ArrayLike

__all__ = ["gammainc", "gammaincc", "betainc", "igamma_grad_a", "random_gamma_grad"]


def _tiny(x):
    return x.dtype.type(np.finfo(x.dtype).tiny * 1e10)


def _series_parts(x):
    """The series of P(a, x) / (x^a e^-x / Gamma(a)) = sum_n x^n / (a (a+1)...(a+n)) as
    (start state from a, step(state, a), index of the sum in the state)."""
    def init(a):
        term = a.dtype.type(1) / a
        return a, term, term

    def step(st, a):
        ap, trm, acc = st
        ap = ap + a.dtype.type(1)
        trm = trm * x / ap
        return ap, trm, acc + trm

    return init, step, 2


def _cf_parts(x):
    """The continued fraction (modified Lentz) of Q(a, x) / (x^a e^-x / Gamma(a)), as
    (start state from a, step(state, a), index of the value in the state)."""
    def init(a):
        t = a.dtype.type
        b = x + t(1) - a
        d = t(1) / b
        return fnp.ones_like(b), b, t(1) / _tiny(a) * fnp.ones_like(b), d, d

    def step(st, a):
        t = a.dtype.type
        tiny = _tiny(a)
        i, b, c, d, h = st
        an = -i * (i - a)
        b = b + t(2)
        d = an * d + b
        d = fnp.where(fnp.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = fnp.where(fnp.abs(c) < tiny, tiny, c)
        d = t(1) / d
        return i + t(1), b, c, d, h * d * c

    return init, step, 4


def _run(parts, a):
    init, step, k = parts
    return converge(lambda st: step(st, a), init(a), lambda st: st[k], a.shape)[k]


def _run_with_da(parts, a):
    """The value and its derivative in a, iterated together (the forward derivative of
    each step) until both have converged: the derivative of a loop that stops when the
    value has converged can still be several digits short."""
    init, step, k = parts
    one = fnp.ones_like(a)
    st, dst = jvp(init, (a,), (one,))
    n = len(st)

    def both(s2):
        new, dnew = jvp(step, (tuple(s2[:n]), a), (tuple(s2[n:]), one))
        return tuple(new) + tuple(dnew)

    final = converge(both, tuple(st) + tuple(dst), lambda s2: (s2[k], s2[n + k]), a.shape)
    return final[k], final[n + k]


def _gamma_series_sum(a, x):
    """P(a, x) / (x^a e^-x / Gamma(a)): the series alone."""
    return _run(_series_parts(x), a)


def _gamma_cf_sum(a, x):
    """Q(a, x) / (x^a e^-x / Gamma(a)): the continued fraction alone."""
    return _run(_cf_parts(x), a)


def _gammainc_pair(a, x, with_da=False):
    """(P, Q) with the branch that converges; NaN outside a > 0, x >= 0. With
    ``with_da``, also dP/da (= -dQ/da), iterated to convergence with the values."""
    t = a.dtype.type
    a, x = fnp.broadcast_arrays(a, x)
    valid = (a > 0) & (x >= 0)
    series = valid & (x < a + t(1))
    cf = valid & fnp.logical_not(series)
    a_s, x_s = fnp.where(series, a, t(1)), fnp.where(series & (x > 0), x, t(0.5))
    a_c, x_c = fnp.where(cf, a, t(1)), fnp.where(cf, x, t(2))
    if with_da:
        (ss, dss), (h, dh) = _run_with_da(_series_parts(x_s), a_s), _run_with_da(_cf_parts(x_c), a_c)
    else:
        ss, h = _run(_series_parts(x_s), a_s), _run(_cf_parts(x_c), a_c)
    pre_s = fnp.exp(-x_s + a_s * fnp.log(x_s) - gammaln(a_s))
    pre_c = fnp.exp(-x_c + a_c * fnp.log(x_c) - gammaln(a_c))
    p, q = ss * pre_s, h * pre_c
    zero = x == 0
    p_out = fnp.where(series, fnp.where(zero, t(0), p), t(1) - q)
    q_out = fnp.where(cf, q, t(1) - fnp.where(zero, t(0), p))
    nan = t(np.nan)
    p_out = fnp.where(valid, p_out, nan)
    q_out = fnp.where(valid, q_out, nan)
    inf = fnp.isinf(x) & valid
    p_out, q_out = fnp.where(inf, t(1), p_out), fnp.where(inf, t(0), q_out)
    if not with_da:
        return p_out, q_out
    dp_s = pre_s * ((fnp.log(x_s) - digamma(a_s)) * ss + dss)
    dq_c = pre_c * ((fnp.log(x_c) - digamma(a_c)) * h + dh)
    dp = fnp.where(series, fnp.where(zero, t(0), dp_s), -dq_c)
    dp = fnp.where(inf, t(0), fnp.where(valid, dp, nan))
    return p_out, q_out, dp


def _dens_gamma(a, x):
    """d/dx P(a, x) = x^(a-1) e^-x / Gamma(a): 0 at x = inf and 1 at (a, x) = (1, 0), where
    the log form would give inf - inf and 0 * -inf (NaN)."""
    one, big = a.dtype.type(1), fnp.isposinf(x)
    xs = fnp.where(big, one, x)
    power = fnp.where(a == one, a.dtype.type(0), (a - one) * fnp.log(xs))
    return fnp.where(big, a.dtype.type(0), fnp.exp(power - xs - gammaln(a)))


@custom_jvp
def _gammainc(a, x):
    return _gammainc_pair(a, x)[0]


@_gammainc.defjvp
def _gammainc_jvp(primals, tangents):
    (a, x), (ta, tx) = primals, tangents
    val, _, dval_da = _gammainc_pair(a, x, with_da=True)
    return val, dval_da * ta + _dens_gamma(a, x) * tx


@custom_jvp
def _gammaincc(a, x):
    return _gammainc_pair(a, x)[1]


@_gammaincc.defjvp
def _gammaincc_jvp(primals, tangents):
    (a, x), (ta, tx) = primals, tangents
    _, val, dp_da = _gammainc_pair(a, x, with_da=True)
    return val, -dp_da * ta - _dens_gamma(a, x) * tx


def gammainc(a: ArrayLike, x: ArrayLike) -> Array:
    """The regularized lower incomplete gamma function P(a, x) (scipy.special.gammainc),
    for a > 0, x >= 0, and 1 for a = 0 < x (the limit, as scipy 1.16+ and JAX); NaN
    elsewhere. Differentiable in both arguments.

    >>> from functrans.scipy.special import gammainc
    >>> round(float(gammainc(1.0, 2.0)), 12)    # 1 - exp(-2)
    0.864664716763
    """
    a, x = as_float(a, x)
    a, x = fnp.broadcast_arrays(a, x)
    return fnp.where((a == 0) & (x > 0), a.dtype.type(1), _gammainc(a, x))


def gammaincc(a: ArrayLike, x: ArrayLike) -> Array:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x), computed
    directly (no cancellation) where it is small; 0 for a = 0 < x (as gammainc's 1).

    >>> from functrans.scipy.special import gammaincc
    >>> round(float(gammaincc(1.0, 2.0)), 12)   # exp(-2)
    0.135335283237
    """
    a, x = as_float(a, x)
    a, x = fnp.broadcast_arrays(a, x)
    return fnp.where((a == 0) & (x > 0), a.dtype.type(0), _gammaincc(a, x))


def igamma_grad_a(a: ArrayLike, x: ArrayLike) -> Array:
    """dP(a, x)/da, the derivative of the regularized lower incomplete gamma function in
    its shape parameter (JAX's ``lax.igamma_grad_a``); 0 at x = 0, NaN outside a > 0,
    x >= 0.

    >>> from functrans.lax import igamma_grad_a
    >>> round(float(igamma_grad_a(2.0, 1.5)), 10)
    -0.3134886378
    """
    a, x = as_float(a, x)
    a, x = fnp.broadcast_arrays(a, x)
    return _gammainc_pair(a, x, with_da=True)[2]


def random_gamma_grad(a: ArrayLike, x: ArrayLike) -> Array:
    """dx/da for a sample x of Gamma(a, 1) held at its quantile (the implicit
    reparameterisation gradient, JAX's ``lax.random_gamma_grad``): -(dP/da) / p(x).

    With P = x^a e^-x / Gamma(a) * S (series) or Q = the same prefactor * H (continued
    fraction), the prefactor cancels against the density: the result is
    -x ((log x - digamma(a)) S + dS/da), or +x (...H...), with no under- or overflow.
    0 at x = 0 (JAX's value), NaN outside a > 0, x >= 0.

    >>> from functrans.lax import random_gamma_grad
    >>> round(float(random_gamma_grad(2.0, 1.5)), 10)
    0.9366390679
    """
    a, x = as_float(a, x)
    a, x = fnp.broadcast_arrays(a, x)
    t = a.dtype.type
    valid = (a > 0) & (x >= 0)
    inner = valid & (x > 0) & fnp.isfinite(x)
    series = inner & (x < a + t(1))
    cf = inner & fnp.logical_not(series)
    s, ds = _run_with_da(_series_parts(fnp.where(series, x, t(0.5))), fnp.where(series, a, t(1)))
    h, dh = _run_with_da(_cf_parts(fnp.where(cf, x, t(2))), fnp.where(cf, a, t(1)))
    xi = fnp.where(inner, x, t(1))
    dlog = fnp.log(xi) - digamma(fnp.where(inner, a, t(1)))
    out = fnp.where(series, -xi * (dlog * s + ds), xi * (dlog * h + dh))
    out = fnp.where(inner, out, t(0))
    return fnp.where(valid & fnp.logical_not(fnp.isnan(a) | fnp.isnan(x)), out, t(np.nan))


def _beta_cf(a, b, x):
    """I_x(a, b) by the continued fraction, accurate for x < (a + 1) / (a + b + 2)."""
    t = a.dtype.type
    tiny = _tiny(a)
    qab, qap, qam = a + b, a + t(1), a - t(1)
    d = t(1) - qab * x / qap
    d = t(1) / fnp.where(fnp.abs(d) < tiny, tiny, d)
    c = fnp.ones_like(d)

    def fix(v):
        return fnp.where(fnp.abs(v) < tiny, tiny, v)

    def step(st):
        m, c, d, h = st
        m2 = t(2) * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = t(1) / fix(t(1) + aa * d)
        c = fix(t(1) + aa / c)
        h = h * d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = t(1) / fix(t(1) + aa * d)
        c = fix(t(1) + aa / c)
        return m + t(1), c, d, h * d * c

    *_, h = converge(step, (fnp.ones_like(d), c, d, d), lambda st: st[3], d.shape)
    front = fnp.exp(a * fnp.log(x) + b * fnp.log1p(-x) - betaln(a, b)) / a
    return front * h


def _betainc_value(a, b, x):
    t = a.dtype.type
    valid = (a > 0) & (b > 0) & (x >= 0) & (x <= 1)
    inner = valid & (x > 0) & (x < 1)
    swap = x > (a + t(1)) / (a + b + t(2))
    a_s, b_s = fnp.where(swap, b, a), fnp.where(swap, a, b)
    x_s = fnp.where(swap, t(1) - x, x)
    cf = _beta_cf(fnp.where(inner, a_s, t(1)), fnp.where(inner, b_s, t(1)),
                  fnp.where(inner, x_s, t(0.25)))
    val = fnp.where(swap, t(1) - cf, cf)
    val = fnp.where(x == 0, t(0), fnp.where(x == 1, t(1), val))
    return fnp.where(valid, val, t(np.nan))


@custom_jvp
def _betainc(a, b, x):
    return _betainc_value(a, b, x)


@_betainc.defjvp
def _betainc_jvp(primals, tangents):
    (a, b, x), (ta, tb, tx) = primals, tangents
    one = fnp.ones_like(a)
    val, da = jvp(lambda aa: _betainc_value(aa, b, x), (a,), (one,))
    _, db = jvp(lambda bb: _betainc_value(a, bb, x), (b,), (one,))
    t = x.dtype.type
    # the density in logs inside (0, 1), as powers at x = 0 and 1 where the log form's
    # slope is 0 * inf = NaN (d2/dx2 I_x(2, 3) is 12 at x = 0), NaN beyond (as the value);
    # each branch sees a safe x, so neither leaks NaN through the other's where
    inner, edge = (x > 0) & (x < 1), (x == 0) | (x == 1)
    xs, xe = fnp.where(inner, x, t(0.5)), fnp.where(edge, x, t(0))
    dens = fnp.where(inner,
                     fnp.exp((a - t(1)) * fnp.log(xs) + (b - t(1)) * fnp.log1p(-xs) - betaln(a, b)),
                     fnp.where(edge, fnp.power(xe, a - t(1)) * fnp.power(t(1) - xe, b - t(1))
                               * fnp.exp(-betaln(a, b)), t(np.nan)))
    return val, da * ta + db * tb + dens * tx


def betainc(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Array:
    """The regularized incomplete beta function I_x(a, b) (scipy.special.betainc),
    for a, b > 0 and 0 <= x <= 1 (NaN elsewhere); differentiable in all three
    arguments (JAX differentiates only in x).

    >>> from functrans.scipy.special import betainc
    >>> round(float(betainc(2.0, 3.0, 0.4)), 12)
    0.5248
    """
    a, b, x = as_float(a, b, x)
    a, b, x = fnp.broadcast_arrays(a, b, x)
    # a = 0 < b puts all the mass at 0 (I = 1 for x > 0), b = 0 < a at 1 (I = 0 for
    # x < 1), as scipy and JAX; the series sees safe parameters there, so no NaN leaks
    # into the gradient through the unselected branch
    # x < 1), as scipy and JAX; likewise b = inf > a > 0 at 0 and a = inf > b > 0 at 1
    # (a = b = inf is NaN)
    t = x.dtype.type
    fin_a, fin_b = fnp.isfinite(a), fnp.isfinite(b)
    at0 = ((a == 0) & (b > 0)) | ((b == np.inf) & (a > 0) & fin_a)
    at1 = ((b == 0) & (a > 0)) | ((a == np.inf) & (b > 0) & fin_b)
    point = at0 | at1
    inside = _betainc(fnp.where(point, t(1), a), fnp.where(point, t(1), b), x)
    mass = fnp.where(at0, (x > 0) & (x <= 1), x == 1).astype(x.dtype)
    out = fnp.where(point & (x >= 0) & (x <= 1), mass, inside)
    return fnp.where((a == np.inf) & (b == np.inf), t(np.nan), out)
