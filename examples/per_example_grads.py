"""Per-example gradients with ``vmap(grad(loss))``, as differentially private SGD needs.

``grad`` gives the gradient of the *mean* loss; ``vmap(grad(loss_one))`` gives one
gradient per example in a single vectorised computation, with no Python loop over
the batch. Here they are clipped to norm 1 and averaged (the DP-SGD update).

Run:  python examples/per_example_grads.py
Look at: the per-example gradient matrix's shape, that it matches a Python loop,
that its mean is the ordinary gradient, and the time of vmap against the loop.
"""
import time

import numpy as np

import functrans as ft
import functrans.numpy as fnp

rng = np.random.default_rng(0)
B, D = 256, 20
X = rng.standard_normal((B, D))
w_true = rng.standard_normal(D)
y = (X @ w_true + 0.5 * rng.standard_normal(B) > 0).astype(np.float64)
w = np.zeros(D)


def loss_one(w, x, y):
    """Logistic loss of one example."""
    z = fnp.dot(x, w)
    return ft.nn.softplus(z) - y * z


def loss(w, X, y):
    return fnp.mean(ft.vmap(loss_one, in_axes=(None, 0, 0))(w, X, y))


per_example = ft.jit(ft.vmap(ft.grad(loss_one), in_axes=(None, 0, 0)))
G = np.asarray(per_example(w, X, y))
print("per-example gradients:", G.shape, "(one row per example)")

loop = np.stack([np.asarray(ft.grad(loss_one)(w, X[i], y[i])) for i in range(B)])
assert np.allclose(G, loop), "vmap(grad) must equal the loop"
assert np.allclose(G.mean(0), ft.grad(loss)(w, X, y)), "their mean is the full gradient"
print("matches a Python loop over examples, and their mean is grad(mean loss): OK")

t0 = time.perf_counter()
for _ in range(10):
    per_example(w, X, y)
t_vmap = (time.perf_counter() - t0) / 10
t0 = time.perf_counter()
for i in range(B):
    ft.grad(loss_one)(w, X[i], y[i])
t_loop = time.perf_counter() - t0
print(f"time for {B} gradients: vmap {t_vmap * 1e3:.2f} ms, Python loop {t_loop * 1e3:.1f} ms "
      f"({t_loop / t_vmap:.0f}x)")


@ft.jit
def dp_step(w, X, y, lr=0.5, clip=1.0):
    g = ft.vmap(ft.grad(loss_one), in_axes=(None, 0, 0))(w, X, y)
    norms = fnp.sqrt(fnp.sum(g * g, axis=1, keepdims=True))
    g = g / fnp.maximum(1.0, norms / clip)          # clip each example's gradient
    return w - lr * fnp.mean(g, axis=0), norms[:, 0]


for step in range(30):
    w, norms = dp_step(w, X, y)
    if step % 10 == 0 or step == 29:
        acc = float(fnp.mean((X @ w > 0) == (y > 0.5)))
        print(f"step {step:2d}: loss {float(loss(w, X, y)):.4f}, accuracy {acc:.3f}, "
              f"largest per-example gradient norm {float(fnp.max(norms)):.3f}")
