"""More of ``scipy.linalg`` composed from functrans operations: ``polar`` (from the SVD),
``eigh_tridiagonal`` (from
``eigh``), ``qr_multiply`` (from ``qr``), ``hessenberg`` (LAPACK's Householder
reflections, one static step per column) and ``rsf2csf`` (Givens rotations of the 2x2
blocks). All differentiate and
batch where their building blocks do.
"""
from __future__ import annotations

import numpy as np

from .. import numpy as fnp
from ..array import Array
from ..lax import _linalg_householder as _hh
from ..primitives.linalg_decomp import qr_pivots
from ..typing import ArrayLike


def as_float(x):
    """An inexact array (real or complex): integers and bools become float64."""
    x = fnp.asarray(x)
    return x if fnp.issubdtype(x.dtype, fnp.inexact) else x.astype(fnp.float64)

__all__ = ["eigh_tridiagonal", "hessenberg", "polar", "qr_multiply", "rsf2csf"]


def _square(a, name):
    a = as_float(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: expected square matrices (..., n, n), got shape {a.shape}")
    return a


def _h(m):
    return fnp.conj(fnp.swapaxes(m, -1, -2))


def polar(a: ArrayLike, side: str = "right", *, method: str = "qdwh",
          eps: float | None = None, max_iterations: int | None = None) -> tuple[Array, Array]:
    """The polar decomposition ``a = u p`` (``side='right'``) or ``a = p u`` ('left') of
    a matrix or a stack of them (as JAX's):
    ``u`` with orthonormal columns (rows), ``p`` Hermitian positive semi-definite, from
    the SVD ``a = w s vh`` (``u = w vh``); ``method`` ('qdwh' or 'svd') names JAX's
    algorithms, both give this one's values.

    >>> import numpy as np
    >>> from functrans.scipy.linalg import polar
    >>> u, p = polar(np.array([[2.0, 0.0], [0.0, -3.0]]))
    >>> np.asarray(u).tolist(), np.asarray(p).tolist()
    ([[1.0, 0.0], [0.0, -1.0]], [[2.0, 0.0], [0.0, 3.0]])
    """
    if side not in ("right", "left"):
        raise ValueError(f"polar: side must be 'right' or 'left', got {side!r}")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"polar: method must be 'qdwh' or 'svd', got {method!r}")
    a = as_float(a)
    if a.ndim < 2:
        raise ValueError(f"polar: expected a matrix (stack) (..., m, n), got shape {a.shape}")
    w, s, vh = fnp.linalg.svd(a, full_matrices=False)
    u = w @ vh
    s = s.astype(a.dtype)[..., None, :]
    p = (_h(vh) * s) @ vh if side == "right" else (w * s) @ _h(w)
    return u, p


def eigh_tridiagonal(d: ArrayLike, e: ArrayLike, *, eigvals_only: bool = False,
                     select: str = "a", select_range: tuple[float, float] | None = None,
                     tol: float | None = None, key: Array | None = None
                     ) -> Array | tuple[Array, Array]:
    """Eigenvalues (ascending; and eigenvectors unless ``eigvals_only``) of the
    Hermitian tridiagonal matrix with diagonal ``d`` (its real part), superdiagonal
    ``e`` and subdiagonal ``conj(e)`` (JAX's reading of complex input);
    ``select='i'`` keeps the eigenvalues of indices ``select_range[0]..[1]``
    (inclusive). ``select='v'`` (a value range, a data-dependent count) is not supported.

    >>> import numpy as np
    >>> from functrans.scipy.linalg import eigh_tridiagonal
    >>> w = eigh_tridiagonal(np.zeros(2), np.ones(1), eigvals_only=True)
    >>> np.round(np.asarray(w), 12).tolist()
    [-1.0, 1.0]
    """
    d, e = as_float(d), as_float(e)
    if d.ndim != 1 or e.shape != (max(d.shape[0] - 1, 0),):
        raise ValueError(f"eigh_tridiagonal: d must be 1-d and e one shorter, got "
                         f"{d.shape} and {e.shape}")
    if select not in ("a", "i", "v"):
        raise ValueError(f"eigh_tridiagonal: select must be 'a', 'i' or 'v', got {select!r}")
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal: select='v' (a value range) is not supported")
    dt = fnp.result_type(d, e)
    # Hermitian for complex input, as JAX's: diagonal real(d), e above, conj(e) below
    t = (fnp.diag(fnp.real(d)).astype(dt) + fnp.diag(e.astype(dt), 1)
         + fnp.diag(fnp.conj(e).astype(dt), -1))
    w, v = fnp.linalg.eigh(t)
    if select == "i":
        lo, hi = (int(i) for i in select_range)
        w, v = w[lo:hi + 1], v[:, lo:hi + 1]
    return w if eigvals_only else (w, v)


