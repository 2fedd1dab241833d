"""How much memory reverse mode keeps, and how ``checkpoint`` trades it for compute.

Reverse mode saves *residuals* from the forward pass (the activations the backward
pass reads). ``ft.residuals`` reports them. Wrapping each block in ``ft.checkpoint``
saves only the block inputs and recomputes the rest during the backward pass.

Run:  python examples/remat_memory.py
Look at: the residual bytes with and without checkpoint, and that the gradients agree.
"""
import time

import numpy as np

import functrans as ft
import functrans.numpy as fnp

DEPTH, WIDTH, BATCH = 12, 128, 64


def block(w, h):
    """One residual MLP block: three elementwise nonlinearities after a matmul, each
    of which saves an activation for the backward pass."""
    z = h @ w
    return h + fnp.tanh(z) * fnp.exp(-0.5 * z * z) * 0.5


def make_loss(remat):
    blk = ft.checkpoint(block) if remat else block

    def loss(ws, x):
        h = x
        for w in ws:
            h = blk(w, h)
        return fnp.mean(h * h)
    return loss


rng = np.random.default_rng(0)
ws = [rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH) for _ in range(DEPTH)]
x = rng.standard_normal((BATCH, WIDTH))

print(f"{DEPTH} blocks of width {WIDTH}, batch {BATCH}; one activation is "
      f"{BATCH * WIDTH * 8 / 1024:.0f} KiB\n")
results = {}
for remat in (False, True):
    loss = make_loss(remat)
    rep = ft.residuals(loss, ws, x, argnums=0)
    t0 = time.perf_counter()
    g = ft.grad(loss)(ws, x)
    dt = time.perf_counter() - t0
    results[remat] = (rep, g)
    label = "with checkpoint   " if remat else "without checkpoint"
    print(f"{label}: {rep.count:4d} residuals, {rep.intermediate_bytes / 2**20:6.2f} MiB of "
          f"intermediates saved for the backward pass   (grad took {dt * 1e3:.0f} ms)")

plain, ckpt = results[False][0], results[True][0]
print(f"\ncheckpoint saves {plain.intermediate_bytes / max(ckpt.intermediate_bytes, 1):.1f}x "
      "less memory; the price is recomputing each block's forward pass once more")
for a, b in zip(results[False][1], results[True][1]):
    assert np.allclose(a, b), "checkpoint must not change the gradient"
print("gradients with and without checkpoint agree: OK")
