"""functrans.scipy.special, from one table: values against scipy on dense grids with
edges (per-row tolerances: the accuracy each function documents), jit against eager,
vmap against a Python loop, and first derivatives (forward and reverse) against
central finite differences at a few interior points."""
from __future__ import annotations

import math
from decimal import Decimal, getcontext
from fractions import Fraction
from typing import Callable, NamedTuple

import numpy as np
import pytest
import scipy.special as sps

import functrans as ft
from functrans.scipy import special as fss
from functrans.test_util import check_grads
from tests.public_names import public_names


class Row(NamedTuple):
    name: str
    ours: Callable
    ref: Callable
    grid: tuple            # argument arrays, broadcast together
    rtol: float
    atol: float
    grad_at: tuple         # one interior point, or () when not differentiated


def _mesh(*axes):
    return tuple(a.ravel() for a in np.meshgrid(*axes, indexing="ij"))


# the grid steps off the poles (the functions are ill-conditioned within 1e-9 of them)
_X = np.concatenate([np.linspace(-8.7, 40.3, 491) + 0.0123, [-3.0, 0.0, 1e-8, 0.5, 1.0, 2.0, 171.5, 1e5]])
_POS = np.concatenate([np.geomspace(1e-6, 1e4, 301), [1.0, 2.0, 10.0]])
_WIDE = np.concatenate([np.linspace(-40, 40, 801), [-1e3, 1e3, 0.0, -0.0, np.inf, -np.inf]])
_P = np.concatenate([np.geomspace(1e-300, 0.5, 300), np.linspace(0, 1, 401)])
_A_INC, _X_INC = _mesh(np.geomspace(0.05, 300, 30), np.concatenate([[0.0], np.geomspace(1e-4, 600, 40)]))
_BETA = _mesh(np.geomspace(0.1, 60, 9), np.geomspace(0.1, 60, 9), np.linspace(0, 1, 17))


def _lgamma_decimal(x, prec=50):
    """log Gamma(x) for x > 0 to ~40 digits: shift past 30, then Stirling's series."""
    getcontext().prec = prec
    x, shift = Decimal(x), Decimal(0)
    while x < 30:
        shift -= x.ln()
        x += 1
    bern = [Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30),
            Fraction(5, 66), Fraction(-691, 2730), Fraction(7, 6), Fraction(-3617, 510)]
    out = (x - Decimal("0.5")) * x.ln() - x + (2 * Decimal(math.pi)).ln() / 2 + shift
    for k, b in enumerate(bern, 1):
        out += Decimal(b.numerator) / Decimal(b.denominator) / (2 * k * (2 * k - 1) * x ** (2 * k - 1))
    return out


def _betaln_reference(a, b):
    """scipy's betaln loses up to ~1e-11 (relative) for large, unequal arguments:
    the reference is computed in 50-digit decimal arithmetic instead."""
    return np.array([float(_lgamma_decimal(x) + _lgamma_decimal(y) - _lgamma_decimal(Decimal(x) + Decimal(y)))
                     for x, y in zip(np.ravel(a), np.ravel(b))]).reshape(np.shape(a))


def _math_erfc(x):
    return np.vectorize(math.erfc)(x)


