"""``packbits`` and ``unpackbits``: bits to uint8 bytes and back, as numpy's (``axis``,
``bitorder``, ``count``), composed of comparisons, shifts and sums, so they jit and vmap.
"""
from __future__ import annotations

import numpy as np

from ._creation import zeros
from ._elementwise import bitwise_and, not_equal, right_shift
from ._joining import concatenate, pad
from ._reductions import sum as _sum
from ._structural import moveaxis, ravel, reshape
from ._util import asarray
from ..array import Array
from ..typing import ArrayLike

__all__ = ["packbits", "unpackbits"]


def _weights(bitorder, name):
    if bitorder not in ("big", "little"):
        raise ValueError(f"{name}: bitorder must be 'big' or 'little', got {bitorder!r}")
    w = 2 ** np.arange(8, dtype=np.uint8)
    return w[::-1].copy() if bitorder == "big" else w


def _along_last(a, axis):
    if axis is None:
        return ravel(a), None
    axis = int(axis)
    if not -a.ndim <= axis < a.ndim:
        raise ValueError(f"axis {axis} is out of bounds for an array of rank {a.ndim}")
    return moveaxis(a, axis, -1), axis


def packbits(a: ArrayLike, axis: int | None = None, bitorder: str = "big") -> Array:
    """Pack the truth of each element (nonzero: 1) into the bits of uint8 bytes along
    ``axis`` (the flattened array by default), 8 to a byte, the last byte padded with
    zeros; ``bitorder`` 'big' puts the first element in the highest bit.

    >>> import functrans.numpy as fnp
    >>> fnp.packbits(fnp.array([1, 0, 1])).tolist()
    [160]
    """
    a = asarray(a)
    if a.dtype.kind not in "biu":
        raise TypeError(f"packbits: expected an integer or boolean array, got {a.dtype}")
    weights = _weights(bitorder, "packbits")
    x, axis = _along_last(not_equal(a, 0).astype(np.uint8), axis)
    n = x.shape[-1]
    x = pad(x, [(0, 0)] * (x.ndim - 1) + [(0, -n % 8)])
    x = reshape(x, x.shape[:-1] + (x.shape[-1] // 8, 8))
    # weights at full rank: the user's numpy_rank_promotion='raise' must not see this
    out = _sum(x * weights.reshape((1,) * (x.ndim - 1) + (8,)), axis=-1).astype(np.uint8)
    return out if axis is None else moveaxis(out, -1, axis)


def unpackbits(a: ArrayLike, axis: int | None = None, count: int | None = None,
               bitorder: str = "big") -> Array:
    """Unpack each uint8 byte into 8 bits (uint8 0/1) along ``axis`` (the flattened
    array by default); ``count`` keeps that many bits (negative: drops that many from
    the end; more than there are: zero-padded, as numpy documents).

    >>> import functrans.numpy as fnp
    >>> fnp.unpackbits(fnp.array([160], dtype=fnp.uint8), count=3).tolist()
    [1, 0, 1]
    """
    a = asarray(a)
    if a.dtype != np.uint8:
        raise TypeError(f"unpackbits: expected an array of uint8, got {a.dtype}")
    shifts = np.arange(8, dtype=np.uint8)
    shifts = shifts[::-1].copy() if _weights(bitorder, "unpackbits")[0] == 128 else shifts
    x, axis = _along_last(a, axis)
    bits = bitwise_and(right_shift(x[..., None], shifts.reshape((1,) * x.ndim + (8,))),
                       np.uint8(1))
    bits = reshape(bits, x.shape[:-1] + (x.shape[-1] * 8,))
    if count is not None:
        count = int(count)
        n = bits.shape[-1]
        if count < -n:
            raise ValueError("unpackbits: -count larger than the number of bits")
        keep = count if count >= 0 else n + count
        if keep > n:
            bits = concatenate([bits, zeros(bits.shape[:-1] + (keep - n,), np.uint8)], axis=-1)
        else:
            bits = bits[..., :keep]
    return bits if axis is None else moveaxis(bits, -1, axis)
