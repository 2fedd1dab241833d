"""The jax.nn additions: activations (value vs a numpy formula, grad vs finite
differences, jit, vmap), dot_product_attention (vs a numpy reference with masks, bias,
causal masking and grouped heads) and nn.initializers (shapes, statistics, orthogonality),
plus random.truncated_normal."""
import math

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import nn, random


def _sig(x):
    return 1 / (1 + np.exp(-x))


ACTIVATIONS = [
    ("celu", lambda x: nn.celu(x, 1.5), lambda x: np.where(x > 0, x, 1.5 * np.expm1(x / 1.5))),
    ("glu", nn.glu, lambda x: x[..., :2] * _sig(x[..., 2:])),
    ("hard_sigmoid", nn.hard_sigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    ("hard_silu", nn.hard_silu, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    ("hard_swish", nn.hard_swish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    ("hard_tanh", nn.hard_tanh, lambda x: np.clip(x, -1, 1)),
    ("mish", nn.mish, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    ("soft_sign", nn.soft_sign, lambda x: x / (np.abs(x) + 1)),
    ("squareplus", nn.squareplus, lambda x: (x + np.sqrt(x * x + 4)) / 2),
    ("log1mexp", lambda x: nn.log1mexp(fnp.abs(x) + 0.01),
     lambda x: np.log(1 - np.exp(-(np.abs(x) + 0.01)))),
    ("sparse_plus", nn.sparse_plus,
     lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4))),
    ("sparse_sigmoid", nn.sparse_sigmoid, lambda x: np.clip((x + 1) / 2, 0, 1)),
]

X = np.array([[-3.7, -1.3, -0.4, 0.2], [0.55, 1.2, 2.9, -0.07]])


@pytest.mark.parametrize("name,f,ref", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation(name, f, ref):
    np.testing.assert_allclose(np.asarray(f(X)), ref(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(ft.jit(f)(X)), ref(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(ft.vmap(f)(X)), ref(X), rtol=1e-12, atol=1e-12)
    g = np.asarray(ft.grad(lambda x: fnp.sum(f(x) * np.cos(np.arange(x.size) + 1.0).reshape(
        -1, f(x).shape[-1])[:x.shape[0]]))(X))
    eps = 1e-6
    w = np.cos(np.arange(X.size) + 1.0).reshape(-1, ref(X).shape[-1])[:X.shape[0]]
    fd = np.zeros_like(X)
    for j in np.ndindex(X.shape):
        hi, lo = X.copy(), X.copy()
        hi[j] += eps
        lo[j] -= eps
        fd[j] = (np.sum(ref(hi) * w) - np.sum(ref(lo) * w)) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)


def test_log1mexp_is_accurate_at_both_ends():
    x = np.array([1e-12, 1e-3, 0.5, 5.0, 40.0])
    want = np.where(x < np.log(2), np.log(-np.expm1(-x)), np.log1p(-np.exp(-x)))
    np.testing.assert_allclose(np.asarray(nn.log1mexp(x)), want, rtol=1e-14)


def _attention_ref(q, k, v, bias=None, mask=None, causal=False, scale=None):
    B, T, N, H = q.shape
    S, K = k.shape[1], k.shape[2]
    G = N // K
    k = np.repeat(k, G, axis=2)
    v = np.repeat(v, G, axis=2)
    scale = 1 / math.sqrt(H) if scale is None else scale
    logits = np.einsum("btnh,bsnh->bnts", q, k) * scale
    if bias is not None:
        logits = logits + bias
    m = np.ones((B, N, T, S), bool)
    if mask is not None:
        m &= np.broadcast_to(mask, m.shape)
    if causal:
        m &= np.tril(np.ones((T, S), bool))
    logits = np.where(m, logits, np.finfo(np.float64).min)
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("bnts,bsnh->btnh", p, v)


def test_dot_product_attention_against_reference():
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(2, 3, 4, 5)), rng.normal(size=(2, 6, 2, 5)), \
        rng.normal(size=(2, 6, 2, 5))
    bias = rng.normal(size=(1, 4, 3, 6))
    mask = rng.uniform(size=(2, 1, 3, 6)) > 0.3
    for kw in ({}, {"bias": bias}, {"mask": mask}, {"bias": bias, "mask": mask},
               {"scale": 0.3}):
        want = _attention_ref(q, k, v, kw.get("bias"), kw.get("mask"), scale=kw.get("scale"))
        np.testing.assert_allclose(np.asarray(nn.dot_product_attention(q, k, v, **kw)), want,
                                   rtol=1e-12, atol=1e-12)
    qq = rng.normal(size=(2, 6, 2, 5))
    want = _attention_ref(qq, k, v, causal=True)
    got = ft.jit(lambda a, b, c: nn.dot_product_attention(a, b, c, is_causal=True))(qq, k, v)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)
    lens = np.array([2, 6])
    want = _attention_ref(q, k, v, mask=(np.arange(6) < lens[:, None])[:, None, None, :])
    np.testing.assert_allclose(np.asarray(nn.dot_product_attention(
        q, k, v, key_value_seq_lengths=lens)), want, rtol=1e-12, atol=1e-12)
    # unbatched input and vmap over a batch agree with the batched call
    batched = np.asarray(nn.dot_product_attention(q, k, v))
    np.testing.assert_allclose(np.asarray(ft.vmap(nn.dot_product_attention)(q, k, v)),
                               batched, rtol=1e-12, atol=1e-12)


def test_dot_product_attention_gradient():
    rng = np.random.default_rng(1)
    q, k, v = (rng.normal(size=(1, 3, 2, 2)) for _ in range(3))

    def loss(q):
        return fnp.sum(nn.dot_product_attention(q, k, v, is_causal=True) ** 2)
    g = np.asarray(ft.grad(loss)(q))
    eps = 1e-6
    fd = np.zeros_like(q)
    for j in np.ndindex(q.shape):
        hi, lo = q.copy(), q.copy()
        hi[j] += eps
        lo[j] -= eps
        fd[j] = (float(loss(hi)) - float(loss(lo))) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)


def test_dot_product_attention_float16_softmax_in_float32():
    """float16 attention computes logits and softmax in float32 and rounds the
    probabilities to float16, as JAX: the softmax was in float16, with twice JAX's error
    against the exact attention of the same float16 inputs (max 3.2e-3, mean 3.4e-4;
    now 1.8e-3 and 1.8e-4, JAX 0.10.2's 1.6e-3 and 1.8e-4 on its own draws)."""
    rng = np.random.default_rng(3)
    q = (rng.standard_normal((2, 16, 4, 32)) * 1.5).astype(np.float16)
    k, v = ((rng.standard_normal((2, 16, 2, 32)) * 1.5).astype(np.float16) for _ in range(2))
    qq, kk, vv = (a.astype(np.float64) for a in (q, k, v))
    s = np.einsum("btnh,bsnh->bnts", qq, np.repeat(kk, 2, 2)) / np.sqrt(32)
    s = np.where(np.tril(np.ones((16, 16), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = np.einsum("bnts,bsnh->btnh", p / p.sum(-1, keepdims=True), np.repeat(vv, 2, 2))
    got, lse = nn.dot_product_attention(q, k, v, is_causal=True, return_residual=True)
    assert got.dtype == np.float16 and lse.dtype == np.float16
    err = np.abs(np.asarray(got, np.float64) - want)
    assert err.max() < 2.4e-3 and err.mean() < 2.4e-4


def test_truncated_normal_bounds_moments_and_reproducibility():
    x = np.asarray(random.truncated_normal(random.key(3), -1.0, 2.0, (100000,)))
    assert x.min() >= -1.0 and x.max() <= 2.0
    pdf = lambda t: math.exp(-t * t / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda t: 0.5 * (1 + math.erf(t / math.sqrt(2)))  # noqa: E731
    mean = (pdf(-1) - pdf(2)) / (cdf(2) - cdf(-1))
    assert abs(x.mean() - mean) < 5 * 0.8 / math.sqrt(x.size)
    jitted = ft.jit(lambda k: random.truncated_normal(k, -2.0, 2.0, (5,)))(random.key(0))
    # same uniform bits; the compiled erf/exp may differ from numpy's in the last ulp
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(
        random.truncated_normal(random.key(0), -2., 2., (5,))), rtol=1e-13, atol=1e-15)


def test_normal_quantile_inverts_the_cdf():
    from functrans.random import truncated_normal
    # a draw between Phi(a) and Phi(b) for a == b - tiny must land at b
    x = np.asarray(truncated_normal(random.key(0), 1.5, 1.5 + 1e-9, (4,)))
    np.testing.assert_allclose(x, 1.5, atol=1e-8)


@pytest.mark.parametrize("name,scale,mode", [
    ("glorot_normal", 1.0, "fan_avg"), ("glorot_uniform", 1.0, "fan_avg"),
    ("lecun_normal", 1.0, "fan_in"), ("lecun_uniform", 1.0, "fan_in"),
    ("he_normal", 2.0, "fan_in"), ("he_uniform", 2.0, "fan_in"),
    ("xavier_normal", 1.0, "fan_avg"), ("kaiming_uniform", 2.0, "fan_in")])
def test_variance_scaling_family(name, scale, mode):
    shape = (3, 200, 300)          # receptive field 3
    w = np.asarray(getattr(nn.initializers, name)()(random.key(1), shape))
    assert w.shape == shape
    fan_in, fan_out = 200 * 3, 300 * 3
    fan = fan_in if mode == "fan_in" else (fan_in + fan_out) / 2
    np.testing.assert_allclose(w.var(), scale / fan, rtol=0.03)


def test_simple_initializers():
    k = random.key(0)
    init = nn.initializers
    assert np.asarray(init.zeros(k, (2, 3))).sum() == 0
    assert np.asarray(init.ones(k, (2,))).tolist() == [1.0, 1.0]
    assert np.asarray(init.constant(3.0)(k, (2,))).tolist() == [3.0, 3.0]
    u = np.asarray(init.uniform(0.5)(k, (1000,)))
    assert u.min() >= 0 and u.max() < 0.5
    np.testing.assert_allclose(np.asarray(init.normal(2.0)(k, (20000,))).std(), 2.0, rtol=0.03)
    t = np.asarray(init.truncated_normal(1.0)(k, (1000,)))
    assert np.abs(t).max() <= 2.0


def test_orthogonal_and_delta_orthogonal():
    for shape, axis in (((6, 4), -1), ((4, 6), -1), ((2, 3, 4), -1), ((5, 5), 0)):
        w = np.asarray(nn.initializers.orthogonal(2.0, column_axis=axis)(random.key(2), shape))
        m = np.moveaxis(w, axis, -1).reshape(-1, shape[axis]) / 2.0
        small = m.T @ m if m.shape[0] >= m.shape[1] else m @ m.T
        np.testing.assert_allclose(small, np.eye(small.shape[0]), atol=1e-12)
    w = np.asarray(nn.initializers.delta_orthogonal()(random.key(0), (3, 3, 2, 4)))
    centre = w[1, 1]
    np.testing.assert_allclose(centre @ centre.T, np.eye(2), atol=1e-12)
    assert np.abs(w).sum() == pytest.approx(np.abs(centre).sum())


def _derivs(f, x, n):
    out = []
    for _ in range(n):
        f = ft.grad(f)
        out.append(float(f(x)))
    return out


def test_kinks_nan_and_tails_as_jax():
    """Found by JAX's nn_test cases: relu/relu6 turned NaN into 0 (jax.nn gives NaN);
    softplus(-inf) and log_sigmoid(inf) were NaN (0 and -0); mish's softplus had
    derivative 0 at 0 (mish''(0) = 0.64, was 0); celu'(0) was 1/2 (both sides are 1);
    hard_sigmoid'(±3) was 1/12 (JAX's relu6 rule: 0), hard_silu'(±inf) NaN (0, 1);
    exact gelu lost its left tail to 1 + erf cancellation (gelu(-30) = -3.7e-197, was 0)."""
    nan, inf = float("nan"), float("inf")
    for f in (nn.relu, nn.relu6, nn.hard_sigmoid, nn.softplus, nn.celu, nn.mish):
        assert np.isnan(float(f(nan))) and np.isnan(float(ft.jit(f)(nan)))
    assert float(nn.softplus(-inf)) == 0.0 and float(nn.log_sigmoid(inf)) == 0.0
    np.testing.assert_allclose(_derivs(nn.softplus, 0.0, 4), [0.5, 0.25, 0.0, -0.125],
                               atol=1e-15)
    np.testing.assert_allclose(_derivs(nn.mish, 0.0, 4), [0.6, 0.64, -0.096, -1.1008],
                               atol=1e-12)
    assert [float(ft.grad(nn.softplus)(v)) for v in (inf, -inf)] == [1.0, 0.0]
    assert float(ft.grad(nn.celu)(0.0)) == 1.0 and float(ft.grad(nn.celu)(-0.0)) == 1.0
    assert [float(ft.grad(nn.hard_sigmoid)(v)) for v in (-3.0, 3.0)] == [0.0, 0.0]
    assert [float(ft.grad(nn.hard_silu)(v)) for v in (-inf, -3.0, 3.0, inf)] == \
        [0.0, 0.0, 1.0, 1.0]
    assert [float(ft.grad(nn.relu6)(v)) for v in (0.0, 6.0)] == [0.0, 0.0]
    x = np.array([-30.0, -10.0, -1.0, 2.0])
    want = x * 0.5 * np.array([math.erfc(-v / math.sqrt(2)) for v in x])
    for g in (nn.gelu(x, approximate=False), ft.jit(lambda v: nn.gelu(v, False))(x)):
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-13)


def test_attention_padded_queries_output_zero():
    """JAX's padding: query positions past query_seq_lengths output 0 (they gave the
    uniform average of the values), eagerly, jitted and in the gradient."""
    r = np.random.RandomState(0)
    q, k, v = r.randn(2, 5, 2, 3), r.randn(2, 7, 2, 3), r.randn(2, 7, 2, 3)
    lens = np.array([3, 5], np.int32)
    f = lambda q, k, v: nn.dot_product_attention(q, k, v, query_seq_lengths=lens)
    full = np.asarray(nn.dot_product_attention(q, k, v))
    for out in (f(q, k, v), ft.jit(f)(q, k, v)):
        out = np.asarray(out)
        assert np.all(out[0, 3:] == 0)
        np.testing.assert_allclose(out[0, :3], full[0, :3], rtol=1e-13)
        np.testing.assert_allclose(out[1], full[1], rtol=1e-13)
    dv = ft.grad(lambda v: fnp.sum(f(q, k, v)))(v)
    dv_ref = ft.grad(lambda v: fnp.sum(nn.dot_product_attention(q[:, :3], k, v)[0]) +
                     fnp.sum(nn.dot_product_attention(q, k, v)[1]))(v)
    np.testing.assert_allclose(np.asarray(dv), np.asarray(dv_ref), rtol=1e-12)


def test_initializer_shapes_from_jax_nn_test():
    """delta_orthogonal puts the matrix at JAX's centre (k - 1) // 2 (an even kernel
    size took k // 2: zeros where JAX has the matrix); variance_scaling with explicit
    in/out axes works at rank 0 and 1 (fan 1 for an empty axis list); orthogonal of a
    shape with a zero dimension is empty (ZeroDivisionError)."""
    from functrans.nn import initializers as I
    key = random.PRNGKey(0)
    w = np.asarray(I.delta_orthogonal()(key, (2, 3, 4, 5)))
    assert np.count_nonzero(w) == np.count_nonzero(w[0, 1]) == 20
    np.testing.assert_allclose(w[0, 1] @ w[0, 1].T, np.eye(4), atol=1e-12)
    vs = I.variance_scaling(1.0, "fan_in", "normal", in_axis=[], out_axis=[])
    assert vs(key, (), "float32").shape == () and vs(key, (2,)).shape == (2,)
    assert I.variance_scaling(1.0, "fan_in", "normal", in_axis=[0], out_axis=[])(
        key, (3,)).shape == (3,)
    with pytest.raises(ValueError, match="explicit in_axis"):
        I.variance_scaling(1.0, "fan_avg", "truncated_normal")(key, (5,))
    for shape in [(0, 0), (3, 0), (0, 2)]:
        z = I.orthogonal()(key, shape, "float32")
        assert z.shape == shape and z.dtype == np.float32
