"""Matrix decompositions as primitives: ``eigh``, ``svd``, ``qr`` and ``eig``.

Operands are ``(..., m, n)`` with leading batch axes (numpy.linalg loops over them,
so batching moves the vmapped axis to the front). ``eigh``, ``svd`` and ``qr`` take
real floating matrices; ``eig`` also takes complex ones and always returns complex
eigenvalues/eigenvectors. The numpy implementation is a host step on every backend.

Derivatives follow the classic perturbation formulas (Giles, "An extended
collection of matrix derivative results", 2008), with JAX's conventions where the
derivative does not exist: eigenvector tangents of ``eigh`` are infinite/NaN at
repeated eigenvalues (the eigenvalue tangents stay finite); ``svd`` drops the
coupling terms of repeated singular values; eigenvector derivatives of ``eig`` and
derivatives of non-square ``svd(full_matrices=True)``/``qr(full_matrices=True)``
factors (not unique) raise an error.

>>> import numpy as np
>>> v, w = eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
>>> w.tolist()
[1.0, 3.0]
>>> [round(float(s), 6) for s in svd(np.diag([3.0, -4.0]), compute_uv=False)]
[4.0, 3.0]
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import ShapedArray
from .base import Primitive, Zero, aval
from .elementwise import (add, complex as make_complex, conj, div, eq, le, mul, neg, real,
                          select_n, sub)
from .linalg import solve_p, triangular_solve
from .linalg_common import (batch_front, batched_matmul, bind_checked, check_float,
                            check_square, const_like, eye_like, mT, trace_prod)
from .reductions import reduce_max, reduce_min, reduce_prod, reduce_sum
from .slicing import concatenate, slice as slice_
from .structural import broadcast_in_dim, full
from ..typing import Array, ArrayLike

__all__ = ["eigh", "svd", "qr", "eig", "det", "pinv"]

_REAL_OF = {np.dtype(np.complex64): np.dtype(np.float32),
            np.dtype(np.complex128): np.dtype(np.float64)}
_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128),
               np.dtype(np.complex64): np.dtype(np.complex64),
               np.dtype(np.complex128): np.dtype(np.complex128)}


# --------------------------------------------------------------------------- helpers

def _host_multi(fn, a, out_avals):
    """Run a numpy.linalg decomposition returning several arrays; if it fails on
    some matrix of the stack (NaN/inf input, no convergence), those outputs are NaN."""
    def cast(outs):
        return [np.ascontiguousarray(np.asarray(o, dtype=v.dtype)) for o, v in zip(outs, out_avals)]
    try:
        with np.errstate(all="ignore"):
            return cast(fn(a))
    except np.linalg.LinAlgError:
        pass
    batch = a.shape[:-2]
    outs = [np.full(v.shape, np.nan, v.dtype) for v in out_avals]
    flat_a = a.reshape((-1,) + a.shape[-2:])
    flat_o = [o.reshape((-1,) + o.shape[len(batch):]) for o in outs]
    for i in range(flat_a.shape[0]):   # only reached for a failing input
        try:
            with np.errstate(all="ignore"):
                for dst, src in zip(flat_o, fn(flat_a[i])):
                    dst[i] = src
        except np.linalg.LinAlgError:
            pass
    return outs


def _diag_of(x):
    """The diagonal ``(..., n)`` of a square ``(..., n, n)``; linear in ``x``."""
    return reduce_sum(mul(x, eye_like(x)), (aval(x).ndim - 1,))


def _spread(v, along):
    """``(..., n)`` to ``(..., n, n)``: ``v[j]`` at ``[i, j]`` (along="row") or
    ``v[i]`` at ``[i, j]`` (along="col")."""
    a = aval(v)
    nd = a.ndim
    shape = a.shape + (a.shape[-1],)
    keep = nd if along == "row" else nd - 1
    return broadcast_in_dim(v, shape, tuple(range(nd - 1)) + (keep,))


def _scale_cols(x, v):
    """``x[..., i, j] * v[..., j]``."""
    a = aval(x)
    return mul(x, broadcast_in_dim(v, a.shape, tuple(range(a.ndim - 2)) + (a.ndim - 1,)))


def _tril(x, k=0):
    n, m = aval(x).shape[-2:]
    return mul(x, const_like(np.tri(n, m, k), x))


def _cols(x, start, stop):
    a = aval(x)
    lo = (0,) * a.ndim
    hi = a.shape[:-1] + (stop,)
    return slice_(x, lo[:-1] + (start,), hi)


def _safe_reciprocal(x):
    """1/x where x != 0, else 0 (without dividing by zero)."""
    zero = eq(x, full(aval(x).shape, 0, aval(x).dtype))
    ones = full(aval(x).shape, 1, aval(x).dtype)
    return select_n(zero, div(ones, select_n(zero, x, ones)), full(aval(x).shape, 0,
                                                                  aval(x).dtype))


# --------------------------------------------------------------------------- eigh

eigh_p = Primitive("eigh")
eigh_p.multiple_results = True


def _eigh_aval(a, *, lower):
    check_float("eigh", a)
    check_square("eigh", a)
    return [ShapedArray(a.shape, a.dtype), ShapedArray(a.shape[:-1], a.dtype)]


def canonical_signs(v):
    """Eigenvectors (columns of ``v``) with a fixed sign: the first entry of largest
    magnitude (within a relative 2^-20) is made non-negative, so every backend (numpy
    here, LAPACK called natively by the LLVM backend) returns the same vectors.

    >>> canonical_signs(np.array([[0.6, 0.8], [-0.8, 0.6]])).tolist()
    [[-0.6, 0.8], [0.8, 0.6]]
    """
    v = np.asarray(v)
    if v.shape[-1] == 0:
        return v
    mag = np.abs(v)
    big = mag >= np.max(mag, axis=-2, keepdims=True) * (1.0 - 2.0 ** -20)
    lead = np.take_along_axis(v, np.argmax(big, axis=-2)[..., None, :], -2)
    return np.where(lead < 0, -v, v)


def _eigh_impl(a, *, lower):
    a = np.asarray(a)
    outs = _eigh_aval(ShapedArray(a.shape, a.dtype), lower=lower)

    def run(m):
        w, v = np.linalg.eigh(m, UPLO="L" if lower else "U")
        return [canonical_signs(v), w]
    return _host_multi(run, a, outs)


def _eigh_jvp(primals, tangents, *, lower):
    # A V = V diag(w):  dw = diag(Vᵀ dA V),  dV = V (F ∘ Vᵀ dA V) with
    # F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it. As in JAX, F is inf where two
    # eigenvalues coincide: eigenvector tangents are then not finite.
    (a,), (da,) = primals, tangents
    v, w = eigh_p.bind(a, lower=lower)
    if type(da) is Zero:
        return [v, w], [Zero(aval(v)), Zero(aval(w))]
    n = aval(a).shape[-1]
    # only one triangle of A is read: the symmetric matrix it stands for moves by
    # that triangle mirrored (strictly off-diagonal part counted twice)
    tri = np.tril(np.ones((n, n)), -1) if lower else np.triu(np.ones((n, n)), 1)
    half = mul(da, const_like(tri, da))
    da_sym = add(add(half, mT(half)), mul(da, eye_like(da)))
    vt_da_v = batched_matmul(batched_matmul(v, da_sym, tx=True), v)
    eye = eye_like(vt_da_v)
    gap = add(eye, sub(_spread(w, "row"), _spread(w, "col")))
    f = sub(div(full(aval(gap).shape, 1, aval(gap).dtype), gap), eye)
    dv = batched_matmul(v, mul(f, vt_da_v))
    return [v, w], [dv, _diag_of(vt_da_v)]


eigh_p.def_rules(abstract_eval=_eigh_aval, impl=_eigh_impl, jvp=_eigh_jvp)
batch_front(eigh_p)


def eigh(a: ArrayLike, *, lower: bool = True) -> tuple[Array, Array]:
    """``(v, w)``: eigenvectors (columns of ``v``) and ascending eigenvalues ``w`` of a
    real symmetric matrix, reading only its ``lower`` (or upper) triangle.

    >>> import numpy as np
    >>> v, w = eigh(np.array([[2.0, 0.0], [0.0, 1.0]]))
    >>> w.tolist(), np.abs(np.asarray(v)).tolist()
    ([1.0, 2.0], [[0.0, 1.0], [1.0, 0.0]])
    """
    v, w = bind_checked(eigh_p, a, lower=bool(lower))
    return v, w     # (eigenvector signs: see ``canonical_signs``)


# --------------------------------------------------------------------------- svd

svd_p = Primitive("svd")
svd_p.multiple_results = True


def _svd_aval(a, *, full_matrices, compute_uv):
    check_float("svd", a, complex_ok=True)
    if a.ndim < 2:
        raise ValueError(f"svd: expected a matrix or a stack of them, got {a.str_short()}")
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    s = ShapedArray(batch + (k,), _REAL_OF.get(a.dtype, a.dtype))
    if not compute_uv:
        return [s]
    ucols, vrows = (m, n) if full_matrices else (k, k)
    return [s, ShapedArray(batch + (m, ucols), a.dtype), ShapedArray(batch + (vrows, n), a.dtype)]


def _svd_impl(a, *, full_matrices, compute_uv):
    a = np.asarray(a)
    outs = _svd_aval(ShapedArray(a.shape, a.dtype), full_matrices=full_matrices,
                     compute_uv=compute_uv)
    if not compute_uv:
        return _host_multi(lambda m: [np.linalg.svd(m, compute_uv=False)], a, outs)

    def run(m):
        u, s, vt = np.linalg.svd(m, full_matrices=full_matrices)
        return [s, u, vt]
    return _host_multi(run, a, outs)


def _H(x):
    """The conjugate transpose over the last two axes (the transpose for reals)."""
    t = mT(x)
    return conj(t) if aval(x).dtype.kind == "c" else t


def _like(x, dtype):
    """Real ``x`` as ``dtype`` (x + 0i for a complex one; its transpose is the real part)."""
    if np.dtype(dtype).kind != "c":
        return x
    return make_complex(x, full(aval(x).shape, 0, aval(x).dtype))


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv):
    (a,), (da,) = primals, tangents
    m, n = aval(a).shape[-2:]
    dt = aval(a).dtype
    outs = svd_p.bind(a, full_matrices=full_matrices, compute_uv=compute_uv)
    if type(da) is Zero:
        return outs, [Zero(aval(o)) for o in outs]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            "svd: derivatives of full_matrices=True factors of a non-square matrix are "
            "not defined (the extra columns are not unique); use full_matrices=False")
    s, u, vt = svd_p.bind(a, full_matrices=False, compute_uv=True)
    u_h, v = _H(u), _H(vt)
    # A = U S Vᴴ:  ds = Re diag(Uᴴ dA V)
    dp = batched_matmul(batched_matmul(u_h, da), v)
    ds = _diag_of(real(dp) if dt.kind == "c" else dp)
    if not compute_uv:
        return outs, [ds]
    # dU = U (F ∘ (dP S + S dPᴴ) + i Im(diag dP)/S),  dV = V (F ∘ (S dP + dPᴴ S)),
    # F_ij = 1/(s_j² - s_i²), taken as 0 where s_i == s_j (JAX's convention); the
    # diagonal term (complex only) is the phase U and V turn by together
    s_row, s_col = _spread(s, "row"), _spread(s, "col")
    f = _like(_safe_reciprocal(mul(add(s_row, s_col), sub(s_row, s_col))), dt)
    p_s, s_p = mul(dp, _like(s_row, dt)), mul(_like(s_col, dt), dp)
    inner_u = mul(f, add(p_s, _H(p_s)))
    s_inv = _safe_reciprocal(s)
    if dt.kind == "c":
        half_inv = mul(_spread(s_inv, "row"), const_like(0.5 * np.eye(aval(s_row).shape[-1]),
                                                         s_row))
        inner_u = add(inner_u, mul(sub(dp, _H(dp)), _like(half_inv, dt)))
    du = batched_matmul(u, inner_u)
    dv = batched_matmul(v, mul(f, add(s_p, _H(s_p))))
    s_inv = _like(s_inv, dt)
    if m > n:   # the part of dA V outside the column space of U
        da_v = batched_matmul(da, v)
        rest = sub(da_v, batched_matmul(u, batched_matmul(u_h, da_v)))
        du = add(du, _scale_cols(rest, s_inv))
    if n > m:
        dah_u = batched_matmul(_H(da), u)
        rest = sub(dah_u, batched_matmul(v, batched_matmul(vt, dah_u)))
        dv = add(dv, _scale_cols(rest, s_inv))
    return outs, [ds, du, _H(dv)]


svd_p.def_rules(abstract_eval=_svd_aval, impl=_svd_impl, jvp=_svd_jvp)
batch_front(svd_p)


def svd(a: ArrayLike, *, full_matrices: bool = True,
        compute_uv: bool = True) -> Array | tuple[Array, Array, Array]:
    """Singular value decomposition of a real or complex matrix (or stack): ``(u, s, vt)``
    with ``a = u @ diag(s) @ vt`` and real ``s`` descending, or ``s`` alone
    (``compute_uv=False``).

    >>> import numpy as np
    >>> u, s, vt = svd(np.array([[0.0, 2.0], [1.0, 0.0]]))
    >>> s.tolist()
    [2.0, 1.0]
    """
    outs = bind_checked(svd_p, a, full_matrices=bool(full_matrices),
                        compute_uv=bool(compute_uv))
    if not compute_uv:
        return outs[0]
    s, u, vt = outs
    return u, s, vt


# --------------------------------------------------------------------------- qr

qr_p = Primitive("qr")
qr_p.multiple_results = True


def _qr_aval(a, *, full_matrices):
    check_float("qr", a)
    if a.ndim < 2:
        raise ValueError(f"qr: expected a matrix or a stack of them, got {a.str_short()}")
    m, n = a.shape[-2:]
    k = m if full_matrices else min(m, n)
    batch = a.shape[:-2]
    return [ShapedArray(batch + (m, k), a.dtype), ShapedArray(batch + (k, n), a.dtype)]


def _qr_impl(a, *, full_matrices):
    a = np.asarray(a)
    outs = _qr_aval(ShapedArray(a.shape, a.dtype), full_matrices=full_matrices)
    mode = "complete" if full_matrices else "reduced"
    return _host_multi(lambda x: list(np.linalg.qr(x, mode=mode)), a, outs)


def _qr_square_or_tall_jvp(dx, q, r):
    # X = Q R (m >= n, reduced):  C = Qᵀ dX R⁻¹,  Ω = tril(C, -1) - tril(C, -1)ᵀ,
    # dQ = Q (Ω - C) + dX R⁻¹,  dR = (C - Ω) R
    dx_rinv = triangular_solve(r, dx, left_side=False, lower=False)
    c = batched_matmul(q, dx_rinv, tx=True)
    low = _tril(c, -1)
    omega = sub(low, mT(low))
    dq = add(batched_matmul(q, sub(omega, c)), dx_rinv)
    dr = batched_matmul(sub(c, omega), r)
    return dq, dr


def _qr_jvp(primals, tangents, *, full_matrices):
    (x,), (dx,) = primals, tangents
    q, r = qr_p.bind(x, full_matrices=full_matrices)
    if type(dx) is Zero:
        return [q, r], [Zero(aval(q)), Zero(aval(r))]
    m, n = aval(x).shape[-2:]
    if full_matrices and m > n:
        raise NotImplementedError(
            "qr: derivatives of mode='complete' factors of a tall matrix are not defined "
            "(the extra columns of Q are not unique); use mode='reduced'")
    if m >= n:
        dq, dr = _qr_square_or_tall_jvp(dx, q, r)
        return [q, r], [dq, dr]
    # wide: X = [X1 X2] = Q [R1 R2] with square X1 = Q R1, and R2 = Qᵀ X2
    dq, dr1 = _qr_square_or_tall_jvp(_cols(dx, 0, m), q, _cols(r, 0, m))
    dx2 = _cols(dx, m, n)
    r2 = _cols(r, m, n)
    dr2 = batched_matmul(q, sub(dx2, batched_matmul(dq, r2)), tx=True)
    nd = aval(x).ndim
    return [q, r], [dq, concatenate([dr1, dr2], nd - 1)]


qr_p.def_rules(abstract_eval=_qr_aval, impl=_qr_impl, jvp=_qr_jvp)
batch_front(qr_p)


def qr(a: ArrayLike, *, full_matrices: bool = True) -> tuple[Array, Array]:
    """QR decomposition ``(q, r)`` of a real matrix (or stack), ``a = q @ r``:
    ``q`` (m, m) and ``r`` (m, n) when ``full_matrices``, else (m, k) and (k, n)
    with k = min(m, n).

    >>> import numpy as np
    >>> q, r = qr(np.array([[3.0], [4.0]]), full_matrices=False)
    >>> np.abs(np.asarray(r)).tolist()
    [[5.0]]
    """
    q, r = bind_checked(qr_p, a, full_matrices=bool(full_matrices))
    return q, r


# --------------------------------------------------------------------------- eig

eig_p = Primitive("eig")
eig_p.multiple_results = True


def _eig_aval(a, *, compute_v, internal_vector_tangents=False):
    if a.dtype.kind not in "fc":
        raise TypeError(f"eig: expected a floating or complex matrix, got {a.str_short()}")
    check_square("eig", a)
    c = _COMPLEX_OF[a.dtype]
    w = ShapedArray(a.shape[:-1], c)
    return [w, ShapedArray(a.shape, c)] if compute_v else [w]


def _eig_impl(a, *, compute_v, internal_vector_tangents=False):
    a = np.asarray(a)
    outs = _eig_aval(ShapedArray(a.shape, a.dtype), compute_v=compute_v)
    if compute_v:
        return _host_multi(lambda m: list(np.linalg.eig(m)), a, outs)
    return _host_multi(lambda m: [np.linalg.eigvals(m)], a, outs)


def _eig_jvp(primals, tangents, *, compute_v, internal_vector_tangents=False):
    # ``internal_vector_tangents`` marks the eigenvectors this rule itself uses: their
    # tangents (in the gauge with no component along each vector) are not numpy's
    # normalisation, but the eigenvalues' second derivatives do not depend on it
    (a,), (da,) = primals, tangents
    if compute_v and not internal_vector_tangents and type(da) is not Zero:
        raise NotImplementedError(
            "eig: derivatives of non-symmetric eigenvectors are not supported (they "
            "depend on a normalisation that is not unique); differentiate eigvals, or "
            "use eigh for symmetric matrices")
    params = dict(compute_v=compute_v, internal_vector_tangents=internal_vector_tangents)
    outs = eig_p.bind(a, **params)
    if type(da) is Zero:
        return outs, [Zero(aval(o)) for o in outs]
    w, v = eig_p.bind(a, compute_v=True, internal_vector_tangents=True)
    # A V = V diag(w):  C = V⁻¹ dA V,  dw = diag(C),  dV = V (F ∘ C) with
    # F_ij = 1/(w_j - w_i) off the diagonal (inf at repeated eigenvalues, as eigh)
    if aval(da).dtype.kind != "c":
        da = make_complex(da, full(aval(da).shape, 0, aval(da).dtype))
    c = batched_matmul(solve_p.bind(v, da), v)
    dw = _diag_of(c)
    if not compute_v:
        return outs, [dw]
    eye = eye_like(c)
    gap = add(eye, sub(_spread(w, "row"), _spread(w, "col")))
    f = sub(div(full(aval(gap).shape, 1, aval(gap).dtype), gap), eye)
    return outs, [dw, batched_matmul(v, mul(f, c))]


eig_p.def_rules(abstract_eval=_eig_aval, impl=_eig_impl, jvp=_eig_jvp)
batch_front(eig_p)


def eig(a: ArrayLike, *, compute_right_eigenvectors: bool = True) -> tuple[Array, ...]:
    """Eigenvalues (and right eigenvectors) of a general square matrix, complex:
    ``(w, v)`` with ``a @ v = v * w``, or ``(w,)`` without eigenvectors.

    >>> import numpy as np
    >>> w, = eig(np.array([[0.0, -1.0], [1.0, 0.0]]), compute_right_eigenvectors=False)
    >>> sorted(np.asarray(w).imag.tolist())
    [-1.0, 1.0]
    """
    return tuple(bind_checked(eig_p, a, compute_v=bool(compute_right_eigenvectors)))

# --------------------------------------------------------------------------- det

det_p = Primitive("det")


def _det_aval(a):
    check_float("det", a)
    check_square("det", a)
    return ShapedArray(a.shape[:-2], a.dtype)


def _bool_eye_like(x):
    a = aval(x)
    n = a.shape[-1]
    return broadcast_in_dim(np.eye(n, dtype=bool), a.shape, (a.ndim - 2, a.ndim - 1))


def _adjugate_transposed(a, d):
    """adj(A)ᵀ, the gradient of det at A (``d`` = det A), also at singular A.

    Away from singular matrices it is det(A) A⁻ᵀ (smooth, so second derivatives stay
    right); near them it comes from the SVD A = U S Vᵀ: adj(A) = det(U) det(Vᵀ)
    V diag(∏_{j≠i} s_j) Uᵀ, exact at any rank (zero below rank n-1), as JAX's."""
    a_aval = aval(a)
    n = a_aval.shape[-1]
    nd = a_aval.ndim
    s, u, vt = svd_p.bind(a, full_matrices=False, compute_uv=True)
    eps = float(np.finfo(a_aval.dtype).eps)
    tol = mul(reduce_max(s, (nd - 2,)), full(a_aval.shape[:-2], n * eps, a_aval.dtype))
    near_singular = le(reduce_min(s, (nd - 2,)), tol)
    mat_shape = a_aval.shape
    batch_dims = tuple(range(nd - 2))
    singular_mat = broadcast_in_dim(near_singular, mat_shape, batch_dims)
    eye = eye_like(a)
    # the inverse of a (near-)singular matrix is not used: solve with I there (no inf
    # reaches the gradient through the unselected branch)
    a_safe = select_n(singular_mat, a, eye)
    via_inv = mul(broadcast_in_dim(d, mat_shape, batch_dims), mT(solve_p.bind(a_safe, eye)))
    others = select_n(_bool_eye_like(a), _spread(s, "row"), full(mat_shape, 1, a_aval.dtype))
    prod_others = reduce_prod(others, (nd - 1,))
    sign = mul(det_p.bind(u), det_p.bind(vt))
    adj = batched_matmul(_scale_cols(mT(vt), prod_others), u, ty=True)
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
    check_float("pinv", a)
    if a.ndim < 2:
        raise ValueError(f"pinv: expected a matrix or a stack of them, got {a.str_short()}")
    return ShapedArray(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a.dtype)


