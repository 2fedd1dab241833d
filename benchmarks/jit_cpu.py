"""jit on the CPU backend (llvmlite): fused transcendental and fused arithmetic
kernels on 2^22 elements against numpy (and jax.jit when installed), the cached
dispatch of ``x + 1.0`` on 8 elements, the Lorenz RK4 loop (5000 steps of
``fori_loop``, native) against the same loop under ``numba.njit``, and BLAS matmuls."""
from __future__ import annotations

import numpy as np

from .harness import Workload

N = 1 << 22


def _jax():
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        return jax, jax.numpy
    except Exception:
        return None, None


def _transcendental_setup(dtype):
    def setup():
        import functrans as ft
        import functrans.numpy as fnp
        rng = np.random.default_rng(0)
        x = rng.uniform(-3, 3, N).astype(dtype)
        y = rng.uniform(-3, 3, N).astype(dtype)
        half = dtype(0.5)

        def f(x, y):
            return fnp.sin(x) * fnp.cos(y) + fnp.exp(-x * x) * half + fnp.tanh(y)

        jf = ft.jit(f, backend="cpu")
        c = {"numpy": lambda: np.sin(x) * np.cos(y) + np.exp(-x * x) * half + np.tanh(y),
             "functrans cpu": lambda: jf(x, y)}
        jax, jnp = _jax()
        if jax is not None:
            g = jax.jit(lambda x, y: jnp.sin(x) * jnp.cos(y) + jnp.exp(-x * x) * half + jnp.tanh(y))
            jx, jy = jnp.asarray(x), jnp.asarray(y)
            c["jax"] = lambda: g(jx, jy).block_until_ready()
        return c
    return setup


def _arith_setup():
    import functrans as ft
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(N), rng.standard_normal(N)
    jf = ft.jit(lambda x, y: (x * y + 2.0 * x - y) * 0.5, backend="cpu")
    c = {"numpy": lambda: (x * y + 2.0 * x - y) * 0.5, "functrans cpu": lambda: jf(x, y),
         "copy (bandwidth floor)": lambda: x.copy()}
    jax, jnp = _jax()
    if jax is not None:
        g = jax.jit(lambda x, y: (x * y + 2.0 * x - y) * 0.5)
        jx, jy = jnp.asarray(x), jnp.asarray(y)
        c["jax"] = lambda: g(jx, jy).block_until_ready()
    return c


def _dispatch_setup():
    import functrans as ft
    x = np.linspace(0.0, 1.0, 8)
    jf = ft.jit(lambda x: x + 1.0, backend="cpu")
    c = {"numpy": lambda: x + 1.0, "functrans cpu": lambda: jf(x)}
    jax, jnp = _jax()
    if jax is not None:
        g = jax.jit(lambda x: x + 1.0)
        jx = jnp.asarray(x)
        c["jax"] = lambda: g(jx).block_until_ready()
    return c


def _numba_lorenz():
    try:
        import numba
    except Exception:
        return None
    from .control_flow import BETA, DT, N_STEPS, RHO, SIGMA

    @numba.njit(cache=False)
    def deriv(x, y, z):
        return SIGMA * (y - x), x * (RHO - z) - y, x * y - BETA * z

    @numba.njit(cache=False)
    def run(s0):
        x, y, z = s0[0], s0[1], s0[2]
        h = DT / 2
        for _ in range(N_STEPS):
            a1, b1, c1 = deriv(x, y, z)
            a2, b2, c2 = deriv(x + h * a1, y + h * b1, z + h * c1)
            a3, b3, c3 = deriv(x + h * a2, y + h * b2, z + h * c2)
            a4, b4, c4 = deriv(x + DT * a3, y + DT * b3, z + DT * c3)
            x = x + DT / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
            y = y + DT / 6 * (b1 + 2 * b2 + 2 * b3 + b4)
            z = z + DT / 6 * (c1 + 2 * c2 + 2 * c3 + c4)
        out = np.empty(3)
        out[0], out[1], out[2] = x, y, z
        return out
    return run


def _lorenz_setup():
    import functrans as ft
    import functrans.numpy as fnp
    from .control_flow import _final_state
    x0 = np.array([1.0, 1.0, 1.0])
    jf = ft.jit(lambda v: fnp.stack(list(_final_state(v))), backend="cpu")
    c = {"functrans cpu": lambda: jf(x0)}
    nb = _numba_lorenz()
    if nb is not None:
        c["numba"] = lambda: nb(x0)
    jax, jnp = _jax()
    if jax is not None:
        from .control_flow import _rk4_step, N_STEPS

        def jl(v):
            s = jax.lax.fori_loop(0, N_STEPS, lambda i, s: _rk4_step(s), (v[0], v[1], v[2]))
            return jnp.stack(s)
        g = jax.jit(jl)
        jx = jnp.asarray(x0)
        c["jax"] = lambda: g(jx).block_until_ready()
    return c


def _matmul_setup(n, dtype):
    def setup():
        import functrans as ft
        rng = np.random.default_rng(0)
        a, b = rng.standard_normal((n, n)).astype(dtype), rng.standard_normal((n, n)).astype(dtype)
        jf = ft.jit(lambda a, b: a @ b, backend="cpu")
        c = {"numpy": lambda: a @ b, "functrans cpu": lambda: jf(a, b)}
        jax, jnp = _jax()
        if jax is not None:
            g = jax.jit(lambda a, b: a @ b)
            ja, jb = jnp.asarray(a), jnp.asarray(b)
            c["jax"] = lambda: g(ja, jb).block_until_ready()
        return c
    return setup


WORKLOADS = [
    Workload("fused transcendental, 2^22 × f64", _transcendental_setup(np.float64),
             baseline="numpy", target="≥ 2× faster than the faster of jax.jit and numpy"),
    Workload("fused transcendental, 2^22 × f32", _transcendental_setup(np.float32),
             baseline="numpy", target="≥ 2× faster than the faster of jax.jit and numpy"),
    Workload("fused arithmetic (x*y + 2x - y)/2, 2^22 × f64", _arith_setup,
             baseline="copy (bandwidth floor)", target="functrans ≤ 1.3× the copy"),
    Workload("cached dispatch x + 1.0, 8 × f64", _dispatch_setup, baseline="numpy",
             target="≤ 0.5× jax (5.5 µs there)"),
    Workload("Lorenz RK4, 5000 steps in fori_loop (native loop)", _lorenz_setup,
             baseline="numba", target="functrans ≤ 1.2× numba",
             check=lambda r: r.get("functrans cpu", 9) <= 1.2),
    Workload("matmul 512² f64 (BLAS)", _matmul_setup(512, np.float64), baseline="numpy",
             target="≥ numpy's GFLOP/s (ratio ≤ 1)"),
    Workload("matmul 1024² f32 (BLAS)", _matmul_setup(1024, np.float32), baseline="numpy",
             target="≥ numpy's GFLOP/s (ratio ≤ 1)"),
]
