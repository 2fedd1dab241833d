"""Gamma draws and the distributions built on them (beta, dirichlet, chisquare, f, t,
generalized_normal, ball), by JAX's algorithm so that the same key gives JAX's
samples within a few ulp.

JAX draws each element with its own key (``split(key, size)``, row-major) by
Marsaglia and Tsang's rejection method ("A simple method for generating gamma
variables", ACM TOMS 2000): an outer loop proposes ``d * (1 + c x)**3`` from a normal x
and accepts it by a uniform draw; ``a < 1`` is boosted to ``a + 1`` and scaled by
``u**(1/a)``. Here the same per-element loop is a ``while_loop`` vmapped over the
elements, so it is jittable and vmappable like every other draw.

Derivatives: as JAX's, with respect to ``a`` by the implicit reparameterisation
gradient (``lax.random_gamma_grad``: the sample held at its quantile, dx/da =
-(dP/da)/p(x)), a ``custom_jvp`` over the draws, so ``grad`` works in both modes and
the distributions built on gamma (beta, dirichlet, chisquare, f, t) inherit it.

>>> from functrans import random
>>> random.gamma(random.key(0), 2.0, (3,)).shape
(3,)
"""
from __future__ import annotations

import math

import numpy as np

from jaxpr_ir import dtype_kind

from . import numpy as fnp
from .batching import vmap
from .custom_derivatives import custom_jvp
from .primitives.control_flow import while_loop
from .random_core import (check_broadcast, check_key, float_dtype, shape_tuple, split, split2,
                          normal, uniform)
from .random_distributions import exponential, rademacher
from .scipy._special_incomplete import random_gamma_grad
from .typing import Array, ArrayLike, DTypeLike, Shape

__all__ = ["gamma", "loggamma", "beta", "dirichlet", "chisquare", "f", "t",
           "generalized_normal", "ball"]


def _split3(k):
    ks = split(k, 3)
    return ks[0], ks[1], ks[2]


def _gamma_one(k, alpha, log_space):
    """One Marsaglia-Tsang draw for a scalar key and shape parameter (JAX's loop)."""
    t = alpha.dtype.type
    dt = alpha.dtype
    boost = alpha >= t(1)
    a = fnp.where(boost, alpha, alpha + t(1))
    d = a - t(1.0 / 3.0)
    c = t(1.0 / 3.0) / fnp.sqrt(d)

    def accept_not_yet(state):
        _, x, v, u = state
        return ((u >= t(1) - t(0.0331) * (x * x))
                & (fnp.log(u) >= x * t(0.5) + d * (t(1) - v + fnp.log(v))))

    def propose(state):
        key = state[0]
        key, x_key, u_key = _split3(key)

        def positive_v(inner):        # redraw x until 1 + c x > 0
            sub_key, sub = split2(inner[0])
            x = normal(sub, (), dt)
            return sub_key, x, t(1) + x * c

        _, x, v = while_loop(lambda s: s[2] <= t(0), positive_v,
                             (x_key, fnp.zeros((), dt), fnp.full((), -1.0, dt)))
        return key, x * x, v * v * v, uniform(u_key, (), dt)

    k, sub = split2(k)
    init = (k, fnp.zeros((), dt), fnp.ones((), dt), fnp.full((), 2.0, dt))
    v = while_loop(accept_not_yet, propose, init)[2]
    if log_space:
        log_u = -exponential(sub, (), dt)
        log_boost = fnp.where(boost | (log_u == 0), t(0), log_u * (t(1) / alpha))
        return fnp.log(d) + fnp.log(v) + log_boost
    u = t(1) - uniform(sub, (), dt)
    return d * v * fnp.where(boost, t(1), fnp.power(u, t(1) / alpha))


def _gamma(name, key, a, shape, dtype, log_space):
    k = check_key(name, key)
    dt = float_dtype(name, dtype)
    a = fnp.asarray(a)
    if dtype_kind(a.dtype) not in "fiu":
        raise TypeError(f"{name}: a must be real, got dtype {a.dtype}")
    a = fnp.asarray(a, dt)
    shape = tuple(a.shape) if shape is None else shape_tuple(name, shape)
    check_broadcast(name, "a", a.shape, shape)
    n = math.prod(shape)
    alphas = fnp.reshape(fnp.broadcast_to(a, shape), (n,))
    draws = _gamma_draws(split(k, n), alphas, log_space)
    return fnp.reshape(draws, shape)