def qr_multiply(a: ArrayLike, c: ArrayLike, mode: str = "right", pivoting: bool = False,
                conjugate: bool = False, overwrite_a: bool = False,
                overwrite_c: bool = False) -> tuple[Array, ...]:
    """``(Q @ c, R)`` (``mode='left'``) or ``(c @ Q, R)`` ('right') with ``a = Q R`` the
    economic QR decomposition (``Q`` conjugated with ``conjugate``); a 1-d ``c`` is a
    column ('left') or a row ('right'); batch axes of ``a`` and ``c`` broadcast, as
    JAX's. ``pivoting=True``: the QR of ``a[..., :, p]`` with LAPACK's ``?geqp3``
    column permutation ``p`` (int32), returned third, as scipy and JAX.

    >>> import numpy as np
    >>> from functrans.scipy.linalg import qr_multiply
    >>> cq, r = qr_multiply(np.eye(2), np.array([1.0, 2.0]), mode="left")
    >>> np.abs(np.asarray(cq)).tolist()
    [1.0, 2.0]
    """
    if mode not in ("left", "right"):
        raise ValueError(f"qr_multiply: mode must be 'left' or 'right', got {mode!r}")
    a, c = as_float(a), as_float(c)
    if a.ndim < 2 or c.ndim < 1:
        raise ValueError(f"qr_multiply: a must be a matrix (stack) and c at least 1-d, got "
                         f"{a.shape}, {c.shape}")
    onedim = c.ndim == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = a.shape[-2:]
    k = min(m, n)
    if (c.shape[-2] if mode == "left" else c.shape[-1]) != (k if mode == "left" else m):
        raise ValueError(f"qr_multiply: c {c.shape} does not fit Q ({m}, {k}) of a {a.shape} "
                         f"(mode={mode!r})")
    batch = np.broadcast_shapes(a.shape[:-2], c.shape[:-2])
    a = fnp.broadcast_to(a, batch + a.shape[-2:])
    c = fnp.broadcast_to(c, batch + c.shape[-2:])
    if pivoting:        # the pivoted QR is the plain QR of the permuted columns
        p = qr_pivots(a)
        a = fnp.take_along_axis(a, p[..., None, :], axis=-1)
    q, r = fnp.linalg.qr(a, mode="reduced")
    if conjugate:
        q = fnp.conj(q)
    out = q @ c if mode == "left" else c @ q
    out = (out.reshape(-1) if onedim else out), r
    return out + (p,) if pivoting else out


