"""``functrans.scipy``: the ``jax.scipy`` surface (special, stats, linalg, signal,
integrate, fft, optimize), composed from functrans operations, so every function is
differentiable, batchable and compiles under ``jit`` like the rest of the library (no
new primitive: special functions are series, continued fractions and recurrences over
lax ops, with ``custom_jvp`` derivative rules).

Not provided yet (jax.scipy has them): special bessel_jn, expn, fresnel, hyp1f1,
hyp2f1, owens_t, sici, sph_harm_y, wofz, and loggamma of complex input; stats
gaussian_kde; linalg functions beyond its ``__all__``; signal fftconvolve, stft,
istft, welch, csd, detrend; optimize's experimental L-BFGS method; the cluster,
interpolate, ndimage and sparse modules.

>>> import functrans.scipy as fsp
>>> round(float(fsp.special.ndtr(1.0)), 12)
0.841344746069
"""
from . import fft, integrate, linalg, optimize, signal, special, stats

__all__ = ["fft", "integrate", "linalg", "optimize", "signal", "special", "stats"]
