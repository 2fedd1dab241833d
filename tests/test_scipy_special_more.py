"""functrans.scipy.special expn, sici, fresnel, bessel_jn and hyp1f1 against scipy (and
quadrature where scipy's own value is off), across the seams between series and
continued fractions; derivatives against finite differences; jit (native: no host
step) and vmap."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.integrate as sint
import scipy.special as ssp

import functrans as ft
from functrans.scipy import special as fsp
from functrans.test_util import check_grads


def _rel(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(np.isinf(got), np.isinf(want))
    fin = np.isfinite(want)
    assert (got[~fin] == want[~fin]).all()
    return float(np.max(np.abs(got[fin] - want[fin]) / np.maximum(np.abs(want[fin]), 1e-300)))


_X = np.concatenate([np.linspace(0, 3, 301), np.linspace(3, 60, 400),
                     [5e-4, 1e-8, 100.0, 700.0, np.inf]])


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 10, 30, 50])
def test_expn_against_scipy(n):
    assert _rel(fsp.expn(n, _X), ssp.expn(n, _X)) < 5e-14


def test_expn_large_order_against_quadrature_and_edges():
    # scipy's large-n expansion is 2.5e-7 off here; the integral itself agrees with us
    quad, _ = sint.quad(lambda t: np.exp(-40 * (t - 1) - 80 * np.log(t)), 1, np.inf,
                        epsabs=0, epsrel=1e-13, limit=200)
    assert abs(float(fsp.expn(80, 40.0)) / (quad * np.exp(-40)) - 1) < 1e-13
    got = np.asarray(fsp.expn(np.array([2.0, 1.0, 0.0, -1.0, 1.5, 2.0]),
                              np.array([0.0, 0.0, 0.0, 1.0, 1.0, -1.0])))
    assert got[0] == 1.0 and got[1] == np.inf and got[2] == np.inf     # E_n(0) = 1/(n-1)
    assert np.isnan(got[3:]).all()


def test_sici_against_scipy():
    x = np.concatenate([-_X[::3], _X, np.linspace(3.5, 4.5, 101), [1e5]])
    si, ci = fsp.sici(x)
    want_si, want_ci = ssp.sici(x)
    assert _rel(si, want_si) < 1e-15
    # Ci has a zero at 0.6165: absolute error there, relative elsewhere
    np.testing.assert_allclose(np.asarray(ci), want_ci, rtol=2e-15, atol=1e-15)


def test_fresnel_against_scipy():
    x = np.concatenate([-_X[::3], _X, np.linspace(1.0, 2.5, 301), [1e5]])
    s, c = fsp.fresnel(x)
    want_s, want_c = ssp.fresnel(x)
    assert _rel(s, want_s) < 2e-15
    assert _rel(c, want_c) < 2e-15


def test_bessel_jn_against_scipy():
    z = np.linspace(-20, 20, 161)
    got = np.asarray(fsp.bessel_jn(z, v=5))
    assert got.shape == (6, 161)
    want = np.stack([ssp.jv(k, z) for k in range(6)])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)
    tiny = np.array([0.0, 1e-5, 0.1])
    np.testing.assert_allclose(np.asarray(fsp.bessel_jn(tiny, v=3)),
                               np.stack([ssp.jv(k, tiny) for k in range(4)]), rtol=1e-14,
                               atol=1e-300)
    with pytest.raises(ValueError):
        fsp.bessel_jn(z, v=-1)


def test_bessel_jn_for_z_beyond_the_default_start_order():
    """JAX's start order v + n_iter (50) gave wrong numbers from |z| ~ 30: J_1(50) was
    -0.127 (JAX -0.148), scipy -0.0975; the start now grows with |z| (eager, jit, vmap,
    float32), J(+-inf) = 0, NaN past |z| = 2**18, and the derivative follows."""
    z = np.concatenate([np.linspace(30, 300, 271), [1e3, 5e3, -70.0]])
    want = np.stack([ssp.jv(k, z) for k in range(4)])
    for f in (lambda a: fsp.bessel_jn(a, v=3), ft.jit(lambda a: fsp.bessel_jn(a, v=3))):
        np.testing.assert_allclose(np.asarray(f(z)), want, rtol=0, atol=2e-15)
        np.testing.assert_allclose(np.asarray(f(z.astype(np.float32))), want, rtol=0,
                                   atol=3e-7)
    batched = ft.vmap(lambda a: fsp.bessel_jn(a, v=1))(np.array([1.0, 80.0]))
    np.testing.assert_allclose(np.asarray(batched)[:, 1], ssp.jv(1, [1.0, 80.0]), atol=1e-15)
    edge = np.asarray(fsp.bessel_jn(np.array([np.inf, -np.inf, np.nan, 3e5]), v=1))
    np.testing.assert_array_equal(edge, [[0, 0, np.nan, np.nan], [0, 0, np.nan, np.nan]])
    assert abs(float(ft.grad(lambda a: fsp.bessel_jn(a, v=2)[2])(60.0))
               - ssp.jvp(2, 60.0)) < 1e-14


def test_hyp1f1_against_scipy():
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-3, 5, 300), rng.uniform(0.2, 6, 300)
    x = rng.uniform(-40, 40, 300)
    got, want = np.asarray(fsp.hyp1f1(a, b, x)), ssp.hyp1f1(a, b, x)
    err = np.abs(got - want) / np.abs(want)
    assert np.median(err) < 1e-15 and err.max() < 3e-13
    # polynomials (a a nonpositive integer) for negative x, and Kummer's e^x
    np.testing.assert_allclose(np.asarray(fsp.hyp1f1(-2.0, 2.5, -3.0)), ssp.hyp1f1(-2, 2.5, -3.0),
                               rtol=1e-15)
    np.testing.assert_allclose(np.asarray(fsp.hyp1f1(1.0, 1.0, -30.0)), np.exp(-30.0), rtol=1e-14)


def test_owens_t_against_scipy():
    rng = np.random.default_rng(2)
    h = np.concatenate([rng.uniform(-10, 10, 400), rng.uniform(-1, 1, 200), [0, 0, 3, 3, 40, -5]])
    a = np.concatenate([rng.uniform(-5, 5, 400), rng.uniform(-30, 30, 200),
                        [1, np.inf, np.inf, 0, 0.5, -np.inf]])
    got, want = np.asarray(fsp.owens_t(h, a)), ssp.owens_t(h, a)
    err = np.abs(got - want) / np.maximum(np.abs(want), 1e-300)
    assert np.median(err) < 2e-15 and err.max() < 5e-14
    check_grads(fsp.owens_t, (np.array([0.3, -1.2, 2.5]), np.array([0.4, 1.7, -0.8])), order=2,
                modes=("fwd", "rev"))


def test_owens_t_large_eager_call_is_the_compiled_one():
    """2**16 values and more run through a cached jit (49 s of numpy passes on 1e6
    values, JAX 2.3 s; compiled 0.35 s): the jitted function's bits, both branches."""
    rng = np.random.default_rng(3)
    h, a = rng.standard_normal(1 << 16) * 3, rng.standard_normal(1 << 16) * 3
    np.testing.assert_array_equal(np.asarray(fsp.owens_t(h, a)),
                                  np.asarray(ft.jit(fsp.owens_t)(h, a)))
    got, want = np.asarray(fsp.owens_t(h, a)), ssp.owens_t(h, a)
    assert np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-300)) < 5e-13


