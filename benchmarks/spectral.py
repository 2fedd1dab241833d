"""FFT and symmetric eigendecomposition against numpy (issue 14's targets):

- a complex128 FFT of 2^20 points: ``jit(fnp.fft.fft)`` and eager ``fnp.fft.fft``
  against ``numpy.fft.fft`` (target: jit ≤ 1.2× numpy);
- a batched small transform, 4096 float64 rows of 64 points: ``jit(fnp.fft.rfft)``
  against ``numpy.fft.rfft`` (reported, no target);
- ``eigh`` of a 256 × 256 float64 symmetric matrix: ``jit(fnp.linalg.eigh)`` and eager
  against ``numpy.linalg.eigh`` (target: jit ≤ 1.2× numpy);
- ``eigh`` of a 128 × 128 complex128 Hermitian matrix (``zheevd`` called natively under
  jit, with the eigenvector phase fix-up numpy does not do): the same comparison.

JAX's jitted same is reported beside them when installed. Each candidate's result is
made a numpy array (functrans' jit returns host arrays already)."""
from __future__ import annotations

import numpy as np

from .harness import Workload

FFT_N = 1 << 20
EIGH_N = 256


def _fft_setup():
    import functrans as ft
    import functrans.numpy as fnp
    rng = np.random.default_rng(0)
    x = rng.standard_normal(FFT_N) + 1j * rng.standard_normal(FFT_N)
    jitted = ft.jit(fnp.fft.fft)
    c = {"numpy.fft.fft": lambda: np.fft.fft(x),
         "functrans jit": lambda: np.asarray(jitted(x)),
         "functrans eager": lambda: np.asarray(fnp.fft.fft(x))}
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        jf = jax.jit(jax.numpy.fft.fft)
        jx = jax.numpy.asarray(x)
        c["jax jit"] = lambda: jax.block_until_ready(jf(jx))
    except ImportError:
        pass
    return c


def _rfft_batch_setup():
    import functrans as ft
    import functrans.numpy as fnp
    x = np.random.default_rng(0).standard_normal((4096, 64))
    jitted = ft.jit(fnp.fft.rfft)
    c = {"numpy.fft.rfft": lambda: np.fft.rfft(x),
         "functrans jit": lambda: np.asarray(jitted(x)),
         "functrans eager": lambda: np.asarray(fnp.fft.rfft(x))}
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        jf = jax.jit(jax.numpy.fft.rfft)
        jx = jax.numpy.asarray(x)
        c["jax jit"] = lambda: jax.block_until_ready(jf(jx))
    except ImportError:
        pass
    return c


def _eigh_setup(n=EIGH_N, cplx=False):
    import functrans as ft
    import functrans.numpy as fnp
    rng = np.random.default_rng(0)
    r = rng.standard_normal((n, n))
    if cplx:
        r = r + 1j * rng.standard_normal((n, n))
    a = r + np.conj(r.T)
    jitted = ft.jit(fnp.linalg.eigh)

    def leaves(out):
        return [np.asarray(v) for v in out]
    c = {"numpy.linalg.eigh": lambda: np.linalg.eigh(a),
         "functrans jit": lambda: leaves(jitted(a)),
         "functrans eager": lambda: leaves(fnp.linalg.eigh(a))}
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        je = jax.jit(jax.numpy.linalg.eigh)
        ja = jax.numpy.asarray(a)
        c["jax jit"] = lambda: jax.block_until_ready(je(ja))
    except ImportError:
        pass
    return c


def _jit_within(limit):
    def check(ratios):
        return ratios["functrans jit"] <= limit
    return check


WORKLOADS = [
    Workload("fft, complex128, 2^20 points", _fft_setup, baseline="numpy.fft.fft",
             target="functrans jit ≤ 1.2× numpy", check=_jit_within(1.2), group="spectral"),
    Workload("rfft, float64, 4096 × 64 points", _rfft_batch_setup, baseline="numpy.fft.rfft",
             group="spectral"),
    Workload("eigh, float64, 256 × 256", _eigh_setup, baseline="numpy.linalg.eigh",
             target="functrans jit ≤ 1.2× numpy", check=_jit_within(1.2), group="spectral"),
    Workload("eigh, complex128, 128 × 128", lambda: _eigh_setup(128, True),
             baseline="numpy.linalg.eigh", target="functrans jit ≤ 1.2× numpy",
             check=_jit_within(1.2), group="spectral"),
]
