"""A tiny layer library with jax.example_libraries.stax's API.

A layer is a pair ``(init_fun, apply_fun)``: ``init_fun(rng, input_shape)`` returns
``(output_shape, params)`` and ``apply_fun(params, inputs, **kwargs)`` the outputs
(``rng=`` for stochastic layers). ``serial`` and ``parallel`` combine layers.

As in JAX, ``Dropout(rate)`` keeps each unit with probability ``rate`` (the rate is a
keep rate). ``GeneralConv``/``Conv`` bind ``lax.conv_general_dilated``; ``MaxPool``,
``SumPool`` and ``AvgPool`` (divided by the number of real elements in each window, as in
JAX) use ``lax.reduce_window``.

>>> from functrans import random
>>> init, apply = serial(Dense(4), Relu, Dense(2), LogSoftmax)
>>> out_shape, params = init(random.key(0), (-1, 3))
>>> out_shape, apply(params, random.normal(random.key(1), (5, 3))).shape
((-1, 2), (5, 2))
"""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Sequence

from .. import lax
from .. import nn
from .. import numpy as fnp
from .. import random
from ..jit import ShapeDtypeStruct, eval_shape
from ..nn import initializers
from ..typing import Array, Shape

# a layer: (init_fun(rng, input_shape) -> (output_shape, params), apply_fun(params, inputs))
Layer = tuple[Callable[..., Any], Callable[..., Any]]

__all__ = ["Dense", "Tanh", "Relu", "Exp", "LogSoftmax", "Softmax", "Softplus", "Sigmoid",
           "Elu", "LeakyRelu", "Selu", "Gelu", "Flatten", "Identity", "FanOut", "FanInSum",
           "FanInConcat", "Dropout", "BatchNorm", "serial", "parallel", "shape_dependent",
           "elementwise", "glorot", "randn", "GeneralConv", "Conv", "MaxPool", "SumPool",
           "AvgPool", "GeneralConvTranspose", "Conv1DTranspose", "ConvTranspose",
           "glorot_normal", "normal", "ones", "zeros", "relu", "log_softmax", "logsoftmax",
           "softmax", "softplus", "sigmoid", "elu", "leaky_relu", "selu", "gelu", "standardize"]

glorot = initializers.glorot_normal
randn = initializers.normal
# the functions JAX's stax module exposes (its own imports from jax.nn)
glorot_normal, normal = initializers.glorot_normal, initializers.normal
ones, zeros = initializers.ones, initializers.zeros
relu, log_softmax, softmax, softplus, sigmoid = (nn.relu, nn.log_softmax, nn.softmax,
                                                 nn.softplus, nn.sigmoid)
elu, leaky_relu, selu, gelu, standardize = nn.elu, nn.leaky_relu, nn.selu, nn.gelu, nn.standardize
logsoftmax = nn.log_softmax


def Dense(out_dim: int, W_init: Callable[..., Array] = glorot(),
          b_init: Callable[..., Array] = randn()) -> Layer:  # noqa: N802,N803 (JAX's names)
    """Fully connected layer ``inputs @ W + b``.

    >>> from functrans import random
    >>> Dense(3)[0](random.key(0), (2, 5))[0]
    (2, 3)
    """
    def init_fun(rng, input_shape):
        k1, k2 = random.split(rng)
        W = W_init(k1, (input_shape[-1], out_dim))
        b = b_init(k2, (out_dim,))
        return tuple(input_shape[:-1]) + (out_dim,), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return fnp.dot(inputs, W) + b
    return init_fun, apply_fun


def elementwise(fun: Callable[..., Any], **fun_kwargs: Any) -> Layer:
    """A parameterless layer applying ``fun`` to its input.

    >>> import functrans.numpy as fnp
    >>> elementwise(fnp.abs)[1]((), fnp.asarray([-1.0])).tolist()
    [1.0]
    """
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(fnp.tanh)
Relu = elementwise(nn.relu)
Exp = elementwise(fnp.exp)
LogSoftmax = elementwise(nn.log_softmax, axis=-1)
Softmax = elementwise(nn.softmax, axis=-1)
Softplus = elementwise(nn.softplus)
Sigmoid = elementwise(nn.sigmoid)
Elu = elementwise(nn.elu)
LeakyRelu = elementwise(nn.leaky_relu)
Selu = elementwise(nn.selu)
Gelu = elementwise(nn.gelu)


