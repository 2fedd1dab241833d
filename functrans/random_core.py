"""Keys, random bits and the uniform, normal and integer draws of ``functrans.random``.

The layout is JAX's default PRNG (``threefry2x32`` in its partitionable mode), so a
key gives the same numbers as ``jax.random`` with the same seed: a key is a uint32
array of shape (2,); element ``i`` (row-major) of a draw of any shape is the
Threefry-2x32 block of (key, counter ``i``), two words ``(b1, b2)``; 32-bit draws
use ``b1 ^ b2``, 64-bit draws ``b1 << 32 | b2``; ``split`` gives key ``i`` as the
block of counter ``i``; ``fold_in`` hashes the datum as the counter. ``key`` gives
JAX's typed keys (``key_array.KeyArray``, dtype ``key<fry>``, over those words),
``PRNGKey`` the raw words; every function takes either and draws the same numbers. Floats in
[0, 1) are the top mantissa bits of those words over 2**mantissa, exactly.

This module holds what the distributions build on; ``functrans.random`` is the
public face. Its helpers without an underscore (``check_key``, ``shape_tuple``,
``float_dtype``, ``split2``, ``random_words``) are for the distributions module.

>>> from functrans import random_core
>>> random_core.split(random_core.PRNGKey(0)).tolist()
[[1797259609, 2579123966], [928981903, 3453687069]]
"""
from __future__ import annotations

import math
import operator

import numpy as np

from jaxpr_ir import bfloat16, canonical_dtype, dtype_kind
from . import numpy as fnp
from .key_array import KEY_DTYPE, KeyArray, KeyDtype
from .lax_special import erf_inv
from .numpy._util import broadcasts_exactly
from .tracing import Tracer
from .primitives import elementwise as E
from .primitives.elementwise import convert_element_type
from .primitives.random import threefry2x32
from .primitives.structural import broadcast_in_dim, iota, reshape
from .typing import Array, ArrayLike, DTypeLike, Shape

__all__ = ["key", "PRNGKey", "split", "fold_in", "bits", "uniform", "normal", "randint",
           "key_data", "wrap_key_data", "clone", "key_impl", "key_dtype"]

_MASK32 = 0xFFFFFFFF
_UINT = {32: np.uint32, 16: np.uint16, 8: np.uint8}


# --------------------------------------------------------------------------- checks

def shape_tuple(name, shape):
    """``shape`` as a tuple of non-negative ints (an int is a 1-d shape)."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        shape = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"{name}: Shapes must be 1D sequences of concrete values of integer "
                        f"type (a tuple of ints), got {shape!r:.60}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"{name}: shape {shape} has a negative dimension")
    return shape


def check_key(name, k):
    """The uint32 words of ``k``, a PRNG key (a typed key of shape (), or raw uint32 of
    shape (2,)); else a TypeError naming ``name``."""
    typed = isinstance(k, KeyArray)
    shape = k.shape if typed else getattr(k, "shape", None)
    if not typed and (getattr(k, "dtype", None) != np.uint32 or not shape or shape[-1] != 2):
        got = (f"an array of shape {shape} and dtype {k.dtype}" if shape is not None
               else f"{type(k).__name__} {k!r:.40}")
        raise TypeError(f"{name}: invalid PRNG key data: expected a PRNG key "
                        f"(typed, or uint32 words of shape (2,) from random.PRNGKey), got {got}")
    if shape != (() if typed else (2,)):          # JAX's ValueError
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{tuple(shape)} != () (vmap over the keys, or index one)")
    k = k._base if typed else k
    return k if isinstance(k, Tracer) else fnp.asarray(k)


def float_dtype(name, dtype):
    """A float16, float32, float64 or bfloat16 dtype, or JAX's ValueError."""
    dt = canonical_dtype(np.float64 if dtype is None else dtype)
    if dt not in (np.float16, np.float32, np.float64, bfloat16):
        raise ValueError(f"dtype argument to `{name}` must be a floating dtype (float16, "
                         f"float32, float64 or bfloat16), got {dt}")
    return dt


