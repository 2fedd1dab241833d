"""Binomial, multinomial and Poisson draws by JAX's algorithms, so that the same key gives
JAX's counts: inversion by sums of geometric draws where ``n * min(p, 1-p) <= 10``,
else Hormann's BTRS rejection ("The generation of binomial random variates", 1993),
both as array-wide ``while_loop``s drawing fresh keys each round, exactly as JAX does.

>>> from functrans import random
>>> x = random.binomial(random.key(0), 10.0, 0.3, (5,))
>>> bool(((x >= 0) & (x <= 10)).all())
True
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import dtype_kind

from . import numpy as fnp
from .lax_special import lgamma
from .primitives.control_flow import while_loop
from .random_core import check_broadcast, check_key, float_dtype, shape_tuple, split, uniform
from .typing import Array, ArrayLike, DTypeLike, Shape

__all__ = ["binomial", "multinomial", "poisson"]

# log(k!) - (Stirling's approximation of it), k = 0..9
_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_tail(k):
    """JAX's tail term: tabulated for k <= 9, else its series (evaluated, as in JAX,
    at k clamped to [0, 9])."""
    table = fnp.asarray(np.asarray(_STIRLING_TAIL, k.dtype))
    use_table = k <= 9
    k = fnp.clip(k, 0.0, 9.0)
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    return fnp.where(use_table, fnp.take(table, fnp.asarray(fnp.floor(k), np.int32)), approx)


def _split_pair(k):
    ks = split(k, 2)
    return ks[0], ks[1]


def _binomial_inversion(k, count, prob, shape):
    log1m = fnp.log1p(-prob)
    zeros = fnp.zeros(shape, prob.dtype)

    def step(state):
        num_geom, geom_sum, key = state
        sub, key = _split_pair(key)
        num_geom = fnp.where(geom_sum <= count, num_geom + 1, num_geom)
        geom = fnp.ceil(fnp.log(uniform(sub, shape, prob.dtype)) / log1m)
        return num_geom, geom_sum + geom, key

    num_geom = while_loop(lambda s: fnp.any(s[1] <= count), step, (zeros, zeros, k))[0]
    return num_geom - 1


def _btrs(k, count, prob, shape):
    stddev = fnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = fnp.floor((count + 1) * prob)

    def step(state):
        k_out, accepted, key = state
        ks = split(key, 3)
        key = ks[0]
        u = uniform(ks[1], shape, prob.dtype) - 0.5
        v = uniform(ks[2], shape, prob.dtype)
        us = 0.5 - fnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        kk = fnp.floor((2 * a / us + b) * u + c)
        reject = (kk < 0) | (kk > count)
        log_v = fnp.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * fnp.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * fnp.log((count - m + 1) / (count - kk + 1))
                 + (kk + 0.5) * fnp.log(r * (count - kk + 1) / (kk + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(kk) - _stirling_tail(count - kk))
        accept = accept1 | (~reject & (log_v <= bound))
        return fnp.where(accept, kk, k_out), accepted | accept, key

    init = (fnp.full(shape, -1.0, prob.dtype), fnp.zeros(shape, bool), k)
    return while_loop(lambda s: fnp.any(~s[1]), step, init)[0]


def binomial(key: Array, n: ArrayLike, p: ArrayLike, shape: Shape | None = None,
             dtype: DTypeLike | None = None) -> Array:
    """Binomial(n, p) counts, as floats (JAX's convention); NaN for invalid parameters
    (p < 0, NaN, n < 0), inf for infinite n.

    >>> from functrans import random
    >>> random.binomial(random.key(0), 10.0, 0.3, (4,)).dtype
    dtype('float64')
    """
    k = check_key("binomial", key)
    dt = float_dtype("binomial", dtype)
    prob, count = fnp.asarray(p), fnp.asarray(n)
    prob = prob if dtype_kind(prob.dtype) == "f" else fnp.asarray(prob, np.float64)
    count = fnp.asarray(count, prob.dtype)
    if shape is None:
        shape = tuple(np.broadcast_shapes(tuple(count.shape), tuple(prob.shape)))
    else:
        shape = shape_tuple("binomial", shape)
        for what, v in (("n", count), ("p", prob)):
            check_broadcast("binomial", what, v.shape, shape)
    count, prob = fnp.broadcast_to(count, shape), fnp.broadcast_to(prob, shape)
    below_half = prob < 0.5
    q = fnp.where(below_half, prob, 1.0 - prob)
    bad_count = fnp.isnan(count) | (count < 0.0)
    inf_count = fnp.isinf(count)
    q_nan, q_neg = fnp.isnan(q), q < 0.0
    q = fnp.where(q_nan | q_neg, 0.01, q)
    inversion = bad_count | (count * q <= 10.0)
    count = fnp.floor(count)
    by_inversion = _binomial_inversion(k, fnp.where(inversion, count, 0.0), q, shape)
    by_btrs = _btrs(k, fnp.where(inversion, 1e4, count), fnp.where(inversion, 0.5, q), shape)
    samples = fnp.where(inversion, by_inversion, by_btrs)
    invalid = q_neg | q_nan | bad_count
    samples = fnp.where(invalid, np.nan, samples)
    samples = fnp.where(inf_count & ~invalid, np.inf, samples)
    samples = fnp.where(below_half | bad_count | q_nan | inf_count, samples, count - samples)
    return fnp.asarray(samples, dt)


def multinomial(key: Array, n: ArrayLike, p: ArrayLike, *, shape: Shape | None = None,
                dtype: DTypeLike | None = None, unroll: int | bool = 1) -> Array:
    """Multinomial counts over p's last axis: one binomial draw per category of what
    is left, as JAX does (``shape`` ends with the number of categories). ``unroll``
    (JAX's loop unrolling) changes no value; the categories are unrolled here.

    >>> import numpy as np
    >>> from functrans import random
    >>> x = random.multinomial(random.key(0), 20.0, np.array([0.2, 0.3, 0.5]))
    >>> float(x.sum())
    20.0
    """
    k = check_key("multinomial", key)
    dt = float_dtype("multinomial", dtype)
    n, p = fnp.asarray(n), fnp.asarray(p)
    p = p if dtype_kind(p.dtype) == "f" else fnp.asarray(p, np.float64)
    n = fnp.asarray(n, p.dtype)
    shape = tuple(p.shape) if shape is None else shape_tuple("multinomial", shape)
    remainder = fnp.broadcast_to(n, shape[:-1])
    p = fnp.moveaxis(fnp.broadcast_to(p, shape), -1, 0)
    remaining = fnp.flip(fnp.cumsum(fnp.flip(p, 0), axis=0), 0)
    ratios = p / fnp.where(remaining == 0, 1.0, remaining)
    keys = split(k, shape[-1])
    counts = []
    for i in range(shape[-1]):
        count = binomial(keys[i], remainder, fnp.clip(ratios[i], 0, 1), dtype=remainder.dtype)
        remainder = remainder - count
        counts.append(count)
    return fnp.asarray(fnp.stack(counts, axis=-1), dt)


def _poisson_knuth(k, lam, shape, dt):
    """Knuth's method: count uniform draws until their product falls below exp(-lam)."""
    def step(state):
        count, key, log_prod = state
        key, sub = _split_pair(key)
        count = fnp.where(log_prod > -lam, count + 1, count)
        return count, key, log_prod + fnp.log(uniform(sub, shape, np.float32))

    init = (fnp.zeros(shape, dt), k, fnp.zeros(shape, np.float32))
    count = while_loop(lambda s: fnp.any(s[2] > -lam), step, init)[0]
    return fnp.asarray(count - 1, dt)


def _poisson_rejection(k, lam, shape, dt):
    """Hormann's transformed rejection with squeeze (PTRS), for lam >= 10."""
    log_lam = fnp.log(lam)
    b = 0.931 + 2.53 * fnp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def step(state):
        k_out, accepted, key = state
        ks = split(key, 3)
        key = ks[0]
        u = uniform(ks[1], shape, lam.dtype) - 0.5
        v = uniform(ks[2], shape, lam.dtype)
        us = 0.5 - fnp.abs(u)
        kk = fnp.floor((2 * a / us + b) * u + lam + 0.43)
        s = fnp.log(v * inv_alpha / (a / (us * us) + b))
        t = -lam + kk * log_lam - lgamma(kk + 1)
        accept1 = (us >= 0.07) & (v <= v_r)
        reject = (kk < 0) | ((us < 0.013) & (v > us))
        accept = accept1 | (~reject & (s <= t))
        return fnp.where(accept, kk, k_out), accepted | accept, key

    init = (fnp.full(shape, -1.0, lam.dtype), fnp.zeros(shape, bool), k)
    return fnp.asarray(while_loop(lambda s: fnp.any(~s[1]), step, init)[0], dt)


def poisson(key: Array, lam: ArrayLike, shape: Shape | None = None,
            dtype: DTypeLike | None = None) -> Array:
    """Poisson(lam) counts (int64 by default), computed in float32 as JAX does: Knuth's
    method below lam = 10, transformed rejection above. JAX's rejection test uses XLA's
    lgamma, which differs from the one here in the last digits, so a draw can differ
    from JAX's where that test is a near tie (rare).

    >>> from functrans import random
    >>> bool((random.poisson(random.key(0), 3.0, (10,)) >= 0).all())
    True
    """
    k = check_key("poisson", key)
    dt = np.dtype(np.int64 if dtype is None else dtype)
    if dtype_kind(dt) not in "iu":
        raise TypeError(f"poisson: dtype must be an integer dtype, got {dt}")
    lam = fnp.asarray(lam)
    if dtype_kind(lam.dtype) not in "fiu":
        raise TypeError(f"poisson: lam must be real, got dtype {lam.dtype}")
    shape = tuple(lam.shape) if shape is None else shape_tuple("poisson", shape)
    check_broadcast("poisson", "lam", lam.shape, shape)
    lam = fnp.asarray(fnp.broadcast_to(lam, shape), np.float32)
    knuth = fnp.isnan(lam) | (lam < 10)
    by_knuth = _poisson_knuth(k, fnp.where(knuth, lam, np.float32(0)), shape, dt)
    by_rejection = _poisson_rejection(k, fnp.where(knuth, np.float32(1e5), lam), shape, dt)
    out = fnp.where(knuth, by_knuth, by_rejection)
    return fnp.where(lam == 0, fnp.zeros_like(out), out)
