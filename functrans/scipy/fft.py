"""``functrans.scipy.fft``: the discrete cosine transform of ``jax.scipy.fft``
(type 2, its inverse, and their N-dimensional forms), through one complex FFT of the
even/odd-interleaved input (Makhoul's algorithm), so it differentiates, batches and
compiles as ``functrans.numpy.fft`` does.  As in JAX only type 2 is provided (other
types raise ``ValueError``) and ``norm`` is None/"backward" or "ortho".  The N-d
forms apply the 1-d transform along each axis in turn (the DCT is separable).

>>> import numpy as np
>>> from functrans.scipy.fft import dct, idct
>>> dct(np.array([1.0, 2.0, 3.0, 4.0])).round(6).tolist()
[20.0, -6.308644, 0.0, -0.448342]
>>> idct(dct(np.array([1.0, 2.0, 3.0]))).round(6).tolist()
[1.0, 2.0, 3.0]
"""
from __future__ import annotations

import math
import operator
from typing import Sequence

import numpy as np

from .. import lax
from .. import numpy as fnp
from ..typing import Array, ArrayLike

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(name, x, type, norm):
    if isinstance(type, bool) or type != 2:
        raise ValueError(f"{name}: type={type!r} is not supported: only DCT type 2 is "
                         "implemented (as in jax.scipy.fft)")
    if norm not in (None, "backward", "ortho"):
        raise ValueError(f"{name}: norm={norm!r} is not supported: use None, 'backward' "
                         "or 'ortho'")
    x = fnp.asarray(x)
    if not (x.dtype == np.bool_ or np.issubdtype(x.dtype, np.number)):
        raise TypeError(f"{name}: x must be numeric or boolean, got dtype {x.dtype}")
    if not np.issubdtype(x.dtype, np.inexact):     # booleans and integers, as scipy's
        x = x.astype(np.float64)
    return x


def _axis(name, axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of {ndim} "
                         "dimensions")
    return axis % ndim


def _resize(name, x, n, axis):
    """``x`` zero-padded or truncated to length ``n`` along ``axis``."""
    if n is None:
        if x.shape[axis] == 0:
            raise ValueError(f"{name}: the transformed axis {axis} has length 0")
        return x
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"{name}: n must be a positive length, got {n}")
    size = x.shape[axis]
    if n < size:
        return x[(slice(None),) * axis + (slice(0, n),)]
    pads = [(0, n - size) if a == axis else (0, 0) for a in range(x.ndim)]
    return fnp.pad(x, pads)


def _ortho_factor(n, axis, ndim, dtype):
    """sqrt(4N) for k = 0 and sqrt(2N) otherwise, shaped to broadcast along ``axis``."""
    f = np.full(n, math.sqrt(2.0 * n))
    f[0] = math.sqrt(4.0 * n)
    return f.astype(dtype).reshape([n if a == axis else 1 for a in range(ndim)])


def _twiddle(n, axis, ndim, dtype):
    """exp(-i pi k / 2N), shaped to broadcast along ``axis``."""
    w = np.exp(-0.5j * np.pi * np.arange(n) / n).astype(dtype)
    return w.reshape([n if a == axis else 1 for a in range(ndim)])


def _complex_dtype(dtype):
    return np.result_type(dtype, np.complex64)


def _dct_real(x, axis, norm):
    n = x.shape[axis]
    # v = (x0, x2, x4, ..., x5, x3, x1): the FFT of v gives the DCT-II after a twiddle
    perm = np.concatenate([np.arange(0, n, 2), np.arange(1, n, 2)[::-1]])
    v = fnp.take(x, perm, axis=axis)
    spec = fnp.fft.fft(v, axis=axis) * _twiddle(n, axis, x.ndim, _complex_dtype(x.dtype))
    out = 2 * fnp.real(spec)
    if norm == "ortho":
        out = out / _ortho_factor(n, axis, x.ndim, out.dtype)
    return out


