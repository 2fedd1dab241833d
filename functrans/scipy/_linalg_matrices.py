"""Special matrices of ``scipy.linalg`` (toeplitz, hankel, circulant, companion, ...).

Those built from array arguments are gathers from the arguments (so they differentiate
and batch over leading axes, as JAX's do); those built from a size alone are computed
once with numpy, exactly (integer arithmetic where scipy's is exact).
"""
from __future__ import annotations
import math

import numpy as np

from .. import numpy as fnp
from ..array import Array
from ..typing import ArrayLike, DTypeLike

__all__ = ["circulant", "companion", "convolution_matrix", "dft", "fiedler",
           "fiedler_companion", "hadamard", "hankel", "helmert", "hilbert", "invhilbert",
           "invpascal", "leslie", "pascal", "toeplitz"]


def _vector(a, name, empty_ok=False):
    a = fnp.asarray(a)
    if a.ndim == 0:
        a = a[None]
    if a.shape[-1] == 0 and not empty_ok:
        raise ValueError(f"{name}: the input must not be empty (len(a) must be at least 1; "
                         f"got shape {a.shape})")
    return a


def _pair(c, r):
    dtype = fnp.result_type(c, r)
    c, r = fnp.asarray(c, dtype), fnp.asarray(r, dtype)
    batch = np.broadcast_shapes(c.shape[:-1], r.shape[:-1])
    return (fnp.broadcast_to(c, batch + c.shape[-1:]),
            fnp.broadcast_to(r, batch + r.shape[-1:]))


