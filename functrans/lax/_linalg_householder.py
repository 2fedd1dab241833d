"""Householder reflections as LAPACK packs them, composed of functrans operations (so
they batch, jit and differentiate as their building blocks do): ``hessenberg``
(``?gehrd``'s ``(a, taus)``), ``tridiagonal`` (``?sytrd``/``?hetrd``'s
``(a, d, e, taus)``), ``householder_product`` (``?orgqr``/``?ungqr``: the reflectors
multiplied out) and ``ormqr`` (``?ormqr``/``?unmqr``: ``Q`` applied without forming
it). A reflector is ``H = I - tau v vᴴ`` with ``v[i] = 1`` and LAPACK's ``?larfg``
signs (``Hᴴ x = beta e_1``, ``beta`` real of the sign opposite to ``Re x[0]``), so
the packed outputs are LAPACK's (and JAX's on CPU) up to rounding.

>>> import numpy as np
>>> h, taus = hessenberg(np.array([[1.0, 2.0], [3.0, 4.0]]))
>>> np.asarray(taus).tolist()
[0.0]
"""
from __future__ import annotations

import numpy as np

from .. import numpy as fnp
from ..primitives.control_flow import fori_loop
from ..typing import Array, ArrayLike

__all__ = ["hessenberg", "householder_product", "larfg", "ormqr", "tridiagonal"]


def _inexact(x, name):
    x = fnp.asarray(x)
    if not fnp.issubdtype(x.dtype, fnp.inexact):
        raise TypeError(f"{name}: expected floating or complex operands, got {x.dtype}")
    return x


def _square(a, name):
    a = _inexact(a, name)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: expected square matrices (..., n, n), got shape {a.shape}")
    return a


def larfg(alpha: Array, x: Array) -> tuple[Array, Array, Array]:
    """LAPACK's elementary reflector (``?larfg``) of the vector ``[alpha, x]`` (batched
    over leading axes): ``(u, tau, beta)`` with ``v = [1, u]`` and
    ``(I - tau v vᴴ)ᴴ [alpha, x] = [beta, 0]``; ``tau = 0`` (``beta = alpha``) when
    ``x`` is zero and ``alpha`` real.

    >>> import numpy as np
    >>> u, tau, beta = larfg(np.float64(3.0), np.array([4.0]))
    >>> float(beta), float(tau), np.asarray(u).tolist()
    (-5.0, 1.6, [0.5])
    """
    alpha, x = fnp.asarray(alpha), fnp.asarray(x)
    xnorm2 = fnp.sum(fnp.abs(x) ** 2, axis=-1)
    trivial = (xnorm2 == 0) & (fnp.imag(alpha) == 0)
    norm = fnp.sqrt(fnp.abs(alpha) ** 2 + fnp.where(trivial, 1, xnorm2))
    beta = fnp.where(fnp.real(alpha) >= 0, -norm, norm).astype(fnp.real(alpha).dtype)
    tau = fnp.where(trivial, 0, (beta - alpha) / beta).astype(alpha.dtype)
    scale = fnp.where(trivial, 1, alpha - beta)
    return x / scale[..., None], tau, fnp.where(trivial, alpha, beta).astype(alpha.dtype)


def _reflect_rows(m, v, tau):
    """``(I - tau v vᴴ)ᴴ m`` (``v`` (..., r), ``m`` (..., r, c))."""
    vh_m = fnp.einsum("...i,...ij->...j", fnp.conj(v), m)
    return m - (fnp.conj(tau)[..., None, None] * v[..., :, None]) * vh_m[..., None, :]


def _reflect_cols(m, v, tau):
    """``m (I - tau v vᴴ)`` (``v`` (..., c), ``m`` (..., r, c))."""
    m_v = fnp.einsum("...ij,...j->...i", m, v)
    return m - (tau[..., None, None] * m_v[..., :, None]) * fnp.conj(v)[..., None, :]


