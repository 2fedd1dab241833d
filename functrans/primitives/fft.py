"""The ``fft`` primitive: discrete Fourier transforms over the trailing axes.

``fft(x, fft_type, fft_lengths)`` transforms the last ``len(fft_lengths)`` axes:

- ``"FFT"``: complex to complex, unscaled;  ``"IFFT"``: its inverse (scaled by 1/N);
- ``"RFFT"``: real to complex, the last axis keeping ``n // 2 + 1`` frequencies;
- ``"IRFFT"``: the inverse of RFFT, complex to real, last axis ``fft_lengths[-1]``.

It is linear, so its JVP applies it to the tangent. The transposes use the pairing
``Re(sum(ct * v))`` that all complex transposes here use (``real``/``complex``):
the DFT matrix is symmetric, so FFT and IFFT are their own transposes; RFFT's is the
real part of an FFT of the zero-padded cotangent; IRFFT's is the conjugated, scaled
RFFT of the cotangent with the doubled frequencies counted twice. The numpy
implementation is numpy's pocketfft (``numpy.fft.fftn``...); the CPU backend calls the
same pocketfft loops from the generated code, with the same numbers bit for bit
(``backends/llvm/pocketfft``); on the CUDA backend it is a host step. Every length is
at least 1.

>>> import numpy as np
>>> fft(np.array([1.0, 0.0, 0.0, 0.0]) + 0j, "FFT", (4,)).tolist()
[(1+0j), (1+0j), (1+0j), (1+0j)]
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from jaxpr_ir import ShapedArray
from .base import (Primitive, Zero, aval, deflinear, is_undefined, move_batch_axis,
                   not_mapped_size)
from .elementwise import conj, convert_element_type, mul, real
from .linalg_common import bind_checked
from .slicing import pad
from .structural import broadcast_in_dim
from ..typing import Array, ArrayLike

__all__ = ["fft", "FFT_TYPES"]

FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")
_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}
_REAL_OF = {v: k for k, v in _COMPLEX_OF.items()}

fft_p = Primitive("fft")


def _fft_aval(x, *, fft_type, fft_lengths):
    k = len(fft_lengths)
    if fft_type not in FFT_TYPES:
        raise ValueError(f"fft: fft_type must be one of {FFT_TYPES}, got {fft_type!r}")
    if k == 0 or x.ndim < k:
        raise ValueError(f"fft: fft_lengths {fft_lengths} needs 1 to {x.ndim} trailing axes "
                         f"of {x.str_short()}")
    want_kind = "f" if fft_type == "RFFT" else "c"
    if x.dtype.kind != want_kind:
        what = "real floating" if want_kind == "f" else "complex"
        raise TypeError(f"fft: {fft_type} needs a {what} operand, got {x.str_short()}")
    lengths = tuple(fft_lengths)
    if min(lengths) < 1:
        raise ValueError(f"fft: every fft length must be at least 1 (numpy's pocketfft has no "
                         f"empty transform), got fft_lengths {lengths}")
    last = x.shape[-k:]
    if fft_type == "IRFFT":
        expect = lengths[:-1] + (lengths[-1] // 2 + 1,)
    else:
        expect = lengths
    if tuple(last) != expect:
        raise ValueError(f"fft: {fft_type} with fft_lengths {lengths} needs trailing axes "
                         f"{expect}, got {x.str_short()}")
    if fft_type == "RFFT":
        return ShapedArray(x.shape[:-1] + (lengths[-1] // 2 + 1,), _COMPLEX_OF[x.dtype])
    if fft_type == "IRFFT":
        return ShapedArray(x.shape[:-1] + (lengths[-1],), _REAL_OF[x.dtype])
    return ShapedArray(x.shape, x.dtype)


def _fft_impl(x, *, fft_type, fft_lengths):
    x = np.asarray(x)
    out = _fft_aval(ShapedArray(x.shape, x.dtype), fft_type=fft_type, fft_lengths=fft_lengths)
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    fn = {"FFT": np.fft.fftn, "IFFT": np.fft.ifftn, "RFFT": np.fft.rfftn,
          "IRFFT": np.fft.irfftn}[fft_type]
    return np.ascontiguousarray(np.asarray(fn(x, s=tuple(fft_lengths), axes=axes), out.dtype))


def _irfft_weights(ct_aval, n):
    """1/N for frequencies 0 (and n/2 when n is even), 2/N for the others, shaped to
    broadcast over RFFT's output ``ct_aval``."""
    m = n // 2 + 1
    w = np.full(m, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return broadcast_in_dim(np.asarray(w, ct_aval.dtype), ct_aval.shape, (len(ct_aval.shape) - 1,))


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    if not is_undefined(x):
        raise TypeError("fft: transpose needs the operand to be the linear input")
    if type(ct) is Zero:
        return [Zero(x.aval)]
    params = dict(fft_lengths=fft_lengths)
    if fft_type in ("FFT", "IFFT"):
        return [fft_p.bind(ct, fft_type=fft_type, **params)]
    n = fft_lengths[-1]
    if fft_type == "RFFT":
        # RFFT = (keep the first n//2+1 frequencies) ∘ FFT ∘ (real -> complex)
        missing = n - aval(ct).shape[-1]
        config = [(0, 0, 0)] * (aval(ct).ndim - 1) + [(0, missing, 0)]
        full = pad(ct, 0, config)
        return [real(fft_p.bind(full, fft_type="FFT", **params))]
    # IRFFT
    spectrum = fft_p.bind(ct, fft_type="RFFT", **params)
    scale = _irfft_weights(aval(spectrum), n)
    total = math.prod(fft_lengths)
    weights = mul(scale, broadcast_in_dim(np.asarray(1.0 / total, aval(spectrum).dtype),
                                          aval(spectrum).shape, ()))
    return [conj(mul(weights, spectrum))]


def _fft_batch(args, dims, *, fft_type, fft_lengths):
    (x,), (d,) = args, dims
    x = move_batch_axis(x, d, 0, not_mapped_size(args, dims))
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths), 0


