"""jit on the CPU backend (llvmlite): fused transcendental and fused arithmetic
kernels on 2^22 elements against numpy (and jax.jit when installed), the cached
dispatch of ``x + 1.0`` on 8 elements, the Lorenz RK4 loop (5000 steps of
``fori_loop``, native) against the same loop under ``numba.njit``, BLAS matmuls, and
autodiff under jit against jax.jit (float32 MLP ``value_and_grad`` + SGD step and its
first-call compile with every cache off, the Lorenz Jacobian by ``jacrev``, ``hessian``
n=64, per-example gradients by ``jit(vmap(grad))``) and a row-wise logsumexp."""
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


def _jax_lorenz(jax, jnp):
    """The Lorenz final state from the initial one, written with jax."""
    from .control_flow import _rk4_step, N_STEPS

    def final(v):
        s = jax.lax.fori_loop(0, N_STEPS, lambda i, s: _rk4_step(s), (v[0], v[1], v[2]))
        return jnp.stack(s)
    return final


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
        g = jax.jit(_jax_lorenz(jax, jnp))
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


def _twice_faster_than_best(r):
    """functrans at least 2x faster than the faster of numpy and jax (ratios to numpy)."""
    best = min(r["numpy"], r.get("jax", r["numpy"]))
    return r["functrans cpu"] * 2 <= best


def _at_most(label, limit, of):
    return lambda r: (of not in r) or r[label] <= limit * r[of]


WORKLOADS = [
    Workload("fused transcendental, 2^22 × f64", _transcendental_setup(np.float64),
             baseline="numpy", target="≥ 2× faster than the faster of jax.jit and numpy",
             check=_twice_faster_than_best),
    Workload("fused transcendental, 2^22 × f32", _transcendental_setup(np.float32),
             baseline="numpy", target="≥ 2× faster than the faster of jax.jit and numpy",
             check=_twice_faster_than_best),
    Workload("fused arithmetic (x*y + 2x - y)/2, 2^22 × f64", _arith_setup,
             baseline="copy (bandwidth floor)", target="functrans ≤ 1.3× the copy",
             check=_at_most("functrans cpu", 1.3, "copy (bandwidth floor)")),
    Workload("cached dispatch x + 1.0, 8 × f64", _dispatch_setup, baseline="numpy",
             target="≤ 0.5× jax (5.5 µs there)", check=_at_most("functrans cpu", 0.5, "jax")),
    Workload("Lorenz RK4, 5000 steps in fori_loop (native loop)", _lorenz_setup,
             baseline="numba", target="functrans ≤ 1.2× numba",
             check=lambda r: r.get("functrans cpu", 9) <= 1.2),
    Workload("matmul 512² f64 (BLAS)", _matmul_setup(512, np.float64), baseline="numpy",
             target="≥ numpy's GFLOP/s: the same BLAS, so parity (ratio ≤ 1.02: run-to-run noise)",
             check=_at_most("functrans cpu", 1.02, "numpy")),
    Workload("matmul 1024² f32 (BLAS)", _matmul_setup(1024, np.float32), baseline="numpy",
             target="≥ numpy's GFLOP/s: the same BLAS, so parity (ratio ≤ 1.02: run-to-run noise)",
             check=_at_most("functrans cpu", 1.02, "numpy")),
]


# ---------------------------------------------------------------- autodiff under jit
MLP_IN, MLP_HID, MLP_OUT, MLP_BATCH = 784, 256, 10, 128


def _mlp_data():
    rng = np.random.default_rng(0)
    f32 = np.float32
    params = (rng.standard_normal((MLP_IN, MLP_HID)).astype(f32) * f32(0.05),
              np.zeros(MLP_HID, f32),
              rng.standard_normal((MLP_HID, MLP_OUT)).astype(f32) * f32(0.05),
              np.zeros(MLP_OUT, f32))
    x = rng.standard_normal((MLP_BATCH, MLP_IN)).astype(f32)
    y = np.eye(MLP_OUT, dtype=f32)[rng.integers(0, MLP_OUT, MLP_BATCH)]
    return params, x, y


