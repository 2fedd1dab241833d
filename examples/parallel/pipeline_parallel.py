"""Pipeline parallelism (GPipe): the model is a stack of equal layers, one per process
("stage"); the batch is cut into micro-batches that flow through the stages, activations
passed on with ``ppermute``. Stage 0 starts micro-batch t at tick t; after the last tick
the last stage has every micro-batch's output. At tick t only the stages holding a real
micro-batch (s <= t < s + M) send: each stage sends each micro-batch's activations once,
M messages, and none in the bubble. The gradient flows back through the
transposed ppermutes (``grad(shard_map(...))``). Idle slots (the bubble) make up
(stages - 1) / (micro-batches + stages - 1) of the ticks; printed.

This model (a stack of tanh layers, D -> D) differs from the MLP of the other examples, so
the reference is the same stack run on one process.

    mpiexec -n 2 python examples/parallel/pipeline_parallel.py
"""
import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.sharding import Mesh, P

from common import B, D, STEPS, adam_init, adam_update

ft.distributed.initialize()
S = ft.process_count()          # stages
M = 4                            # micro-batches
mesh = Mesh((S,), ("stage",))
r = np.random.default_rng(0)
params0 = {"w": r.normal(size=(S, D, D)) / np.sqrt(D), "b": 0.1 * r.normal(size=(S, D))}
x, y = r.normal(size=(B, D)), np.cos(r.normal(size=(B, D)))


def layer(w, b, h):
    return fnp.tanh(h @ w + b)


def reference_loss(p, x, y):
    h = x
    for s in range(S):
        h = layer(p["w"][s], p["b"][s], h)
    return fnp.mean((h - y) ** 2)


def pipeline_loss(p, x, y):
    """This stage's layer p (leading dim 1); x, y: the whole batch (replicated)."""
    w, b = p["w"][0], p["b"][0]
    me = lax.axis_index("stage")
    mbs, tgt = fnp.reshape(x, (M, B // M, D)), fnp.reshape(y, (M, B // M, D))
    carry = fnp.zeros((B // M, D))
    total = 0.0
    for t in range(M + S - 1):
        inp = fnp.where(me == 0, mbs[min(t, M - 1)], carry)
        out = layer(w, b, inp)
        k = t - (S - 1)                 # the micro-batch leaving the last stage now
        if k >= 0:
            err = fnp.mean((out - tgt[k]) ** 2)
            total = total + fnp.where(me == S - 1, err, 0.0)
        # the stages that hold micro-batch t - s now pass it on (none in the bubble)
        send = [(s, s + 1) for s in range(S - 1) if s <= t < s + M]
        if send:
            carry = lax.ppermute(out, "stage", send)
    return lax.psum(total, "stage") / M


loss_and_grad = ft.jit(ft.value_and_grad(ft.shard_map(
    pipeline_loss, mesh, in_specs=(P("stage"), P(), P()), out_specs=P())))
ref_loss_and_grad = ft.jit(ft.value_and_grad(reference_loss))


def train(step):
    p, state, losses = params0, adam_init(params0), []
    for _ in range(STEPS):
        loss, g = step(p, x, y)
        p, state = adam_update(p, g, state)
        losses.append(float(loss))
    return np.array(losses)


got, want = train(loss_and_grad), train(ref_loss_and_grad)
err = float(np.max(np.abs(got - want)))
if ft.process_index() == 0:
    print(f"pipeline parallel, {S} stages, {M} micro-batches: losses {np.round(got, 6).tolist()}")
    print(f"single process:                       losses {np.round(want, 6).tolist()}")
    print(f"max difference {err:.2e}; bubble fraction {(S - 1) / (M + S - 1):.2f}")
assert err <= 1e-10, f"pipeline losses differ from the single-process run by {err:.3e}"
