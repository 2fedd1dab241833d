"""Per-example gradients of logistic regression (batch 256, d=100), no jit:
``vmap(grad(loss))`` against a Python loop of ``grad(loss)`` over the examples
(target: the loop at least 20× slower than vmap), and, when installed, JAX's
``vmap(grad)`` without jit for reference."""
from __future__ import annotations

import numpy as np

from .harness import Workload

BATCH, DIM = 256, 100


def _data():
    rng = np.random.default_rng(0)
    w = rng.standard_normal(DIM) * 0.1
    x = rng.standard_normal((BATCH, DIM))
    y = np.where(rng.standard_normal(BATCH) > 0, 1.0, -1.0)
    return w, x, y


def _loss(fnp):
    def loss(w, x, y):
        # log(1 + exp(-y <w, x>)), the logistic loss of one example
        return fnp.log(1.0 + fnp.exp(-y * fnp.sum(w * x)))
    return loss


def _per_example_setup():
    import functrans as ft
    import functrans.numpy as fnp
    w, x, y = _data()
    g = ft.grad(_loss(fnp))
    per_example = ft.vmap(g, in_axes=(None, 0, 0))

    def loop():
        return [g(w, x[i], y[i]) for i in range(BATCH)]

    c = {"loop of grad": loop, "vmap(grad)": lambda: per_example(w, x, y)}
    try:
        import jax
        import jax.numpy as jnp
        jg = jax.vmap(jax.grad(_loss(jnp)), in_axes=(None, 0, 0))
        jw, jx, jy = jnp.asarray(w), jnp.asarray(x), jnp.asarray(y)
        c["jax vmap(grad), no jit"] = lambda: jax.block_until_ready(jg(jw, jx, jy))
    except Exception:
        pass
    return c


def _check(ratios):
    return ratios["vmap(grad)"] <= 1 / 20


WORKLOADS = [
    Workload("per-example grads, logistic regression, 256 × 100", _per_example_setup,
             baseline="loop of grad", target="vmap(grad) ≤ loop / 20", check=_check,
             group="vmap"),
]
