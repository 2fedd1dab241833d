"""What the parallel-training examples share: the model (an MLP), its data, Adam, the
single-process reference run, and the check that a strategy's losses equal it.

Every example trains the same model for ``STEPS`` Adam steps in float64 and checks that
its loss after each step equals the single-process run's to 1e-10. Run one with
``mpiexec -n 2 python examples/parallel/<strategy>.py`` (from the repository root).
"""
import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans.tree_util import tree_map

STEPS, LR = 5, 1e-2
D, H, O, B = 8, 16, 4, 32          # input, hidden, output widths; global batch


def init_params(seed=0):
    r = np.random.default_rng(seed)
    return {"w1": r.normal(size=(D, H)) / np.sqrt(D), "b1": np.zeros(H),
            "w2": r.normal(size=(H, O)) / np.sqrt(H)}


def data(seed=1):
    r = np.random.default_rng(seed)
    x = r.normal(size=(B, D))
    return x, np.sin(x[:, :O]) + 0.1 * r.normal(size=(B, O))


def mlp(p, x):
    # the hidden activation is named: ZeRO-3's checkpoint saves it and re-gathers the rest
    return ft.checkpoint_name(fnp.tanh(x @ p["w1"] + p["b1"]), "hidden") @ p["w2"]


def loss_fn(p, x, y):
    """Mean squared error over the batch given (the local batch, on one process)."""
    return fnp.mean((mlp(p, x) - y) ** 2)


def adam_init(p):
    return {"m": tree_map(fnp.zeros_like, p), "v": tree_map(fnp.zeros_like, p), "t": 0}


def adam_update(p, g, state, b1=0.9, b2=0.999, eps=1e-8):
    """One Adam step on any pytree (full parameters, or this process's shard of them)."""
    t = state["t"] + 1
    m = tree_map(lambda m, g: b1 * m + (1 - b1) * g, state["m"], g)
    v = tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, state["v"], g)
    p = tree_map(lambda p, m, v: p - LR * (m / (1 - b1 ** t)) / (fnp.sqrt(v / (1 - b2 ** t))
                                                                 + eps), p, m, v)
    return p, {"m": m, "v": v, "t": t}


def reference_losses(params, x, y):
    """The single-process run: the loss before each of the STEPS updates."""
    state, losses = adam_init(params), []
    step = ft.jit(ft.value_and_grad(loss_fn))
    for _ in range(STEPS):
        loss, g = step(params, x, y)
        params, state = adam_update(params, g, state)
        losses.append(float(loss))
    return np.array(losses)


def check(name, losses, params, x, y, extra=""):
    """Compare with the single-process run; rank 0 reports."""
    want = reference_losses(params, x, y)
    losses = np.asarray(losses, dtype=np.float64)
    err = float(np.max(np.abs(losses - want)))
    if ft.process_index() == 0:
        print(f"{name} on {ft.process_count()} processes: losses {np.round(losses, 6).tolist()}")
        print(f"single process:           losses {np.round(want, 6).tolist()}")
        print(f"max difference {err:.2e}{extra}")
    if not err <= 1e-10:
        raise AssertionError(f"{name}: losses differ from the single-process run by {err:.3e}")
