"""More activations of ``functrans.nn`` (jax.nn's names), composed from
``functrans.numpy``.

>>> import functrans.numpy as fnp
>>> from functrans import nn
>>> nn.hard_tanh(fnp.asarray([-3.0, 0.5, 2.0])).tolist()
[-1.0, 0.5, 1.0]
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import dtype_kind

from .. import lax
from .. import numpy as fnp
from ..eager_jit import compiled_when_large
from ..typing import Array, ArrayLike

__all__ = ["relu", "relu6", "softplus", "celu", "glu", "hard_sigmoid", "hard_silu",
           "hard_swish", "hard_tanh", "mish", "soft_sign", "squareplus", "log1mexp",
           "sparse_plus", "sparse_sigmoid"]


def _float(x):
    x = fnp.asarray(x)
    return x if dtype_kind(x.dtype) in "fc" else fnp.asarray(x, np.float64)


def _zero_or_nan(x):
    # 0 where x is a number, NaN where x is NaN (x * 0 sees only x <= 0 or NaN here, so
    # no inf * 0); its derivative is 0 either way, as JAX's relu rule gives
    return fnp.where(x <= 0, fnp.zeros_like(x), x * fnp.zeros_like(x))


def relu(x: ArrayLike) -> Array:
    """``max(x, 0)``: NaN stays NaN and the derivative at 0 is 0 (as in JAX).

    >>> import functrans.numpy as fnp
    >>> relu(fnp.asarray([-2, 3])).tolist()
    [0, 3]
    """
    x = fnp.asarray(x)
    return fnp.where(x > 0, x, _zero_or_nan(x))


def relu6(x: ArrayLike) -> Array:
    """``min(max(x, 0), 6)``: NaN stays NaN; the derivative at 0 and 6 is 0 (as in JAX).

    >>> import functrans.numpy as fnp
    >>> relu6(fnp.asarray([-1.0, 3.0, 9.0])).tolist()
    [0.0, 3.0, 6.0]
    """
    x = fnp.asarray(x)
    return fnp.where(x > 0, fnp.where(x < 6, x, fnp.full_like(x, 6)), _zero_or_nan(x))


def softplus(x: ArrayLike) -> Array:
    """``log(1 + exp(x))``: ``x + log1p(exp(-x))`` above 0, ``log1p(exp(x))`` at or below,
    each branch analytic with a safe argument, so every derivative is exact at 0 and
    finite at ±inf (softplus(-inf) = 0, softplus'(inf) = 1), as JAX's ``logaddexp(x, 0)``.

    >>> round(softplus(0.0).item(), 6)
    0.693147
    """
    return _softplus(_float(x))


@compiled_when_large     # as JAX's jitted softplus: a large eager call (or grad) runs compiled
def _softplus(x):
    pos = x > 0
    xp = fnp.where(pos, x, fnp.zeros_like(x))
    xn = fnp.where(pos, fnp.zeros_like(x), x)
    return fnp.where(pos, xp + fnp.log1p(fnp.exp(-xp)), fnp.log1p(fnp.exp(xn)))


def celu(x: ArrayLike, alpha: ArrayLike = 1.0) -> Array:
    """``max(x, 0) + alpha * min(exp(x / alpha) - 1, 0)``.

    >>> import functrans.numpy as fnp
    >>> round(float(celu(fnp.asarray(-1.0), alpha=2.0)), 6)
    -0.786939
    """
    x = _float(x)
    # JAX's formula: the ties of maximum and minimum at 0 each take half, so the
    # derivative there is 1 (both one-sided derivatives are 1)
    return fnp.maximum(x, 0.0) + alpha * fnp.expm1(fnp.minimum(x, 0.0) / alpha)


def glu(x: ArrayLike, axis: int = -1) -> Array:
    """Gated linear unit: the first half of ``axis`` times the sigmoid of the second.

    >>> import functrans.numpy as fnp
    >>> glu(fnp.asarray([2.0, 0.0])).tolist()
    [1.0]
    """
    x = _float(x)
    n = x.shape[axis]
    if n % 2:
        raise ValueError(f"glu: axis {axis} has odd size {n}")
    a, b = fnp.split(x, 2, axis=axis)
    return a * lax.logistic(b)        # as nn.sigmoid: slope 0 at b = -inf (1/(1+e^-b) gave inf/inf)


def hard_sigmoid(x: ArrayLike) -> Array:
    """``relu6(x + 3) / 6``.

    >>> import functrans.numpy as fnp
    >>> hard_sigmoid(fnp.asarray([-4.0, 0.0, 4.0])).tolist()
    [0.0, 0.5, 1.0]
    """
    x = _float(x)
    # relu6 (not clip): JAX's derivative 0 at the kinks ±3, and NaN stays NaN
    return relu6(x + 3.0) / 6.0


def hard_silu(x: ArrayLike) -> Array:
    """``x * hard_sigmoid(x)`` (also ``hard_swish``).

    >>> import functrans.numpy as fnp
    >>> hard_silu(fnp.asarray([-4.0, 1.0, 4.0])).tolist()
    [-0.0, 0.6666666666666666, 4.0]
    """
    x = _float(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def hard_tanh(x: ArrayLike) -> Array:
    """``clip(x, -1, 1)``, written as JAX's nested where, so the derivative at x = ±1 is
    1 (clip's maximum/minimum would split the tie: 1/2).

    >>> import functrans.numpy as fnp
    >>> hard_tanh(fnp.asarray(0.25)).item()
    0.25
    """
    x = _float(x)
    one = fnp.ones((), x.dtype)
    return fnp.where(x > 1, one, fnp.where(x < -1, -one, x))


def mish(x: ArrayLike) -> Array:
    """``x * tanh(softplus(x))``.

    >>> import functrans.numpy as fnp
    >>> round(float(mish(fnp.asarray(1.0))), 6)
    0.865098
    """
    x = _float(x)
    return x * fnp.tanh(softplus(x))


def soft_sign(x: ArrayLike) -> Array:
    """``x / (|x| + 1)``.

    >>> import functrans.numpy as fnp
    >>> soft_sign(fnp.asarray([-3.0, 1.0])).tolist()
    [-0.75, 0.5]
    """
    x = _float(x)
    return x / (fnp.abs(x) + 1.0)


def squareplus(x: ArrayLike, b: ArrayLike = 4) -> Array:
    """``(x + sqrt(x^2 + b)) / 2``, a smooth ReLU.

    >>> import functrans.numpy as fnp
    >>> squareplus(fnp.asarray(0.0)).item()
    1.0
    """
    x = _float(x)
    return (x + fnp.sqrt(x * x + b)) / 2.0


def log1mexp(x: ArrayLike) -> Array:
    """``log(1 - exp(-x))`` for ``x > 0``, accurate at both ends (``log(-expm1(-x))``
    below log 2, ``log1p(-exp(-x))`` above).

    >>> import functrans.numpy as fnp
    >>> round(float(log1mexp(fnp.asarray(1e-10))), 4)
    -23.0259
    """
    x = _float(x)
    small = x < np.log(2.0)
    # each branch gets an argument safe for it, so the untaken one stays finite
    xs = fnp.where(small, x, 1.0)
    xl = fnp.where(small, 1.0, x)
    return fnp.where(small, fnp.log(-fnp.expm1(-xs)), fnp.log1p(-fnp.exp(-xl)))


def sparse_plus(x: ArrayLike) -> Array:
    """0 below -1, ``(x + 1)^2 / 4`` on [-1, 1], ``x`` above 1.

    >>> import functrans.numpy as fnp
    >>> sparse_plus(fnp.asarray([-2.0, 0.0, 2.0])).tolist()
    [0.0, 0.25, 2.0]
    """
    x = _float(x)
    return fnp.where(x <= -1.0, 0.0, fnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4.0))


def sparse_sigmoid(x: ArrayLike) -> Array:
    """The derivative of ``sparse_plus``: 0, ``(x + 1) / 2``, 1.

    >>> import functrans.numpy as fnp
    >>> sparse_sigmoid(fnp.asarray([-2.0, 0.0, 2.0])).tolist()
    [0.0, 0.5, 1.0]
    """
    x = _float(x)
    return fnp.clip((x + 1.0) / 2.0, 0.0, 1.0)