def _idct_real(x, axis, norm):
    n = x.shape[axis]
    factor = _ortho_factor(n, axis, x.ndim, x.dtype)
    x = x / factor if norm == "ortho" else x / (factor * factor)
    # x 2N / exp(-i pi k / 2N), built from its real and imaginary parts (a real x
    # promoted to complex would make reverse mode drop a cotangent's imaginary part
    # through a cast, with a ComplexWarning)
    inv = 1.0 / _twiddle(n, axis, x.ndim, np.complex128)
    scaled = x * (2 * n)
    spec = lax.complex(scaled * inv.real.astype(x.dtype), scaled * inv.imag.astype(x.dtype))
    v = fnp.real(fnp.fft.ifft(spec, axis=axis))
    # undo the interleaving: out[2m] = v[m], out[2m + 1] = v[n - 1 - m]
    perm = np.empty(n, np.int64)
    perm[0::2] = np.arange((n + 1) // 2)
    perm[1::2] = n - 1 - np.arange(n // 2)
    return fnp.take(v, perm, axis=axis)


def _split_complex(fn, x, *args):
    if np.issubdtype(x.dtype, np.complexfloating):
        re, im = fn(fnp.real(x), *args), fn(fnp.imag(x), *args)
        return re + 1j * im
    return fn(x, *args)


def dct(x: ArrayLike, type: int = 2, n: int | None = None, axis: int = -1,
        norm: str | None = None) -> Array:
    """The type-2 discrete cosine transform along ``axis``, as ``scipy.fft.dct``:
    ``y[k] = 2 sum_n x[n] cos(pi k (2n + 1) / 2N)`` (``norm="ortho"`` scales it to an
    orthonormal transform).  ``n`` zero-pads or truncates the input first.  Complex
    input transforms its real and imaginary parts.

    >>> import numpy as np
    >>> dct(np.array([1.0, 0.0, 0.0, 0.0]), norm="ortho").round(6).tolist()
    [0.5, 0.653281, 0.5, 0.270598]
    """
    x = _check("dct", x, type, norm)
    axis = _axis("dct", axis, x.ndim)
    return _split_complex(_dct_real, _resize("dct", x, n, axis), axis, norm)


def idct(x: ArrayLike, type: int = 2, n: int | None = None, axis: int = -1,
         norm: str | None = None) -> Array:
    """The inverse of :func:`dct` (type 2) along ``axis``, as ``scipy.fft.idct``
    (a type-3 DCT, scaled by 1/2N under the default norm).  ``n`` zero-pads or
    truncates the input coefficients first.

    >>> import numpy as np
    >>> idct(np.array([2.0, 0.0, 0.0])).round(6).tolist()
    [0.333333, 0.333333, 0.333333]
    """
    x = _check("idct", x, type, norm)
    axis = _axis("idct", axis, x.ndim)
    return _split_complex(_idct_real, _resize("idct", x, n, axis), axis, norm)


def _axes_and_sizes(name, x, s, axes):
    """The axes to transform and each one's length (None: keep), as scipy.fft's
    N-d functions choose them."""
    if s is not None:
        s = [operator.index(v) for v in s] if isinstance(s, Sequence) or \
            hasattr(s, "__iter__") else [operator.index(s)]
        if len(s) > x.ndim:
            raise ValueError(f"{name}: s must have at most x.ndim ({x.ndim}) elements, "
                             f"got {len(s)}")
    if axes is None:
        axes = list(range(x.ndim - len(s), x.ndim)) if s is not None else list(range(x.ndim))
    else:
        axes = [axes] if not isinstance(axes, Sequence) and not hasattr(axes, "__iter__") \
            else list(axes)
        axes = [_axis(name, a, x.ndim) for a in axes]
        if len(set(axes)) != len(axes):
            raise ValueError(f"{name}: axes must be unique, got {axes}")
    if s is not None and len(s) != len(axes):
        raise ValueError(f"{name}: s and axes must have the same length, got {len(s)} "
                         f"and {len(axes)}")
    return axes, (s if s is not None else [None] * len(axes))


def dctn(x: ArrayLike, type: int = 2, s: Sequence[int] | None = None,
         axes: Sequence[int] | None = None, norm: str | None = None) -> Array:
    """The type-2 DCT over several axes, as ``scipy.fft.dctn``: ``axes`` (default:
    the last ``len(s)`` axes, or all), each padded or truncated to ``s``.

    >>> import numpy as np
    >>> dctn(np.ones((2, 2))).tolist()
    [[16.0, 0.0], [0.0, 0.0]]
    """
    x = _check("dctn", x, type, norm)
    axes, sizes = _axes_and_sizes("dctn", x, s, axes)
    for axis, size in zip(axes, sizes):
        x = _split_complex(_dct_real, _resize("dctn", x, size, axis), axis, norm)
    return x


def idctn(x: ArrayLike, type: int = 2, s: Sequence[int] | None = None,
          axes: Sequence[int] | None = None, norm: str | None = None) -> Array:
    """The inverse of :func:`dctn` over several axes, as ``scipy.fft.idctn``.

    >>> import numpy as np
    >>> idctn(dctn(np.array([[1.0, 2.0], [3.0, 4.0]]))).round(6).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    x = _check("idctn", x, type, norm)
    axes, sizes = _axes_and_sizes("idctn", x, s, axes)
    for axis, size in zip(axes, sizes):
        x = _split_complex(_idct_real, _resize("idctn", x, size, axis), axis, norm)
    return x
