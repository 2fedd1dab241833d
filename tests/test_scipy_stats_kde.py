"""functrans.scipy.stats.gaussian_kde against scipy's: densities, log densities, the
Gaussian/box/KDE integrals, bandwidth rules and weights in 1-3 dimensions; resampling's
moments; gradients against finite differences, jit (a pytree) and vmap."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as sst

import functrans as ft
import functrans.numpy as fnp
from functrans.scipy import stats as fst
from functrans.test_util import check_grads

_RNG = np.random.default_rng(4)
_BW = {"scott": None, "silverman": "silverman", "number": 0.4, "callable": lambda k: 0.3}


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("bw", list(_BW))
@pytest.mark.parametrize("d", [1, 2, 3])
def test_against_scipy(d, bw, weighted):
    data = _RNG.normal(size=(d, 30)) if d > 1 else _RNG.normal(size=30)
    w = _RNG.uniform(0.5, 2, 30) if weighted else None
    ours = fst.gaussian_kde(data, bw_method=_BW[bw], weights=w)
    ref = sst.gaussian_kde(data, bw_method=_BW[bw], weights=w)
    pts = _RNG.normal(size=(d, 7))
    np.testing.assert_allclose(np.asarray(ours.covariance), ref.covariance, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(ours.evaluate(pts)), ref.evaluate(pts), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(ours(pts)), ref(pts), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(ours.logpdf(pts)), ref.logpdf(pts), rtol=1e-13)
    np.testing.assert_allclose(float(ours.integrate_gaussian(np.zeros(d), np.eye(d))),
                               ref.integrate_gaussian(np.zeros(d), np.eye(d)), rtol=1e-13)
    np.testing.assert_allclose(float(ours.integrate_kde(ours)), ref.integrate_kde(ref),
                               rtol=1e-13)
    assert ours.d == d and ours.n == 30
    np.testing.assert_allclose(float(ours.neff), ref.neff, rtol=1e-13)
    if d == 1:
        np.testing.assert_allclose(float(ours.integrate_box_1d(-0.3, 1.2)),
                                   ref.integrate_box_1d(-0.3, 1.2), rtol=1e-13)


def test_far_tails_keep_their_log_density():
    kde = fst.gaussian_kde(np.array([0.0, 1.0, 2.0]))
    assert np.isfinite(float(kde.logpdf(np.array([60.0]))[0]))


def test_resample_moments():
    data = _RNG.normal(size=(2, 40))
    kde = fst.gaussian_kde(data)
    draws = np.asarray(kde.resample(ft.random.PRNGKey(3), (40000,)))
    assert draws.shape == (2, 40000)
    # mixture: the data's mean, and the data's (biased, weighted) covariance plus the kernel's
    np.testing.assert_allclose(draws.mean(axis=1), data.mean(axis=1), atol=0.03)
    want_cov = np.cov(data, bias=True) + np.asarray(kde.covariance)
    np.testing.assert_allclose(np.cov(draws), want_cov, atol=0.05)


def test_grads_jit_vmap_errors():
    data, pts = _RNG.normal(size=12), np.array([0.3, -1.1, 2.0])
    check_grads(lambda x, p: fst.gaussian_kde(x).logpdf(p), (data, pts), order=1,
                modes=("fwd", "rev"))
    kde = fst.gaussian_kde(data)
    want = sst.gaussian_kde(data).evaluate(pts)
    np.testing.assert_allclose(np.asarray(ft.jit(lambda k, p: k.evaluate(p))(kde, pts)), want,
                               rtol=1e-13)
    np.testing.assert_allclose(np.asarray(ft.vmap(lambda p: kde.evaluate(p[None])[0])(pts)), want,
                               rtol=1e-13)
    with pytest.raises(NotImplementedError):
        kde.set_bandwidth("silverman")
    with pytest.raises(ValueError):
        fst.gaussian_kde(np.ones(1))
    with pytest.raises(ValueError):
        fst.gaussian_kde(data, weights=np.ones(3))
    assert float(fnp.sum(kde.weights)) == pytest.approx(1.0)
