"""``functrans.scipy.sparse.linalg``: the Krylov solvers of ``jax.scipy.sparse.linalg``
(``cg``, ``bicgstab``, ``gmres``).

``A`` is a matrix or a function computing ``A @ x``; ``b`` and ``x0`` may be pytrees
(the solvers work on their leaves raveled into one vector). Each solver is a
``lax.while_loop`` inside ``lax.custom_linear_solve``, so derivatives are taken
implicitly (one more solve with the transposed operator, never through the
iterations), and it jits and vmaps like any loop. ``info`` is ``None`` (``gmres``: 0,
or -1 for a NaN solution), as JAX's (convergence is not reported).

>>> import numpy as np
>>> from functrans.scipy.sparse.linalg import cg
>>> x, _ = cg(np.array([[4.0, 1.0], [1.0, 3.0]]), np.array([1.0, 2.0]))
>>> np.round(np.asarray(x), 6).tolist()
[0.090909, 0.636364]
"""
from __future__ import annotations
from typing import Any

import numpy as np

from ... import lax
from ... import numpy as fnp
from ...tree_util import tree_flatten, tree_unflatten

__all__ = ["bicgstab", "cg", "gmres"]


def _ravel(tree):
    leaves, treedef = tree_flatten(tree)
    leaves = [fnp.asarray(x) for x in leaves]
    dtype = fnp.result_type(*leaves)
    if not fnp.issubdtype(dtype, fnp.inexact):
        dtype = fnp.float64
    shapes = [x.shape for x in leaves]
    sizes = [int(np.prod(s)) for s in shapes]
    flat = fnp.concatenate([fnp.ravel(x).astype(dtype) for x in leaves])

    def unravel(v):
        parts, start = [], 0
        for shape, size in zip(shapes, sizes):
            parts.append(v[start:start + size].reshape(shape))
            start += size
        return tree_unflatten(treedef, parts)
    return flat, unravel


def _operator(A, unravel):
    # as JAX's _normalize_matvec: a function, a square matrix, or an object with @
    # (a matrix or operator applies to b's shape: b of shape (n, k) solves k columns)
    if not callable(A):
        if hasattr(A, "__matmul__"):
            shape = getattr(A, "shape", None)
            if shape is not None and (len(shape) != 2 or shape[0] != shape[1]):
                raise ValueError(f"linear operator must be a square matrix, but has shape: "
                                 f"{tuple(shape)}")
            op = A
            A = lambda x: op @ x  # noqa: E731
        else:
            raise TypeError(f"linear operator must be either a function or ndarray: {A!r:.60}")

    def mv(v):
        return _ravel(A(unravel(v)))[0].astype(v.dtype)
    return mv


def _dot(a, b):
    return fnp.real(fnp.vdot(a, b)) if fnp.iscomplexobj(a) else fnp.vdot(a, b)


def _setup(name, A, b, x0, M, maxiter):
    if x0 is not None:
        bs, xs = tree_flatten(b)[1], tree_flatten(x0)[1]
        if bs != xs:
            raise ValueError(f"{name}: x0 and b must have matching tree structure: {xs} vs {bs}")
        shapes = [[np.shape(v) for v in tree_flatten(t)[0]] for t in (x0, b)]
        if shapes[0] != shapes[1]:
            raise ValueError(f"{name}: arrays in x0 and b must have matching shapes: "
                             f"{shapes[0]} vs {shapes[1]}")
    flat_b, unravel = _ravel(b)
    x0 = fnp.zeros_like(flat_b) if x0 is None else _ravel(x0)[0].astype(flat_b.dtype)
    matvec = _operator(A, unravel)
    precond = (lambda v: v) if M is None else _operator(M, unravel)
    maxiter = 10 * flat_b.shape[0] if maxiter is None else int(maxiter)
    return flat_b, x0, matvec, precond, maxiter, unravel


def _threshold(b, tol, atol):
    return fnp.maximum(tol * tol * _dot(b, b), atol * atol)


def _cg_solve(matvec, b, x0, precond, tol, atol, maxiter):
    bound = _threshold(b, tol, atol)
    r0 = b - matvec(x0)
    z0 = precond(r0)

    def cond(state):
        _, r, _, _, k = state
        return (_dot(r, r) > bound) & (k < maxiter)

    def body(state):
        x, r, gamma, p, k = state
        ap = matvec(p)
        alpha = gamma / fnp.vdot(p, ap)
        x, r = x + alpha * p, r - alpha * ap
        z = precond(r)
        gamma_new = fnp.vdot(r, z)
        return x, r, gamma_new, z + (gamma_new / gamma) * p, k + 1
    return lax.while_loop(cond, body, (x0, r0, fnp.vdot(r0, z0), z0, 0))[0]


