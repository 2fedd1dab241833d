"""FFT-based parts of ``functrans.scipy.signal``: ``fftconvolve``, ``detrend`` and the
spectral estimates ``stft``, ``istft``, ``csd`` and ``welch``, with scipy's
conventions (segments of ``nperseg`` samples every ``nperseg - noverlap``, periodic
windows from ``scipy.signal.get_window``, 'density'/'spectrum' scaling, one-sided
spectra doubled off DC and Nyquist). Segments are gathers, the transforms
``functrans.numpy.fft``, so all of it differentiates, batches and compiles.
"""
from __future__ import annotations

import importlib
from typing import Any, Sequence

import numpy as np

from .. import numpy as fnp
from ..array import Array
from ..typing import ArrayLike

__all__ = ["csd", "detrend", "fftconvolve", "istft", "stft", "welch"]


# Third-party modules loaded on first use, not at ``import functrans``: scipy.signal alone
# costs ~0.5 s of CPU to import, paid by every process (each MPI rank, each subprocess)
# though only the window functions below read it. name -> module, imported once.
_ON_FIRST_USE = {"scipy_signal": "scipy.signal"}


def _module(name: str):
    """The module ``_ON_FIRST_USE[name]``, imported on this first use (cached by Python).

    >>> _module("scipy_signal").__name__
    'scipy.signal'
    """
    return importlib.import_module(_ON_FIRST_USE[name])


def _float(x):
    x = fnp.asarray(x)
    return x if fnp.issubdtype(x.dtype, fnp.inexact) else x.astype(fnp.float64)


def fftconvolve(in1: ArrayLike, in2: ArrayLike, mode: str = "full",
                axes: Sequence[int] | int | None = None) -> Array:
    """N-dimensional convolution through the FFT along ``axes`` (all by default; the
    other axes broadcast), modes 'full', 'same' (in1's size) and 'valid' (inputs
    swapped when in2 is the larger, as scipy).

    >>> import numpy as np
    >>> from functrans.scipy.signal import fftconvolve
    >>> np.round(np.asarray(fftconvolve(np.array([1.0, 2.0]), np.array([1.0, 1.0]))), 12).tolist()
    [1.0, 3.0, 2.0]
    """
    x, h = _float(in1), _float(in2)
    if x.ndim != h.ndim:
        raise ValueError(f"fftconvolve: inputs must have the same rank, got {x.ndim} and {h.ndim}")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"fftconvolve: mode must be 'full', 'same' or 'valid', got {mode!r}")
    axes = tuple(range(x.ndim)) if axes is None else \
        tuple(sorted({a % x.ndim for a in np.atleast_1d(axes).tolist()}))
    for a in range(x.ndim):
        if a not in axes and x.shape[a] != h.shape[a] and 1 not in (x.shape[a], h.shape[a]):
            raise ValueError(f"fftconvolve: axis {a} is not convolved and its sizes "
                             f"{x.shape[a]}, {h.shape[a]} do not broadcast")
    if x.size == 0 or h.size == 0:
        return fnp.zeros((0,) * x.ndim, fnp.result_type(x, h))
    if mode == "valid":
        if not all(x.shape[a] >= h.shape[a] for a in axes):
            if not all(x.shape[a] <= h.shape[a] for a in axes):
                raise ValueError("fftconvolve: in 'valid' mode one input must be at least "
                                 "as large as the other along every axis")
            x, h = h, x
    sizes = [x.shape[a] + h.shape[a] - 1 for a in axes]
    complex_ = fnp.iscomplexobj(x) or fnp.iscomplexobj(h)
    if complex_:
        full = fnp.fft.ifftn(fnp.fft.fftn(x, sizes, axes) * fnp.fft.fftn(h, sizes, axes),
                             sizes, axes)
    else:
        full = fnp.fft.irfftn(fnp.fft.rfftn(x, sizes, axes) * fnp.fft.rfftn(h, sizes, axes),
                              sizes, axes)
    full = full.astype(fnp.result_type(x, h))
    index = [slice(None)] * x.ndim
    for a, n in zip(axes, sizes):
        keep = {"full": n, "same": x.shape[a], "valid": x.shape[a] - h.shape[a] + 1}[mode]
        start = (n - keep) // 2
        index[a] = slice(start, start + keep)
    return full[tuple(index)]


