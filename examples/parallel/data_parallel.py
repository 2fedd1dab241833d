"""Data parallelism: every process holds all parameters and its slice of the batch; the
gradients are averaged with one all-reduce (``pmean``) per step, and every process applies
the same Adam update.

    mpiexec -n 2 python examples/parallel/data_parallel.py
"""
import functrans as ft
from functrans import lax
from functrans.sharding import Mesh, P
from functrans.tree_util import tree_map

from common import STEPS, adam_init, adam_update, check, data, init_params, loss_fn

ft.distributed.initialize()
mesh = Mesh((ft.process_count(),), ("data",))


def train(params, x, y):
    """STEPS steps on this process's batch slice; parameters stay replicated."""
    state, losses = adam_init(params), []
    for _ in range(STEPS):
        loss, g = ft.value_and_grad(loss_fn)(params, x, y)
        g = tree_map(lambda t: lax.pmean(t, "data"), g)       # the gradient all-reduce
        params, state = adam_update(params, g, state)
        losses.append(lax.pmean(loss, "data"))
    return losses


# check_rep=False (JAX's check_vma=False): each process's gradient is its own batch slice's,
# averaged by the pmean above; with the default typing (check_rep=True, as JAX 0.10's
# check_vma=True) a gradient of the replicated parameters taken inside the body is already
# the sum over "data", and the pmean would leave process_count() times the mean
run = ft.jit(ft.shard_map(train, mesh, in_specs=(P(), P("data"), P("data")), out_specs=P(),
                          check_rep=False))
params, (x, y) = init_params(), data()
check("data parallel", run(params, x, y), params, x, y)