ROWS = [
    Row("gammaln", fss.gammaln, sps.gammaln, (_X,), 1e-13, 1e-13, (3.7,)),
    Row("gamma", fss.gamma, sps.gamma, (_X,), 1e-13, 0, (3.7,)),
    Row("gammasgn", fss.gammasgn, sps.gammasgn, (_X,), 0, 0, ()),
    Row("digamma", fss.digamma, sps.digamma, (_X,), 1e-13, 1e-13, (-2.3,)),
    Row("polygamma1", lambda x: fss.polygamma(1, x), lambda x: sps.polygamma(1, x),
        (_X[_X != np.round(_X)],), 1e-13, 0, (0.7,)),
    Row("polygamma3", lambda x: fss.polygamma(3, x), lambda x: sps.polygamma(3, x),
        (_POS,), 1e-13, 0, (1.7,)),
    Row("zeta", fss.zeta, sps.zeta, _mesh([1.5, 2.0, 3.5, 10.0, 40.0], _POS), 1e-13, 0, (2.5, 1.3)),
    Row("betaln", fss.betaln, _betaln_reference, _mesh(_POS[::15], _POS[::15]), 1e-14, 1e-14,
        (2.5, 1.3)),
    Row("beta", fss.beta, lambda a, b: np.exp(_betaln_reference(a, b)),
        _mesh(_POS[::15], _POS[::15]), 1e-12, 0, (2.5, 1.3)),
    Row("poch", fss.poch, sps.poch, _mesh(np.linspace(0.1, 20, 25), np.linspace(-3, 10, 27)),
        1e-12, 0, (2.5, 1.3)),
    Row("factorial", fss.factorial, sps.factorial, (np.arange(-3, 60.0),), 1e-13, 0, ()),
    Row("comb", fss.comb, sps.comb, _mesh(np.arange(-2, 40.0), np.arange(-2, 42.0)), 1e-12, 0, ()),
    Row("multigammaln", lambda a: fss.multigammaln(a, 3), lambda a: sps.multigammaln(a, 3),
        (np.linspace(1.01, 50, 200),), 1e-13, 1e-13, (2.5,)),
    Row("gammainc", fss.gammainc, sps.gammainc, (_A_INC, _X_INC), 1e-12, 1e-13, (2.5, 1.3)),
    Row("gammaincc", fss.gammaincc, sps.gammaincc, (_A_INC, _X_INC), 1e-12, 1e-300, (2.5, 4.1)),
    Row("betainc", fss.betainc, sps.betainc, _BETA, 1e-12, 1e-13, (2.5, 1.3, 0.3)),
    Row("erf", fss.erf, sps.erf, (_WIDE,), 1e-15, 1e-16, (0.4,)),
    Row("erfc", fss.erfc, _math_erfc, (_WIDE,), 1e-14, 0, (1.9,)),
    Row("erfcx", fss.erfcx, sps.erfcx, (_WIDE,), 1e-13, 0, (1.9,)),
    Row("exp1", fss.exp1, sps.exp1, (np.concatenate([_POS, [0.0, -1.0, np.inf, 700.0]]),), 1e-13, 0,
        (1.7,)),
    Row("erfinv", fss.erfinv, sps.erfinv, (np.linspace(-1, 1, 801),), 1e-13, 1e-15, (0.3,)),
    # scipy rounds x / sqrt(2) first: ~x^2 eps relative in the far left tail
    Row("ndtr", fss.ndtr, sps.ndtr, (_WIDE,), 5e-13, 1e-300, (-1.2,)),
    Row("log_ndtr", fss.log_ndtr, sps.log_ndtr, (_WIDE,), 5e-13, 1e-300, (-7.0,)),
    Row("ndtri", fss.ndtri, sps.ndtri, (_P,), 1e-14, 0, (0.02,)),
    Row("expit", fss.expit, sps.expit, (_WIDE,), 1e-15, 0, (0.4,)),
    Row("logit", fss.logit, sps.logit, (np.linspace(0, 1, 201),), 1e-13, 1e-15, (0.3,)),
    Row("xlogy", fss.xlogy, sps.xlogy, _mesh(np.linspace(-1, 3, 9), np.linspace(0, 4, 9)),
        1e-15, 0, (1.5, 2.5)),
    Row("xlog1py", fss.xlog1py, sps.xlog1py, _mesh(np.linspace(-1, 3, 9), np.linspace(-1, 4, 11)),
        1e-15, 0, (1.5, 2.5)),
    Row("entr", fss.entr, sps.entr, (np.linspace(-1, 5, 61),), 1e-15, 0, (1.5,)),
    Row("kl_div", fss.kl_div, sps.kl_div, _mesh(np.linspace(-1, 3, 9), np.linspace(-1, 4, 11)),
        1e-14, 1e-15, (1.5, 2.5)),
    Row("rel_entr", fss.rel_entr, sps.rel_entr, _mesh(np.linspace(-1, 3, 9), np.linspace(-1, 4, 11)),
        1e-14, 1e-15, (1.5, 2.5)),
    Row("i0", fss.i0, sps.i0, (_WIDE,), 1e-14, 0, (2.5,)),
    Row("i0e", fss.i0e, sps.i0e, (_WIDE,), 1e-14, 0, (-2.5,)),
    Row("i1", fss.i1, sps.i1, (_WIDE,), 1e-14, 0, (2.5,)),
    Row("i1e", fss.i1e, sps.i1e, (_WIDE,), 1e-14, 0, (-0.5,)),
]
IDS = [r.name for r in ROWS]


