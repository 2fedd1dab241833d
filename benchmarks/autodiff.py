"""Autodiff speed (issue 3), eager, no jit:

- ``grad(lambda x: sum(sin(x) * x))`` on 100 float64 elements; targets: functrans at
  least as fast as HIPS autograd (ratio to autograd <= 1) and at least 3x faster than
  eager ``jax.grad`` (ratio to jax <= 1/3).
- ``hessian`` of ``sum(tanh(A @ x) ** 2)``, n = 64; target: within 2x of autograd.

Candidates needing jax or autograd are left out when those are not installed.
"""
from __future__ import annotations

import numpy as np

from .harness import Workload


def _grad_setup():
    import functrans as ft
    import functrans.numpy as fnp
    x = np.linspace(0.0, 1.0, 100)
    g = ft.grad(lambda v: fnp.sum(fnp.sin(v) * v))
    c = {"functrans": lambda: g(x)}
    try:
        import autograd
        import autograd.numpy as anp
        ga = autograd.grad(lambda v: anp.sum(anp.sin(v) * v))
        c["autograd"] = lambda: ga(x)
    except Exception:
        pass
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        jx = jnp.asarray(x)
        gj = jax.grad(lambda v: jnp.sum(jnp.sin(v) * v))
        c["jax"] = lambda: gj(jx).block_until_ready()
    except Exception:
        pass
    return c


def _grad_ok(r):
    ok = True
    if "autograd" in r:
        ok &= r["functrans"] <= r["autograd"]
    if "jax" in r:
        ok &= r["functrans"] * 3 <= r["jax"]
    return ok


def _hessian_setup():
    import functrans as ft
    import functrans.numpy as fnp
    from functrans import lax
    n = 64
    rng = np.random.default_rng(0)
    A = rng.standard_normal((n, n)) / np.sqrt(n)
    x = rng.standard_normal(n)
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
