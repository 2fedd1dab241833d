"""``functrans.lax.linalg``: the decompositions with ``jax.lax.linalg``'s signatures and
defaults (``symmetrize_input=True`` for cholesky and eigh, ``eigh`` returning
``(v, w)`` with ascending eigenvalues, ``conjugate_a`` on triangular_solve), over the
primitives ``functrans.lax`` has at its top level: ``eig`` (LAPACK ``?geev``, left and
right vectors), ``schur`` (``?gees``); ``hessenberg``, ``tridiagonal``,
``householder_product`` and ``ormqr`` (LAPACK's packed Householder reflectors, composed:
``_linalg_householder``), ``tridiagonal_solve`` (``?gtsv``'s pivoting, JAX's implicit
derivative), ``qdwh`` (``_linalg_qdwh``), ``symmetric_product``; ``cholesky_update`` is
JAX's Givens sweep. The algorithm enums are accepted; every choice computes the values
LAPACK's default gives (there is one CPU implementation of each).

>>> import numpy as np
>>> from functrans.lax import linalg
>>> v, w = linalg.eigh(np.diag([2.0, 1.0]))
>>> w.tolist()
[1.0, 2.0]
"""
from __future__ import annotations

import enum

from .. import numpy as _fnp
from ..primitives import linalg as _L
from ..primitives import linalg_decomp as _LD
from ..primitives import linalg_lu as _LU
from ..primitives.control_flow import fori_loop as _fori_loop
from ..primitives import linalg_schur as _LS
from ..primitives.linalg_lu import lu_pivots_to_permutation
from ..typing import Array, ArrayLike
from ._linalg_householder import hessenberg, householder_product, ormqr, tridiagonal
from ._linalg_qdwh import qdwh
from ._linalg_tridiagonal_solve import tridiagonal_solve

__all__ = ["EigImplementation", "EighImplementation", "SvdAlgorithm", "cholesky",
           "cholesky_update", "eig", "eigh", "hessenberg", "householder_product", "lu",
           "lu_pivots_to_permutation", "ormqr", "qdwh", "qr", "schur", "svd",
           "symmetric_product", "triangular_solve", "tridiagonal", "tridiagonal_solve"]


class EigImplementation(enum.Enum):
    """``eig``'s algorithm choice, as JAX's (only ``LAPACK`` on a CPU)."""
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """``eigh``'s algorithm choice, as JAX's (all give LAPACK's ``?syevd`` values here)."""
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """``svd``'s algorithm choice, as JAX's (all give LAPACK's ``?gesdd`` values here)."""
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


def _no_subset(name, subset):
    if subset is not None:
        raise NotImplementedError(f"lax.linalg.{name}: subset_by_index is not supported "
                                  f"(nor is it by JAX 0.10.2 on CPU)")


def _hermitian_part(x):
    """(x + xᴴ) / 2, JAX's symmetrize_input."""
    return (x + _fnp.conj(_fnp.swapaxes(x, -1, -2))) / x.dtype.type(2)


def cholesky(x: ArrayLike, *, symmetrize_input: bool = True) -> Array:
    """The lower Cholesky factor; with ``symmetrize_input`` of (x + xᴴ) / 2, as JAX's.

    >>> import numpy as np
    >>> cholesky(np.array([[4.0, 2.0], [2.0, 3.0]])).round(3).tolist()
    [[2.0, 0.0], [1.0, 1.414]]
    """
    x = _fnp.asarray(x)
    return _L.cholesky(_hermitian_part(x) if symmetrize_input else x)


