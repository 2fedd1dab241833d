"""functrans in one minute: grad, vmap, jit and the IR they all work on.

Run:  python examples/quickstart.py
"""
import numpy as np

import functrans as ft
import functrans.numpy as fnp


def loss(w, x, y):
    """Squared error of a tiny linear model with a tanh."""
    pred = fnp.tanh(x @ w)
    return fnp.mean((pred - y) ** 2)


rng = np.random.default_rng(0)
w = rng.standard_normal(3)
x = rng.standard_normal((8, 3))
y = rng.standard_normal(8)

print("loss:", float(loss(w, x, y)))

# grad: the derivative of a scalar function, as a new function
g = ft.grad(loss)(w, x, y)
print("grad w.r.t. w:", np.round(np.asarray(g), 4))

# vmap: per-example gradients, no Python loop
per_example = ft.vmap(ft.grad(loss), in_axes=(None, 0, 0))(w, x[:, None, :], y[:, None])
print("per-example gradients:", per_example.shape)
assert np.allclose(per_example.mean(0), g)

# jit: stage the whole computation once, then call the compiled version
fast_grad = ft.jit(ft.grad(loss))
assert np.allclose(fast_grad(w, x, y), g)

# make_jaxpr: the typed IR every transform rewrites
print("the jaxpr of grad(loss):")
print(ft.make_jaxpr(ft.grad(loss))(w, x, y))
