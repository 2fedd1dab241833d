"""The distributions of ``functrans.random`` built on uniform and normal draws, each by
JAX's algorithm so that the same key gives JAX's samples (bit for bit where only
exact operations and correctly rounded ones are involved, within a few ulp where a
transcendental function or a reduction is; see the README).

>>> from functrans import random
>>> random.permutation(random.key(0), 5).shape
(5,)
"""
from __future__ import annotations

import math
import operator

import numpy as np

from jaxpr_ir import bfloat16, canonical_dtype, dtype_kind
from . import numpy as fnp
from .primitives.custom import stop_gradient
from .lax_bits import clz
from .lax_special import erf_inv
from .numpy._util import canonicalize_axis
from .primitives.elementwise import bitcast_convert_type
from .primitives.elementwise_math import erf
from .primitives.sorting import sort_p
from .random_core import (check_broadcast, check_key, float_dtype, random_words, shape_tuple,
                          split2, uniform, normal, randint)
from .typing import Array, ArrayLike, DTypeLike, Shape

__all__ = ["permutation", "choice", "bernoulli", "gumbel", "categorical", "exponential",
           "laplace", "logistic", "cauchy", "pareto", "rademacher", "maxwell",
           "double_sided_maxwell", "weibull_min", "rayleigh", "wald", "geometric",
           "triangular", "lognormal", "truncated_normal", "multivariate_normal", "orthogonal"]


def _param(name, what, v, dt):
    """A distribution parameter as an array of ``dt`` (floats only: no silent casts)."""
    v = fnp.asarray(v)
    if dtype_kind(v.dtype) not in "fiub":
        raise TypeError(f"{name}: {what} must be real, got dtype {v.dtype}")
    return fnp.asarray(v, dt)


def _draw_shape(name, shape, *params):
    """``shape`` (checked against the parameters' shapes) or their broadcast shape."""
    if shape is None:
        return tuple(np.broadcast_shapes(*(tuple(p.shape) for p in params)))
    shape = shape_tuple(name, shape)
    for p in params:
        check_broadcast(name, "a parameter", p.shape, shape)
    return shape


# --------------------------------------------------------------------------- shuffles

def _shuffle(k, x, axis):
    """JAX's shuffle: rounds of a stable sort by fresh 32-bit keys (enough rounds that
    ties are unlikely to survive all of them)."""
    rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(2 ** 32 - 1)))
    for _ in range(rounds):
        k, sub = split2(k)
        sort_keys = random_words(sub, tuple(x.shape))
        x = sort_p.bind(sort_keys, x, dimension=axis, is_stable=True, num_keys=1)[1]
    return x


def permutation(key: Array, x: int | ArrayLike, axis: int = 0,
                independent: bool = False) -> Array:
    """A random permutation of ``arange(x)`` (int ``x``) or of ``x`` along ``axis``;
    ``independent=True`` permutes each slice along ``axis`` on its own.

    >>> from functrans import random
    >>> random.permutation(random.key(0), 10).tolist()
    [0, 1, 8, 5, 6, 4, 3, 2, 7, 9]
    """
    k = check_key("permutation", key)
    if isinstance(x, np.ndarray) and x.ndim == 0 and dtype_kind(x.dtype) in "iu":
        x = int(x)                   # a concrete 0-d integer array counts as n, as in JAX
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        n = operator.index(x)
        if n < 0:
            raise ValueError(f"permutation: n must be non-negative, got {n}")
        canonicalize_axis(axis, 1, "permutation: axis")   # of the 1-d arange(n), as JAX
        return _shuffle(k, fnp.arange(n, dtype=np.int64), 0)
    x = fnp.asarray(x)
    if x.ndim == 0:
        raise TypeError("permutation: x must be an integer or an array with at least one "
                        f"dimension, got a 0-d array of {x.dtype}")      # JAX's TypeError
    axis = canonicalize_axis(axis, x.ndim)
    if independent or x.ndim == 1:
        return _shuffle(k, x, axis)
    order = _shuffle(k, fnp.arange(x.shape[axis], dtype=np.int64), 0)
    return fnp.take(x, order, axis=axis, mode="clip")     # in range by construction


