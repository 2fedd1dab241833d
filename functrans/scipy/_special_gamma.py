"""Gamma-family special functions composed from functrans operations (no new
primitive): digamma, trigamma, polygamma, Hurwitz zeta, the regularized incomplete
gamma and beta functions, and the small functions built on log-gamma.

Series and continued fractions that need a data-dependent number of terms run in
``lax.while_loop`` (one loop for the whole array; it stops when every element has
converged); their derivatives are ``custom_jvp`` rules, so reverse mode never has to
differentiate through the loop.
"""
from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from .. import numpy as fnp
from ..custom_derivatives import custom_jvp
from ..lax_special import lgamma
from ._special_cgamma import complex_gamma
# the primitives' own modules, not functrans.lax: lax re-exports digamma from here
from ..primitives.control_flow import while_loop
from ..primitives.custom import stop_gradient
from ..typing import Array, ArrayLike

__all__ = ["as_float", "in_float64", "gammaln", "gammasgn", "gamma", "digamma", "trigamma",
           "polygamma", "zeta", "betaln", "beta", "gammainc", "gammaincc", "betainc", "poch",
           "factorial", "multigammaln", "converge", "comb"]

# B_2, B_4, ..., B_24 (exact), for the Euler-Maclaurin and asymptotic series
_BERNOULLI_EVEN = (Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30),
                   Fraction(5, 66), Fraction(-691, 2730), Fraction(7, 6),
                   Fraction(-3617, 510), Fraction(43867, 798), Fraction(-174611, 330),
                   Fraction(854513, 138), Fraction(-236364091, 2730))
_LOOP_MAX = 5000


def converge(step, state, value_of, shape):
    """Run ``state = step(state)`` until every element's ``value_of(state)`` (an array,
    or a tuple of arrays that must all settle) stops changing (relative change below
    eps), at most a few thousand times: one ``while_loop`` for the whole array."""
    def cond(carry):
        i, done, _ = carry
        return (i < _LOOP_MAX) & fnp.logical_not(fnp.all(done))

    def body(carry):
        i, done, st = carry
        olds, news = value_of(st), value_of(new_st := step(st))
        keep = [fnp.where(done, o, n) for o, n in zip(st, new_st)]
        olds, news = (olds, news) if isinstance(olds, tuple) else ((olds,), (news,))
        now = fnp.ones(shape, bool)
        for old, new in zip(olds, news):
            now = now & (fnp.abs(new - old) <= _eps(new) * fnp.abs(new))
        return i + 1, done | now, tuple(keep)

    done0 = fnp.zeros(shape, bool)
    _, _, final = while_loop(cond, body, (fnp.asarray(0, np.int32), done0, tuple(state)))
    return final


def as_float(*xs):
    """Arrays of a common float dtype (integers and bools become float64). Python
    scalars are weak, as in JAX: ``as_float(float32 array, 0.0)`` stays float32."""
    arrs = [fnp.asarray(x) for x in xs]
    dt = fnp.result_type(*[x if type(x) in (int, float) else a.dtype for x, a in zip(xs, arrs)])
    if dt.kind in "iub":
        dt = np.dtype(np.float64)
    if dt not in (np.float32, np.float64):
        raise TypeError(f"expected real floating inputs, got {dt}")
    out = [fnp.asarray(a, dt) for a in arrs]
    return out[0] if len(out) == 1 else out


def in_float64(fn):
    """``fn`` evaluated at a float64 ``x`` (its first argument) and rounded once to
    ``x``'s narrower dtype: a rational or Chebyshev approximation run in float32
    arithmetic is off by up to ~8 ulp, in float64 by about one float64 ulp."""
    @functools.wraps(fn)
    def run(x, *rest):
        if x.dtype == np.float64:
            return fn(x, *rest)
        return fn(x.astype(np.float64), *rest).astype(x.dtype)
    return run


def _eps(x):
    return x.dtype.type(np.finfo(x.dtype).eps)


@custom_jvp
def _gammaln(x):
    return lgamma(x)


@_gammaln.defjvp
def _gammaln_jvp(primals, tangents):
    (x,), (tx,) = primals, tangents
    return _gammaln(x), tx * _digamma(x)


