"""Derivatives at special points (0, ±0, ±inf, domain edges), first and second order.

One row per point found by the special-point sweep against JAX 0.10.2 (x64), where
functrans gave NaN and JAX the limit (/work/notes/b29/safegrad2). Each row: a scalar
function, points, the order (1: grad; 2: grad of grad, and jacfwd of jacrev as hessian
does), and the expected values (the mathematical limit, JAX's value).
"""
import numpy as np
import pytest

import functrans as ft
import functrans.nn as fnn
import functrans.numpy as fnp
import functrans.scipy.signal as fss_signal
import functrans.scipy.special as fss
import functrans.scipy.stats as fst

inf = np.inf

ROWS = [
    # d2/dx2 x^(1/3) = -2/9 x^(-5/3): -inf at +0, +inf at -0, 0 at inf (was inf*0 = NaN)
    ("cbrt", fnp.cbrt, [0.0, -0.0, inf, -inf, 8.0], 2, [-inf, inf, -0.0, 0.0, -2 / 9 / 32]),
    ("cbrt", fnp.cbrt, [0.0, -0.0, inf, 8.0], 1, [inf, inf, 0.0, 1 / 12]),
    # d2/dx2 acosh = -x (x^2-1)^(-3/2): -inf at the edge 1 (the reverse of (x-1)(x+1) gave NaN)
    ("arccosh", fnp.arccosh, [1.0, 2.0, inf], 2, [-inf, -2 / 3 ** 1.5, -0.0]),
    ("arccosh", fnp.arccosh, [1.0, 1 + 2.0 ** -26, 1e300, inf], 1,
     [inf, 1 / np.sqrt(2.0 ** -26 * (2 + 2.0 ** -26)), 1e-300, 0.0]),
    # d2/dx2 I_x(2, 3) = 12 ((1-x)^2 - 2x(1-x)): 12 at 0, 0 at 1 (the log-form density's
    # slope was 0 * inf = NaN there; JAX 0.10.2 gives NaN too)
    ("betainc", lambda x: fss.betainc(2.0, 3.0, x), [0.0, 1.0, 0.5], 2,
     [12.0, 0.0, -3.0]),
    ("betainc_a1", lambda x: fss.betainc(1.0, 1.0, x), [0.0, 1.0, 0.5], 1, [1.0, 1.0, 1.0]),
    # beta.cdf's slope at the support's edges is the density (clip's ties halved it)
    ("beta.cdf", lambda x: fst.beta.cdf(x, 1.0, 2.0), [0.0, 1.0, -1.0, 2.0], 1,
     [2.0, 0.0, 0.0, 0.0]),
    ("beta.sf", lambda x: fst.beta.sf(x, 2.0, 1.0), [0.0, 1.0, -1.0, 2.0], 1,
     [0.0, -2.0, 0.0, 0.0]),
    ("beta.cdf", lambda x: fst.beta.cdf(x, 2.0, 3.0), [0.0, 0.5, -1.0, 2.0], 2,
     [12.0, -3.0, 0.0, 0.0]),
    # glu's gate is the logistic primitive: slope 0 where the gate is at -inf (was inf/inf = NaN)
    ("glu", lambda b: fnn.glu(fnp.stack([-fnp.ones_like(b), b]))[0], [-inf, 0.0, inf], 1,
     [0.0, -0.25, 0.0]),
    # i1e'' = e^-|x| (I1'' -+ 2 I1' + I1) is -+1 just right / left of 0 and i1'' is ~0 (the
    # quotient I1(x)/x in the slope's rule cancelled: 6e284 at 1e-300); x^2/2 keeps i1's row
    # away from 0, where rtol alone cannot compare
    ("i1e", fss.i1e, [1e-300, -1e-300, 1e-200, 0.0], 2, [-1.0, 1.0, -1.0, -1.0]),
    ("i1", lambda x: fss.i1(x) + x * x / 2, [1e-300, -1e-300, 1e-200, 0.0], 2,
     [1.0, 1.0, 1.0, 1.0]),
    # cauchy.ppf = tan(pi (q - 1/2)): slope pi (1 + ppf^2), inf at the ends (was 0: constants)
    ("cauchy.ppf", fst.cauchy.ppf, [0.0, -0.0, 1.0, 0.5], 1, [inf, inf, inf, np.pi]),
    ("cauchy.isf", fst.cauchy.isf, [0.0, 1.0, 0.5], 1, [-inf, -inf, -np.pi]),
    # copysign's slope in x1 is |x1|'s (abs's rule, +1 at -0.0, as JAX 0.10.2) times sgn(x2)
    ("copysign", lambda a: fnp.copysign(a, 2.0), [-0.0, 0.0, -1.0, 1.0], 1, [1.0, 1.0, -1.0, 1.0]),
    ("copysign", lambda a: fnp.copysign(a, -0.0), [-0.0, 0.0, -1.0, 1.0], 1,
     [-1.0, -1.0, 1.0, -1.0]),
    # kl_div / rel_entr's x-slope log(x / y) (+ 1) is -inf at x = 0, as finite differences
    # (log(h / y) - 1 -> -inf); a constant branch gave 0 (JAX 0.10.2: -1 and 0)
    ("kl_div", lambda x: fss.kl_div(x, 2.0), [0.0, 2.0, 1.0, -1.0], 1,
     [-inf, 0.0, -np.log(2.0), 0.0]),
    ("rel_entr", lambda x: fss.rel_entr(x, 2.0), [0.0, 2.0, -1.0], 1, [-inf, 1.0, 0.0]),
    ("kl_div_y", lambda y: fss.kl_div(0.0, y), [2.0, 0.5], 1, [1.0, 1.0]),
    # poch(z, m)'s slope in m is poch * digamma(z + m): digamma(z) at m = 0 (a where on
    # m = 0 made it 0); values JAX 0.10.2's grad
    ("poch_dm", lambda m: fss.poch(1.0, m), [0.0, 1.0], 1,
     [-0.5772156649015329, 0.42278433509846713]),
    ("poch_dm_neg_z", lambda m: fss.poch(-0.5, m), [0.0], 1, [0.03648997397857651]),
    ("poch_dm_30", lambda m: fss.poch(30.0, m), [0.0], 1, [3.384438132685525]),
    # log_ndtr' = pdf / cdf ~ -x: +inf at -inf (was exp(-inf + inf) = NaN; JAX 0.10.2 NaN);
    # at -40 the asymptotic series of the Mills ratio (JAX 0.10.2: 40.02496884784338)
    ("norm.logcdf", fst.norm.logcdf, [-inf, inf, -40.0], 1, [inf, 0.0, 40.02496884720726]),
    ("norm.logsf", fst.norm.logsf, [inf, -inf], 1, [-inf, -0.0]),
    # rel_entr with an infinite x or y: slopes log(x/y) + 1 in x, -x/y in y (were NaN;
    # JAX 0.10.2's grad: the same)
    ("rel_entr_y_inf", lambda x: fss.rel_entr(x, inf), [0.5, 2.0], 1, [-inf, -inf]),
    ("rel_entr_x_inf", lambda y: fss.rel_entr(inf, y), [0.5, 2.0], 1, [-inf, -inf]),
    ("rel_entr_dx_at_inf", lambda x: fss.rel_entr(x, 2.0), [inf], 1, [inf]),
    ("rel_entr_dy_at_inf", lambda y: fss.rel_entr(2.0, y), [inf], 1, [0.0]),
    # cauchy / t logpdf at x = +-inf: the limits 0 in x and loc, df / scale in scale (log1p
    # of z^2 gave inf / inf = NaN; JAX 0.10.2 NaN); past |z| = 2 / sqrt(eps) the tail form
    # 2 log|z| - log df keeps exact second derivatives (2 / (x - loc)^2 in x, -df / s^2 in s)
    ("cauchy.logpdf_x", lambda x: fst.cauchy.logpdf(x, 0.3, 1.7), [inf, -inf, 1e200, 3.0], 1,
     [0.0, 0.0, -2e-200, -0.5304518664047152]),
    ("cauchy.logpdf_loc", lambda m: fst.cauchy.logpdf(inf, m, 1.7), [0.3, -inf], 1, [0.0, 0.0]),
    ("cauchy.logpdf_scale", lambda s: fst.cauchy.logpdf(-inf, 0.3, s), [1.7, 0.5], 1,
     [1 / 1.7, 2.0]),
    ("cauchy.logpdf_x", lambda x: fst.cauchy.logpdf(x, 0.3, 1.7), [1e10], 2,
     [2 / (1e10 - 0.3) ** 2]),
    ("cauchy.logpdf_scale", lambda s: fst.cauchy.logpdf(1e10, 0.3, s), [1.7], 2,
     [-1 / 1.7 ** 2]),
    ("t.logpdf_x", lambda x: fst.t.logpdf(x, 4.0, 0.3, 1.7), [inf, -inf, 3.0], 1,
     [0.0, 0.0, -0.7161803713527852]),
    ("t.logpdf_loc", lambda m: fst.t.logpdf(inf, 4.0, m, 1.7), [0.3], 1, [0.0]),
    ("t.logpdf_scale", lambda s: fst.t.logpdf(-inf, 4.0, 0.3, s), [1.7, 3.0], 1,
     [4 / 1.7, 4 / 3.0]),
    ("t.logpdf_scale", lambda s: fst.t.logpdf(1e10, 4.0, 0.3, s), [1.7], 2, [-4 / 1.7 ** 2]),
    # df = inf (the normal law) past z^2 overflow: -z / scale (the unused t side was NaN)
    ("t.logpdf_x_df_inf", lambda x: fst.t.logpdf(x, inf, 0.3, 1.7), [1e200, 3.0], 1,
     [-(1e200 - 0.3) / 1.7 ** 2, -2.7 / 1.7 ** 2]),
]