def _choice_index(k, n, shape, replace, p, mode):
    size = math.prod(shape)
    if p is None:
        if replace:
            return randint(k, shape, 0, n)
        return fnp.reshape(permutation(k, n)[:size], shape)
    p = fnp.asarray(p)
    if dtype_kind(p.dtype) != "f":
        p = fnp.asarray(p, np.float64)
    if tuple(p.shape) != (n,):
        raise ValueError(f"choice: p must have shape ({n},), got {tuple(p.shape)}")
    if replace:
        cdf = fnp.cumsum(p)
        r = cdf[-1] * (1 - uniform(k, shape, p.dtype))
        # searchsorted(cdf, r, side='left'): the number of cdf entries below r
        return fnp.sum(fnp.less(cdf, fnp.expand_dims(r, -1)), axis=-1, dtype=np.int64)
    g = gumbel(k, (n,), p.dtype, mode) + fnp.log(p)     # Gumbel top-k: the k largest
    return fnp.reshape(fnp.argsort(g, descending=True)[:size], shape)


def choice(key: Array, a: int | ArrayLike, shape: Shape = (), replace: bool = True,
           p: ArrayLike | None = None, axis: int = 0, mode: str | None = None) -> Array:
    """Random elements of ``a`` (or of ``arange(a)`` for an int) along ``axis``, JAX's
    draws: ``randint`` or ``permutation`` without ``p``; with ``p``, inverse-CDF
    sampling with replacement and Gumbel top-k without (``mode``: gumbel's mode).

    >>> from functrans import random
    >>> random.choice(random.key(0), 10, (6,)).tolist()
    [5, 1, 5, 7, 3, 5]
    """
    k = check_key("choice", key)
    if not isinstance(shape, (tuple, list)):        # JAX takes no int here (TypeError)
        raise TypeError(f"choice: the shape argument must be a sequence (a tuple of ints), "
                        f"got {shape!r:.40}")
    shape = shape_tuple("choice", shape)
    arr = fnp.asarray(a)
    if arr.ndim == 0:
        if dtype_kind(arr.dtype) not in "iu":
            raise TypeError(f"choice: a must be an integer or an array, got {a!r:.40}")
        n = operator.index(a)
    else:
        axis = canonicalize_axis(axis, arr.ndim)
        n = arr.shape[axis]
    size = math.prod(shape)
    if size == 0:
        return fnp.zeros(shape, arr.dtype)
    if n <= 0:
        raise ValueError("choice: a must be greater than 0 unless no samples are taken")
    if not replace and size > n:
        raise ValueError(f"choice: cannot take a larger sample ({size}) than the population "
                         f"({n}) when replace=False")
    if p is None and not replace and arr.ndim > 0:
        taken = fnp.take(permutation(k, arr, axis), fnp.arange(size), axis=axis)
        return fnp.reshape(taken, arr.shape[:axis] + shape + arr.shape[axis + 1:])
    idx = _choice_index(k, n, shape, replace, p, mode)
    if arr.ndim == 0:
        return idx
    return fnp.take(arr, idx, axis=axis, mode="clip")      # in range by construction


# --------------------------------------------------------------------------- discrete

def bernoulli(key: Array, p: ArrayLike = 0.5, shape: Shape | None = None,
              mode: str = "low") -> Array:
    """Booleans, True with probability ``p`` (a float; ``shape`` defaults to p's):
    ``uniform < p``; ``mode='high'`` adds a second word of resolution, as in JAX.

    >>> from functrans import random
    >>> random.bernoulli(random.key(0), 0.5, (4,)).tolist()
    [True, True, False, False]
    """
    k = check_key("bernoulli", key)
    if mode not in ("low", "high"):
        raise ValueError(f"bernoulli: mode must be 'low' or 'high', got {mode!r}")
    p = fnp.asarray(p)
    if dtype_kind(p.dtype) != "f":
        raise TypeError(f"bernoulli: p must have a floating dtype, got {p.dtype}")
    shape = _draw_shape("bernoulli", shape, p)
    if mode == "low":
        return fnp.less(uniform(k, shape, p.dtype), p)
    u = uniform(k, (2,) + shape, p.dtype)
    return fnp.less(u[1] * (2.0 ** -np.finfo(p.dtype).nmant), p - u[0])


