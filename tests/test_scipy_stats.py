"""functrans.scipy.stats, from one table: every function of every distribution module
against scipy.stats on a grid that crosses the support's edges, jit against eager,
and gradients in the argument against finite differences."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as sst

import functrans as ft
import functrans.numpy as fnp
from functrans.scipy import stats as fst
from functrans.test_util import check_grads
from tests.public_names import public_names

_X = np.linspace(-3.1, 6.3, 41)
_K = np.arange(-2, 14.0)
_Q = np.linspace(0.0, 1.0, 13) * 0.999 + 0.0003   # off the ties of discrete ppf

# module name -> (shape arguments, grid, differentiable point)
DISTS = {
    "norm": ((0.3, 1.7), _X, 0.4),
    "expon": ((0.3, 1.7), _X, 1.4),
    "laplace": ((0.3, 1.7), _X, 1.4),
    "logistic": ((0.3, 1.7), _X, 1.4),
    "cauchy": ((0.3, 1.7), np.concatenate([_X, [-1e6, 1e6]]), 1.4),
    "uniform": ((0.3, 1.7), _X, 1.4),
    "t": ((2.5, 0.3, 1.7), _X, 1.4),
    "gamma": ((2.5, 0.3, 1.7), _X, 1.4),
    "chi2": ((3.0, 0.3, 1.7), _X, 1.4),
    "beta": ((2.5, 1.5, -1.0, 4.0), _X, 1.4),
    "pareto": ((2.5, 0.1, 1.3), _X, 1.9),
    "gennorm": ((1.7, 0.2, 1.3), _X, 0.9),
    "wrapcauchy": ((0.6,), np.linspace(-1, 7, 33), 0.9),
    "truncnorm": ((-1.0, 2.0, 0.2, 1.3), _X, 0.9),
    "truncnorm_tail": ((5.0, 9.0, 0.2, 1.3), np.linspace(-3, 14, 69), 7.9),
    "vonmises": ((3.0,), np.concatenate([_X, [-7.0, 9.5]]), 0.4),
    "poisson": ((3.5,), _K, None),
    "bernoulli": ((0.3,), _K, None),
    "geom": ((0.3,), _K, None),
    "binom": ((9, 0.3), _K, None),
    "nbinom": ((3.5, 0.3), _K, None),
    "betabinom": ((9, 2.5, 1.5), _K, None),
}
def _module(dist):
    return getattr(fst, dist.split("_tail")[0])


def _scipy(dist):
    return getattr(sst, dist.split("_tail")[0])


ROWS = [(d, fn) for d in DISTS for fn in _module(d).__all__]
IDS = [f"{d}.{fn}" for d, fn in ROWS]


def _grid(dist, fn):
    return _Q if fn in ("ppf", "isf") else DISTS[dist][1]


@pytest.mark.parametrize("dist,fn", ROWS, ids=IDS)
def test_value_against_scipy_stats(dist, fn):
    args = DISTS[dist][0]
    x = _grid(dist, fn)
    with np.errstate(all="ignore"):
        want = getattr(_scipy(dist), fn)(x, *args)
    got = np.asarray(getattr(_module(dist), fn)(x, *args))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300, equal_nan=True)


@pytest.mark.parametrize("dist", list(DISTS))
def test_jit_equals_eager(dist):
    mod = _module(dist)
    args = DISTS[dist][0]
    for fn in mod.__all__:
        x = _grid(dist, fn)[:12]
        f = getattr(mod, fn)
        np.testing.assert_allclose(np.asarray(ft.jit(lambda v: f(v, *args))(x)),
                                   np.asarray(f(x, *args)), rtol=1e-13, equal_nan=True)


@pytest.mark.parametrize("dist", [d for d in DISTS if DISTS[d][2] is not None])
def test_grad_of_logpdf_and_cdf(dist):
    mod = _module(dist)
    args = DISTS[dist][0]
    for fn in ("logpdf", "cdf"):
        if fn in mod.__all__ and not (dist == "uniform" and fn == "logpdf"):
            check_grads(lambda v: getattr(mod, fn)(v, *args), (np.float64(DISTS[dist][2]),),
                        order=1, modes=("fwd", "rev"), rtol=1e-5, atol=1e-7)


def test_modules_export_only_their_functions():
    for dist in fst.__all__:
        mod = getattr(fst, dist)
        if not isinstance(mod, type(np)):
            continue    # mode, rankdata, sem, ModeResult: functions, not distributions
        assert public_names(mod) == set(mod.__all__), dist
    assert {n for n in dir(fst) if not n.startswith("_")} == set(fst.__all__)


def test_multivariate_normal_against_scipy():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(3, 3))
    cov, mean, x = a @ a.T + np.eye(3), rng.normal(size=3), rng.normal(size=(4, 3))
    for c in (cov, 2.0, np.array([1.0, 2.0, 0.5])):
        want = sst.multivariate_normal.logpdf(x, mean, np.diag(c) if np.ndim(c) == 1 else c)
        np.testing.assert_allclose(np.asarray(fst.multivariate_normal.logpdf(x, mean, c)),
                                   want, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(fst.multivariate_normal.pdf(x[0], mean, cov)),
                               sst.multivariate_normal.pdf(x[0], mean, cov), rtol=1e-13)
    check_grads(lambda m: fst.multivariate_normal.logpdf(x, m, cov), (mean,), order=1,
                modes=("fwd", "rev"))
    check_grads(lambda c: fst.multivariate_normal.logpdf(x[0], mean, c @ c.T + np.eye(3)), (a,),
                order=1, modes=("fwd", "rev"))


def test_dirichlet_against_scipy():
    x = np.array([[0.2, 0.3], [0.5, 0.1], [0.3, 0.6]])
    alpha = np.array([1.5, 2.0, 0.7])
    np.testing.assert_allclose(np.asarray(fst.dirichlet.logpdf(x, alpha)),
                               sst.dirichlet.logpdf(x, alpha), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(fst.dirichlet.pdf(x[:, 0], alpha)),
                               sst.dirichlet.pdf(x[:, 0], alpha), rtol=1e-13)
    assert float(fst.dirichlet.logpdf(np.array([0.5, 0.6, -0.1]), alpha)) == -np.inf
    check_grads(lambda a: fst.dirichlet.logpdf(x[:, 0], a), (alpha,), order=1, modes=("fwd", "rev"))


def test_multinomial_against_scipy():
    p = np.array([0.2, 0.5, 0.3])
    x = np.array([[1.0, 2.0, 3.0], [0.0, 6.0, 0.0], [2.0, 2.0, 1.0]])
    np.testing.assert_allclose(np.asarray(fst.multinomial.logpmf(x, 6, p)),
                               sst.multinomial.logpmf(x, 6, p), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(fst.multinomial.pmf(x[0], 6, p)),
                               sst.multinomial.pmf(x[0], 6, p), rtol=1e-13)


def test_python_scalar_parameters_keep_float32():
    # JAX's Python scalars are weak: norm.logpdf(float32) with the default loc=0.0,
    # scale=1.0 is float32 (it came out float64 in an f32 ADVI program)
    w = np.linspace(-1, 1, 5).astype(np.float32)
    assert fst.norm.logpdf(w).dtype == np.float32
    assert fst.t.logpdf(w, np.float32(4.0), 0.5, 2.0).dtype == np.float32
    assert fst.norm.logpdf(np.float64(1.0), 0.0, 1.0).dtype == np.float64
    u = np.linspace(0.1, 0.9, 5).astype(np.float32)
    for r in (fst.t.logpdf(u, 4.0), fst.gamma.logpdf(u, 2.0), fst.gamma.cdf(u, 2.0),
              fst.gennorm.logpdf(u, 2.0), fst.gennorm.cdf(u, 2.0), fst.pareto.logpdf(u + 1, 2.0),
              fst.beta.logpdf(u, 2.0, 3.0), fst.beta.cdf(u, 2.0, 3.0),
              fst.truncnorm.logpdf(u, -1.0, 1.0), fst.chi2.logpdf(u, 3.0)):
        assert r.dtype == np.float32     # as jax.scipy.stats with x64 on
    assert fst.t.logpdf(u.astype(np.float64), 4.0).dtype == np.float64
    np.testing.assert_allclose(np.asarray(fst.norm.logpdf(w)), sst.norm.logpdf(w), rtol=1e-6)


@pytest.mark.parametrize("dist,fn,args", [
    ("gamma", "logpdf", (0.5, 2.0, 1.0, 1.0)), ("gamma", "pdf", (0.5, 2.0, 1.0, 1.0)),
    ("gamma", "cdf", (0.5, 0.5, 1.0)), ("gamma", "logcdf", (0.5, 2.0, 1.0)),
    ("gamma", "logsf", (0.5, 2.0, 1.0)), ("expon", "logcdf", (0.5, 1.0, 1.0)),
    ("chi2", "logcdf", (-0.5, 2.0)), ("beta", "logcdf", (-0.5, 2.0, 3.0)),
    ("beta", "logsf", (1.5, 2.0, 3.0))])
def test_gradient_outside_the_support_is_zero_not_nan(dist, fn, args):
    # a point outside the support (log-density or log-probability -inf, or a constant
    # 0 / 1) has zero slopes, as JAX; nan there (0 * inf in the chain) poisons every
    # sum it enters, e.g. a mixture's logsumexp over components
    f = getattr(getattr(fst, dist), fn)
    for i in range(len(args)):
        g = float(ft.grad(f, argnums=i)(*args))
        assert g == 0.0, (dist, fn, i, g)
    points = np.array([args[0], 1.7])
    total = ft.grad(lambda x: fnp.sum(fnp.exp(f(x, *args[1:]))))(points)
    assert np.isfinite(np.asarray(total)).all()


def test_truncnorm_broadcasts_a_b_beyond_x_and_reversed_bounds_are_nan():
    # a, b of more dims than x, loc, scale broadcast (raised); b <= a gives nan (gave
    # -inf / 0), as scipy and JAX
    a = np.array([[-1.0, 0.5, 1.0, -0.2], [0.0, -2.0, 0.1, 0.3], [-0.5, 0.2, 0.4, 3.0]])
    b = np.array([[2.0], [-3.0], [0.5]])
    for fn in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
        got = np.asarray(getattr(fst.truncnorm, fn)(0.3, a, b, np.zeros((3, 1)), 1.0))
        want = getattr(sst.truncnorm, fn)(0.3, a, b, np.zeros((3, 1)), 1.0)
        assert got.shape == want.shape == (3, 4)
        np.testing.assert_allclose(got, want, rtol=1e-10, equal_nan=True, err_msg=fn)
        assert np.isnan(got[1]).all()


def test_cdf_slopes_at_the_support_edges_are_jax_s():
    """The slope at a kink of expon/laplace/uniform cdf is the density there (JAX 0.10.2's
    values): maximum/clip ties gave half of it (0.5, 0.25, 0.5)."""
    x = np.array([0.0, 1.0, -1.0])
    for f, want in [(fst.expon.cdf, [1.0, np.exp(-1), 0.0]),
                    (fst.expon.sf, [-1.0, -np.exp(-1), 0.0]),
                    (fst.laplace.cdf, [0.5, np.exp(-1) / 2, np.exp(-1) / 2]),
                    (fst.uniform.cdf, [1.0, 1.0, 0.0])]:
        np.testing.assert_allclose(ft.grad(lambda x: fnp.sum(f(x)))(x), want, rtol=1e-15)