def _args(row, n=None):
    args = [np.asarray(a, np.float64) for a in np.broadcast_arrays(*row.grid)]
    return [a[:n] for a in args] if n else args


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_value_against_scipy(row):
    args = _args(row)
    with np.errstate(all="ignore"):
        want = row.ref(*args)
    got = np.asarray(row.ours(*args))
    assert got.shape == want.shape and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=row.rtol, atol=row.atol, equal_nan=True,
                               err_msg=row.name)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_jit_equals_eager_and_vmap_equals_loop(row):
    args = _args(row, 40)
    eager = np.asarray(row.ours(*args))
    # native exp/log may differ from numpy's by an ulp or two
    np.testing.assert_allclose(np.asarray(ft.jit(row.ours)(*args)), eager,
                               rtol=1e-13, atol=1e-300, equal_nan=True)
    loop = np.array([np.asarray(row.ours(*[a[i] for a in args])) for i in range(8)])
    batched = np.asarray(ft.vmap(row.ours)(*[a[:8] for a in args]))
    np.testing.assert_allclose(batched, loop, rtol=1e-14, atol=1e-300, equal_nan=True)


@pytest.mark.parametrize("row", [r for r in ROWS if r.grad_at], ids=[r.name for r in ROWS if r.grad_at])
def test_derivatives_against_finite_differences(row):
    args = tuple(np.float64(a) for a in row.grad_at)
    check_grads(row.ours, args, order=1, modes=("fwd", "rev"), rtol=1e-5, atol=1e-7)


def test_logsumexp_weights_sign_axis_keepdims():
    a = np.array([[1.0, 2.0, -np.inf], [3.0, 4.0, 0.5]])
    b = np.array([1.0, -2.0, 3.0])
    for kw in ({}, {"axis": 1}, {"axis": 0, "keepdims": True}, {"b": b, "axis": 1}):
        np.testing.assert_allclose(np.asarray(fss.logsumexp(a, **kw)), sps.logsumexp(a, **kw),
                                   rtol=1e-14)
    got = fss.logsumexp(a, axis=1, b=b, return_sign=True)
    want = sps.logsumexp(a, axis=1, b=b, return_sign=True)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(ft.grad(lambda x: fss.logsumexp(x))(a[1])),
                               sps.softmax(a[1]), rtol=1e-14)


def test_softmax_and_log_softmax_default_to_all_axes():
    x = np.array([[1.0, 2.0], [3.0, 5.0]])
    np.testing.assert_allclose(np.asarray(fss.softmax(x)), sps.softmax(x), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(fss.log_softmax(x, axis=1)),
                               sps.log_softmax(x, axis=1), rtol=1e-14)


def test_bernoulli_numbers_and_errors():
    got = np.asarray(fss.bernoulli(20))
    np.testing.assert_allclose(got, sps.bernoulli(20), rtol=1e-11)  # scipy's own rounding
    assert got[20] == -174611 / 330 and got[12] == -691 / 2730
    with pytest.raises(TypeError, match="q is required"):
        fss.zeta(2.0)
    with pytest.raises(ValueError, match="exact"):
        fss.factorial(3, exact=True)


def test_polygamma_derivatives_at_positive_integers():
    # trigamma's reflection branch (1/sin^2(pi x)) is unselected at x >= 1/2 but was
    # still differentiated: at integers its infinite derivative turned grad into NaN
    x = np.array([1.0, 2.0, 3.0, 0.25])
    for n in (0, 1, 2):
        got = ft.vmap(ft.grad(lambda v: fss.polygamma(n, v)))(x)
        np.testing.assert_allclose(np.asarray(got), sps.polygamma(n + 1, x), rtol=1e-12)
    got2 = ft.vmap(ft.grad(ft.grad(fss.digamma)))(x)
    np.testing.assert_allclose(np.asarray(got2), sps.polygamma(2, x), rtol=1e-12)


