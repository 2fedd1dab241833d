"""functrans.scipy.signal's FFT-based functions (fftconvolve, detrend, stft, istft, csd,
welch) against scipy: modes, axes, windows, boundaries, scalings, averages, complex
input; gradients against finite differences, jit and vmap."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.signal as ssg

import functrans as ft
import functrans.numpy as fnp
from functrans.scipy import signal as fsg
from functrans.test_util import check_grads

_RNG = np.random.default_rng(9)
_X, _Y = _RNG.normal(size=(3, 50)), _RNG.normal(size=(3, 50))


def _close(got, want, tol=1e-13):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g = np.asarray(g)
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * max(1.0, np.abs(w).max()))


_CONV = [((7,), (3,)), ((3,), (7,)), ((6, 5), (3, 2)), ((4, 6), (3, 3)), ((2, 5), (3, 2))]


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", _CONV, ids=[f"{a}x{b}" for a, b in _CONV])
def test_fftconvolve_against_scipy(shapes, mode):
    a, b = _RNG.normal(size=shapes[0]), _RNG.normal(size=shapes[1])
    try:
        want = ssg.fftconvolve(a, b, mode)
    except ValueError:
        with pytest.raises(ValueError):
            fsg.fftconvolve(a, b, mode)
        return
    _close(fsg.fftconvolve(a, b, mode), want)
    _close(fsg.fftconvolve(a + 1j * a, b, mode), ssg.fftconvolve(a + 1j * a, b, mode))


def test_fftconvolve_axes_grads_jit_vmap():
    a, b = _RNG.normal(size=(3, 8)), _RNG.normal(size=(1, 4))
    _close(fsg.fftconvolve(a, b, "same", axes=1), ssg.fftconvolve(a, b, "same", axes=1))
    _close(fsg.fftconvolve(a, b, "valid", axes=[-1]), ssg.fftconvolve(a, b, "valid", axes=[-1]))
    check_grads(lambda x, h: fsg.fftconvolve(x, h, "same"), (a[0], b[0]), order=2,
                modes=("fwd", "rev"))
    _close(ft.jit(fsg.fftconvolve)(a, b), ssg.fftconvolve(a, b))
    got = ft.vmap(lambda x: fsg.fftconvolve(x, b[0]))(a)
    _close(got, np.stack([ssg.fftconvolve(x, b[0]) for x in a]))
    with pytest.raises(ValueError):
        fsg.fftconvolve(a, b[0])


@pytest.mark.parametrize("kw", [{"type": "linear"}, {"type": "constant"}, {"bp": [10, 31]},
                                {"axis": 0}, {"bp": 49}, {"bp": [0, 2]}, {"bp": [1, 3, 48]},
                                {"axis": 0, "bp": 2}])
def test_detrend_against_scipy(kw):
    _close(fsg.detrend(_X, **kw), ssg.detrend(_X, **kw))


def test_detrend_grads_jit():
    check_grads(lambda x: fsg.detrend(x, bp=[4]), (_X[0, :9],), order=1, modes=("fwd", "rev"))
    _close(ft.jit(lambda x: fsg.detrend(x, bp=[10]))(_X), ssg.detrend(_X, bp=[10]))


_STFT = [dict(nperseg=16), dict(nperseg=16, noverlap=5, nfft=20),
         dict(nperseg=15, boundary=None, padded=False), dict(nperseg=16, boundary="even"),
         dict(nperseg=16, boundary="odd"), dict(nperseg=16, boundary="constant"),
         dict(nperseg=16, detrend="linear"), dict(nperseg=16, return_onesided=False),
         dict(nperseg=16, window="boxcar"), dict(nperseg=16, window=("tukey", 0.3)),
         dict(nperseg=100), dict(nperseg=16, window=np.hanning(16))]


@pytest.mark.parametrize("kw", _STFT, ids=[str(i) for i in range(len(_STFT))])
def test_stft_against_scipy(kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        want = ssg.stft(_X, fs=3.0, **kw)
    _close(fsg.stft(_X, fs=3.0, **kw), want)


def test_stft_axis_complex_grads_jit_vmap():
    _close(fsg.stft(_X.T, nperseg=16, axis=0), ssg.stft(_X.T, nperseg=16, axis=0))
    z = _X + 1j * _Y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        _close(fsg.stft(z, nperseg=16), ssg.stft(z, nperseg=16))
    check_grads(lambda x: fsg.stft(x, nperseg=8)[2], (_X[0, :20],), order=1,
                modes=("fwd", "rev"))
    _close(ft.jit(lambda x: fsg.stft(x, nperseg=16))(_X), ssg.stft(_X, nperseg=16))
    got = ft.vmap(lambda x: fsg.stft(x, nperseg=16)[2])(_X)
    _close(got, ssg.stft(_X, nperseg=16)[2])


_WELCH = [dict(), dict(nperseg=16), dict(nperseg=16, average="median"),
          dict(nperseg=17, scaling="spectrum"),
          dict(nperseg=16, noverlap=3, nfft=21, detrend="linear"),
          dict(nperseg=16, detrend=False), dict(nperseg=16, return_onesided=False),
          dict(nperseg=16, axis=0)]


@pytest.mark.parametrize("kw", _WELCH, ids=[str(i) for i in range(len(_WELCH))])
def test_welch_and_csd_against_scipy(kw):
    x, y = (_X.T, _Y.T) if kw.get("axis") == 0 else (_X, _Y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        _close(fsg.welch(x, fs=2.0, **kw), ssg.welch(x, fs=2.0, **kw))
        _close(fsg.csd(x, y, fs=2.0, **kw), ssg.csd(x, y, fs=2.0, **kw))
        _close(fsg.csd(x, None, fs=2.0, **kw), ssg.csd(x, x, fs=2.0, **kw))


def test_csd_unequal_lengths_complex_grads_jit():
    _close(fsg.csd(_X, _Y[:, :40], nperseg=16), ssg.csd(_X, _Y[:, :40], nperseg=16))
    _close(fsg.csd(_X + 1j * _Y, _Y, nperseg=16), ssg.csd(_X + 1j * _Y, _Y, nperseg=16))
    check_grads(lambda x: fsg.welch(x, nperseg=8)[1], (_X[0, :24],), order=2,
                modes=("fwd", "rev"))
    _close(ft.jit(lambda x, y: fsg.csd(x, y, nperseg=16))(_X, _Y), ssg.csd(_X, _Y, nperseg=16))
    with pytest.raises(ValueError):
        fsg.welch(_X, nperseg=16, scaling="power")


_ISTFT = [dict(nperseg=16), dict(nperseg=16, noverlap=12), dict(nperseg=15),
          dict(nperseg=16, nfft=20), dict(nperseg=16, window="boxcar", noverlap=0)]


@pytest.mark.parametrize("kw", _ISTFT, ids=[str(i) for i in range(len(_ISTFT))])
def test_istft_against_scipy_and_inverts_stft(kw):
    z = ssg.stft(_X, **kw)[2]
    got = fsg.istft(z, **kw)
    _close(got, ssg.istft(z, **kw))
    np.testing.assert_allclose(np.asarray(got[1])[:, :50], _X, atol=1e-13)


def test_istft_two_sided_axes_grads_jit():
    z = ssg.stft(_X, nperseg=16, return_onesided=False)[2]
    _close(fsg.istft(z, nperseg=16, input_onesided=False),
           ssg.istft(z, nperseg=16, input_onesided=False))
    z = ssg.stft(_X.T, nperseg=16, axis=0)[2]
    _close(fsg.istft(z, nperseg=16, time_axis=-1, freq_axis=0),
           ssg.istft(z, nperseg=16, time_axis=-1, freq_axis=0))
    z = fsg.stft(_X[0, :20], nperseg=8)[2]
    check_grads(lambda z: fsg.istft(z, nperseg=8)[1], (np.asarray(z),), order=1,
                modes=("fwd", "rev"))
    z = ssg.stft(_X, nperseg=16)[2]
    _close(ft.jit(lambda z: fsg.istft(z, nperseg=16))(z), ssg.istft(z, nperseg=16))
    loss = ft.grad(lambda x: fnp.sum(fsg.istft(fsg.stft(x, nperseg=16)[2], nperseg=16)[1] ** 2))
    np.testing.assert_allclose(np.asarray(loss(_X[0])), 2 * _X[0], atol=1e-12)


def test_single_precision_stays_single():
    # float32 / complex64 data give float32 / complex64 results, as JAX (the windows and
    # scale factors are float64 numpy values and used to promote everything)
    x = _X[0].astype(np.float32)
    assert fsg.detrend(x).dtype == np.float32
    assert fsg.detrend(x, bp=[10]).dtype == np.float32
    f, t, z = fsg.stft(x, nperseg=16)
    assert (f.dtype, t.dtype, z.dtype) == (np.float32, np.float32, np.complex64)
    assert [a.dtype for a in fsg.welch(x, nperseg=16, average="median")] == [np.float32] * 2
    assert [a.dtype for a in fsg.csd(x, x[::-1], nperseg=16)] == [np.float32, np.complex64]
    assert [a.dtype for a in fsg.istft(z, nperseg=16)] == [np.float32] * 2
    np.testing.assert_allclose(np.asarray(fsg.welch(x, nperseg=16)[1]),
                               ssg.welch(_X[0], nperseg=16)[1], rtol=2e-5, atol=1e-6)