def gammaln(x: ArrayLike) -> Array:
    """log|Gamma(x)| (scipy.special.gammaln); derivative digamma(x).

    >>> from functrans.scipy.special import gammaln
    >>> round(float(gammaln(5.0)), 10)
    3.1780538303
    """
    return _gammaln(as_float(x))


def gammasgn(x: ArrayLike) -> Array:
    """The sign of Gamma(x): -1 where x < 0 lies between an odd and an even negative
    integer, +1 elsewhere (also at 0), NaN at the negative integers and for NaN (as scipy).

    >>> from functrans.scipy.special import gammasgn
    >>> import functrans.numpy as fnp
    >>> gammasgn(fnp.array([-0.5, -1.5, 2.0])).tolist()
    [-1.0, 1.0, 1.0]
    """
    x = as_float(x)
    t = x.dtype.type
    fl = fnp.floor(x)
    neg_odd = fnp.remainder(fl, t(2)) != t(0)
    # Gamma(-0.0) is -inf (scipy, JAX): -0.0's sign is -1
    sgn = fnp.where(((x < 0) & neg_odd) | ((x == 0) & fnp.signbit(x)), t(-1), t(1))
    pole = ((x < 0) & (fl == x)) | fnp.isnan(x)      # NaN in, NaN out (scipy, JAX)
    return stop_gradient(fnp.where(pole, t(np.nan), sgn))


def gamma(x: ArrayLike) -> Array:
    """Gamma(x) = gammasgn(x) * exp(gammaln(x)).

    >>> from functrans.scipy.special import gamma
    >>> round(float(gamma(5.0)), 10)
    24.0

    Complex ``x`` (as scipy and JAX): ``exp(loggamma(x))``, NaN + NaN j at the poles.
    """
    x = fnp.asarray(x)
    if x.dtype.kind == "c":
        return complex_gamma(x)
    x = as_float(x)
    return gammasgn(x) * fnp.exp(gammaln(x))


def _digamma_pos(x):
    """psi(x) for x >= 1/2: shift to z >= 10, then the asymptotic series."""
    t = x.dtype.type
    small = x < t(10)
    z = fnp.where(small, x + t(10), x)
    shift = fnp.zeros_like(x)
    for k in range(10):
        shift = shift + t(1) / (x + t(k))
    inv2 = t(1) / (z * z)
    series = fnp.zeros_like(z)
    for k in reversed(range(1, 9)):
        series = (series + t(float(_BERNOULLI_EVEN[k - 1]) / (2 * k))) * inv2
    asym = fnp.log(z) - t(0.5) / z - series
    return fnp.where(small, asym - shift, asym)


@custom_jvp
def _digamma(x):
    t = x.dtype.type
    reflect = x < t(0.5)
    xr = fnp.where(reflect, t(1) - x, x)
    base = _digamma_pos(xr)
    # psi(x) = psi(1 - x) - pi / tan(pi x); sin/cos of the reduced argument keep it exact
    frac = x - fnp.round(x)
    cot = fnp.cos(t(math.pi) * frac) / fnp.sin(t(math.pi) * frac)
    out = fnp.where(reflect, base - t(math.pi) * cot, base)
    pole = (x <= 0) & (fnp.floor(x) == x)
    return fnp.where(pole, fnp.where(x == 0, t(-np.inf), t(np.nan)), out)


@_digamma.defjvp
def _digamma_jvp(primals, tangents):
    (x,), (tx,) = primals, tangents
    return _digamma(x), tx * trigamma(x)


def digamma(x: ArrayLike) -> Array:
    """psi(x) = d/dx log Gamma(x) (scipy.special.digamma): -inf at 0, NaN at the
    negative integers; derivative trigamma.

    >>> from functrans.scipy.special import digamma
    >>> round(float(digamma(1.0)), 12)      # -Euler's gamma
    -0.577215664902
    """
    return _digamma(as_float(x))


def _zeta_value(s, q):
    t = s.dtype.type
    n_direct = 12
    total = fnp.zeros_like(s + q)
    for k in range(n_direct):
        total = total + fnp.power(q + t(k), -s)
    w = q + t(n_direct)
    total = total + fnp.power(w, t(1) - s) / (s - t(1)) + t(0.5) * fnp.power(w, -s)
    # sum_j B_2j/(2j)! s(s+1)...(s+2j-2) w^(-s-2j+1)
    rising = s
    wpow = fnp.power(w, -s - t(1))
    inv_w2 = t(1) / (w * w)
    for j, b in enumerate(_BERNOULLI_EVEN, start=1):
        total = total + t(float(b / math.factorial(2 * j))) * rising * wpow
        rising = rising * (s + t(2 * j - 1)) * (s + t(2 * j))
        wpow = wpow * inv_w2
    return total


