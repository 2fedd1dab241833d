"""Tensor parallelism of a transformer block (Megatron): the attention heads are split over
the "model" axis (the query/key/value projections by columns, whole heads per process;
the output projection by rows), and so is the MLP (first layer by columns, second by
rows). Each of the two sub-blocks ends in one all-reduce (``psum``) in the forward pass.
With ``--dp`` on 4 processes the batch is also split over "data" (2 x 2 mesh).

    mpiexec -n 2 python examples/parallel/transformer_tp.py
    mpiexec -n 4 python examples/parallel/transformer_tp.py --dp
"""
import sys

import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.sharding import Mesh, P

from common import STEPS, adam_init, adam_update

ft.distributed.initialize()
n = ft.process_count()
dp = "--dp" in sys.argv
mesh = Mesh((2, n // 2), ("data", "model")) if dp else Mesh((n,), ("model",))
Bt, T, D, HEADS, DH, F = 8, 4, 8, 4, 2, 16
r = np.random.default_rng(0)
params0 = {k: r.normal(size=s) / np.sqrt(s[0]) for k, s in (
    ("wq", (D, HEADS * DH)), ("wk", (D, HEADS * DH)), ("wv", (D, HEADS * DH)),
    ("wo", (HEADS * DH, D)), ("w1", (D, F)), ("w2", (F, D)))}
x, y = r.normal(size=(Bt, T, D)), r.normal(size=(Bt, T, D))


def attention(p, x, reduce):
    """Multi-head self-attention over the heads whose columns ``p`` holds."""
    heads = p["wq"].shape[1] // DH

    def split(w):
        return fnp.transpose(fnp.reshape(x @ w, (x.shape[0], T, heads, DH)), (0, 2, 1, 3))

    q, k, v = split(p["wq"]), split(p["wk"]), split(p["wv"])
    s = fnp.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(DH)
    e = fnp.exp(s - fnp.max(s, axis=-1, keepdims=True))
    a = fnp.einsum("bhqk,bhkd->bhqd", e / fnp.sum(e, axis=-1, keepdims=True), v)
    a = fnp.reshape(fnp.transpose(a, (0, 2, 1, 3)), (x.shape[0], T, heads * DH))
    return reduce(a @ p["wo"])                     # partial sums over the heads: all-reduce


def block(p, x, reduce):
    h = x + attention(p, x, reduce)
    return h + reduce(fnp.tanh(h @ p["w1"]) @ p["w2"])


def loss_single(p, x, y):
    return fnp.mean((block(p, x, lambda t: t) - y) ** 2)


def loss_tp(p, x, y):
    loss = fnp.mean((block(p, x, lambda t: lax.psum(t, "model")) - y) ** 2)
    return lax.pmean(loss, "data") if dp else loss


cols, rows = P(None, "model"), P("model", None)
specs = {"wq": cols, "wk": cols, "wv": cols, "wo": rows, "w1": cols, "w2": rows}
batch = P("data") if dp else P()
sharded = ft.jit(ft.value_and_grad(ft.shard_map(loss_tp, mesh, in_specs=(specs, batch, batch),
                                                out_specs=P())))
single = ft.jit(ft.value_and_grad(loss_single))


def train(step):
    p, state, losses = params0, adam_init(params0), []
    for _ in range(STEPS):
        loss, g = step(p, x, y)
        p, state = adam_update(p, g, state)
        losses.append(float(loss))
    return np.array(losses)


got, want = train(sharded), train(single)
err = float(np.max(np.abs(got - want)))
if ft.process_index() == 0:
    print(f"transformer block, {'DP x ' if dp else ''}TP on {n} processes: "
          f"losses {np.round(got, 6).tolist()}")
    print(f"single process: losses {np.round(want, 6).tolist()}")
    print(f"max difference {err:.2e}")
assert err <= 1e-10, f"transformer TP losses differ from one process by {err:.3e}"
