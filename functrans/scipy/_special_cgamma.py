"""log Gamma and Gamma of complex arguments (scipy's algorithm, composed from functrans
operations, so every transform applies): the principal branch of log Gamma, continuous
off the negative real axis, as ``scipy.special.loggamma``.

- ``Re z >= 7`` or ``|Im z| > 7``: Stirling's series with 8 terms;
- ``0.1 <= Re z < 7``: the recurrence ``loggamma(z) = loggamma(z + n) - sum_k log(z + k)``
  up to ``Re z >= 7`` (principal logs keep the principal branch);
- ``Re z < 0.1``: the reflection ``log pi - log sin(pi z) - loggamma(1 - z)`` plus the
  multiple of ``2 pi i`` that makes it the principal branch (scipy's correction).

Near the zeros of log Gamma (z = 1, 2) the error is absolute (~1e-15), not relative.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .. import numpy as fnp
from ..typing import Array

__all__ = ["complex_loggamma", "complex_gamma"]

_B = (Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30), Fraction(5, 66),
      Fraction(-691, 2730), Fraction(7, 6), Fraction(-3617, 510))
# B_2k / (2k (2k - 1)): the coefficients of z^-(2k-1) in Stirling's series
_STIRLING = tuple(float(b / (2 * k * (2 * k - 1))) for k, b in enumerate(_B, start=1))
_SHIFT = 7
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _stirling(z):
    r = 1.0 / z
    r2 = r * r
    series = z.dtype.type(_STIRLING[-1])
    for c in reversed(_STIRLING[:-1]):
        series = series * r2 + z.dtype.type(c)
    return (z - 0.5) * fnp.log(z) - z + z.dtype.type(_HALF_LOG_2PI) + series * r


def _recurrence(z):
    """loggamma for 0.1 <= Re z < 7: shift up by n = ceil(7 - Re z) (at most 7 steps)."""
    n = fnp.clip(fnp.ceil(_SHIFT - fnp.real(z)), 0, _SHIFT)
    logs = fnp.zeros_like(z)
    for k in range(_SHIFT):
        logs = logs + fnp.where(k < n, fnp.log(z + k), 0)
    return _stirling(z + n.astype(z.dtype)) - logs


def _sinpi(z):
    """sin(pi z) with the real part reduced exactly first (sin(pi x) loses digits for
    large x when pi x is rounded)."""
    x, y = fnp.real(z), fnp.imag(z)
    r = x - 2.0 * fnp.round(x / 2.0)             # in [-1, 1], exact
    s, c = fnp.sin(np.pi * r), fnp.cos(np.pi * r)
    s = fnp.where(r == fnp.round(r), 0.0, s)     # exact zeros at the integers
    return fnp.asarray(s * fnp.cosh(np.pi * y) + 1j * (c * fnp.sinh(np.pi * y))).astype(z.dtype)


def complex_loggamma(z: Array) -> Array:
    """The principal branch of log Gamma(z) for complex ``z``; NaN + NaN j at the poles
    (z = 0, -1, -2, ...) and for NaN input, as scipy."""
    dt = z.dtype
    x, y = fnp.real(z), fnp.imag(z)
    pole = (y == 0) & (x <= 0) & (x == fnp.floor(x))
    bad = pole | fnp.isnan(x) | fnp.isnan(y)
    z = fnp.where(bad, dt.type(2.0), z)          # a safe stand-in (no NaN in any branch)
    x, y = fnp.real(z), fnp.imag(z)
    big = (x >= _SHIFT) | (fnp.abs(y) > _SHIFT)
    refl = ~big & (x < 0.1)
    mid = ~big & ~refl
    z_big = fnp.where(big, z, dt.type(_SHIFT))
    z_mid = fnp.where(mid, z, dt.type(1.5))
    z_ref = fnp.where(refl, z, dt.type(-0.5 + 0.5j))
    w = 1.0 - z_ref                              # Re w > 0.9: the recurrence's domain
    lg_w = fnp.where(fnp.real(w) >= _SHIFT, _stirling(fnp.where(fnp.real(w) >= _SHIFT, w, dt.type(_SHIFT))),
                     _recurrence(fnp.where(fnp.real(w) >= _SHIFT, dt.type(1.5), w)))
    xr, yr = fnp.real(z_ref), fnp.imag(z_ref)
    branch = fnp.copysign(2 * np.pi, yr) * fnp.floor(0.5 * xr + 0.25)
    reflected = (fnp.asarray(math.log(math.pi) + 1j * branch).astype(dt)
                 - fnp.log(_sinpi(z_ref)) - lg_w)
    out = fnp.where(big, _stirling(z_big), fnp.where(refl, reflected, _recurrence(z_mid)))
    return fnp.where(bad, dt.type(complex(np.nan, np.nan)), out)


def complex_gamma(z: Array) -> Array:
    """Gamma(z) = exp(loggamma(z)) for complex ``z`` (NaN + NaN j at the poles)."""
    return fnp.exp(complex_loggamma(z))