def rademacher(key: Array, shape: Shape = (), dtype: DTypeLike | None = None) -> Array:
    """-1 or +1 with equal probability (``2 * bernoulli(key, 0.5) - 1``).

    >>> from functrans import random
    >>> sorted(set(random.rademacher(random.key(0), (20,)).tolist()))
    [-1, 1]
    """
    k = check_key("rademacher", key)
    dt = canonical_dtype(np.int64 if dtype is None else dtype)
    b = fnp.asarray(bernoulli(k, np.float64(0.5), shape_tuple("rademacher", shape)), dt)
    return fnp.asarray(2 * b - 1, dt)


def geometric(key: Array, p: ArrayLike, shape: Shape | None = None,
              dtype: DTypeLike | None = None) -> Array:
    """Trials up to the first success (support 1, 2, ...): ``floor(log u / log1p(-p)) + 1``.

    >>> from functrans import random
    >>> bool((random.geometric(random.key(0), 0.3, (20,)) >= 1).all())
    True
    """
    k = check_key("geometric", key)
    p = fnp.asarray(p)
    p = p if dtype_kind(p.dtype) == "f" else fnp.asarray(p, np.float64)
    shape = _draw_shape("geometric", shape, p)
    dt = canonical_dtype(np.int64 if dtype is None else dtype)
    u = uniform(k, shape, p.dtype)
    u = fnp.where(u == 0, p.dtype.type(1), u)
    g = fnp.floor(fnp.log(u) / fnp.broadcast_to(fnp.log1p(-p), shape)) + 1
    return fnp.asarray(g, dt)


# --------------------------------------------------------------------------- continuous

def gumbel(key: Array, shape: Shape = (), dtype: DTypeLike | None = None,
           mode: str | None = None) -> Array:
    """Standard Gumbel samples ``-log(-log(u))`` (u on [tiny, 1)); ``mode='high'``
    draws two words for the lower tail, as JAX does; ``'highest'`` (float32) reads u as
    a 64-bit fraction (other dtypes: as 'high').

    >>> from functrans import random
    >>> random.gumbel(random.key(0), (2,)).shape
    (2,)
    """
    k = check_key("gumbel", key)
    shape = shape_tuple("gumbel", shape)
    dt = float_dtype("gumbel", dtype)
    info = np.finfo(dt)
    if mode is None or mode == "low":      # JAX's default (use_high_dynamic_range_gumbel off)
        return -fnp.log(-fnp.log(uniform(k, shape, dt, info.tiny, 1.0)))
    if mode not in ("high", "highest"):
        raise ValueError(f"gumbel: mode must be 'low', 'high' or 'highest', got {mode!r}")
    if mode == "highest" and dt == np.float32:
        return _gumbel_highest_f32(k, shape)
    u = uniform(k, (2,) + shape, dt)
    hi, lo = u[0], u[1]
    x = fnp.where(hi >= 0.5, hi, hi + dt.type(2.0 ** -info.nmant) * lo + info.tiny)
    return -fnp.log(-fnp.log1p(-x))


def _gumbel_highest_f32(k, shape):
    """JAX's float32 'highest' gumbel: a 64-bit fraction v / 2**64 of two words, below
    one half as drawn and otherwise as 1 - v (two's complement), truncated to float32;
    -log(-log1p(-x)) below one half, -log(-log(x)) above."""
    w = random_words(k, (2,) + shape).astype(np.uint64)
    v = (w[0] << np.uint64(32)) | w[1]
    low = w[0] < np.uint64(2 ** 31)
    v = fnp.where(low, v, ~v + np.uint64(1))
    lead = clz(v)                                  # 64 for v == 0: x = 2**-65
    top = (v << fnp.minimum(lead, 63).astype(np.uint64)) >> np.uint64(40)
    f32_bits = ((126 - lead).astype(np.uint64) << np.uint64(23)) | (top & np.uint64(0x7FFFFF))
    x = bitcast_convert_type(f32_bits.astype(np.uint32), np.float32)
    return fnp.where(low, -fnp.log(-fnp.log1p(-x)), -fnp.log(-fnp.log(x)))


