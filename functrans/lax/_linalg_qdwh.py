"""``qdwh``: the polar decomposition ``x = u h`` by the QR-based dynamically weighted
Halley iteration (Nakatsukasa, Bai and Gygi, "Optimizing Halley's iteration for
computing the matrix polar decomposition", SIAM J. Matrix Anal. Appl. 31, 2010), with
``jax.lax.linalg.qdwh``'s signature, schedule and return ``(u, h, num_iters,
is_converged)``.

The matrix is scaled by ``1/sqrt(‖x‖₁ ‖x‖∞)`` (its singular values then lie in
``(0, 1]``); starting from the lower bound ``l = eps`` the weights ``(a, b, c)`` of each
step are fixed in advance (plain Python floats), so the first steps are a static
schedule: a QR-based step (``[√c u; I] = [q1; q2]``, ``u ← (b/c) u + (a - b/c)/√c · q1 q2ᴴ``)
while ``c > 100`` and a Cholesky-based one (``z = u (I + c uᴴ u)⁻¹``) after; then plain
Halley steps ``(3, 1, 3)`` in a ``while_loop`` until ``‖u - u_prev‖_F ≤ (5 eps)^(1/3)``
or ``max_iterations`` (default 10) steps. A Newton–Schulz step ``1.5 u - 0.5 u uᴴ u``
polishes ``u``; ``h = (uᴴ x + (uᴴ x)ᴴ) / 2``.

>>> import numpy as np
>>> u, h, k, ok = qdwh(np.array([[2.0, 0.0], [0.0, -3.0]]))
>>> np.round(np.asarray(u), 8).tolist(), bool(ok)
([[1.0, 0.0], [0.0, -1.0]], True)
"""
from __future__ import annotations

import math

import numpy as np

from .. import numpy as fnp
from ..primitives.control_flow import while_loop
from ..primitives.linalg import cholesky, triangular_solve
from ..primitives.linalg_decomp import qr
from ..typing import Array, ArrayLike

__all__ = ["qdwh"]

_CHOLESKY_CUTOFF = 100.0


def _schedule(eps: float, max_iterations: int) -> list[tuple[float, float, float]]:
    """The weights ``(a, b, c)`` of the static steps, from the lower bound ``l = eps`` on
    the scaled singular values until ``l`` is within ``5 eps`` of 1."""
    weights = []
    low, tol = eps, 5.0 * eps
    while low + tol < 1 and len(weights) < max_iterations:
        l2 = low * low
        dd = (4.0 * (1.0 / l2 - 1.0) / l2) ** (1.0 / 3.0)
        sqd = (1.0 + dd) ** 0.5
        a = sqd + (2.0 - dd + 2.0 * (2.0 - l2) / (l2 * sqd)) ** 0.5
        b = (a - 1.0) ** 2 / 4.0
        c = a + b - 1.0
        low = low * (a + b * l2) / (1.0 + c * l2)
        weights.append((a, b, c))
    return weights


def _h(m):
    return fnp.conj(m.T)


def _qr_step(u, a, b, c):
    n = u.shape[1]
    q, _ = qr(fnp.concatenate([math.sqrt(c) * u, fnp.eye(n, dtype=u.dtype)], axis=0),
              full_matrices=False)
    q1, q2 = q[:u.shape[0]], q[u.shape[0]:]
    return (b / c) * u + ((a - b / c) / math.sqrt(c)) * (q1 @ _h(q2))


def _cholesky_step(u, a, b, c):
    n = u.shape[1]
    y = cholesky(c * (_h(u) @ u) + fnp.eye(n, dtype=u.dtype))
    # z = u (y yᴴ)⁻¹: solve y w = uᴴ, then yᴴ zᴴ = w
    w = triangular_solve(y, _h(u), left_side=True, lower=True)
    z = _h(triangular_solve(fnp.conj(y), w, left_side=True, lower=True, transpose_a=True))
    return (b / c) * u + (a - b / c) * z


def qdwh(x: ArrayLike, *, is_hermitian: bool = False, max_iterations: int | None = None,
         eps: float | None = None, dynamic_shape: tuple[int, int] | None = None
         ) -> tuple[Array, Array, Array, Array]:
    """``(u, h, num_iters, is_converged)``: the polar decomposition ``x = u h`` of a
    full-rank ``(m, n)`` matrix, ``m >= n`` (``u`` with orthonormal columns, ``h``
    Hermitian positive definite), by QDWH, as ``jax.lax.linalg.qdwh``: ``num_iters``
    the int32 count of steps, ``is_converged`` whether the last step moved ``u`` by
    at most ``(5 eps)^(1/3)`` (Frobenius) within ``max_iterations`` (default 10).
    ``is_hermitian`` is unused (as JAX's); ``dynamic_shape=(m, n)`` decomposes the leading
    ``(m, n)`` block of a padded ``x`` (the padding read as zeros, and zero in ``u`` and
    ``h``: zero rows and columns stay zero through every step).

    >>> import numpy as np
    >>> u, h, _, _ = qdwh(np.array([[0.0, 2.0], [1.0, 0.0]]))
    >>> np.round(np.asarray(h), 8).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    del is_hermitian
    x = fnp.asarray(x)
    if not fnp.issubdtype(x.dtype, fnp.inexact):
        raise TypeError(f"qdwh: expected a floating or complex matrix, got {x.dtype}")
    if x.ndim != 2 or x.shape[0] < x.shape[1]:
        raise ValueError(f"qdwh: expected an M x N matrix with M >= N, got shape {x.shape}")
    if dynamic_shape is not None:     # the true (m, n) block; the padding is read as zeros
        m, n = (int(d) for d in dynamic_shape)
        if not (0 <= n <= m <= x.shape[0] and n <= x.shape[1]):
            raise ValueError(f"qdwh: dynamic_shape {dynamic_shape} must fit in {x.shape} with "
                             "m >= n")
        keep = (np.arange(x.shape[0])[:, None] < m) & (np.arange(x.shape[1])[None, :] < n)
        x = fnp.where(keep, x, 0)
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    eps = float(fnp.finfo(x.dtype).eps) if eps is None else float(eps)
    rdt = fnp.real(x).dtype
    one = fnp.max(fnp.sum(fnp.abs(x), axis=0))
    inf = fnp.max(fnp.sum(fnp.abs(x), axis=1))
    scale = fnp.where(one == 0, 1, 1 / (fnp.sqrt(one) * fnp.sqrt(inf))).astype(x.dtype)
    u = x * scale
    tol = (5.0 * eps) ** (1.0 / 3.0)
    moved = fnp.asarray(True)
    for a, b, c in _schedule(eps, max_iterations):
        if c > _CHOLESKY_CUTOFF:
            u = _qr_step(u, a, b, c)
        else:
            prev, u = u, _cholesky_step(u, a, b, c)
            moved = fnp.linalg.norm(u - prev) > tol
    steps = len(_schedule(eps, max_iterations))

    def more(state):
        k, _, moving = state
        return moving & (k < max_iterations)

    def halley(state):
        k, u, _ = state
        nxt = _cholesky_step(u, 3.0, 1.0, 3.0)
        return k + 1, nxt, fnp.linalg.norm(nxt - u).astype(rdt) > tol
    k, u, moved = while_loop(more, halley, (fnp.asarray(steps, fnp.int32), u, moved))
    u = 1.5 * u - 0.5 * (u @ (_h(u) @ u))
    h = _h(u) @ x
    return u, (h + _h(h)) / 2, k, fnp.logical_not(moved)
