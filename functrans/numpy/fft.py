"""``functrans.numpy.fft``: the discrete Fourier transforms of ``numpy.fft``.

Every transform is one ``fft`` primitive (see ``functrans.lax.fft``) over the
requested axes, moved to the end and back, after cropping or zero-padding each to
the requested length (``n`` / ``s``), times the scale of the ``norm`` mode:
"backward" (default: the inverse transforms divide by N), "ortho" (both by √N) or
"forward" (the forward transforms divide by N). All are linear, so ``grad``,
``vjp``, ``jvp`` and ``vmap`` work through them. Integer and real inputs of the
complex transforms become complex128 (complex64 from float32); ``rfft``/``ihfft``
need real input (TypeError for complex, where numpy would drop the imaginary part).

>>> import functrans.numpy as fnp
>>> fnp.fft.fft(fnp.asarray([1.0, 0.0, 0.0, 0.0])).tolist()
[(1+0j), (1+0j), (1+0j), (1+0j)]
"""
from __future__ import annotations
import math

import numpy as np

from ..primitives.fft import fft as _fft_prim
from ..primitives.elementwise import complex as make_complex
from ..primitives.slicing import slice_in_dim
from ._creation import zeros, zeros_like
from ._elementwise import multiply, true_divide
from ._elementwise_select import conj
from ._joining import pad, roll
from ._structural import moveaxis
from ._util import asarray, canonicalize_axis, check_arraylike, result_dtype
from typing import Sequence
from ..array import Array
from ..typing import ArrayLike, DTypeLike, Shape

