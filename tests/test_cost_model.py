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
    # reduce_max, is_finite (bool out), select_n, sub, exp, reduce_sum, div; the max is
    # read through stop_gradient and broadcasts, which move nothing
    assert e["bytes_moved"] == (N + R) + (R + Bt) + (Bt + 3 * R) + (2 * N + R) + 2 * N \
        + (N + R) + (2 * N + R)
    assert e["flops"] == 4 * Bt * C + Bt and e["transcendentals"] == Bt * C
    if c["backend"] == "cpu":
        assert c["kernels"] == 1
        assert c["bytes_moved"] == 2 * N + R       # read x (and the -inf row), write once


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