def cholesky_update(r_matrix: ArrayLike, w_vector: ArrayLike) -> Array:
    """The upper Cholesky factor of ``rᵀ r + w wᵀ`` from the upper factor ``r`` in
    O(n²), as JAX's: one Givens rotation (BLAS drotg's) per row folds ``w`` into ``r``.
    Real matrices only (JAX's rotations are real); differentiable (a loop of
    elementwise steps).

    >>> import numpy as np
    >>> cholesky_update(np.eye(2), np.array([0.0, 1.0])).round(4).tolist()
    [[1.0, 0.0], [0.0, 1.4142]]
    """
    r, w = _fnp.asarray(r_matrix), _fnp.asarray(w_vector)
    if r.ndim != 2 or r.shape[0] != r.shape[1] or w.shape != r.shape[:1]:
        raise ValueError("cholesky_update: a square matrix and a vector of its size, got "
                         f"shapes {r.shape} and {w.shape}")
    if r.dtype != w.dtype or r.dtype.kind != "f":
        raise TypeError(f"cholesky_update: operands of one real floating dtype, got "
                        f"{r.dtype} and {w.dtype}")

    def rotate(k, carry):
        r, z = carry
        x, y = r[k, k], z[k]
        zero = y == 0
        scale = _fnp.where(zero, 1, _fnp.maximum(_fnp.abs(x), _fnp.abs(y)))
        xs, ys = x / scale, y / scale
        rh = 1 / _fnp.sqrt(xs * xs + ys * ys)
        c, s = _fnp.where(zero, 1, xs * rh), _fnp.where(zero, 0, -ys * rh)
        row = r[k]
        return r.at[k].set(c * row - s * z), c * z + s * row
    return _fori_loop(0, r.shape[0], rotate, (r, w))[0]


def eig(x: ArrayLike, *, compute_left_eigenvectors: bool = True,
        compute_right_eigenvectors: bool = True, enable_eigvec_derivs: bool = False,
        implementation: EigImplementation | None = None,
        use_magma: bool | None = None) -> list[Array]:
    """``[w, vl, vr]``: eigenvalues and left/right eigenvectors (columns) of a general
    square matrix (stack), complex, as JAX's (LAPACK's ``?geev``: ``x vr = vr w``,
    ``vlᴴ x = w vlᴴ``, each vector of unit norm with its largest component real); the
    vectors not asked for are left out. NaN for a matrix ``?geev`` fails on (or holding
    inf/NaN). Eigenvalues differentiate; eigenvectors only with
    ``enable_eigvec_derivs=True`` (valid for distinct eigenvalues, as JAX's). Single
    precision is computed in double and rounded (as numpy.linalg), so a float32 vector
    may be JAX's (``sgeev``'s) times -1, the sign ``?geev`` leaves free.

    >>> import numpy as np
    >>> w, vl, vr = eig(np.array([[2.0, 0.0], [0.0, 3.0]]))
    >>> np.asarray(w).tolist()
    [(2+0j), (3+0j)]
    """
    if use_magma or implementation not in (None, EigImplementation.LAPACK):
        raise ValueError("Only the lapack implementation is supported on CPU.")
    return list(_LD.eig(x, compute_left_eigenvectors=compute_left_eigenvectors,
                        compute_right_eigenvectors=compute_right_eigenvectors,
                        enable_eigvec_derivs=enable_eigvec_derivs))


def schur(x: ArrayLike, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable: object = None) -> tuple[Array, Array] | list[Array]:
    """``(t, q)`` with ``x = q t qᴴ`` (``[t]`` without ``compute_schur_vectors``): the real
    Schur form of a real matrix, the complex one of a complex matrix (LAPACK's
    ``?gees``), as JAX's; not differentiable. ``sort_eig_vals`` raises, as JAX's on CPU;
    ``select_callable`` is unused (as JAX's).

    >>> import numpy as np
    >>> t, q = schur(np.array([[1.0, 2.0], [0.0, 3.0]]))
    >>> np.round(np.asarray(t), 12).tolist()
    [[1.0, 2.0], [0.0, 3.0]]
    """
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not "
                                  "implemented.")
    t, q = _LS.schur(x)
    return (t, q) if compute_schur_vectors else [t]


def symmetric_product(a_matrix: ArrayLike, c_matrix: ArrayLike, *, alpha: float = 1.,
                      beta: float = 0., symmetrize_output: bool = False) -> Array:
    """``alpha a aᵀ + beta c`` for real ``a`` (..., m, n) and symmetric ``c`` (..., m, m),
    as JAX's (which makes only the lower triangle certain on every platform; here the
    whole product is computed, and ``symmetrize_output`` mirrors the lower triangle).

    >>> import numpy as np
    >>> symmetric_product(np.array([[1.0], [2.0]]), np.eye(2), beta=1.0).tolist()
    [[2.0, 2.0], [2.0, 5.0]]
    """
    a, c = _fnp.asarray(a_matrix), _fnp.asarray(c_matrix)
    for name, v in (("a_matrix", a), ("c_matrix", c)):
        if v.dtype.kind != "f":
            raise TypeError(f"symmetric_product: {name} must be real floating, got {v.dtype}")
    if (a.ndim < 2 or c.shape[-2:] != (a.shape[-2], a.shape[-2]) or a.dtype != c.dtype
            or c.shape[:-2] != a.shape[:-2]):
        raise ValueError(f"symmetric_product: a (..., m, n) and c (..., m, m) of one dtype, "
                         f"got {a.dtype}{list(a.shape)} and {c.dtype}{list(c.shape)}")
    out = alpha * (a @ _fnp.swapaxes(a, -1, -2)) + beta * c
    if symmetrize_output:
        low = _fnp.tril(out, -1)
        out = _fnp.tril(out) + _fnp.swapaxes(low, -1, -2)
    return out