def _detrend_last(x, kind, bp=()):
    if kind in ("constant", "c"):
        return x - fnp.mean(x, axis=-1, keepdims=True)
    if kind not in ("linear", "l"):
        raise ValueError(f"detrend: type must be 'linear' or 'constant', got {kind!r}")
    n = x.shape[-1]
    edges = sorted({0, n, *(int(b) for b in np.atleast_1d(bp).tolist())})
    if edges[0] < 0 or edges[-1] > n:
        raise ValueError("detrend: breakpoints must lie within the data")
    pieces = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        seg = x[..., lo:hi]
        t = np.arange(hi - lo, dtype=np.float64)
        t = (t - t.mean()).astype(fnp.finfo(seg.dtype).dtype)
        # the least-squares line through the segment: mean + slope * (t - mean t)
        # (a one-sample piece has t @ t = 0 and no slope; two samples have t @ t = 0.5)
        slope = (seg @ t.astype(seg.dtype)) / (float(t @ t) or 1.0)
        pieces.append(seg - fnp.mean(seg, axis=-1, keepdims=True) - slope[..., None] * t)
    return fnp.concatenate(pieces, axis=-1)


def detrend(data: ArrayLike, axis: int = -1, type: str = "linear",
            bp: int | Sequence[int] = 0, overwrite_data: None = None) -> Array:
    """``data`` less its least-squares line along ``axis`` ('linear', one line per piece
    between the breakpoints ``bp``) or less its mean ('constant').

    >>> import numpy as np
    >>> from functrans.scipy.signal import detrend
    >>> np.round(np.asarray(detrend(np.array([1.0, 2.0, 4.0]))), 12).tolist()
    [0.166666666667, -0.333333333333, 0.166666666667]
    """
    x = fnp.moveaxis(_float(data), axis, -1)
    return fnp.moveaxis(_detrend_last(x, type, bp), -1, axis)


def _window(window, nperseg, n):
    if isinstance(window, (str, tuple)):
        nperseg = 256 if nperseg is None else int(nperseg)
        nperseg = min(nperseg, n)
        win = _module("scipy_signal").get_window(window, nperseg)
        return np.asarray(win, np.float64), nperseg
    win = np.asarray(window, np.float64)
    if win.ndim != 1:
        raise ValueError("window must be 1-d")
    if nperseg is not None and int(nperseg) != win.shape[0]:
        raise ValueError("nperseg must equal the window's length")
    return win, win.shape[0]


def _extend(x, boundary, half):
    if boundary is None:
        return x
    pads = [(0, 0)] * (x.ndim - 1) + [(half, half)]
    if boundary == "zeros":
        return fnp.pad(x, pads)
    if boundary == "constant":
        return fnp.pad(x, pads, mode="edge")
    if boundary in ("even", "odd"):
        ext = fnp.pad(x, pads, mode="reflect")
        if boundary == "even":
            return ext
        first, last = x[..., :1], x[..., -1:]
        n = x.shape[-1]
        return fnp.concatenate([2 * first - ext[..., :half], x,
                                2 * last - ext[..., half + n:]], axis=-1)
    raise ValueError(f"boundary must be None, 'zeros', 'even', 'odd' or 'constant', "
                     f"got {boundary!r}")


def _segments(x, win, nperseg, noverlap, nfft, detrend_kind, onesided):
    """The windowed FFT of each segment: (..., nseg, nfreq)."""
    step = nperseg - noverlap
    nseg = (x.shape[-1] - nperseg) // step + 1
    idx = np.arange(nseg)[:, None] * step + np.arange(nperseg)[None, :]
    seg = x[..., idx]
    if callable(detrend_kind):
        seg = detrend_kind(seg)
    elif detrend_kind:
        seg = _detrend_last(seg, detrend_kind)
    seg = seg * win.astype(fnp.finfo(seg.dtype).dtype)
    return fnp.fft.rfft(seg, nfft) if onesided else fnp.fft.fft(seg, nfft)


