"""Regressions found by running JAX 0.10.2's tests/scipy_signal_test.py against functrans
(driver: /work/jt30/jtscipy). JAX's test case class runs every test under
``numpy_rank_promotion='raise'`` and ``numpy_dtype_promotion='strict'``; functrans's own
library arithmetic raised there (49 of 84 cases). Each test names the JAX test it comes
from."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.signal as osp_signal

import functrans as ft
import functrans.numpy as fnp
from functrans.scipy import optimize, signal


def _x(shape, dtype=np.float64):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.37) * 3 + np.arange(n) % 7 * 0.1).reshape(shape).astype(dtype)


def _strict():
    return ft.numpy_rank_promotion("raise"), ft.numpy_dtype_promotion("strict")


def test_detrend_stft_welch_csd_istft_under_raise_and_strict():
    # testDetrend / testStftAgainstNumpy / testWelchAgainstNumpy / testCsdAgainstNumpy /
    # testIstftAgainstNumpy: slope[..., None] * t, window * segments, ... broadcast on
    # purpose inside functrans.scipy.signal; they raised "operands could not be broadcast
    # together ... numpy_rank_promotion='raise'" (and strict dtype errors)
    x3, x2 = _x((2, 3, 17)), _x((3, 40), np.float32)
    rank, strict = _strict()
    with rank, strict:
        d = signal.detrend(x3, axis=-1, type="linear", bp=[0, 5])
        f, t, z = signal.stft(x2, nperseg=8, noverlap=4, detrend="linear")
        fw, p = signal.welch(x2, nperseg=16, detrend="constant", average="median")
        fc, c = signal.csd(x2, x2[::-1], nperseg=16)
        ti, xi = signal.istft(z, nperseg=8, noverlap=4)
    np.testing.assert_allclose(d, osp_signal.detrend(x3, axis=-1, type="linear", bp=[0, 5]),
                               rtol=1e-12, atol=1e-12)
    zr = osp_signal.stft(x2, nperseg=8, noverlap=4, detrend="linear")[2]
    assert z.dtype == np.complex64
    np.testing.assert_allclose(z, zr, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(p, osp_signal.welch(x2, nperseg=16, detrend="constant",
                                                   average="median")[1], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(c, osp_signal.csd(x2, x2[::-1], nperseg=16)[1],
                               rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(xi, osp_signal.istft(zr, nperseg=8, noverlap=4)[1],
                               rtol=1e-4, atol=1e-5)


def test_users_own_arithmetic_is_still_checked():
    # the options judge the user's code: eagerly, under jit / vmap / grad, and inside a
    # function the library calls back (minimize's objective)
    rank, strict = _strict()
    with rank:
        with pytest.raises(ValueError, match="numpy_rank_promotion='raise'"):
            fnp.ones(3) * fnp.ones((2, 3))
        with pytest.raises(ValueError, match="numpy_rank_promotion='raise'"):
            ft.jit(fnp.multiply)(fnp.ones(3), fnp.ones((2, 3)))
        with pytest.raises(ValueError, match="numpy_rank_promotion='raise'"):
            ft.vmap(fnp.multiply, in_axes=(None, 0))(np.ones(3), np.ones((4, 2, 3)))
        with pytest.raises(ValueError, match="numpy_rank_promotion='raise'"):
            optimize.minimize(lambda v: fnp.sum(v * fnp.ones((2, 2))), fnp.ones(2))
    with strict:
        with pytest.raises(ft.dtypes.TypePromotionError, match="strict"):
            optimize.minimize(lambda v: fnp.sum(v * fnp.ones(2, "float32")), fnp.ones(2))
