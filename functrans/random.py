"""``functrans.random``: counter-based pseudo-random numbers with explicit keys.

A key is a uint32 array of shape (2,). Random bits are the Threefry-2x32 block
function of (key, counter) over counters 0, 1, 2, ... (the ``threefry2x32``
primitive), so the same key gives the same numbers eagerly, under ``jit``, under
``vmap`` (a batch of keys gives what a loop over them gives) and on every backend.
Never reuse a key: derive new ones with ``split`` or ``fold_in``.

Floats are made from the top mantissa bits by exact integer-to-float arithmetic
(23 bits for float32; 52 bits, from two 32-bit words, for float64), so they lie
in [0, 1) exactly and are reproducible bit for bit.

>>> from functrans import random
>>> k1, k2 = random.split(random.key(0))
>>> x = random.uniform(k1, (3,))
>>> bool(((0 <= x) & (x < 1)).all())
True
"""
from __future__ import annotations

import math
import operator

import numpy as np

from jaxpr_ir import canonical_dtype
from .numpy._util import broadcasts_exactly
from .tracing import Tracer, wrap
from .primitives import elementwise as E
from .primitives.elementwise import convert_element_type
from .primitives.random import _threefry2x32_impl, threefry2x32
from .primitives.elementwise_math import erf as _erf
from .primitives.sorting import sort_p
from .primitives.slicing import slice_in_dim
from .primitives.structural import broadcast_in_dim, iota, reshape as _reshape

__all__ = ["key", "PRNGKey", "split", "fold_in", "bits", "uniform", "normal", "bernoulli",
           "randint", "permutation", "choice", "gumbel", "categorical", "exponential",
           "threefry2x32", "truncated_normal"]

_MASK32 = 0xFFFFFFFF


# --------------------------------------------------------------------------- helpers

def _fnp():
    from . import numpy as fnp
    return fnp


def _shape(name, shape):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        shape = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a tuple of ints, got {shape!r:.60}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"{name}: shape {shape} has a negative dimension")
    return shape


def _check_key(name, k):
    shape = getattr(k, "shape", None)
    dtype = getattr(k, "dtype", None)
    if shape != (2,) or dtype != np.uint32:
        got = (f"an array of shape {shape} and dtype {dtype}" if shape is not None
               else f"{type(k).__name__} {k!r:.40}")
        raise TypeError(f"{name}: expected a PRNG key (a uint32 array of shape (2,), from "
                        f"random.key(seed) or random.split), got {got}")
    return k


def _key_words(k):
    """The two uint32 words of a key, as scalars."""
    if isinstance(k, Tracer):
        return k[0], k[1]
    k = np.asarray(k)
    return k[0:1].reshape(()), k[1:2].reshape(())


def _full(x, shape):
    """A scalar (array or tracer) broadcast to ``shape``."""
    return broadcast_in_dim(x, shape, ())


def _bits_pair(k, n):
    """Two uint32 arrays of shape (n,): the Threefry blocks of counters 0..n-1 (high
    word) and n..2n-1 (low word). At most 2**31 blocks per call."""
    if n >= 2 ** 31:
        raise ValueError(f"random: cannot draw {n} blocks of bits at once (at most 2**31)")
    if not isinstance(k, Tracer):
        # eager fast path: the same numpy computation the primitive's impl does
        k = np.asarray(k)
        c = np.arange(2 * n, dtype=np.uint32)
        y0, y1 = _threefry2x32_impl(np.full(n, k[0]), np.full(n, k[1]), c[:n], c[n:])
        return wrap(y0), wrap(y1)
    k0, k1 = _key_words(k)
    # counters as a staged iota (not a constant array baked into the jaxpr)
    c = _reshape(iota(np.uint32, 2 * n), (2, n))
    c0 = _reshape(slice_in_dim(c, 0, 1, axis=0), (n,))
    c1 = _reshape(slice_in_dim(c, 1, 2, axis=0), (n,))
    return threefry2x32(_full(k0, (n,)), _full(k1, (n,)), c0, c1)