def test_polygamma_at_negative_non_integers():
    """n >= 2 at x < 0 off the poles was NaN (scipy sums zeta's series there): the
    reflection psi^(n)(x) = (-1)^n psi^(n)(1 - x) - pi d^n/dx^n cot(pi x), against scipy
    off the half-integers; there, for even n, psi^(n)(x) = psi^(n)(1 - x) exactly (the
    series' terms cancel in pairs), where scipy's own series is off (n = 10 at -7.5:
    -3.15316e-4 for -3.15342e-4)."""
    x = np.array([-0.25, -2.3, -10.7, -0.1, -5.9, -100.3, -1.05, -1e-5, 2.5, -2.0])
    h = np.array([-0.5, -1.5, -3.5, -7.5])
    for n in (2, 3, 4, 5, 6, 9, 12, 16):
        for f in (fss.polygamma, ft.jit(fss.polygamma)):
            np.testing.assert_allclose(np.asarray(f(n, x)), sps.polygamma(n, x), rtol=1e-14,
                                       err_msg=str(n))
            want = sps.polygamma(n, 1 - h) if n % 2 == 0 else sps.polygamma(n, h)
            np.testing.assert_allclose(np.asarray(f(n, h)), want, rtol=1e-14, err_msg=str(n))
    nn = np.array([2, 3, 4, 6])
    xs = np.array([-0.25, -2.3, -10.7, -1.05])
    np.testing.assert_allclose(np.asarray(ft.jit(fss.polygamma)(nn, xs)),
                               sps.polygamma(nn, xs), rtol=1e-14)
    got = fss.polygamma(3, np.float32(-2.3))
    assert got.dtype == np.float32
    np.testing.assert_allclose(float(got), sps.polygamma(3, -2.3), rtol=1e-6)
    np.testing.assert_allclose(float(fss.polygamma(2, -1e15 - 0.5)), -1e-30, rtol=1e-6)
    assert np.isnan(float(fss.polygamma(17, -0.25)))          # beyond the stored orders
    g = ft.vmap(ft.grad(lambda v: fss.polygamma(2, v)))(x[:7])
    np.testing.assert_allclose(np.asarray(g), sps.polygamma(3, x[:7]), rtol=1e-13)


def test_incomplete_functions_differentiate_in_their_shape_parameters():
    h = 1e-6
    for f, args, i in ((fss.gammainc, (2.5, 1.3), 0), (fss.gammaincc, (2.5, 4.1), 0),
                       (fss.betainc, (2.5, 1.3, 0.3), 1)):
        up = list(args); up[i] += h
        dn = list(args); dn[i] -= h
        fd = (float(f(*up)) - float(f(*dn))) / (2 * h)
        got = float(ft.grad(f, argnums=i)(*args))
        assert abs(got - fd) < 1e-7, (f.__name__, got, fd)


def test_public_names_are_exactly_all():
    public = public_names(fss)
    assert public == set(fss.__all__)


def test_logsumexp_of_an_empty_axis_is_minus_inf():
    # JAX's testLogSumExpWhere runs shape (0,): -inf (sign 0), as scipy; it raised here
    assert float(fss.logsumexp(np.zeros(0))) == -np.inf == sps.logsumexp(np.zeros(0))
    np.testing.assert_array_equal(fss.logsumexp(np.zeros((0, 3)), axis=0), [-np.inf] * 3)
    out, sign = fss.logsumexp(np.zeros(0), return_sign=True)
    assert (float(out), float(sign)) == (-np.inf, 0.0)
    assert float(fss.logsumexp(np.zeros(0), where=np.zeros(0, bool))) == -np.inf
    assert float(ft.jit(fss.logsumexp)(np.zeros(0))) == -np.inf
    assert ft.grad(lambda x: fss.logsumexp(x))(np.zeros(0)).shape == (0,)


def test_logsumexp_reduces_over_the_shape_a_and_b_broadcast_to():
    # a (4,), b (3, 4), axis=-1: the sum runs over the broadcast (3, 4) (JAX, scipy);
    # the axis was taken against a alone, giving shape (1, 4) for keepdims / raising
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=4), rng.normal(size=(3, 4))
    for kw in [dict(axis=-1), dict(axis=-2), dict(axis=1, keepdims=True), dict(axis=None)]:
        got, sign = fss.logsumexp(a, b=b, return_sign=True, **kw)
        want, wsign = sps.logsumexp(a, b=b, return_sign=True, **kw)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)
        np.testing.assert_array_equal(np.asarray(sign), wsign)
    g = ft.grad(lambda a: fss.logsumexp(a, b=np.abs(b), axis=-1).sum())(a)
    e = np.abs(b) * np.exp(a)
    np.testing.assert_allclose(g, (e / e.sum(-1, keepdims=True)).sum(0), rtol=1e-13)


