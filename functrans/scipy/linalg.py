"""``functrans.scipy.linalg``: scipy's conventions over ``functrans.numpy.linalg`` and
``lax`` (cholesky's ``lower`` flag, cho_factor/cho_solve pairs, solve_triangular's
``trans``), plus ``expm`` by Pade scaling and squaring built from matmul and solve,
so it differentiates by composition.  qr, svd and eigh call
``functrans.numpy.linalg`` at call time.  lu, lu_factor and lu_solve stand on the
``lax.lu`` primitive (LU with partial pivoting, differentiable) and triangular solves;
sqrtm on a Schur-method primitive (complex as JAX's; differentiable, JAX's is not).

>>> import numpy as np
>>> from functrans.scipy import linalg
>>> linalg.expm(np.zeros((2, 2))).tolist()
[[1.0, 0.0], [0.0, 1.0]]
"""
from __future__ import annotations
import math as _math

import numpy as _np

from .. import lax as _lax
from .. import numpy as _fnp
from ..primitives.linalg_decomp import qr_pivots as _qr_pivots
from ..primitives.linalg_sqrtm import sqrtm as _sqrtm
from ._special_gamma import as_float as _as_float
from ._linalg_matrices import (circulant, companion, convolution_matrix, dft, fiedler,
                               fiedler_companion, hadamard, hankel, helmert, hilbert,
                               invhilbert, invpascal, leslie, pascal, toeplitz)
from ._linalg_extra import eigh_tridiagonal, hessenberg, polar, qr_multiply, rsf2csf
from ._linalg_sylvester import solve_sylvester
from ._linalg_schur import funm, schur
from ..array import Array
from ..typing import ArrayLike

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "det", "eigh", "expm",
           "inv", "lu", "lu_factor", "lu_solve", "qr", "solve", "solve_triangular", "sqrtm",
           "svd", "circulant", "companion", "convolution_matrix", "dft", "fiedler",
           "fiedler_companion", "hadamard", "hankel", "helmert", "hilbert", "invhilbert",
           "invpascal", "leslie", "pascal", "toeplitz", "eigh_tridiagonal", "expm_frechet",
           "hessenberg", "polar", "qr_multiply", "rsf2csf", "solve_sylvester",
           "schur", "funm"]


def _inexact(*xs):
    """Arrays of one inexact dtype: complex inputs promote all to complex (as jax.scipy,
    whose linalg takes Hermitian/complex matrices), otherwise ``as_float``'s rules."""
    arrs = [_fnp.asarray(x) for x in xs]
    if not any(_fnp.iscomplexobj(a) for a in arrs):
        return _as_float(*xs)
    dt = _fnp.result_type(*[x if type(x) in (int, float, complex) else a.dtype
                            for x, a in zip(xs, arrs)])
    out = [_fnp.asarray(a, dt) for a in arrs]
    return out[0] if len(out) == 1 else out


def _matrix(a):
    a = _inexact(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"expected square matrices (..., n, n), got shape {a.shape}")
    return a


