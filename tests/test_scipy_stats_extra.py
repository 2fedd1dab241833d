"""functrans.scipy.stats' gumbel_l, gumbel_r, pareto's cdf family and ppf,
poisson.entropy, mode, rankdata and sem: values against scipy (and JAX where scipy
is wrong), derivatives against finite differences, jit equals eager, vmap equals a
loop, and clear errors."""
import numpy as np
import pytest
import scipy.special as sps
import scipy.stats as ss

import functrans as ft
import functrans.numpy as fnp
from functrans.scipy import stats as fst
from functrans.test_util import check_grads

_X = np.concatenate([np.linspace(-30, 40, 701), [0.0, np.inf, -np.inf, np.nan]])[:, None]
_Q = np.concatenate([np.linspace(0, 1, 201), [1e-300, 1 - 1e-16, -0.1, 1.1, np.nan]])[:, None]
_LOC = np.array([0.0, 1.5, -2.0, 0.0])
_SCALE = np.array([1.0, 0.5, 3.0, -1.0])       # the last is invalid: NaN, as scipy


def _close(got, want, rtol=1e-13, atol=1e-300):
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("dist", ["gumbel_l", "gumbel_r"])
@pytest.mark.parametrize("fn", ["pdf", "logpdf", "cdf", "logcdf", "sf", "logsf"])
def test_gumbel_matches_scipy(dist, fn):
    with np.errstate(all="ignore"):
        want = getattr(getattr(ss, dist), fn)(_X, _LOC, _SCALE)
    _close(getattr(getattr(fst, dist), fn)(_X, _LOC, _SCALE), want, rtol=1e-12)


@pytest.mark.parametrize("dist", ["gumbel_l", "gumbel_r"])
def test_gumbel_ppf_matches_scipy(dist):
    with np.errstate(all="ignore"):
        want = getattr(ss, dist).ppf(_Q, _LOC, _SCALE)
    _close(getattr(fst, dist).ppf(_Q, _LOC, _SCALE), want, rtol=1e-12, atol=1e-14)


_B = np.array([0.5, 2.0, 7.3, -1.0])


@pytest.mark.parametrize("fn", ["cdf", "logcdf", "sf", "logsf"])
def test_pareto_matches_scipy(fn):
    # loc 0 and scale 1 at z = 1 (x - loc there rounds differently in scipy); next to
    # z = 1 scipy loses digits: see the test below
    x = np.concatenate([np.linspace(-2, 30, 641), [1.0, 1e10, np.inf, np.nan]])[:, None]
    with np.errstate(all="ignore"):
        want = getattr(ss.pareto, fn)(x, _B)
        shifted = getattr(ss.pareto, fn)(x[::10] * 3, _B, 0.3, 1.7)
    _close(getattr(fst.pareto, fn)(x, _B), want, rtol=1e-13)
    _close(getattr(fst.pareto, fn)(x[::10] * 3, _B, 0.3, 1.7), shifted, rtol=1e-11)


def test_pareto_tail_next_to_one_is_exact():
    # z = 1 + d: log sf = -b log1p(d) to the last digit (scipy's is 9e-6 off for b = 7.3)
    z = 1.0 + 1e-12
    d = z - 1.0
    for b in (0.5, 7.3):
        want = -b * (d - d * d / 2)
        np.testing.assert_allclose(float(fst.pareto.logsf(z, b)), want, rtol=1e-15)
        np.testing.assert_allclose(float(fst.pareto.cdf(z, b)), -np.expm1(want), rtol=1e-15)


def test_pareto_ppf_matches_scipy():
    with np.errstate(all="ignore"):
        want = ss.pareto.ppf(_Q, _B, 0.3, 1.2)
    _close(fst.pareto.ppf(_Q, _B, 0.3, 1.2), want, rtol=1e-13)


