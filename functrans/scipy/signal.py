"""``functrans.scipy.signal``: direct N-dimensional convolution and correlation
(modes 'full', 'same', 'valid', scipy's conventions), written as a sum over the
kernel's entries of shifted, scaled slices of the padded input: every piece is an
existing operation, so it differentiates in both inputs, batches and compiles.
The cost is one multiply-add of the whole output per kernel entry (meant for small
kernels, as ``method='direct'``; ``method='fft'`` goes through ``fftconvolve``).

>>> import numpy as np
>>> from functrans.scipy import signal
>>> signal.convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5])).tolist()
[0.0, 1.0, 2.5, 4.0, 1.5]
"""
from __future__ import annotations

import itertools as _itertools

import numpy as _np

from .. import numpy as _fnp
from ..precision import PrecisionLike
from ..typing import Array, ArrayLike
from ._signal_spectral import csd, detrend, fftconvolve, istft, stft, welch

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "csd", "detrend",
           "fftconvolve", "istft", "stft", "welch"]


def _convolution(x, h, mode):
    """The part of the full convolution that ``mode`` keeps, and only it: cropping the full
    one gave the dropped outputs a zero cotangent, and 0 * inf = NaN in ``h``'s gradient."""
    starts, sizes = _window(x.shape, h.shape, mode)
    xp = _fnp.pad(x, [(k - 1, k - 1) for k in h.shape])
    out = _fnp.zeros(tuple(sizes), _np.result_type(x.dtype, h.dtype))
    for idx in _itertools.product(*[range(k) for k in h.shape]):
        # out[n] += h[k] x[n - k]: the slice of the padded x starting at start + K - 1 - k
        firsts = [s + k - 1 - i for s, k, i in zip(starts, h.shape, idx)]
        piece = xp[tuple(slice(f, f + m) for f, m in zip(firsts, sizes))]
        out = out + h[idx] * piece
    return out


def _window(x_shape, h_shape, mode):
    """(starts, sizes) of ``mode``'s part of the full convolution."""
    if mode == "full":
        return [0] * len(x_shape), [n + k - 1 for n, k in zip(x_shape, h_shape)]
    if mode == "same":
        return [(k - 1) // 2 for k in h_shape], list(x_shape)
    if mode == "valid":
        sizes = [max(n, k) - min(n, k) + 1 for n, k in zip(x_shape, h_shape)]
        return [min(n, k) - 1 for n, k in zip(x_shape, h_shape)], sizes
    raise ValueError(f"mode must be 'full', 'same' or 'valid', got {mode!r}")


def _inputs(in1, in2, method):
    if method not in ("auto", "direct", "fft"):
        raise ValueError(f"method must be 'auto', 'direct' or 'fft', got {method!r}")
    x, h = _fnp.asarray(in1), _fnp.asarray(in2)
    if x.ndim != h.ndim:
        raise ValueError(f"inputs must have the same number of dimensions, got {x.ndim} and {h.ndim}")
    if 0 in x.shape or 0 in h.shape:
        raise ValueError("inputs must not be empty")
    return x, h


def convolve(in1: ArrayLike, in2: ArrayLike, mode: str = "full", method: str = "auto",
             precision: PrecisionLike = None) -> Array:
    """The N-dimensional convolution of ``in1`` and ``in2``.  In 'valid' mode one
    input must be at least as large as the other in every dimension.

    >>> import numpy as np
    >>> convolve(np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0]), mode="valid").tolist()
    [3.0, 5.0]
    """
    x, h = _inputs(in1, in2, method)
    if method == "fft":
        out = fftconvolve(x, h, mode=mode)
        kind = _np.result_type(x.dtype, h.dtype)
        # scipy rounds an integer convolution computed through the FFT
        return _fnp.round(out).astype(kind) if kind.kind in "iub" else out
    if mode == "valid":
        bigger = all(a >= b for a, b in zip(x.shape, h.shape))
        smaller = all(a <= b for a, b in zip(x.shape, h.shape))
        if not (bigger or smaller):
            raise ValueError("convolve: in 'valid' mode one input must be at least as "
                             "large as the other in every dimension")
        if smaller and not bigger:
            x, h = h, x
    return _convolution(x, h, mode)


def correlate(in1: ArrayLike, in2: ArrayLike, mode: str = "full", method: str = "auto",
              precision: PrecisionLike = None) -> Array:
    """The N-dimensional cross-correlation: convolution with ``in2`` reversed (and
    conjugated).

    >>> import numpy as np
    >>> correlate(np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0]), mode="valid").tolist()
    [1.0, 2.0]
    """
    x, h = _inputs(in1, in2, method)
    h = _fnp.conj(h[tuple(slice(None, None, -1) for _ in range(h.ndim))])
    if method == "fft":
        return convolve(x, h, mode=mode, method="fft")
    if mode == "valid" and all(a <= b for a, b in zip(x.shape, h.shape)) \
            and not all(a >= b for a, b in zip(x.shape, h.shape)):
        # scipy swaps the inputs here, so the output is the reversed swapped correlation
        out = correlate(in2, in1, mode="valid", method=method)
        return _fnp.conj(out[tuple(slice(None, None, -1) for _ in range(out.ndim))])
    return convolve(x, h, mode=mode, method=method)


def _check_2d(in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise ValueError("only boundary='fill' with fillvalue=0 is supported (as jax.scipy)")
    x, h = _fnp.asarray(in1), _fnp.asarray(in2)
    if x.ndim != 2 or h.ndim != 2:
        raise ValueError(f"convolve2d/correlate2d need 2-D inputs, got {x.ndim}-D and {h.ndim}-D")
    return x, h


def convolve2d(in1: ArrayLike, in2: ArrayLike, mode: str = "full", boundary: str = "fill",
               fillvalue: ArrayLike = 0, precision: PrecisionLike = None) -> Array:
    """The 2-D convolution (scipy.signal.convolve2d with zero fill).

    >>> import numpy as np
    >>> convolve2d(np.ones((2, 2)), np.ones((1, 1))).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    x, h = _check_2d(in1, in2, boundary, fillvalue)
    return convolve(x, h, mode=mode)


def correlate2d(in1: ArrayLike, in2: ArrayLike, mode: str = "full", boundary: str = "fill",
                fillvalue: ArrayLike = 0, precision: PrecisionLike = None) -> Array:
    """The 2-D cross-correlation (scipy.signal.correlate2d with zero fill).

    >>> import numpy as np
    >>> correlate2d(np.ones((2, 2)), np.ones((1, 1))).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    x, h = _check_2d(in1, in2, boundary, fillvalue)
    if mode == "valid" and x.shape[0] <= h.shape[0] and x.shape[1] <= h.shape[1] \
            and x.shape != h.shape:
        # scipy's 2-D correlate reverses the swapped correlation without conjugating
        # it (its N-D correlate conjugates too)
        return _fnp.conj(correlate(x, h, mode=mode))
    if mode != "same":
        return correlate(x, h, mode=mode)
    # scipy's 2-D 'same' window starts at K // 2 of the full correlation, where the
    # N-D correlate's starts at (K - 1) // 2: they differ for even kernel sizes
    full = correlate(x, h, mode="full")
    return full[tuple(slice(k // 2, k // 2 + n) for n, k in zip(x.shape, h.shape))]
