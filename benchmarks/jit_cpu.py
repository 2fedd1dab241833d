"""jit on the CPU backend (llvmlite): fused transcendental and fused arithmetic
kernels on 2^22 elements against numpy (and jax.jit when installed), and the cached
dispatch of ``x + 1.0`` on 8 elements."""
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


WORKLOADS = [
    Workload("fused transcendental, 2^22 × f64", _transcendental_setup(np.float64),
             baseline="numpy", target="≥ 2× faster than the faster of jax.jit and numpy"),
    Workload("fused transcendental, 2^22 × f32", _transcendental_setup(np.float32),
             baseline="numpy", target="≥ 2× faster than the faster of jax.jit and numpy"),
    Workload("fused arithmetic (x*y + 2x - y)/2, 2^22 × f64", _arith_setup,
             baseline="copy (bandwidth floor)", target="functrans ≤ 1.3× the copy"),
    Workload("cached dispatch x + 1.0, 8 × f64", _dispatch_setup, baseline="numpy",
             target="≤ 0.5× jax (5.5 µs there)"),
]
