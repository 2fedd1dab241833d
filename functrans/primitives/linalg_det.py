"""``slogdet``, ``det`` and ``pinv`` as primitives, on real or complex square
(``slogdet``, ``det``) or any (``pinv``) matrices with leading batch axes. slogdet's
derivative is tr(A⁻¹ dA) as JAX computes it (analytic for 1x1 and 2x2, LU and
triangular solves above); det's and pinv's use the ``svd`` of ``linalg_decomp``:
det's gradient is the transposed adjugate, finite at singular matrices too (as
JAX's); pinv's is the closed form for a locally constant rank.

>>> import numpy as np
>>> round(float(det(np.array([[2.0, 1.0], [1.0, 3.0]]))), 9)
5.0
>>> pinv(np.array([[2.0, 0.0], [0.0, 0.0]]), rtol=1e-12).tolist()
[[0.5, 0.0], [0.0, 0.0]]
"""
from __future__ import annotations

import numpy as np
import scipy.linalg.blas as scipy_blas

from jaxpr_ir import ShapedArray
from .base import Primitive, Zero, aval
from .elementwise import (add, complex as make_complex, convert_element_type, div, imag, le,
                         mul, neg, real, select_n, sub)
from .indexing import gather
from .linalg import solve_p, triangular_solve_p
from .linalg_lu import lu_p
from .slicing import concatenate, rev, slice as slice_
from .linalg_common import (H, as_dtype_of, batch_front, batched_matmul, bind_checked,
                            check_float, check_square, const_like, eye_like, host_multi,
                            lapack_svd, mT, real_dtype, scale_cols, spread, trace_prod)
from .linalg_decomp import svd_p
from .reductions import reduce_max, reduce_min, reduce_prod
from .structural import broadcast_in_dim, broadcasted_iota, full, reshape
from ..typing import Array, ArrayLike

__all__ = ["slogdet", "det", "pinv"]


det_p = Primitive("det")


def _det_aval(a):
    check_float("det", a, complex_ok=True)
    check_square("det", a)
    return ShapedArray(a.shape[:-2], a.dtype)


def _bool_eye_like(x):
    a = aval(x)
    n = a.shape[-1]
    return broadcast_in_dim(np.eye(n, dtype=bool), a.shape, (a.ndim - 2, a.ndim - 1))


def _adjugate_transposed(a, d):
    """adj(A)ᵀ, the gradient of det at A (``d`` = det A), also at singular A.

    Away from singular matrices it is det(A) A⁻ᵀ (smooth, so second derivatives stay
    right); near them it comes from the SVD A = U S Vᴴ: adj(A) = det(U) det(Vᴴ)
    V diag(∏_{j≠i} s_j) Uᴴ, exact at any rank (zero below rank n-1), as JAX's."""
    a_aval = aval(a)
    n = a_aval.shape[-1]
    nd = a_aval.ndim
    rdt = real_dtype(a_aval.dtype)
    s, u, vt = svd_p.bind(a, full_matrices=False, compute_uv=True)
    eps = float(np.finfo(rdt).eps)
    tol = mul(reduce_max(s, (nd - 2,)), full(a_aval.shape[:-2], n * eps, rdt))
    near_singular = le(reduce_min(s, (nd - 2,)), tol)
    mat_shape = a_aval.shape
    batch_dims = tuple(range(nd - 2))
    singular_mat = broadcast_in_dim(near_singular, mat_shape, batch_dims)
    eye = eye_like(a)
    # the inverse of a (near-)singular matrix is not used: solve with I there (no inf
    # reaches the gradient through the unselected branch)
    a_safe = select_n(singular_mat, a, eye)
    via_inv = mul(broadcast_in_dim(d, mat_shape, batch_dims), mT(solve_p.bind(a_safe, eye)))
    others = select_n(_bool_eye_like(a), spread(s, "row"), full(mat_shape, 1, rdt))
    prod_others = as_dtype_of(reduce_prod(others, (nd - 1,)), a_aval.dtype)
    sign = mul(det_p.bind(u), det_p.bind(vt))
    adj = batched_matmul(scale_cols(H(vt), prod_others), H(u))
    via_svd = mul(broadcast_in_dim(sign, mat_shape, batch_dims), mT(adj))
    return select_n(singular_mat, via_inv, via_svd)


def _det_jvp(primals, tangents):
    # d det A = tr(adj(A) dA)
    (a,), (da,) = primals, tangents
    d = det_p.bind(a)
    if type(da) is Zero or aval(a).shape[-1] == 0:
        return d, Zero(aval(d))
    return d, trace_prod(_adjugate_transposed(a, d), da)