def _bicgstab_solve(matvec, b, x0, precond, tol, atol, maxiter):
    bound = _threshold(b, tol, atol)
    r0 = b - matvec(x0)
    one = fnp.ones((), b.dtype)

    def cond(state):
        r, k = state[1], state[-1]
        return (_dot(r, r) > bound) & (k < maxiter)

    def body(state):
        x, r, rho, alpha, omega, p, v, k = state
        rho_new = fnp.vdot(r0, r)
        beta = (rho_new / rho) * (alpha / omega)
        p = r + beta * (p - omega * v)
        phat = precond(p)
        v = matvec(phat)
        alpha = rho_new / fnp.vdot(r0, v)
        s = r - alpha * v
        shat = precond(s)
        t = matvec(shat)
        tt = fnp.vdot(t, t)
        # s = 0: x + alpha * phat solves it; omega would be 0/0
        omega = fnp.where(tt == 0, fnp.zeros_like(tt), fnp.vdot(t, s) / fnp.where(tt == 0, 1, tt))
        return (x + alpha * phat + omega * shat, s - omega * t, rho_new, alpha, omega, p, v,
                k + 1)
    zeros = fnp.zeros_like(b)
    return lax.while_loop(cond, body, (x0, r0, one, one, one, zeros, zeros, 0))[0]


def _givens(a, b):
    """(c, s) with the unitary [[conj c, conj s], [-s, c]] @ [a, b] = [r, 0], r >= 0."""
    r = fnp.sqrt(fnp.abs(a) ** 2 + fnp.abs(b) ** 2).astype(a.dtype)
    safe = fnp.where(r == 0, 1, r)
    return fnp.where(r == 0, 1, a / safe), fnp.where(r == 0, 0, b / safe)


def _arnoldi_step(j, state, matvec, precond, restart):
    """One Arnoldi step (modified Gram-Schmidt, run twice for orthogonality) and the
    Givens rotations that keep the Hessenberg matrix upper triangular."""
    V, R, g, cs, sn = state
    w = precond(matvec(V[j]))
    h = fnp.zeros((restart + 1,), w.dtype)
    for _ in range(2):
        coef = fnp.conj(V) @ w
        coef = fnp.where(fnp.arange(restart + 1) <= j, coef, 0)
        w = w - coef @ V
        h = h + coef
    norm = fnp.sqrt(_dot(w, w))
    h = h.at[j + 1].set(norm)
    V = V.at[j + 1].set(w / fnp.where(norm == 0, 1, norm))

    def rotate(i, hh):
        a, c = hh[i], hh[i + 1]
        return hh.at[i].set(fnp.conj(cs[i]) * a + fnp.conj(sn[i]) * c).at[i + 1].set(
            -sn[i] * a + cs[i] * c)
    h = lax.fori_loop(0, j, rotate, h)
    c, s = _givens(h[j], h[j + 1])
    h = h.at[j].set(fnp.conj(c) * h[j] + fnp.conj(s) * h[j + 1]).at[j + 1].set(0)
    g = g.at[j + 1].set(-s * g[j]).at[j].set(fnp.conj(c) * g[j])
    return V, R.at[:, j].set(h[:restart]), g, cs.at[j].set(c), sn.at[j].set(s)


def _gmres_cycle(matvec, precond, b, x, restart):
    r = precond(b - matvec(x))
    beta = fnp.sqrt(_dot(r, r))
    n, dtype = b.shape[0], b.dtype
    V = fnp.zeros((restart + 1, n), dtype).at[0].set(r / fnp.where(beta == 0, 1, beta))
    R = fnp.zeros((restart, restart), dtype)
    g = fnp.zeros((restart + 1,), dtype).at[0].set(beta)
    cs = fnp.zeros((restart,), dtype)
    V, R, g, _, _ = lax.fori_loop(
        0, restart, lambda j, st: _arnoldi_step(j, st, matvec, precond, restart),
        (V, R, g, cs, cs))
    # columns after a happy breakdown are zero: their coefficients are zero too
    diag = fnp.diagonal(R)
    live = diag != 0
    R = R + fnp.diag(fnp.where(live, 0, 1).astype(dtype))
    y = lax.triangular_solve(R, fnp.where(live, g[:restart], 0)[:, None], left_side=True,
                             lower=False)[:, 0]
    return x + y @ V[:restart]