def test_poisson_entropy():
    mu = np.concatenate([np.geomspace(1e-10, 4000, 300), [0.0, 399.99, 400.0, 400.01]])
    small = mu < 400
    _close(fst.poisson.entropy(mu[small]), ss.poisson.entropy(mu[small]), rtol=2e-12)
    # beyond, the series against scipy's long sum, whose own rounding is ~1e-11
    _close(fst.poisson.entropy(mu[~small]), ss.poisson.entropy(mu[~small]), rtol=3e-11)
    assert np.isnan(float(fst.poisson.entropy(-1.0)))
    assert fst.poisson.entropy(np.ones((2, 1)), np.zeros(3)).shape == (2, 3)
    # scipy's own sum truncates for mu >~ 1e4; the asymptotic series is right there
    # (the reference sum's own rounding: k log m - m - gammaln(k + 1) of terms ~ m log m)
    for m in (2000.0, 1e4):
        k = np.arange(int(m - 40 * np.sqrt(m)), int(m + 40 * np.sqrt(m)))
        logp = k * np.log(m) - m - sps.gammaln(k + 1)
        np.testing.assert_allclose(float(fst.poisson.entropy(m)), -np.sum(np.exp(logp) * logp),
                                   rtol=5e-11)


GRAD_ROWS = [
    ("gumbel_r.logpdf", lambda x: fst.gumbel_r.logpdf(x, 0.5, 2.0), [-3.0, 0.0, 4.0]),
    ("gumbel_r.cdf", lambda s: fst.gumbel_r.cdf(1.0, 0.5, s), [0.5, 2.0]),
    ("gumbel_r.ppf", lambda q: fst.gumbel_r.ppf(q, 0.5, 2.0), [0.1, 0.5, 0.9]),
    ("gumbel_l.logsf", lambda x: fst.gumbel_l.logsf(x, 0.5, 2.0), [-3.0, 0.0, 4.0]),
    ("gumbel_l.logcdf", lambda x: fst.gumbel_l.logcdf(x), [-3.0, 0.0, 2.0]),
    ("pareto.cdf", lambda b: fst.pareto.cdf(3.0, b), [0.5, 2.0]),
    ("pareto.logsf", lambda x: fst.pareto.logsf(x, 1.5), [1.5, 4.0]),
    ("pareto.ppf", lambda q: fst.pareto.ppf(q, 1.5), [0.1, 0.7]),
    ("poisson.entropy", fst.poisson.entropy, [0.5, 7.0, 500.0]),
    ("sem", lambda a: fst.sem(a), [1.0, 2.5, 4.0, 3.0]),
]


@pytest.mark.parametrize("name, fn, points", GRAD_ROWS, ids=[r[0] for r in GRAD_ROWS])
def test_derivatives(name, fn, points):
    check_grads(fn, (fnp.asarray(np.array(points)),), order=1, rtol=1e-5, atol=1e-7)


def test_jit_and_vmap_of_the_distributions():
    x = np.array([-1.0, 0.3, 2.0])
    for f in (fst.gumbel_r.logcdf, fst.gumbel_l.sf, lambda v: fst.pareto.cdf(v + 2, 1.5),
              fst.poisson.entropy):
        eager = np.asarray(f(x + 2))
        np.testing.assert_allclose(np.asarray(ft.jit(f)(x + 2)), eager, rtol=1e-14)
        np.testing.assert_allclose(np.asarray(ft.vmap(f)(x + 2)),
                                   [float(f(v)) for v in x + 2], rtol=1e-14)


_DATA = [np.array([3, 1, 1, 3, 2]), np.array([1.0, np.nan, np.nan, 2.0]),
         np.array([1.0, np.nan, 2.0, 2.0]), np.array([[1, 2, 2], [1, 3, 3], [2, 3, 1]]),
         np.random.default_rng(0).integers(0, 4, size=(4, 5, 6))]