def check_broadcast(name, what, vshape, shape):
    """``vshape`` must broadcast to exactly ``shape`` (the draw's shape)."""
    if not broadcasts_exactly(vshape, shape):
        raise ValueError(f"{name}: {what} of shape {tuple(vshape)} does not broadcast to "
                         f"shape {shape}")


# --------------------------------------------------------------------------- blocks

def _blocks(k, shape):
    """The Threefry words (b1, b2) of counters 0..n-1, each of ``shape``."""
    n = math.prod(shape)
    if n > 2 ** 64:
        raise ValueError(f"random: cannot draw {n} values at once (at most 2**64)")
    k0 = broadcast_in_dim(reshape(k[0:1], ()), shape, ())
    k1 = broadcast_in_dim(reshape(k[1:2], ()), shape, ())
    return threefry2x32(k0, k1, *counter_words(shape, n >= 2 ** 32))


def counter_words(shape, wide):
    """The counters 0..n-1 (row-major over ``shape``) as JAX's two uint32 words (hi, lo)
    of a 64-bit count; ``wide=False`` (n < 2**32) skips the 64-bit arithmetic: hi = 0."""
    n = math.prod(shape)
    if not wide:
        return broadcast_in_dim(np.uint32(0), shape, ()), reshape(iota(np.uint32, n), shape)
    i = iota(np.uint64, n)
    hi = convert_element_type(E.shift_right_logical(i, np.uint64(32)), np.uint32)
    return reshape(hi, shape), reshape(convert_element_type(i, np.uint32), shape)


def random_words(k, shape, width=32):
    """Random unsigned words of ``shape``: uint32 (``width`` 32), uint16 (16) or uint8 (8):
    the low bits of JAX's 32-bit words."""
    b1, b2 = _blocks(k, shape)
    w = E.bitwise_xor(b1, b2)
    return w if width == 32 else convert_element_type(w, _UINT[width])


def _int64_words(k, shape):
    """64 random bits per element as int64 (the two's-complement view of JAX's uint64)."""
    b1, b2 = _blocks(k, shape)
    hi = E.shift_left(convert_element_type(b1, np.int64),
                      broadcast_in_dim(np.int64(32), shape, ()))
    return E.bitwise_or(hi, convert_element_type(b2, np.int64))


# --------------------------------------------------------------------------- keys

def _seed_words(name, seed):
    """(high, low) uint32 words of an integer seed: the 64-bit two's complement of a
    Python int or a 64-bit integer; a seed of a dtype of 32 bits or fewer has high word 0
    (JAX shifts the seed right by 32 in its own dtype: np.int32(-2) -> [0, 2**32 - 2])."""
    if isinstance(seed, KeyArray):
        raise TypeError(f"{name} accepts a scalar seed, but was given a PRNG key.")
    shape = getattr(seed, "shape", ())
    if shape != ():
        raise TypeError(f"{name} accepts a scalar seed, but was given an array of shape "
                        f"{tuple(shape)} != () (vmap over the seeds for a batch of keys)")
    if isinstance(seed, Tracer):
        if dtype_kind(seed.dtype) not in "iu":
            raise TypeError(f"PRNG key seed must be an integer; got {seed.aval.str_short()}")
        s = convert_element_type(seed, np.int64)
        if np.dtype(seed.dtype).itemsize <= 4:
            return np.uint32(0), convert_element_type(s, np.uint32)
        hi = convert_element_type(E.shift_right_logical(s, np.int64(32)), np.uint32)
        return hi, convert_element_type(s, np.uint32)
    if (isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer, np.ndarray))
            or (isinstance(seed, np.ndarray) and dtype_kind(seed.dtype) not in "iu")):
        raise TypeError(f"PRNG key seed must be an integer; got {type(seed).__name__} "
                        f"{seed!r:.40} ({name})")
    s = int(seed)
    if type(seed) is int and not -2 ** 63 <= s < 2 ** 63:   # JAX: a Python int is an int64
        raise OverflowError(f"{name}: Python int seed {s} does not fit in int64 (a numpy "
                            "uint64 seed may use all 64 bits)")
    if isinstance(seed, (np.integer, np.ndarray)) and seed.dtype.itemsize <= 4:
        return np.uint32(0), np.uint32(s & _MASK32)
    return np.uint32((s >> 32) & _MASK32), np.uint32(s & _MASK32)