def _bits(k, n):
    """``n`` random uint32 words: both halves of ceil(n/2) Threefry blocks."""
    m = (n + 1) // 2
    y0, y1 = _bits_pair(k, m)
    fnp = _fnp()
    out = fnp.concatenate([y0, y1])
    return out if 2 * m == n else out[:n]


def _seed_words(name, seed):
    """(high, low) uint32 words of an integer seed or datum (64-bit two's complement)."""
    if isinstance(seed, Tracer):
        if seed.dtype.kind not in "iu" or seed.shape != ():
            raise TypeError(f"{name}: expected an integer scalar, got {seed.aval.str_short()}")
        s = convert_element_type(seed, np.int64)
        hi = convert_element_type(E.shift_right_logical(s, np.int64(32)), np.uint32)
        return hi, convert_element_type(s, np.uint32)
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer, np.ndarray)):
        raise TypeError(f"{name}: expected an integer, got {type(seed).__name__} {seed!r:.40}")
    if isinstance(seed, np.ndarray):
        if seed.shape != () or seed.dtype.kind not in "iu":
            raise TypeError(f"{name}: expected an integer scalar, got an array of shape "
                            f"{seed.shape} and dtype {seed.dtype}")
    s = int(seed)
    if not -2 ** 63 <= s < 2 ** 64:
        raise ValueError(f"{name}: {s} does not fit in 64 bits")
    return np.uint32((s >> 32) & _MASK32), np.uint32(s & _MASK32)


def _check_broadcast(name, what, vshape, shape):
    """``vshape`` must broadcast to exactly ``shape`` (the draw's shape)."""
    if not broadcasts_exactly(vshape, shape):
        raise ValueError(f"{name}: {what} of shape {tuple(vshape)} does not broadcast to "
                         f"shape {shape}")


def _float_dtype(name, dtype):
    dt = canonical_dtype(dtype)
    if dt.kind != "f":
        raise TypeError(f"{name}: dtype must be a floating dtype (float32 or float64), got {dt}")
    return dt


# --------------------------------------------------------------------------- keys

def key(seed):
    """A PRNG key from an integer seed (up to 64 bits): uint32 ``[seed >> 32, seed & 0xffffffff]``.

    >>> from functrans import random
    >>> random.key(1).tolist()
    [0, 1]
    """
    hi, lo = _seed_words("key", seed)
    if isinstance(hi, Tracer):
        return _fnp().stack([hi, lo])
    return wrap(np.array([hi, lo], dtype=np.uint32))


PRNGKey = key


def split(key, num=2):
    """``num`` new independent keys, shape (num, 2).

    >>> from functrans import random
    >>> random.split(random.key(0), 3).shape
    (3, 2)
    """
    _check_key("split", key)
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"split: num must be non-negative, got {num}")
    return _fnp().reshape(_bits(key, 2 * num), (num, 2))


def fold_in(key, data):
    """A new key from ``key`` and an integer ``data`` (e.g. a step or device index).

    >>> from functrans import random
    >>> k = random.key(0)
    >>> bool((random.fold_in(k, 1) != random.fold_in(k, 2)).any())
    True
    """
    _check_key("fold_in", key)
    hi, lo = _seed_words("fold_in", data)
    k0, k1 = _key_words(key)
    y0, y1 = threefry2x32(k0, k1, hi, lo)
    return _fnp().stack([y0, y1])


def bits(key, shape=(), dtype=np.uint32):
    """Uniformly random uint32 words of ``shape``.

    >>> from functrans import random
    >>> random.bits(random.key(0), (2,)).dtype
    dtype('uint32')
    """
    _check_key("bits", key)
    shape = _shape("bits", shape)
    if canonical_dtype(dtype) != np.uint32:
        raise TypeError(f"bits: only uint32 is supported, got {dtype}")
    return _fnp().reshape(_bits(key, math.prod(shape)), shape)