@pytest.mark.parametrize("name,f,x,order,want", ROWS, ids=[f"{r[0]}-{r[3]}" for r in ROWS])
def test_derivative_at_special_points(name, f, x, order, want):
    x = np.array(x)
    if order == 1:
        got = [ft.vmap(ft.grad(f))(x), ft.vmap(lambda v: ft.jvp(f, (v,), (1.0,))[1])(x)]
    else:
        got = [ft.vmap(ft.grad(ft.grad(f)))(x), ft.vmap(ft.hessian(f))(x)]
    for g in got:
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-12)


def test_cumprod_forward_tangent_behind_an_infinite_entry():
    """The scan's first s entries keep their tangent (combining with the identity (1, 0) gave
    0 * inf = NaN): jvp of cumprod([inf, 1, 2]) along ones is [1, inf, inf], as JAX 0.10.2."""
    x = np.array([np.inf, 1.0, 2.0])
    for v, want in [(x, [1.0, inf, inf]), (-x, [1.0, -inf, inf])]:
        got = ft.jvp(fnp.cumprod, (v,), (np.ones(3),))[1]
        np.testing.assert_array_equal(np.asarray(got), want)
    got = ft.jvp(lambda v: fnp.cumprod(v[::-1])[::-1], (x,), (np.ones(3),))[1]
    np.testing.assert_array_equal(np.asarray(got), [inf, 3.0, 1.0])


