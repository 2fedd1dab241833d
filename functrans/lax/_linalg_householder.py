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


def _two_sided(m, v, tau, cols=None):
    """``Hᴴ m H`` for ``H = I - tau v vᴴ`` (``v`` (..., n)); with the 0/1 mask ``cols`` the
    left reflection acts on those columns only."""
    vh_m = fnp.einsum("...i,...ij->...j", fnp.conj(v), m)
    if cols is not None:
        vh_m = vh_m * cols
    m = m - (fnp.conj(tau)[..., None, None] * v[..., :, None]) * vh_m[..., None, :]
    m_v = fnp.einsum("...ij,...j->...i", m, v)
    return m - (tau[..., None, None] * m_v[..., :, None]) * fnp.conj(v)[..., None, :]


def _step_masks(n, k, dtype):
    """The row index ``r`` (traced step ``k``) and ``mask(cond) -> 0/1 of dtype``."""
    r = fnp.arange(n)
    return r, lambda cond: cond.astype(dtype)


def _column(m, onehot):
    return fnp.einsum("...ij,j->...i", m, onehot)


def _reflector(col, lead, tail):
    """LAPACK's reflector for ``col``'s entry ``lead`` (a 0/1 one-hot) over the entries
    ``tail`` (0/1): ``(u, v, tau, beta)``, ``u`` zero outside ``tail``, ``v = lead + u``."""
    alpha = fnp.einsum("...i,i->...", col, lead)
    u, tau, beta = larfg(alpha, col * tail)
    return u, lead + u, tau, beta


def hessenberg(a: ArrayLike) -> tuple[Array, Array]:
    """``(a, taus)``: the upper Hessenberg form in the upper triangle and first
    subdiagonal of ``a``, reflector ``k``'s vector (past its unit entry ``k + 1``)
    below the subdiagonal of column ``k``, and ``taus`` (..., n - 1), as LAPACK's
    ``?gehrd`` and JAX's ``lax.linalg.hessenberg``; ``a = Q H Qᴴ`` with
    ``Q = H_0 ... H_{n-2}``. One loop step per column (a ``fori_loop``: one body to
    compile, whatever ``n``).

    >>> import numpy as np
    >>> h, taus = hessenberg(np.array([[1.0, 0.0, 0.0], [3.0, 1.0, 0.0], [4.0, 0.0, 1.0]]))
    >>> np.round(np.asarray(h)[:2, 0], 12).tolist()
    [1.0, -5.0]
    """
    h = _square(a, "hessenberg")
    n, dt = h.shape[-1], h.dtype

    def step(k, carry):     # the last step only makes a complex subdiagonal entry real
        h, taus = carry
        r, mask = _step_masks(n, k, dt)
        col = _column(h, mask(r == k))
        u, v, tau, beta = _reflector(col, mask(r == k + 1), mask(r >= k + 2))
        h = _two_sided(h, v, tau, mask(r >= k + 1))
        packed = fnp.where(r == k + 1, beta[..., None], fnp.where(r >= k + 2, u, col))
        h = fnp.where(r == k, packed[..., :, None], h)
        taus = fnp.where(fnp.arange(n - 1) == k, tau[..., None], taus)
        return h, taus
    taus = fnp.zeros(h.shape[:-2] + (max(n - 1, 0),), dt)
    return fori_loop(0, n - 1, step, (h, taus)) if n > 1 else (h, taus)


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
    One ``fori_loop`` step per reflector.

    >>> import numpy as np
    >>> _, d, e, _ = tridiagonal(np.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> np.asarray(d).tolist(), np.asarray(e).tolist()
    ([2.0, 2.0], [1.0])
    """
    a = _square(a, "tridiagonal")
    n, dt = a.shape[-1], a.dtype
    rdt = fnp.real(a).dtype
    batch = a.shape[:-2]

    def step(j, carry):
        m, vecs, e, taus = carry
        i = j if lower else n - 2 - j
        r, mask = _step_masks(n, i, dt)
        if lower:       # annihilate m[i+2:, i] by a reflector on rows/cols i+1..
            col_at = i
            u, v, tau, beta = _reflector(_column(m, mask(r == i)), mask(r == i + 1),
                                         mask(r >= i + 2))
        else:           # annihilate m[:i, i+1] by a reflector on rows/cols ..i
            col_at = i + 1
            u, v, tau, beta = _reflector(_column(m, mask(r == i + 1)), mask(r == i),
                                         mask(r < i))
        m = _two_sided(m, v, tau)
        vecs = fnp.where(r == col_at, u[..., :, None], vecs)
        at = fnp.arange(n - 1) == i
        return m, vecs, fnp.where(at, fnp.real(beta)[..., None], e), fnp.where(
            at, tau[..., None], taus)
    carry = (_hermitian_full(a, lower), fnp.zeros_like(a),
             fnp.zeros(batch + (max(n - 1, 0),), rdt), fnp.zeros(batch + (max(n - 1, 0),), dt))
    m, vecs, e, taus = fori_loop(0, n - 1, step, carry) if n > 1 else carry
    d = fnp.real(fnp.diagonal(m, axis1=-2, axis2=-1))
    r, c = np.arange(n)[:, None], np.arange(n)[None, :]
    e_pad = fnp.concatenate([e, fnp.zeros(batch + (1,), rdt)], axis=-1).astype(dt)
    if lower:
        off = fnp.where(r == c + 1, e_pad[..., None, :], fnp.where(r >= c + 2, vecs, 0))
        other = c > r
    else:
        off = fnp.where(c == r + 1, e_pad[..., :, None], fnp.where(c >= r + 2, vecs, 0))
        other = r > c
    out = fnp.where(other, a, fnp.where(r == c, d.astype(dt)[..., None, :], off))
    return out, d, e, taus


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
