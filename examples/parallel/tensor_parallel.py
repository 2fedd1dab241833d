"""Tensor parallelism (Megatron-style) of the MLP: the first layer's columns and the second
layer's rows are split over the processes, so each computes its slice of the hidden units
and a partial output; one all-reduce (``psum``) per block forward sums the partials. With
``--dp`` on 4 processes: a 2 x 2 mesh, data parallel over "data" and tensor parallel over
"model" (DP x TP).

The gradient is taken of the sharded loss as a whole (``grad(shard_map(...))``): gradients
of split parameters come back split, and of replicated ones summed over their copies.

    mpiexec -n 2 python examples/parallel/tensor_parallel.py
    mpiexec -n 4 python examples/parallel/tensor_parallel.py --dp
"""
import sys

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.sharding import Mesh, P

from common import STEPS, adam_init, adam_update, check, data, init_params

ft.distributed.initialize()
n = ft.process_count()
dp = "--dp" in sys.argv
mesh = Mesh((2, n // 2), ("data", "model")) if dp else Mesh((n,), ("model",))
batch_axis = "data" if dp else None


def tp_loss(p, x, y):
    h = fnp.tanh(x @ p["w1"] + p["b1"])           # this process's hidden units
    out = lax.psum(h @ p["w2"], "model")           # the block's one all-reduce
    loss = fnp.mean((out - y) ** 2)
    return lax.pmean(loss, "data") if dp else loss


param_specs = {"w1": P(None, "model"), "b1": P("model"), "w2": P("model", None)}
loss_and_grad = ft.jit(ft.value_and_grad(ft.shard_map(
    tp_loss, mesh, in_specs=(param_specs, P(batch_axis), P(batch_axis)), out_specs=P())))

params0, (x, y) = init_params(), data()
params, state, losses = params0, adam_init(params0), []
for _ in range(STEPS):
    loss, g = loss_and_grad(params, x, y)
    params, state = adam_update(params, g, state)
    losses.append(float(loss))
check("DP x TP" if dp else "tensor parallel", losses, params0, x, y)
