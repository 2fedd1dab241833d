"""``functrans.nn``: activation functions and friends, composed from ``functrans.numpy``
and ``lax`` (no primitives of their own), so every transform applies.

Numerically stable forms: ``softplus`` never exponentiates a positive number;
``logsumexp``, ``softmax`` and ``log_softmax`` subtract the (gradient-stopped) max
first, and a row that is all ``-inf`` gives ``logsumexp = -inf`` instead of NaN.

>>> import functrans.numpy as fnp
>>> from functrans import nn
>>> nn.relu(fnp.asarray([-1.0, 2.0])).tolist()
[0.0, 2.0]
>>> round(float(nn.logsumexp(fnp.asarray([1000.0, 1000.0]))), 4)
1000.6931
"""
from __future__ import annotations

import math
import operator
import warnings
from typing import Sequence

import numpy as np

from jaxpr_ir import dtype_kind

from .. import lax
from .. import numpy as fnp
from ..eager_jit import compiled_when_large
from ..errors import ConcretizationTypeError
from ..numpy._util import canonicalize_axes, canonicalize_axis
from ..primitives.custom import stop_gradient
from ..typing import Array, ArrayLike, DTypeLike

__all__ = ["relu", "relu6", "sigmoid", "log_sigmoid", "softplus", "gelu", "silu", "swish",
           "elu", "selu", "leaky_relu", "softmax", "log_softmax", "logsumexp", "one_hot",
           "standardize", "celu", "glu", "hard_sigmoid", "hard_silu", "hard_swish",
           "hard_tanh", "mish", "soft_sign", "squareplus", "log1mexp", "sparse_plus",
           "sparse_sigmoid", "dot_product_attention", "initializers", "logmeanexp",
           "identity", "tanh"]


def _float(x):
    """``x`` as an array of a floating dtype (ints and bools become float64)."""
    x = fnp.asarray(x)
    return x if dtype_kind(x.dtype) in "fc" else fnp.asarray(x, np.float64)


def _stop_gradient(x):
    # the shift it guards cancels exactly in value and derivative; stopping its gradient
    # only saves work
    return stop_gradient(x)


def sigmoid(x: ArrayLike) -> Array:
    """The logistic function ``1 / (1 + exp(-x))``.

    >>> sigmoid(0.0).item()
    0.5
    """
    return lax.logistic(_float(x))


def log_sigmoid(x: ArrayLike) -> Array:
    """``log(sigmoid(x)) = -softplus(-x)``.

    >>> round(log_sigmoid(0.0).item(), 6)
    -0.693147
    """
    return -softplus(-_float(x))


def gelu(x: ArrayLike, approximate: bool = True) -> Array:
    """Gaussian error linear unit: ``x Φ(x)``; ``approximate=True`` (the default, as in
    JAX) uses ``0.5 x (1 + tanh(sqrt(2/π) (x + 0.044715 x³)))``, else the erf form.

    >>> round(gelu(1.0, approximate=False).item(), 6)
    0.841345
    """
    x = _float(x)
    return _gelu_tanh(x) if approximate else _gelu_erf(x)


@compiled_when_large     # as JAX's jitted gelu: a large eager call (or grad) runs compiled
def _gelu_tanh(x):
    inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * (x * x * x))
    return 0.5 * x * (1.0 + fnp.tanh(inner))


@compiled_when_large
def _gelu_erf(x):
    # erfc(-x/√2) / 2 is Φ(x) without the cancellation of 1 + erf in the left tail (JAX's
    # form): gelu(-30) is -3e-197, not 0
    return x * (lax.erfc(x * (-1.0 / math.sqrt(2.0))) * 0.5)


def silu(x: ArrayLike) -> Array:
    """``x * sigmoid(x)`` (also called swish).

    >>> round(silu(1.0).item(), 6)
    0.731059
    """
    x = _float(x)
    return x * sigmoid(x)


swish = silu


