"""Linear-algebra primitives on stacks of matrices: ``cholesky``, ``triangular_solve``,
``solve``, ``slogdet`` and ``det``.

Every operand is ``(..., m, n)``: the leading axes are batch axes, which must be
equal between operands (``functrans.numpy.linalg`` broadcasts them first). The numpy
implementations use ``numpy.linalg`` only, which already loops over leading axes, so
each batching rule just moves the vmapped axis to the front. Only real floating
dtypes (float32, float64) are accepted.

>>> import numpy as np
>>> a = np.array([[4.0, 2.0], [2.0, 3.0]])
>>> cholesky(a).round(3).tolist()
[[2.0, 0.0], [1.0, 1.414]]
>>> solve(a, np.array([[2.0], [1.0]])).round(3).tolist()
[[0.5], [0.0]]
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import ShapedArray
from .base import Primitive, Zero, aval, is_undefined, move_batch_axis, not_mapped_size
from .elementwise import add, mul, neg
from .reductions import reduce_sum
from .structural import broadcast_in_dim, transpose
from ..tracing import Tracer, get_aval
from .dot import dot_general

__all__ = ["cholesky", "triangular_solve", "solve", "slogdet", "det"]


# --------------------------------------------------------------------------- helpers

def _check_float(name, *avals):
    for i, a in enumerate(avals):
        if a.dtype.kind != "f":
            raise TypeError(f"{name}: operand {i} must be a real floating array "
                            f"(float32 or float64), got {a.str_short()}")
    if len({a.dtype for a in avals}) > 1:
        shown = " and ".join(a.str_short() for a in avals)
        raise TypeError(f"{name}: operands must share one dtype, got {shown}")


def _check_square(name, a):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: expected a square matrix or a stack of them "
                         f"(shape (..., n, n)), got {a.str_short()}")


def _bind_checked(prim, *args, **params):
    """Bind, running the shape rule first also when eager (bind skips it then)."""
    if not any(isinstance(a, Tracer) for a in args):
        prim.abstract_eval(*[get_aval(a) for a in args], **params)
    return prim.bind(*args, **params)


def _mT(x):
    """Swap the last two axes."""
    nd = aval(x).ndim
    return transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _matmul(x, y, tx=False, ty=False):
    """Batched ``op(x) @ op(y)`` over equal leading batch axes, by one dot_general."""
    nd = aval(x).ndim
    batch = tuple(range(nd - 2))
    cx = nd - 2 if tx else nd - 1
    cy = nd - 1 if ty else nd - 2
    return dot_general(x, y, (((cx,), (cy,)), (batch, batch)))


def _const_like(mask, like):
    """A constant (n, n) matrix broadcast to the shape and dtype of ``like``."""
    a = aval(like)
    m = np.asarray(mask, dtype=a.dtype)
    return broadcast_in_dim(m, a.shape, (a.ndim - 2, a.ndim - 1))


def _eye_like(like):
    return _const_like(np.eye(aval(like).shape[-1]), like)


def _trace_prod(g, t):
    """``sum_ij g_ij t_ij`` over the last two axes: tr(gᵀ t), linear in ``t``."""
    nd = aval(t).ndim
    return reduce_sum(mul(g, t), (nd - 2, nd - 1))


def _batch_front(prim):
    """Batching: put every operand's batch axis in front (numpy.linalg loops over it)."""
    def rule(args, dims, **params):
        size = not_mapped_size(args, dims)
        moved = [move_batch_axis(x, d, 0, size) for x, d in zip(args, dims)]
        out = prim.bind(*moved, **params)
        return (out, [0] * len(out)) if prim.multiple_results else (out, 0)
    prim.batch = rule
    return rule


def _nan_on_error(fn, *arrays, out_shape, dtype):
    """Run a numpy.linalg call; on failure (singular / not positive definite) redo it
    matrix by matrix and fill the failing ones with NaN, as a compiled backend would."""
    try:
        with np.errstate(all="ignore"):
            return np.asarray(fn(*arrays), dtype=dtype)
    except np.linalg.LinAlgError:
        pass
    batch = out_shape[:-2]
    out = np.full(out_shape, np.nan, dtype=dtype)
    flat = [np.reshape(a, (-1,) + a.shape[len(batch):]) for a in arrays]
    res = out.reshape((-1,) + out_shape[len(batch):])
    for i in range(res.shape[0]):   # only reached for a failing input
        try:
            with np.errstate(all="ignore"):
                res[i] = fn(*[f[i] for f in flat])
        except np.linalg.LinAlgError:
            pass
    return out


# --------------------------------------------------------------------------- cholesky