def categorical(key: Array, logits: ArrayLike, axis: int = -1, shape: Shape | None = None,
                replace: bool = True, mode: str | None = None) -> Array:
    """Indices drawn with probabilities ``softmax(logits)`` along ``axis`` (Gumbel-max;
    ``replace=False`` takes the top-k of perturbed logits, without repeats; ``mode``
    is gumbel's).

    >>> from functrans import random
    >>> import numpy as np
    >>> int(random.categorical(random.key(0), np.array([-1e9, 0.0, -1e9])))
    1
    """
    k = check_key("categorical", key)
    logits = fnp.asarray(logits)
    if dtype_kind(logits.dtype) != "f":
        logits = fnp.asarray(logits, np.float64)
    if logits.ndim == 0:
        raise ValueError("categorical: logits must have at least one dimension")
    axis = canonicalize_axis(axis, logits.ndim)
    batch = tuple(s for i, s in enumerate(logits.shape) if i != axis)
    shape = batch if shape is None else shape_tuple("categorical", shape)
    check_broadcast("categorical", "the batch part of logits", batch, shape)
    prefix = shape[:len(shape) - len(batch)]
    if replace:
        g_shape = list(shape[len(prefix):])
        g_shape.insert(axis, logits.shape[axis])
        g = gumbel(k, prefix + tuple(g_shape), logits.dtype, mode)
        return fnp.argmax(g + logits, axis=axis - logits.ndim)
    n, draws = logits.shape[axis], math.prod(prefix)
    if draws > n:
        raise ValueError(f"categorical: Number of samples without replacement ({draws}) "
                         f"cannot exceed number of categories ({n})")
    noise = gumbel(k, tuple(logits.shape), logits.dtype, mode)
    perturbed = fnp.moveaxis(logits + noise, axis, -1)
    top = fnp.argsort(perturbed, axis=-1, descending=True)[..., :draws]
    return fnp.asarray(fnp.reshape(fnp.moveaxis(top, -1, 0), shape), np.int32)  # JAX's top_k


def exponential(key: Array, shape: Shape = (), dtype: DTypeLike | None = None) -> Array:
    """Standard exponential samples ``-log1p(-u)``.

    >>> from functrans import random
    >>> bool((random.exponential(random.key(0), (5,)) >= 0).all())
    True
    """
    k = check_key("exponential", key)
    dt = float_dtype("exponential", dtype)
    return -fnp.log1p(-uniform(k, shape_tuple("exponential", shape), dt))


def laplace(key: Array, shape: Shape = (), dtype: DTypeLike | None = None) -> Array:
    """Standard Laplace samples ``sign(u) * log1p(-|u|)``, u on (-1, 1).

    >>> from functrans import random
    >>> random.laplace(random.key(0), (3,)).shape
    (3,)
    """
    k = check_key("laplace", key)
    dt = float_dtype("laplace", dtype)
    u = uniform(k, shape_tuple("laplace", shape), dt, -1.0 + np.finfo(dt).epsneg, 1.0)
    return fnp.sign(u) * fnp.log1p(-fnp.abs(u))


def logistic(key: Array, shape: Shape = (), dtype: DTypeLike | None = None) -> Array:
    """Standard logistic samples ``log(u) - log1p(-u)``, u on [tiny, 1).

    >>> from functrans import random
    >>> random.logistic(random.key(0), (3,)).shape
    (3,)
    """
    k = check_key("logistic", key)
    dt = float_dtype("logistic", dtype)
    x = uniform(k, shape_tuple("logistic", shape), dt, np.finfo(dt).tiny, 1.0)
    return fnp.log(x) - fnp.log1p(-x)


def cauchy(key: Array, shape: Shape = (), dtype: DTypeLike | None = None) -> Array:
    """Standard Cauchy samples ``tan(pi * (u - 1/2))``, u on [eps, 1).

    >>> from functrans import random
    >>> random.cauchy(random.key(0), (3,)).shape
    (3,)
    """
    k = check_key("cauchy", key)
    dt = float_dtype("cauchy", dtype)
    u = uniform(k, shape_tuple("cauchy", shape), dt, np.finfo(dt).eps, 1.0)
    return fnp.tan(dt.type(np.pi) * (u - dt.type(0.5)))


