"""checkpoint under jit (issue 16): a 32-layer tanh MLP (width 512, batch 256, float32),
one jitted gradient step, every layer checkpointed or none.

Targets: the checkpointed step's time at most 1.4x; ``everything_saveable`` equal to
no checkpoint within 1% (temporaries and time); peak temporaries
(``cost_analysis()["temp_bytes"]``, the workspace: arguments and outputs not counted, as
XLA's ``memory_analysis().temp_size_in_bytes``) at most JAX's (issue 15). A tanh layer's
backward needs only its output (1 - t*t is recomputed from it, and the saved outputs
live in the weight gradients' buffers until those are written), so checkpointing has
nothing to drop on this model, in XLA too; the temporaries that checkpointing saves are
checked on a sin MLP (tests/test_remat_jit.py). ``python -m benchmarks.remat`` prints
the temporaries (and JAX's on the same model when jax is installed); times live here,
not in a test.
"""
from __future__ import annotations

import numpy as np

from .harness import Workload

DEPTH, WIDTH, BATCH = 32, 512, 256


def _model():
    rng = np.random.default_rng(0)
    # divided before the cast: float32 / np.sqrt's float64 scalar is float64 (NEP 50)
    params = [((rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32),
               np.zeros(WIDTH, np.float32)) for _ in range(DEPTH)]
    return params, rng.standard_normal((BATCH, WIDTH)).astype(np.float32)


def _steps():
    """{label: (jitted grad, compiled)} for no checkpoint, checkpoint, everything_saveable."""
    import functrans as ft
    import functrans.numpy as fnp
    from functrans import lax
    params, x = _model()

    def layer(h, p):
        return lax.tanh(fnp.matmul(h, p[0]) + p[1])

    def loss_with(wrap):
        def loss(ps, x):
            h = x
            for p in ps:
                h = wrap(layer)(h, p)
            return fnp.sum(h * h)
        return loss
    variants = {"no checkpoint": lambda f: f,
                "checkpoint": ft.checkpoint,
                "everything_saveable": lambda f: ft.checkpoint(
                    f, policy=ft.checkpoint_policies.everything_saveable)}
    out = {}
    for label, wrap in variants.items():
        jf = ft.jit(ft.grad(loss_with(wrap)))
        out[label] = (jf, jf.lower(params, x).compile())
    return out, params, x


def _time_setup():
    steps, params, x = _steps()
    return {label: (lambda c=c: c(params, x)) for label, (_, c) in steps.items()}


def _jax_temp_bytes():
    """JAX's temporaries on the same model (None without jax)."""
    try:
        import jax
        import jax.numpy as jnp
    except Exception:
        return None
    params, x = _model()

    def loss_with(wrap):
        def loss(ps, x):
            h = x
            for W, b in ps:
                h = wrap(lambda h, W, b: jnp.tanh(h @ W + b))(h, W, b)
            return jnp.sum(h * h)
        return loss
    res = {}
    for label, wrap in (("no checkpoint", lambda f: f), ("checkpoint", jax.checkpoint)):
        c = jax.jit(jax.grad(loss_with(wrap))).lower(params, x).compile()
        res[label] = c.memory_analysis().temp_size_in_bytes
    return res


def memory_report() -> str:
    steps, _, _ = _steps()
    temps = {k: c.cost_analysis()["temp_bytes"] for k, (_, c) in steps.items()}
    base = temps["no checkpoint"]
    lines = [f"{DEPTH}-layer MLP, width {WIDTH}, batch {BATCH}, f32: jitted grad step",
             f"{'variant':<22} {'temp MiB':>9} {'ratio':>6}"]
    lines += [f"{k:<22} {v / 2**20:>9.1f} {v / base:>6.3f}" for k, v in temps.items()]
    jax_temps = _jax_temp_bytes()
    if jax_temps:
        jb = jax_temps["no checkpoint"]
        lines += [f"{'jax ' + k:<22} {v / 2**20:>9.1f} {v / jb:>6.3f}" for k, v in jax_temps.items()]
    return "\n".join(lines)


WORKLOADS = [
    Workload(f"jitted grad step, {DEPTH}-layer MLP {WIDTH}x{BATCH} f32, checkpoint per layer",
             _time_setup, baseline="no checkpoint",
             target="checkpoint ≤ 1.4x; everything_saveable ≤ 1.01x (temp bytes: "
                    "python -m benchmarks.remat)",
             check=lambda r: r["checkpoint"] <= 1.4 and r["everything_saveable"] <= 1.01,
             group="remat"),
]


if __name__ == "__main__":
    print(memory_report())
