"""``scipy.linalg.solve_sylvester`` as JAX's: ``A X + X B = C`` by Bartels and Stewart's
method (Golub & Van Loan, "Matrix Computations", 7.6.3) on complex Schur forms
``A = U R U^H``, ``B = V S V^H``: ``R Y + Y S = U^H C V`` is solved one column of ``Y`` at a
time (an upper-triangular solve with ``R + S[j, j] I`` each), ``X = U Y V^H``; O(m^3 + n^3
+ m n (m + n)) work.  As JAX's, a matrix of NaNs when some eigenvalue sum
``|lambda_i(A) + mu_j(B)|`` is below ``tol`` (the equation is then singular or nearly so),
and batch dimensions broadcast.  Differentiable: the tangent ``X'`` solves the same
equation with right side ``C' - A' X - X B'`` (a ``custom_linear_solve``).
"""
from __future__ import annotations

import numpy as np

from .. import lax
from .. import numpy as fnp
from ..array import Array
from ..lax.linalg import triangular_solve
from ..primitives.linalg_schur import schur as _schur
from ..primitives.linear_solve import custom_linear_solve
from ..typing import ArrayLike

__all__ = ["solve_sylvester"]


def _h(m):
    return fnp.conj(fnp.swapaxes(m, -1, -2))


def _triangular_sylvester(r, s, f):
    """``Y`` with ``R Y + Y S = F`` for upper-triangular ``R`` (m x m) and ``S`` (n x n):
    column j solves ``(R + S[j, j] I) y_j = f_j - sum_{k<j} S[k, j] y_k``."""
    m, n = f.shape
    eye = fnp.eye(m, dtype=f.dtype)

    def column(j, y):
        rhs = f[:, j] - y @ s[:, j]          # y's columns >= j are still zero
        yj = triangular_solve(r + s[j, j] * eye, rhs[:, None], left_side=True, lower=False)
        return y.at[:, j].set(yj[:, 0])

    return lax.fori_loop(0, n, column, fnp.zeros_like(f))


def _sylvester_2d(a, b, c, tol):
    cdt = fnp.result_type(a.dtype, np.complex64)
    r, u = _schur(a.astype(cdt))
    s, v = _schur(b.astype(cdt))
    y = _triangular_sylvester(r, s, _h(u) @ c.astype(cdt) @ v)
    x = u @ y @ _h(v)
    if not fnp.issubdtype(c.dtype, fnp.complexfloating):
        x = fnp.real(x)
    x = x.astype(c.dtype)
    near_singular = fnp.any(fnp.abs(fnp.diagonal(r)[:, None] + fnp.diagonal(s)[None, :]) < tol)
    return fnp.where(near_singular, fnp.asarray(np.nan, x.dtype), x)


def _solver(tol):
    """The solve as a ``custom_linear_solve`` of the operator ``X -> A X + X B`` (whose
    transpose is ``Y -> A^T Y + Y B^T``): derivatives in A, B and C by implicit
    differentiation, in both modes (the Schur step itself has no derivative rule)."""
    def solve(a, b, c):
        def matvec(x):
            return a @ x + x @ b
        # the solves' A and B carry no derivative: matvec carries it (implicit function)
        a0, b0 = lax.stop_gradient(a), lax.stop_gradient(b)
        return custom_linear_solve(
            matvec, c, lambda _, rhs: _sylvester_2d(a0, b0, rhs, tol),
            transpose_solve=lambda _, rhs: _sylvester_2d(a0.T, b0.T, rhs, tol))

    return solve


def solve_sylvester(A: ArrayLike, B: ArrayLike, C: ArrayLike, *, method: str = "schur",
                    tol: float = 1e-8) -> Array:
    """``X`` with ``A X + X B = C`` for ``A`` ``(..., m, m)``, ``B`` ``(..., n, n)``, ``C``
    ``(..., m, n)`` (batch dimensions broadcast), by the Bartels-Stewart method on complex
    Schur forms; all NaN where some ``|eig(A)_i + eig(B)_j| < tol``.  ``method`` is
    ``"schur"`` or ``"eigen"`` (JAX's names; both run the Schur method here, which is the
    accurate one).  Integer inputs are taken as float64.

    >>> import numpy as np
    >>> from functrans.scipy.linalg import solve_sylvester
    >>> a, b = np.array([[1.0, 2.0], [0.0, 3.0]]), np.array([[4.0]])
    >>> np.round(np.asarray(solve_sylvester(a, b, np.array([[7.0], [7.0]]))), 12).tolist()
    [[1.0], [1.0]]
    """
    if method not in ("schur", "eigen"):
        raise ValueError(f"Unrecognized method {method}. The two valid methods are either "
                         f"\"schur\" or \"eigen\".")
    a, b, c = (fnp.asarray(t) for t in (A, B, C))
    dtype = fnp.result_type(a.dtype, b.dtype, c.dtype)
    if not fnp.issubdtype(dtype, fnp.inexact):
        dtype = np.dtype(np.float64)
    a, b, c = (t.astype(dtype) for t in (a, b, c))
    if c.ndim < 2 or a.ndim < 2 or b.ndim < 2:
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {a.shape}\n"
                         f"B: {b.shape}\nC: {c.shape}")
    m, n = c.shape[-2:]
    if a.shape[-2:] != (m, m) or b.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {a.shape}\n"
                         f"B: {b.shape}\nC: {c.shape}")
    return fnp.vectorize(_solver(float(tol)), signature="(m,m),(n,n),(m,n)->(m,n)")(a, b, c)
