"""Table rows for ``functrans.nn`` and for sorting (the ``sort`` primitive, ``lax.sort``,
``fnp.sort`` / ``fnp.argsort``). Random inputs have no ties and no zeros, so kinks
(relu at 0, sort ties) stay outside the finite-difference steps."""
import math

import numpy as np

import functrans.numpy as fnp
from functrans import lax, nn
from tests.cases import OpCase, gen, ints, randn

F32 = np.float32


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _logsumexp(x, axis=None, keepdims=False, b=None):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - m) if b is None else b * np.exp(x - m)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(e, axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def _softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _with_neg_inf(rng):
    x = rng.standard_normal((3, 4))
    x[0, 1] = -np.inf
    x[2, :] = -np.inf
    return [x]


CASES = []


def row(name, fun, args, ref, **kw):
    CASES.append(OpCase(name, fun, args, ref, **kw))


# --------------------------------------------------------------------------- activations

row("nn_relu", nn.relu, gen(randn(3, 4)), lambda x: np.maximum(x, 0))
row("nn_relu_int", nn.relu, gen(ints(5)), lambda x: np.maximum(x, 0), diff=False)
row("nn_relu6", nn.relu6, gen(randn(8, scale=5.0)), lambda x: np.minimum(np.maximum(x, 0), 6))
row("nn_sigmoid", nn.sigmoid, gen(randn(3, 4, scale=3.0)), _sigmoid)
row("nn_sigmoid_f32", nn.sigmoid, gen(randn(5, dtype=F32)), lambda x: _sigmoid(x).astype(F32),
    rtol=1e-6)
row("nn_log_sigmoid", nn.log_sigmoid, gen(randn(6, scale=10.0)),
    lambda x: -np.logaddexp(0.0, -x))
row("nn_softplus", nn.softplus, gen(randn(3, 4, scale=10.0)), lambda x: np.logaddexp(x, 0.0))
row("nn_softplus_scalar", nn.softplus, [np.float64(0.7)], lambda x: np.logaddexp(x, 0.0))
row("nn_gelu_tanh", nn.gelu, gen(randn(3, 4, scale=2.0)),
    lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))))
row("nn_gelu_exact", lambda x: nn.gelu(x, approximate=False), gen(randn(3, 4, scale=2.0)),
    lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2.0))))
row("nn_silu", nn.silu, gen(randn(3, 4, scale=3.0)), lambda x: x * _sigmoid(x))
row("nn_elu", nn.elu, gen(randn(3, 4, scale=3.0)),
    lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))))
row("nn_elu_alpha_large_input", lambda x: nn.elu(x, 0.5), [np.array([-3.0, 800.0, 1.0])],
    lambda x: np.where(x > 0, x, 0.5 * np.expm1(np.minimum(x, 0))))
row("nn_selu", nn.selu, gen(randn(6)),
    lambda x: 1.0507009873554805 * np.where(
        x > 0, x, 1.6732632423543772 * np.expm1(np.minimum(x, 0))))
row("nn_leaky_relu", lambda x: nn.leaky_relu(x, 0.1), gen(randn(3, 4)),
    lambda x: np.where(x >= 0, x, 0.1 * x))

# --------------------------------------------------------------------------- softmax family

row("nn_softmax", nn.softmax, gen(randn(3, 4, scale=5.0)), _softmax)
row("nn_softmax_axis0", lambda x: nn.softmax(x, axis=0), gen(randn(3, 4)),
    lambda x: _softmax(x, axis=0))
row("nn_softmax_large", nn.softmax, [np.array([1000.0, 1001.0, 999.0])], _softmax)
row("nn_softmax_f32", nn.softmax, gen(randn(2, 5, dtype=F32)),
    lambda x: _softmax(x.astype(np.float64)).astype(F32), rtol=1e-6)
row("nn_log_softmax", nn.log_softmax, gen(randn(3, 4, scale=5.0)),
    lambda x: np.log(_softmax(x)))
row("nn_log_softmax_axis_tuple", lambda x: nn.log_softmax(x, axis=(0, 2)), gen(randn(2, 3, 2)),
    lambda x: x - _logsumexp(x, axis=(0, 2), keepdims=True))
row("nn_logsumexp", nn.logsumexp, gen(randn(3, 4)), _logsumexp)
row("nn_logsumexp_axis_keepdims", lambda x: nn.logsumexp(x, axis=1, keepdims=True),
    gen(randn(3, 4, scale=100.0)), lambda x: _logsumexp(x, axis=1, keepdims=True))