def zeta(x: ArrayLike, q: ArrayLike | None = None) -> Array:
    """The Hurwitz zeta function sum_k (k + q)^-x (scipy.special.zeta with q), for
    x > 1 and q > 0 (x == 1 gives inf; other x < 1 or q <= 0 give NaN).  Euler-Maclaurin
    summation after 12 direct terms; differentiable in both arguments by composition.

    >>> from functrans.scipy.special import zeta
    >>> round(float(zeta(2.0, 1.0)), 12)    # pi^2 / 6
    1.644934066848
    """
    if q is None:
        raise TypeError("zeta: q is required (the Riemann zeta function is zeta(x, 1.0))")
    s, q = as_float(x, q)
    t = s.dtype.type
    ok = (s > t(1)) & (q > t(0))
    safe_s = fnp.where(ok, s, t(2))
    safe_q = fnp.where(ok, q, t(1))
    # the series in float64, rounded once: in float32 the rising factorial s (s+1)...
    # overflowed while w^-s underflowed (inf * 0 = NaN: zeta(44.47, 1.08) was NaN, 0.0316)
    val = _zeta_value(safe_s.astype(np.float64), safe_q.astype(np.float64)).astype(s.dtype)
    return fnp.where(ok, val, fnp.where((s == t(1)) & (q > 0), t(np.inf), t(np.nan)))


def trigamma(x):
    """psi'(x) = zeta(2, x) for x > 0, reflected below 1/2:
    psi'(x) = pi^2 / sin^2(pi x) - psi'(1 - x).

    >>> from functrans.scipy._special_gamma import trigamma
    >>> round(float(trigamma(1.0)), 12)
    1.644934066848
    """
    x = as_float(x)
    t = x.dtype.type
    reflect = x < t(0.5)
    xr = fnp.where(reflect, t(1) - x, x)
    base = zeta(t(2) * fnp.ones_like(xr), xr)
    # the reflected branch only where it is taken: elsewhere sin(pi frac) can be 0 (x an
    # integer >= 1), and the unselected branch's infinite derivative would make grad NaN
    frac = fnp.where(reflect, x - fnp.round(x), t(0.5))
    s = fnp.sin(t(math.pi) * frac)
    refl = t(math.pi ** 2) / (s * s) - base
    out = fnp.where(reflect, refl, base)
    return fnp.where((x <= 0) & (fnp.floor(x) == x), t(np.inf), out)


def polygamma(n: ArrayLike, x: ArrayLike) -> Array:
    """The n-th derivative of digamma (scipy.special.polygamma): n = 0 is digamma;
    n >= 1 is (-1)^(n+1) n! zeta(n + 1, x), for x > 0 ((-1)^(n+1) inf at x = 0, -1, ...
    as scipy; n == 1 uses the reflection formula of ``trigamma`` for every x).  Other
    x < 0 for 2 <= n <= 16 by the reflection psi^(n)(x) = (-1)^n psi^(n)(1 - x)
    - pi d^n/dx^n cot(pi x) (scipy sums zeta's series there; this was NaN); NaN for
    n > 16 there.

    >>> from functrans.scipy.special import polygamma
    >>> round(float(polygamma(1, 1.0)), 12)
    1.644934066848
    """
    n_arr = fnp.asarray(n)
    if n_arr.dtype.kind not in "iu" and not isinstance(n, (int, np.integer)):
        raise TypeError(f"polygamma: n must be an integer array, got {n_arr.dtype}")
    x = as_float(x)
    dt = x.dtype
    x = x.astype(np.float64)     # in float64, rounded once (float32's n! zeta was 48 ulp off)
    n_f = fnp.asarray(n_arr, np.float64)
    sign = fnp.where(fnp.remainder(n_f, 2.0) == 0.0, -1.0, 1.0)
    fact = fnp.exp(lgamma(n_f + 1.0))
    pole = (x <= 0) & (fnp.floor(x) == x)     # (-1)^(n+1) inf, scipy's (zeta gave NaN)
    neg = (x < 0) & ~pole
    pos = sign * fact * zeta(n_f + 1.0, fnp.where(neg, 1.0 - x, x))
    higher = fnp.where(neg, _cot_derivative(n, n_f, fnp.where(neg, x, 0.5)) - sign * pos, pos)
    higher = fnp.where(pole, sign * np.inf, higher)
    out = fnp.where(n_f == 0, digamma(x), fnp.where(n_f == 1, trigamma(x), higher))
    return out.astype(dt)