def toeplitz(c: ArrayLike, r: ArrayLike | None = None) -> Array:
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (``r[0]`` is
    ignored; ``r`` defaults to ``conj(c)``); leading axes are batch axes.

    >>> from functrans.scipy.linalg import toeplitz
    >>> toeplitz([1, 2, 3], [1, 4, 5]).tolist()
    [[1, 4, 5], [2, 1, 4], [3, 2, 1]]
    """
    c = _vector(c, "toeplitz", empty_ok=True)
    r = fnp.conj(c) if r is None else _vector(r, "toeplitz", empty_ok=True)
    c, r = _pair(c, r)
    m, n = c.shape[-1], r.shape[-1]
    # T[i, j] = c[i - j] below the diagonal, r[j - i] above: one gather from
    # [r[n-1], ..., r[1], c[0], ..., c[m-1]] at i - j + n - 1
    values = fnp.concatenate([fnp.flip(r[..., 1:], -1), c], axis=-1)
    idx = np.arange(m)[:, None] - np.arange(n)[None, :] + n - 1
    return values[..., idx]


def hankel(c: ArrayLike, r: ArrayLike | None = None) -> Array:
    """The Hankel matrix with first column ``c`` and last row ``r`` (``r[0]`` is
    ignored; zeros by default); leading axes are batch axes.

    >>> from functrans.scipy.linalg import hankel
    >>> hankel([1, 2, 3], [3, 4, 5]).tolist()
    [[1, 2, 3], [2, 3, 4], [3, 4, 5]]
    """
    c = _vector(c, "hankel", empty_ok=True)
    r = fnp.zeros_like(c) if r is None else _vector(r, "hankel", empty_ok=True)
    c, r = _pair(c, r)
    m, n = c.shape[-1], r.shape[-1]
    values = fnp.concatenate([c, r[..., 1:]], axis=-1)
    return values[..., np.arange(m)[:, None] + np.arange(n)[None, :]]


def circulant(c: ArrayLike) -> Array:
    """The circulant matrix with first column ``c``: ``C[i, j] = c[(i - j) % n]``.

    >>> from functrans.scipy.linalg import circulant
    >>> circulant([1, 2, 3]).tolist()
    [[1, 3, 2], [2, 1, 3], [3, 2, 1]]
    """
    c = _vector(c, "circulant", empty_ok=True)
    n = c.shape[-1]
    return c[..., (np.arange(n)[:, None] - np.arange(n)[None, :]) % n]


def companion(a: ArrayLike) -> Array:
    """The companion matrix of the polynomial with coefficients ``a`` (highest first):
    first row ``-a[1:] / a[0]``, ones on the subdiagonal.

    >>> from functrans.scipy.linalg import companion
    >>> companion([1.0, -3.0, 2.0]).tolist()
    [[3.0, -2.0], [1.0, 0.0]]
    """
    a = fnp.asarray(a)
    if a.ndim == 0 or a.shape[-1] < 2:
        raise ValueError(f"companion: the length of `a` along the last axis must be at "
                         f"least 2; got shape {a.shape}")
    a = a if fnp.issubdtype(a.dtype, fnp.inexact) else a.astype(fnp.float64)
    n = a.shape[-1] - 1
    first = -a[..., 1:] / a[..., :1]
    below = fnp.broadcast_to(fnp.asarray(np.eye(n - 1, n, dtype=a.dtype)),
                             a.shape[:-1] + (n - 1, n))
    return fnp.concatenate([first[..., None, :], below], axis=-2)


def convolution_matrix(a: ArrayLike, n: int, mode: str = "full") -> Array:
    """The matrix ``A`` with ``A @ v == convolve(a, v, mode)`` for ``v`` of length ``n``.

    >>> from functrans.scipy.linalg import convolution_matrix
    >>> convolution_matrix([1, 2], 2).tolist()
    [[1, 0], [2, 1], [0, 2]]
    """
    if n <= 0:
        raise ValueError(f"convolution_matrix: n must be a positive integer; got {n}")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"convolution_matrix: mode must be one of 'full', 'valid', 'same'; "
                         f"got {mode!r}")
    if np.ndim(a) == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional; got a scalar")
    a = _vector(a, "convolution_matrix")
    m = a.shape[-1]
    zeros = fnp.zeros(a.shape[:-1] + (n - 1,), a.dtype)
    full = toeplitz(fnp.concatenate([a, zeros], axis=-1),
                    fnp.concatenate([a[..., :1], zeros], axis=-1))
    trim = {"full": 0, "same": min(m, n) - 1, "valid": 2 * (min(m, n) - 1)}[mode]
    top = trim // 2
    return full[..., top:m + n - 1 - (trim - top), :]


def dft(n: int, scale: str | None = None, *, dtype: DTypeLike | None = None) -> Array:
    """The ``n``-point discrete Fourier transform matrix ``exp(-2 pi i j k / n)``,
    divided by ``sqrt(n)`` (``scale='sqrtn'``) or ``n`` (``scale='n'``).

    >>> from functrans.scipy.linalg import dft
    >>> dft(2).real.tolist()
    [[1.0, 1.0], [1.0, -1.0]]
    """
    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"dft: scale must be None, 'sqrtn' or 'n', got {scale!r}")
    if dtype is not None and np.dtype(dtype).kind != "c":     # was cast, dropping .imag
        raise ValueError(f"dft: dtype must be a complex floating-point type; got "
                         f"{np.dtype(dtype)}")
    jk = np.outer(np.arange(n), np.arange(n)) % max(n, 1)    # exact phase: jk mod n
    m = np.exp(-2j * np.pi * jk / max(n, 1))
    m = m / {None: 1.0, "sqrtn": math.sqrt(n), "n": float(n)}[scale]
    return fnp.asarray(m, dtype or np.complex128)


def fiedler(a: ArrayLike) -> Array:
    """The symmetric Fiedler matrix ``|a[i] - a[j]|``; leading axes are batch axes.

    >>> from functrans.scipy.linalg import fiedler
    >>> fiedler([1, 4, 12]).tolist()
    [[0, 3, 11], [3, 0, 8], [11, 8, 0]]
    """
    a = fnp.asarray(a)
    if a.ndim == 0:
        a = a[None]
    return fnp.abs(a[..., :, None] - a[..., None, :])


def fiedler_companion(a: ArrayLike) -> Array:
    """Fiedler's pentadiagonal companion matrix of the polynomial ``a`` (highest
    coefficient first); its eigenvalues are the roots, as ``companion``'s.

    >>> from functrans.scipy.linalg import fiedler_companion
    >>> fiedler_companion([1.0, -3.0, 2.0]).tolist()
    [[3.0, -2.0], [1.0, 0.0]]
    """
    a = fnp.asarray(a)
    if a.ndim == 0 or a.shape[-1] == 0:
        raise ValueError(f"fiedler_companion requires the last axis of 'a' to have nonzero "
                         f"length, got shape {a.shape}")
    a = a if fnp.issubdtype(a.dtype, fnp.inexact) else a.astype(fnp.float64)
    if a.shape[-1] == 1:        # a constant: no roots, an empty matrix (as JAX)
        return fnp.zeros(a.shape[:-1] + (0, 0), a.dtype)
    a = a / a[..., :1]
    n = a.shape[-1] - 1
    if n == 1:
        return -a[..., 1:, None]
    # each entry is a constant or -a[k]: one gather from [0, 1, -a[1], ..., -a[n]]
    idx = np.zeros((n, n), np.intp)
    idx[np.arange(3, n, 2), np.arange(1, n - 2, 2)] = 1
    idx[np.arange(2, n, 2), np.arange(1, n - 1, 2)] = np.arange(3, n + 1, 2) + 1
    idx[np.arange(0, n - 2, 2), np.arange(2, n, 2)] = 1
    idx[np.arange(0, n - 1, 2), np.arange(1, n, 2)] = np.arange(2, n + 1, 2) + 1
    idx[0, 0], idx[1, 0] = 2, 1
    const = fnp.broadcast_to(fnp.asarray(np.array([0.0, 1.0], a.dtype)), a.shape[:-1] + (2,))
    values = fnp.concatenate([const, -a[..., 1:]], axis=-1)
    return values[..., idx]


def leslie(f: ArrayLike, s: ArrayLike) -> Array:
    """The Leslie matrix: fecundities ``f`` (length n) on the first row, survival
    rates ``s`` (length n - 1) on the subdiagonal; leading axes are batch axes.

    >>> from functrans.scipy.linalg import leslie
    >>> leslie([0.5, 2.0], [0.25]).tolist()
    [[0.5, 2.0], [0.25, 0.0]]
    """
    f, s = fnp.asarray(f), fnp.asarray(s)
    if f.ndim == 0 or f.shape[-1] < 2:
        raise ValueError(f"leslie: the length of f along the last axis must be at least 2; "
                         f"got shape {f.shape}")
    if s.ndim == 0 or f.shape[-1] != s.shape[-1] + 1:
        raise ValueError(f"leslie: Incorrect lengths for f and s: s needs one entry less "
                         f"than f along the last axis; got shapes {f.shape} and {s.shape}")
    f, s = _pair(f, s)
    n = f.shape[-1]
    zero = fnp.zeros(s.shape[:-1] + (1,), s.dtype)
    values = fnp.concatenate([zero, s], axis=-1)
    idx = np.where(np.arange(1, n)[:, None] == np.arange(n)[None, :] + 1,
                   np.arange(1, n)[:, None], 0)
    return fnp.concatenate([f[..., None, :], values[..., idx]], axis=-2)


def hadamard(n: int, dtype: DTypeLike = int) -> Array:
    """The Sylvester-Hadamard matrix of order ``n`` (a power of two).

    >>> from functrans.scipy.linalg import hadamard
    >>> hadamard(2).tolist()
    [[1, 1], [1, -1]]
    """
    if n < 1 or n & (n - 1):
        raise ValueError(f"hadamard: n must be a positive power of 2; got {n}")
    h = np.ones((1, 1), dtype)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return fnp.asarray(h)


def helmert(n: int, full: bool = False) -> Array:
    """The Helmert matrix of order ``n``: orthogonal, first row ``1/sqrt(n)``; without
    ``full``, that row is dropped.

    >>> from functrans.scipy.linalg import helmert
    >>> round(float(helmert(2, full=True)[1, 0]), 12)
    0.707106781187
    """
    if n < 1:
        raise ValueError(f"helmert: n must be a positive integer; got {n}")
    h = np.tril(np.ones((n, n)), -1) - np.diag(np.arange(n))
    d = np.arange(n) * np.arange(1, n + 1)
    h[0] = 1.0
    d[0] = n
    h = h / np.sqrt(d)[:, None]
    return fnp.asarray(h if full else h[1:])


def hilbert(n: int) -> Array:
    """The Hilbert matrix ``1 / (i + j + 1)``.

    >>> from functrans.scipy.linalg import hilbert
    >>> hilbert(2).tolist()
    [[1.0, 0.5], [0.5, 0.3333333333333333]]
    """
    i = np.arange(n, dtype=np.float64)
    return fnp.asarray(1.0 / (i[:, None] + i[None, :] + 1.0))


def invhilbert(n: int) -> Array:
    """The inverse of the Hilbert matrix of order ``n``, from its closed form in
    integers (exact while the entries fit float64's 53 bits, n <= 13 or so).

    >>> from functrans.scipy.linalg import invhilbert
    >>> invhilbert(2).tolist()
    [[4.0, -6.0], [-6.0, 12.0]]
    """
    out = np.empty((n, n))
    for i in range(n):
        for j in range(i + 1):
            v = ((-1) ** (i + j) * (i + j + 1) * math.comb(n + i, n - j - 1)
                 * math.comb(n + j, n - i - 1) * math.comb(i + j, i) ** 2)
            out[i, j] = out[j, i] = float(v)
    return fnp.asarray(out)


def _pascal_lower(n):
    low = np.zeros((n, n), dtype=object)
    for i in range(n):
        for j in range(i + 1):
            low[i, j] = math.comb(i, j)
    return low


def pascal(n: int, kind: str | None = None) -> Array:
    """The Pascal matrix: binomial coefficients, ``kind`` 'symmetric' (default), 'lower'
    or 'upper'; float64 (as JAX's), each entry computed in integers then rounded once.

    >>> from functrans.scipy.linalg import pascal
    >>> pascal(3).tolist()
    [[1.0, 1.0, 1.0], [1.0, 2.0, 3.0], [1.0, 3.0, 6.0]]
    """
    kind = kind or "symmetric"
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"pascal: kind must be 'symmetric', 'lower' or 'upper', got {kind!r}")
    low = _pascal_lower(n)
    p = {"lower": low, "upper": low.T, "symmetric": low.dot(low.T) if n else low}[kind]
    return _exact(p)


def invpascal(n: int, kind: str | None = None) -> Array:
    """The inverse of ``pascal(n, kind)``, computed in integers, float64.

    >>> from functrans.scipy.linalg import invpascal
    >>> invpascal(3).tolist()
    [[3.0, -3.0, 1.0], [-3.0, 5.0, -2.0], [1.0, -2.0, 1.0]]
    """
    kind = kind or "symmetric"
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"invpascal: Expected kind to be one of: ['symmetric', 'lower', "
                         f"'upper']; got {kind!r}")
    sign = (-1) ** np.add.outer(np.arange(n), np.arange(n))
    inv_low = _pascal_lower(n) * sign.astype(object)        # inverse of lower pascal
    p = {"lower": inv_low, "upper": inv_low.T,
         "symmetric": inv_low.T.dot(inv_low) if n else inv_low}[kind]
    return _exact(p)


def _exact(p):
    # integer products first, one rounding to float64 at the end (JAX's dtype)
    return fnp.asarray(np.array(p, dtype=np.float64).reshape(p.shape))