def eigh(x: ArrayLike, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index: tuple[int, int] | None = None,
         implementation: EighImplementation | None = None) -> tuple[Array, Array]:
    """``(v, w)``: eigenvectors (columns) and ascending eigenvalues of a Hermitian matrix,
    as JAX's (``subset_by_index`` raises, as JAX's on CPU).

    >>> import numpy as np
    >>> eigh(np.diag([3.0, 1.0]))[1].tolist()
    [1.0, 3.0]
    """
    _no_subset("eigh", subset_by_index)
    x = _fnp.asarray(x)
    return _LD.eigh(_hermitian_part(x) if symmetrize_input else x, lower=lower)


def lu(x: ArrayLike) -> tuple[Array, Array, Array]:
    """``(lu, pivots, permutation)`` of partial-pivoted LU, as JAX's.

    >>> import numpy as np
    >>> lu(np.array([[1.0, 2.0], [3.0, 4.0]]))[2].tolist()
    [1, 0]
    """
    return _LU.lu(x)


def qr(x: ArrayLike, *, pivoting: bool = False, full_matrices: bool = True
       ) -> tuple[Array, ...]:
    """``(q, r)``, or ``(q, r, p)`` with ``pivoting`` (column pivoting, LAPACK's
    ``?geqp3``: ``x[..., :, p] = q r``), as JAX's.

    >>> import numpy as np
    >>> [m.shape for m in qr(np.ones((3, 2)), full_matrices=False)]
    [(3, 2), (2, 2)]
    """
    if not pivoting:
        return _LD.qr(x, full_matrices=full_matrices)
    x = _fnp.asarray(x)
    p = _LD.qr_pivots(x)
    q, r = _LD.qr(_fnp.take_along_axis(x, p[..., None, :], axis=-1),
                  full_matrices=full_matrices)
    return q, r, p


def svd(x: ArrayLike, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: tuple[int, int] | None = None, algorithm: SvdAlgorithm | None = None
        ) -> Array | tuple[Array, Array, Array]:
    """``(u, s, vh)`` (or ``s``), singular values descending, as JAX's
    (``subset_by_index`` raises, as JAX's on CPU).

    >>> import numpy as np
    >>> svd(np.diag([1.0, 3.0]), compute_uv=False).tolist()
    [3.0, 1.0]
    """
    _no_subset("svd", subset_by_index)
    return _LD.svd(x, full_matrices=full_matrices, compute_uv=compute_uv)


def triangular_solve(a: ArrayLike, b: ArrayLike, *, left_side: bool = False,
                     lower: bool = False, transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False) -> Array:
    """``op(a) x = b`` (``left_side``) or ``x op(a) = b``, op transposing and/or
    conjugating ``a``, as JAX's; a ``b`` of rank ``a.ndim - 1`` is a (batch of) vector(s):
    a column for ``left_side``, a row otherwise.

    >>> import numpy as np
    >>> triangular_solve(np.array([[2.0, 0.0], [1.0, 1.0]]), np.array([[2.0], [3.0]]),
    ...                  left_side=True, lower=True).tolist()
    [[1.0], [2.0]]
    >>> triangular_solve(np.array([[2.0, 0.0], [1.0, 1.0]]), np.array([2.0, 3.0]),
    ...                  left_side=True, lower=True).tolist()
    [1.0, 2.0]
    """
    a, b = _fnp.asarray(a), _fnp.asarray(b)
    if conjugate_a:
        a = _fnp.conj(a)
    vector = b.ndim == a.ndim - 1
    if vector:
        b = _fnp.expand_dims(b, -1 if left_side else -2)
    x = _L.triangular_solve(a, b, left_side=left_side, lower=lower,
                            transpose_a=transpose_a, unit_diagonal=unit_diagonal)
    return _fnp.squeeze(x, -1 if left_side else -2) if vector else x