def pareto(key: Array, b: ArrayLike, shape: Shape | None = None,
           dtype: DTypeLike | None = None) -> Array:
    """Pareto samples of shape parameter ``b``: ``exp(e / b)``, e standard exponential.

    >>> from functrans import random
    >>> bool((random.pareto(random.key(0), 3.0, (5,)) >= 1).all())
    True
    """
    k = check_key("pareto", key)
    dt = float_dtype("pareto", dtype)
    b = _param("pareto", "b", b, dt)
    shape = _draw_shape("pareto", shape, b)
    return fnp.exp(exponential(k, shape, dt) / b)


def maxwell(key: Array, shape: Shape = (), dtype: DTypeLike | None = None) -> Array:
    """Maxwell samples: the length of a standard normal 3-vector.

    >>> from functrans import random
    >>> random.maxwell(random.key(0), (2,)).shape
    (2,)
    """
    k = check_key("maxwell", key)
    dt = float_dtype("maxwell", dtype)
    z = normal(k, shape_tuple("maxwell", shape) + (3,), dt)
    return fnp.sqrt(fnp.sum(z * z, axis=-1))


def double_sided_maxwell(key: Array, loc: ArrayLike, scale: ArrayLike, shape: Shape = (),
                         dtype: DTypeLike | None = None) -> Array:
    """Double-sided Maxwell samples ``sign * maxwell * scale + loc`` of shape
    ``shape + broadcast(loc, scale).shape`` (JAX's convention).

    >>> from functrans import random
    >>> random.double_sided_maxwell(random.key(0), 1.0, 2.0, (3,)).shape
    (3,)
    """
    k = check_key("double_sided_maxwell", key)
    dt = float_dtype("double_sided_maxwell", dtype)
    loc, scale = _param("double_sided_maxwell", "loc", loc, dt), \
        _param("double_sided_maxwell", "scale", scale, dt)
    params = tuple(np.broadcast_shapes(tuple(loc.shape), tuple(scale.shape)))
    shape = shape_tuple("double_sided_maxwell", shape) or params
    shape = shape + params
    k_maxwell, k_sign = split2(k)
    sign = rademacher(k_sign, shape, dt)
    return sign * maxwell(k_maxwell, shape, dt) * scale + loc


def weibull_min(key: Array, scale: ArrayLike, concentration: ArrayLike, shape: Shape = (),
                dtype: DTypeLike | None = None) -> Array:
    """Weibull samples ``(-log1p(-u)) ** (1 / concentration) * scale``.

    >>> from functrans import random
    >>> random.weibull_min(random.key(0), 2.0, 1.5, (3,)).shape
    (3,)
    """
    k = check_key("weibull_min", key)
    dt = float_dtype("weibull_min", dtype)
    scale = _param("weibull_min", "scale", scale, dt)
    conc = _param("weibull_min", "concentration", concentration, dt)
    u = uniform(k, shape_tuple("weibull_min", shape), dt)
    return fnp.power(-fnp.log1p(-u), 1.0 / conc) * scale


def rayleigh(key: Array, scale: ArrayLike, shape: Shape | None = None,
             dtype: DTypeLike | None = None) -> Array:
    """Rayleigh samples ``scale * sqrt(-2 log u)``.

    >>> from functrans import random
    >>> random.rayleigh(random.key(0), 2.0, (3,)).shape
    (3,)
    """
    k = check_key("rayleigh", key)
    dt = float_dtype("rayleigh", dtype)
    scale = _param("rayleigh", "scale", scale, dt)
    shape = _draw_shape("rayleigh", shape, scale)
    u = uniform(k, shape, dt)
    return fnp.broadcast_to(scale, shape) * fnp.sqrt(fnp.log(u) * dt.type(-2))