@pytest.mark.parametrize("i", range(len(_DATA)))
def test_mode_matches_scipy(i):
    a = _DATA[i]
    for axis in [None] + list(range(-a.ndim, a.ndim)):
        for keepdims in (False, True):
            got = fst.mode(a, axis=axis, keepdims=keepdims)
            want = ss.mode(a, axis=axis, keepdims=keepdims)
            assert type(got) is fst.ModeResult
            _close(got.mode, np.asarray(want.mode), rtol=0)
            np.testing.assert_array_equal(np.asarray(got.count), np.asarray(want.count))


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
def test_rankdata_matches_scipy(method):
    rng = np.random.default_rng(1)
    for a in [rng.integers(0, 5, size=17), rng.normal(size=9), rng.integers(0, 3, size=(3, 4, 5)),
              np.array([1.0, np.nan, 0.5])]:
        _close(fst.rankdata(a, method), ss.rankdata(a, method), rtol=0)
        for axis in range(a.ndim):
            _close(fst.rankdata(a, method, axis=axis), ss.rankdata(a, method, axis=axis), rtol=0)
    jitted = ft.jit(lambda v: fst.rankdata(v, method))(np.array([3.0, 1.0, 3.0]))
    _close(jitted, ss.rankdata([3.0, 1.0, 3.0], method), rtol=0)


def test_sem_matches_scipy():
    a = np.random.default_rng(2).normal(size=(4, 5))
    for axis in (None, 0, 1, -1):
        for ddof in (0, 1, 2):
            _close(fst.sem(a, axis=axis, ddof=ddof), ss.sem(a, axis=axis, ddof=ddof))
    a[1, 2] = np.nan
    _close(fst.sem(a, axis=1, nan_policy="omit"), ss.sem(a, axis=1, nan_policy="omit"))
    _close(fst.sem(a, axis=0), ss.sem(a, axis=0))
    assert fst.sem(a, axis=1, keepdims=True).shape == (4, 1)


def test_bad_input_raises_clearly():
    with pytest.raises(ValueError, match="unknown method"):
        fst.rankdata(np.ones(3), "first")
    with pytest.raises(ValueError, match="nan_policy='omit' is not supported"):
        fst.mode(np.ones(3), nan_policy="omit")
    with pytest.raises(ValueError, match="illegal nan_policy"):
        fst.sem(np.ones(3), nan_policy="skip")
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        fst.mode(np.ones((2, 2)), axis=2)
    with pytest.raises(ValueError, match="empty"):
        fst.mode(np.ones((0,)), axis=None)


def test_multivariate_normal_batch_of_covariances():
    # cov (..., d, d) broadcast with x's batch, as JAX 0.10.2 (raised a triangular_solve
    # rank error; JAX scipy_stats_test testMultivariateNormalLogpdfBatch/Broadcasted);
    # expected values scipy.stats.multivariate_normal per item (JAX's equal)
    x = np.array([[1.0, 2.0], [0.0, -1.0], [3.0, 0.5]])
    cov = np.array([[[2, 0.5], [0.5, 1]], [[1, 0], [0, 3.0]], [[4, 1], [1, 2.0]]])
    want = [-4.117684960377057, -2.553849877410067, -3.953689283794145]
    mvn = fst.multivariate_normal
    for got in (mvn.logpdf(x, np.zeros(2), cov), ft.vmap(mvn.logpdf)(x, np.zeros((3, 2)), cov),
                ft.jit(mvn.logpdf)(x, np.zeros(2), cov)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)
    xb = np.array([[[0.5, -0.5]], [[1.0, 1.0]]])          # (2, 1, 2) with (3, 2, 2): (2, 3)
    want_b = [[-2.4033992460913423, -2.553849877410067, -2.953689283794145],
              [-2.689113531805628, -3.053849877410067, -3.0965464266512877]]
    np.testing.assert_allclose(np.asarray(mvn.logpdf(xb, np.zeros(2), cov)), want_b, rtol=1e-13)


def test_dirichlet_x_one_entry_short_and_float32_rounding():
    # x with k - 1 entries: the last is 1 - sum (scipy, JAX 0.10.2; raised ValueError: JAX
    # scipy_stats_test testDirichletLogPdf); values scipy's for the completed points
    a = np.array([1.5, 2.0, 3.0])
    d = fst.dirichlet
    np.testing.assert_allclose(float(d.logpdf(np.array([0.2, 0.3]), a)), 1.695210995269564,
                               rtol=1e-13)
    got = d.logpdf(np.array([[0.2, 0.1], [0.3, 0.6]]), a)
    np.testing.assert_allclose(np.asarray(got), [1.695210995269564, 1.0201333380175548],
                               rtol=1e-13)
    # a float32 point 1 ulp off the simplex was -inf (tolerance 1e-10); scipy on the
    # normalised point -2.1983087861 (JAX 0.10.2 -2.1983075)
    v = np.array([0.25157222151756287, 0.7044503092765808, 0.043977465480566025], np.float32)
    got = float(d.logpdf(v, a.astype(np.float32)))
    np.testing.assert_allclose(got, -2.1983087861173303, rtol=1e-6)
    assert float(d.logpdf(np.array([0.2, 0.3, 0.5 + 1e-9]), a)) == -np.inf


