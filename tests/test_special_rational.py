"""erfc, erfcx, ndtr, log_ndtr, dawsn (Cody's rational approximations) and i0e, i1e,
i0, i1 (Cephes' Chebyshev series): values to about one float64 ulp on dense grids that reach
the tails (erfc's underflow, erfcx to 1e200, log_ndtr to -1e5), 50-digit reference
values where scipy itself loses digits, special values, float32 rounded once from
float64, and first and second derivatives."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special as sps

import functrans as ft
from functrans.scipy import special as fss
from functrans.test_util import check_grads

# mpmath at 50 digits (erfcx beyond 1e6 and log_ndtr below -1e4 by their asymptotic
# series, exact to far more than 17 digits there)
REFERENCE = {
    "erfc": [(-5.5, 1.9999999999999926), (-0.3, 1.3286267594591274),
             (0.2, 0.77729741078952153), (0.46875, 0.50738652678206201),
             (0.5, 0.47950012218695346), (3.99, 1.6739211364520814e-8),
             (4.01, 1.4196939421371051e-8), (10.0, 2.0884875837625448e-45),
             (26.5, 2.2109076642637343e-307)],
    "erfcx": [(-26.0, 7.6577249314905684e+293), (-3.0, 16205.988853999587),
              (-0.2, 1.2726020284831957), (0.3, 0.73459933456765515),
              (2.0, 0.25539567631050574), (4.5, 0.12248480427384142),
              (50.0, 0.011281536265323773), (1e8, 5.6418958354775626e-9),
              (1e200, 5.641895835477563e-201)],
    "ndtr": [(-37.0, 5.7255712225245768e-300), (-20.0, 2.7536241186062337e-89),
             (-5.0, 2.8665157187919391e-7), (-0.7, 0.24196365222307303),
             (0.5, 0.6914624612740131), (3.0, 0.99865010196836991)],
    "log_ndtr": [(-1e5, -5000000012.431864), (-1000.0, -500007.82669481218),
                 (-40.0, -804.60844201375379), (-2.0, -3.7831843336820319),
                 (0.0, -0.69314718055994531), (2.0, -0.023012909328963488),
                 (10.0, -7.6198530241605261e-24), (30.0, -4.9067139271481871e-198)],
    "i0e": [(1e-6, 0.99999900000075), (0.5, 0.64503527044915007),
            (4.0, 0.2070019212239867), (7.99, 0.14352476537933485),
            (8.01, 0.14333897941113851), (30.0, 0.073145946482237294),
            (1e5, 0.0012615678379767768)],
    "i1e": [(1e-6, 4.9999950000031248e-7), (0.5, 0.1564208031848717),
            (4.0, 0.17875083950243533), (7.99, 0.13421733957828099),
            (8.01, 0.13406776900984483), (30.0, 0.071916330598647555),
            (1e5, 0.0012615615301218171)],
    "dawsn": [(-0.01, -0.0099993333599992383), (0.5, 0.4244363835020223),
              (3.2, 0.16546199987867519), (3.3, 0.15978858047449506),
              (6.2, 0.081738006558247021), (6.3, 0.080405294895388344),
              (20.0, 0.025031367926403672), (1e10, 5.0e-11)],
}
NAMES = ["erfc", "erfcx", "ndtr", "log_ndtr", "i0e", "i1e", "i0", "i1", "dawsn"]


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_against_50_digit_references(name):
    x, want = np.array(REFERENCE[name]).T
    f = getattr(fss, name)
    for got in (f(x), ft.jit(f)(x)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=2.5e-15, atol=0, err_msg=name)


def test_erfc_against_libm_on_a_dense_grid_to_its_underflow():
    # glibc's erfc is within an ulp everywhere (scipy's loses ~6e-14 near x = 23)
    x = np.concatenate([np.linspace(-6.5, 27.25, 5401), np.geomspace(1e-300, 1, 61),
                        -np.geomspace(1e-300, 1, 61)])
    want = np.array([math.erfc(v) for v in x])
    for got in (fss.erfc(x), ft.jit(fss.erfc)(x)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1.5e-15, atol=0)


def test_normal_cdf_erfcx_and_bessel_against_scipy_where_scipy_is_exact():
    x = np.linspace(-3.0, 3.0, 1201)    # beyond, scipy's ndtr has rounded x / sqrt(2)
    wide = np.linspace(-60.0, 60.0, 2401)
    rows = [("ndtr", x, 2e-15), ("log_ndtr", x, 2e-15), ("erfcx", np.linspace(-5, 25, 1501), 2e-15),
            ("i0e", wide, 2e-15), ("i1e", wide, 3e-15), ("i0", wide, 2e-15), ("i1", wide, 3e-15),
            ("dawsn", wide, 3e-15)]   # scipy's dawsn is 2e-15 off near 45 (ours 4e-16)
    for name, grid, rtol in rows:
        got = np.asarray(ft.jit(getattr(fss, name))(grid))
        np.testing.assert_allclose(got, getattr(sps, name)(grid), rtol=rtol, atol=0, err_msg=name)


def test_erfcx_of_huge_arguments_and_log_ndtr_far_left():
    # erfcx(x) = 1 / (sqrt(pi) x) once x^2 overflows (it returned 0 beyond 1.3e154)
    x = np.geomspace(1e6, 1e300, 50)
    with np.errstate(over="ignore"):
        want = 1 / (math.sqrt(math.pi) * x) * (1 - 0.5 / x ** 2)
    np.testing.assert_allclose(np.asarray(fss.erfcx(x)), want, rtol=1e-15)
    # log_ndtr(x) = -x^2/2 - log(-x sqrt(2 pi)) + log(1 - 1/x^2 + 3/x^4) for x << 0
    x = -np.geomspace(1e3, 1e150, 40)
    with np.errstate(over="ignore"):
        want = -x * x / 2 - np.log(-x * math.sqrt(2 * math.pi)) + np.log1p(-1 / x ** 2 + 3 / x ** 4)
    np.testing.assert_allclose(np.asarray(fss.log_ndtr(x)), want, rtol=1e-15)


@pytest.mark.parametrize("name", NAMES)
def test_special_values_as_scipy(name):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, -1e-310])
    with np.errstate(all="ignore"):
        want = getattr(sps, name)(x)
    for got in (getattr(fss, name)(x), ft.jit(getattr(fss, name))(x)):
        got = np.asarray(got)
        np.testing.assert_allclose(got, want, rtol=2e-15, atol=0, equal_nan=True, err_msg=name)
        signed = ~np.isnan(want)
        np.testing.assert_array_equal(np.signbit(got[signed]), np.signbit(want[signed]), err_msg=name)


@pytest.mark.parametrize("name", NAMES)
def test_float32_is_the_float64_value_rounded_once(name):
    x = np.concatenate([np.linspace(-12, 12, 481), [0.0, np.inf, -np.inf, np.nan]]).astype(np.float32)
    f = getattr(fss, name)
    with np.errstate(all="ignore"):
        want = np.asarray(f(x.astype(np.float64))).astype(np.float32)
    for got in (f(x), ft.jit(f)(x)):
        assert np.asarray(got).dtype == np.float32
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=name)


@pytest.mark.parametrize("name", ["erfc", "erfcx", "ndtr", "log_ndtr", "i0e", "i1e", "dawsn"])
def test_first_and_second_derivatives(name):
    # one point in each range of the approximations (erf near 0, Cody's two rationals;
    # Chebyshev on [0, 8] and beyond), both signs
    f = getattr(fss, name)
    for x in (0.3, -2.5, 6.0, 11.0):
        check_grads(f, (np.float64(x),), order=2, modes=("fwd", "rev"), rtol=1e-5, atol=1e-9)


def test_derivative_values():
    x = np.array([-30.0, -3.0, -0.2, 0.0, 0.3, 2.0, 9.0])
    g = ft.vmap(ft.grad(fss.log_ndtr))(x)
    np.testing.assert_allclose(np.asarray(g), np.exp(sps.log_ndtr(x) * 0 - x * x / 2
                                                     - sps.log_ndtr(x)) / math.sqrt(2 * math.pi),
                               rtol=1e-13)
    g = ft.vmap(ft.grad(fss.i1e))(x)
    want = sps.i0e(x) - np.where(x == 0, 0.5, sps.i1e(x) / np.where(x == 0, 1, x)) - np.sign(x) * sps.i1e(x)
    np.testing.assert_allclose(np.asarray(g), np.where(x == 0, 0.5, want), rtol=1e-13)