def _mlp_loss(np_):
    """Softmax cross-entropy of a tanh MLP, written against a numpy-like module."""
    def loss(params, x, y):
        w1, b1, w2, b2 = params
        h = np_.tanh(x @ w1 + b1)
        z = h @ w2 + b2
        z = z - np_.max(z, axis=1, keepdims=True)
        lse = np_.log(np_.sum(np_.exp(z), axis=1, keepdims=True))
        return -np_.mean(np_.sum(y * (z - lse), axis=1))
    return loss


def _sgd(vg, lr):
    def step(params, x, y):
        loss, g = vg(params, x, y)
        return loss, tuple(p - lr * q for p, q in zip(params, g))
    return step


def _mlp_compile_setup():
    import functrans as ft
    import functrans.numpy as fnp
    from backends.llvm import cache
    params, x, y = _mlp_data()
    loss = _mlp_loss(fnp)
    old = cache.cache_dir

    def fresh_ft():
        cache.cache_dir = lambda: None        # no disk cache for this measurement
        try:
            cache.clear_memory()              # nor in-memory plans/object code
            f = ft.jit(ft.value_and_grad(lambda p, a, b: loss(p, a, b)))
            return f(params, x, y)
        finally:
            cache.cache_dir = old
    c = {"functrans cpu": fresh_ft}
    jax, jnp = _jax()
    if jax is not None:
        jl = _mlp_loss(jnp)
        jp = tuple(jnp.asarray(p) for p in params)
        jx, jy = jnp.asarray(x), jnp.asarray(y)

        def fresh_jax():
            f = jax.jit(jax.value_and_grad(lambda p, a, b: jl(p, a, b)))
            return jax.block_until_ready(f(jp, jx, jy))
        c["jax"] = fresh_jax
    return c


def _mlp_step_setup():
    import functrans as ft
    import functrans.numpy as fnp
    params, x, y = _mlp_data()
    lr = np.float32(0.1)
    step = ft.jit(_sgd(ft.value_and_grad(_mlp_loss(fnp)), lr))
    c = {"functrans cpu": lambda: step(params, x, y), "numpy (hand-written)": _numpy_mlp_step(params, x, y, lr)}
    jax, jnp = _jax()
    if jax is not None:
        jstep = jax.jit(_sgd(jax.value_and_grad(_mlp_loss(jnp)), lr))
        jp = tuple(jnp.asarray(p) for p in params)
        jx, jy = jnp.asarray(x), jnp.asarray(y)
        c["jax"] = lambda: jax.block_until_ready(jstep(jp, jx, jy))
        ref = jstep(jp, jx, jy)
        got = step(params, x, y)
        assert abs(float(ref[0]) - float(got[0])) < 1e-4, (ref[0], got[0])
    return c


def _numpy_mlp_step(params, x, y, lr):
    w1, b1, w2, b2 = params

    def step():
        h = np.tanh(x @ w1 + b1)
        z = h @ w2 + b2
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        loss = -np.mean(np.sum(y * (z - np.log(s)), axis=1))
        dz = (e / s - y) / np.float32(MLP_BATCH)
        gw2, gb2 = h.T @ dz, dz.sum(0)
        dh = (dz @ w2.T) * (1 - h * h)
        gw1, gb1 = x.T @ dh, dh.sum(0)
        return loss, (w1 - lr * gw1, b1 - lr * gb1, w2 - lr * gw2, b2 - lr * gb2)
    return step


def _lorenz_grad_setup(mode="jacrev"):
    import functrans as ft
    import functrans.numpy as fnp
    from .control_flow import _final_state
    x0 = np.array([1.0, 1.0, 1.0])
    jf = ft.jit(getattr(ft, mode)(lambda v: fnp.stack(list(_final_state(v)))))
    c = {"functrans cpu": lambda: jf(x0)}
    jax, jnp = _jax()
    if jax is not None:
        g = jax.jit(getattr(jax, mode)(_jax_lorenz(jax, jnp)))
        jx = jnp.asarray(x0)
        c["jax"] = lambda: g(jx).block_until_ready()
        assert np.allclose(np.asarray(g(jx)), np.asarray(jf(x0)), rtol=1e-8, atol=1e-8)
    return c