# --------------------------------------------------------------------------- distributions

def _unit_float(key, shape, dt):
    """Floats of ``shape`` uniform on [0, 1), exact multiples of 2**-mantissa."""
    n = math.prod(shape)
    if not isinstance(key, Tracer):
        # eager fast path; every step is exact, so it equals the traced path bit for bit
        if dt == np.float32:
            w = np.asarray(_bits(key, n)) >> np.uint32(9)
            f = w.astype(np.float32) * np.float32(2.0 ** -23)
        else:
            hi, lo = (np.asarray(b) for b in _bits_pair(key, n))
            f = ((hi >> np.uint32(12)).astype(np.float64) * 2.0 ** 32
                 + lo.astype(np.float64)) * 2.0 ** -52
        return wrap(f.reshape(shape))
    if dt == np.float32:
        w = E.shift_right_logical(_bits(key, n), _full(np.uint32(9), (n,)))
        f = E.mul(convert_element_type(w, np.float32), _full(np.float32(2.0 ** -23), (n,)))
    else:
        hi, lo = _bits_pair(key, n)
        hi = convert_element_type(E.shift_right_logical(hi, _full(np.uint32(12), (n,))),
                                  np.float64)
        # (hi20 * 2**32 + lo32) * 2**-52: every step exact in float64
        f = E.mul(E.add(E.mul(hi, _full(np.float64(2.0 ** 32), (n,))),
                        convert_element_type(lo, np.float64)),
                  _full(np.float64(2.0 ** -52), (n,)))
    return _fnp().reshape(f, shape)


def uniform(key, shape=(), dtype=np.float64, minval=0.0, maxval=1.0):
    """Floats uniform on [minval, maxval) (bounds broadcast against ``shape``).

    >>> from functrans import random
    >>> x = random.uniform(random.key(0), (1000,), minval=2.0, maxval=3.0)
    >>> bool((x >= 2.0).all() and (x < 3.0).all())
    True
    """
    _check_key("uniform", key)
    shape = _shape("uniform", shape)
    dt = _float_dtype("uniform", dtype)
    fnp = _fnp()
    f = _unit_float(key, shape, dt)
    lo = fnp.asarray(minval, dt)
    hi = fnp.asarray(maxval, dt)
    for name, v in (("minval", lo), ("maxval", hi)):
        _check_broadcast("uniform", name, v.shape, shape)
    out = f * (hi - lo) + lo
    out = fnp.maximum(lo, out)
    if not isinstance(hi, Tracer) and not isinstance(lo, Tracer):
        # rounding of f * (hi - lo) + lo may reach maxval: clamp to the float below it
        below = np.nextafter(np.asarray(hi), np.asarray(lo)).astype(dt)
        out = fnp.minimum(out, np.where(np.asarray(hi) > np.asarray(lo), below, np.asarray(lo)))
    return fnp.broadcast_to(out, shape) if tuple(out.shape) != shape else out


def normal(key, shape=(), dtype=np.float64):
    """Standard normal samples (Box-Muller: sqrt(-2 log(1-u1)) cos(2 pi u2)).

    >>> from functrans import random
    >>> random.normal(random.key(0), (2, 3)).shape
    (2, 3)
    """
    _check_key("normal", key)
    shape = _shape("normal", shape)
    dt = _float_dtype("normal", dtype)
    fnp = _fnp()
    k1, k2 = _split2(key)
    u1 = _unit_float(k1, shape, dt)
    u2 = _unit_float(k2, shape, dt)
    radius = fnp.sqrt(-2.0 * fnp.log(1.0 - u1))        # 1 - u1 is in (0, 1]
    return radius * fnp.cos((2.0 * np.pi) * u2)


def _split2(key):
    ks = split(key, 2)
    return ks[0], ks[1]