# JAX's PRNG names; only threefry2x32 (JAX's default) is here
_JAX_IMPLS = ("threefry2x32", "rbg", "unsafe_rbg", "threefry4x32", "philox2x32", "philox4x32")


def _check_impl(name, impl, dtype=None):
    """``impl`` (a name, a key dtype, or None) and ``dtype`` (a key dtype, a name, or
    None; not both) name threefry2x32, else JAX's ValueError / TypeError."""
    if impl is not None and dtype is not None:
        raise ValueError(f"Cannot specify both `impl` and `dtype` arguments to {name}")
    spec = impl if impl is not None else dtype
    if spec is None or isinstance(spec, KeyDtype) or spec in ("threefry2x32", "threefry"):
        return
    if not isinstance(spec, str):
        raise TypeError(f"{name}: unrecognized type {type(spec)} for specifying PRNG "
                        "implementation (a name such as 'threefry2x32', or a key dtype)")
    if spec in _JAX_IMPLS:
        raise ValueError(f"{name}: the {spec!r} PRNG is not implemented in functrans; "
                         "only 'threefry2x32' (JAX's default) is")
    raise ValueError(f"{name}: unrecognized PRNG implementation {spec!r} (functrans has "
                     "'threefry2x32' only)")


def key(seed: ArrayLike, *, impl: str | None = None, dtype: DTypeLike | None = None) -> KeyArray:
    """A typed PRNG key from an integer seed (up to 64 bits), as ``jax.random.key``: shape
    (), dtype ``key<fry>``, its ``key_data`` the uint32 words ``[seed >> 32, seed &
    0xffffffff]`` (``PRNGKey(seed)``). ``impl`` may name 'threefry2x32' (the only PRNG
    here); ``dtype`` may be None or ``key_dtype()``.

    >>> from functrans import random
    >>> k = random.key(1)
    >>> k.shape, str(k.dtype), random.key_data(k).tolist()
    ((), 'key<fry>', [0, 1])
    """
    _check_impl("key", impl, dtype)
    return KeyArray(_raw_key("key", seed))


def PRNGKey(seed: ArrayLike, *, impl: str | None = None) -> Array:
    """JAX's legacy raw key: uint32 ``[seed >> 32, seed & 0xffffffff]``, the words of
    ``key(seed)``; every function here takes either kind and draws the same numbers.

    >>> from functrans import random
    >>> random.PRNGKey(1).tolist()
    [0, 1]
    """
    _check_impl("PRNGKey", impl)
    return _raw_key("PRNGKey", seed)


def _raw_key(name, seed):
    hi, lo = _seed_words(name, seed)
    return fnp.stack([fnp.asarray(hi), fnp.asarray(lo)])


def key_impl(keys: ArrayLike) -> str:
    """The PRNG of a key: always 'threefry2x32' here (JAX's default).

    >>> from functrans import random
    >>> random.key_impl(random.key(0))
    'threefry2x32'
    """
    key_data(keys)
    return "threefry2x32"


def key_dtype(impl_spec: str | None = None) -> KeyDtype:
    """The dtype of typed keys, ``key<fry>`` (JAX's threefry2x32 key dtype).

    >>> from functrans import random
    >>> random.key_dtype()
    key<fry>
    """
    _check_impl("key_dtype", impl_spec)
    return KEY_DTYPE


def key_data(keys: Array | KeyArray) -> Array:
    """The uint32 words of a key or keys, shape ``keys.shape + (2,)``; raw keys are
    their own words.

    >>> from functrans import random
    >>> random.key_data(random.key(3)).tolist()
    [0, 3]
    """
    if isinstance(keys, KeyArray):
        return keys._base
    keys = fnp.asarray(keys) if not isinstance(keys, Tracer) else keys
    if keys.dtype != np.uint32 or keys.ndim < 1 or keys.shape[-1] != 2:
        raise TypeError(f"key_data: expected uint32 keys of shape (..., 2), got "
                        f"{keys.dtype} {tuple(keys.shape)}")
    return keys