def _flatten_init(rng, input_shape):
    return (input_shape[0], functools.reduce(operator.mul, input_shape[1:], 1)), ()


def _flatten_apply(params, inputs, **kwargs):
    return fnp.reshape(inputs, (inputs.shape[0], -1))


Flatten = (_flatten_init, _flatten_apply)
Identity = (lambda rng, input_shape: (input_shape, ()),
            lambda params, inputs, **kwargs: inputs)


def FanOut(num: int) -> Layer:  # noqa: N802
    """Copy the input ``num`` times (for ``parallel``).

    >>> FanOut(2)[1]((), 1.0)
    [1.0, 1.0]
    """
    return (lambda rng, input_shape: ([input_shape] * num, ()),
            lambda params, inputs, **kwargs: [inputs] * num)


def _fan_in_sum_apply(params, inputs, **kwargs):
    return functools.reduce(operator.add, inputs)


FanInSum = (lambda rng, input_shape: (input_shape[0], ()), _fan_in_sum_apply)


def FanInConcat(axis: int = -1) -> Layer:  # noqa: N802
    """Concatenate a list of inputs along ``axis``.

    >>> FanInConcat()[0](None, [(2, 3), (2, 4)])[0]
    (2, 7)
    """
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        concat_size = sum(shape[ax] for shape in input_shape)
        out_shape = tuple(input_shape[0][:ax]) + (concat_size,) + tuple(input_shape[0][ax + 1:])
        return out_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fnp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate: float, mode: str = "train") -> Layer:  # noqa: N802
    """Keep each unit with probability ``rate`` and scale kept ones by ``1 / rate``
    (JAX's convention) in 'train' mode; identity otherwise. Needs ``rng=``.

    >>> from functrans import random
    >>> import functrans.numpy as fnp
    >>> Dropout(0.5, mode="test")[1]((), fnp.ones(2)).tolist()
    [1.0, 1.0]
    """
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if mode != "train":
            return inputs
        if rng is None:
            raise ValueError("Dropout's apply_fun needs a PRNG key: call it with rng=key "
                             "(or build the layer with mode='test' for evaluation)")
        keep = random.bernoulli(rng, rate, inputs.shape)
        return fnp.where(keep, inputs / rate, 0.0)
    return init_fun, apply_fun


def BatchNorm(axis: int | Sequence[int] = (0, 1, 2), epsilon: float = 1e-5,  # noqa: N802
              center: bool = True, scale: bool = True,
              beta_init: Callable[..., Array] = initializers.zeros,
              gamma_init: Callable[..., Array] = initializers.ones) -> Layer:
    """Normalise over ``axis`` (batch statistics), then ``gamma * z + beta``.

    >>> from functrans import random
    >>> BatchNorm(axis=(0,))[0](random.key(0), (4, 3))[1][0].shape
    (3,)
    """
    axes = (axis,) if isinstance(axis, int) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axes)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        expand = tuple(None if i in axes else slice(None) for i in range(x.ndim))
        z = nn.standardize(x, axes, epsilon=epsilon)
        if scale:
            z = gamma[expand] * z
        if center:
            z = z + beta[expand]
        return z
    return init_fun, apply_fun


def serial(*layers: Layer) -> Layer:
    """Compose layers in sequence; ``rng=`` is split among them.

    >>> from functrans import random
    >>> serial(Dense(3), Tanh)[0](random.key(0), (1, 2))[0]
    (1, 3)
    """
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, len(apply_funs)) if rng is not None else \
            [None] * len(apply_funs)
        for fun, param, r in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """Apply layers side by side to a list of inputs (often after ``FanOut``).

    >>> from functrans import random
    >>> parallel(Dense(2), Identity)[0](random.key(0), [(1, 3), (1, 4)])[0]
    [(1, 2), (1, 4)]
    """
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, len(init_funs))
        shapes, params = [], []
        for init, r, shape in zip(init_funs, rngs, input_shape):
            s, p = init(r, shape)
            shapes.append(s)
            params.append(p)
        return shapes, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, len(apply_funs)) if rng is not None else \
            [None] * len(apply_funs)
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[Shape], Layer]) -> Layer:
    """A layer built from the input shape by ``make_layer(shape) -> (init, apply)``.

    >>> from functrans import random
    >>> shape_dependent(lambda s: Dense(s[-1]))[0](random.key(0), (2, 5))[0]
    (2, 5)
    """
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun


# --------------------------------------------------------------------- convolution, pooling

def _window_out(size, window, stride, lo_hi):
    if size == -1:                      # an unknown (batch) size stays unknown
        return -1
    span = size + lo_hi[0] + lo_hi[1] - window
    return 0 if span < 0 else span // stride + 1


def _conv_apply(conv: Callable) -> Callable:
    """A convolution layer's ``apply_fun``: ``conv(inputs, W) + b``, with inputs and W
    promoted to one dtype first (lax's convolutions take one dtype: float32 inputs with
    float64 params promote as fnp would)."""
    def apply_fun(params, inputs, **kwargs):
        W, b = params  # noqa: N806
        dt = fnp.result_type(inputs, W)
        return conv(fnp.asarray(inputs).astype(dt), fnp.asarray(W).astype(dt)) + b
    return apply_fun


def GeneralConv(dimension_numbers: tuple[str, str, str], out_chan: int,  # noqa: N802
                filter_shape: Sequence[int], strides: Sequence[int] | None = None,
                padding: str | Sequence[tuple[int, int]] = "VALID",
                W_init: Callable[..., Array] | None = None,
                b_init: Callable[..., Array] = randn(1e-6)) -> Layer:  # noqa: N803
    """Convolution layer ``conv_general_dilated(inputs, W) + b`` with string dimension numbers.

    >>> from functrans import random
    >>> GeneralConv(("NHWC", "HWIO", "NHWC"), 4, (3, 3), padding="SAME")[0](
    ...     random.key(0), (-1, 8, 8, 2))[0]
    (-1, 8, 8, 4)
    """
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = tuple(strides) if strides else one
    W_init = W_init or glorot(rhs_spec.index("I"), rhs_spec.index("O"))  # noqa: N806

    def init_fun(rng, input_shape):
        sizes = iter(filter_shape)
        kernel_shape = tuple(out_chan if c == "O" else input_shape[lhs_spec.index("C")]
                             if c == "I" else next(sizes) for c in rhs_spec)
        k_sp = [kernel_shape[rhs_spec.index(c)] for c in rhs_spec if c not in "OI"]
        in_sp = [input_shape[lhs_spec.index(c)] for c in rhs_spec if c not in "OI"]
        pads = (lax.padtype_to_pads([max(n, 1) for n in in_sp], k_sp, strides, padding)
                if isinstance(padding, str) else padding)
        out_sp = dict(zip([c for c in rhs_spec if c not in "OI"],
                          map(_window_out, in_sp, k_sp, strides, pads)))
        out_shape = tuple(input_shape[lhs_spec.index("N")] if c == "N" else out_chan
                          if c == "C" else out_sp[c] for c in out_spec)
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
        k1, k2 = random.split(rng)
        return out_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    return init_fun, _conv_apply(lambda x, W: lax.conv_general_dilated(  # noqa: N803
        x, W, strides, padding, one, one, dimension_numbers=dimension_numbers))


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
Conv.__doc__ = "NHWC / HWIO convolution layer (``GeneralConv`` with TensorFlow's layout)."