det_p.def_rules(abstract_eval=_det_aval,
                impl=lambda a: np.asarray(np.linalg.det(np.asarray(a)), np.asarray(a).dtype),
                jvp=_det_jvp)
batch_front(det_p)


def det(a: ArrayLike) -> Array:
    """The determinant of a square matrix or a stack of them; its gradient is the
    transposed adjugate, finite also at singular matrices.

    >>> import numpy as np
    >>> round(float(det(np.array([[2.0, 1.0], [1.0, 3.0]]))), 9)
    5.0
    """
    return bind_checked(det_p, a)


# --------------------------------------------------------------------------- pinv

pinv_p = Primitive("pinv")


def _pinv_aval(a, *, rtol):
    check_float("pinv", a, complex_ok=True)
    if a.ndim < 2:
        raise ValueError(f"pinv: expected a matrix or a stack of them, got {a.str_short()}")
    return ShapedArray(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a.dtype)


def _pinv_impl(a, *, rtol):
    # scipy's ?gesdd in double as numpy.linalg.svd (float32/complex64 rounded at the
    # end), s⁺ = 1/s above rtol * max(s), then P = ((U s⁺) Vt)ᴴ by scipy's ?gemm, one
    # call per matrix: the library and calls the CPU backend makes natively, so the
    # same bits. inf/NaN input (gesdd's result is undefined there) fails up front: NaN
    # outputs, as the backend's
    a = np.asarray(a)
    out = _pinv_aval(ShapedArray(a.shape, a.dtype), rtol=rtol)
    if 0 in a.shape[-2:]:
        return np.zeros(out.shape, a.dtype)
    cplx = a.dtype.kind == "c"
    gemm = scipy_blas.zgemm if cplx else scipy_blas.dgemm

    def run(m):
        if not np.isfinite(m).all():
            raise np.linalg.LinAlgError("pinv: non-finite input")
        u, s, vt = lapack_svd(m.astype(np.complex128 if cplx else np.float64))
        keep = s > rtol * np.max(s, axis=-1, keepdims=True)
        s_inv = np.where(keep, 1.0 / np.where(keep, s, 1.0), 0.0)[..., None, :]
        us = np.empty_like(u)
        us.real = u.real * s_inv
        if cplx:
            us.imag = u.imag * s_inv
        flat_u, flat_vt = us.reshape((-1,) + us.shape[-2:]), vt.reshape((-1,) + vt.shape[-2:])
        prods = np.empty(flat_u.shape[:-1] + flat_vt.shape[-1:], us.dtype)
        for i, (x, y) in enumerate(zip(flat_u, flat_vt)):
            prods[i] = gemm(1.0, x, y)
        return [np.conj(np.swapaxes(prods, -1, -2)).reshape(m.shape[:-2] + m.shape[:-3:-1])]
    return host_multi(run, a, [out])[0]


def _pinv_jvp(primals, tangents, *, rtol):
    # dP = -P dA P + P Pᴴ dAᴴ (I - A P) + (I - P A) dAᴴ Pᴴ P   (Golub & Pereyra, 1973):
    # the derivative where the rank is locally constant, also at repeated singular values
    (a,), (da,) = primals, tangents
    p = pinv_p.bind(a, rtol=rtol)
    if type(da) is Zero:
        return p, Zero(aval(p))
    ap, pa = batched_matmul(a, p), batched_matmul(p, a)
    dah = H(da)
    out = neg(batched_matmul(batched_matmul(p, da), p))
    left = batched_matmul(batched_matmul(p, H(p)), dah)
    out = add(out, batched_matmul(left, sub(eye_like(ap), ap)))
    right = batched_matmul(sub(eye_like(pa), pa), dah)
    out = add(out, batched_matmul(right, batched_matmul(H(p), p)))
    return p, out


pinv_p.def_rules(abstract_eval=_pinv_aval, impl=_pinv_impl, jvp=_pinv_jvp)
batch_front(pinv_p)


