"""The profiler's one cost model (functrans.cost) against hand counts: bytes each
operation / kernel reads and writes, flops per primitive, transcendentals apart."""
from __future__ import annotations

import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import lax

F = 4   # bytes of a float32


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def test_mlp_bytes_and_flops_by_hand():
    B, D, H, O = 64, 32, 128, 16
    rng = np.random.default_rng(0)
    args = (_f32(rng, B, D), _f32(rng, D, H), _f32(rng, H), _f32(rng, H, O))

    def mlp(x, W1, b1, W2):
        return fnp.sum(fnp.matmul(lax.tanh(fnp.matmul(x, W1) + b1), W2))
    r = ft.profile(mlp, *args, repeats=1, show=False)
    e, c = r["eager"], r["compiled"]
    # eager: dot, add (the bias read at its own size: a broadcast is a view), tanh, dot, sum
    eager = ((B * D + D * H + B * H) + (B * H + H + B * H) + 2 * B * H
             + (B * H + H * O + B * O) + (B * O + 1)) * F
    assert e["bytes_moved"] == eager
    assert e["operations"] == 5
    assert e["flops"] == 2 * B * D * H + B * H + 2 * B * H * O + B * O
    assert e["transcendentals"] == B * H
    assert (c["flops"], c["transcendentals"]) == (e["flops"], e["transcendentals"])
    if c["backend"] == "cpu":
        # compiled: dot; one kernel add+tanh (h never leaves it twice); dot; sum
        compiled = ((B * D + D * H + B * H) + (B * H + H + B * H)
                    + (B * H + H * O + B * O) + (B * O + 1)) * F
        assert c["bytes_moved"] == compiled
        assert c["bytes_moved"] < e["bytes_moved"]


def test_softmax_counts_the_operations_it_runs():
    Bt, C = 256, 1000
    x = _f32(np.random.default_rng(1), Bt, C)
    r = ft.profile(ft.nn.softmax, x, repeats=1, show=False)
    e, c = r["eager"], r["compiled"]
    assert e["operations"] > 1          # not one op: max, sub, exp, sum, div, ...
    N, R = Bt * C * F, Bt * F
    # reduce_max, sub, exp, reduce_sum, div (JAX's softmax: no guard on an infinite max);
    # the max is read through stop_gradient and broadcasts, which move nothing
    assert e["bytes_moved"] == (N + R) + (2 * N + R) + 2 * N + (N + R) + (2 * N + R)
    assert e["flops"] == 4 * Bt * C and e["transcendentals"] == Bt * C
    if c["backend"] == "cpu":
        assert c["kernels"] == 1
        assert c["bytes_moved"] == 2 * N           # read x, write once (one row kernel)


def _block(x, Wq, Wk, Wv, Wo, W1, W2):
    q, k, v = fnp.matmul(x, Wq), fnp.matmul(x, Wk), fnp.matmul(x, Wv)
    s = fnp.einsum("bqd,bkd->bqk", q, k) / np.float32(np.sqrt(q.shape[-1]))
    a = fnp.exp(s - fnp.max(s, axis=-1, keepdims=True))
    a = a / fnp.sum(a, axis=-1, keepdims=True)
    x = x + fnp.matmul(fnp.einsum("bqk,bkd->bqd", a, v), Wo)
    return x + fnp.matmul(lax.tanh(fnp.matmul(x, W1)), W2)


def test_transformer_block_flops_and_bytes():
    b, t, d = 2, 16, 16
    rng = np.random.default_rng(2)
    args = (_f32(rng, b, t, d),) + tuple(_f32(rng, *s) for s in
                                         [(d, d)] * 4 + [(d, 4 * d), (4 * d, d)])
    r = ft.profile(_block, *args, repeats=1, show=False)
    e, c = r["eager"], r["compiled"]
    dots = 4 * 2 * b * t * d * d + 2 * (2 * b * t * t * d) + 2 * (2 * b * t * d * 4 * d)
    elementwise = 5 * b * t * t + 2 * b * t * d    # scale, max, sub, sum, div; two adds
    assert abs(e["flops"] - (dots + elementwise)) <= 0.05 * (dots + elementwise)
    assert e["transcendentals"] == b * t * t + b * t * 4 * d   # exp, tanh
    assert c["flops"] == e["flops"]
    # fusion removes temporaries: the compiled step moves fewer bytes
    assert c["bytes_moved"] < e["bytes_moved"]
    # every byte count is at least what the inputs and the output take
    least = sum(a.nbytes for a in args) + args[0].nbytes
    assert c["bytes_moved"] >= least


# ------------------------------------------- jit(f).lower(...).compile().cost_analysis()
# The same model on every backend: the llvm backend on its fusion plan, the interpreter
# on the optimised jaxpr.

import pytest   # noqa: E402

BACKENDS = ("cpu", "interpret")


def _cost(f, *args, backend):
    return ft.jit(f, backend=backend).lower(*args).compile().cost_analysis()