def _hessian_jit_setup():
    import functrans as ft
    import functrans.numpy as fnp
    from .autodiff import hessian_data
    A, x = hessian_data()
    h = ft.jit(ft.hessian(lambda a, v: fnp.sum(fnp.tanh(a @ v) ** 2), argnums=1))
    c = {"functrans cpu": lambda: h(A, x)}
    jax, jnp = _jax()
    if jax is not None:
        hj = jax.jit(jax.hessian(lambda a, v: jnp.sum(jnp.tanh(a @ v) ** 2), argnums=1))
        ja, jx = jnp.asarray(A), jnp.asarray(x)
        c["jax"] = lambda: hj(ja, jx).block_until_ready()
        assert np.allclose(np.asarray(hj(ja, jx)), np.asarray(h(A, x)), rtol=1e-9, atol=1e-9)
    return c


def _per_example_jit_setup():
    import functrans as ft
    import functrans.numpy as fnp
    from .vmap import _data, _loss
    w, x, y = _data()
    g = ft.jit(ft.vmap(ft.grad(_loss(fnp)), in_axes=(None, 0, 0)))
    c = {"functrans cpu": lambda: g(w, x, y)}
    jax, jnp = _jax()
    if jax is not None:
        gj = jax.jit(jax.vmap(jax.grad(_loss(jnp)), in_axes=(None, 0, 0)))
        jw, jx, jy = jnp.asarray(w), jnp.asarray(x), jnp.asarray(y)
        c["jax"] = lambda: gj(jw, jx, jy).block_until_ready()
        assert np.allclose(np.asarray(gj(jw, jx, jy)), np.asarray(g(w, x, y)), rtol=1e-9, atol=1e-12)
    return c


def _logsumexp_setup():
    import functrans as ft
    import functrans.numpy as fnp
    x = np.random.default_rng(0).standard_normal((2048, 2048))

    def lse(np_):
        def f(x):
            m = np_.max(x, axis=1, keepdims=True)
            return np_.log(np_.sum(np_.exp(x - m), axis=1)) + m[:, 0]
        return f
    jf = ft.jit(lse(fnp))
    c = {"numpy": lambda: lse(np)(x), "functrans cpu": lambda: jf(x)}
    jax, jnp = _jax()
    if jax is not None:
        g = jax.jit(lse(jnp))
        jx = jnp.asarray(x)
        c["jax"] = lambda: g(jx).block_until_ready()
    assert np.allclose(np.asarray(jf(x)), lse(np)(x), rtol=1e-12)
    return c


def _vs_jax(limit):
    return lambda r: ("jax" not in r) or r["functrans cpu"] <= limit * r["jax"]


WORKLOADS += [
    Workload("first-call compile of jit(value_and_grad(mlp_loss)) (no caches)", _mlp_compile_setup,
             baseline="jax", target="≤ jax (130 ms there)", check=_vs_jax(1.0)),
    Workload("MLP 784-256-10, batch 128, f32, jit(value_and_grad)+SGD", _mlp_step_setup,
             baseline="jax", target="≤ 0.9× jax", check=_vs_jax(0.9)),
    Workload("Lorenz RK4 gradient d final / d initial (jacrev, jit)", _lorenz_grad_setup,
             baseline="jax", target="≥ 5× faster than jax (ratio ≤ 0.2)", check=_vs_jax(0.2)),
    Workload("Lorenz RK4 Jacobian d final / d initial (jacfwd, jit; forward mode, informative)",
             lambda: _lorenz_grad_setup("jacfwd"), baseline="jax", target="(no target)"),
    Workload("hessian of sum(tanh(A@x)**2), n=64, jit", _hessian_jit_setup,
             baseline="jax", target="≤ jax", check=_vs_jax(1.0)),
    Workload("per-example grads, logistic regression 256 × 100, jit(vmap(grad))",
             _per_example_jit_setup, baseline="jax", target="≤ jax", check=_vs_jax(1.0)),
    Workload("logsumexp over rows, 2048² f64", _logsumexp_setup,
             baseline="jax", target="≤ 0.8× jax", check=_vs_jax(0.8)),
]