@pytest.mark.parametrize("mode", ["same", "valid"])
@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_convolution_gradient_beside_an_infinite_entry(name, mode):
    """Only the kept outputs are computed (a cropped full convolution gave the dropped ones
    a zero cotangent: 0 * inf = NaN in the kernel's gradient). Values as JAX 0.10.2."""
    f = getattr(fnp, name)
    a, v, w = np.array([1.0, 0.0, inf]), np.array([2.0, -1.0]), np.array([1.0, 1.125, 1.25])
    want = {("convolve", "same"): [inf, 1.125], ("convolve", "valid"): [inf, 1.0],
            ("correlate", "same"): [1.125, inf], ("correlate", "valid"): [1.0, inf]}
    got = ft.grad(lambda v: fnp.sum(f(a, v, mode) * w[:3 if mode == "same" else 2]))(v)
    np.testing.assert_array_equal(np.asarray(got), want[name, mode])


def test_cumprod_gradient_behind_an_infinite_entry():
    """d/dv cumprod([inf, v, 2])[2] = 2 inf: the odd-even scan reuses out[1]'s tangent for
    out[2] (the Hillis-Steele scan met 0 * inf from out[1]'s zero cotangent: NaN). As JAX
    0.10.2, whose jvp along v is NaN here too (the constant 2's zero tangent times inf)."""
    for f in [lambda v: fnp.cumprod(fnp.stack([inf, v, 2.0]))[2],
              lambda v: ft.lax.cumprod(fnp.stack([2.0, v, inf]), 0, True)[0]]:
        got = [float(ft.grad(f)(v)) for v in (1.0, -1.0)]
        assert got == [inf, inf]


@pytest.mark.parametrize("name,want", [("convolve", [[inf, 2.0], [inf, 1.0]]),
                                       ("correlate", [[2.0, inf], [1.0, inf]])])
def test_signal_convolution_gradient_beside_an_infinite_entry(name, want):
    """scipy.signal's direct convolution computes only the kept outputs too (as JAX 0.10.2)."""
    f = getattr(fss_signal, name)
    a, w = np.array([1.0, 0.0, inf]), np.array([1.0, 2.0, 3.0])
    for mode, row in zip(["same", "valid"], want):
        k = 3 if mode == "same" else 2
        got = ft.grad(lambda v: fnp.sum(f(a, v, mode) * w[:k]))(np.array([2.0, -1.0]))
        np.testing.assert_array_equal(np.asarray(got), row)