def test_multivariate_normal_scalar_mean_is_the_univariate_law_elementwise():
    # x (3,) with a scalar mean and variance: three 1-d points, as scipy and JAX 0.10.2
    # (was one 3-d point, shape (); JAX scipy_stats_test testMultivariateNormalLogpdf)
    got = fst.multivariate_normal.logpdf(np.array([0.5, -1.0, 2.0]), 0.3, 2.0)
    np.testing.assert_allclose(np.asarray(got), [-1.2755121234846454, -1.6880121234846455,
                                                 -1.9880121234846455], rtol=1e-14)


@pytest.mark.parametrize("jit", [False, True])
def test_cauchy_t_logpdf_past_z_squared_overflow_and_large_df(jit):
    """z^2 overflowed past |z| ~ 1e154 (float64) / 1.8e19 (float32): cauchy.logpdf(1e200)
    was -inf (scipy -921.648...). The t values there are 2 log|z| - log df + ...
    computed in Python (scipy's t overflows to -inf). t with df = 1e30 was -36.9: the
    gammaln difference cancels (scipy -2.7108, the normal law's value)."""
    f = ft.jit if jit else (lambda g: g)
    _close(f(fst.cauchy.logpdf)(1e200, 0.3, 1.7), -921.6481388324055)
    _close(f(fst.t.logpdf)(np.array([1e200, -1e200]), 4.0, 0.3, 1.7),
           np.array([-2297.977673340009, -2297.977673340009]), rtol=1e-14)
    f32 = np.float32
    got = f(fst.t.logpdf)(f32(1e30), f32(4.0), f32(0.3), f32(1.7))
    assert got.dtype == np.float32
    _close(got, f32(-340.78034429507017), rtol=1e-6)
    _close(f(fst.t.logpdf)(3.0, np.array([1e30, 1e10, 29.9, 8.0]), 0.3, 1.7),
           ss.t.logpdf(3.0, np.array([1e30, 1e10, 29.9, 8.0]), 0.3, 1.7), rtol=2e-15)
    got = f(fst.t.logpdf)(f32(3.0), np.array([1e30, 29.9, 7.9, 4.0], f32), f32(0.3), f32(1.7))
    _close(got, ss.t.logpdf(3.0, np.array([1e30, 29.9, 7.9, 4.0], f32), 0.3, 1.7), rtol=1e-6)
    x = np.array([0.0, 5e3, 6e3, 1e8, 1.4e8, -1e15])       # both sides of |z| = 2 / sqrt(eps)
    for df in (0.01, 1.0, 4.0, 300.0):        # scipy's own gammaln difference: 1e-13 at 300
        _close(f(fst.t.logpdf)(x, df, 0.3, 1.7), ss.t.logpdf(x, df, 0.3, 1.7), rtol=2e-13)
        xf = x.astype(f32)
        _close(f(fst.t.logpdf)(xf, f32(df), f32(0.3), f32(1.7)),
               ss.t.logpdf(xf.astype(float), df, 0.3, 1.7), rtol=1e-6)
    _close(f(fst.cauchy.logpdf)(x, 0.3, 1.7), ss.cauchy.logpdf(x, 0.3, 1.7), rtol=1e-15)
    _close(f(fst.t.logpdf)(np.nan, 4.0), np.nan)
    _close(f(fst.t.logpdf)(1.0, 4.0, 0.0, np.array([0.0, -1.0])), np.array([np.nan, np.nan]))
    _close(f(fst.cauchy.logpdf)(np.array([np.inf, 1.0]), np.array([np.inf, np.nan])),
           np.array([np.nan, np.nan]))
