"""Autodiff speed (issue 3), eager, no jit:

- ``grad(lambda x: sum(sin(x) * x))`` on 100 float64 elements; targets: functrans at
  least as fast as HIPS autograd (ratio to autograd <= 1) and at least 3x faster than
  eager ``jax.grad`` (ratio to jax <= 1/3).
- ``hessian`` of ``sum(tanh(A @ x) ** 2)``, n = 64; target: within 2x of autograd.

Fairness: every candidate gets the same float64 numpy input (jax with ``jax_enable_x64``
on, so it computes in float64 as well, on the CPU; its call waits for the result), each
returns the gradient as an array, and all are timed in one process with interleaved
repetitions (see ``harness``). The candidate ``functrans (lax ops)`` is the same gradient
written with ``functrans.lax`` primitives instead of ``functrans.numpy``: the difference
to ``functrans`` is the cost of the numpy-compatible layer (promotion, checks), the rest
is linearize + transpose. It is for information; the targets are on ``functrans``.

Candidates needing jax or autograd are left out when those are not installed.
"""
from __future__ import annotations

import numpy as np

from .harness import Workload


def _grad_setup():
    import functrans as ft
    import functrans.numpy as fnp
    from functrans import lax
    x = np.linspace(0.0, 1.0, 100)
    g = ft.grad(lambda v: fnp.sum(fnp.sin(v) * v))
    g_lax = ft.grad(lambda v: lax.reduce_sum(lax.mul(lax.sin(v), v), (0,)))
    c = {"functrans": lambda: g(x), "functrans (lax ops)": lambda: g_lax(x)}
    try:
        import autograd
        import autograd.numpy as anp
        ga = autograd.grad(lambda v: anp.sum(anp.sin(v) * v))
        c["autograd"] = lambda: ga(x)
    except Exception:
        pass
    try:
        import jax
        jax.config.update("jax_enable_x64", True)     # float64, as the others
        import jax.numpy as jnp
        jx = jnp.asarray(x)
        assert jx.dtype == np.float64
        gj = jax.grad(lambda v: jnp.sum(jnp.sin(v) * v))
        c["jax"] = lambda: gj(jx).block_until_ready()
    except Exception:
        pass
    ref = np.sin(x) + x * np.cos(x)
    for k, fn in c.items():   # every candidate computes the same gradient
        if not np.allclose(np.asarray(fn()), ref, rtol=1e-12, atol=1e-12):
            raise AssertionError(f"{k}: wrong gradient")
    return c


def _grad_ok(r):
    ok = True
    if "autograd" in r:
        ok &= r["functrans"] <= r["autograd"]
    if "jax" in r:
        ok &= r["functrans"] * 3 <= r["jax"]
    return ok


def hessian_data(n=64):
    """(A, x) of the Hessian workloads (eager here, jitted in jit_cpu)."""
    rng = np.random.default_rng(0)
    return rng.standard_normal((n, n)) / np.sqrt(n), rng.standard_normal(n)


def _hessian_setup():
    import functrans as ft
    import functrans.numpy as fnp
    from functrans import lax
    A, x = hessian_data()
    h = ft.hessian(lambda v: fnp.sum(lax.tanh(fnp.matmul(A, v)) ** 2))
    c = {"functrans": lambda: h(x)}
    try:
        import autograd
        import autograd.numpy as anp
        ha = autograd.hessian(lambda v: anp.sum(anp.tanh(anp.dot(A, v)) ** 2))
        c["autograd"] = lambda: ha(x)
    except Exception:
        pass
    return c


WORKLOADS = [
    Workload("eager grad of sum(sin(x)*x), 100 × f64", _grad_setup, baseline="functrans",
             target="functrans ≤ autograd and ≤ jax / 3",
             check=lambda r: _grad_ok({k: v for k, v in r.items()}), group="autodiff"),
    Workload("eager hessian of sum(tanh(A@x)**2), n=64", _hessian_setup, baseline="functrans",
             target="functrans ≤ 2 × autograd",
             check=lambda r: ("autograd" not in r) or r["functrans"] <= 2 * r["autograd"],
             group="autodiff"),
]
