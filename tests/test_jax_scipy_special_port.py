"""Regressions found by running JAX 0.10.2's tests/lax_scipy_special_functions_test.py
against functrans (driver: /work/jt30/jtscipy). Reference values: scipy 1.17 (whose
boundary conventions JAX 0.10.2's tests check). Each test names the JAX test it comes from."""
from __future__ import annotations

import numpy as np
import scipy.special as osp_special

import functrans as ft
from functrans.scipy import special


def test_gammainc_and_gammaincc_at_a_zero():
    # testGammaIncBoundaryValues / testGammaIncCBoundaryValues: P(0, x) = 1 and Q(0, x) = 0
    # for x > 0 (the limit; scipy >= 1.16 and JAX), functrans gave NaN
    nan, inf = np.nan, np.inf
    a = np.array([0, 0, 0, 1, nan, 1, nan, 0, 1, 1, nan])
    x = np.array([0, 1, 2, 0, 1, nan, nan, inf, inf, -1, inf])
    want_p = [nan, 1, 1, 0, nan, nan, nan, 1, 1, nan, nan]
    want_q = [nan, 0, 0, 1, nan, nan, nan, 0, 0, nan, nan]
    for f, want in ((special.gammainc, want_p), (special.gammaincc, want_q)):
        np.testing.assert_array_equal(f(a, x), want)
        np.testing.assert_array_equal(ft.jit(f)(a, x), want)
    np.testing.assert_array_equal(special.gammainc(a.astype(np.float32), x.astype(np.float32)),
                                  np.array(want_p, np.float32))


def test_gammasgn_of_nan_is_nan():
    # testGammaSign: gammasgn(NaN) was 1 (scipy and JAX: NaN)
    x = np.array([-np.inf, -0.0, 0.0, np.inf, np.nan])
    np.testing.assert_array_equal(special.gammasgn(x), [np.nan, -1.0, 1.0, 1.0, np.nan])
    np.testing.assert_array_equal(special.gammasgn(x), osp_special.gammasgn(x))


def test_comb_with_repetition_of_nothing_is_one():
    # testCombBoundaryValues (repetition=True): C(N + k - 1, k) at k = 0 is 1 for N >= 0,
    # also N = 0 (where N + k - 1 = -1); functrans gave 0
    n, k = np.meshgrid([-1.0, 0.0, 1.0, 2.0, 0.5], [-1.0, 0.0, 1.0, 2.0])
    got = special.comb(n.ravel(), k.ravel(), repetition=True)
    np.testing.assert_allclose(got, [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 1, 2, 0,
                                     0, 0, 1, 3, 0], rtol=1e-13)
    np.testing.assert_array_equal(special.comb(np.array([0.0, 0.0]), np.array([0.0, 4.0]),
                                               repetition=True),
                                  osp_special.comb([0, 0], [0, 4], repetition=True))


def test_betainc_with_infinite_parameters():
    # testBetaIncBoundaryValues: b = inf > a > 0 puts the mass at 0 (I = 1 inside (0, 1]),
    # a = inf > b > 0 at 1 (I = 0 below 1); functrans gave NaN, and 0 / 1 for a = b = inf
    # (scipy and JAX: NaN). Expected values: scipy 1.17 over the test's grid.
    nan, inf, eps = np.nan, np.inf, np.finfo(np.float64).eps
    s = np.array([nan, -0.5, inf, 0, eps, 1, 2.5])
    a, b, x = np.meshgrid(s, s, np.array([nan, -0.5, 0, 0.5, 1, 1.5, 0.3]))
    want = osp_special.betainc(a, b, x)
    np.testing.assert_allclose(special.betainc(a, b, x), want, rtol=1e-12, atol=0)
    np.testing.assert_allclose(special.betainc(a.astype(np.float32), b.astype(np.float32),
                                               x.astype(np.float32)), want, rtol=1e-5, atol=0)
    np.testing.assert_array_equal(special.betainc(np.array([1.0, inf, inf]),
                                                  np.array([inf, 2.0, inf]), 0.5),
                                  [1.0, 0.0, nan])