def bernoulli(key, p=0.5, shape=None):
    """Booleans that are True with probability ``p`` (``shape`` defaults to p's shape).

    >>> from functrans import random
    >>> random.bernoulli(random.key(0), 0.5, (4,)).dtype
    dtype('bool')
    """
    _check_key("bernoulli", key)
    fnp = _fnp()
    p = fnp.asarray(p)
    if p.dtype.kind != "f":
        p = fnp.asarray(p, np.float64)
    shape = tuple(p.shape) if shape is None else _shape("bernoulli", shape)
    _check_broadcast("bernoulli", "p", p.shape, shape)
    return fnp.less(uniform(key, shape, p.dtype), p)


def randint(key, shape, minval, maxval, dtype=np.int64):
    """Integers uniform on [minval, maxval) (bounds broadcast; maxval <= minval gives minval).

    Each draw reduces 63 random bits modulo the range, so the bias is below 2**-31
    for any range that fits in 32 bits.

    >>> from functrans import random
    >>> x = random.randint(random.key(0), (100,), 3, 7)
    >>> bool((x >= 3).all() and (x < 7).all())
    True
    """
    _check_key("randint", key)
    shape = _shape("randint", shape)
    dt = canonical_dtype(dtype)
    if dt.kind not in "iu":
        raise TypeError(f"randint: dtype must be an integer dtype, got {dt}")
    fnp = _fnp()
    info = np.iinfo(dt)
    lo = fnp.asarray(minval)
    hi = fnp.asarray(maxval)
    for name, v in (("minval", lo), ("maxval", hi)):
        if v.dtype.kind not in "iub":
            raise TypeError(f"randint: {name} must be an integer, got dtype {v.dtype}")
        _check_broadcast("randint", name, v.shape, shape)
    lo = fnp.clip(fnp.asarray(lo, np.int64), max(info.min, -2 ** 62), min(info.max, 2 ** 62))
    hi = fnp.clip(fnp.asarray(hi, np.int64), max(info.min, -2 ** 62), min(info.max, 2 ** 62))
    n = math.prod(shape)
    w_hi, w_lo = _bits_pair(key, n)
    # r = (hi31 << 32) | lo32, uniform on [0, 2**63), in int64 arithmetic
    r = E.add(E.mul(convert_element_type(E.shift_right_logical(w_hi, _full(np.uint32(1), (n,))),
                                         np.int64), _full(np.int64(2 ** 32), (n,))),
              convert_element_type(w_lo, np.int64))
    r = fnp.reshape(r, shape)
    span = fnp.maximum(hi - lo, 1)
    out = lo + fnp.remainder(r, span)
    out = fnp.broadcast_to(out, shape) if tuple(out.shape) != shape else out
    return fnp.asarray(out, dt)


def permutation(key, x, axis=0, independent=False):
    """A random permutation of ``arange(x)`` (int ``x``) or of ``x`` along ``axis``.

    Sorts by 64 random bits per element, so ties (which would bias it) are negligible.
    ``independent=True`` permutes each slice along ``axis`` independently.

    >>> from functrans import random
    >>> sorted(random.permutation(random.key(0), 5).tolist())
    [0, 1, 2, 3, 4]
    """
    _check_key("permutation", key)
    fnp = _fnp()
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        n = operator.index(x)
        if n < 0:
            raise ValueError(f"permutation: n must be non-negative, got {n}")
        x = np.arange(n, dtype=np.int64)
    x = fnp.asarray(x)
    if x.ndim == 0:
        raise ValueError("permutation: x must be an integer or an array with at least one "
                         "dimension, got a 0-d array")
    from .numpy._util import canonicalize_axis
    axis = canonicalize_axis(axis, x.ndim)
    if independent:
        k0, k1 = _bits_pair(key, x.size)
        k0, k1 = fnp.reshape(k0, x.shape), fnp.reshape(k1, x.shape)
        return sort_p.bind(k0, k1, x, dimension=axis, is_stable=True, num_keys=2)[2]
    n = x.shape[axis]
    k0, k1 = _bits_pair(key, n)
    if x.ndim == 1:
        return sort_p.bind(k0, k1, x, dimension=0, is_stable=True, num_keys=2)[2]
    perm = sort_p.bind(k0, k1, np.arange(n, dtype=np.int64), dimension=0, is_stable=True,
                       num_keys=2)[2]
    return fnp.take(x, perm, axis=axis, mode="clip")   # in range by construction