def GeneralConvTranspose(dimension_numbers: tuple[str, str, str], out_chan: int,  # noqa: N802
                         filter_shape: Sequence[int], strides: Sequence[int] | None = None,
                         padding: str | Sequence[tuple[int, int]] = "VALID",
                         W_init: Callable[..., Array] | None = None,
                         b_init: Callable[..., Array] = randn(1e-6)) -> Layer:  # noqa: N803
    """Transposed convolution layer ``conv_transpose(inputs, W) + b`` (string dimension
    numbers); the output shape is that of ``lax.conv_transpose`` (a ``-1`` batch stays).

    >>> from functrans import random
    >>> GeneralConvTranspose(("NHWC", "HWIO", "NHWC"), 4, (3, 3), (2, 2), "SAME")[0](
    ...     random.key(0), (-1, 5, 5, 2))[0]
    (-1, 10, 10, 4)
    """
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    strides = tuple(strides) if strides else (1,) * len(filter_shape)
    W_init = W_init or glorot(rhs_spec.index("I"), rhs_spec.index("O"))  # noqa: N806

    def apply_conv(inputs, W):  # noqa: N803
        return lax.conv_transpose(inputs, W, strides, padding,
                                  dimension_numbers=dimension_numbers)

    def init_fun(rng, input_shape):
        sizes = iter(filter_shape)
        kernel_shape = tuple(out_chan if c == "O" else input_shape[lhs_spec.index("C")]
                             if c == "I" else next(sizes) for c in rhs_spec)
        n_pos = lhs_spec.index("N")
        probe = tuple(1 if i == n_pos and d == -1 else d for i, d in enumerate(input_shape))
        out = eval_shape(apply_conv, ShapeDtypeStruct(probe, fnp.float64),
                         ShapeDtypeStruct(kernel_shape, fnp.float64)).shape
        out_shape = tuple(input_shape[n_pos] if c == "N" else out[i]
                          for i, c in enumerate(out_spec))
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
        k1, k2 = random.split(rng)
        return out_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    return init_fun, _conv_apply(apply_conv)


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
Conv1DTranspose.__doc__ = """NHC / HIO transposed convolution layer.

    >>> from functrans import random
    >>> Conv1DTranspose(3, (2,), (2,))[0](random.key(0), (1, 4, 2))[0]
    (1, 8, 3)
    """
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))
ConvTranspose.__doc__ = """NHWC / HWIO transposed convolution layer.

    >>> from functrans import random
    >>> ConvTranspose(3, (3, 3))[0](random.key(0), (1, 4, 4, 2))[0]
    (1, 6, 6, 3)
    """


def _pooling_layer(reducer, init_val, normalize=False):
    def layer(window_shape: Sequence[int], strides: Sequence[int] | None = None,
              padding: str | Sequence[tuple[int, int]] = "VALID",
              spec: str | None = None) -> Layer:
        window_shape = tuple(window_shape)
        strides = tuple(strides) if strides else (1,) * len(window_shape)
        non_spatial = (0, len(window_shape) + 1) if spec is None else \
            (spec.index("N"), spec.index("C"))
        win, st = window_shape, strides
        for i in sorted(non_spatial):
            win, st = win[:i] + (1,) + win[i:], st[:i] + (1,) + st[i:]

        def init_fun(rng, input_shape):
            pads = (lax.padtype_to_pads([max(n, 1) for n in input_shape], win, st, padding)
                    if isinstance(padding, str) else padding)
            return tuple(map(_window_out, input_shape, win, st, pads)), ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, win, st, padding)
            if not normalize:
                return out
            spatial = tuple(n for i, n in enumerate(inputs.shape) if i not in non_spatial)
            counts = lax.reduce_window(fnp.ones(spatial, inputs.dtype), 0.0, lax.add,
                                       window_shape, strides, padding)
            for i in sorted(non_spatial):
                counts = fnp.expand_dims(counts, i)
            return out / counts
        return init_fun, apply_fun
    return layer


MaxPool = _pooling_layer(lax.max, -float("inf"))
MaxPool.__doc__ = """Max pooling over spatial windows (NHWC unless ``spec`` says otherwise).

    >>> import numpy as np
    >>> MaxPool((2, 2), (2, 2))[1]((), np.arange(16.0).reshape(1, 4, 4, 1)).shape
    (1, 2, 2, 1)
    """
SumPool = _pooling_layer(lax.add, 0.0)
SumPool.__doc__ = """Sum pooling over spatial windows.

    >>> import numpy as np
    >>> float(SumPool((2, 2))[1]((), np.ones((1, 2, 2, 1))).sum())
    4.0
    """
AvgPool = _pooling_layer(lax.add, 0.0, normalize=True)
AvgPool.__doc__ = """Average pooling (each window divided by its count of real elements).

    >>> import numpy as np
    >>> AvgPool((2, 2), padding="SAME")[1]((), np.ones((1, 3, 3, 1))).tolist()[0][2][2]
    [1.0]
    """
for _f, _n in ((MaxPool, "MaxPool"), (SumPool, "SumPool"), (AvgPool, "AvgPool")):
    _f.__name__ = _f.__qualname__ = _n
del _f, _n