def hessenberg(a: ArrayLike, *, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> Array | tuple[Array, Array]:
    """The Hessenberg form ``h`` of a square matrix (stack), ``a = q h q^H``, with ``q``
    too if ``calc_q``: ``lax.linalg.hessenberg``'s reflections (xGEHRD's, so the signs
    are scipy's) and their ``householder_product`` (xORGHR's ``q``), as JAX's.

    >>> import numpy as np
    >>> from functrans.scipy.linalg import hessenberg
    >>> np.round(np.asarray(hessenberg(np.array([[1.0, 2.0], [3.0, 4.0]]))), 12).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    packed, taus = _hh.hessenberg(_square(a, "hessenberg"))
    n = packed.shape[-1]
    h = fnp.triu(packed, -1)
    if not calc_q:
        return h
    if n <= 1:
        return h, fnp.ones_like(h)
    q = _hh.householder_product(packed[..., 1:, :-1], taus)
    q = fnp.pad(q, [(0, 0)] * (q.ndim - 2) + [(1, 0), (1, 0)])
    return h, q.at[..., 0, 0].set(1)


_SAFE_BLOCK = np.diag([1.0, 2.0])


def rsf2csf(T: ArrayLike, Z: ArrayLike, check_finite: bool = True) -> tuple[Array, Array]:
    """A real Schur form ``(T, Z)`` (``A = Z T Z^T``, 2x2 blocks for complex pairs) to
    the complex one: each block whose subdiagonal entry is not negligible is reduced
    by a Givens rotation that puts its eigenvalue with positive imaginary part first
    (LAPACK's first eigenvalue of the block, as scipy and JAX). Stacks of ``T`` and
    ``Z`` broadcast against each other, as scipy >= 1.16 and JAX.

    >>> import numpy as np
    >>> from functrans.scipy.linalg import rsf2csf
    >>> t, z = rsf2csf(np.array([[0.0, -1.0], [1.0, 0.0]]), np.eye(2))
    >>> np.round(np.diag(np.asarray(t)), 12).tolist()
    [1j, -1j]
    """
    t, z = as_float(T), as_float(Z)
    if (t.ndim < 2 or z.ndim < 2 or t.shape[-1] != t.shape[-2]
            or z.shape[-1] != z.shape[-2] or t.shape[-1] != z.shape[-1]):
        raise ValueError(f"rsf2csf: T and Z must be square matrices (stacks) of one size, got "
                         f"{t.shape} and {z.shape}")
    n = t.shape[-1]
    try:
        batch = np.broadcast_shapes(t.shape[:-2], z.shape[:-2])
    except ValueError:
        raise ValueError(f"rsf2csf: the batch axes of T {t.shape} and Z {z.shape} do not "
                         f"broadcast") from None
    ctype = fnp.result_type(t.dtype, z.dtype, np.complex64)
    t = fnp.broadcast_to(t.astype(ctype), batch + (n, n))
    z = fnp.broadcast_to(z.astype(ctype), batch + (n, n))
    eps = np.finfo(ctype).eps
    for m in range(n - 1, 0, -1):
        block = t[..., m - 1:m + 1, m - 1:m + 1]
        sub = t[..., m, m - 1]
        active = fnp.abs(sub) > eps * (fnp.abs(block[..., 0, 0]) + fnp.abs(block[..., 1, 1]))
        # scipy's and JAX's shift: LAPACK's first eigenvalue of the block (its order, also
        # for a block earlier rotations made complex); an untouched block is swapped for
        # diag(1, 2), or eigvals' derivative at a repeated eigenvalue puts NaN in the grad
        block = fnp.where(active[..., None, None], block, _SAFE_BLOCK.astype(ctype))
        mu = fnp.linalg.eigvals(block)[..., 0] - block[..., 1, 1]
        r = fnp.sqrt(fnp.abs(mu) ** 2 + fnp.abs(sub) ** 2)
        c = fnp.where(active, mu / r, 1)
        s = fnp.where(active, sub / r, 0)
        g = fnp.stack([fnp.stack([fnp.conj(c), s], -1), fnp.stack([-s, c], -1)], -2)
        gh = fnp.conj(fnp.swapaxes(g, -1, -2))
        t = t.at[..., m - 1:m + 1, m - 1:].set(g @ t[..., m - 1:m + 1, m - 1:])
        t = t.at[..., :m + 1, m - 1:m + 1].set(t[..., :m + 1, m - 1:m + 1] @ gh)
        z = z.at[..., :, m - 1:m + 1].set(z[..., :, m - 1:m + 1] @ gh)
        t = t.at[..., m, m - 1].set(0)
    return t, z
