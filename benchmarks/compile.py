"""Compile time of the CPU backend (issue 15), every cache off, against jax.jit when
installed: ``jit(grad)`` of the chain ``y = sin(y)*0.5 + y*c`` (10 and 100 steps in the
suite), a jitted chain of 1,000 and 8,000 plain adds, and recompiling a small ``sin``
function for a new shape, and ``jit(value_and_grad)`` of a transformer block's training
step (attention + layer norm + MLP, batch 32, seq 64, d 128, float32). Each call
compiles from scratch (JAX's caches are cleared too), but for the recompile, where both
keep their in-memory caches (no disk cache on either side). One more case times dispatch: a
jitted call whose second argument is a Python int (an optimiser's step counter).

The large cases take seconds each, too long for the suite's 15 repetitions; run them
once with ``python -m benchmarks.compile`` (sin chain at 10, 100, 1,000 and 3,000
steps, 1,000 / 8,000 / 20,000 adds; milliseconds per equation, their spread across
sizes and the backend's stage breakdown, ``compile_timings``)."""
from __future__ import annotations

import sys
import time

import numpy as np

from .harness import Workload


def _jax():
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        return jax, jax.numpy
    except Exception:
        return None, None


def sin_chain(np_, n):
    def f(y, c):
        for _ in range(n):
            y = np_.sin(y) * 0.5 + y * c
        return np_.sum(y)
    return f


def add_chain(n):
    def f(x):
        y = x
        for _ in range(n):
            y = y + x
        return y
    return f


def transformer_loss(np_, d=128):
    """A pre-norm transformer block (one attention head, a tanh MLP of width 4d) and a
    squared-output loss; ``np_`` is functrans.numpy or jax.numpy."""
    def layer_norm(h, g, b):
        mu = np_.mean(h, axis=-1, keepdims=True)
        var = np_.mean((h - mu) ** 2, axis=-1, keepdims=True)
        return (h - mu) / np_.sqrt(var + 1e-5) * g + b

    def softmax(s):
        e = np_.exp(s - np_.max(s, axis=-1, keepdims=True))
        return e / np_.sum(e, axis=-1, keepdims=True)

    def loss(p, x):
        h = layer_norm(x, p["g1"], p["b1"])
        q, k, v = h @ p["wq"], h @ p["wk"], h @ p["wv"]
        att = softmax((q @ np_.swapaxes(k, 1, 2)) * np.float32(1.0 / np.sqrt(d)))
        x = x + (att @ v) @ p["wo"]
        h = layer_norm(x, p["g2"], p["b2"])
        x = x + np_.tanh(h @ p["w1"] + p["c1"]) @ p["w2"] + p["c2"]
        return np_.mean(x * x)
    return loss


def transformer_inputs(batch=32, seq=64, d=128, seed=0):
    rng = np.random.default_rng(seed)

    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
    p = {"wq": w(d, d), "wk": w(d, d), "wv": w(d, d), "wo": w(d, d),
         "w1": w(d, 4 * d), "w2": w(4 * d, d),
         "c1": np.zeros(4 * d, np.float32), "c2": np.zeros(d, np.float32),
         "g1": np.ones(d, np.float32), "b1": np.zeros(d, np.float32),
         "g2": np.ones(d, np.float32), "b2": np.zeros(d, np.float32)}
    return p, rng.standard_normal((batch, seq, d)).astype(np.float32)


def _fresh(run, clear=True):
    """``run()`` with the backend's disk cache off and (``clear``) its memory caches
    cleared first."""
    from backends.llvm import cache

    def call():
        old = cache.cache_dir
        cache.cache_dir = lambda: None
        try:
            if clear:
                cache.clear_memory()
            return run()
        finally:
            cache.cache_dir = old
    return call


