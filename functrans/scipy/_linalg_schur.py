"""``scipy.linalg.schur`` (the Schur primitive, LAPACK's ``?gees`` on the host) and
``scipy.linalg.funm`` on it, as JAX's: the complex Schur form ``A = Z T Z^H``, the
function of T's diagonal, and Parlett's recurrence (Golub & Van Loan, "Matrix
Computations", algorithm 11.1.1) for the strictly upper part, one superdiagonal at a
time. Neither is differentiable (JAX's Schur decomposition has no derivative rule).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import numpy as fnp
from ..array import Array
from ..primitives.linalg_schur import schur as _schur
from ..typing import ArrayLike
from ._linalg_extra import as_float, rsf2csf

__all__ = ["schur", "funm"]


def schur(a: ArrayLike, output: str = "real") -> tuple[Array, Array]:
    """The Schur decomposition ``(T, Z)`` of square ``a`` (``(..., N, N)``), with
    ``a = Z T Z^H`` and ``Z`` unitary: ``T`` quasi upper triangular (2x2 diagonal
    blocks for complex eigenvalue pairs) for ``output="real"`` and a real ``a``, upper
    triangular for ``output="complex"`` (``a`` made complex first) or a complex ``a``.
    As JAX's: LAPACK's ``?gees`` (the values scipy.linalg.schur gives), not
    differentiable.

    >>> import numpy as np
    >>> from functrans.scipy.linalg import schur
    >>> T, Z = schur(np.array([[1.0, 2.0], [2.0, 1.0]]))
    >>> sorted(np.round(np.diag(np.asarray(T)), 12).tolist())
    [-1.0, 3.0]
    """
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got "
                         f"output={output!r}.")
    x = as_float(a)
    if output == "complex":
        x = x.astype(fnp.result_type(x.dtype, np.complex64))
    return _schur(x)


def _parlett(T, F):
    """Fill the strictly upper part of ``F`` (holding f of T's diagonal) by Parlett's
    recurrence; superdiagonal p needs only the ones below it, so each is one masked
    step: ``F_ij = (T_ij (F_jj - F_ii) + sum_{i<k<j} T_ik F_kj - F_ik T_kj) / (T_jj - T_ii)``
    (the numerator alone where the denominator is 0, as JAX's)."""
    n = T.shape[0]
    d = fnp.diagonal(T)
    fd = fnp.diagonal(F)
    den = d[None, :] - d[:, None]
    safe = fnp.where(den != 0, den, 1)
    t_up = fnp.triu(T, 1)
    for p in range(1, n):
        band = np.eye(n, k=p, dtype=bool)
        f_up = fnp.triu(F, 1)
        s = t_up * (fd[None, :] - fd[:, None]) + t_up @ f_up - f_up @ t_up
        F = fnp.where(band, s / safe, F)
    return F


def funm(A: ArrayLike, func: Callable[[Array], Array],
         disp: bool = True) -> Array | tuple[Array, Array]:
    """The matrix function ``func(A)`` of a square 2-D ``A``, from ``func`` of the
    eigenvalues (``func`` maps an array of complex scalars elementwise): complex Schur
    form, ``func`` on its diagonal, Parlett's recurrence above it, ``Z F Z^H``. The
    result is complex (as JAX's). With ``disp=False`` returns ``(F, errest)``, JAX's
    estimate ``min(1, max(eps, eps / minden * ||triu(T, 1)||_1))`` (``minden`` the
    least eigenvalue gap, inf when F has an inf). Not differentiable.

    >>> import numpy as np
    >>> from functrans.scipy.linalg import funm
    >>> F = funm(np.array([[1.0, 2.0], [0.0, 3.0]]), np.exp)
    >>> np.round(np.asarray(F).real, 6).tolist()
    [[2.718282, 17.367255], [0.0, 20.085537]]
    """
    a = as_float(A)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("expected square array_like input")
    T, Z = rsf2csf(*schur(a))
    n = T.shape[0]
    d = fnp.diagonal(T)
    F = fnp.asarray(func(d)).astype(T.dtype) * fnp.eye(n, dtype=T.dtype)
    F = _parlett(T, F) if n else F
    F = Z @ F @ fnp.conj(Z.T)
    if disp:
        return F
    tol = np.finfo(np.float32 if T.dtype == np.complex64 else np.float64).eps
    gaps = fnp.abs(d[None, :] - d[:, None])
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    minden = fnp.min(fnp.where(upper | (np.arange(n * n).reshape(n, n) == 0), gaps, fnp.inf)
                     .at[0, 0].set(fnp.abs(T[0, 0]))) if n else 0.0
    minden = fnp.where(minden == 0.0, tol, minden)
    norm1 = fnp.max(fnp.sum(fnp.abs(fnp.triu(T, 1)), axis=0)) if n else 0.0
    err = fnp.minimum(1, fnp.maximum(tol, (tol / minden) * norm1))
    err = fnp.where(fnp.any(fnp.isinf(F)), fnp.inf, err)
    return F, err
