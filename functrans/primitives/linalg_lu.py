"""LU factorisation with partial pivoting as primitives: ``lu`` and
``lu_pivots_to_permutation`` (as ``jax.lax.linalg.lu`` and
``jax.lax.linalg.lu_pivots_to_permutation``).

``lu a`` returns ``(lu, pivots, permutation)`` for real or complex ``(..., m, n)``
(as JAX's, rectangular too): ``lu`` holds L (unit lower, below the diagonal, m x k with
k = min(m, n)) and U (upper, k x n), ``pivots`` (k) LAPACK's row swaps (0-based: row i
was swapped with row ``pivots[i]``), ``permutation`` (m) the rows of ``a`` in the order
of ``L U`` (``a[permutation] = L U``). Its JVP is JAX's: L and U padded to the square
``L̃`` (m x m, unit) and ``Ũ`` (n x n, identity below row k), ``X = L̃⁻¹ P dA Ũ⁻¹``,
``dL = L̃ tril(X, -1)`` and ``dU = triu(X) Ũ``.
Under jit the CPU backend calls LAPACK's ``?getrf`` for square real ``lu`` (the same
factors and pivots; complex and rectangular ones run the numpy impl as a host step)
and runs ``lu_pivots_to_permutation`` natively.

>>> import numpy as np
>>> lu_, piv, perm = lu(np.array([[1.0, 2.0], [3.0, 4.0]]))
>>> piv.tolist(), perm.tolist()
([1, 1], [1, 0])
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg

from jaxpr_ir import ShapedArray
from ..typing import Array, ArrayLike
from .base import Primitive, Zero, aval, tangent_aval
from .elementwise import add, convert_element_type, eq, mul
from .linalg import triangular_solve
from .linalg_common import (batch_front, batched_matmul, bind_checked, check_float,
                            const_like)
from .slicing import pad, slice as slice_
from .structural import broadcast_in_dim, broadcasted_iota

__all__ = ["lu", "lu_pivots_to_permutation"]


# --------------------------------------------------------------------------- pivots

def _permutation_of(pivots, size):
    """numpy: the permutation the row swaps ``pivots`` (..., k) make of ``range(size)``."""
    pivots = np.asarray(pivots)
    batch = pivots.shape[:-1]
    flat = pivots.reshape((int(np.prod(batch, dtype=np.int64)), pivots.shape[-1]))   # k may be 0
    out = np.tile(np.arange(size, dtype=np.int32), (flat.shape[0], 1))
    for r in range(flat.shape[0]):
        p = out[r]
        for i, j in enumerate(flat[r]):
            p[i], p[j] = p[j], p[i]
    return out.reshape(batch + (size,))


lu_pivots_to_permutation_p = Primitive("lu_pivots_to_permutation")
lu_pivots_to_permutation_p.not_differentiable = True      # integer in, integer out


def _pivots_aval(pivots, *, permutation_size):
    if pivots.dtype != np.int32 or pivots.ndim < 1:
        raise TypeError("lu_pivots_to_permutation: pivots must be an int32 array (..., k), "
                        f"got {pivots.str_short()}")
    if pivots.shape[-1] > permutation_size:
        raise ValueError(f"lu_pivots_to_permutation: {pivots.shape[-1]} pivots do not fit a "
                         f"permutation of size {permutation_size}")
    return ShapedArray(pivots.shape[:-1] + (permutation_size,), np.int32)


def _pivots_impl(pivots, *, permutation_size):
    pivots = np.asarray(pivots)
    if pivots.size and (pivots.min() < 0 or pivots.max() >= permutation_size):
        raise ValueError(f"lu_pivots_to_permutation: pivots must lie in [0, "
                         f"{permutation_size}), got {pivots.min()}..{pivots.max()}")
    return _permutation_of(pivots, permutation_size)


lu_pivots_to_permutation_p.def_rules(abstract_eval=_pivots_aval, impl=_pivots_impl)
batch_front(lu_pivots_to_permutation_p)


def lu_pivots_to_permutation(pivots: ArrayLike, permutation_size: int) -> Array:
    """The permutation of ``range(permutation_size)`` that the row swaps ``pivots``
    (int32, 0-based, as ``lu`` returns them) make: swap ``i`` and ``pivots[i]`` in turn.

    >>> import numpy as np
    >>> lu_pivots_to_permutation(np.array([2, 2, 2], np.int32), 3).tolist()
    [2, 0, 1]
    """
    return bind_checked(lu_pivots_to_permutation_p, pivots,
                        permutation_size=int(permutation_size))


# --------------------------------------------------------------------------- lu

lu_p = Primitive("lu", multiple_results=True)


def _lu_aval(a):
    check_float("lu", a, complex_ok=True)
    if a.ndim < 2:
        raise ValueError(f"lu: expected a matrix or a stack of them (shape (..., m, n)), "
                         f"got {a.str_short()}")
    m, n = a.shape[-2:]
    return [ShapedArray(a.shape, a.dtype), ShapedArray(a.shape[:-2] + (min(m, n),), np.int32),
            ShapedArray(a.shape[:-1], np.int32)]


def _lu_impl(a):
    a = np.asarray(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    flat = a.reshape((int(np.prod(a.shape[:-2])), m, n))   # -1 is ambiguous when m n == 0
    lus = np.empty_like(flat)
    pivs = np.zeros((flat.shape[0], k), np.int32)
    for i, x in enumerate(flat):
        if k == 0:
            lus[i] = x
            continue
        if not np.all(np.isfinite(x)):       # LAPACK's result is undefined: NaN, as a failure
            lus[i], pivs[i] = np.nan, np.arange(k)
            continue
        with warnings.catch_warnings():     # an exactly singular matrix still factors
            warnings.simplefilter("ignore")
            lus[i], pivs[i] = scipy.linalg.lu_factor(x, check_finite=False)
    batch = a.shape[:-2]
    pivs = pivs.reshape(batch + (k,))
    return [lus.reshape(a.shape), pivs, _permutation_of(pivs, m)]


def _permute_rows(x, permutation):
    """``x[..., permutation, :]`` as a product with the 0/1 matrix of ``permutation``."""
    a = aval(x)
    shape = a.shape[:-1] + (a.shape[-2],)
    rows = broadcast_in_dim(permutation, shape, tuple(range(a.ndim - 1)))
    cols = broadcasted_iota(np.int32, shape, a.ndim - 1)
    return batched_matmul(convert_element_type(eq(rows, cols), a.dtype), x)


def _square_factors(lu_):
    """JAX's padded factors of an (m, n) ``lu``: unit lower ``L̃`` (m, m), its first k
    columns L's, and upper ``Ũ`` (n, n), its first k rows U's and the identity below."""
    a = aval(lu_)
    m, n = a.shape[-2:]
    k = min(m, n)
    lo, zero = (0,) * a.ndim, np.zeros((), a.dtype)
    nopad = [(0, 0, 0)] * (a.ndim - 2)
    cols = slice_(lu_, lo, a.shape[:-1] + (k,))
    l_ = pad(cols, zero, nopad + [(0, 0, 0), (0, m - k, 0)])
    l_ = add(_mul_mask(l_, np.tril(np.ones((m, m)), -1)), const_like(np.eye(m), l_))
    rows = slice_(lu_, lo, a.shape[:-2] + (k, n))
    u_ = pad(rows, zero, nopad + [(0, n - k, 0), (0, 0, 0)])
    below = np.diag((np.arange(n) >= k).astype(float))
    u_ = add(_mul_mask(u_, np.triu(np.ones((n, n)))), const_like(below, u_))
    return l_, u_


def _lu_jvp(primals, tangents):
    # P A = L U  =>  L̃⁻¹ P dA Ũ⁻¹ = L̃⁻¹ dL + dU Ũ⁻¹ (strictly lower + upper)
    (a,), (da,) = primals, tangents
    lu_, piv, perm = lu_p.bind(a)
    int_zeros = [Zero(tangent_aval(aval(piv))), Zero(tangent_aval(aval(perm)))]
    if type(da) is Zero:
        return [lu_, piv, perm], [Zero(aval(lu_))] + int_zeros
    m, n = aval(a).shape[-2:]
    l_, u_ = _square_factors(lu_)
    x = _permute_rows(da, perm)
    x = triangular_solve(l_, x, left_side=True, lower=True, unit_diagonal=True)
    x = triangular_solve(u_, x, left_side=False, lower=False)
    dl = batched_matmul(l_, _mul_mask(x, np.tril(np.ones((m, n)), -1)))
    du = batched_matmul(_mul_mask(x, np.triu(np.ones((m, n)))), u_)
    return [lu_, piv, perm], [add(dl, du)] + int_zeros


def _mul_mask(x, mask):
    """``x`` times a constant (n, n) 0/1 mask (a triangle), over the stack."""
    return mul(x, const_like(mask, x))


lu_p.def_rules(abstract_eval=_lu_aval, impl=_lu_impl, jvp=_lu_jvp)
batch_front(lu_p)


def lu(a: ArrayLike) -> tuple[Array, Array, Array]:
    """LU decomposition with partial pivoting of a real or complex (m, n) matrix (stack):
    ``(lu, pivots, permutation)`` as ``jax.lax.linalg.lu``; ``a[permutation]`` equals
    ``L @ U`` with L the unit lower triangle of ``lu[..., :, :k]`` and U the upper
    triangle of ``lu[..., :k, :]`` (k = min(m, n)); ``pivots`` (k) are 0-based (int32),
    ``permutation`` has m entries. Differentiable in ``a`` (forward and reverse).

    >>> import numpy as np
    >>> lu_, piv, perm = lu(np.array([[0.0, 1.0], [2.0, 3.0]]))
    >>> np.asarray(lu_).tolist(), perm.tolist()
    ([[2.0, 3.0], [0.0, 1.0]], [1, 0])
    """
    return tuple(bind_checked(lu_p, a))
