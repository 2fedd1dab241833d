"""``functrans.scipy``: the ``jax.scipy`` surface (special, stats, linalg, signal,
integrate, fft, optimize, sparse, interpolate, ndimage, cluster), composed from functrans operations, so every function is
differentiable, batchable and compiles under ``jit`` like the rest of the library (no
new primitive: special functions are series, continued fractions and recurrences over
lax ops, with ``custom_jvp`` derivative rules).

Not provided yet (jax.scipy has them): special bessel_jn, expn, fresnel, hyp1f1,
hyp2f1, owens_t, sici, sph_harm_y, wofz, and loggamma of complex input; stats
gaussian_kde; signal fftconvolve, stft, istft, welch, csd, detrend; optimize's
experimental L-BFGS method; the spatial module (tests/test_scipy_coverage.py keeps the
list of what is left out).

>>> import functrans.scipy as fsp
>>> round(float(fsp.special.ndtr(1.0)), 12)
0.841344746069
"""
from . import (cluster, fft, integrate, interpolate, linalg, ndimage, optimize, signal, sparse,
               special, stats)

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize",
           "signal", "sparse", "special", "stats"]