def wrap_key_data(key_bits_array: ArrayLike, *, impl: str | None = None,
                  dtype: DTypeLike | None = None) -> KeyArray:
    """Typed keys of shape ``(...)`` from uint32 words of shape (..., 2); ``impl`` must
    be None or 'threefry2x32', the only PRNG here.

    >>> import numpy as np
    >>> from functrans import random
    >>> random.wrap_key_data(np.array([[0, 3]], np.uint32)).shape
    (1,)
    """
    _check_impl("wrap_key_data", impl, dtype)
    if isinstance(key_bits_array, KeyArray):
        raise TypeError("wrap_key_data: expected uint32 key data, got typed keys")
    return KeyArray(key_data(key_bits_array))


def _like(key, words):
    """``words`` as a typed key if ``key`` was one, else raw."""
    return KeyArray(words) if isinstance(key, KeyArray) else words


def clone(key: Array | KeyArray) -> Array | KeyArray:
    """The same key or array of keys, any shape (there is no reuse tracking to reset
    here): a typed key array, or raw uint32 keys of shape ``(..., 2)``.

    >>> from functrans import random
    >>> random.key_data(random.clone(random.key(2))).tolist()
    [0, 2]
    >>> random.clone(random.split(random.key(0), 5)).shape
    (5,)
    """
    if isinstance(key, KeyArray):
        return key
    shape, dtype = getattr(key, "shape", None), getattr(key, "dtype", None)
    if shape is None or len(shape) < 1 or shape[-1] != 2 or dtype != np.uint32:
        raise TypeError(f"clone: expected PRNG keys (typed, or uint32 of shape (..., 2)), "
                        f"got {type(key).__name__} of shape {shape} and dtype {dtype}")
    return key if isinstance(key, Tracer) else fnp.asarray(key)


def split(key: Array, num: int | Shape = 2) -> Array:
    """``num`` new keys (an int, or a shape tuple): shape ``(num, 2)`` or ``num + (2,)``.

    >>> from functrans import random
    >>> random.split(random.key(0), 3).shape, random.split(random.PRNGKey(0), 3).shape
    ((3,), (3, 2))
    """
    k = check_key("split", key)
    shape = shape_tuple("split", num)
    b1, b2 = _blocks(k, shape)
    return _like(key, fnp.stack([b1, b2], axis=-1))


def split2(k):
    """The two keys of ``split(k)``, as a pair."""
    b1, b2 = _blocks(k, (2,))
    return fnp.stack([b1[0], b2[0]]), fnp.stack([b1[1], b2[1]])


def fold_in(key: Array, data: ArrayLike) -> Array:
    """A new key from ``key`` and an integer ``data`` (a numpy integer taken modulo 2**32,
    as JAX does; a Python int must fit in uint32, else OverflowError as JAX).

    >>> from functrans import random
    >>> random.fold_in(random.PRNGKey(0), 7).tolist()
    [2716826189, 292468403]
    """
    k = check_key("fold_in", key)
    if type(data) is int and not 0 <= data < 2 ** 32:    # JAX converts it to uint32
        raise OverflowError(f"fold_in: Python int data {data} is out of bounds for uint32 "
                            "(numpy integers are taken modulo 2**32)")
    _, lo = _seed_words("fold_in", data)
    y0, y1 = threefry2x32(reshape(k[0:1], ()), reshape(k[1:2], ()), np.uint32(0), lo)
    return _like(key, fnp.stack([y0, y1]))


def bits(key: Array, shape: Shape = (), dtype: DTypeLike | None = None) -> Array:
    """Uniformly random unsigned words of ``shape``: uint32 (the default), uint64, uint16 or
    uint8; JAX's words for the same key and dtype.

    JAX with float64 enabled defaults to uint64; the default here stays uint32.

    >>> from functrans import random
    >>> random.bits(random.key(0), (2,)).dtype
    dtype('uint32')
    """
    k = check_key("bits", key)
    shape = shape_tuple("bits", shape)
    dt = canonical_dtype(np.uint32 if dtype is None else dtype)
    if dt == np.uint64:
        return convert_element_type(_int64_words(k, shape), dt)    # the same 64 bits
    width = {np.dtype(np.uint32): 32, np.dtype(np.uint16): 16, np.dtype(np.uint8): 8}.get(dt)
    if width is None:       # JAX's ValueError
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype (uint8, "
                         f"uint16, uint32 or uint64), got {dt}")
    return random_words(k, shape, width)