def _gamma_draws_impl(keys, alphas, log_space):
    return vmap(lambda kk, aa: _gamma_one(kk, aa, log_space))(keys, alphas)


_gamma_draws = custom_jvp(_gamma_draws_impl, nondiff_argnums=(2,))


@_gamma_draws.defjvp
def _gamma_draws_jvp(log_space, primals, tangents):
    """JAX's rule: d sample = random_gamma_grad(a, sample) da (divided by the sample
    for log-space draws, a sample that rounds to 0 taken as the smallest float)."""
    keys, alphas = primals
    ta = tangents[1]
    out = _gamma_draws(keys, alphas, log_space)
    if log_space:
        x = fnp.exp(out)
        x = fnp.where(x == 0, x.dtype.type(np.finfo(x.dtype).tiny), x)
        return out, random_gamma_grad(alphas, x) / x * ta
    return out, random_gamma_grad(alphas, out) * ta


def gamma(key: Array, a: ArrayLike, shape: Shape | None = None,
          dtype: DTypeLike | None = None) -> Array:
    """Gamma(a, 1) samples (``shape`` defaults to a's shape).

    >>> from functrans import random
    >>> bool((random.gamma(random.key(0), 0.5, (10,)) > 0).all())
    True
    """
    return _gamma("gamma", key, a, shape, dtype, False)


def loggamma(key: Array, a: ArrayLike, shape: Shape | None = None,
             dtype: DTypeLike | None = None) -> Array:
    """Logarithms of Gamma(a, 1) samples, accurate for small ``a`` where the samples
    themselves underflow.

    >>> from functrans import random
    >>> random.loggamma(random.key(0), 0.01, (3,)).shape
    (3,)
    """
    return _gamma("loggamma", key, a, shape, dtype, True)


def _real(name, what, v, dt):
    v = fnp.asarray(v)
    if dtype_kind(v.dtype) not in "fiu":
        raise TypeError(f"{name}: {what} must be real, got dtype {v.dtype}")
    return fnp.asarray(v, dt)


def _shape_of(name, shape, *params):
    if shape is None:
        return tuple(np.broadcast_shapes(*(tuple(p.shape) for p in params)))
    shape = shape_tuple(name, shape)
    for p in params:
        check_broadcast(name, "a parameter", p.shape, shape)
    return shape


def beta(key: Array, a: ArrayLike, b: ArrayLike, shape: Shape | None = None,
         dtype: DTypeLike | None = None) -> Array:
    """Beta(a, b) samples, from two log-gamma draws (stable for small a and b).

    >>> from functrans import random
    >>> x = random.beta(random.key(0), 2.0, 3.0, (5,))
    >>> bool(((x > 0) & (x < 1)).all())
    True
    """
    k = check_key("beta", key)
    dt = float_dtype("beta", dtype)
    a, b = _real("beta", "a", a, dt), _real("beta", "b", b, dt)
    shape = _shape_of("beta", shape, a, b)
    k_a, k_b = split2(k)
    log_a = loggamma(k_a, fnp.broadcast_to(a, shape), shape, dt)
    log_b = loggamma(k_b, fnp.broadcast_to(b, shape), shape, dt)
    top = fnp.maximum(log_a, log_b)
    ga, gb = fnp.exp(log_a - top), fnp.exp(log_b - top)
    return ga / (ga + gb)


def dirichlet(key: Array, alpha: ArrayLike, shape: Shape | None = None,
              dtype: DTypeLike | None = None) -> Array:
    """Dirichlet(alpha) samples over alpha's last axis: normalised log-gamma draws.

    >>> import numpy as np
    >>> from functrans import random
    >>> x = random.dirichlet(random.key(0), np.array([1.0, 2.0, 3.0]), (4,))
    >>> np.allclose(x.sum(-1), 1.0)
    True
    """
    k = check_key("dirichlet", key)
    dt = float_dtype("dirichlet", dtype)
    alpha = _real("dirichlet", "alpha", alpha, dt)
    if alpha.ndim < 1:
        raise ValueError("dirichlet: alpha must have at least one dimension")
    batch = tuple(alpha.shape[:-1])
    shape = batch if shape is None else shape_tuple("dirichlet", shape)
    check_broadcast("dirichlet", "alpha's batch part", batch, shape)
    logs = loggamma(k, alpha, shape + tuple(alpha.shape[-1:]), dt)
    e = fnp.exp(logs - fnp.max(logs, axis=-1, keepdims=True))
    return e / fnp.sum(e, axis=-1, keepdims=True)