@functools.lru_cache(maxsize=None)
def _cot_polys(top=16):
    """Integer coefficients (lowest power first) of P_n, d^n/dy^n cot(y) = P_n(cot y):
    P_0 = c, P_(n+1) = -(1 + c^2) P_n'(c)."""
    polys = [[0, 1]]
    for _ in range(top):
        d = [k * a for k, a in enumerate(polys[-1])][1:]
        nxt = [0] * (len(d) + 2)
        for k, a in enumerate(d):
            nxt[k] -= a
            nxt[k + 2] -= a
        polys.append(nxt)
    return polys


def _cot_derivative(n, n_f, x):
    """-pi d^n/dx^n cot(pi x) = -pi^(n+1) P_n(cot(pi r)), r = x - round(x) (exact, so
    no digits of pi x are lost for large |x|), for the n in 2..16 (NaN for others)."""
    r = x - fnp.round(x)
    # cos(pi r) as sin(pi (1/2 - |r|)): exactly 0 at half-integers (cos(pi / 2) = 6e-17
    # times P_n's linear coefficient was 2e-2 relative at n = 10)
    c = fnp.sin(math.pi * (0.5 - fnp.abs(r))) / fnp.sin(math.pi * r)
    ns = range(2, 17)
    if isinstance(n, (int, np.integer, np.ndarray)):        # concrete: only those present
        ns = sorted({int(v) for v in np.ravel(n) if 2 <= v <= 16})
    out = fnp.full_like(x, np.nan)
    for k in ns:
        acc = fnp.zeros_like(c)
        for a in reversed(_cot_polys()[k]):
            acc = acc * c + float(a)
        out = fnp.where(n_f == k, -(math.pi ** (k + 1)) * acc, out)
    return out


def _stirling_corr(x):
    """lgamma(x) - ((x - 1/2) log x - x + log(2 pi)/2), by its series, for x >= 10."""
    t = x.dtype.type
    inv2 = t(1) / (x * x)
    acc = fnp.zeros_like(x)
    for k in reversed(range(1, 9)):
        acc = acc * inv2 + t(float(_BERNOULLI_EVEN[k - 1]) / (2 * k * (2 * k - 1)))
    return acc / x


def betaln(a: ArrayLike, b: ArrayLike) -> Array:
    """log|B(a, b)|.  Below 10 the sum of gammaln; above, Stirling's series written
    with log1p of the ratios, so gammaln's large terms never cancel.

    >>> from functrans.scipy.special import betaln
    >>> round(float(betaln(2.0, 3.0)), 12)  # log(1/12)
    -2.484906649788
    """
    a, b = as_float(a, b)
    a, b = fnp.broadcast_arrays(a, b)
    t = a.dtype.type
    lo, hi = fnp.minimum(a, b), fnp.maximum(a, b)
    big_hi = hi >= t(10)
    big_lo = lo >= t(10)
    lo_s = fnp.where(big_lo, lo, t(10))
    hi_s = fnp.where(big_hi, hi, t(10))
    lo_m = fnp.where(big_hi & ~big_lo & (lo > 0), lo, t(1))
    corr = _stirling_corr(hi_s) - _stirling_corr(lo_m + hi_s)
    both = (t(0.5 * math.log(2 * math.pi)) - (lo_s - t(0.5)) * fnp.log1p(hi_s / lo_s)
            - (hi_s - t(0.5)) * fnp.log1p(lo_s / hi_s) - t(0.5) * fnp.log(lo_s + hi_s)
            + _stirling_corr(lo_s) + _stirling_corr(hi_s) - _stirling_corr(lo_s + hi_s))
    one = (gammaln(lo_m) - (hi_s - t(0.5)) * fnp.log1p(lo_m / hi_s)
           - lo_m * fnp.log(lo_m + hi_s) + lo_m + corr)
    direct = gammaln(a) + gammaln(b) - gammaln(a + b)
    return fnp.where(big_lo, both, fnp.where(big_hi & (lo > 0), one, direct))