cholesky_p = Primitive("cholesky")


def _cholesky_aval(a):
    _check_float("cholesky", a)
    _check_square("cholesky", a)
    return ShapedArray(a.shape, a.dtype)


def _cholesky_impl(a):
    a = np.asarray(a)
    return _nan_on_error(np.linalg.cholesky, a, out_shape=a.shape, dtype=a.dtype)


def _cholesky_jvp(primals, tangents):
    # A = L Lᵀ  =>  dL = L Φ(L⁻¹ dA L⁻ᵀ), Φ = lower triangle with the diagonal halved
    (a,), (da,) = primals, tangents
    L = cholesky_p.bind(a)
    if type(da) is Zero:
        return L, Zero(aval(L))
    n = aval(a).shape[-1]
    da = mul(add(da, _mT(da)), _const_like(np.full((n, n), 0.5), da))
    tmp = triangular_solve(L, da, left_side=True, lower=True)
    x = triangular_solve(L, tmp, left_side=False, lower=True, transpose_a=True)
    phi = mul(x, _const_like(np.tril(np.ones((n, n))) - 0.5 * np.eye(n), x))
    return L, _matmul(L, phi)


cholesky_p.def_rules(abstract_eval=_cholesky_aval, impl=_cholesky_impl, jvp=_cholesky_jvp)
_batch_front(cholesky_p)


def cholesky(a):
    """The lower Cholesky factor L of a symmetric positive-definite ``a`` (A = L Lᵀ).

    Only the lower triangle of ``a`` is read; a matrix that is not positive
    definite gives NaN.

    >>> import numpy as np
    >>> cholesky(np.array([[4.0]])).tolist()
    [[2.0]]
    """
    return _bind_checked(cholesky_p, a)


# --------------------------------------------------------------------------- triangular_solve

triangular_solve_p = Primitive("triangular_solve")


def _tri_params_ok(name, a, b, left_side):
    _check_float(name, a, b)
    _check_square(name, a)
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
    _tri_params_ok("triangular_solve", a, b, left_side)
    return ShapedArray(b.shape, b.dtype)


def _tri_mask(n, lower, unit_diagonal):
    m = np.tril(np.ones((n, n))) if lower else np.triu(np.ones((n, n)))
    return m - np.eye(n) if unit_diagonal else m


def _triangular_solve_impl(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    a, b = np.asarray(a), np.asarray(b)
    n = a.shape[-1]
    t = a * _tri_mask(n, lower, unit_diagonal).astype(a.dtype)
    if unit_diagonal:
        t = t + np.eye(n, dtype=a.dtype)
    if transpose_a:
        t = np.swapaxes(t, -1, -2)
    if left_side:   # op(A) X = B
        return _nan_on_error(np.linalg.solve, t, b, out_shape=b.shape, dtype=b.dtype)
    # X op(A) = B  <=>  op(A)ᵀ Xᵀ = Bᵀ
    bt = np.swapaxes(b, -1, -2)
    x = _nan_on_error(np.linalg.solve, np.swapaxes(t, -1, -2), bt, out_shape=bt.shape,
                      dtype=b.dtype)
    return np.ascontiguousarray(np.swapaxes(x, -1, -2))


def _triangular_solve_jvp(primals, tangents, **params):
    (a, b), (da, db) = primals, tangents
    x = triangular_solve_p.bind(a, b, **params)
    t = Zero(aval(x))
    if type(db) is not Zero:
        t = triangular_solve_p.bind(a, db, **params)
    if type(da) is not Zero:
        n = aval(a).shape[-1]
        dt = mul(da, _const_like(_tri_mask(n, params["lower"], params["unit_diagonal"]), da))
        # op(A) X = B  =>  op(A) dX = -op(dA) X;   X op(A) = B  =>  dX op(A) = -X op(dA)
        if params["left_side"]:
            rhs = _matmul(dt, x, tx=params["transpose_a"])
        else:
            rhs = _matmul(x, dt, ty=params["transpose_a"])
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
_batch_front(triangular_solve_p)


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     unit_diagonal=False):
    """Solve ``op(a) x = b`` (``left_side``) or ``x op(a) = b`` with triangular ``a``.

    Only the ``lower`` (or upper) triangle of ``a`` is read; ``op`` transposes when
    ``transpose_a``; ``unit_diagonal`` takes the diagonal as ones. Defaults follow
    ``jax.lax.linalg.triangular_solve``.

    >>> import numpy as np
    >>> triangular_solve(np.array([[2.0, 0.0], [1.0, 1.0]]), np.array([[2.0], [3.0]]),
    ...                  left_side=True, lower=True).tolist()
    [[1.0], [2.0]]
    """
    return _bind_checked(triangular_solve_p, a, b, left_side=bool(left_side),
                         lower=bool(lower), transpose_a=bool(transpose_a),
                         unit_diagonal=bool(unit_diagonal))