def _sin_chain_setup(n):
    def setup():
        import functrans as ft
        import functrans.numpy as fnp
        y = np.linspace(0.0, 1.0, 1000)
        c = {"functrans cpu": _fresh(lambda: ft.jit(ft.grad(sin_chain(fnp, n)))(y, 0.3))}
        jax, jnp = _jax()
        if jax is not None:
            f = sin_chain(jnp, n)
            c["jax"] = lambda: jax.block_until_ready(jax.jit(jax.grad(f))(y, 0.3))
        return c
    return setup


def _add_chain_setup(n):
    def setup():
        import functrans as ft
        x = np.linspace(0.0, 1.0, 1000)
        c = {"functrans cpu": _fresh(lambda: ft.jit(add_chain(n))(x))}
        jax, _ = _jax()
        if jax is not None:
            c["jax"] = lambda: jax.block_until_ready(jax.jit(add_chain(n))(x))
        return c
    return setup


def _recompile_setup():
    """A new shape each call, in a process that has compiled the function before: the
    in-memory caches stay, as JAX's do (no disk cache on either side). Each call traces,
    plans and builds IR anew; the object code of a kernel that takes its element count
    at run time is reused from memory (``kernels.count_source``)."""
    import functrans as ft
    import functrans.numpy as fnp
    from backends.llvm import cache
    cache.clear_memory()
    shapes = iter(range(3, 1 << 30))
    f = ft.jit(lambda x: fnp.sin(x) * 2.0)

    def ft_new_shape():
        return f(np.ones(next(shapes)))
    c = {"functrans cpu": _fresh(ft_new_shape, clear=False)}
    jax, jnp = _jax()
    if jax is not None:
        g = jax.jit(lambda x: jnp.sin(x) * 2.0)
        c["jax"] = lambda: jax.block_until_ready(g(np.ones(next(shapes))))
    return c


def _transformer_setup():
    import functrans as ft
    import functrans.numpy as fnp
    p, x = transformer_inputs()
    c = {"functrans cpu": _fresh(lambda: ft.jit(ft.value_and_grad(transformer_loss(fnp)))(p, x))}
    jax, jnp = _jax()
    if jax is not None:
        loss = transformer_loss(jnp)

        def jax_cold():
            jax.clear_caches()
            return jax.block_until_ready(jax.jit(jax.value_and_grad(loss))(p, x))
        c["jax"] = jax_cold
    return c


def _int_argument_setup():
    import functrans as ft
    x = np.ones(16, np.float32)
    steps = iter(range(1 << 62))
    f = ft.jit(lambda x, t: x * (1.0 - 0.9 ** t))
    c = {"functrans cpu": lambda: f(x, next(steps) % 1000)}
    jax, _ = _jax()
    if jax is not None:
        g = jax.jit(lambda x, t: x * (1.0 - 0.9 ** t))
        c["jax"] = lambda: jax.block_until_ready(g(x, next(steps) % 1000))
    return c


def _at_most_half_jax(r):
    return r["functrans cpu"] <= 0.5 * r["jax"] if "jax" in r else None


WORKLOADS = [
    Workload("compile jit(grad) of the sin chain, 10 steps", _sin_chain_setup(10),
             baseline="functrans cpu", target="≤ 0.5× jax", check=_at_most_half_jax),
    Workload("compile jit(grad) of the sin chain, 100 steps", _sin_chain_setup(100),
             baseline="functrans cpu", target="≤ 0.5× jax", check=_at_most_half_jax),
    Workload("compile a chain of 1,000 adds", _add_chain_setup(1000),
             baseline="functrans cpu", target="linear in size (20,000: < 10 s, run main())"),
    Workload("recompile x -> sin(x)*2 for a new shape", _recompile_setup,
             baseline="functrans cpu", target="≤ 0.5× jax", check=_at_most_half_jax),
    Workload("compile jit(value_and_grad) of a transformer block step (32x64x128 f32)",
             _transformer_setup, baseline="functrans cpu", target="≤ 0.5× jax",
             check=_at_most_half_jax),
    Workload("dispatch a jitted call with a Python int argument", _int_argument_setup,
             baseline="functrans cpu", target="≤ 0.5× jax", check=_at_most_half_jax),
]


