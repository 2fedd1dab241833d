"""The shared primitive test table. Each family module defines ``CASES``, a list of
``OpCase``; ``tests/test_op_table.py`` runs every check on every case."""
from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from typing import Callable, Optional, Sequence

import numpy as np


@dataclasses.dataclass
class OpCase:
    """One row of the table.

    name:   test id (unique).
    fun:    the function under test, taking arrays (uses fnp / lax / nn ...).
    args:   a list of numpy arrays, or a callable ``rng -> list`` of them.
    ref:    numpy reference taking the same arrays (None: no value check, e.g. random).
    diff:   check JVP/VJP against finite differences (float64 args in ``diff_argnums``).
    diff_argnums: which args to differentiate (default: all floating args).
    batch:  check vmap against a Python loop.
    jit:    check jit against eager.
    rtol/atol: value tolerances; ``fd_tol`` for the finite-difference checks, ``fd2_tol``
            for the second-order ones (jvp of jvp, vjp of vjp).
    """
    name: str
    fun: Callable
    args: object
    ref: Optional[Callable] = None
    diff: bool = True
    diff_argnums: Optional[Sequence[int]] = None
    batch: bool = True
    jit: bool = True
    rtol: float = 1e-7
    atol: float = 1e-9
    fd_tol: float = 1e-5
    fd2_tol: float = 1e-5
    eps: float = 1e-6

    def make_args(self, seed=0):
        if callable(self.args):
            return [np.asarray(a) if not isinstance(a, (int, float, bool)) else a
                    for a in self.args(np.random.default_rng(seed))]
        return [np.array(a, copy=True) for a in self.args]


def all_cases():
    import tests.cases as pkg
    out = []
    for m in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        mod = importlib.import_module(f"tests.cases.{m.name}")
        out.extend(getattr(mod, "CASES", []))
    names = [c.name for c in out]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, f"duplicate OpCase names: {sorted(dup)}"
    return out


def randn(*shape, dtype=np.float64, scale=1.0, shift=0.0):
    """A generator of standard-normal arrays (for ``args=lambda rng: [...]``)."""
    return lambda rng: (rng.standard_normal(shape) * scale + shift).astype(dtype)


def positive(*shape, dtype=np.float64, low=0.5, high=2.0):
    return lambda rng: rng.uniform(low, high, shape).astype(dtype)


def uniform(*shape, low=-0.9, high=0.9, dtype=np.float64):
    return lambda rng: rng.uniform(low, high, shape).astype(dtype)


def ints(*shape, low=-5, high=6, dtype=np.int64):
    return lambda rng: rng.integers(low, high, shape).astype(dtype)


def gen(*makers):
    """Combine per-argument generators into an ``args`` callable."""
    return lambda rng: [m(rng) if callable(m) else m for m in makers]
