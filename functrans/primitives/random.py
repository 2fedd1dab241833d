"""The counter-based random-bit primitive ``threefry2x32``.

Threefry-2x32 with 20 rounds (Salmon, Moraes, Dror and Shaw, "Parallel random
numbers: as easy as 1, 2, 3", SC 2011) maps a 64-bit key and a 64-bit counter to
64 random bits; every counter is independent, so it vectorises perfectly and gives
the same bits on any backend. ``functrans.random`` builds keys, splitting and the
distributions on top of it.

All four operands are uint32 arrays of one shape (the key words are broadcast by
the caller); the two outputs are uint32 arrays of that shape.

>>> import numpy as np
>>> z = np.zeros((), np.uint32)
>>> [hex(int(w)) for w in threefry2x32(z, z, z, z)]
['0x6b200159', '0x99ba4efe']
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import ShapedArray
from .base import Primitive, batch_elementwise
from ..tracing import Tracer, get_aval
from ..typing import Array, ArrayLike

__all__ = ["threefry2x32"]

# rotation distances of Threefry-2x32, one per round, repeating every 8 rounds
_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
_PARITY = 0x1BD11BDA    # the key-schedule constant of Threefish / Threefry

threefry2x32_p = Primitive("threefry2x32")
threefry2x32_p.multiple_results = True


def _threefry2x32_aval(k0, k1, x0, x1):
    ops = (k0, k1, x0, x1)
    names = ("key word 0", "key word 1", "count 0", "count 1")
    for a, n in zip(ops, names):
        if a.dtype != np.uint32:
            raise TypeError(f"threefry2x32: {n} must be uint32, got {a.str_short()}")
        if a.shape != k0.shape:
            raise TypeError(f"threefry2x32: operands must share one shape, got "
                            f"{k0.str_short()} (key word 0) and {a.str_short()} ({n})")
    out = ShapedArray(k0.shape, np.dtype(np.uint32))
    return [out, out]


def _rotl(v, r):
    return (v << np.uint32(r)) | (v >> np.uint32(32 - r))


def _threefry2x32_impl(k0, k1, x0, x1):
    shape = np.shape(x0)
    # 1-d working copies: uint32 array arithmetic wraps modulo 2**32 silently
    k0, k1, x0, x1 = (np.array(v, dtype=np.uint32).reshape(-1) for v in (k0, k1, x0, x1))
    ks = (k0, k1, k0 ^ k1 ^ np.uint32(_PARITY))
    x0 = x0 + ks[0]
    x1 = x1 + ks[1]
    for r in range(20):
        x0 += x1
        x1 = _rotl(x1, _ROTATIONS[r % 8])
        x1 ^= x0
        if r % 4 == 3:      # key injection after every 4 rounds
            s = (r + 1) // 4
            x0 += ks[s % 3]
            x1 += ks[(s + 1) % 3] + np.uint32(s)
    return [x0.reshape(shape), x1.reshape(shape)]


threefry2x32_p.def_rules(abstract_eval=_threefry2x32_aval, impl=_threefry2x32_impl,
                         not_differentiable=True)
batch_elementwise(threefry2x32_p)


def threefry2x32(k0: ArrayLike, k1: ArrayLike, x0: ArrayLike,
                 x1: ArrayLike) -> tuple[Array, Array]:
    """The Threefry-2x32 block function: key ``(k0, k1)``, counters ``(x0, x1)``
    (uint32, one shape) to two uint32 arrays of random bits.

    >>> import numpy as np
    >>> ones = np.full((), 0xFFFFFFFF, np.uint32)
    >>> [hex(int(w)) for w in threefry2x32(ones, ones, ones, ones)]
    ['0x1cb996fc', '0xbb002be7']
    """
    args = (k0, k1, x0, x1)
    if not any(isinstance(a, Tracer) for a in args):
        _threefry2x32_aval(*[get_aval(a) for a in args])   # eager bind skips the shape rule
    return tuple(threefry2x32_p.bind(*args))