# --------------------------------------------------------------------------- floats

def unit_float(k, shape, dt):
    """Floats of ``shape`` uniform on [0, 1): the top 23 (float32) or 52 (float64)
    random bits over 2**23 or 2**52, exact in every step; bfloat16 as JAX's (7 mantissa
    bits, fewer than 8: it draws 8-bit words, the low byte of each 32-bit one): the top 7
    of those 8 bits over 2**7; float16 as JAX's: the low 16 bits of each word, their top
    10 over 2**10."""
    b1, b2 = _blocks(k, shape)
    if dt == np.float16:
        w = E.bitwise_and(E.bitwise_xor(b1, b2), broadcast_in_dim(np.uint32(0xFFFF), shape, ()))
        m = E.shift_right_logical(w, broadcast_in_dim(np.uint32(6), shape, ()))
        return convert_element_type(convert_element_type(m, np.float32) * np.float32(2.0 ** -10),
                                    np.float16)
    if dt == bfloat16:
        w = E.bitwise_and(E.bitwise_xor(b1, b2), broadcast_in_dim(np.uint32(0xFF), shape, ()))
        m = E.shift_right_logical(w, broadcast_in_dim(np.uint32(1), shape, ()))
        return convert_element_type(convert_element_type(m, np.float32) * np.float32(2.0 ** -7),
                                    bfloat16)
    if dt == np.float32:
        m = E.shift_right_logical(E.bitwise_xor(b1, b2), broadcast_in_dim(np.uint32(9), shape, ()))
        return convert_element_type(m, np.float32) * np.float32(2.0 ** -23)
    # (b1 << 32 | b2) >> 12 == b1 * 2**20 + (b2 >> 12), below 2**52: exact in float64
    lo = E.shift_right_logical(b2, broadcast_in_dim(np.uint32(12), shape, ()))
    m = convert_element_type(b1, np.float64) * 2.0 ** 20 + convert_element_type(lo, np.float64)
    return m * 2.0 ** -52


def _fused_multiply_add(a, b, c):
    """``a * b + c`` rounded once, as XLA's CPU code computes JAX's uniform (it fuses the
    multiply and add). float16/bfloat16: the product rounded, then the sum (XLA's 16-bit
    ops). float32: exact product and one float64 sum (a second rounding
    to float32 errs only on an exact float32 tie). float64: Dekker's exact product and
    Knuth's exact sum, then one rounding of their sum (off only in rare near-ties)."""
    if a.dtype in (bfloat16, np.float16):   # XLA rounds the 16-bit product, then the sum
        return a * b + c
    if a.dtype == np.float32:
        wide = fnp.asarray(a, np.float64) * fnp.asarray(b, np.float64) + fnp.asarray(c, np.float64)
        return fnp.asarray(wide, a.dtype)
    p = a * b
    a_hi, a_lo = _veltkamp_split(a)
    b_hi, b_lo = _veltkamp_split(b)
    p_err = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    s = p + c
    back = s - p
    s_err = (p - (s - back)) + (c - back)
    fused = s + (s_err + p_err)
    # splitting |b| near the top of the range would overflow: keep the plain result there
    return fnp.where(fnp.abs(b) < 2.0 ** 996, fused, p + c)


def _veltkamp_split(x):
    """x = hi + lo with hi holding the top 26 bits, exactly (float64)."""
    t = x * (2.0 ** 27 + 1.0)
    hi = t - (t - x)
    return hi, x - hi