fft_p.def_rules(abstract_eval=_fft_aval, impl=_fft_impl, batch=_fft_batch)
deflinear(fft_p, _fft_transpose)


def fft(x: ArrayLike, fft_type: str, fft_lengths: Sequence[int]) -> Array:
    """The DFT of kind ``fft_type`` ("FFT", "IFFT", "RFFT", "IRFFT") over the last
    ``len(fft_lengths)`` axes, as ``jax.lax.fft``; real input of the complex kinds is
    converted to complex first, as JAX's.

    >>> import numpy as np
    >>> fft(np.array([1.0, 2.0, 3.0]), "RFFT", (3,)).round(6).tolist()
    [(6+0j), (-1.5+0.866025j)]
    """
    lengths = tuple(int(n) for n in np.atleast_1d(fft_lengths))
    # JAX takes the kind in either case ("fft" or "FFT") or as an enum member
    kind = str(getattr(fft_type, "name", fft_type)).upper()
    x = _as_operand(x, kind)
    if not lengths:
        return x   # no axes transformed (JAX's: the converted operand)
    return bind_checked(fft_p, x, fft_type=kind, fft_lengths=lengths)


def _as_operand(x, kind):
    """The operand converted as JAX's ``lax.fft`` does: real input of FFT, IFFT and IRFFT
    becomes complex, integer input of RFFT floating; complex input of RFFT is an error.
    float32 stays single precision, everything else becomes double (functrans's
    promotion of integers, as ``fnp.fft``; pocketfft has no half precision)."""
    dt = aval(x).dtype
    if dt.kind == "c" and kind == "RFFT":
        raise ValueError(f"fft: RFFT needs real input, got {dt}")
    if dt.kind == "c" or (kind == "RFFT" and dt in _COMPLEX_OF):
        return x
    single = dt == np.dtype(np.float32)
    if kind == "RFFT":
        return convert_element_type(x, np.float32 if single else np.float64)
    return convert_element_type(x, np.complex64 if single else np.complex128)
