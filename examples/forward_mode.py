"""Jacobians of a PDE residual: forward mode (``jacfwd``) against reverse mode (``jacrev``).

The residual of a steady reaction-diffusion equation on a grid of N points,
    R(u; theta)_i = D (u[i-1] - 2 u[i] + u[i+1]) / h^2 + r u_i (1 - u_i / K) - s,
with theta = (D, r, K, s). Newton solvers need dR/du (N x N); sensitivity analysis
and parameter fitting need dR/dtheta (N x 4).

Forward mode computes one Jacobian *column* per pass (one pass per input), reverse
mode one *row* per pass (one per output); both batch their passes with vmap. So
for dR/dtheta (4 inputs, N outputs) jacfwd does 4 passes and jacrev N: forward mode
is the right tool for tall Jacobians, reverse mode (grad) for wide ones.

Run:  python examples/forward_mode.py
Look at: the two methods agree; the timing of each on the tall Jacobian; the
tridiagonal structure of dR/du.
"""
import time

import numpy as np

import functrans as ft
import functrans.numpy as fnp

N = 400
h = 1.0 / (N + 1)


def residual(u, theta):
    D, r, K, s = theta[0], theta[1], theta[2], theta[3]
    padded = fnp.concatenate([fnp.zeros(1), u, fnp.zeros(1)])     # u = 0 on the boundary
    lap = (padded[:-2] - 2.0 * u + padded[2:]) / (h * h)
    return D * lap + r * u * (1.0 - u / K) - s


u = np.sin(np.pi * np.linspace(h, 1 - h, N))
theta = np.array([0.1, 2.0, 1.5, 0.3])


def timed(fn, *args, repeats=5):
    fn(*args)                                   # compile
    t0 = time.perf_counter()
    for _ in range(repeats):
        out = fn(*args)
    return np.asarray(out), (time.perf_counter() - t0) / repeats


# tall: N outputs, 4 inputs
fwd, t_fwd = timed(ft.jit(ft.jacfwd(residual, argnums=1)), u, theta)
rev, t_rev = timed(ft.jit(ft.jacrev(residual, argnums=1)), u, theta)
assert fwd.shape == (N, 4) and np.allclose(fwd, rev)
print(f"dR/dtheta is {fwd.shape[0]} x {fwd.shape[1]} (tall): jacfwd {t_fwd * 1e3:.2f} ms "
      f"(4 forward passes), jacrev {t_rev * 1e3:.2f} ms ({N} reverse passes) -> forward "
      f"mode {t_rev / t_fwd:.1f}x faster")

# square: N x N; both need N passes, and the Jacobian is tridiagonal
Jf, t_sf = timed(ft.jit(ft.jacfwd(residual)), u, theta, repeats=2)
Jr, t_sr = timed(ft.jit(ft.jacrev(residual)), u, theta, repeats=2)
assert np.allclose(Jf, Jr)
print(f"dR/du is {N} x {N} (square): jacfwd {t_sf * 1e3:.1f} ms, jacrev {t_sr * 1e3:.1f} ms "
      "(N passes each: no asymptotic winner)")
band = [int(np.count_nonzero(np.diag(Jf, k))) for k in (-1, 0, 1)]
print(f"nonzeros: {np.count_nonzero(Jf)} of {N * N}, on the sub/main/super diagonals "
      f"{band}: the tridiagonal stencil")
print("top-left corner of dR/du:")
print(np.round(Jf[:4, :4], 1))

# one Newton step on u with the forward-mode Jacobian
du = np.linalg.solve(Jf, -np.asarray(residual(u, theta)))
print(f"Newton step: |R(u)| {np.linalg.norm(residual(u, theta)):.3e} -> "
      f"{np.linalg.norm(residual(u + du, theta)):.3e}")