def cholesky(a: ArrayLike, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Array:
    """The Cholesky factor: upper ``U`` with ``a = U^H U`` by default (scipy's
    convention), lower ``L`` with ``lower=True``; only that triangle of ``a`` is read
    (the other may hold anything, e.g. zeros), as scipy and JAX.

    >>> from functrans.scipy.linalg import cholesky
    >>> cholesky(_np.array([[4.0, 2.0], [2.0, 2.0]])).tolist()
    [[2.0, 1.0], [0.0, 1.0]]
    """
    x = _matrix(a)                # only the triangle named by ``lower`` is read, as scipy
    if lower:
        return _lax.linalg.cholesky(x, symmetrize_input=False)
    xh = _fnp.conj(_fnp.swapaxes(x, -1, -2))
    return _fnp.conj(_fnp.swapaxes(_lax.linalg.cholesky(xh, symmetrize_input=False), -1, -2))


def cho_factor(a: ArrayLike, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Array, bool]:
    """``(c, lower)`` for cho_solve; the unused triangle of ``c`` is zero.

    >>> from functrans.scipy.linalg import cho_factor
    >>> cho_factor(_np.array([[4.0, 2.0], [2.0, 2.0]]), lower=True)[1]
    True
    """
    return cholesky(a, lower=lower), lower


def solve_triangular(a: ArrayLike, b: ArrayLike, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     check_finite: bool = True) -> Array:
    """Solve ``op(a) x = b`` for triangular ``a``; ``trans`` 0/'N', 1/'T' or 2/'C'.
    ``b`` 1-d, or of rank ``a.ndim - 1`` ending in n, is one vector (JAX's rule); the
    batch axes of ``a`` and ``b`` broadcast.

    >>> from functrans.scipy.linalg import solve_triangular
    >>> solve_triangular(_np.array([[2.0, 0.0], [1.0, 1.0]]), _np.array([2.0, 3.0]),
    ...                  lower=True).tolist()
    [1.0, 2.0]
    """
    a, b = _inexact(_matrix(a), b)
    code = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2}.get(trans)
    if code is None:
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    if code == 2:                     # a^H x = b is conj(a)^T x = b
        a = _fnp.conj(a)
    # JAX's rule: b is one vector (or a stack of them) when 1-d or one rank below a with
    # a matching last axis, else (..., n, k); the batch axes of a and b broadcast
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape[-1] == a.shape[-1])
    rhs = b[..., None] if vector else b
    batch = _np.broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    a = _fnp.broadcast_to(a, batch + a.shape[-2:])
    rhs = _fnp.broadcast_to(rhs, batch + rhs.shape[-2:])
    x = _lax.triangular_solve(a, rhs, left_side=True, lower=lower, transpose_a=code != 0,
                              unit_diagonal=unit_diagonal)
    return x[..., 0] if vector else x


def cho_solve(c_and_lower: tuple[ArrayLike, bool], b: ArrayLike, overwrite_b: bool = False,
              check_finite: bool = True) -> Array:
    """Solve ``a x = b`` from ``cho_factor(a)``.

    >>> from functrans.scipy.linalg import cho_factor, cho_solve
    >>> a = _np.array([[4.0, 2.0], [2.0, 2.0]])
    >>> cho_solve(cho_factor(a), _np.array([4.0, 2.0])).tolist()
    [1.0, 0.0]
    """
    c, lower = c_and_lower
    if lower:                 # a = c c^H (c^T for real c)
        y = solve_triangular(c, b, lower=True)
        return solve_triangular(c, y, trans=2, lower=True)
    y = solve_triangular(c, b, trans=2, lower=False)
    return solve_triangular(c, y, lower=False)


