"""``functrans.random``: counter-based pseudo-random numbers with explicit keys, equal
to ``jax.random``'s for the same key.

``random.key(seed)`` is a typed key as JAX's (shape (), dtype ``key<fry>``), over the
uint32 words of JAX's default PRNG (``threefry2x32``, partitionable mode):
``random.PRNGKey(seed)``, JAX's raw uint32[2] key, is ``key_data(key(seed))``, and
every function takes either kind with the same numbers; ``split``, ``fold_in``, ``bits``,
``uniform``, ``randint``, ``permutation``, ``choice``, ``bernoulli`` and the other
distributions follow JAX's algorithms, so a seeded JAX program ported here draws the
same numbers (bit for bit for integers, bits and uniform floats; within a few ulp
where a transcendental function is involved, as in ``normal``; see the README).
Every sampler of ``jax.random`` is here with JAX's signature (``out_sharding`` is
accepted and changes nothing on one device). Left out: ``random_gamma_p``, JAX's
internal gamma primitive (``gamma`` here is built from lax operations, not a primitive).
The same key gives the same numbers eagerly, under ``jit``, under ``vmap`` over keys
and on every backend. Never reuse a key: derive new ones with ``split`` or ``fold_in``.

An eager draw of at least ``EAGER_COMPILE_MIN`` (2**18) numbers runs compiled, as every
``jax.random`` call does: its values are those of the same draw under ``jit``.

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
import math

import numpy as np

from .compiler import LRUCache
from .jit import jit
from .key_array import KeyArray
from .primitives.random import threefry2x32
from .tracing import Tracer, outermost_trace
from .tree_util import tree_leaves
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


# Eager draws of at least this many numbers run compiled: a sampler is a hundred or more
# elementwise steps (threefry's rounds, erf_inv's polynomials), each a pass over memory
# when numpy runs them one by one; compiled, they fuse into one loop (a 1000 x 1000
# normal: 3.8 s -> 50 ms). Below it, numpy's eager steps cost less than a compile.
# The values are the compiled sampler's: within a few ulp of the eager ones, as any
# jitted draw (README); bits, integers and uniform floats are equal bit for bit.
EAGER_COMPILE_MIN = 1 << 18
_compiled_samplers = LRUCache(64)


def _draw_size(arguments):
    """How many numbers a call draws: ``shape``'s size, else its largest array argument's."""
    shape = arguments.get("shape")
    if isinstance(shape, (tuple, list)) and all(isinstance(d, (int, np.integer)) for d in shape):
        return math.prod(shape)
    if isinstance(shape, (int, np.integer)):
        return int(shape)
    return max((np.size(v) for v in arguments.values() if isinstance(v, np.ndarray)), default=0)


def _dynamic(v):
    """Whether jit takes argument ``v`` as a traced input (arrays and Python floats), not
    as a static value (shapes, dtypes, ints such as a population size, flags)."""
    return isinstance(v, (np.ndarray, np.generic, float, complex, KeyArray)) and not isinstance(
        v, bool)


def _compiled_when_large(draw):
    """``draw``, run through a cached ``jit`` when called eagerly (no trace active, no
    traced argument) for at least ``EAGER_COMPILE_MIN`` numbers."""
    sig = inspect.signature(draw)

    @functools.wraps(draw)
    def sampler(*args, **kwargs):
        # cheapest first: every draw passes here, traced ones included
        if outermost_trace() is not None or any(
                isinstance(x, Tracer) for x in tree_leaves((args, kwargs))):
            return draw(*args, **kwargs)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError:
            return draw(*args, **kwargs)        # its own error message
        bound.apply_defaults()
        given = bound.arguments
        if _draw_size(given) < EAGER_COMPILE_MIN:
            return draw(*args, **kwargs)
        dyn = tuple(n for n, v in given.items() if _dynamic(v))
        static = tuple((n, tuple(v) if isinstance(v, list) else v)
                       for n, v in given.items() if n not in dyn)
        try:
            cache_key = (dyn, static)
            compiled = _compiled_samplers.get(cache_key)
        except TypeError:                        # an unhashable static argument
            return draw(*args, **kwargs)
        if compiled is None:
            def run(*values):
                return draw(**dict(static), **dict(zip(dyn, values)))
            run.__name__ = draw.__name__
            compiled = jit(run)
            _compiled_samplers.put(cache_key, compiled)
        return compiled(*[given[n] for n in dyn])
    sampler.__module__ = __name__          # its doctest runs from this module
    return sampler


# the samplers whose JAX signature ends with out_sharding=None
_SHARDED = ("ball", "bernoulli", "beta", "bits", "categorical", "cauchy", "chisquare",
            "dirichlet", "exponential", "f", "gamma", "generalized_normal", "geometric",
            "gumbel", "laplace", "loggamma", "logistic", "lognormal", "maxwell",
            "multivariate_normal", "normal", "orthogonal", "pareto", "permutation",
            "poisson", "rademacher", "randint", "rayleigh", "t", "triangular",
            "truncated_normal", "uniform", "wald")
_KEY_TOOLS = ("key", "PRNGKey", "split", "fold_in", "key_data", "wrap_key_data", "clone",
              "key_impl", "key_dtype", "threefry2x32")
for _name in __all__:
    if _name not in _KEY_TOOLS:
        globals()[_name] = _compiled_when_large(globals()[_name])
    if _name in _SHARDED:
        globals()[_name] = _taking_out_sharding(globals()[_name])
del _name