def elu(x: ArrayLike, alpha: ArrayLike = 1.0) -> Array:
    """``x`` for ``x > 0``, else ``alpha (exp(x) - 1)``.

    >>> round(elu(-1.0).item(), 6)
    -0.632121
    """
    x = _float(x)
    pos = x > 0
    # expm1 only sees non-positive values, so the unused branch cannot overflow
    neg = alpha * fnp.expm1(fnp.where(pos, fnp.zeros_like(x), x))
    return fnp.where(pos, x, neg)


def selu(x: ArrayLike) -> Array:
    """Scaled ELU with the self-normalising constants.

    >>> round(selu(1.0).item(), 6)
    1.050701
    """
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


def leaky_relu(x: ArrayLike, negative_slope: ArrayLike = 0.01) -> Array:
    """``x`` for ``x >= 0``, else ``negative_slope * x``.

    >>> leaky_relu(-2.0, 0.5).item()
    -1.0
    """
    x = _float(x)
    return fnp.where(x >= 0, x, negative_slope * x)


def _reduced_shape(shape, axes):
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def _masked_max(x, axes, where):
    """max over ``axes`` (kept) of the entries in ``where``, -inf where none is (JAX's
    ``max(x, where=where, initial=-inf)``; -inf too over an empty axis)."""
    if where is None and all(x.shape[i] for i in axes):
        return fnp.max(x, axis=axes, keepdims=True)
    return fnp.max(x, axis=axes, keepdims=True, where=where, initial=-np.inf)


def _sum_kept(x, axes, where):
    return fnp.sum(x, axis=axes, keepdims=True, where=where)


def logsumexp(a: ArrayLike, axis: int | Sequence[int] | None = None,
              b: ArrayLike | None = None, keepdims: bool = False,
              return_sign: bool = False,
              where: ArrayLike | None = None) -> Array | tuple[Array, Array]:
    """``log(sum(b * exp(a)))`` over ``axis``, stable for large and ``-inf`` entries;
    only the entries in ``where`` are summed when it is given.

    JAX's formula step for step, so its special values are JAX's: an entry whose weight
    ``b`` is 0 takes no part (even an infinite one), ``+inf`` and ``-inf`` together give
    ``inf``, a NaN gives NaN, and a negative sum gives NaN (``return_sign`` gives
    ``(log|sum|, sign(sum))`` instead). An empty sum (a zero-length axis, or nothing in
    ``where``) gives ``-inf`` with sign 0, as JAX and scipy.

    >>> import functrans.numpy as fnp
    >>> round(float(logsumexp(fnp.log(fnp.asarray([1.0, 3.0])))), 6)
    1.386294
    """
    a = _float(a)
    if b is not None:
        b = fnp.asarray(b)
        try:
            shape = np.broadcast_shapes(tuple(b.shape), tuple(a.shape))
        except ValueError:
            raise ValueError(f"logsumexp: b of shape {tuple(b.shape)} does not broadcast "
                             f"against a of shape {tuple(a.shape)}") from None
        dt = fnp.result_type(a, b)
        # reduce over the broadcast shape (as JAX and scipy): b may have more dimensions
        a, b = fnp.broadcast_to(fnp.asarray(a, dt), shape), fnp.asarray(b, dt)
        a = fnp.where(b != 0, a, fnp.full_like(a, -np.inf))
    axes = canonicalize_axes(axis, a.ndim)
    if where is not None:
        a = fnp.where(where, a, fnp.zeros_like(a))
    m = _masked_max(fnp.real(a), axes, where)
    m = _stop_gradient(fnp.where(fnp.isfinite(m), m, fnp.zeros_like(m)))
    e = fnp.exp(a - m.astype(a.dtype))
    if b is not None:
        e = e * b
    s = _sum_kept(e, axes, where)
    # the sign only where it is used: a dead equation would still reach the fusion
    # planner of an unsimplified jaxpr (make_jaxpr) and split the row-wise kernel
    sign = fnp.sign(s) if return_sign or b is not None else None
    if return_sign or dtype_kind(s.dtype) != "c":
        s = fnp.abs(s)
    out = fnp.log(s) + m.astype(s.dtype)
    if not keepdims:
        shape = _reduced_shape(out.shape, axes)
        out = fnp.reshape(out, shape)
        sign = None if sign is None else fnp.reshape(sign, shape)
    if return_sign:
        return out, sign
    if b is not None and dtype_kind(out.dtype) != "c":
        out = fnp.where(sign < 0, fnp.full_like(out, np.nan), out)
    return out


