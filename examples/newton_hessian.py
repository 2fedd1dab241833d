"""Newton's method with ``ft.hessian`` on the extended Rosenbrock function.

Each Newton step solves ``H(x) dx = -g(x)``: the gradient from ``grad`` (reverse
mode), the Hessian from ``hessian`` (forward over reverse: ``jacfwd(jacrev(f))``).
Both are compiled with ``jit`` once and reused every iteration.

Run:  python examples/newton_hessian.py
Look at: Newton's quadratic convergence (the gradient norm roughly squares each step
near the solution) against plain gradient descent's slow crawl along the valley.
"""
import numpy as np

import functrans as ft
import functrans.numpy as fnp

N = 6


def rosenbrock(x):
    """The extended Rosenbrock function: sum over pairs (x[2i], x[2i+1]) of
    100 (x[2i+1] - x[2i]^2)^2 + (1 - x[2i])^2; one minimum, 0 at x = (1, ..., 1)."""
    odd, even = x[0::2], x[1::2]
    return fnp.sum(100.0 * (even - odd ** 2) ** 2 + (1.0 - odd) ** 2)


f = ft.jit(rosenbrock)
grad = ft.jit(ft.grad(rosenbrock))
hess = ft.jit(ft.hessian(rosenbrock))

x0 = np.full(N, -1.2)
x0[1::2] = 1.0

print(f"Newton's method on the {N}-dimensional Rosenbrock function")
print(f"{'iter':>4}  {'f(x)':>12}  {'|grad|':>10}  step length")
x = x0.copy()
for it in range(100):
    g = np.asarray(grad(x))
    gn = np.linalg.norm(g)
    if gn < 1e-10:
        break
    H = np.asarray(hess(x))
    # far from the minimum H may be indefinite: add lam * I until the step goes downhill
    lam = 0.0
    while True:
        dx = np.asarray(fnp.linalg.solve(H + lam * np.eye(N), -g))
        if g @ dx < 0:
            break
        lam = max(1e-3, 10 * lam)
    # backtracking line search keeps the step safe
    t, fx = 1.0, float(f(x))
    while float(f(x + t * dx)) > fx + 1e-4 * t * (g @ dx) and t > 1e-10:
        t *= 0.5
    x = x + t * dx
    print(f"{it:4d}  {float(f(x)):12.4e}  {gn:10.3e}  {t:.3g}" + (f"  (damped, lam={lam:g})"
                                                                  if lam else ""))
print(f"Newton: converged to {np.round(x, 6)} in {it} iterations")
assert np.allclose(x, 1.0, atol=1e-6)

# the same start with gradient descent, for contrast
y = x0.copy()
for k in range(2000):
    y = y - 1e-3 * np.asarray(grad(y))
print(f"gradient descent after 2000 steps: f = {float(f(y)):.3e}, "
      f"distance to the minimum {np.linalg.norm(y - 1.0):.3f}")
print("the Hessian at the minimum (symmetric, positive definite, 2x2 blocks: the pairs "
      "do not interact):")
print(np.round(np.asarray(hess(np.ones(N))), 1))