def choice(key, a, shape=(), replace=True, p=None, axis=0):
    """Random elements of ``a`` (or of ``arange(a)`` for an int) along ``axis``.

    With ``p`` (probabilities, normalised here): inverse-CDF sampling with
    replacement, Gumbel top-k without.

    >>> from functrans import random
    >>> random.choice(random.key(0), 5, (3,), replace=False).shape
    (3,)
    """
    _check_key("choice", key)
    fnp = _fnp()
    shape = _shape("choice", shape)
    if isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)):
        n, arr = operator.index(a), None
    else:
        arr = fnp.asarray(a)
        if arr.ndim == 0:
            raise ValueError("choice: a must be an integer or an array with at least one "
                             "dimension")
        from .numpy._util import canonicalize_axis
        axis = canonicalize_axis(axis, arr.ndim)
        n = arr.shape[axis]
    size = math.prod(shape)
    if n == 0 and size > 0:
        raise ValueError("choice: cannot take a non-empty sample from an empty population")
    if not replace and size > n:
        raise ValueError(f"choice: cannot take a larger sample ({size}) than the population "
                         f"({n}) when replace=False")
    if p is None:
        if replace:
            idx = randint(key, shape, 0, n)
        else:
            idx = fnp.reshape(permutation(key, n)[:size], shape)
    else:
        p = fnp.asarray(p)
        if p.shape != (n,):
            raise ValueError(f"choice: p must have shape ({n},), got {tuple(p.shape)}")
        p = fnp.asarray(p, np.float64) if p.dtype.kind != "f" else p
        if replace:
            cdf = fnp.cumsum(p)
            u = uniform(key, shape, p.dtype) * cdf[-1]
            # the index is the number of cdf entries at or below u (searchsorted 'right')
            idx = fnp.sum(fnp.less_equal(cdf[:-1], fnp.expand_dims(u, -1)), axis=-1)
            idx = fnp.asarray(idx, np.int64)
        else:
            g = _gumbel(key, p) + fnp.log(p)
            idx = fnp.reshape(fnp.argsort(g, descending=True)[:size], shape)
    if arr is None:
        return idx
    return fnp.take(arr, idx, axis=axis, mode="clip")   # in range by construction


def _gumbel(key, p):
    """Standard Gumbel samples of ``p``'s shape and dtype."""
    return gumbel(key, tuple(p.shape), p.dtype)


def gumbel(key, shape=(), dtype=np.float64):
    """Standard Gumbel samples: ``-log(-log(u))`` with u uniform on (0, 1).

    >>> from functrans import random
    >>> random.gumbel(random.key(0), (2,)).shape
    (2,)
    """
    _check_key("gumbel", key)
    shape = _shape("gumbel", shape)
    dt = _float_dtype("gumbel", dtype)
    fnp = _fnp()
    u = _unit_float(key, shape, dt)
    return -fnp.log(-fnp.log(fnp.maximum(u, np.finfo(dt).tiny)))


def exponential(key, shape=(), dtype=np.float64):
    """Standard exponential samples: ``-log(1 - u)``.

    >>> from functrans import random
    >>> bool((random.exponential(random.key(0), (5,)) >= 0).all())
    True
    """
    _check_key("exponential", key)
    shape = _shape("exponential", shape)
    dt = _float_dtype("exponential", dtype)
    fnp = _fnp()
    return -fnp.log1p(-_unit_float(key, shape, dt))