def hessenberg(a: ArrayLike) -> tuple[Array, Array]:
    """``(a, taus)``: the upper Hessenberg form in the upper triangle and first
    subdiagonal of ``a``, reflector ``k``'s vector (past its unit entry ``k + 1``)
    below the subdiagonal of column ``k``, and ``taus`` (..., n - 1), as LAPACK's
    ``?gehrd`` and JAX's ``lax.linalg.hessenberg``; ``a = Q H Qᴴ`` with
    ``Q = H_0 ... H_{n-2}``.

    >>> import numpy as np
    >>> h, taus = hessenberg(np.array([[1.0, 0.0, 0.0], [3.0, 1.0, 0.0], [4.0, 0.0, 1.0]]))
    >>> np.round(np.asarray(h)[:2, 0], 12).tolist()
    [1.0, -5.0]
    """
    h = _square(a, "hessenberg")
    n = h.shape[-1]
    taus = []
    for k in range(n - 1):  # the last step only makes a complex subdiagonal entry real
        u, tau, beta = larfg(h[..., k + 1, k], h[..., k + 2:, k])
        v = fnp.concatenate([fnp.ones_like(beta)[..., None], u], axis=-1)
        h = h.at[..., k + 1:, k + 1:].set(_reflect_rows(h[..., k + 1:, k + 1:], v, tau))
        h = h.at[..., :, k + 1:].set(_reflect_cols(h[..., :, k + 1:], v, tau))
        h = h.at[..., k + 1:, k].set(fnp.concatenate([beta[..., None], u], axis=-1))
        taus.append(tau)
    t = fnp.stack(taus, axis=-1) if taus else fnp.zeros(h.shape[:-2] + (0,), h.dtype)
    return h, t


def _hermitian_full(a, lower):
    """The Hermitian matrix the ``lower`` (or upper) triangle of ``a`` stands for, its
    diagonal real."""
    strict = fnp.tril(a, -1) if lower else fnp.triu(a, 1)
    diag = fnp.real(fnp.diagonal(a, axis1=-2, axis2=-1)).astype(a.dtype)
    return (strict + fnp.conj(fnp.swapaxes(strict, -1, -2))
            + diag[..., None, :] * np.eye(a.shape[-1], dtype=a.dtype))


def tridiagonal(a: ArrayLike, *, lower: bool = True) -> tuple[Array, Array, Array, Array]:
    """``(a, d, e, taus)``: a real symmetric or complex Hermitian matrix (stack), read
    from its ``lower`` (or upper) triangle, reduced to the real tridiagonal ``T`` with
    diagonal ``d`` and off-diagonal ``e`` by ``Qᴴ A Q = T``, as LAPACK's
    ``?sytrd``/``?hetrd`` and JAX's ``lax.linalg.tridiagonal``: in ``a`` the diagonal
    and first sub- (super-) diagonal hold ``T``, the reflectors' vectors lie below
    (above) them, and the other triangle is the input's. ``lower``:
    ``Q = H_0 ... H_{n-2}``, reflector ``i`` with unit entry ``i + 1``; upper:
    ``Q = H_{n-2} ... H_0``, reflector ``i`` with unit entry ``i``, stored above it.

    >>> import numpy as np
    >>> _, d, e, _ = tridiagonal(np.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> np.asarray(d).tolist(), np.asarray(e).tolist()
    ([2.0, 2.0], [1.0])
    """
    a = _square(a, "tridiagonal")
    n = a.shape[-1]
    m = _hermitian_full(a, lower)
    rdt = fnp.real(a).dtype
    cols, es, taus = [], [], []
    steps = range(n - 1) if lower else range(n - 2, -1, -1)
    for i in steps:
        if lower:       # annihilate m[i+2:, i] by a reflector on rows/cols i+1..
            u, tau, beta = larfg(m[..., i + 1, i], m[..., i + 2:, i])
            v = fnp.concatenate([fnp.ones_like(beta)[..., None], u], axis=-1)
            blk = _reflect_cols(_reflect_rows(m[..., i + 1:, i + 1:], v, tau), v, tau)
            m = m.at[..., i + 1:, i + 1:].set(blk)
        else:           # annihilate m[:i, i+1] by a reflector on rows/cols ..i
            u, tau, beta = larfg(m[..., i, i + 1], m[..., :i, i + 1])
            v = fnp.concatenate([u, fnp.ones_like(beta)[..., None]], axis=-1)
            blk = _reflect_cols(_reflect_rows(m[..., :i + 1, :i + 1], v, tau), v, tau)
            m = m.at[..., :i + 1, :i + 1].set(blk)
        cols.append(u)
        es.append(fnp.real(beta))
        taus.append(tau)
    d = fnp.real(fnp.diagonal(m, axis1=-2, axis2=-1))
    batch = a.shape[:-2]
    e = fnp.stack(es[::1 if lower else -1], axis=-1) if es else fnp.zeros(batch + (0,), rdt)
    t = fnp.stack(taus[::1 if lower else -1], axis=-1) if taus else fnp.zeros(batch + (0,),
                                                                             a.dtype)
    keep = np.triu(np.ones((n, n), bool), 1) if lower else np.tril(np.ones((n, n), bool), -1)
    out = fnp.where(keep, a, d.astype(a.dtype)[..., None, :] * np.eye(n, dtype=a.dtype))
    for i, u in zip(steps, cols):
        if lower:
            out = out.at[..., i + 1:, i].set(fnp.concatenate(
                [e[..., i:i + 1].astype(a.dtype), u], axis=-1))
        else:
            out = out.at[..., :i + 1, i + 1].set(fnp.concatenate(
                [u, e[..., i:i + 1].astype(a.dtype)], axis=-1))
    return out, d, e, t