# Values at the same kind of points, against scipy's and JAX 0.10.2's (they agree on each)
VALUE_ROWS = [
    # Gamma(-0.0) = -inf: its sign is -1
    ("gammasgn", fss.gammasgn, [(-0.0,), (0.0,), (-0.5,)], [-1.0, 1.0, -1.0]),
    # poch(z, 0) = 1 even at Gamma's poles (it was inf - inf = NaN)
    ("poch", fss.poch, [(0.0, 0.0), (-3.0, 0.0), (-0.0, 0.0), (0.0, 1.0), (2.5, 0.0)],
     [1.0, 1.0, 1.0, 0.0, 1.0]),
    # a = 0 < b: all mass at 0; b = 0 < a: all at 1; both 0: NaN (was NaN for all)
    ("betainc", fss.betainc, [(0.0, 1.0, 0.3), (0.0, 2.5, 0.0), (0.0, 1.0, 1.0),
                              (1.0, 0.0, 0.3), (3.0, 0.0, 1.0), (0.0, 0.0, 0.3)],
     [1.0, 0.0, 1.0, 0.0, 1.0, np.nan]),
    # S(x) and C(x) at |x| where x * x overflows: +-1/2 (was NaN)
    ("fresnel_s", lambda x: fss.fresnel(x)[0], [(1e300,), (-1e300,), (1e20,), (inf,)],
     [0.5, -0.5, 0.5, 0.5]),
    ("fresnel_c", lambda x: fss.fresnel(x)[1], [(1e300,), (-1e300,), (inf,)], [0.5, -0.5, 0.5]),
    # polygamma(n >= 2, x) at Gamma's poles: (-1)^(n+1) inf, scipy's (was NaN; JAX 0.10.2
    # inf for odd n, NaN for even)
    ("polygamma_poles", fss.polygamma, [(2, 0.0), (2, -1.0), (3, 0.0), (3, -2.0), (4, -0.0)],
     [-inf, -inf, inf, inf, -inf]),
]


@pytest.mark.parametrize("name,fn,args,want", VALUE_ROWS, ids=[r[0] for r in VALUE_ROWS])
def test_values_at_special_points(name, fn, args, want):
    cols = [np.array(c) for c in zip(*args)]
    for got in (fn(*cols), ft.jit(fn)(*cols)):
        np.testing.assert_array_equal(np.asarray(got), np.array(want), err_msg=name)


def test_betainc_grad_at_point_masses_is_zero_not_nan():
    g = ft.grad(lambda x: fss.betainc(0.0, 2.0, x))(0.3)
    assert float(g) == 0.0


@pytest.mark.parametrize("jit", [False, True])
def test_logaddexp_and_cumlogsumexp_slope_of_a_lone_inf_is_one(jit):
    """Fuzz round 10: where one operand alone is +inf, d/dx logaddexp is exp(x - out) =
    exp(inf - inf) = NaN: grad of logaddexp(inf, 1) was (nan, 0) and of cumlogsumexp
    [1, inf] (weights 1, 2) [1, nan]. The maths: 1 for the inf, 0 for the other (the
    ties keep 1/2 each). JAX 0.10.2 gives (1, e) and [6.44, 2.0] there: its finite
    operand gets exp(x - max) with the max's stop-gradient, not a number we copy."""
    f = ft.jit if jit else (lambda g: g)
    inf = np.inf
    for fn in (fnp.logaddexp, fnp.logaddexp2):
        assert [float(v) for v in f(ft.grad(fn, (0, 1)))(inf, 1.0)] == [1.0, 0.0]
        assert [float(v) for v in f(ft.grad(fn, (0, 1)))(-1.0, inf)] == [0.0, 1.0]
        assert [float(v) for v in f(ft.grad(fn, (0, 1)))(inf, inf)] == [0.5, 0.5]
    w = np.arange(1.0, 4.0)
    cum = lambda x: (ft.lax.cumlogsumexp(x) * w[:len(x)]).sum()  # noqa: E731
    for x, want in (([1.0, inf], [1.0, 2.0]), ([-2.0, inf, -2.0], [1.0, 5.0, 0.0]),
                    ([inf, inf, 1.0], [3.5, 2.5, 0.0]), ([-inf, inf], [1.0, 2.0])):
        assert np.asarray(f(ft.grad(cum))(np.array(x))).tolist() == want, x
    _, t = ft.jvp(lambda x: ft.lax.cumlogsumexp(x, reverse=True), (np.array([inf, 1.0]),),
                  (np.ones(2),))
    assert np.asarray(t).tolist() == [1.0, 1.0]
