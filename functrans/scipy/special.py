"""``functrans.scipy.special``: the special functions of ``jax.scipy.special``, each
composed from functrans operations (so every transform and backend runs them; under
``jit`` they fuse into native code like any elementwise chain) with its derivative.

An eager call on 2**16 values or more runs through a cached ``jit``
of the function, as every ``jax.scipy.special`` call does: each function is tens to
hundreds of elementwise steps (polynomials, both branches of each ``where``), a numpy
pass over memory each when eager. So does one inside an eager ``grad``/``jvp``/``vjp``
(its derivative then runs compiled too; see ``functrans.eager_jit``). Its values are
the compiled function's.

Accuracy (float64, measured against scipy in tests/test_scipy_special.py): about
1e-14 relative in the normal range; gammaln, digamma and betaln are absolute-accurate
(about 1e-14) near their zeros, where the relative error grows; gammainc, gammaincc
and betainc about 1e-13.

>>> from functrans.scipy import special
>>> round(float(special.gammaln(10.0)), 8)
12.80182748
"""
from __future__ import annotations

import sys as _sys

import numpy as _np

from .. import nn as _nn
from .. import numpy_dispatch as _numpy_dispatch
from ..custom_derivatives import custom_jvp as _custom_jvp
from ..eager_jit import compiled_when_large as _compiled_when_large
from .. import numpy as _fnp
from ._special_erf import erf, erfc, erfcx, erfinv, log_ndtr, ndtr, ndtri
from ._sixteen_bit import in_float32_for_16_bit as _in_float32_for_16_bit
from ._special_gamma import as_float as _as_float
from ._special_gamma import (beta, betaln, comb, digamma, factorial, gamma,
                             gammaln, gammasgn, multigammaln, poch, polygamma, zeta)
from ._special_incomplete import betainc, gammainc, gammaincc
from ._special_misc import (bernoulli, entr, exp1, i0, i0e, i1, i1e, kl_div, rel_entr,
                            xlog1py, xlogy)
from ._special_extra import boxcox, boxcox1p, dawsn, expi, loggamma, spence
from ._special_more import bessel_jn, expn, fresnel, hyp1f1, owens_t, sici
from ._special_hyp2f1 import hyp2f1
from ._special_sph import sph_harm_y
from ._special_wofz import wofz
from typing import Any, Callable, Sequence
from ..typing import Array, ArrayLike

__all__ = ["bessel_jn", "expn", "fresnel", "hyp1f1", "hyp2f1", "owens_t", "sici", "sph_harm_y", "wofz", "bernoulli", "beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb", "dawsn",
           "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp1", "expi", "expit",
           "factorial", "gamma", "gammainc", "gammaincc", "gammaln", "gammasgn", "i0", "i0e",
           "i1", "i1e", "kl_div", "log_ndtr", "log_softmax", "loggamma", "logit", "logsumexp",
           "multigammaln", "ndtr", "ndtri", "poch", "polygamma", "rel_entr", "softmax",
           "spence", "xlog1py", "xlogy", "zeta"]


def expit(x: ArrayLike) -> Array:
    """The logistic sigmoid 1 / (1 + exp(-x)).

    >>> from functrans.scipy.special import expit
    >>> float(expit(0.0))
    0.5
    """
    return _nn.sigmoid(_as_float(x))


def logit(x: ArrayLike) -> Array:
    """log(x / (1 - x)), the inverse of expit.

    >>> from functrans.scipy.special import logit
    >>> float(logit(0.5))
    0.0
    """
    return _logit(_as_float(x))


@_custom_jvp
def _logit(x):
    return _fnp.log(x / (x.dtype.type(1) - x))


# JAX's rule, 1 / (x (1 - x)): differentiating through the quotient gave NaN at x = 0
# and 1, where the derivative is inf
_logit.defjvps(lambda g, ans, x: g / (x * (x.dtype.type(1) - x)))


def logsumexp(a: ArrayLike, axis: int | Sequence[int] | None = None,
              b: ArrayLike | None = None, keepdims: bool = False,
              return_sign: bool = False,
              where: ArrayLike | None = None) -> Array | tuple[Array, Array]:
    """log(sum(b * exp(a))) over ``axis``, stable; with ``return_sign`` (weights of
    either sign) returns ``(log|sum|, sign)``; only the entries in ``where`` count.

    >>> from functrans.scipy.special import logsumexp
    >>> round(float(logsumexp(_fnp.array([0.0, 0.0]))), 12)
    0.69314718056
    """
    return _nn.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign,
                         where=where)


def softmax(x: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    """exp(x) / sum(exp(x)) over ``axis`` (all axes by default, as scipy).

    >>> from functrans.scipy.special import softmax
    >>> softmax(_fnp.array([0.0, 0.0])).tolist()
    [0.5, 0.5]
    """
    x = _as_float(x)
    if axis is None:
        axis = tuple(range(x.ndim))
    return _nn.softmax(x, axis=axis)


def log_softmax(x: ArrayLike, axis: int | Sequence[int] | None = None) -> Array:
    """x - logsumexp(x) over ``axis`` (all axes by default, as scipy).

    >>> from functrans.scipy.special import log_softmax
    >>> round(float(log_softmax(_fnp.array([0.0, 0.0]))[0]), 12)
    -0.69314718056
    """
    x = _as_float(x)
    if axis is None:
        axis = tuple(range(x.ndim))
    return _nn.log_softmax(x, axis=axis)


for _name in ("betainc", "betaln", "dawsn", "digamma", "erf", "erfc", "erfcx", "erfinv",
              "exp1", "expi", "gammainc", "gammaincc", "gammaln", "i0", "i0e", "i1", "i1e",
              "log_ndtr", "ndtr", "ndtri", "owens_t", "spence"):
    globals()[_name] = _compiled_when_large(globals()[_name])
del _name


# The functions JAX computes for float16/bfloat16 arguments, with a float16/bfloat16
# result (JAX 0.10.2): here each runs in float32 and its float results round once to the
# 16-bit dtype, as XLA computes its own 16-bit special functions (wofz's complex result
# stays complex64, as JAX's). ndtr, ndtri, log_ndtr and spence refuse 16-bit floats in
# JAX and raise TypeError here too; so does owens_t (JAX: a float64 result).
_FLOAT32_FOR_16_BIT = (
    "bessel_jn", "beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb", "dawsn",
    "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp1", "expi", "expit", "expn",
    "factorial", "fresnel", "gamma", "gammainc", "gammaincc", "gammaln", "gammasgn",
    "hyp1f1", "hyp2f1", "i0", "i0e", "i1", "i1e", "kl_div", "log_softmax", "loggamma",
    "logit", "logsumexp", "multigammaln", "poch", "polygamma", "rel_entr", "sici",
    "softmax", "wofz", "xlog1py", "xlogy", "zeta")
for _name in _FLOAT32_FOR_16_BIT:
    globals()[_name] = _in_float32_for_16_bit(globals()[_name])
del _name

_numpy_dispatch.install_special(_sys.modules[__name__])