def softmax(x: ArrayLike, axis: int | Sequence[int] | None = -1,
            where: ArrayLike | None = None) -> Array:
    """``exp(x) / sum(exp(x))`` along ``axis`` (an int or a tuple); entries outside
    ``where`` take no part and give 0.

    JAX's formula step for step: a ``+inf`` entry makes its whole row NaN (``inf/inf``),
    as ``jax.nn.softmax`` and ``scipy.special.softmax`` give it.

    >>> import functrans.numpy as fnp
    >>> softmax(fnp.asarray([0.0, 0.0])).tolist()
    [0.5, 0.5]
    """
    x = _float(x)
    axes = canonicalize_axes(axis, x.ndim)
    m = _masked_max(x, axes, where)
    xs = x if where is None else fnp.where(where, x, fnp.full_like(x, -np.inf))
    e = fnp.exp(xs - _stop_gradient(m))
    out = e / _sum_kept(e, axes, where)
    return out if where is None else fnp.where(where, out, fnp.zeros_like(out))


def log_softmax(x: ArrayLike, axis: int | Sequence[int] | None = -1,
                where: ArrayLike | None = None) -> Array:
    """``x - logsumexp(x)`` along ``axis``; entries outside ``where`` give ``-inf``
    (JAX's formula step for step: a ``+inf`` entry makes its whole row NaN).

    >>> import functrans.numpy as fnp
    >>> [round(v, 6) for v in log_softmax(fnp.asarray([0.0, 0.0])).tolist()]
    [-0.693147, -0.693147]
    """
    x = _float(x)
    axes = canonicalize_axes(axis, x.ndim)
    m = _masked_max(x, axes, where)
    xs = x if where is None else fnp.where(where, x, fnp.full_like(x, -np.inf))
    shifted = xs - _stop_gradient(m)
    out = shifted - fnp.log(_sum_kept(fnp.exp(shifted), axes, where))
    return out if where is None else fnp.where(where, out, fnp.full_like(out, -np.inf))


def logmeanexp(x: ArrayLike, axis: int | Sequence[int] | None = None,
               where: ArrayLike | None = None, keepdims: bool = False) -> Array:
    """``log(mean(exp(x)))`` over ``axis``: ``logsumexp(x) - log(n)``, n the number of
    entries reduced (those in ``where`` when given).

    >>> import functrans.numpy as fnp
    >>> round(float(logmeanexp(fnp.asarray([1.0, 1.0]))), 6)
    1.0
    """
    x = _float(x)
    axes = canonicalize_axes(axis, x.ndim)
    if where is None:
        n = fnp.asarray(math.prod(x.shape[i] for i in axes), x.dtype)
    else:
        n = fnp.sum(fnp.broadcast_to(fnp.asarray(where, x.dtype), x.shape), axis=axes,
                    keepdims=keepdims)
    return logsumexp(x, axis, keepdims=keepdims, where=where) - fnp.log(n)


def identity(x: ArrayLike) -> Array:
    """``x`` itself (the identity activation).

    >>> import functrans.numpy as fnp
    >>> identity(fnp.asarray([-1.0, 2.0])).tolist()
    [-1.0, 2.0]
    """
    return fnp.asarray(x)


