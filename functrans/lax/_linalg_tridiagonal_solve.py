"""``tridiagonal_solve``: ``A X = B`` for a tridiagonal ``A`` (batched), as JAX's on CPU:
LAPACK ``?gtsv``'s elimination with partial pivoting (a row swap where the subdiagonal
entry is larger, in ``|re| + |im|``, than the pivot; a second superdiagonal fills
in), written as two scans over the rows, and ``NaN`` for a system with a zero pivot
(``?gtsv``'s ``info > 0``, which JAX turns into NaN). The derivatives are implicit,
as JAX's rule: ``custom_linear_solve`` with the tridiagonal product as the matrix
(``dX = A⁻¹ (dB - dA X)``) and the solve of ``Aᵀ`` as its transpose.

>>> import numpy as np
>>> x = tridiagonal_solve(np.array([0.0, 1.0]), np.array([2.0, 2.0]), np.array([1.0, 0.0]),
...                       np.array([[3.0], [3.0]]))
>>> np.asarray(x).tolist()
[[1.0], [1.0]]
"""
from __future__ import annotations

from .. import numpy as fnp
from ..primitives.control_flow import scan
from ..primitives.linear_solve import custom_linear_solve
from ._linalg_tridiagonal_perturbed import solve_perturbed
from ..typing import Array, ArrayLike

__all__ = ["tridiagonal_solve"]


def _size(x):
    """``?gtsv``'s pivot size: ``|x|`` for reals, ``|re| + |im|`` for complex."""
    return fnp.abs(fnp.real(x)) + fnp.abs(fnp.imag(x)) if fnp.iscomplexobj(x) else fnp.abs(x)


def _product(dl, d, du, x):
    """``A x``: ``d[i] x[i] + dl[i] x[i-1] + du[i] x[i+1]`` (``dl[0]``, ``du[m-1]`` unused)."""
    y = d[..., None] * x
    y = y.at[..., 1:, :].add(dl[..., 1:, None] * x[..., :-1, :])
    return y.at[..., :-1, :].add(du[..., :-1, None] * x[..., 1:, :])


def _gtsv(dl, d, du, b):
    """The pivoted elimination and back substitution: ``(x, pivots)``, rows along axis 0
    (``(m, ...)`` coefficients, ``(m, ..., n)`` right-hand sides and ``x``)."""
    m = d.shape[0]
    if m == 1:
        return b / d[..., None], d
    zero = fnp.zeros_like(d[0])

    def eliminate(carry, row):
        di, dui, bi = carry                     # row i as the elimination left it
        sub, dn, dun, bn = row                  # row i + 1 as given
        keep = _size(di) >= _size(sub)
        fact = fnp.where(keep, sub / fnp.where(keep, di, 1), di / fnp.where(keep, 1, sub))
        f = fact[..., None]
        k = keep[..., None]
        nxt = (fnp.where(keep, dn - fact * dui, dui - fact * dn),
               fnp.where(keep, dun, -fact * dun),
               fnp.where(k, bn - f * bi, bi - f * bn))
        done = (fnp.where(keep, di, sub), fnp.where(keep, dui, dn), fnp.where(keep, zero, dun),
                fnp.where(k, bi, bn))
        return nxt, done
    du_rows = fnp.concatenate([du[1:-1], zero[None]], axis=0)     # du[m-1] is outside A
    (dl_, du_, bl), (u0, u1, u2, y) = scan(
        eliminate, (d[0], du[0], b[0]), (dl[1:], d[1:], du_rows, b[1:]))
    u0 = fnp.concatenate([u0, dl_[None]], axis=0)
    u1 = fnp.concatenate([u1, zero[None]], axis=0)
    u2 = fnp.concatenate([u2, zero[None]], axis=0)
    y = fnp.concatenate([y, bl[None]], axis=0)

    def substitute(carry, row):
        x1, x2 = carry
        p, q, r, yi = row
        x = (yi - q[..., None] * x1 - r[..., None] * x2) / p[..., None]
        return (x, x1), x
    zx = fnp.zeros_like(b[0])
    _, x = scan(substitute, (zx, zx), (u0, u1, u2, y), reverse=True)
    return x, u0


def _solve(dl, d, du, b, perturb=False):
    """``A⁻¹ b`` with the batch axes last-but-one: moves the rows to the front for the scans."""
    mv = lambda v: fnp.moveaxis(v, -1, 0)   # noqa: E731
    if perturb:
        x = solve_perturbed(mv(dl), mv(d), mv(du), fnp.moveaxis(b, -2, 0))
        return fnp.moveaxis(x, 0, -2).astype(b.dtype)
    x, pivots = _gtsv(mv(dl), mv(d), mv(du), fnp.moveaxis(b, -2, 0))
    singular = fnp.any(pivots == 0, axis=0)[..., None, None]
    return fnp.where(singular, fnp.nan, fnp.moveaxis(x, 0, -2)).astype(b.dtype)


def tridiagonal_solve(dl: ArrayLike, d: ArrayLike, du: ArrayLike, b: ArrayLike, *,
                      perturb_singular: bool = False) -> Array:
    """The solution ``X`` of ``A X = B`` for the tridiagonal ``A`` with
    ``A[i, i-1] = dl[i]`` (``dl[0]`` unused), ``A[i, i] = d[i]``, ``A[i, i+1] = du[i]``
    (``du[m-1]`` unused), all ``(..., m)``, and ``b`` ``(..., m, n)``, as
    ``jax.lax.linalg.tridiagonal_solve``: ``?gtsv``'s pivoting, NaN for a singular
    system, differentiable in all four (JAX's implicit rule), batched.
    ``perturb_singular=True`` solves as JAX's CPU kernel instead (scaled pivoting, tiny
    pivots perturbed by about ``eps max|U|``): finite solutions of singular systems.

    >>> import numpy as np
    >>> tridiagonal_solve(np.zeros(2), np.array([2.0, 4.0]), np.zeros(2),
    ...                   np.array([[2.0], [2.0]])).tolist()
    [[1.0], [0.5]]
    """
    dl, d, du, b = (fnp.asarray(x) for x in (dl, d, du, b))
    if not (dl.shape == d.shape == du.shape) or b.shape[:-1] != d.shape or d.ndim < 1:
        raise TypeError(f"tridiagonal_solve: dl, d, du of one shape (..., m) and b "
                        f"(..., m, n), got {dl.shape}, {d.shape}, {du.shape}, {b.shape}")
    dts = {x.dtype for x in (dl, d, du, b)}
    if len(dts) != 1 or next(iter(dts)).kind not in "fc":
        raise TypeError(f"tridiagonal_solve: operands of one floating or complex dtype, got "
                        f"{sorted(str(t) for t in dts)}")
    if d.shape[-1] == 0 or b.shape[-1] == 0:
        return b
    dl_t = fnp.concatenate([fnp.zeros_like(du[..., :1]), du[..., :-1]], axis=-1)
    du_t = fnp.concatenate([dl[..., 1:], fnp.zeros_like(dl[..., :1])], axis=-1)
    return custom_linear_solve(
        lambda x: _product(dl, d, du, x), b,
        lambda _, r: _solve(dl, d, du, r, perturb_singular),
        lambda _, r: _solve(dl_t, d, du_t, r, perturb_singular))