def _reflectors(a, k):
    """The reflectors' vectors as columns ``(..., m, k)``: ``a``'s strict lower part with
    ones on the diagonal."""
    m = a.shape[-2]
    return fnp.tril(a[..., :, :k], -1) + np.eye(m, k, dtype=a.dtype)


def _apply(v, taus, c, left, adjoint):
    """``op(Q) c`` or ``c op(Q)``, ``Q = H_0 ... H_{k-1}`` (``op``: ᴴ when ``adjoint``),
    one reflector per step of a loop."""
    k = taus.shape[-1]
    reverse = left != adjoint
    taus = fnp.conj(taus) if adjoint else taus

    def step(i, c):
        j = k - 1 - i if reverse else i
        vj = fnp.take(v, j, axis=-1)
        tau = fnp.take(taus, j, axis=-1)
        if left:        # c - tau v (vᴴ c)
            return c - (tau[..., None, None] * vj[..., :, None]) * fnp.einsum(
                "...i,...ij->...j", fnp.conj(vj), c)[..., None, :]
        return c - (tau[..., None, None] * fnp.einsum("...ij,...j->...i", c, vj)[..., :, None]
                    ) * fnp.conj(vj)[..., None, :]
    return fori_loop(0, k, step, c) if k else c


def _common(name, a, taus, *more):
    a = _inexact(a, name)
    taus = _inexact(taus, name)
    dt = fnp.result_type(a, taus, *more)
    if a.ndim < 2 or taus.ndim != a.ndim - 1 or taus.shape[:-1] != a.shape[:-2]:
        raise ValueError(f"{name}: expected a (..., m, n) and taus (..., k) with the same "
                         f"batch axes, got shapes {a.shape} and {taus.shape}")
    if taus.shape[-1] > min(a.shape[-2:]):
        raise ValueError(f"{name}: taus has {taus.shape[-1]} factors, more than min(m, n) of "
                         f"a {a.shape[-2:]}")
    if a.dtype != taus.dtype:
        raise TypeError(f"{name}: a and taus of one dtype, got {a.dtype} and {taus.dtype}")
    return a.astype(dt), taus.astype(dt)


def householder_product(a: ArrayLike, taus: ArrayLike) -> Array:
    """The first ``n`` columns of ``Q = H_0 ... H_{k-1}`` (shape of ``a``, (..., m, n),
    m >= n), reflector ``i`` the column ``i`` of ``a`` below the diagonal with a unit
    entry at ``i``, scaled by ``taus[..., i]``: LAPACK's ``?orgqr``/``?ungqr``, as
    ``jax.lax.linalg.householder_product``.

    >>> import numpy as np
    >>> q = householder_product(np.array([[0.0], [1.0]]), np.array([1.0]))
    >>> np.asarray(q).tolist()
    [[0.0], [-1.0]]
    """
    a, taus = _common("householder_product", a, taus)
    m, n = a.shape[-2:]
    if m < n:
        raise ValueError(f"householder_product: a needs at least as many rows as columns, "
                         f"got shape {a.shape}")
    eye = fnp.broadcast_to(fnp.eye(m, n, dtype=a.dtype), a.shape)
    return _apply(_reflectors(a, taus.shape[-1]), taus, eye, True, False)


def ormqr(a: ArrayLike, taus: ArrayLike, c: ArrayLike, *, left: bool = True,
          transpose: bool = False) -> Array:
    """``Q c``, ``Qᴴ c`` (``transpose``), ``c Q`` or ``c Qᴴ`` (``left=False``) with ``Q``
    the product of the reflectors packed in ``a`` (..., m, n) and ``taus`` (..., k)
    (as ``householder_product``), without forming ``Q``: LAPACK's ``?ormqr``/``?unmqr``,
    as ``jax.lax.linalg.ormqr``.

    >>> import numpy as np
    >>> ormqr(np.array([[0.0], [1.0]]), np.array([1.0]), np.eye(2)).tolist()
    [[0.0, -1.0], [-1.0, 0.0]]
    """
    c = _inexact(c, "ormqr")
    a, taus = _common("ormqr", a, taus, c)
    m = a.shape[-2]
    if c.ndim != a.ndim or c.shape[-2 if left else -1] != m:
        raise ValueError(f"ormqr: c {c.shape} does not match the reflectors' {m} rows "
                         f"(left={left})")
    return _apply(_reflectors(a, taus.shape[-1]), taus, c.astype(a.dtype), bool(left),
                  bool(transpose))
