"""Linear-algebra primitives on stacks of matrices: ``cholesky``, ``triangular_solve``
and ``solve`` (``slogdet`` and ``det`` are in ``linalg_det``, the decompositions in
``linalg_decomp``).

Every operand is ``(..., m, n)``: the leading axes are batch axes, which must be
equal between operands (``functrans.numpy.linalg`` broadcasts them first). The numpy
implementations use ``numpy.linalg`` only, which already loops over leading axes, so
each batching rule just moves the vmapped axis to the front. Only real floating
and complex dtypes are accepted (a complex ``cholesky`` reads a Hermitian matrix).

>>> import numpy as np
>>> a = np.array([[4.0, 2.0], [2.0, 3.0]])
>>> cholesky(a).round(3).tolist()
[[2.0, 0.0], [1.0, 1.414]]
>>> solve(a, np.array([[2.0], [1.0]])).round(3).tolist()
[[0.5], [0.0]]
"""
from __future__ import annotations

import numpy as np
import scipy.linalg.blas as scipy_blas

from jaxpr_ir import ShapedArray
from .base import Primitive, Zero, aval, is_undefined
from .elementwise import add, conj, mul, neg
from .linalg_common import (batch_front, batched_matmul, bind_checked, check_float,
                            check_square, const_like, eye_like, hermitian_from_triangle, mT,
                            nan_on_error, real_dtype, trace_prod)
from ..typing import Array, ArrayLike

__all__ = ["cholesky", "triangular_solve", "solve"]


# --------------------------------------------------------------------------- cholesky

cholesky_p = Primitive("cholesky")


def _cholesky_aval(a):
    check_float("cholesky", a, complex_ok=True, half_ok=False)
    check_square("cholesky", a)
    return ShapedArray(a.shape, a.dtype)


def _cholesky_impl(a):
    a = np.asarray(a)
    return nan_on_error(np.linalg.cholesky, a, out_shape=a.shape, dtype=a.dtype)


def _cholesky_jvp(primals, tangents):
    # A = L Lᴴ  =>  dL = L Φ(L⁻¹ dA L⁻ᴴ), Φ = lower triangle with the diagonal halved;
    # only A's lower triangle is read, so dA is the Hermitian matrix that triangle of
    # the tangent stands for (a Hermitian tangent, as fnp's symmetrised input gives, is
    # itself)
    (a,), (da,) = primals, tangents
    L = cholesky_p.bind(a)
    if type(da) is Zero:
        return L, Zero(aval(L))
    n = aval(a).shape[-1]
    da = hermitian_from_triangle(da, True)
    tmp = triangular_solve(L, da, left_side=True, lower=True)
    l_conj = conj(L) if aval(L).dtype.kind == "c" else L
    x = triangular_solve(l_conj, tmp, left_side=False, lower=True, transpose_a=True)
    phi = mul(x, const_like(np.tril(np.ones((n, n))) - 0.5 * np.eye(n), x))
    return L, batched_matmul(L, phi)


cholesky_p.def_rules(abstract_eval=_cholesky_aval, impl=_cholesky_impl, jvp=_cholesky_jvp)
batch_front(cholesky_p)


def cholesky(a: ArrayLike) -> Array:
    """The lower Cholesky factor L of a symmetric (Hermitian) positive-definite ``a``
    (A = L Lᴴ).

    Only the lower triangle of ``a`` is read; a matrix that is not positive
    definite gives NaN.

    >>> import numpy as np
    >>> cholesky(np.array([[4.0]])).tolist()
    [[2.0]]
    """
    return bind_checked(cholesky_p, a)


# --------------------------------------------------------------------------- triangular_solve

triangular_solve_p = Primitive("triangular_solve")


def _tri_params_ok(name, a, b, left_side, complex_ok=False):
    check_float(name, a, b, complex_ok=complex_ok)
    check_square(name, a)
    if b.ndim != a.ndim:
        raise ValueError(f"{name}: a {a.str_short()} and b {b.str_short()} must have the "
                         "same rank (batch axes are not broadcast)")
    if a.shape[:-2] != b.shape[:-2]:
        raise ValueError(f"{name}: batch shapes differ: a {a.str_short()}, b {b.str_short()}")
    m = a.shape[-1]
    k = b.shape[-2] if left_side else b.shape[-1]
    if k != m:
        side = "rows" if left_side else "columns"
        raise ValueError(f"{name}: a {a.str_short()} is {m}x{m} but b {b.str_short()} has "
                         f"{k} {side}")


