"""Library functions that run through a cached ``jit`` when called on large known arrays.

JAX jits most of its library functions (``jax.scipy.special``, ``jax.nn``'s activations):
an eager call is one compiled call, and under an eager ``grad``/``jvp``/``vjp`` the
function is one ``pjit`` equation whose derivative rules run compiled too. A functrans
library function composed of tens of elementwise steps runs each step as a numpy pass
when eager, and its derivative likewise (eager grad of erfc on 1M values: 0.66 s, JAX
0.03 s). ``compiled_when_large(fn)`` takes the same path as JAX when it pays: when every
argument is known now (an array, or a tracer of an eager ``grad``/``jvp``/``vjp``
carrying its primal) and one holds at least ``EAGER_COMPILE_MIN`` values; under ``jit``
(abstract tracers) or on small arrays ``fn`` runs as is. Values are the compiled
function's (those of ``fn`` under ``jit``).

>>> import numpy as np, functrans.numpy as fnp
>>> double_sin = compiled_when_large(lambda x: 2.0 * fnp.sin(x))
>>> float(double_sin(np.full(EAGER_COMPILE_MIN, 0.5))[0]) == float(2.0 * np.sin(0.5))
True
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from .compiler import LRUCache
from .jit import jit
from .tracing import Tracer

__all__ = ["EAGER_COMPILE_MIN", "compiled_when_large"]

# Eager calls on at least this many values run compiled: ndtri of 1e6 values took 7 s of
# CPU as 300 numpy passes (JAX: a fused loop, ~30 ms); below, a first compile costs more
# than the numpy passes it saves.
EAGER_COMPILE_MIN = 1 << 16
_compiled = LRUCache(128)       # fn -> jit(fn)


def _known_size(a) -> int:
    """How many values ``a`` holds when they are known now, else -1 (an abstract tracer)."""
    if isinstance(a, Tracer):
        return -1 if a.val is None else int(np.size(a.val))
    return int(np.size(a))


def compiled_when_large(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (positional array arguments only), run through a cached ``jit`` when its
    arguments are known now and one holds at least ``EAGER_COMPILE_MIN`` values (see the
    module doc); otherwise ``fn`` itself.

    >>> import functrans.numpy as fnp
    >>> f = compiled_when_large(fnp.sin)
    >>> float(f(0.0))
    0.0
    """
    @functools.wraps(fn)
    def run(*args):
        sizes = [_known_size(a) for a in args]
        if min(sizes, default=0) < 0 or max(sizes, default=0) < EAGER_COMPILE_MIN:
            return fn(*args)
        compiled = _compiled.get(fn)
        if compiled is None:
            compiled = jit(fn)
            _compiled.put(fn, compiled)
        return compiled(*args)
    return run