def det(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """The determinant.

    >>> from functrans.scipy.linalg import det
    >>> round(float(det(_np.array([[2.0, 1.0], [1.0, 3.0]]))), 12)
    5.0
    """
    return _fnp.linalg.det(_matrix(a))


def inv(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> Array:
    """The inverse.

    >>> from functrans.scipy.linalg import inv
    >>> inv(_np.array([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    return _fnp.linalg.inv(_matrix(a))


def solve(a: ArrayLike, b: ArrayLike, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, check_finite: bool = True, assume_a: str = "gen") -> Array:
    """Solve ``a x = b``; ``assume_a='pos'`` goes through Cholesky.

    >>> from functrans.scipy.linalg import solve
    >>> solve(_np.array([[2.0, 0.0], [0.0, 4.0]]), _np.array([2.0, 4.0])).tolist()
    [1.0, 1.0]
    """
    if assume_a == "pos":
        return cho_solve(cho_factor(a, lower=lower), b)
    if assume_a not in ("gen", "sym", "her"):
        raise ValueError(f"solve: assume_a must be 'gen', 'sym', 'her' or 'pos', got {assume_a!r}")
    return _fnp.linalg.solve(*_inexact(_matrix(a), b))


def block_diag(*arrs: ArrayLike) -> Array:
    """The block-diagonal matrix of the given 2-D (or lower) arrays.

    >>> from functrans.scipy.linalg import block_diag
    >>> block_diag(_np.ones((1, 1)), 2 * _np.ones((1, 2))).tolist()
    [[1.0, 0.0, 0.0], [0.0, 2.0, 2.0]]
    """
    if not arrs:
        return _fnp.zeros((1, 0))
    mats = [_fnp.atleast_2d(_fnp.asarray(a)) for a in arrs]
    if any(m.ndim != 2 for m in mats):
        raise ValueError("block_diag: arguments must have at most 2 dimensions")
    dtype = _np.result_type(*[m.dtype for m in mats])
    cols = sum(m.shape[1] for m in mats)
    rows, start = [], 0
    for m in mats:
        left = _fnp.zeros((m.shape[0], start), dtype)
        right = _fnp.zeros((m.shape[0], cols - start - m.shape[1]), dtype)
        rows.append(_fnp.concatenate([left, _fnp.asarray(m, dtype), right], axis=1))
        start += m.shape[1]
    return _fnp.concatenate(rows, axis=0)


# Pade(13) coefficients b_k = (26-k)! 13! / (26! (13-k)! k!) and Higham's theta_13
_PADE13 = tuple(_math.factorial(26 - k) * _math.factorial(13)
                / (_math.factorial(26) * _math.factorial(13 - k) * _math.factorial(k))
                for k in range(14))
_THETA13 = 5.371920351148152


def expm(A: ArrayLike, *, upper_triangular: bool = False, max_squarings: int = 16) -> Array:
    """The matrix exponential: the [13/13] Pade approximant after scaling by 2^-s
    (s from the 1-norm, at most ``max_squarings``), then s squarings.  Built from
    matmul and solve, so it differentiates and batches by composition.

    >>> from functrans.scipy.linalg import expm
    >>> round(float(expm(_np.array([[1.0]]))[0, 0]), 12)
    2.718281828459
    """
    a = _fnp.asarray(A)
    # a complex generator (exp(-iHt) of a Hamiltonian) stays complex, as in JAX
    a = a if _fnp.iscomplexobj(a) else _as_float(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"expected square matrices (..., n, n), got shape {a.shape}")
    n = a.shape[-1]
    norm = _fnp.max(_fnp.sum(_fnp.abs(a), axis=-2), axis=-1)
    s = _fnp.clip(_fnp.ceil(_fnp.log2(_fnp.maximum(norm, 1e-300) / _THETA13)), 0, max_squarings)
    s = _lax.stop_gradient(s)
    a = a / (2.0 ** s)[..., None, None]
    eye = _fnp.broadcast_to(_fnp.eye(n, dtype=a.dtype), a.shape)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    b = _PADE13
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
             + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    r = _fnp.linalg.solve(v - u, v + u)

    def square(i, m):
        return _fnp.where((i < s)[..., None, None], m @ m, m)

    return _lax.fori_loop(0, max_squarings, square, r)


def expm_frechet(A: ArrayLike, E: ArrayLike, *, method: str | None = None,
                 compute_expm: bool = True) -> Array | tuple[Array, Array]:
    """The Frechet derivative of the matrix exponential at ``A`` in direction ``E``
    (``(expm(A), L)`` with ``compute_expm``, else ``L``): the top-right block of
    ``expm([[A, E], [0, A]])``. ``method`` ('SPS', 'blockEnlarge') is accepted.

    >>> from functrans.scipy.linalg import expm_frechet
    >>> round(float(expm_frechet(_np.zeros((1, 1)), _np.ones((1, 1)))[1][0, 0]), 12)
    1.0
    """
    a, e = _matrix(A), _matrix(E)
    if a.shape != e.shape:
        raise ValueError(f"expm_frechet: A and E must have one shape, got {a.shape}, {e.shape}")
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"expm_frechet: unknown method {method!r}")
    n = a.shape[-1]
    big = expm(_fnp.concatenate([_fnp.concatenate([a, e], axis=-1),
                                 _fnp.concatenate([_fnp.zeros_like(a), a], axis=-1)], axis=-2))
    expm_a, frechet = big[..., :n, :n], big[..., :n, n:]
    return (expm_a, frechet) if compute_expm else frechet


def _numpy_linalg(name):
    fn = getattr(_fnp.linalg, name, None)
    if fn is None:
        raise NotImplementedError(
            f"functrans.scipy.linalg.{name} needs functrans.numpy.linalg.{name}, which "
            "this build does not provide")
    return fn


def qr(a: ArrayLike, overwrite_a: bool = False, lwork: int | None = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True) -> tuple[Array, ...]:
    """``(q, r)`` (``mode='full'`` or ``'economic'``; ``'r'`` returns ``(r,)``), from
    ``functrans.numpy.linalg.qr``; with ``pivoting`` also the column permutation ``p``
    (LAPACK's ``?geqp3``, as scipy's): ``a[:, p] = q r``, ``|diag(r)|`` non-increasing,
    ``(q, r, p)`` or ``(r, p)``. Differentiable in ``a`` (``p`` is piecewise constant).

    >>> from functrans.scipy.linalg import qr
    >>> [m.shape for m in qr(_np.ones((3, 2)), mode="economic")]
    [(3, 2), (2, 2)]
    """
    modes = {"full": "complete", "economic": "reduced", "r": "complete"}
    if mode not in modes:
        raise ValueError(f"qr: mode must be 'full', 'economic' or 'r', got {mode!r}")
    a = _inexact(a)
    p = _qr_pivots(a) if pivoting else None
    if pivoting:          # the pivoted QR is the plain QR of the permuted columns
        a = _fnp.take_along_axis(a, p[..., None, :], axis=-1)
    q, r = _numpy_linalg("qr")(a, mode=modes[mode])
    out = (r,) if mode == "r" else (q, r)    # scipy's 'r' is the full (M, N) R
    return out + (p,) if pivoting else out


def svd(a: ArrayLike, full_matrices: bool = True, compute_uv: bool = True,
        overwrite_a: bool = False, check_finite: bool = True,
        lapack_driver: str = "gesdd") -> Array | tuple[Array, Array, Array]:
    """The singular value decomposition, from ``functrans.numpy.linalg.svd``.

    >>> from functrans.scipy.linalg import svd
    >>> [round(v, 12) for v in svd(_np.diag([3.0, 2.0]), compute_uv=False).tolist()]
    [3.0, 2.0]
    """
    return _numpy_linalg("svd")(_inexact(a), full_matrices=full_matrices, compute_uv=compute_uv)


def eigh(a: ArrayLike, b: ArrayLike | None = None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, type: int = 1,
         check_finite: bool = True) -> Array | tuple[Array, Array]:
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix, from
    ``functrans.numpy.linalg.eigh``; the generalized problem (``b``) is not supported.

    >>> from functrans.scipy.linalg import eigh
    >>> eigh(_np.diag([2.0, 1.0]), eigvals_only=True).tolist()
    [1.0, 2.0]
    """
    if b is not None:
        raise ValueError("eigh: the generalized problem (b=...) is not supported (as jax.scipy)")
    w, v = _numpy_linalg("eigh")(_matrix(a), UPLO="L" if lower else "U")
    return w if eigvals_only else (w, v)


def lu(a: ArrayLike, permute_l: bool = False, overwrite_a: bool = False,
       check_finite: bool = True) -> tuple[Array, Array] | tuple[Array, Array, Array]:
    """LU decomposition with partial pivoting of an (m, n) matrix (stack), real or
    complex, as scipy's: ``(p, l, u)`` with ``a = p @ l @ u`` (``p`` an (m, m)
    permutation matrix, ``l`` (m, k) unit lower, ``u`` (k, n) upper, k = min(m, n)), or
    ``(p @ l, u)`` with ``permute_l``. Differentiable (``lax.lu``'s JVP).

    >>> from functrans.scipy.linalg import lu
    >>> p, l, u = lu(_np.array([[0.0, 1.0], [2.0, 3.0]]))
    >>> p.tolist(), l.tolist(), u.tolist()
    ([[0.0, 1.0], [1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[2.0, 3.0], [0.0, 1.0]])
    """
    a = _inexact(a)
    if a.ndim < 2:
        raise ValueError(f"lu: expected a matrix (stack) (..., m, n), got shape {a.shape}")
    lu_, _, perm = _lax.lu(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    # a[perm] = l u, so a = p l u with p[j, i] = (perm[i] == j); p is real (scipy's)
    real = _np.empty(0, a.dtype).real.dtype
    p = (perm[..., None, :] == _np.arange(m, dtype=_np.int32)[:, None]).astype(real)
    l = _fnp.tril(lu_[..., :, :k], -1) + _np.eye(m, k, dtype=a.dtype)     # noqa: E741
    u = _fnp.triu(lu_[..., :k, :])
    return (p @ l, u) if permute_l else (p, l, u)


def lu_factor(a: ArrayLike, overwrite_a: bool = False,
              check_finite: bool = True) -> tuple[Array, Array]:
    """``(lu, piv)`` as scipy's (real or complex, (m, n)): L (unit diagonal implied)
    and U in one matrix, and the 0-based row swaps (int32): row ``i`` was interchanged
    with row ``piv[i]``.

    >>> from functrans.scipy.linalg import lu_factor
    >>> lu_, piv = lu_factor(_np.array([[0.0, 1.0], [2.0, 3.0]]))
    >>> lu_.tolist(), piv.tolist()
    ([[2.0, 3.0], [0.0, 1.0]], [1, 1])
    """
    lu_, piv, _ = _lax.lu(_inexact(a))
    return lu_, piv


def lu_solve(lu_and_piv: tuple[ArrayLike, ArrayLike], b: ArrayLike, trans: int = 0,
             overwrite_b: bool = False, check_finite: bool = True) -> Array:
    """Solve ``op(a) x = b`` from ``lu_factor(a)`` of a square ``a``; ``trans`` 0
    (``a``), 1 or 2 (``aᵀ``, ``aᴴ``; the same for real factors), as scipy's; complex
    ``b`` with real factors gives a complex ``x``. ``b`` of rank ``lu.ndim - 1`` is one
    vector. Differentiable in ``b`` and in the factors (triangular solves and a row
    permutation).

    >>> from functrans.scipy.linalg import lu_factor, lu_solve
    >>> a = _np.array([[0.0, 1.0], [2.0, 3.0]])
    >>> lu_solve(lu_factor(a), _np.array([1.0, 8.0])).tolist()
    [2.5, 1.0]
    """
    lu_, piv = lu_and_piv
    lu_ = _matrix(lu_)
    n = lu_.shape[-1]
    piv = _fnp.asarray(piv)
    if piv.dtype.kind not in "iu" or piv.shape != lu_.shape[:-1]:
        raise TypeError(f"lu_solve: piv must be integers of shape {lu_.shape[:-1]} (as "
                        f"lu_factor returns them), got {piv.dtype}{list(piv.shape)}")
    if isinstance(trans, bool) or trans not in (0, 1, 2):
        raise ValueError(f"lu_solve: trans must be 0, 1 or 2, got {trans!r}")
    code = int(trans)
    perm = _lax.lu_pivots_to_permutation(piv.astype(_np.int32), n)
    lu_, b = _inexact(lu_, b)        # complex b and real factors: a complex solve
    vector = b.ndim == lu_.ndim - 1
    rhs = b[..., None] if vector else b
    if rhs.ndim != lu_.ndim or rhs.shape[:-2] != lu_.shape[:-2] or rhs.shape[-2] != n:
        raise ValueError(f"lu_solve: b of shape {b.shape} does not fit factors of shape "
                         f"{lu_.shape}")
    tri = _lax.triangular_solve
    if code == 0:      # P a = L U: x = U⁻¹ L⁻¹ (P b)
        x = _fnp.take_along_axis(rhs, perm[..., :, None], axis=-2)
        x = tri(lu_, x, left_side=True, lower=True, unit_diagonal=True)
        x = tri(lu_, x, left_side=True, lower=False)
    else:              # aᵀ = Uᵀ Lᵀ P: x = Pᵀ L⁻ᵀ U⁻ᵀ b (aᴴ: conjugated; real: 'C' is 'T')
        f = _fnp.conj(lu_) if code == 2 else lu_
        x = tri(f, rhs, left_side=True, lower=False, transpose_a=True)
        x = tri(f, x, left_side=True, lower=True, transpose_a=True, unit_diagonal=True)
        x = _fnp.take_along_axis(x, _fnp.argsort(perm, axis=-1)[..., :, None], axis=-2)
    return x[..., 0] if vector else x


def sqrtm(A: ArrayLike, blocksize: int = 1) -> Array:
    """The principal matrix square root by the Schur method (``scipy.linalg.sqrtm``'s
    values to rounding), complex always as in JAX: a real matrix with negative
    eigenvalues has a complex root. Differentiable (JAX's is not); ``blocksize`` must
    be 1 (as in JAX). A singular matrix with no square root gives inf/NaN entries.

    >>> from functrans.scipy.linalg import sqrtm
    >>> sqrtm(_np.array([[4.0, 0.0], [0.0, 9.0]])).real.tolist()
    [[2.0, 0.0], [0.0, 3.0]]
    """
    if blocksize != 1:
        raise NotImplementedError("sqrtm: blocksize > 1 is not supported (as in JAX)")
    a = _fnp.asarray(A)
    if a.dtype.kind in "iub":
        a = a.astype(_np.float64)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"sqrtm: expected square matrices (..., n, n), got shape {a.shape}")
    return _sqrtm(a)