def uniform(key: Array, shape: Shape = (), dtype: DTypeLike | None = None,
            minval: ArrayLike = 0.0, maxval: ArrayLike = 1.0) -> Array:
    """Floats uniform on [minval, maxval) (bounds broadcast against ``shape``), JAX's
    draws bit for bit: ``max(minval, u * (maxval - minval) + minval)``, u on [0, 1).
    As in JAX, rounding can give ``maxval`` itself when the range is wide.

    >>> from functrans import random
    >>> random.uniform(random.key(0), (3,)).tolist()
    [0.41845711171638644, 0.21629545460551136, 0.9653214611189975]
    """
    k = check_key("uniform", key)
    shape = shape_tuple("uniform", shape)
    dt = float_dtype("uniform", dtype)
    lo = fnp.asarray(minval, dt)
    hi = fnp.asarray(maxval, dt)
    for name, v in (("minval", lo), ("maxval", hi)):
        check_broadcast("uniform", name, v.shape, shape)
    out = fnp.maximum(lo, _fused_multiply_add(unit_float(k, shape, dt), hi - lo, lo))
    return fnp.broadcast_to(out, shape) if tuple(out.shape) != shape else out


def normal(key: Array, shape: Shape = (), dtype: DTypeLike | None = None) -> Array:
    """Standard normal samples: ``sqrt(2) * erf_inv(u)``, u uniform on (-1, 1) (JAX's
    algorithm; equal to JAX's draws within a few ulp, see the README). A complex dtype
    draws the real and imaginary parts from the two keys of ``split(key)``, each scaled
    by 1/sqrt(2) (unit variance in all), as JAX does.

    >>> from functrans import random
    >>> [round(v, 6) for v in random.normal(random.key(0), (3,)).tolist()]
    [-0.205842, -0.784766, 1.816087]
    """
    k = check_key("normal", key)
    shape = shape_tuple("normal", shape)
    if dtype is not None and dtype_kind(dtype) == "c":   # JAX's: (re + i im) / sqrt(2)
        cdt = canonical_dtype(dtype)
        k_re, k_im = split2(k)
        rdt = np.finfo(cdt).dtype
        re, im = (E.convert_element_type(normal(kk, shape, rdt), cdt) for kk in (k_re, k_im))
        return (re + 1j * im) / np.sqrt(2).astype(cdt)
    dt = float_dtype("normal", dtype)
    lo = np.nextafter(dt.type(-1.0), dt.type(0.0))
    u = uniform(k, shape, dt, lo, dt.type(1.0))
    return dt.type(np.sqrt(2.0)) * erf_inv(u)


# --------------------------------------------------------------------------- integers

def _urem64(x, s, s_wraps, wrap_rem):
    """``x mod s`` of uint64 values held as int64 bit patterns. For s < 2**63 (``s_wraps``
    False) a negative x stands for x + 2**64, and ``wrap_rem`` = 2**64 mod s; for
    s >= 2**63, x mod s is x or x - s (unsigned comparison by flipping the sign bit)."""
    r = fnp.remainder(x, fnp.where(s_wraps, 1, s))
    room = s - wrap_rem                         # r + wrap_rem >= s  <=>  r >= s - wrap_rem
    r = fnp.where(x < 0, fnp.where(r >= room, r - room, r + wrap_rem), r)
    flip = np.int64(-2 ** 63)
    big = fnp.where(E.bitwise_xor(x, flip) < E.bitwise_xor(s, flip), x, x - s)
    return fnp.where(s_wraps, big, r)


def _addmod(a, b, s):
    """(a + b) mod s for 0 <= a, b < s <= 2**63 - 1, without overflow."""
    return fnp.where(a >= s - b, a - (s - b), a + b)


