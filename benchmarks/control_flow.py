"""Structured control flow: the Lorenz system integrated with RK4 for 5000 steps in
``lax.fori_loop`` (a ``scan``), and the gradient of the final state with respect to
the initial state (a reverse scan), under ``jit``; and the forward loop called eagerly
(no ``jit``: the loop is retraced each call and runs as one cached compiled call,
``functrans.primitives.control_flow_eager``) against JAX's eager loop.

Recorded now: the reference interpreter (``backend="interpret"``), against a plain
Python loop over floats doing the same arithmetic. The compiled target is set by
the LLVM backend issue; its candidate joins here (``functrans cpu``) when that
backend runs the loop.
"""
from __future__ import annotations

import numpy as np

from .harness import Workload

N_STEPS = 5000
DT = 1e-3
SIGMA, RHO, BETA = 10.0, 28.0, 8.0 / 3.0
S0 = (1.0, 1.0, 1.0)


def _deriv(s):
    x, y, z = s
    return SIGMA * (y - x), x * (RHO - z) - y, x * y - BETA * z


def _rk4_step(s):
    k1 = _deriv(s)
    k2 = _deriv(tuple(a + DT / 2 * b for a, b in zip(s, k1)))
    k3 = _deriv(tuple(a + DT / 2 * b for a, b in zip(s, k2)))
    k4 = _deriv(tuple(a + DT * b for a, b in zip(s, k3)))
    return tuple(a + DT / 6 * (p + 2 * q + 2 * r + w) for a, p, q, r, w in zip(s, k1, k2, k3, k4))


def lorenz(s0):
    """The final state after N_STEPS RK4 steps, as a ``fori_loop`` (works on tracers)."""
    from functrans import lax
    return lax.fori_loop(0, N_STEPS, lambda i, s: _rk4_step(s), tuple(s0))


def python_lorenz(s0=S0):
    s = tuple(float(v) for v in s0)
    for _ in range(N_STEPS):
        s = _rk4_step(s)
    return s


def _final_state(v):
    return lorenz((v[0], v[1], v[2]))


def _compiled_candidates(make):
    """{label: fn} for the backends that can run the program (interpreter always)."""
    import functrans as ft
    out = {}
    for label, backend in (("functrans interpret", "interpret"), ("functrans cpu", "cpu")):
        try:
            fn = make(ft, backend)
            fn()
        except Exception:   # that backend does not lower this program yet
            continue
        out[label] = fn
    return out


def _forward_setup():
    import functrans.numpy as fnp
    x0 = fnp.asarray(np.array(S0))

    def make(ft, backend):
        f = ft.jit(lambda v: fnp.stack(list(_final_state(v))), backend=backend)
        return lambda: f(x0)
    c = {"python loop": python_lorenz}
    c.update(_compiled_candidates(make))
    return c


def _grad_setup():
    import functrans.numpy as fnp
    x0 = fnp.asarray(np.array(S0))

    def make(ft, backend):
        # the full Jacobian d final / d initial: three reverse passes, batched by vmap
        def jac(v):
            return ft.vmap(lambda ct: ft.vjp(lambda u: fnp.stack(list(_final_state(u))), v)[1](ct)[0]
                           )(fnp.asarray(np.eye(3)))
        g = ft.jit(jac, backend=backend)
        return lambda: g(x0)
    c = {"python loop (forward only)": python_lorenz}
    c.update(_compiled_candidates(make))
    return c


def _eager_setup():
    import functrans.numpy as fnp
    x0 = fnp.asarray(np.array(S0))
    c = {"python loop": python_lorenz,
         "functrans eager": lambda: np.asarray(fnp.stack(list(_final_state(x0))))}
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return c
    jx0 = jnp.asarray(np.array(S0), dtype=jnp.float32)

    def jax_eager():
        s = jax.lax.fori_loop(0, N_STEPS, lambda i, s: _rk4_step(s), (jx0[0], jx0[1], jx0[2]))
        return jax.block_until_ready(jnp.stack(s))
    c["jax"] = jax_eager
    return c


WORKLOADS = [
    Workload("Lorenz RK4, 5000 steps in fori_loop", _forward_setup, baseline="python loop",
             target="interpreter figure recorded; compiled target set by the LLVM backend issue",
             group="control flow"),
    Workload("Lorenz RK4, d final state / d initial state (reverse scan)", _grad_setup,
             baseline="python loop (forward only)",
             target="interpreter figure recorded; compiled target set by the LLVM backend issue",
             group="control flow"),
    Workload("Lorenz RK4, 5000 steps in fori_loop, eager (no jit)", _eager_setup,
             baseline="python loop", target="functrans eager ≤ jax eager",
             check=lambda r: r["functrans eager"] <= r.get("jax", float("inf")),
             group="control flow"),
]
