"""``functrans.scipy``: the ``jax.scipy`` surface (special, stats, linalg, signal,
integrate, fft, optimize, sparse, interpolate, ndimage, cluster, spatial), composed from
functrans operations, so every function is differentiable, batchable and compiles
under ``jit`` like the rest of the library (special functions are series, continued
fractions and recurrences over lax ops, with ``custom_jvp`` derivative rules).

What jax.scipy has and this does not is listed, with the reason, in
tests/test_scipy_coverage.py's LEFT_OUT and in the README.

>>> import functrans.scipy as fsp
>>> round(float(fsp.special.ndtr(1.0)), 12)
0.841344746069
"""
from . import (cluster, fft, integrate, interpolate, linalg, ndimage, optimize, signal, sparse,
               spatial, special, stats)

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize",
           "signal", "sparse", "spatial", "special", "stats"]
