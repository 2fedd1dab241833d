"""functrans.scipy.special.sph_harm_y and wofz against scipy: random degrees and orders (|m| > n
too), high degree, scalar and broadcast arguments; jit, vmap and derivatives in the
angles against finite differences."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as ssp

import functrans as ft
import functrans.numpy as fnp
from functrans.scipy import special as fsp
from functrans.test_util import check_grads

_RNG = np.random.default_rng(6)
_N = _RNG.integers(0, 12, 500)
_M = _RNG.integers(-13, 14, 500)
_TH = _RNG.uniform(0, np.pi, 500)
_PH = _RNG.uniform(-7, 7, 500)


def test_against_scipy():
    want = ssp.sph_harm_y(_N, _M, _TH, _PH)
    got = np.asarray(fsp.sph_harm_y(_N, _M, _TH, _PH))
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, want, rtol=0, atol=3e-15)
    got = ft.jit(lambda n, m, t, p: fsp.sph_harm_y(n, m, t, p, n_max=11))(_N, _M, _TH, _PH)
    np.testing.assert_allclose(np.asarray(got), want, rtol=0, atol=3e-15)
    np.testing.assert_allclose(np.asarray(fsp.sph_harm_y(40, 17, 1.1, 0.4)),
                               ssp.sph_harm_y(40, 17, 1.1, 0.4), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(fsp.sph_harm_y(3, 2, _TH[:4], _PH[:4])),
                               ssp.sph_harm_y(3, 2, _TH[:4], _PH[:4]), rtol=0, atol=1e-15)


def test_vmap_grads_errors():
    got = ft.vmap(lambda t: fsp.sph_harm_y(_N[:5], _M[:5], t, _PH[:5], n_max=11))(
        np.stack([_TH[:5], _TH[5:10]]))
    np.testing.assert_allclose(np.asarray(got)[1], ssp.sph_harm_y(_N[:5], _M[:5], _TH[5:10],
                                                                  _PH[:5]), atol=3e-15)
    n, m = np.array([2, 3, 1]), np.array([1, -2, 0])
    check_grads(lambda t, p: fnp.real(fsp.sph_harm_y(n, m, t, p)), (_TH[:3], _PH[:3]),
                order=1, modes=("fwd", "rev"))
    check_grads(lambda t, p: fnp.imag(fsp.sph_harm_y(n, m, t, p)), (_TH[:3], _PH[:3]),
                order=1, modes=("fwd", "rev"))
    with pytest.raises(NotImplementedError):
        fsp.sph_harm_y(n, m, _TH[:3], _PH[:3], diff_n=1)
    with pytest.raises(TypeError):
        fsp.sph_harm_y(n * 1.0, m, _TH[:3], _PH[:3])


def test_wofz_against_scipy():
    rng = np.random.default_rng(0)
    z = rng.uniform(-10, 10, 2000) + 1j * rng.uniform(-4, 10, 2000)
    z = np.concatenate([z, rng.uniform(-10, 10, 200) + 1e-8j,
                        rng.uniform(-100, 100, 200) + 1j * rng.uniform(0, 3, 200)])
    got, want = np.asarray(fsp.wofz(z)), ssp.wofz(z)
    err = np.abs(got - want) / np.abs(want)
    assert np.median(err) < 1e-15 and err.max() < 5e-14
    edges = np.array([0.0, 1e-10, np.inf, -np.inf, np.nan, complex(0, -np.inf),
                      complex(np.inf, -1), complex(-np.inf, 2), complex(3, np.inf),
                      complex(np.inf, np.inf), complex(np.nan, 1), complex(1, -np.inf)])
    np.testing.assert_allclose(np.asarray(fsp.wofz(edges)), ssp.wofz(edges), rtol=1e-15, atol=0)
    np.testing.assert_allclose(np.asarray(ft.jit(fsp.wofz)(z[:50])), want[:50], rtol=5e-14)


def test_wofz_derivative_is_holomorphic():
    z = np.array([0.3 + 0.2j, -1.5 + 2.0j, 2.0 - 0.5j])
    _, tangent = ft.jvp(fsp.wofz, (z,), (np.ones(3, complex),))
    eps = 1e-6
    numeric = (ssp.wofz(z + eps) - ssp.wofz(z - eps)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(tangent), numeric, rtol=1e-8)
    _, tangent = ft.jvp(fsp.wofz, (z,), (1j * np.ones(3, complex),))
    numeric = (ssp.wofz(z + 1j * eps) - ssp.wofz(z - 1j * eps)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(tangent), numeric, rtol=1e-8)
    batched = ft.vmap(fsp.wofz)(z)
    np.testing.assert_allclose(np.asarray(batched), ssp.wofz(z), rtol=5e-14)


def test_sph_harm_y_polar_angle_outside_0_pi_as_scipy():
    # JAX's testSphHarmY draws theta in [-2, 1]: odd |m| had the wrong sign for theta < 0
    import scipy.special as sps
    from functrans.scipy import special as fsp
    n, m = np.array([1, 1, 3, 3, 2]), np.array([-1, 1, -3, 1, -2])
    theta, phi = np.array([-2.0, -0.7, -1.2, 3.5, -0.4]), np.array([-4.0, 0.3, 1.0, 2.0, 5.0])
    np.testing.assert_allclose(fsp.sph_harm_y(n, m, theta, phi, n_max=3),
                               sps.sph_harm_y(n, m, theta, phi), rtol=1e-13, atol=1e-15)
