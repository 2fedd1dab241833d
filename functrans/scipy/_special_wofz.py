"""``wofz``, the Faddeeva function w(z) = e^(-z^2) erfc(-i z), by Weideman's rational
expansion (SIAM J. Numer. Anal. 31, 1994): in the upper half plane
w(z) = 2 p(Z) / (L - i z)^2 + 1 / (sqrt(pi) (L - i z)), Z = (L + i z) / (L - i z), p a
degree-39 polynomial whose coefficients come once from an FFT; the lower half plane by
w(z) = 2 e^(-z^2) - w(-z). The arithmetic runs on real and imaginary parts, so the CPU
backend keeps it native (only the complex input and output are complex ops).
"""
from __future__ import annotations

import numpy as np

from .. import numpy as fnp
from ..custom_derivatives import custom_jvp
from ..typing import Array, ArrayLike

__all__ = ["wofz"]

_N = 40


def _weideman_coefficients(n):
    m = 2 * n
    k = np.arange(-m + 1, m)
    length = np.sqrt(n / np.sqrt(2))
    t = length * np.tan(k * np.pi / (2 * m))
    f = np.concatenate([[0.0], np.exp(-t * t) * (length * length + t * t)])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return a[1:n + 1][::-1].copy(), length         # highest power first


_COEFFS, _L = _weideman_coefficients(_N)


def _cmul(ar, ai, br, bi):
    return ar * br - ai * bi, ar * bi + ai * br


def _cdiv(ar, ai, br, bi):
    d = br * br + bi * bi
    return (ar * br + ai * bi) / d, (ai * br - ar * bi) / d


def _upper(x, y):
    """w(x + i y) for y >= 0, as (real, imaginary)."""
    t = x.dtype.type
    # L - i z = (L + y) - i x;  L + i z = (L - y) + i x
    dr, di = t(_L) + y, -x
    zr, zi = _cdiv(t(_L) - y, x, dr, di)
    pr, pi_ = fnp.full(x.shape, t(_COEFFS[0])), fnp.zeros_like(x)
    for c in _COEFFS[1:]:
        pr, pi_ = _cmul(pr, pi_, zr, zi)
        pr = pr + t(c)
    d2r, d2i = _cmul(dr, di, dr, di)
    ar, ai = _cdiv(t(2) * pr, t(2) * pi_, d2r, d2i)
    br, bi = _cdiv(t(1 / np.sqrt(np.pi)), t(0), dr, di)
    return ar + br, ai + bi


@custom_jvp
def _wofz(z):
    x, y = fnp.real(z), fnp.imag(z)
    t = x.dtype.type
    finite = fnp.isfinite(x) & fnp.isfinite(y)
    x, y = fnp.where(finite, x, t(0)), fnp.where(finite, y, t(0))     # fixed up below
    lower = y < 0
    ux, uy = fnp.where(lower, -x, x), fnp.where(lower, -y, y)
    wr, wi = _upper(ux, uy)
    # lower half plane: 2 e^(-z^2) - w(-z), e^(-z^2) = e^(y^2 - x^2) (cos 2xy - i sin 2xy)
    mag = t(2) * fnp.exp(fnp.where(lower, y * y - x * x, t(0)))
    er, ei = mag * fnp.cos(t(2) * x * y), -mag * fnp.sin(t(2) * x * y)
    wr = fnp.where(lower, er - wr, wr)
    wi = fnp.where(lower, ei - wi, wi)
    x0, y0 = fnp.real(z), fnp.imag(z)
    nan = fnp.isnan(x0) | fnp.isnan(y0) | ((y0 == -np.inf) & (x0 != 0))   # scipy's
    down = (x0 == 0) & (y0 == -np.inf)               # w(-i inf) = 2 e^(inf): inf, as scipy
    big = ~finite & ~nan & ~down
    wr = fnp.where(big, t(0), fnp.where(nan, t(np.nan), fnp.where(down, t(np.inf), wr)))
    wi = fnp.where(big | down, t(0), fnp.where(nan, t(np.nan), wi))
    return wr + 1j * wi


@_wofz.defjvp
def _wofz_jvp(primals, tangents):
    (z,), (tz,) = primals, tangents
    w = _wofz(z)
    # w'(z) = -2 z w(z) + 2 i / sqrt(pi)
    return w, (-2 * z * w + 2j / np.sqrt(np.pi)) * tz


def wofz(z: ArrayLike) -> Array:
    """The Faddeeva function w(z) = e^(-z^2) erfc(-i z) (complex; real input is taken
    as complex), within about 3e-14 relative of scipy's in the upper half plane; in the
    lower half plane through 2 e^(-z^2) - w(-z) (overflowing where e^(-z^2) does, as
    scipy's). Holomorphic: its derivative is -2 z w(z) + 2 i / sqrt(pi).

    >>> from functrans.scipy.special import wofz
    >>> round(float(wofz(0.0).real), 12)
    1.0
    """
    z = fnp.asarray(z)
    if z.dtype.kind in "iub":
        z = z.astype(np.float64)
    ctype = np.complex64 if z.dtype in (np.float32, np.complex64) else np.complex128
    return _wofz(z.astype(ctype))
