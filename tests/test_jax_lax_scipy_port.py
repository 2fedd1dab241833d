"""Regressions found by running JAX 0.10.2's tests/lax_scipy_test.py against functrans
(driver: /work/jt30/jtscipy). Each test names the JAX test it comes from."""
from __future__ import annotations

import numpy as np
import scipy.special as osp_special

import functrans as ft
from functrans.scipy import special


def test_bessel_jn_float32_is_finite_and_accurate():
    # testBesselJnRandomPositiveZ (float32 cases): Miller's recurrence started at a fixed
    # 1e-300 and rescaled past 1e150 — 0 and inf in float32, so every float32 result was
    # NaN. Also tiny z (one step grows by 2k / z) and z = 0.
    rng = np.random.RandomState(0)
    z = np.concatenate([rng.rand(30) * 3, [0.0, 1e-30, 1e-12, 1e-6, 0.4]])
    for dt, n_iter, tol in ((np.float32, 15, 2e-7), (np.float32, 50, 2e-7),
                            (np.float64, 15, 1e-12), (np.float64, 50, 1e-15)):
        zz = z.astype(dt)
        got = special.bessel_jn(zz, v=4, n_iter=n_iter)
        assert got.dtype == dt and got.shape == (5, z.size)
        ref = np.stack([osp_special.jv(k, zz.astype(np.float64)) for k in range(5)])
        np.testing.assert_allclose(np.asarray(got, np.float64), ref, rtol=0, atol=tol)
        # tiny arguments: J_k(z) ~ (z / 2)^k / k!, relative accuracy where representable
        small, want = np.asarray(got, np.float64)[:, 31:34], ref[:, 31:34]
        normal = np.abs(want) > np.finfo(dt).tiny
        np.testing.assert_allclose(small[normal], want[normal],
                                   rtol=1e-5 if dt == np.float32 else 1e-13)
    # the derivative rule (J_k' = (J_{k-1} - J_{k+1}) / 2) in float32 too
    x = np.array([0.3, 1.7, 4.0], np.float32)
    g = ft.vmap(ft.grad(lambda s: special.bessel_jn(s, v=2, n_iter=30)[1]))(x)
    np.testing.assert_allclose(g, (osp_special.jv(0, x) - osp_special.jv(2, x)) / 2, rtol=1e-5)
