"""ZeRO (DeepSpeed's Zero Redundancy Optimizer), stages 1, 2 and 3, over data parallelism.

The parameters are one flat vector split in equal shards, one per process.
- Stage 1 shards the optimizer state: a reduce-scatter (``psum_scatter``) of the gradient
  leaves each process the summed gradient of its shard, which it updates with its share of
  the Adam moments; the updated shards are all-gathered (``all_gather``). The ZeRO paper's
  volume: 2(N-1)/N of the parameters, as data parallelism's all-reduce.
- Stage 2 shards the gradients too. Its collectives are stage 1's; what differs is memory:
  DeepSpeed frees each gradient bucket once it is reduce-scattered, which in a traced
  program is the compiler's liveness (the full gradient is dead after the reduce-scatter).
- Stage 3 shards the parameters: the forward pass all-gathers them when needed, and the
  gradient of the shard comes back reduce-scattered, the transpose of that all-gather. As
  DeepSpeed does, the gathered parameters are not kept for the backward pass: the loss is a
  ``checkpoint`` that saves the (named) activations only, so the backward pass gathers the
  parameters again: 3(N-1)/N of the parameters per step, 1.5x data parallelism.

    mpiexec -n 2 python examples/parallel/zero.py 3
"""
import sys

import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.sharding import Mesh, P

from common import STEPS, adam_init, adam_update, check, data, init_params, loss_fn

ft.distributed.initialize()
n = ft.process_count()
mesh = Mesh((n,), ("data",))
stage = int(sys.argv[1]) if len(sys.argv) > 1 else 3
params0, (x, y) = init_params(), data()
names = sorted(params0)
shapes = [params0[k].shape for k in names]
sizes = [int(np.prod(s)) for s in shapes]
total = sum(sizes)
padded = -(-total // n) * n
# stage 3's checkpoint saves the MLP's named activation; the parameters are gathered again
KEEP_ACTIVATIONS = ft.checkpoint_policies.save_only_these_names("hidden")


def flatten(p):
    flat = fnp.concatenate([fnp.reshape(p[k], (-1,)) for k in names])
    return fnp.concatenate([flat, fnp.zeros(padded - total)])


def unflatten(flat):
    out, at = {}, 0
    for k, s, m in zip(names, shapes, sizes):
        out[k] = fnp.reshape(flat[at:at + m], s)
        at += m
    return out


def own_shard(flat):
    """This process's shard of a replicated flat vector."""
    rows = fnp.reshape(flat, (n, padded // n))
    onehot = fnp.arange(n) == lax.axis_index("data")
    return fnp.sum(fnp.where(onehot[:, None], rows, 0.0), axis=0)


def train(p_in, x, y):
    """p_in: the full flat parameters (stages 1, 2) or this process's shard (stage 3)."""
    shard = p_in if stage == 3 else own_shard(p_in)
    state, losses = adam_init(shard), []
    full = p_in
    for _ in range(STEPS):
        if stage == 3:
            @ft.checkpoint(policy=KEEP_ACTIVATIONS)
            def local_loss(s):
                return loss_fn(unflatten(lax.all_gather(s, "data", tiled=True)), x, y)
            # all_gather transposes to psum_scatter: the summed gradient of the shard
            loss, g = ft.value_and_grad(local_loss)(shard)
            g = g / n
        else:
            loss, g_full = ft.value_and_grad(lambda f: loss_fn(unflatten(f), x, y))(full)
            g = lax.psum_scatter(g_full, "data", tiled=True) / n          # reduce-scatter
        shard, state = adam_update(shard, g, state)
        if stage != 3:
            full = lax.all_gather(shard, "data", tiled=True)
        losses.append(lax.pmean(loss, "data"))
    return losses


p_spec = P("data") if stage == 3 else P()
# check_rep=False (JAX's check_vma=False): the gradients taken in the body are each
# process's own, reduced explicitly above (data_parallel.py says why)
run = ft.jit(ft.shard_map(train, mesh, in_specs=(p_spec, P("data"), P("data")),
                          out_specs=P(), check_rep=False))
check(f"ZeRO-{stage}", run(np.asarray(flatten(params0)), x, y), params0, x, y)