def _gmres_solve(matvec, b, x0, precond, tol, atol, restart, maxiter):
    mb = precond(b)
    bound = _threshold(mb, tol, atol)

    def residual2(x):
        r = precond(b - matvec(x))
        return _dot(r, r)

    def cond(state):
        x, k = state
        return (residual2(x) > bound) & (k < maxiter)

    def body(state):
        x, k = state
        return _gmres_cycle(matvec, precond, b, x, restart), k + 1
    return lax.while_loop(cond, body, (x0, 0))[0]


def _solve(name, A, b, x0, M, maxiter, symmetric, solver):
    flat_b, x0, matvec, precond, maxiter, unravel = _setup(name, A, b, x0, M, maxiter)
    x = lax.custom_linear_solve(
        matvec, flat_b, lambda mv, rhs: solver(mv, rhs, x0, precond, maxiter),
        transpose_solve=None if symmetric else
        (lambda vm, rhs: solver(vm, rhs, fnp.zeros_like(rhs), precond, maxiter)),
        symmetric=symmetric)
    return unravel(x), None


def cg(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
       maxiter: int | None = None, M: Any = None) -> tuple[Any, None]:
    """Conjugate gradients for Hermitian positive definite ``A``: ``(x, None)`` with
    ``|b - A x| <= max(tol |b|, atol)`` or ``maxiter`` (default ``10 n``) steps done.
    ``M`` is a preconditioner (approximating ``A``'s inverse).

    >>> import numpy as np
    >>> from functrans.scipy.sparse.linalg import cg
    >>> float(cg(lambda v: 2.0 * v, np.array([4.0]))[0][0])
    2.0
    """
    # a Hermitian A is symmetric only when real: complex A's transpose is conj(A), so
    # custom_linear_solve gets cg itself as the transpose solve (as JAX decides, by b)
    symmetric = not any(fnp.iscomplexobj(leaf) for leaf in tree_flatten(b)[0])
    return _solve("cg", A, b, x0, M, maxiter, symmetric,
                  lambda mv, rhs, x, pre, it: _cg_solve(mv, rhs, x, pre, tol, atol, it))


def bicgstab(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
             maxiter: int | None = None, M: Any = None) -> tuple[Any, None]:
    """Stabilised biconjugate gradients for a general square ``A``: ``(x, None)``, with
    ``cg``'s stopping rule and arguments.

    >>> import numpy as np
    >>> from functrans.scipy.sparse.linalg import bicgstab
    >>> x, _ = bicgstab(np.array([[2.0, 1.0], [0.0, 1.0]]), np.array([3.0, 1.0]))
    >>> np.round(np.asarray(x), 6).tolist()
    [1.0, 1.0]
    """
    return _solve("bicgstab", A, b, x0, M, maxiter, False,
                  lambda mv, rhs, x, pre, it: _bicgstab_solve(mv, rhs, x, pre, tol, atol, it))


def gmres(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
          restart: int = 20, maxiter: int | None = None, M: Any = None,
          solve_method: str = "batched") -> tuple[Any, Any]:
    """Restarted GMRES for a general square ``A``: ``(x, info)``, ``info`` -1 where
    ``x`` is NaN (a breakdown), else 0, as JAX's. Each cycle builds a
    Krylov basis of ``restart`` vectors (Arnoldi, Gram-Schmidt twice, Givens rotations)
    and takes the least-squares step; cycles stop when the (left-preconditioned)
    residual is below ``max(tol |M b|, atol)`` or after ``maxiter`` cycles (default
    ``10 n``). ``solve_method`` ('batched' or 'incremental') is accepted; both run the
    same algorithm here.

    >>> import numpy as np
    >>> from functrans.scipy.sparse.linalg import gmres
    >>> x, _ = gmres(np.array([[2.0, 1.0], [0.0, 1.0]]), np.array([3.0, 1.0]))
    >>> np.round(np.asarray(x), 6).tolist()
    [1.0, 1.0]
    """
    if solve_method not in ("batched", "incremental"):
        raise ValueError(f"gmres: solve_method must be 'batched' or 'incremental', "
                         f"got {solve_method!r}")
    n = sum(int(np.size(x)) for x in tree_flatten(b)[0])
    restart = max(1, min(int(restart), n))
    x, _ = _solve("gmres", A, b, x0, M, maxiter, False,
                  lambda mv, rhs, x, pre, it: _gmres_solve(mv, rhs, x, pre, tol, atol,
                                                           restart, it))
    # JAX's gmres info: -1 where the solution is NaN (a breakdown), else 0
    failed = fnp.isnan(fnp.linalg.norm(_ravel(x)[0]))
    return x, fnp.where(failed, -1, 0)