def beta(a: ArrayLike, b: ArrayLike) -> Array:
    """B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b), with its sign.

    >>> from functrans.scipy.special import beta
    >>> round(float(beta(2.0, 3.0)), 12)
    0.083333333333
    """
    a, b = as_float(a, b)
    sgn = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sgn * fnp.exp(betaln(a, b))


def poch(z: ArrayLike, m: ArrayLike) -> Array:
    """The rising factorial Gamma(z + m) / Gamma(z).

    >>> from functrans.scipy.special import poch
    >>> round(float(poch(3.0, 2.0)), 10)
    12.0
    """
    z, m = as_float(z, m)
    dt = z.dtype
    # in float64, rounded once: float32's gammaln(z + m) - gammaln(z) cancels (poch(1000,
    # 4.1) was 3.5e3 ulp off)
    z, m = z.astype(np.float64), m.astype(np.float64)
    # m = 0 is 1 even at Gamma's poles (z = 0, -1, ...), z = +-inf and NaN (inf - inf
    # there), as scipy; elsewhere the formula gives 1 at m = 0 exactly and keeps the
    # derivative digamma(z) in m (a where on every m = 0 made it 0: JAX, scipy digamma)
    pole = ~fnp.isfinite(z) | ((z <= 0) & (z == fnp.floor(z)))
    one = (m == 0) & pole
    zs = fnp.where(one, 1.0, z)         # the unused branch stays finite (grad)
    sgn = gammasgn(zs + m) * gammasgn(zs)
    val = fnp.where(one, 1.0, sgn * fnp.exp(gammaln(zs + m) - gammaln(zs)))
    return val.astype(dt)


def factorial(n: ArrayLike, exact: bool = False) -> Array:
    """n! = Gamma(n + 1) as floats, 0 for n < 0 (scipy.special.factorial, exact=False).

    >>> from functrans.scipy.special import factorial
    >>> round(float(factorial(5)), 10)
    120.0
    """
    if exact:
        raise ValueError("factorial: exact=True is not supported (as jax.scipy)")
    n = as_float(n)
    dt = n.dtype
    n = n.astype(np.float64)      # in float64, rounded once (float32's 10! was 3628812)
    return fnp.where(n < 0, 0.0, fnp.exp(gammaln(fnp.where(n < 0, 0.0, n) + 1.0))).astype(dt)


def multigammaln(a: ArrayLike, d: int) -> Array:
    """The log of the multivariate gamma function of dimension ``d``.

    >>> from functrans.scipy.special import multigammaln
    >>> round(float(multigammaln(3.0, 2)), 10)
    1.550194994
    """
    d = int(d)
    a = as_float(a)
    t = a.dtype.type
    total = t(d * (d - 1) / 4 * math.log(math.pi)) * fnp.ones_like(a)
    for j in range(d):
        total = total + gammaln(a - t(j / 2))
    return total


def comb(N: ArrayLike, k: ArrayLike, exact: bool = False,
         repetition: bool = False) -> Array:
    """The binomial coefficient C(N, k) as floats (0 where k < 0, N < 0 or k > N);
    with ``repetition``, C(N + k - 1, k).

    >>> from functrans.scipy.special import comb
    >>> round(float(comb(5, 2)), 10)
    10.0
    """
    if exact:
        raise ValueError("comb: exact=True is not supported (as jax.scipy)")
    N, k = as_float(N, k)
    N, k = fnp.broadcast_arrays(N, k)
    t = N.dtype.type
    # choosing nothing from N >= 0 kinds is one way, also for N = 0 (where N + k - 1 < 0)
    empty = (k == 0) & (N >= 0) if repetition else None
    if repetition:
        N = N + k - 1
    ok = (k >= 0) & (N >= 0) & (k <= N)
    Ns, ks = fnp.where(ok, N, t(1)), fnp.where(ok, k, t(0))
    val = fnp.where(ok, fnp.exp(gammaln(Ns + 1) - gammaln(ks + 1) - gammaln(Ns - ks + 1)), t(0))
    return val if empty is None else fnp.where(empty, t(1), val)