def test_owens_t_of_an_infinite_h_is_zero():
    h = np.array([np.inf, -np.inf, np.inf, np.inf, -np.inf])
    a = np.array([1.0, 0.5, -np.inf, 3.0, np.nan])
    want = ssp.owens_t(h, a)                 # 0, 0, -0, 0, nan (it was nan everywhere)
    for got in (fsp.owens_t(h, a), ft.jit(fsp.owens_t)(h, a)):
        np.testing.assert_array_equal(np.asarray(got), want)


_FUNS = {
    "expn": lambda x: fsp.expn(3, x), "expn0": lambda x: fsp.expn(0, x),
    "sici": fsp.sici, "fresnel": fsp.fresnel,
    "bessel_jn": lambda x: fsp.bessel_jn(x, v=3), "hyp1f1": lambda x: fsp.hyp1f1(1.5, 2.5, x),
    "owens_t": lambda x: fsp.owens_t(x, x / 3.0),
}


@pytest.mark.parametrize("name", list(_FUNS))
def test_grads_jit_native_vmap(name):
    fun = _FUNS[name]
    x = np.array([0.3, 1.7, 2.5, 3.9, 4.4, 7.0])
    order = 1 if name.startswith("expn") else 2    # expn's second order: below, exactly
    check_grads(fun, (x,), order=order, modes=("fwd", "rev"), rtol=1e-5, atol=1e-7)
    jf = ft.jit(fun)
    assert jf.lower(x).compile().cost_analysis()["host steps"] == 0
    eager, jitted = fun(x), jf(x)
    for e, j in zip(eager if isinstance(eager, tuple) else (eager,),
                    jitted if isinstance(jitted, tuple) else (jitted,)):
        np.testing.assert_allclose(np.asarray(j), np.asarray(e), rtol=1e-14, atol=1e-300)
    batched = ft.vmap(fun)(x)
    for e, b in zip(eager if isinstance(eager, tuple) else (eager,),
                    batched if isinstance(batched, tuple) else (batched,)):
        got = np.asarray(b)
        if name == "bessel_jn":
            got = got.T
        np.testing.assert_allclose(got, np.asarray(e), rtol=1e-14, atol=1e-300)