def categorical(key, logits, axis=-1, shape=None):
    """Indices drawn with probabilities ``softmax(logits)`` along ``axis`` (Gumbel-max).

    >>> from functrans import random
    >>> import numpy as np
    >>> int(random.categorical(random.key(0), np.array([-1e9, 0.0, -1e9])))
    1
    """
    _check_key("categorical", key)
    fnp = _fnp()
    logits = fnp.asarray(logits)
    if logits.dtype.kind != "f":
        logits = fnp.asarray(logits, np.float64)
    if logits.ndim == 0:
        raise ValueError("categorical: logits must have at least one dimension")
    from .numpy._util import canonicalize_axis
    axis = canonicalize_axis(axis, logits.ndim)
    batch = tuple(s for i, s in enumerate(logits.shape) if i != axis)
    shape = batch if shape is None else _shape("categorical", shape)
    _check_broadcast("categorical", "the batch part of logits", batch, shape)
    moved = fnp.moveaxis(logits, axis, -1)
    n = logits.shape[axis]
    g = gumbel(key, shape + (n,), logits.dtype)
    return fnp.argmax(g + moved, axis=-1)


def _normal_cdf(x):
    return 0.5 * (1.0 + _erf(x * (1.0 / math.sqrt(2.0))))


def _normal_ppf(p):
    """The standard normal quantile of ``p`` in (0, 1): Abramowitz & Stegun 26.2.23 as a
    start (error < 4.5e-4), then Newton steps on the lower tail ``Phi(x) = min(p, 1-p)``
    (quadratic convergence: five steps reach float64 round-off). Built from erf, since
    functrans has no erf_inv primitive."""
    fnp = _fnp()
    q = fnp.minimum(p, 1.0 - p)
    t = fnp.sqrt(-2.0 * fnp.log(q))
    x = -(t - (2.515517 + t * (0.802853 + t * 0.010328))
          / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))))
    for _ in range(5):
        density = fnp.exp(-0.5 * x * x) * (1.0 / math.sqrt(2.0 * math.pi))
        x = x - (_normal_cdf(x) - q) / density
    return fnp.where(p < 0.5, x, -x)


def truncated_normal(key, lower, upper, shape=None, dtype=np.float64):
    """Standard normal samples truncated to ``[lower, upper]`` by inverting the CDF of
    a uniform draw between ``Phi(lower)`` and ``Phi(upper)`` (results clipped to the
    bounds). The quantile is built from ``erf`` (there is no erf_inv primitive): it is
    accurate to round-off within about 5 standard deviations of 0, and the CDF's
    cancellation limits it to about 1e-6 relative beyond 6.

    >>> from functrans import random
    >>> x = random.truncated_normal(random.key(0), -1.0, 2.0, (1000,))
    >>> bool((x >= -1.0).all() and (x <= 2.0).all())
    True
    """
    _check_key("truncated_normal", key)
    fnp = _fnp()
    dt = _float_dtype("truncated_normal", dtype)
    lower, upper = fnp.asarray(lower, dt), fnp.asarray(upper, dt)
    if shape is None:
        shape = np.broadcast_shapes(lower.shape, upper.shape)
    shape = _shape("truncated_normal", shape)
    _check_broadcast("truncated_normal", "lower", lower.shape, shape)
    _check_broadcast("truncated_normal", "upper", upper.shape, shape)
    a, b = _normal_cdf(fnp.asarray(lower, np.float64)), _normal_cdf(fnp.asarray(upper, np.float64))
    u = uniform(key, shape, np.float64)
    p = a + u * (b - a)
    # keep p strictly inside (0, 1) so the quantile is finite
    tiny = np.finfo(np.float64).tiny
    p = fnp.clip(p, tiny, 1.0 - np.finfo(np.float64).epsneg)
    x = fnp.asarray(_normal_ppf(p), dt)
    return fnp.clip(x, lower, upper)