def tanh(x: ArrayLike) -> Array:
    """The hyperbolic tangent activation (``functrans.numpy.tanh``).

    >>> import functrans.numpy as fnp
    >>> tanh(fnp.asarray([0.0])).tolist()
    [0.0]
    """
    return fnp.tanh(x)


def one_hot(x: ArrayLike, num_classes: int, *, dtype: DTypeLike | None = None,
            axis: int = -1) -> Array:
    """One-hot encoding: a new axis of length ``num_classes`` at ``axis``; entries
    outside ``[0, num_classes)`` give all-zero rows. ``dtype`` defaults to float64.

    >>> import functrans.numpy as fnp
    >>> one_hot(fnp.asarray([0, 2]), 3).tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    """
    try:
        num_classes = operator.index(num_classes)
    except TypeError:
        # a ConcretizationTypeError (a TypeError) as JAX's for a traced count
        raise ConcretizationTypeError(
            f"one_hot: num_classes must be a concrete int (in jax.nn.one_hot argument "
            f"`num_classes`), got {type(num_classes).__name__}") from None
    if num_classes < 0:
        raise ValueError(f"one_hot: num_classes must be non-negative, got {num_classes}")
    x = fnp.asarray(x)
    if dtype_kind(x.dtype) not in "iu":
        # JAX deprecates non-integer input (class indices compared as floats)
        warnings.warn(f"one_hot: input should be integer-typed; got dtype={x.dtype}",
                      DeprecationWarning, stacklevel=2)
    ax = canonicalize_axis(axis, x.ndim + 1)
    expanded = fnp.reshape(x, x.shape[:ax] + (1,) + x.shape[ax:])
    cls_shape = [1] * (x.ndim + 1)
    cls_shape[ax] = num_classes
    classes = np.arange(num_classes, dtype=x.dtype).reshape(cls_shape)
    return fnp.asarray(fnp.equal(expanded, classes), np.float64 if dtype is None else dtype)


def standardize(x: ArrayLike, axis: int | Sequence[int] | None = -1,
                mean: ArrayLike | None = None, variance: ArrayLike | None = None,
                epsilon: float = 1e-5, where: ArrayLike | None = None, *,
                algorithm: str = "fast") -> Array:
    """``(x - mean) * rsqrt(variance + epsilon)`` with statistics over ``axis`` (over the
    entries in ``where`` when given). The variance is JAX's: ``algorithm='fast'``
    (its default) ``max(mean(x^2) - mean^2, 0)``, ``'stable'`` ``mean((x - mean)^2)``.

    >>> import functrans.numpy as fnp
    >>> [round(v, 3) for v in standardize(fnp.asarray([1.0, 3.0])).tolist()]
    [-1.0, 1.0]
    """
    if algorithm not in ("fast", "stable"):
        raise ValueError(f"standardize: unknown algorithm {algorithm!r}; expected 'fast' "
                         "or 'stable'")
    x = _float(x)
    axes = canonicalize_axes(axis, x.ndim)

    def avg(v):
        if where is None:
            return fnp.mean(v, axis=axes, keepdims=True)
        w = fnp.broadcast_to(fnp.asarray(where, v.dtype), v.shape)
        return fnp.sum(v * w, axis=axes, keepdims=True) / fnp.sum(w, axis=axes,
                                                                   keepdims=True)
    if mean is None:
        mean = avg(x)
    if variance is None:
        if algorithm == "stable":
            variance = avg(fnp.square(x - mean))
        else:
            variance = fnp.maximum(avg(fnp.square(x)) - fnp.square(mean), 0)
    return (x - mean) * lax.rsqrt(variance + epsilon)


from ._activations import (celu, glu, hard_sigmoid, hard_silu, hard_swish,  # noqa: E402
                           hard_tanh, mish, relu, relu6, soft_sign, softplus, squareplus,
                           log1mexp, sparse_plus, sparse_sigmoid)
from ._attention import dot_product_attention  # noqa: E402
from . import initializers  # noqa: E402