def wald(key: Array, mean: ArrayLike, shape: Shape | None = None,
         dtype: DTypeLike | None = None) -> Array:
    """Wald (inverse Gaussian) samples of the given mean (Michael, Schucany and Haas).

    >>> from functrans import random
    >>> bool((random.wald(random.key(0), 1.5, (5,)) > 0).all())
    True
    """
    k = check_key("wald", key)
    dt = float_dtype("wald", dtype)
    mean = _param("wald", "mean", mean, dt)
    shape = _draw_shape("wald", shape, mean)
    k1, k2 = split2(k)
    mean = fnp.broadcast_to(mean, shape)
    v = normal(k1, shape, dt)
    z = uniform(k2, shape, dt)
    y = v * v
    mean_sq = mean * mean
    root = fnp.sqrt(4 * mean * y + mean_sq * (y * y))
    x = mean + mean_sq * y / 2 - mean / 2 * root
    return fnp.where(z <= mean / (mean + x), x, mean_sq / x)


def triangular(key: Array, left: ArrayLike, mode: ArrayLike, right: ArrayLike,
               shape: Shape | None = None, dtype: DTypeLike | None = None) -> Array:
    """Triangular samples on [left, right] peaking at ``mode`` (inverse CDF).

    >>> from functrans import random
    >>> x = random.triangular(random.key(0), 0.0, 1.0, 3.0, (50,))
    >>> bool(((x >= 0) & (x <= 3)).all())
    True
    """
    k = check_key("triangular", key)
    dt = float_dtype("triangular", dtype)
    left, mode, right = (_param("triangular", w, v, dt)
                         for w, v in (("left", left), ("mode", mode), ("right", right)))
    shape = _draw_shape("triangular", shape, left, mode, right)
    left, mode, right = (fnp.broadcast_to(v, shape) for v in (left, mode, right))
    fc = (mode - left) / (right - left)
    u = uniform(k, shape, dt)
    below = left + fnp.sqrt(u * (right - left) * (mode - left))
    above = right - fnp.sqrt((1 - u) * (right - left) * (right - mode))
    return fnp.where(u < fc, below, above)


def lognormal(key: Array, sigma: ArrayLike = 1.0, shape: Shape | None = None,
              dtype: DTypeLike | None = None) -> Array:
    """Log-normal samples ``exp(sigma * normal)``.

    >>> from functrans import random
    >>> bool((random.lognormal(random.key(0), 0.5, (5,)) > 0).all())
    True
    """
    k = check_key("lognormal", key)
    dt = float_dtype("lognormal", dtype)
    sigma = _param("lognormal", "sigma", sigma, dt)
    shape = _draw_shape("lognormal", shape, sigma)
    return fnp.exp(normal(k, shape, dt) * sigma)


def _next_toward(x, up):
    """The float next to ``x`` toward +inf (``up``) or -inf, for finite x (bitwise: the
    signed integer of the float's width)."""
    itype = np.dtype(f"int{8 * x.dtype.itemsize}").type
    tiny = bitcast_convert_type(fnp.ones_like(x, itype), x.dtype)   # smallest subnormal
    bits = bitcast_convert_type(x, itype)
    step = fnp.where((x > 0) == up, itype(1), itype(-1))
    moved = bitcast_convert_type(bits + step, x.dtype)
    return fnp.where(x == 0, tiny if up else -tiny, moved)


def truncated_normal(key: Array, lower: ArrayLike, upper: ArrayLike,
                     shape: Shape | None = None, dtype: DTypeLike | None = None) -> Array:
    """Standard normal samples truncated to (lower, upper): the inverse CDF of a
    uniform draw between ``erf(lower/sqrt 2)`` and ``erf(upper/sqrt 2)``, clipped
    strictly inside the bounds; differentiable in the bounds.

    >>> from functrans import random
    >>> x = random.truncated_normal(random.key(0), -1.0, 2.0, (100,))
    >>> bool(((x > -1) & (x < 2)).all())
    True
    """
    k = check_key("truncated_normal", key)
    dt = float_dtype("truncated_normal", dtype)
    lower = _param("truncated_normal", "lower", lower, dt)
    upper = _param("truncated_normal", "upper", upper, dt)
    shape = _draw_shape("truncated_normal", shape, lower, upper)
    sqrt2 = dt.type(np.sqrt(2.0))
    a, b = erf(lower / sqrt2), erf(upper / sqrt2)
    out = sqrt2 * erf_inv(uniform(k, shape, dt, a, b))
    lo = _next_toward(stop_gradient(lower), True)
    hi = _next_toward(stop_gradient(upper), False)
    return fnp.clip(out, lo, hi)


