"""Eager per-op overhead: ``fnp.sin`` and ``fnp.add`` on 8 float64 elements against
numpy's own call (target: at most 2 µs above numpy) and, when installed, jax.numpy."""
from __future__ import annotations

import numpy as np

from .harness import Workload


def _sin_setup():
    import functrans.numpy as fnp
    x = np.linspace(0.0, 1.0, 8)
    fx = fnp.asarray(x)
    c = {"numpy": lambda: np.sin(x), "functrans": lambda: fnp.sin(fx)}
    try:
        import jax
        import jax.numpy as jnp
        jx = jnp.asarray(x)
        c["jax"] = lambda: jax.block_until_ready(jnp.sin(jx))
    except Exception:
        pass
    return c


def _add_setup():
    import functrans.numpy as fnp
    x = np.linspace(0.0, 1.0, 8)
    fx = fnp.asarray(x)
    c = {"numpy": lambda: np.add(x, x), "functrans": lambda: fnp.add(fx, fx)}
    try:
        import jax
        import jax.numpy as jnp
        jx = jnp.asarray(x)
        c["jax"] = lambda: jax.block_until_ready(jnp.add(jx, jx))
    except Exception:
        pass
    return c


def _within_2us(medians):
    """The target is absolute: at most 2 µs of overhead above numpy's own call."""
    return medians["functrans"] - medians["numpy"] <= 2e-6


WORKLOADS = [
    Workload("eager sin, 8 × f64", _sin_setup, baseline="numpy",
             target="functrans ≤ numpy + 2 µs", check_medians=_within_2us),
    Workload("eager add, 8 × f64", _add_setup, baseline="numpy",
             target="functrans ≤ numpy + 2 µs", check_medians=_within_2us),
]