def test_xlogy_xlog1py_entr_edges_as_jax_and_scipy():
    # from JAX's lax_scipy_test: NaN in y propagates (it gave 0), the Hessian at x = 0
    # keeps the mixed term 1 / y (it gave 0: the d/dy rule was masked at every x = 0),
    # entr'(0) = +inf forward and reverse (it gave 0)
    assert np.isnan(float(fss.xlogy(0.0, np.nan))) and np.isnan(float(fss.xlog1py(0.0, np.nan)))
    assert float(fss.xlogy(0.0, 0.0)) == 0.0 == float(fss.xlog1py(0.0, -1.0))
    for f, mixed in [(fss.xlogy, 1 / 3), (fss.xlog1py, 1 / 4)]:
        h = ft.hessian(f, argnums=(0, 1))(0.0, 3.0)
        np.testing.assert_allclose(np.array(h, dtype=float), [[0, mixed], [mixed, 0]], rtol=1e-15)
        check_grads(f, (0.5, 3.0), order=2)
    assert float(ft.jacfwd(fss.entr)(0.0)) == np.inf == float(ft.jacrev(fss.entr)(0.0))
    x = np.array([-1.0, 0.0, 2.0, np.nan])
    np.testing.assert_array_equal(np.asarray(fss.entr(x)), sps.entr(x))
    assert not np.signbit(np.asarray(fss.entr(0.0)))
    np.testing.assert_allclose(ft.grad(fss.entr)(2.0), -np.log(2.0) - 1)
    assert float(ft.grad(fss.entr)(-1.0)) == 0.0


def test_logit_derivative_is_jaxs_rule_inf_at_0_and_1():
    """JAX's logit derivative 1 / (x (1 - x)): through the quotient it was NaN at 0 and 1
    (values below from JAX 0.10.2, x64)."""
    from functrans.scipy.special import logit
    g = ft.grad(lambda x: ft.numpy.sum(logit(x)))
    x = np.array([0.5, 0.0, 1.0, 0.2])
    for got in (g(x), ft.jit(g)(x)):
        np.testing.assert_allclose(got, [4.0, np.inf, np.inf, 6.25], rtol=1e-15)
    np.testing.assert_allclose(ft.hessian(logit)(0.3), -9.070294784580499, rtol=1e-13)


def test_erfcx_derivative_far_out_is_not_cancellation_noise():
    """erfcx' = 2x erfcx(x) - 2/sqrt(pi) cancelled: 0 or ~1e-7 noise in float32 from
    x ~ 1e3 (fuzz round 8: erfcx(-1e4 x)); now -2 s R(s) of the far form, float64 below.
    The slope is -(1/sqrt(pi)) sum (-1)^(n+1) (2n-1)!! / (2^(n-1) x^(2n)), n >= 1."""
    x = np.array([50.0, 1e3, 1e4, 1e8, 1e200, np.inf])
    with np.errstate(over="ignore"):
        want = -sum((-1.0) ** (n + 1) * np.prod(np.arange(1, 2 * n, 2)) / (2.0 ** (n - 1) * x ** (2 * n))
                    for n in range(1, 8)) / np.sqrt(np.pi)
    for dt, rtol in ((np.float64, 1e-13), (np.float32, 1e-6)):
        for fn in (ft.vmap(ft.grad(fss.erfcx)), ft.jit(ft.vmap(ft.grad(fss.erfcx)))):
            g = np.asarray(fn(x.astype(dt) if dt == np.float64 else np.minimum(x, 1e30).astype(dt)))
            assert g.dtype == dt
            w = want if dt == np.float64 else np.where(x > 1e30, 0.0, want)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=0)


def test_gammainc_x_slope_at_infinity_and_at_zero_for_a_one():
    """d/dx P(a, x) is 0 at x = inf (JAX 0.10.2: 0; the log form gave inf - inf = NaN) and
    1 at (a, x) = (1, 0) (P(1, x) = 1 - e^-x; the log form gave 0 * -inf = NaN)."""
    x = np.array([0.0, 1.0, np.inf])
    for a, want in [(1.0, [1.0, np.exp(-1), 0.0]), (2.0, [0.0, np.exp(-1), 0.0])]:
        np.testing.assert_allclose(ft.vmap(ft.grad(lambda x: fss.gammainc(a, x)))(x), want, rtol=1e-14)
        np.testing.assert_allclose(ft.vmap(ft.grad(lambda x: fss.gammaincc(a, x)))(x),
                                   np.negative(want), rtol=1e-14)