def _pinv_impl(a, *, rtol):
    a = np.asarray(a)
    out = _pinv_aval(ShapedArray(a.shape, a.dtype), rtol=rtol)
    if 0 in a.shape[-2:]:
        return np.zeros(out.shape, a.dtype)

    def run(m):
        u, s, vt = np.linalg.svd(m, full_matrices=False)
        keep = s > rtol * np.max(s, axis=-1, keepdims=True)
        s_inv = np.where(keep, 1.0 / np.where(keep, s, 1.0), 0.0)
        return [np.swapaxes(vt, -1, -2) * s_inv[..., None, :] @ np.swapaxes(u, -1, -2)]
    return _host_multi(run, a, [out])[0]


def _pinv_jvp(primals, tangents, *, rtol):
    # dP = -P dA P + P Pᵀ dAᵀ (I - A P) + (I - P A) dAᵀ Pᵀ P   (Golub & Pereyra, 1973):
    # the derivative where the rank is locally constant, also at repeated singular values
    (a,), (da,) = primals, tangents
    p = pinv_p.bind(a, rtol=rtol)
    if type(da) is Zero:
        return p, Zero(aval(p))
    ap, pa = batched_matmul(a, p), batched_matmul(p, a)
    dat = mT(da)
    out = neg(batched_matmul(batched_matmul(p, da), p))
    left = batched_matmul(batched_matmul(p, p, ty=True), dat)
    out = add(out, batched_matmul(left, sub(eye_like(ap), ap)))
    right = batched_matmul(sub(eye_like(pa), pa), dat)
    out = add(out, batched_matmul(right, batched_matmul(p, p, tx=True)))
    return p, out


pinv_p.def_rules(abstract_eval=_pinv_aval, impl=_pinv_impl, jvp=_pinv_jvp)
batch_front(pinv_p)


def pinv(a: ArrayLike, *, rtol: float) -> Array:
    """The Moore-Penrose pseudo-inverse of a real matrix (stack), dropping singular
    values at or below ``rtol * max(s)``.

    >>> import numpy as np
    >>> pinv(np.array([[2.0, 0.0], [0.0, 0.0]]), rtol=1e-12).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    return bind_checked(pinv_p, a, rtol=float(rtol))