def _randint64(k1, k2, shape, lo, hi):
    """JAX's int64 randint in int64 bit patterns of its uint64 arithmetic:
    (hi_bits mod s * ((2**32 mod s)**2 mod s) + lo_bits mod s) mod s, s = maxval - minval
    (1 if empty); products and sums wrap modulo 2**64 exactly as JAX's do."""
    s = fnp.where(hi <= lo, np.int64(1), hi - lo)        # negative: s >= 2**63
    s_wraps = s < 0
    s_safe = fnp.where(s_wraps, np.int64(1), s)
    one = fnp.remainder(np.int64(1), s_safe)
    half = _addmod(fnp.remainder(np.int64(2 ** 63 - 1), s_safe), one, s_safe)
    wrap_rem = _addmod(half, half, s_safe)                 # 2**64 mod s
    m = _urem64(fnp.full_like(s, 2 ** 32), s, s_wraps, wrap_rem)
    mult = _urem64(m * m, s, s_wraps, wrap_rem)            # m * m == 2**64 wraps to 0
    x_hi = _urem64(_int64_words(k1, shape), s, s_wraps, wrap_rem)
    x_lo = _urem64(_int64_words(k2, shape), s, s_wraps, wrap_rem)
    return lo + _urem64(x_hi * mult + x_lo, s, s_wraps, wrap_rem)


def _randint32(k1, k2, shape, lo, hi, hi_out_of_range):
    """JAX's 32-bit randint: the same formula in uint32 arithmetic (2**16 for 2**32)."""
    u32 = np.uint32
    span = convert_element_type(fnp.asarray(hi - lo), u32)
    span = fnp.where(hi <= lo, u32(1), span)
    # maxval beyond the dtype's range stands for one past its maximum
    span = fnp.where(hi_out_of_range & (hi > lo), span + u32(1), span)
    span_safe = fnp.where(span == u32(0), u32(1), span)   # span 0 means 2**32: no reduction
    rem = lambda v: fnp.where(span == u32(0), v, fnp.remainder(v, span_safe))  # noqa: E731
    m = rem(fnp.full_like(span, 2 ** 16))
    mult = rem(m * m)
    x = rem(rem(random_words(k1, shape)) * mult + rem(random_words(k2, shape)))
    return lo + convert_element_type(fnp.asarray(x), lo.dtype)


def randint(key: Array, shape: Shape, minval: ArrayLike, maxval: ArrayLike,
            dtype: DTypeLike | None = None) -> Array:
    """Integers uniform on [minval, maxval) (bounds broadcast; maxval <= minval gives
    minval), JAX's draws bit for bit (its modular reduction of two words per value,
    slightly biased when the range is not a power of two; 8- and 16-bit dtypes sample in
    32).

    >>> from functrans import random
    >>> random.randint(random.key(0), (3,), 0, 10).tolist()
    [5, 1, 5]
    """
    k = check_key("randint", key)
    shape = shape_tuple("randint", shape)
    dt = canonical_dtype(np.int64 if dtype is None else dtype)
    if dtype_kind(dt) not in "iu":
        raise TypeError(f"randint: dtype must be an integer dtype, got {dt}")
    lo, hi = fnp.asarray(minval), fnp.asarray(maxval)
    for name, v in (("minval", lo), ("maxval", hi)):
        if dtype_kind(v.dtype) not in "iub":
            raise TypeError(f"randint: {name} must be an integer, got dtype {v.dtype}")
        check_broadcast("randint", name, v.shape, shape)
    lo, hi = fnp.asarray(lo, np.int64), fnp.asarray(hi, np.int64)
    info = np.iinfo(dt)
    k1, k2 = split2(k)
    if dt == np.int64:
        out = _randint64(k1, k2, shape, lo, hi)
    else:                        # 32-bit arithmetic; 8-/16-bit dtypes sample as int32
        wide = np.iinfo(np.uint32 if dt == np.uint32 else np.int32)
        hi_out = hi > int(wide.max)
        if info.bits < 32:       # JAX clips the bounds to the dtype, maxval to max + 1
            lo, hi = fnp.clip(lo, info.min, info.max), fnp.clip(hi, info.min, info.max + 1)
            hi_out = fnp.zeros_like(hi, bool)
        lo32 = fnp.asarray(fnp.clip(lo, int(wide.min), int(wide.max)), wide.dtype)
        hi32 = fnp.asarray(fnp.clip(hi, int(wide.min), int(wide.max)), wide.dtype)
        out = _randint32(k1, k2, shape, lo32, hi32, hi_out)
    out = fnp.asarray(out, dt)
    return fnp.broadcast_to(out, shape) if tuple(out.shape) != shape else out