def _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend_kind, return_onesided,
              scaling, axis, mode, boundary=None, padded=False):
    x = fnp.moveaxis(_float(x), axis, -1)
    if y is not None:
        y = fnp.moveaxis(_float(y), axis, -1)
        n = max(x.shape[-1], y.shape[-1])
        x = fnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, n - x.shape[-1])])
        y = fnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, n - y.shape[-1])])
    win, nperseg = _window(window, nperseg, x.shape[-1])
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    nfft = nperseg if nfft is None else int(nfft)
    if noverlap >= nperseg or nfft < nperseg:
        raise ValueError("need noverlap < nperseg <= nfft")
    complex_ = fnp.iscomplexobj(x) or (y is not None and fnp.iscomplexobj(y))
    onesided = return_onesided and not complex_
    streams = []
    for s in (x,) if y is None else (x, y):
        s = _extend(s, boundary, nperseg // 2)
        if padded:
            extra = (-(s.shape[-1] - nperseg) % (nperseg - noverlap)) % nperseg
            s = fnp.pad(s, [(0, 0)] * (s.ndim - 1) + [(0, extra)])
        streams.append(s)
    ffts = [_segments(s, win, nperseg, noverlap, nfft, detrend_kind, onesided)
            for s in streams]
    # float32 / complex64 data stay single precision, as JAX (the window is float64)
    real = fnp.finfo(ffts[0].dtype).dtype
    if mode == "stft":
        result = ffts[0] / np.asarray(win.sum(), real)
    else:
        scale = 1.0 / (fs * (win * win).sum()) if scaling == "density" else 1.0 / win.sum() ** 2
        result = fnp.conj(ffts[0]) * ffts[-1] * np.asarray(scale, real)
        if onesided:
            doubled = np.ones(result.shape[-1], real)
            doubled[1:result.shape[-1] - (0 if nfft % 2 else 1)] = 2.0
            result = result * doubled
    freqs = np.fft.rfftfreq(nfft, 1 / fs) if onesided else np.fft.fftfreq(nfft, 1 / fs)
    length = streams[0].shape[-1]
    time = np.arange(nperseg / 2, length - nperseg / 2 + 1, nperseg - noverlap) / float(fs)
    if boundary is not None:
        time = time - (nperseg / 2) / fs
    return freqs.astype(real), time.astype(real), result, axis


def stft(x: ArrayLike, fs: float = 1.0, window: Any = "hann", nperseg: int = 256,
         noverlap: int | None = None, nfft: int | None = None, detrend: Any = False,
         return_onesided: bool = True, boundary: str | None = "zeros", padded: bool = True,
         axis: int = -1) -> tuple[Array, Array, Array]:
    """The short-time Fourier transform ``(f, t, Zxx)``: windowed FFTs of segments of
    ``x`` along ``axis`` (extended by ``nperseg // 2`` at both ends by ``boundary``,
    zero-padded to whole segments if ``padded``), scaled by ``1 / sum(window)``;
    ``Zxx``'s last axis is time, frequency replaces ``axis``.

    >>> import numpy as np
    >>> from functrans.scipy.signal import stft
    >>> f, t, z = stft(np.ones(16), nperseg=8)
    >>> z.shape
    (5, 5)
    """
    freqs, time, result, axis = _spectral(x, None, fs, window, nperseg, noverlap, nfft,
                                          detrend, return_onesided, "spectrum", axis, "stft",
                                          boundary, padded)
    axis = axis - 1 if axis < 0 else axis
    return fnp.asarray(freqs), fnp.asarray(time), fnp.moveaxis(result, -1, axis)


def _average(pxy, average):
    if pxy.shape[-1] == 1:
        return pxy[..., 0]
    if average == "mean":
        return fnp.mean(pxy, axis=-1)
    if average != "median":
        raise ValueError(f"average must be 'mean' or 'median', got {average!r}")
    n = pxy.shape[-1]
    k = 2 * np.arange(1, (n - 1) // 2 + 1)
    bias = 1 + np.sum(1.0 / (k + 1) - 1.0 / k)      # the median's bias for chi^2_2 data
    if fnp.iscomplexobj(pxy):
        med = (fnp.median(fnp.real(pxy), axis=-1)
               + 1j * fnp.median(fnp.imag(pxy), axis=-1))
    else:
        med = fnp.median(pxy, axis=-1)
    return med / np.asarray(bias, fnp.finfo(med.dtype).dtype)


def csd(x: ArrayLike, y: ArrayLike | None, fs: float = 1.0, window: Any = "hann",
        nperseg: int | None = None, noverlap: int | None = None, nfft: int | None = None,
        detrend: Any = "constant", return_onesided: bool = True, scaling: str = "density",
        axis: int = -1, average: str = "mean") -> tuple[Array, Array]:
    """The cross power spectral density of ``x`` and ``y`` by Welch's method ``(f, Pxy)``:
    the ``average`` ('mean' or 'median') over segments of ``conj(X) * Y``, scaled
    per ``scaling`` ('density' or 'spectrum'); ``y=None`` is ``y = x``.

    >>> import numpy as np
    >>> from functrans.scipy.signal import csd
    >>> f, p = csd(np.ones(8), np.ones(8), nperseg=4)
    >>> p.shape
    (3,)
    """
    if scaling not in ("density", "spectrum"):
        raise ValueError(f"scaling must be 'density' or 'spectrum', got {scaling!r}")
    same = y is None
    freqs, _, pxy, axis = _spectral(x, None if same else y, fs, window, nperseg, noverlap,
                                    nfft, detrend, return_onesided, scaling, axis, "psd")
    if same:
        pxy = fnp.real(pxy)
    pxy = _average(fnp.moveaxis(pxy, -2, -1), average)
    return fnp.asarray(freqs), fnp.moveaxis(pxy, -1, axis)


def welch(x: ArrayLike, fs: float = 1.0, window: Any = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, detrend: Any = "constant",
          return_onesided: bool = True, scaling: str = "density", axis: int = -1,
          average: str = "mean") -> tuple[Array, Array]:
    """The power spectral density of ``x`` by Welch's method ``(f, Pxx)``: ``csd(x, x)``,
    real.

    >>> import numpy as np
    >>> from functrans.scipy.signal import welch
    >>> f, p = welch(np.sin(np.arange(64.0)), nperseg=16)
    >>> int(np.argmax(np.asarray(p))) == int(np.argmin(np.abs(np.asarray(f) - 1 / (2 * np.pi))))
    True
    """
    freqs, pxx = csd(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                     scaling, axis, average)
    return freqs, fnp.real(pxx)


def istft(Zxx: ArrayLike, fs: float = 1.0, window: Any = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, input_onesided: bool = True,
          boundary: bool = True, time_axis: int = -1,
          freq_axis: int = -2) -> tuple[Array, Array]:
    """The inverse STFT ``(t, x)``: inverse FFTs of the segments, overlap-added with the
    window and divided by the overlapped squared window (scipy's least-squares
    inverse); ``boundary`` drops the ``nperseg // 2`` samples ``stft`` added at each end.
    ``t`` is ``arange(x.shape[0]) / fs``, as scipy's and JAX's (for a batch of signals
    that is the batch's length, not the signals').

    >>> import numpy as np
    >>> from functrans.scipy.signal import stft, istft
    >>> x = np.arange(16.0)
    >>> t, y = istft(stft(x, nperseg=8)[2], nperseg=8)
    >>> bool(np.allclose(np.asarray(y), x))
    True
    """
    z = fnp.asarray(Zxx)
    if z.ndim < 2:
        raise ValueError("istft: Zxx needs a frequency and a time axis")
    t_ax, f_ax = time_axis % z.ndim, freq_axis % z.ndim
    if t_ax == f_ax:
        raise ValueError("istft: time_axis and freq_axis must differ")
    z = fnp.moveaxis(z, (f_ax, t_ax), (-1, -2))           # (..., nseg, nfreq)
    nseg, nfreq = z.shape[-2], z.shape[-1]
    default = 2 * (nfreq - 1) if input_onesided else nfreq
    nperseg = default if nperseg is None else int(nperseg)
    if nfft is None:
        nfft = nperseg if input_onesided and nperseg == default + 1 else default
    elif nfft < nperseg:
        raise ValueError("istft: nfft must be at least nperseg")
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if noverlap >= nperseg:
        raise ValueError("istft: noverlap must be below nperseg")
    step = nperseg - noverlap
    win, _ = _window(window, nperseg, nperseg)
    segs = fnp.fft.irfft(z, nfft) if input_onesided else fnp.fft.ifft(z, nfft)
    real = fnp.finfo(segs.dtype).dtype
    segs = segs[..., :nperseg] * (win * win.sum()).astype(real)
    length = nperseg + (nseg - 1) * step
    idx = np.arange(nseg)[:, None] * step + np.arange(nperseg)[None, :]
    out = fnp.zeros(segs.shape[:-2] + (length,), segs.dtype).at[..., idx].add(segs)
    norm = np.zeros(length)
    np.add.at(norm, idx, np.broadcast_to(win * win, idx.shape))
    if boundary:
        half = nperseg // 2
        out, norm = out[..., half:length - half], norm[half:length - half]
    out = out / np.where(norm > 1e-10, norm, 1.0).astype(fnp.finfo(out.dtype).dtype)
    if t_ax != z.ndim - 1 and out.ndim > 1:
        out = fnp.moveaxis(out, -1, t_ax - 1 if f_ax < t_ax else t_ax)
    # scipy and JAX count the times along the output's first axis, also when it is a
    # batch axis: kept, so ported code gets the same arrays
    return fnp.asarray((np.arange(out.shape[0]) / float(fs)).astype(real)), out