def multivariate_normal(key: Array, mean: ArrayLike, cov: ArrayLike,
                        shape: Shape | None = None, dtype: DTypeLike | None = None,
                        method: str = "cholesky") -> Array:
    """Samples of N(mean, cov): ``mean + L z`` with standard normal z and ``L`` from
    ``method``: ``cholesky(cov)``; 'eigh': ``v * sqrt(w)`` of ``cov``'s eigenpairs;
    'svd': ``u * sqrt(s)`` of its SVD (both for semidefinite cov; their eigenvector
    signs are LAPACK's, so draws match JAX's where its LAPACK picks the same).
    ``shape`` is the batch shape (default: mean's and cov's broadcast).

    >>> import numpy as np
    >>> from functrans import random
    >>> random.multivariate_normal(random.key(0), np.zeros(2), np.eye(2), (5,)).shape
    (5, 2)
    """
    k = check_key("multivariate_normal", key)
    if method not in ("cholesky", "eigh", "svd"):
        raise ValueError(f"multivariate_normal: method must be 'cholesky', 'eigh' or 'svd', "
                         f"got {method!r}")
    mean, cov = fnp.asarray(mean), fnp.asarray(cov)
    dt = float_dtype("multivariate_normal",
                     dtype if dtype is not None else
                     (mean.dtype if dtype_kind(mean.dtype) == "f" else np.float64))
    mean, cov = fnp.asarray(mean, dt), fnp.asarray(cov, dt)
    if mean.ndim < 1 or cov.ndim < 2:
        raise ValueError(f"multivariate_normal: needs mean.ndim >= 1 and cov.ndim >= 2, got "
                         f"{mean.ndim} and {cov.ndim}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal: cov must have shape (..., {n}, {n}), got "
                         f"{tuple(cov.shape)}")
    batch = tuple(np.broadcast_shapes(tuple(mean.shape[:-1]), tuple(cov.shape[:-2])))
    if shape is None:
        shape = batch
    else:
        shape = shape_tuple("multivariate_normal", shape)
        check_broadcast("multivariate_normal", "mean and cov's batch", batch, shape)
    if method == "svd":
        u, sv, _ = fnp.linalg.svd(cov)
        factor = u * fnp.sqrt(sv[..., None, :])
    elif method == "eigh":
        ew, ev = fnp.linalg.eigh(cov)
        factor = ev * fnp.sqrt(ew[..., None, :])
    else:
        factor = fnp.linalg.cholesky(cov)
    z = normal(k, shape + (n,), dt)
    return mean + fnp.einsum("...ij,...j->...i", factor, z)


def orthogonal(key: Array, n: int, shape: Shape = (), dtype: DTypeLike | None = None,
               m: int | None = None) -> Array:
    """Haar-random matrices with orthonormal columns (or rows, when ``m > n``): shape
    ``shape + (n, m)`` (m defaults to n), JAX's construction: the Q of a QR
    factorisation of standard normal draws, its columns' signs fixed by R's diagonal
    (complex dtypes: unitary, phases ``d / |d|``).

    >>> import numpy as np
    >>> from functrans import random
    >>> q = random.orthogonal(random.key(0), 3)
    >>> bool(np.allclose(q.T @ q, np.eye(3)))
    True
    """
    k = check_key("orthogonal", key)
    cplx = dtype is not None and dtype_kind(canonical_dtype(dtype)) == "c"
    # complex dtypes as JAX: unitary Q of complex normal draws, phases from R's diagonal
    dt = canonical_dtype(dtype) if cplx else float_dtype("orthogonal", dtype)
    shape = shape_tuple("orthogonal", shape)
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    z = normal(k, shape + (max(n, m), min(n, m)), dt)
    q, r = fnp.linalg.qr(z)
    d = fnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * fnp.expand_dims(fnp.sign(d), -2)
    return fnp.swapaxes(x, -1, -2) if n < m else x