@pytest.mark.parametrize("backend", BACKENDS)
def test_cost_analysis_matmul_is_2mnk(backend):
    M, K, N = 16, 24, 8
    rng = np.random.default_rng(3)
    a, b = _f32(rng, M, K), _f32(rng, K, N)
    c = _cost(fnp.matmul, a, b, backend=backend)
    assert c["flops"] == 2 * M * N * K and c["transcendentals"] == 0
    assert c["bytes accessed"] == (M * K + K * N + M * N) * F
    assert c["kernels"] == 1 and "temp_bytes" in c


@pytest.mark.parametrize("backend", BACKENDS)
def test_cost_analysis_of_an_mlp_training_step_by_hand(backend):
    B, D, H, O = 8, 4, 16, 2
    rng = np.random.default_rng(4)
    params = [_f32(rng, D, H), _f32(rng, H), _f32(rng, H, O)]
    x = _f32(rng, B, D)

    def loss(p, x):
        W1, b1, W2 = p
        return fnp.sum(fnp.matmul(lax.tanh(fnp.matmul(x, W1) + b1), W2))

    def step(p, x):
        return [w - np.float32(0.1) * g for w, g in zip(p, ft.grad(loss)(p, x))]
    c = _cost(step, params, x, backend=backend)
    # products: x@W1; dW2 = h^T @ 1; dh = 1 @ W2^T; dW1 = x^T @ dz (the loss value is
    # dead, so its sum is gone)
    dots = 2 * B * D * H + 2 * B * H * O + 2 * B * H * O + 2 * B * D * H
    # add bias, tanh' = 1 - h*h (mul, sub), dz = dh * tanh' (mul), db1 (sum over B);
    # then w - 0.1*g (mul, sub) on every parameter
    elementwise = 5 * B * H + 2 * (D * H + H + H * O)
    assert c["flops"] == dots + elementwise
    assert c["transcendentals"] == B * H                # tanh
    assert c["flops"] > 100 * c["kernels"]             # not one flop per output element


@pytest.mark.parametrize("backend", BACKENDS)
def test_cost_analysis_softmax_by_hand(backend):
    Bt, C = 32, 100
    x = _f32(np.random.default_rng(5), Bt, C)
    c = _cost(ft.nn.softmax, x, backend=backend)
    # reduce_max, sub, reduce_sum, div over every element (JAX's softmax formula)
    assert c["flops"] == 4 * Bt * C and c["transcendentals"] == Bt * C
    if backend == "cpu":
        assert c["bytes accessed"] == 2 * Bt * C * F   # one row kernel: read x, write once


@pytest.mark.parametrize("backend", BACKENDS)
def test_cost_analysis_bytes_are_the_profilers_compiled_bytes(backend):
    B, D, H, O = 64, 32, 128, 16
    rng = np.random.default_rng(0)
    args = (_f32(rng, B, D), _f32(rng, D, H), _f32(rng, H), _f32(rng, H, O))

    def mlp(x, W1, b1, W2):
        return fnp.sum(fnp.matmul(lax.tanh(fnp.matmul(x, W1) + b1), W2))
    c = _cost(mlp, *args, backend=backend)
    p = ft.profile(mlp, *args, repeats=1, backend=backend, show=False)["compiled"]
    assert c["bytes accessed"] == p["bytes_moved"]
    assert (c["flops"], c["transcendentals"]) == (p["flops"], p["transcendentals"])
    if backend == "cpu":    # by hand: dot; add+tanh fused; dot; sum
        assert c["bytes accessed"] == ((B * D + D * H + B * H) + (B * H + H + B * H)
                                       + (B * H + H * O + B * O) + (B * O + 1)) * F


@pytest.mark.parametrize("backend", BACKENDS)
def test_cost_analysis_reads_a_broadcast_operand_at_its_own_size(backend):
    B, H = 64, 128
    rng = np.random.default_rng(6)
    x, b = _f32(rng, B, H), _f32(rng, H)
    c = _cost(lambda x, b: x + b, x, b, backend=backend)
    assert c["bytes accessed"] == (B * H + H + B * H) * F    # b read at H, not B*H
    assert c["flops"] == B * H



def test_transcendental_is_a_column_of_the_op_table():
    """Whether an elementwise primitive counts as a transcendental comes from its op-table
    row (approximated functions, plus sqrt/rsqrt), so a new row needs no list in the model:
    erfc, hypot and logaddexp count apart from flops; add, mul, floor do not."""
    x = np.linspace(0.1, 1.0, 7)
    c = ft.cost.flops(ft.make_jaxpr(lambda a: lax.erfc(a) + lax.floor(a) * a)(x))
    assert c == {"flops": 21.0, "transcendentals": 7.0}
    c = ft.cost.flops(ft.make_jaxpr(lambda a: fnp.logaddexp(a, a) + fnp.hypot(a, a))(x))
    assert c == {"flops": 7.0, "transcendentals": 14.0}
    c = ft.cost.flops(ft.make_jaxpr(lambda a: fnp.sqrt(a) * a)(x))
    assert c == {"flops": 7.0, "transcendentals": 7.0}