def chisquare(key: Array, df: ArrayLike, shape: Shape | None = None,
              dtype: DTypeLike | None = None) -> Array:
    """Chi-square samples with ``df`` degrees of freedom: ``2 * Gamma(df / 2)``.

    >>> from functrans import random
    >>> bool((random.chisquare(random.key(0), 3.0, (5,)) > 0).all())
    True
    """
    k = check_key("chisquare", key)
    dt = float_dtype("chisquare", dtype)
    df = _real("chisquare", "df", df, dt)
    shape = _shape_of("chisquare", shape, df)
    return fnp.exp(loggamma(k, fnp.broadcast_to(df / 2, shape), shape, dt)) * dt.type(2)


def f(key: Array, dfnum: ArrayLike, dfden: ArrayLike, shape: Shape | None = None,
      dtype: DTypeLike | None = None) -> Array:
    """F-distribution samples: a ratio of two scaled chi-square draws.

    >>> from functrans import random
    >>> bool((random.f(random.key(0), 3.0, 5.0, (5,)) > 0).all())
    True
    """
    k = check_key("f", key)
    dt = float_dtype("f", dtype)
    dfnum, dfden = _real("f", "dfnum", dfnum, dt), _real("f", "dfden", dfden, dt)
    shape = _shape_of("f", shape, dfnum, dfden)
    k_den, k_num = split2(k)
    num = chisquare(k_num, dfnum, shape, dt) / dfnum
    den = chisquare(k_den, dfden, shape, dt) / dfden
    return num / den


def t(key: Array, df: ArrayLike, shape: Shape | None = None,
      dtype: DTypeLike | None = None) -> Array:
    """Student's t samples: ``normal * sqrt((df / 2) / Gamma(df / 2))``.

    >>> from functrans import random
    >>> random.t(random.key(0), 4.0, (3,)).shape
    (3,)
    """
    k = check_key("t", key)
    dt = float_dtype("t", dtype)
    df = _real("t", "df", df, dt)
    shape = _shape_of("t", shape, df)
    k_n, k_g = split2(k)
    n = normal(k_n, shape, dt)
    half = df / dt.type(2)
    g = gamma(k_g, fnp.broadcast_to(half, shape), shape, dt)
    return n * fnp.sqrt(half / g)


def generalized_normal(key: Array, p: ArrayLike, shape: Shape = (),
                       dtype: DTypeLike | None = None) -> Array:
    """Samples with density proportional to ``exp(-|x|**p)``: a random sign times
    ``Gamma(1/p) ** (1/p)``.

    >>> from functrans import random
    >>> random.generalized_normal(random.key(0), 3.0, (4,)).shape
    (4,)
    """
    k = check_key("generalized_normal", key)
    dt = float_dtype("generalized_normal", dtype)
    shape = shape_tuple("generalized_normal", shape)
    k_g, k_r = split2(k)
    inv = _in_dtype(1.0 / p, dt)
    g = gamma(k_g, fnp.broadcast_to(inv, shape), shape, dt)
    return rademacher(k_r, shape, dt) * g ** inv


def ball(key: Array, d: int, p: float = 2, shape: Shape = (),
         dtype: DTypeLike | None = None) -> Array:
    """Points uniform in the unit ``p``-norm ball of dimension ``d`` (shape ``shape + (d,)``).

    >>> import numpy as np
    >>> from functrans import random
    >>> x = random.ball(random.key(0), 3, shape=(10,))
    >>> bool((np.linalg.norm(np.asarray(x), axis=-1) <= 1).all())
    True
    """
    k = check_key("ball", key)
    dt = float_dtype("ball", dtype)
    shape = shape_tuple("ball", shape)
    k_g, k_e = split2(k)
    g = generalized_normal(k_g, p, shape + (int(d),), dt)
    e = exponential(k_e, shape, dt)
    power = p if isinstance(p, int) else _in_dtype(p, dt)   # an int power is exact, as JAX
    radius = (fnp.sum(fnp.abs(g) ** power, axis=-1) + e) ** _in_dtype(1.0 / p, dt)
    return g / radius[..., None]


def _in_dtype(v, dt):
    """A float exponent or parameter ``v`` (a Python number, or traced under jit as JAX
    allows) rounded once to the draw's dtype ``dt``, as JAX's weakly typed scalars are."""
    if isinstance(v, (int, float, np.number, np.ndarray)):
        return dt.type(v)
    return fnp.asarray(v).astype(dt)