def _triangular_solve_aval(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    _tri_params_ok("triangular_solve", a, b, left_side, complex_ok=True)
    return ShapedArray(b.shape, b.dtype)


def _tri_mask(n, lower, unit_diagonal):
    m = np.tril(np.ones((n, n))) if lower else np.triu(np.ones((n, n)))
    return m - np.eye(n) if unit_diagonal else m


def _triangular_solve_impl(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    # BLAS ?trsm per matrix, as the CPU backend calls it (and JAX): no singularity check,
    # so a zero pivot gives IEEE infs and NaNs. X op(A) = B is solved as op(A)ᵀ Xᵀ = Bᵀ.
    a, b = np.asarray(a), np.asarray(b)
    trsm = scipy_blas.get_blas_funcs("trsm", (a, b))
    trans = transpose_a if left_side else not transpose_a
    rhs = b if left_side else np.swapaxes(b, -1, -2)
    out = np.empty(rhs.shape, b.dtype)
    with np.errstate(all="ignore"):
        for i in np.ndindex(a.shape[:-2]):
            if rhs[i].size:
                out[i] = trsm(1.0, a[i], rhs[i], side=0, lower=int(lower),
                              trans_a=int(trans), diag=int(unit_diagonal))
            else:
                out[i] = rhs[i]
    return out if left_side else np.ascontiguousarray(np.swapaxes(out, -1, -2))


def _triangular_solve_jvp(primals, tangents, **params):
    (a, b), (da, db) = primals, tangents
    x = triangular_solve_p.bind(a, b, **params)
    t = Zero(aval(x))
    if type(db) is not Zero:
        t = triangular_solve_p.bind(a, db, **params)
    if type(da) is not Zero:
        n = aval(a).shape[-1]
        dt = mul(da, const_like(_tri_mask(n, params["lower"], params["unit_diagonal"]), da))
        # op(A) X = B  =>  op(A) dX = -op(dA) X;   X op(A) = B  =>  dX op(A) = -X op(dA)
        if params["left_side"]:
            rhs = batched_matmul(dt, x, tx=params["transpose_a"])
        else:
            rhs = batched_matmul(x, dt, ty=params["transpose_a"])
        ta = neg(triangular_solve_p.bind(a, rhs, **params))
        t = ta if type(t) is Zero else add(t, ta)
    return x, t


def _triangular_solve_transpose(ct, a, b, *, left_side, lower, transpose_a, unit_diagonal):
    if is_undefined(a):
        raise TypeError("triangular_solve: cannot transpose with respect to the matrix a")
    if type(ct) is Zero:
        return [None, Zero(b.aval)]
    # X = op(A)⁻¹ B  =>  B̄ = op(A)⁻ᵀ X̄ (and the mirror image for the right side)
    return [None, triangular_solve_p.bind(a, ct, left_side=left_side, lower=lower,
                                          transpose_a=not transpose_a,
                                          unit_diagonal=unit_diagonal)]


triangular_solve_p.def_rules(abstract_eval=_triangular_solve_aval, impl=_triangular_solve_impl,
                             jvp=_triangular_solve_jvp, transpose=_triangular_solve_transpose)
batch_front(triangular_solve_p)


def triangular_solve(a: ArrayLike, b: ArrayLike, *, left_side: bool = False,
                     lower: bool = False, transpose_a: bool = False,
                     unit_diagonal: bool = False) -> Array:
    """Solve ``op(a) x = b`` (``left_side``) or ``x op(a) = b`` with triangular ``a``.

    Only the ``lower`` (or upper) triangle of ``a`` is read; ``op`` transposes when
    ``transpose_a``; ``unit_diagonal`` takes the diagonal as ones. Defaults follow
    ``jax.lax.linalg.triangular_solve``.

    >>> import numpy as np
    >>> triangular_solve(np.array([[2.0, 0.0], [1.0, 1.0]]), np.array([[2.0], [3.0]]),
    ...                  left_side=True, lower=True).tolist()
    [[1.0], [2.0]]
    """
    return bind_checked(triangular_solve_p, a, b, left_side=bool(left_side),
                         lower=bool(lower), transpose_a=bool(transpose_a),
                         unit_diagonal=bool(unit_diagonal))


# --------------------------------------------------------------------------- solve

solve_p = Primitive("solve")


def _solve_aval(a, b):
    _tri_params_ok("solve", a, b, True, complex_ok=True)
    return ShapedArray(b.shape, b.dtype)


def _solve_impl(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return nan_on_error(np.linalg.solve, a, b, out_shape=b.shape, dtype=b.dtype)


def _solve_jvp(primals, tangents):
    # A X = B  =>  A dX = dB - dA X
    (a, b), (da, db) = primals, tangents
    x = solve_p.bind(a, b)
    if type(da) is Zero and type(db) is Zero:
        return x, Zero(aval(x))
    if type(da) is Zero:
        rhs = db
    else:
        rhs = neg(batched_matmul(da, x))
        if type(db) is not Zero:
            rhs = add(db, rhs)
    return x, solve_p.bind(a, rhs)


def _solve_transpose(ct, a, b):
    if is_undefined(a):
        raise TypeError("solve: cannot transpose with respect to the matrix a")
    if type(ct) is Zero:
        return [None, Zero(b.aval)]
    return [None, solve_p.bind(mT(a), ct)]


solve_p.def_rules(abstract_eval=_solve_aval, impl=_solve_impl, jvp=_solve_jvp,
                  transpose=_solve_transpose)
batch_front(solve_p)


def solve(a: ArrayLike, b: ArrayLike) -> Array:
    """``x`` with ``a @ x == b`` for ``a`` (..., n, n) and ``b`` (..., n, k) (equal batch axes).

    >>> import numpy as np
    >>> solve(np.eye(2) * 2.0, np.ones((2, 1))).tolist()
    [[0.5], [0.5]]
    """
    return bind_checked(solve_p, a, b)
