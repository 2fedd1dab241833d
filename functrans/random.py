"""``functrans.random``: counter-based pseudo-random numbers with explicit keys, equal
to ``jax.random``'s for the same key.

A key is a uint32 array of shape (2,) laid out as JAX's default PRNG
(``threefry2x32``, partitionable mode): ``random.key(seed)`` is
``jax.random.key_data(jax.random.key(seed))``, and ``split``, ``fold_in``, ``bits``,
``uniform``, ``randint``, ``permutation``, ``choice``, ``bernoulli`` and the other
distributions follow JAX's algorithms, so a seeded JAX program ported here draws the
same numbers (bit for bit for integers, bits and uniform floats; within a few ulp
where a transcendental function is involved, as in ``normal``; see the README).
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

from .primitives.random import threefry2x32
from .random_core import (key, PRNGKey, split, fold_in, bits, uniform, normal, randint,
                          key_data, wrap_key_data, clone)
from .random_distributions import (
    permutation, choice, bernoulli, gumbel, categorical, exponential, laplace, logistic,
    cauchy, pareto, rademacher, maxwell, double_sided_maxwell, weibull_min, rayleigh, wald,
    geometric, triangular, lognormal, truncated_normal, multivariate_normal)
from .random_gamma import (gamma, loggamma, beta, dirichlet, chisquare, f, t,
                           generalized_normal, ball)
from .random_discrete import binomial, multinomial, poisson

__all__ = ["key", "PRNGKey", "split", "fold_in", "bits", "uniform", "normal", "randint",
           "key_data", "wrap_key_data", "clone", "permutation", "choice", "bernoulli",
           "gumbel", "categorical", "exponential", "laplace", "logistic", "cauchy", "pareto",
           "rademacher", "maxwell", "double_sided_maxwell", "weibull_min", "rayleigh", "wald",
           "geometric", "triangular", "lognormal", "truncated_normal", "multivariate_normal",
           "gamma", "loggamma", "beta", "dirichlet", "chisquare", "f", "t",
           "generalized_normal", "ball", "binomial", "multinomial", "poisson",
           "threefry2x32"]
