"""``functrans.scipy``: the ``jax.scipy`` surface (special, stats, linalg, signal),
composed from functrans operations, so every function is differentiable, batchable
and compiles under ``jit`` like the rest of the library.

>>> import functrans.scipy as fsp
>>> round(float(fsp.special.ndtr(1.0)), 12)
0.841344746069
"""
from . import integrate, linalg, signal, special, stats

__all__ = ["integrate", "linalg", "signal", "special", "stats"]