row("nn_logsumexp_b", lambda x, b: nn.logsumexp(x, axis=0, b=b),
    gen(randn(3, 2), lambda rng: rng.uniform(0.5, 2.0, (3, 2))),
    lambda x, b: _logsumexp(x, axis=0, b=b))
row("nn_logsumexp_neg_inf_rows", lambda x: nn.logsumexp(x, axis=1), _with_neg_inf,
    lambda x: _logsumexp(x, axis=1), diff=False)
row("nn_log_softmax_neg_inf_entry", nn.log_softmax,
    lambda rng: [np.array([[-np.inf, 0.5, 1.0], [0.1, 0.2, -0.3]])],
    lambda x: x - _logsumexp(x, axis=-1, keepdims=True), diff=False)
row("nn_logsumexp_return_sign",
    lambda x: nn.logsumexp(x, b=np.array([1.0, -3.0, 0.5]), return_sign=True),
    gen(randn(3)),
    lambda x: (np.log(np.abs(np.sum(np.array([1.0, -3.0, 0.5]) * np.exp(x)))),
               np.sign(np.sum(np.array([1.0, -3.0, 0.5]) * np.exp(x)))))
row("nn_one_hot", lambda x: nn.one_hot(x, 4), gen(ints(5, low=-1, high=5)),
    lambda x: (x[:, None] == np.arange(4)).astype(np.float64), diff=False)
row("nn_one_hot_axis0_f32", lambda x: nn.one_hot(x, 3, dtype=F32, axis=0),
    gen(ints(2, 2, low=0, high=3)),
    lambda x: (x[None] == np.arange(3)[:, None, None]).astype(F32), diff=False)
row("nn_standardize", nn.standardize, gen(randn(3, 4)),
    lambda x: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5))

# --------------------------------------------------------------------------- sorting

row("sort_1d", fnp.sort, gen(randn(6)), np.sort)
row("sort_axis0", lambda x: fnp.sort(x, axis=0), gen(randn(4, 3)), lambda x: np.sort(x, axis=0))
row("sort_axis_none", lambda x: fnp.sort(x, axis=None), gen(randn(2, 3)),
    lambda x: np.sort(x, axis=None))
row("sort_descending", lambda x: fnp.sort(x, descending=True), gen(randn(3, 5)),
    lambda x: np.flip(np.sort(x, axis=-1), -1))
row("sort_int", fnp.sort, gen(ints(3, 7)), np.sort, diff=False)
row("sort_f32", fnp.sort, gen(randn(7, dtype=F32)), np.sort)
row("sort_empty", fnp.sort, [np.zeros((2, 0))], np.sort, diff=False)
row("sort_nan_last", fnp.sort, [np.array([3.0, np.nan, -1.0, 2.0])], np.sort, diff=False)
row("argsort_1d", fnp.argsort, gen(randn(6)), lambda x: np.argsort(x, kind="stable"),
    diff=False)
row("argsort_ties_stable", lambda x: fnp.argsort(x, axis=0), gen(ints(6, 3, low=0, high=3)),
    lambda x: np.argsort(x, axis=0, kind="stable"), diff=False)
row("argsort_descending_stable", lambda x: fnp.argsort(x, descending=True),
    gen(ints(2, 8, low=0, high=3)),
    lambda x: (x.shape[-1] - 1 - np.flip(np.argsort(np.flip(x, -1), kind="stable"), -1)),
    diff=False)
row("lax_sort_key_val", lambda k, v: lax.sort_key_val(k, v), gen(randn(3, 5), randn(3, 5)),
    lambda k, v: (np.sort(k), np.take_along_axis(v, np.argsort(k, kind="stable"), -1)))
row("lax_sort_int_keys_carry_float", lambda k, v: lax.sort((k, v), dimension=0),
    gen(ints(6, 2, low=0, high=3), randn(6, 2)),
    lambda k, v: (np.sort(k, axis=0, kind="stable"),
                  np.take_along_axis(v, np.argsort(k, axis=0, kind="stable"), 0)))
row("lax_sort_two_keys", lambda a, b, v: lax.sort((a, b, v), num_keys=2),
    gen(ints(7, low=0, high=2), ints(7, low=0, high=3), randn(7)),
    lambda a, b, v: (a[np.lexsort((b, a))], b[np.lexsort((b, a))], v[np.lexsort((b, a))]))
