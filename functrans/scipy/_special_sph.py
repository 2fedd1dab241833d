"""``sph_harm_y``: spherical harmonics from the fully normalised associated Legendre
functions, built degree by degree with the standard stable three-term recurrences
(no factorials, no overflow), then picked per element by degree and order.
"""
from __future__ import annotations

import numpy as np

from .. import numpy as fnp
from ..typing import Array, ArrayLike

__all__ = ["sph_harm_y"]


def _normalized_legendre(cos_t, sin_t, n_max):
    """P[m][l] = sqrt((2l+1)/(4 pi) (l-m)!/(l+m)!) P_l^m(cos t) (Condon-Shortley phase),
    for 0 <= m <= l <= n_max; entries with l < m are zero: an (n_max+1, n_max+1, ...)
    stack."""
    t = cos_t.dtype.type
    zero = fnp.zeros_like(cos_t)
    rows = []
    diag = fnp.full(cos_t.shape, t(1 / np.sqrt(4 * np.pi)))
    for m in range(n_max + 1):
        if m:
            diag = -np.sqrt((2 * m + 1) / (2 * m)) * sin_t * diag
        row = [zero] * m + [diag]
        if m + 1 <= n_max:
            row.append(np.sqrt(2 * m + 3) * cos_t * diag)
        for l in range(m + 2, n_max + 1):
            a = np.sqrt((4 * l * l - 1) / (l * l - m * m))
            b = np.sqrt(((l - 1) ** 2 - m * m) / (4 * (l - 1) ** 2 - 1))
            row.append(a * (cos_t * row[l - 1] - b * row[l - 2]))
        rows.append(fnp.stack(row, axis=0))
    return fnp.stack(rows, axis=0)


def sph_harm_y(n: ArrayLike, m: ArrayLike, theta: ArrayLike, phi: ArrayLike,
               diff_n: int | None = None, n_max: int | None = None) -> Array:
    """The spherical harmonic Y_n^m(theta, phi) (scipy's ``sph_harm_y``: ``theta`` the
    polar angle, ``phi`` the azimuth), complex: the normalised associated Legendre
    function of cos(theta) times e^(i m phi), Y_n^-m = (-1)^m conj(Y_n^m), zero for
    |m| > n. ``n_max`` bounds the degree (static; by default the largest of a concrete
    ``n``). ``diff_n`` (derivatives) is not supported, as in JAX.

    >>> from functrans.scipy.special import sph_harm_y
    >>> round(float(sph_harm_y(0, 0, 0.3, 0.1).real), 12)
    0.282094791774
    """
    if diff_n not in (None, 0):
        raise NotImplementedError("sph_harm_y: diff_n is not supported (as in JAX)")
    n, m = fnp.asarray(n), fnp.asarray(m)
    theta, phi = fnp.asarray(theta), fnp.asarray(phi)
    if not (fnp.issubdtype(n.dtype, fnp.integer) and fnp.issubdtype(m.dtype, fnp.integer)):
        raise TypeError("sph_harm_y: n and m must be integer arrays")
    dtype = fnp.result_type(theta, phi, np.float64 if theta.dtype.kind in "iub" else theta.dtype)
    theta, phi = theta.astype(dtype), phi.astype(dtype)
    if n_max is None:
        try:
            n_max = int(np.max(np.asarray(n))) if n.size else 0
        except Exception as err:        # a traced n: the bound must be given
            raise ValueError("sph_harm_y: pass n_max when n is not a concrete array") from err
    n_max = max(int(n_max), 0)
    n, m, theta, phi = fnp.broadcast_arrays(n, m, theta, phi)
    # P_n^m(cos theta) has the factor (1 - cos^2)^(m/2) = |sin theta|: a polar angle outside
    # [0, pi] gives scipy's value, even in theta (sin theta flipped the odd-m signs there)
    table = _normalized_legendre(fnp.cos(theta), fnp.abs(fnp.sin(theta)), n_max)
    am = fnp.abs(m)
    valid = (am <= n) & (n >= 0) & (n <= n_max)
    picked = fnp.take_along_axis(
        table.reshape((n_max + 1) * (n_max + 1), -1),
        fnp.clip(am * (n_max + 1) + n, 0, (n_max + 1) ** 2 - 1).reshape(1, -1), axis=0)
    legendre = fnp.where(valid, picked.reshape(n.shape), 0)
    # Y_n^-m = (-1)^m conj(Y_n^m): with P of |m|, the phase e^(i m phi) and the sign
    sign = fnp.where((m < 0) & (am % 2 == 1), -1.0, 1.0).astype(dtype)
    mphi = m.astype(dtype) * phi
    real, imag = sign * legendre * fnp.cos(mphi), sign * legendre * fnp.sin(mphi)
    return real + 1j * imag