def _once(label, make_and_run, n_eqns, repeats=1):
    """Compile from scratch ``repeats`` times (the median counts); print seconds,
    milliseconds per equation and the stages; return the seconds."""
    times, exe = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        exe = make_and_run()
        times.append(time.perf_counter() - t0)
    dt = sorted(times)[len(times) // 2]
    stages = ""
    timings = getattr(exe, "compile_timings", None)
    if timings:
        stages = ", ".join(f"{k} {v:.2f}" for k, v in timings.items() if v >= 0.01)
    print(f"{label:<34} {dt:8.3f} s  {1e3 * dt / n_eqns:7.3f} ms/eqn  {stages}", flush=True)
    return dt


def _repeats(n_eqns):
    """Median of several compiles where one takes well under a second."""
    return 7 if n_eqns < 2000 else 1


def _flatness(label, per_eqn):
    """Print the spread of seconds per equation across sizes (issue 15: within 2x)."""
    lo, hi = min(per_eqn.values()), max(per_eqn.values())
    sizes = ", ".join(f"{n}: {1e3 * v:.3f}" for n, v in per_eqn.items())
    print(f"{label} ms per equation {sizes}; max / min {hi / lo:.2f}", flush=True)


def main(argv=None):
    """Compile per case, sizes up to the issue's largest (minutes in all). Each library
    first compiles a throwaway function, so one-time process start-up (LLVM's and
    XLA's initialisation, loading the vector-math objects) is not charged to the first
    size; sizes under ~2,000 equations are the median of 7 compiles."""
    import functrans as ft
    import functrans.numpy as fnp
    steps = [int(a) for a in (argv or [])] or [10, 100, 1000, 3000]
    y = np.linspace(0.0, 1.0, 1000)
    ft.jit(ft.grad(sin_chain(fnp, 2)))(y, 0.5)          # warm-up, not timed
    eqns, ours = {}, {}
    for n in steps:
        lowered = ft.jit(ft.grad(sin_chain(fnp, n))).lower(y, 0.3)
        eqns[n] = len(lowered.jaxpr.jaxpr.eqns)
        ours[n] = _once(f"functrans sin chain {n}", _fresh(lambda: lowered.compile().exe),
                        eqns[n], _repeats(eqns[n])) / eqns[n]
    _flatness("functrans sin chain", ours)
    for n in (1000, 8000, 20000):
        lowered = ft.jit(add_chain(n)).lower(y)
        _once(f"functrans adds {n}", _fresh(lambda: lowered.compile().exe), n)
    p, x = transformer_inputs()
    lowered = ft.jit(ft.value_and_grad(transformer_loss(fnp))).lower(p, x)
    eqns["transformer"] = len(lowered.jaxpr.jaxpr.eqns)
    _once("functrans transformer step", _fresh(lambda: lowered.compile().exe),
          eqns["transformer"])
    jax, jnp = _jax()
    if jax is None:
        return 0
    jax.clear_caches()
    f = jax.jit(jax.value_and_grad(transformer_loss(jnp)))
    _once("jax transformer step", lambda: jax.block_until_ready(f(p, x)), eqns["transformer"])
    theirs = {}
    for n in steps:
        def run(n=n):
            jax.clear_caches()
            return jax.block_until_ready(jax.jit(jax.grad(sin_chain(jnp, n)))(y, 0.3))
        theirs[n] = _once(f"jax sin chain {n}", run, eqns[n], _repeats(eqns[n])) / eqns[n]
    _flatness("jax sin chain", theirs)
    print("functrans / jax per size: " + ", ".join(
        f"{n}: {ours[n] / theirs[n]:.2f}" for n in steps), flush=True)
    for n in (1000, 8000):
        f = jax.jit(add_chain(n))
        _once(f"jax adds {n}", lambda: jax.block_until_ready(f(y)), n)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
