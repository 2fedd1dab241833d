"""``functrans.scipy.stats``: the distributions of ``jax.scipy.stats``, one module
each, composed from functrans.scipy.special, so every function is differentiable,
batchable and compiles under ``jit``.

>>> from functrans.scipy import stats
>>> float(stats.norm.cdf(0.0))
0.5
"""
from . import (bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon, gamma, gennorm,
               geom, gumbel_l, gumbel_r, laplace, logistic, multinomial, multivariate_normal,
               nbinom, norm, pareto, poisson, t, truncnorm, uniform, vonmises, wrapcauchy)
from ._core import ModeResult, mode, rankdata, sem
from ._kde import gaussian_kde

__all__ = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
           "gamma", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic",
           "multinomial", "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t",
           "truncnorm", "uniform", "vonmises", "wrapcauchy", "ModeResult", "mode", "rankdata",
           "sem", "gaussian_kde"]