__all__ = ["fft", "ifft", "rfft", "irfft", "fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2",
           "rfft2", "irfft2", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = (None, "backward", "ortho", "forward")


def _as(name, a, kind):
    """``a`` as a complex array (kind "c") or a real floating one (kind "f")."""
    check_arraylike(name, a)
    dt = result_dtype(a)
    if kind == "f":
        if dt.kind == "c":
            raise TypeError(f"{name}: needs real input, got {dt}")
        # pocketfft has no half precision: float16 computes in float64, as bfloat16
        # and the integers do (and as fft of float16 does)
        return asarray(a, dt if dt in (np.dtype(np.float32), np.dtype(np.float64)) else np.float64)
    single = dt in (np.dtype(np.float32), np.dtype(np.complex64))
    if dt.kind == "c":
        return asarray(a, np.complex64 if single else np.complex128)
    # real -> complex as x + 0i: its transpose takes the real part of the cotangent
    x = asarray(a, np.float32 if single else np.float64)
    return make_complex(x, zeros_like(x))


def _resize(x, axis, n):
    """Crop or zero-pad axis ``axis`` of ``x`` to length ``n``."""
    have = x.shape[axis]
    if n == have:
        return x
    if n < have:
        return slice_in_dim(x, 0, n, axis=axis)
    widths = [(0, 0)] * x.ndim
    widths[axis] = (0, n - have)
    return pad(x, widths)


def _scale(out, norm, n_total, forward):
    if norm not in _NORMS:
        raise ValueError(f"fft: norm must be 'backward', 'ortho' or 'forward', got {norm!r}")
    norm = norm or "backward"
    if norm == "backward" or n_total == 0:
        return out
    # the primitive divides the inverse transforms by N ("backward"): undo or redo that
    if norm == "ortho":
        factor = 1.0 / math.sqrt(n_total) if forward else math.sqrt(n_total)
    else:   # "forward"
        factor = 1.0 / n_total if forward else float(n_total)
    return multiply(out, factor)    # a Python float: keeps out's dtype


def _axes_and_sizes(name, x, s, axes, inverse_real):
    if axes is None:
        axes = tuple(range(x.ndim)) if s is None else tuple(range(x.ndim - len(s), x.ndim))
    # out-of-range axes raise (as numpy and JAX): wrapping them modulo ndim transformed
    # another axis than the one asked for
    axes = tuple(canonicalize_axis(a, x.ndim, f"{name}: axis") for a in np.atleast_1d(axes))
    if len(set(axes)) != len(axes) or not axes:
        raise ValueError(f"{name}: axes {axes} must be distinct and at least one")
    if s is None:    # a zero-size axis gives an empty result (as JAX), not an error
        s = [x.shape[a] for a in axes]
        if inverse_real:
            s[-1] = max(0, 2 * (x.shape[axes[-1]] - 1))
        return axes, tuple(s)
    s = tuple(int(n) for n in np.atleast_1d(s))
    if len(s) != len(axes):
        raise ValueError(f"{name}: s {s} and axes {axes} must have the same length")
    if any(n < 1 for n in s):
        raise ValueError(f"{name}: invalid number of data points {s}")
    return axes, s


def _empty_transform(name, x, axes, s, fft_type):
    """The empty result of a transform over an axis of length 0, as JAX gives it (an
    rfft of an empty last axis has no frequencies to keep: a ValueError, as in JAX)."""
    shape = list(x.shape)
    for ax, n in zip(axes, s):
        shape[ax] = n
    if fft_type == "RFFT":
        if s[-1] == 0:
            raise ValueError(f"{name}: the transformed last axis {axes[-1]} of an array of "
                             f"shape {tuple(x.shape)} has length 0")
        shape[axes[-1]] = s[-1] // 2 + 1
    single = x.dtype in (np.dtype(np.float32), np.dtype(np.complex64))
    dtype = {"IRFFT": np.float32 if single else np.float64,
             "RFFT": np.complex64 if single else np.complex128}.get(fft_type, x.dtype)
    return zeros(tuple(shape), dtype)


def _transform(name, a, s, axes, norm, fft_type):
    kind = "f" if fft_type == "RFFT" else "c"
    x = _as(name, a, kind)
    axes, s = _axes_and_sizes(name, x, s, axes, fft_type == "IRFFT")
    if 0 in s:
        return _empty_transform(name, x, axes, s, fft_type)
    for ax, n in zip(axes, s):
        keep = n // 2 + 1 if (fft_type == "IRFFT" and ax == axes[-1]) else n
        x = _resize(x, ax, keep)
    k = len(axes)
    ends = tuple(range(x.ndim - k, x.ndim))
    moved = moveaxis(x, axes, ends)
    out = moveaxis(_fft_prim(moved, fft_type, s), ends, axes)
    return _scale(out, norm, math.prod(s), forward=fft_type in ("FFT", "RFFT"))


def fft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The 1-d discrete Fourier transform along ``axis`` (length ``n``).

    >>> import functrans.numpy as fnp
    >>> fnp.fft.fft(fnp.asarray([1.0, 1.0])).tolist()
    [(2+0j), 0j]
    """
    return _transform("fft", a, None if n is None else (n,), (axis,), norm, "FFT")


def ifft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The inverse of ``fft``.

    >>> import functrans.numpy as fnp
    >>> fnp.fft.ifft(fnp.asarray([2.0, 0.0])).tolist()
    [(1+0j), (1+0j)]
    """
    return _transform("ifft", a, None if n is None else (n,), (axis,), norm, "IFFT")


def rfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The DFT of real input: the ``n // 2 + 1`` non-negative frequencies.

    >>> import functrans.numpy as fnp
    >>> fnp.fft.rfft(fnp.asarray([1.0, 2.0, 3.0, 4.0])).tolist()
    [(10+0j), (-2+2j), (-2+0j)]
    """
    return _transform("rfft", a, None if n is None else (n,), (axis,), norm, "RFFT")


def irfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The inverse of ``rfft``: real output of length ``n`` (default ``2 (m - 1)``).

    >>> import functrans.numpy as fnp
    >>> fnp.fft.irfft(fnp.asarray([10.0, -2 + 2j, -2.0])).tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    return _transform("irfft", a, None if n is None else (n,), (axis,), norm, "IRFFT")


def fftn(a: ArrayLike, s: Shape | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None) -> Array:
    """The n-d DFT over ``axes`` (default: all, or the last ``len(s)``).

    >>> import functrans.numpy as fnp
    >>> fnp.fft.fftn(fnp.ones((2, 2))).tolist()
    [[(4+0j), 0j], [0j, 0j]]
    """
    return _transform("fftn", a, s, axes, norm, "FFT")


def ifftn(a: ArrayLike, s: Shape | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Array:
    """The inverse of ``fftn``.

    >>> import functrans.numpy as fnp
    >>> fnp.fft.ifftn(fnp.asarray([[4.0, 0.0], [0.0, 0.0]])).real.tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    return _transform("ifftn", a, s, axes, norm, "IFFT")


def rfftn(a: ArrayLike, s: Shape | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Array:
    """The n-d DFT of real input (the last axis halved as in ``rfft``).

    >>> import functrans.numpy as fnp
    >>> fnp.fft.rfftn(fnp.ones((2, 4))).shape
    (2, 3)
    """
    return _transform("rfftn", a, s, axes, norm, "RFFT")


def irfftn(a: ArrayLike, s: Shape | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None) -> Array:
    """The inverse of ``rfftn``.

    >>> import functrans.numpy as fnp
    >>> fnp.fft.irfftn(fnp.fft.rfftn(fnp.ones((2, 4)))).tolist()
    [[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]
    """
    return _transform("irfftn", a, s, axes, norm, "IRFFT")


def fft2(a: ArrayLike, s: Shape | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None) -> Array:
    """``fftn`` over the last two axes.

    >>> import functrans.numpy as fnp
    >>> fnp.fft.fft2(fnp.ones((1, 2))).tolist()
    [[(2+0j), 0j]]
    """
    return fftn(a, s, axes, norm)


def ifft2(a: ArrayLike, s: Shape | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Array:
    """``ifftn`` over the last two axes.

    >>> import functrans.numpy as fnp
    >>> fnp.fft.ifft2(fnp.asarray([[2.0, 0.0]])).real.tolist()
    [[1.0, 1.0]]
    """
    return ifftn(a, s, axes, norm)


def rfft2(a: ArrayLike, s: Shape | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Array:
    """``rfftn`` over the last two axes.

    >>> import functrans.numpy as fnp
    >>> fnp.fft.rfft2(fnp.ones((2, 2))).tolist()
    [[(4+0j), 0j], [0j, 0j]]
    """
    return rfftn(a, s, axes, norm)


def irfft2(a: ArrayLike, s: Shape | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None) -> Array:
    """``irfftn`` over the last two axes.

    >>> import functrans.numpy as fnp
    >>> fnp.fft.irfft2(fnp.asarray([[4.0, 0.0], [0.0, 0.0]])).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    return irfftn(a, s, axes, norm)


_SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def hfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The DFT of a Hermitian-symmetric signal given by its first half: real output
    of length ``n`` (default ``2 (m - 1)``), ``irfft(conj(a), n) * n``.

    >>> import functrans.numpy as fnp
    >>> fnp.fft.hfft(fnp.asarray([1.0, 0.0, 0.0])).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    if norm not in _NORMS:
        raise ValueError(f"hfft: norm must be 'backward', 'ortho' or 'forward', got {norm!r}")
    return irfft(conj(_as("hfft", a, "c")), n, axis, _SWAPPED[norm])


def ihfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Array:
    """The inverse of ``hfft``: ``conj(rfft(a, n)) / n`` for real ``a``.

    >>> import functrans.numpy as fnp
    >>> fnp.fft.ihfft(fnp.asarray([1.0, 1.0, 1.0, 1.0])).tolist()
    [(1-0j), -0j, -0j]
    """
    if norm not in _NORMS:
        raise ValueError(f"ihfft: norm must be 'backward', 'ortho' or 'forward', got {norm!r}")
    return conj(rfft(a, n, axis, _SWAPPED[norm]))


def _freq(values, d, dtype):
    out = asarray(values, dtype or np.float64)
    if isinstance(d, (int, float)) and d == 1:
        return out
    return true_divide(out, d)


def fftfreq(n: int, d: float = 1.0, *, dtype: DTypeLike | None = None,
            device: object = None) -> Array:
    """The sample frequencies of an ``n``-point DFT with sample spacing ``d``
    (``device``, JAX's placement argument, is accepted and has no effect here).

    >>> import functrans.numpy as fnp
    >>> fnp.fft.fftfreq(4).tolist()
    [0.0, 0.25, -0.5, -0.25]
    """
    # n = 0: JAX's formula gives no frequencies (numpy divides by zero)
    return _freq(np.fft.fftfreq(int(n), 1.0) if int(n) else np.zeros(0), d, dtype)


def rfftfreq(n: int, d: float = 1.0, *, dtype: DTypeLike | None = None,
             device: object = None) -> Array:
    """The sample frequencies of ``rfft`` (non-negative only; ``device`` as ``fftfreq``).

    >>> import functrans.numpy as fnp
    >>> fnp.fft.rfftfreq(4).tolist()
    [0.0, 0.25, 0.5]
    """
    # n = 0: JAX's formula gives one frequency, 0 / 0 (numpy divides by zero)
    return _freq(np.fft.rfftfreq(int(n), 1.0) if int(n) else np.full(1, np.nan), d, dtype)


def _shift(x, axes, sign):
    x = asarray(x)
    axes = tuple(range(x.ndim)) if axes is None else tuple(np.atleast_1d(axes))
    shifts = tuple(sign * (x.shape[a] // 2) for a in axes)
    return roll(x, shifts, axes)


def fftshift(x: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """Move the zero frequency to the centre (roll by ``n // 2`` along ``axes``).

    >>> import functrans.numpy as fnp
    >>> fnp.fft.fftshift(fnp.fft.fftfreq(4)).tolist()
    [-0.5, -0.25, 0.0, 0.25]
    """
    return _shift(x, axes, 1)


def ifftshift(x: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """The inverse of ``fftshift``.

    >>> import functrans.numpy as fnp
    >>> fnp.fft.ifftshift(fnp.asarray([-0.5, -0.25, 0.0, 0.25])).tolist()
    [0.0, 0.25, -0.5, -0.25]
    """
    return _shift(x, axes, -1)