def pinv(a: ArrayLike, *, rtol: float) -> Array:
    """The Moore-Penrose pseudo-inverse of a real or complex matrix (stack), dropping singular
    values at or below ``rtol * max(s)``.

    >>> import numpy as np
    >>> pinv(np.array([[2.0, 0.0], [0.0, 0.0]]), rtol=1e-12).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    return bind_checked(pinv_p, a, rtol=float(rtol))


# --------------------------------------------------------------------------- slogdet / det

slogdet_p = Primitive("slogdet")
slogdet_p.multiple_results = True


def _slogdet_aval(a):
    check_float("slogdet", a, complex_ok=True, half_ok=False)
    check_square("slogdet", a)
    batch = a.shape[:-2]
    return [ShapedArray(batch, a.dtype), ShapedArray(batch, real_dtype(a.dtype))]


def _slogdet_impl(a):
    a = np.asarray(a)
    sign, logabs = np.linalg.slogdet(a)
    return [np.asarray(sign, a.dtype), np.asarray(logabs, real_dtype(a.dtype))]


def _entry(a, i, j):
    shape = aval(a).shape
    nd = len(shape)
    part = slice_(a, (0,) * (nd - 2) + (i, j), shape[:-2] + (i + 1, j + 1))
    return reshape(part, shape[:-2])


def _small_trace(a, da):
    """tr(A⁻¹ dA) for 1x1 and 2x2 A as JAX's analytic rule: tr(adj(A) dA) / det A, the
    division last, so a singular A gives ±inf (NaN where the numerator is 0 too) and its
    gradient adj(A)ᵀ / 0 the same, where a solve would give NaN throughout."""
    if aval(a).shape[-1] == 1:
        return div(_entry(da, 0, 0), _entry(a, 0, 0))
    nd = aval(a).ndim
    cof = mul(rev(a, (nd - 2, nd - 1)), const_like(np.array([[1.0, -1.0], [-1.0, 1.0]]), a))
    d = sub(mul(_entry(a, 0, 0), _entry(a, 1, 1)), mul(_entry(a, 0, 1), _entry(a, 1, 0)))
    return div(trace_prod(cof, da), d)


def _rows(x, perm):
    """``x[..., perm, :]`` by a gather (its transpose a scatter-add: exact with infs,
    where a product with a 0/1 matrix would make NaNs)."""
    shape = aval(x).shape
    nb = len(shape) - 2
    n = shape[-1]
    ishape = shape[:-2] + (n, 1)
    coords = [broadcasted_iota(np.int32, ishape, d) for d in range(nb)]
    coords.append(reshape(convert_element_type(perm, np.int32), ishape))
    idx = concatenate(coords, nb + 1) if nb else coords[0]
    return gather(x, idx, nb + 1) if nb else gather(x, idx, 1)


def _lu_trace(a, da):
    """tr(A⁻¹ dA) as JAX's: A = P L U by getrf, dA's rows permuted, then the two
    triangular solves (BLAS trsm) and the trace, so reverse mode runs JAX's transposed
    solves and a singular A gives its ±inf / NaN pattern (not a solve's NaN fill)."""
    lu, _, perm = lu_p.bind(a)
    x = _rows(da, perm)
    x = triangular_solve_p.bind(lu, x, left_side=True, lower=True, transpose_a=False,
                                unit_diagonal=True)
    x = triangular_solve_p.bind(lu, x, left_side=True, lower=False, transpose_a=False,
                                unit_diagonal=False)
    return trace_prod(eye_like(a), x)


def _slogdet_jvp(primals, tangents):
    # t = tr(A⁻¹ dA):  d log|det A| = Re t; a real sign is locally constant, a complex
    # one (a phase) turns by i Im t
    (a,), (da,) = primals, tangents
    sign, logabs = slogdet_p.bind(a)
    if type(da) is Zero:
        return [sign, logabs], [Zero(aval(sign)), Zero(aval(logabs))]
    if aval(a).shape[-1] in (1, 2):
        t = _small_trace(a, da)
    elif aval(a).dtype.kind == "c":     # lu is real-only: a solve (NaN at singular A)
        t = trace_prod(mT(solve_p.bind(a, eye_like(a))), da)
    else:
        t = _lu_trace(a, da)
    if aval(a).dtype.kind != "c":
        return [sign, logabs], [Zero(aval(sign)), t]
    turn = make_complex(full(aval(logabs).shape, 0, aval(logabs).dtype), imag(t))
    return [sign, logabs], [mul(sign, turn), real(t)]


slogdet_p.def_rules(abstract_eval=_slogdet_aval, impl=_slogdet_impl, jvp=_slogdet_jvp)
batch_front(slogdet_p)


def slogdet(a: ArrayLike) -> tuple[Array, Array]:
    """``(sign, log|det a|)`` of a square matrix or a stack of them (``sign`` of
    ``a``'s dtype: a unit phase for a complex one; ``log|det a|`` real).

    >>> import numpy as np
    >>> [float(v) for v in slogdet(np.diag([-2.0, 1.0]))]
    [-1.0, 0.6931471805599453]
    """
    return tuple(bind_checked(slogdet_p, a))