# --------------------------------------------------------------------------- solve

solve_p = Primitive("solve")


def _solve_aval(a, b):
    _tri_params_ok("solve", a, b, True)
    return ShapedArray(b.shape, b.dtype)


def _solve_impl(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return _nan_on_error(np.linalg.solve, a, b, out_shape=b.shape, dtype=b.dtype)


def _solve_jvp(primals, tangents):
    # A X = B  =>  A dX = dB - dA X
    (a, b), (da, db) = primals, tangents
    x = solve_p.bind(a, b)
    if type(da) is Zero and type(db) is Zero:
        return x, Zero(aval(x))
    if type(da) is Zero:
        rhs = db
    else:
        rhs = neg(_matmul(da, x))
        if type(db) is not Zero:
            rhs = add(db, rhs)
    return x, solve_p.bind(a, rhs)


def _solve_transpose(ct, a, b):
    if is_undefined(a):
        raise TypeError("solve: cannot transpose with respect to the matrix a")
    if type(ct) is Zero:
        return [None, Zero(b.aval)]
    return [None, solve_p.bind(_mT(a), ct)]


solve_p.def_rules(abstract_eval=_solve_aval, impl=_solve_impl, jvp=_solve_jvp,
                  transpose=_solve_transpose)
_batch_front(solve_p)


def solve(a, b):
    """``x`` with ``a @ x == b`` for ``a`` (..., n, n) and ``b`` (..., n, k) (equal batch axes).

    >>> import numpy as np
    >>> solve(np.eye(2) * 2.0, np.ones((2, 1))).tolist()
    [[0.5], [0.5]]
    """
    return _bind_checked(solve_p, a, b)


def _inv_transpose(a):
    """A⁻ᵀ, the gradient of log|det A|."""
    return _mT(solve_p.bind(a, _eye_like(a)))


# --------------------------------------------------------------------------- slogdet / det

slogdet_p = Primitive("slogdet")
slogdet_p.multiple_results = True


def _slogdet_aval(a):
    _check_float("slogdet", a)
    _check_square("slogdet", a)
    out = ShapedArray(a.shape[:-2], a.dtype)
    return [out, out]


def _slogdet_impl(a):
    a = np.asarray(a)
    sign, logabs = np.linalg.slogdet(a)
    return [np.asarray(sign, a.dtype), np.asarray(logabs, a.dtype)]


def _slogdet_jvp(primals, tangents):
    # d log|det A| = tr(A⁻¹ dA); the sign of a real determinant is locally constant
    (a,), (da,) = primals, tangents
    sign, logabs = slogdet_p.bind(a)
    if type(da) is Zero:
        return [sign, logabs], [Zero(aval(sign)), Zero(aval(logabs))]
    return [sign, logabs], [Zero(aval(sign)), _trace_prod(_inv_transpose(a), da)]


slogdet_p.def_rules(abstract_eval=_slogdet_aval, impl=_slogdet_impl, jvp=_slogdet_jvp)
_batch_front(slogdet_p)


def slogdet(a):
    """``(sign, log|det a|)`` of a square matrix or a stack of them.

    >>> import numpy as np
    >>> [float(v) for v in slogdet(np.diag([-2.0, 1.0]))]
    [-1.0, 0.6931471805599453]
    """
    return tuple(_bind_checked(slogdet_p, a))


det_p = Primitive("det")


def _det_aval(a):
    _check_float("det", a)
    _check_square("det", a)
    return ShapedArray(a.shape[:-2], a.dtype)


def _det_jvp(primals, tangents):
    # d det A = det A · tr(A⁻¹ dA)
    (a,), (da,) = primals, tangents
    d = det_p.bind(a)
    if type(da) is Zero:
        return d, Zero(aval(d))
    return d, mul(d, _trace_prod(_inv_transpose(a), da))


det_p.def_rules(abstract_eval=_det_aval,
                impl=lambda a: np.asarray(np.linalg.det(np.asarray(a)), np.asarray(a).dtype),
                jvp=_det_jvp)
_batch_front(det_p)


def det(a):
    """The determinant of a square matrix or a stack of them.

    >>> import numpy as np
    >>> round(float(det(np.array([[2.0, 1.0], [1.0, 3.0]]))), 9)
    5.0
    """
    return _bind_checked(det_p, a)

