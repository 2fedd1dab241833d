"""``functrans.random``: counter-based pseudo-random numbers with explicit keys, equal
to ``jax.random``'s for the same key.

A key is a uint32 array of shape (2,) laid out as JAX's default PRNG
(``threefry2x32``, partitionable mode): ``random.key(seed)`` is
``jax.random.key_data(jax.random.key(seed))``, and ``split``, ``fold_in``, ``bits``,
``uniform``, ``randint``, ``permutation``, ``choice``, ``bernoulli`` and the other
distributions follow JAX's algorithms, so a seeded JAX program ported here draws the
same numbers (bit for bit for integers, bits and uniform floats; within a few ulp
where a transcendental function is involved, as in ``normal``; see the README).
Every sampler of ``jax.random`` is here with JAX's signature (``out_sharding`` is
accepted and changes nothing on one device). Left out: ``random_gamma_p``, JAX's
internal gamma primitive (``gamma`` here is built from lax operations, not a primitive).
The same key gives the same numbers eagerly, under ``jit``, under ``vmap`` over keys
and on every backend. Never reuse a key: derive new ones with ``split`` or ``fold_in``.

The default float dtype is float64 (JAX with ``jax_enable_x64``): compare float64
draws with JAX's under x64 and ask for ``dtype=np.float32`` to get JAX's float32 ones.

>>> from functrans import random
>>> k1, k2 = random.split(random.key(0))
>>> x = random.uniform(k1, (3,))
>>> bool(((0 <= x) & (x < 1)).all())
True
"""
from __future__ import annotations

import functools
import inspect

from .primitives.random import threefry2x32
from .random_core import (key, PRNGKey, split, fold_in, bits, uniform, normal, randint,
                          key_data, wrap_key_data, clone, key_impl, key_dtype)
from .random_distributions import (
    permutation, choice, bernoulli, gumbel, categorical, exponential, laplace, logistic,
    cauchy, pareto, rademacher, maxwell, double_sided_maxwell, weibull_min, rayleigh, wald,
    geometric, triangular, lognormal, truncated_normal, multivariate_normal, orthogonal)
from .random_gamma import (gamma, loggamma, beta, dirichlet, chisquare, f, t,
                           generalized_normal, ball)
from .random_discrete import binomial, multinomial, poisson

__all__ = ["key", "PRNGKey", "split", "fold_in", "bits", "uniform", "normal", "randint",
           "key_data", "wrap_key_data", "clone", "key_impl", "key_dtype", "permutation",
           "choice", "bernoulli", "gumbel", "categorical", "exponential", "laplace",
           "logistic", "cauchy", "pareto", "rademacher", "maxwell", "double_sided_maxwell",
           "weibull_min", "rayleigh", "wald", "geometric", "triangular", "lognormal",
           "truncated_normal", "multivariate_normal", "orthogonal", "gamma", "loggamma",
           "beta", "dirichlet", "chisquare", "f", "t", "generalized_normal", "ball",
           "binomial", "multinomial", "poisson", "threefry2x32"]


def _taking_out_sharding(draw):
    """``draw`` with JAX's keyword-only ``out_sharding`` accepted: one device here, and
    JAX's partitionable threefry makes the values independent of the sharding anyway."""
    @functools.wraps(draw)
    def sampler(*args, out_sharding=None, **kwargs):
        return draw(*args, **kwargs)
    sampler.__module__ = __name__          # its doctest runs from this module
    sig = inspect.signature(draw)
    extra = inspect.Parameter("out_sharding", inspect.Parameter.KEYWORD_ONLY, default=None,
                              annotation="object | None")
    sampler.__signature__ = sig.replace(parameters=list(sig.parameters.values()) + [extra])
    return sampler


# the samplers whose JAX signature ends with out_sharding=None
for _name in ("ball", "bernoulli", "beta", "bits", "categorical", "cauchy", "chisquare",
              "dirichlet", "exponential", "f", "gamma", "generalized_normal", "geometric",
              "gumbel", "laplace", "loggamma", "logistic", "lognormal", "maxwell",
              "multivariate_normal", "normal", "orthogonal", "pareto", "permutation",
              "poisson", "rademacher", "randint", "rayleigh", "t", "triangular",
              "truncated_normal", "uniform", "wald"):
    globals()[_name] = _taking_out_sharding(globals()[_name])
del _name
