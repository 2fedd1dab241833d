"""``functrans.scipy.stats``: the distributions of ``jax.scipy.stats``, one module
each, composed from functrans.scipy.special, so every function is differentiable,
batchable and compiles under ``jit``.

>>> from functrans.scipy import stats
>>> float(stats.norm.cdf(0.0))
0.5
"""
from . import (bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon, gamma, gennorm,
               geom, laplace, logistic, multinomial, multivariate_normal, nbinom, norm, pareto,
               poisson, t, truncnorm, uniform, vonmises, wrapcauchy)

__all__ = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
           "gamma", "gennorm", "geom", "laplace", "logistic", "multinomial",
           "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t", "truncnorm",
           "uniform", "vonmises", "wrapcauchy"]