def test_expn_second_derivative_is_the_order_two_below():
    d2 = ft.grad(ft.grad(lambda x: fsp.expn(4, x)))(1.3)
    np.testing.assert_allclose(float(d2), ssp.expn(2, 1.3), rtol=1e-13)


def test_hyp1f1_differentiates_in_its_parameters():
    check_grads(lambda a, b, x: fsp.hyp1f1(a, b, x), (np.array([1.5, -0.5]), np.array([2.5, 3.0]),
                                                     np.array([1.0, -2.0])),
                order=1, modes=("fwd", "rev"), rtol=1e-5)


def test_erfcx_complex_is_wofz_at_i_z():
    # jax.scipy.special.erfcx takes complex input (JAX's special-functions test runs it on
    # complex64/128); it used to raise TypeError here
    z = np.array([0.5 + 0.3j, -2 + 1j, 3 - 4j, -1.5 - 2.5j, 10 + 0.1j, 0j, -6 + 0.5j])
    np.testing.assert_allclose(fsp.erfcx(z), ssp.erfcx(z), rtol=1e-13)
    assert fsp.erfcx(z.astype(np.complex64)).dtype == np.complex64
    _, t = ft.jvp(fsp.erfcx, (z,), (np.ones_like(z),))
    np.testing.assert_allclose(t, 2 * z * ssp.erfcx(z) - 2 / np.sqrt(np.pi), rtol=1e-12)


def test_gamma_and_loggamma_of_complex_match_scipy():
    # JAX's special-functions test runs gamma and loggamma on complex input; they raised
    rng = np.random.default_rng(0)
    z = rng.normal(scale=6, size=300) + 1j * rng.normal(scale=6, size=300)
    z = np.concatenate([z, [-0.5 + 0j, -1.5 + 0j, 0.5 + 1j, 0.5 - 1j, -2.5 + 1e-12j,
                            -2.5 - 1e-12j, -100.3 + 0.2j, 50 + 200j, -3 - 8j, 1 + 0j]])
    got, want = np.asarray(fsp.loggamma(z)), ssp.loggamma(z)
    assert np.max(np.abs(got - want) / np.maximum(np.abs(want), 1)) < 1e-13
    g, wg = np.asarray(fsp.gamma(z)), ssp.gamma(z)
    ok = np.abs(wg) < 1e300
    np.testing.assert_allclose(g[ok], wg[ok], rtol=1e-12)
    poles = np.array([0j, -1 + 0j, -5 + 0j, complex(np.nan, 0)])
    assert np.isnan(fsp.gamma(poles).real).all() and np.isnan(fsp.loggamma(poles).imag).all()
    _, t = ft.jvp(fsp.loggamma, (z[:20],), (np.ones(20, complex),))
    np.testing.assert_allclose(t, ssp.digamma(z[:20]), rtol=1e-11)
    assert fsp.gamma(np.complex64(2 + 1j)).dtype == np.complex64
