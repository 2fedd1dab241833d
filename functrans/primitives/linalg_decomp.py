"""Matrix decompositions as primitives: ``eigh``, ``svd``, ``qr`` and ``eig``.

Operands are ``(..., m, n)`` with leading batch axes (numpy.linalg loops over them,
so batching moves the vmapped axis to the front), real or complex (``eigh`` reads a
Hermitian matrix; its eigenvalues and ``svd``'s singular values are real); ``eig``
always returns complex eigenvalues/eigenvectors. The numpy implementation (scipy's
LAPACK for ``eigh``) is the host step; the CPU backend calls LAPACK natively (``eigh``,
``eig`` and the complex factors to the host step's bits).

Derivatives follow the classic perturbation formulas (Giles, "An extended
collection of matrix derivative results", 2008), with JAX's conventions where the
derivative does not exist: eigenvector tangents of ``eigh`` are infinite/NaN at
repeated eigenvalues (the eigenvalue tangents stay finite); ``svd`` drops the
coupling terms of repeated singular values; eigenvector derivatives of ``eig`` raise
unless ``enable_eigvec_derivs`` (JAX's opt-in, in LAPACK's gauge); derivatives of non-square ``svd(full_matrices=True)`` factors (not unique) raise an
error; those of a tall ``qr(full_matrices=True)`` follow JAX's rule for LAPACK's
Householder Q.

>>> import numpy as np
>>> v, w = eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
>>> w.tolist()
[1.0, 3.0]
>>> [round(float(s), 6) for s in svd(np.diag([3.0, -4.0]), compute_uv=False)]
[4.0, 3.0]
"""
from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.linalg.lapack as _lapack

from jaxpr_ir import ShapedArray
from .base import Primitive, Zero, aval
from .elementwise import (add, complex as make_complex, conj, div, eq, ge, imag, mul,
                          neg, real, select_n, sub)
from .linalg import solve_p, triangular_solve
from .linalg_common import (H, as_dtype_of, batch_front, batched_matmul, bind_checked,
                            check_float, check_square, const_like, eye_like,
                            hermitian_from_triangle, host_multi, lapack_eigh, mT, real_dtype,
                            scale_cols, spread)
from .reductions import argmax, reduce_max, reduce_sum
from .slicing import concatenate, slice as slice_
from .structural import broadcast_in_dim, broadcasted_iota, full
from ..typing import Array, ArrayLike

__all__ = ["eigh", "svd", "qr", "eig"]

_REAL_OF = {np.dtype(np.complex64): np.dtype(np.float32),
            np.dtype(np.complex128): np.dtype(np.float64)}
_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128),
               np.dtype(np.complex64): np.dtype(np.complex64),
               np.dtype(np.complex128): np.dtype(np.complex128)}


# --------------------------------------------------------------------------- helpers

def _diag_of(x):
    """The diagonal ``(..., n)`` of a square ``(..., n, n)``; linear in ``x``."""
    return reduce_sum(mul(x, eye_like(x)), (aval(x).ndim - 1,))


def _tril(x, k=0):
    n, m = aval(x).shape[-2:]
    return mul(x, const_like(np.tri(n, m, k), x))


def _cols(x, start, stop):
    a = aval(x)
    lo = (0,) * a.ndim
    hi = a.shape[:-1] + (stop,)
    return slice_(x, lo[:-1] + (start,), hi)


def _row_block(x, start, stop):
    a = aval(x)
    return slice_(x, (0,) * (a.ndim - 2) + (start, 0), a.shape[:-2] + (stop, a.shape[-1]))


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
    check_float("eigh", a, complex_ok=True)
    check_square("eigh", a)
    return [ShapedArray(a.shape, a.dtype), ShapedArray(a.shape[:-1], real_dtype(a.dtype))]


def canonical_signs(v):
    """Eigenvectors (columns of ``v``) with a fixed sign (phase): the first entry of
    largest magnitude (within a relative 2^-20; of largest ``re² + im²`` for complex
    ``v``) is made non-negative (real and non-negative for complex ``v``: the column
    times ``conj(lead) * (1/hypot(lead))``, as real products), so every backend (numpy
    here, LAPACK called natively by the LLVM backend, which repeats these steps)
    returns the same vectors.

    >>> canonical_signs(np.array([[0.6, 0.8], [-0.8, 0.6]])).tolist()
    [[-0.6, 0.8], [0.8, 0.6]]
    """
    v = np.asarray(v)
    if v.shape[-1] == 0:
        return v
    mag = v.real * v.real + v.imag * v.imag if v.dtype.kind == "c" else np.abs(v)
    big = mag >= np.max(mag, axis=-2, keepdims=True) * (1.0 - 2.0 ** -20)
    lead = np.take_along_axis(v, np.argmax(big, axis=-2)[..., None, :], -2)
    if v.dtype.kind != "c":
        return np.where(lead < 0, -v, v)
    size = np.hypot(lead.real, lead.imag)
    scale = 1.0 / np.where(size > 0, size, 1.0)
    pr, pi = lead.real * scale, -lead.imag * scale
    out = np.empty_like(v)
    out.real = v.real * pr - v.imag * pi
    out.imag = v.real * pi + v.imag * pr
    return np.where(size > 0, out, v)


def _eigh_impl(a, *, lower):
    # as numpy.linalg.eigh computes (in double, float32/complex64 rounded at the end),
    # through scipy's LAPACK (the library the CPU backend calls natively: the same bits
    # at any BLAS thread count), canonical_signs before the rounding; inf/NaN in the
    # triangle read (LAPACK's result is undefined there) fails up front: NaN outputs
    a = np.asarray(a)
    outs = _eigh_aval(ShapedArray(a.shape, a.dtype), lower=lower)
    kdt = np.complex128 if a.dtype.kind == "c" else np.float64

    def run(m):
        if not np.isfinite(np.tril(m) if lower else np.triu(m)).all():
            raise np.linalg.LinAlgError("eigh: non-finite input")
        w, v = lapack_eigh(m.astype(kdt), lower)
        return [canonical_signs(v), w]
    return host_multi(run, a, outs)


def _phase_gauge(v, dv):
    """``dv`` (complex eigenvector tangents with no component along each vector) turned
    into the tangents of ``canonical_signs``' vectors: each column turns by the phase
    that keeps its lead entry (real positive, a locally constant row) real."""
    a = aval(v)
    nd, rdt = a.ndim, real_dtype(a.dtype)
    mag = add(mul(real(v), real(v)), mul(imag(v), imag(v)))     # as canonical_signs
    thr = mul(reduce_max(mag, (nd - 2,)), full(a.shape[:-1], 1.0 - 2.0 ** -20, rdt))
    lead_row = argmax(ge(mag, spread(thr, "row")), nd - 2)
    rows = broadcasted_iota(np.int64, a.shape, nd - 2)
    mask = select_n(eq(rows, spread(lead_row, "row")), full(a.shape, 0, rdt),
                    full(a.shape, 1, rdt))
    lead = reduce_sum(mul(mask, real(v)), (nd - 2,))
    theta = neg(div(reduce_sum(mul(mask, imag(dv)), (nd - 2,)), lead))
    turn = make_complex(full(a.shape[:-1], 0, rdt), theta)
    return add(dv, mul(v, spread(turn, "row")))


def _eigh_jvp(primals, tangents, *, lower):
    # A V = V diag(w):  dw = Re diag(Vᴴ dA V),  dV = V (F ∘ Vᴴ dA V) with
    # F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it. As in JAX, F is inf where two
    # eigenvalues coincide: eigenvector tangents are then not finite. Complex vectors
    # also turn by the phase that keeps ``canonical_signs``' convention.
    (a,), (da,) = primals, tangents
    v, w = eigh_p.bind(a, lower=lower)
    if type(da) is Zero:
        return [v, w], [Zero(aval(v)), Zero(aval(w))]
    dt = aval(a).dtype
    vh_da_v = batched_matmul(batched_matmul(H(v), hermitian_from_triangle(da, lower)), v)
    eye = eye_like(spread(w, "row"))
    gap = add(eye, sub(spread(w, "row"), spread(w, "col")))
    f = sub(div(full(aval(gap).shape, 1, aval(gap).dtype), gap), eye)
    dv = batched_matmul(v, mul(as_dtype_of(f, dt), vh_da_v))
    dw = _diag_of(vh_da_v)
    if dt.kind == "c":
        return [v, w], [_phase_gauge(v, dv), real(dw)]
    return [v, w], [dv, dw]


eigh_p.def_rules(abstract_eval=_eigh_aval, impl=_eigh_impl, jvp=_eigh_jvp)
batch_front(eigh_p)


def eigh(a: ArrayLike, *, lower: bool = True) -> tuple[Array, Array]:
    """``(v, w)``: eigenvectors (columns of ``v``) and ascending (real) eigenvalues ``w``
    of a real symmetric or complex Hermitian matrix, reading only its ``lower`` (or
    upper) triangle.

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
    check_float("svd", a, complex_ok=True, half_ok=False)
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

    def run(m):
        # ?gesdd's result on inf/NaN is undefined (numpy: NaN singular values beside
        # finite vectors, or LinAlgError): such a matrix fails up front, so host_multi
        # gives all its factors NaN, as the CPU backend does
        if not np.isfinite(m).all():
            raise np.linalg.LinAlgError("svd: non-finite input")
        if not compute_uv:
            return [np.linalg.svd(m, compute_uv=False)]
        u, s, vt = np.linalg.svd(m, full_matrices=full_matrices)
        return [s, u, vt]
    return host_multi(run, a, outs)


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
    u_h, v = H(u), H(vt)
    # A = U S Vᴴ:  ds = Re diag(Uᴴ dA V)
    dp = batched_matmul(batched_matmul(u_h, da), v)
    ds = _diag_of(real(dp) if dt.kind == "c" else dp)
    if not compute_uv:
        return outs, [ds]
    # dU = U (F ∘ (dP S + S dPᴴ) + i Im(diag dP)/S),  dV = V (F ∘ (S dP + dPᴴ S)),
    # F_ij = 1/(s_j² - s_i²), taken as 0 where s_i == s_j (JAX's convention); the
    # diagonal term (complex only) is the phase U and V turn by together
    s_row, s_col = spread(s, "row"), spread(s, "col")
    f = as_dtype_of(_safe_reciprocal(mul(add(s_row, s_col), sub(s_row, s_col))), dt)
    p_s, s_p = mul(dp, as_dtype_of(s_row, dt)), mul(as_dtype_of(s_col, dt), dp)
    inner_u = mul(f, add(p_s, H(p_s)))
    s_inv = _safe_reciprocal(s)
    if dt.kind == "c":
        half_inv = mul(spread(s_inv, "row"), const_like(0.5 * np.eye(aval(s_row).shape[-1]),
                                                         s_row))
        inner_u = add(inner_u, mul(sub(dp, H(dp)), as_dtype_of(half_inv, dt)))
    du = batched_matmul(u, inner_u)
    dv = batched_matmul(v, mul(f, add(s_p, H(s_p))))
    s_inv = as_dtype_of(s_inv, dt)
    if m > n:   # the part of dA V outside the column space of U
        da_v = batched_matmul(da, v)
        rest = sub(da_v, batched_matmul(u, batched_matmul(u_h, da_v)))
        du = add(du, scale_cols(rest, s_inv))
    if n > m:
        dah_u = batched_matmul(H(da), u)
        rest = sub(dah_u, batched_matmul(v, batched_matmul(vt, dah_u)))
        dv = add(dv, scale_cols(rest, s_inv))
    return outs, [ds, du, H(dv)]


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
    check_float("qr", a, complex_ok=True, half_ok=False)
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
    return host_multi(lambda x: list(np.linalg.qr(x, mode=mode)), a, outs)


def _qr_square_or_tall_jvp(dx, q, r):
    # X = Q R (m >= n, reduced):  C = Qᴴ dX R⁻¹,  Ω = tril(C, -1) - tril(C, -1)ᴴ
    # (+ i Im diag C for complex: R's diagonal stays real, as LAPACK makes it),
    # dQ = Q (Ω - C) + dX R⁻¹,  dR = (C - Ω) R
    dx_rinv = triangular_solve(r, dx, left_side=False, lower=False)
    c = batched_matmul(H(q), dx_rinv)
    low = _tril(c, -1)
    omega = sub(low, H(low))
    if aval(c).dtype.kind == "c":
        diag = mul(c, eye_like(c))
        omega = add(omega, sub(diag, as_dtype_of(real(diag), aval(c).dtype)))
    dq = add(batched_matmul(q, sub(omega, c)), dx_rinv)
    dr = batched_matmul(sub(c, omega), r)
    return dq, dr


def _qr_complete_tall_jvp(dx, q, r, n):
    # JAX's rule for the Householder Q of LAPACK (Roberts & Roberts, arXiv 2409.13374,
    # eqs. 32-33): the thin part as usual; with Q_mn = [Q_nn; Q_pn] and Z = Q_pn
    # (Q_nn - I)^-1, dQ_mp = dQ_mn Zᴴ - (Q_mn + Q_mp Z)(dQ_pn - Z dQ_nn)ᴴ, dR = [dR_nn; 0]
    m = aval(q).shape[-1]
    q_mn, q_mp = _cols(q, 0, n), _cols(q, n, m)
    dq_mn, dr_nn = _qr_square_or_tall_jvp(dx, q_mn, _row_block(r, 0, n))
    q_nn, q_pn = _row_block(q_mn, 0, n), _row_block(q_mn, n, m)
    z_h = solve_p.bind(H(sub(q_nn, eye_like(q_nn))), H(q_pn))
    z = H(z_h)
    coupled = sub(_row_block(dq_mn, n, m), batched_matmul(z, _row_block(dq_mn, 0, n)))
    dq_mp = sub(batched_matmul(dq_mn, z_h),
                batched_matmul(add(q_mn, batched_matmul(q_mp, z)), H(coupled)))
    nd = aval(q).ndim
    zeros = full(aval(dr_nn).shape[:-2] + (m - n, n), 0, aval(dr_nn).dtype)
    return concatenate([dq_mn, dq_mp], nd - 1), concatenate([dr_nn, zeros], nd - 2)


def _qr_jvp(primals, tangents, *, full_matrices):
    (x,), (dx,) = primals, tangents
    q, r = qr_p.bind(x, full_matrices=full_matrices)
    if type(dx) is Zero:
        return [q, r], [Zero(aval(q)), Zero(aval(r))]
    m, n = aval(x).shape[-2:]
    if full_matrices and m > n:
        return [q, r], list(_qr_complete_tall_jvp(dx, q, r, n))
    if m >= n:
        dq, dr = _qr_square_or_tall_jvp(dx, q, r)
        return [q, r], [dq, dr]
    # wide: X = [X1 X2] = Q [R1 R2] with square X1 = Q R1, and R2 = Qᵀ X2
    dq, dr1 = _qr_square_or_tall_jvp(_cols(dx, 0, m), q, _cols(r, 0, m))
    dx2 = _cols(dx, m, n)
    r2 = _cols(r, m, n)
    dr2 = batched_matmul(H(q), sub(dx2, batched_matmul(dq, r2)))
    nd = aval(x).ndim
    return [q, r], [dq, concatenate([dr1, dr2], nd - 1)]


qr_p.def_rules(abstract_eval=_qr_aval, impl=_qr_impl, jvp=_qr_jvp)
batch_front(qr_p)


def qr(a: ArrayLike, *, full_matrices: bool = True) -> tuple[Array, Array]:
    """QR decomposition ``(q, r)`` of a real or complex matrix (or stack), ``a = q @ r``:
    ``q`` (m, m) and ``r`` (m, n) when ``full_matrices``, else (m, k) and (k, n)
    with k = min(m, n).

    >>> import numpy as np
    >>> q, r = qr(np.array([[3.0], [4.0]]), full_matrices=False)
    >>> np.abs(np.asarray(r)).tolist()
    [[5.0]]
    """
    q, r = bind_checked(qr_p, a, full_matrices=bool(full_matrices))
    return q, r


qr_pivots_p = Primitive("qr_pivots")
qr_pivots_p.not_differentiable = True       # a permutation: piecewise constant


def _qr_pivots_aval(a):
    check_float("qr_pivots", a, complex_ok=True)
    if a.ndim < 2:
        raise ValueError(f"qr_pivots: expected a matrix or a stack of them, got {a.str_short()}")
    return ShapedArray(a.shape[:-2] + (a.shape[-1],), np.int32)


def _qr_pivots_impl(a):
    a = np.asarray(a)
    m, n = a.shape[-2:]
    flat = a.reshape((int(np.prod(a.shape[:-2])), m, n))
    out = np.tile(np.arange(n, dtype=np.int32), (flat.shape[0], 1))
    geqp3, = _lapack.get_lapack_funcs(("geqp3",), (flat,))
    for i, x in enumerate(flat):
        if m and n and np.all(np.isfinite(x)):
            out[i] = geqp3(x)[1] - 1                   # LAPACK's 1-based jpvt
    return out.reshape(a.shape[:-2] + (n,))


qr_pivots_p.def_rules(abstract_eval=_qr_pivots_aval, impl=_qr_pivots_impl)
batch_front(qr_pivots_p)


def qr_pivots(a: ArrayLike) -> Array:
    """The column permutation ``p`` (int32, (..., n)) of column-pivoted QR (LAPACK's
    ``?geqp3``, as scipy's and JAX's ``pivoting=True``): ``a[..., :, p] = q r`` with
    ``|r[0, 0]| >= |r[1, 1]| >= ...``; the QR of the permuted ``a`` is the pivoted one.

    >>> import numpy as np
    >>> qr_pivots(np.array([[1.0, 3.0], [0.0, 4.0]])).tolist()
    [1, 0]
    """
    return bind_checked(qr_pivots_p, a)


# --------------------------------------------------------------------------- eig

eig_p = Primitive("eig")
eig_p.multiple_results = True


def _eig_aval(a, *, compute_v, compute_vl=False, enable_eigvec_derivs=False):
    if a.dtype.kind not in "fc":
        raise TypeError(f"eig: expected a floating or complex matrix, got {a.str_short()}")
    check_float("eig", a, complex_ok=True, half_ok=False)
    check_square("eig", a)
    c = _COMPLEX_OF[a.dtype]
    return [ShapedArray(a.shape[:-1], c)] + [ShapedArray(a.shape, c)] * (compute_vl + compute_v)


def _eig_both(m, compute_v):
    """``[w, vl, (vr)]`` of one matrix or a stack by LAPACK's ``?geev`` with ``jobvl='V'``
    (scipy.linalg.eig's assembly of the real routine's conjugate pairs); LinAlgError on
    inf/NaN or no convergence."""
    if m.ndim > 2:
        outs = [_eig_both(x, compute_v) for x in m.reshape((-1,) + m.shape[-2:])]
        return [np.stack(o).reshape(m.shape[:-2] + o[0].shape) for o in zip(*outs)]
    if not np.isfinite(m).all():
        raise np.linalg.LinAlgError("eig: non-finite input")
    try:
        got = scipy.linalg.eig(m, left=True, right=compute_v, check_finite=False)
    except ValueError as e:     # scipy reports a failed ?geev as ValueError
        raise np.linalg.LinAlgError(str(e)) from None
    return list(got)


def _eig_impl(a, *, compute_v, compute_vl=False, enable_eigvec_derivs=False):
    # numpy.linalg (in double, single precision rounded at the end: the native emitter's
    # bits) for the right vectors alone; ?geev with left vectors through scipy otherwise
    a = np.asarray(a)
    outs = _eig_aval(ShapedArray(a.shape, a.dtype), compute_v=compute_v, compute_vl=compute_vl)
    if compute_vl:
        kdt = np.complex128 if a.dtype.kind == "c" else np.float64
        return host_multi(lambda m: _eig_both(m.astype(kdt), compute_v), a, outs)
    if compute_v:
        return host_multi(lambda m: list(np.linalg.eig(m)), a, outs)
    return host_multi(lambda m: [np.linalg.eigvals(m)], a, outs)


def _eig_vec_tangent(w, v, da):
    """``(dw, dv)`` of ``A v_j = w_j v_j`` in ?geev's gauge (unit 2-norm, the component
    of largest magnitude real), as JAX's: ``C = V⁻¹ dA V``, ``dw = diag C``,
    ``U = V (F ∘ C)`` (F_ij = 1/(w_j - w_i) off the diagonal: inf at repeated
    eigenvalues), ``dv_j = u_j + c_j v_j`` with
    ``c_j = -Re(v_jᴴ u_j) - i Im(u_kj) / v_kj``, k the row of largest ``|v_kj|``."""
    c = batched_matmul(solve_p.bind(v, da), v)
    eye = eye_like(c)
    gap = add(eye, sub(spread(w, "row"), spread(w, "col")))
    f = sub(div(full(aval(gap).shape, 1, aval(gap).dtype), gap), eye)
    u = batched_matmul(v, mul(f, c))
    a = aval(v)
    nd, rdt = a.ndim, real_dtype(a.dtype)
    mag = add(mul(real(v), real(v)), mul(imag(v), imag(v)))
    lead = argmax(mag, nd - 2)
    rows = broadcasted_iota(np.int64, a.shape, nd - 2)
    mask = select_n(eq(rows, spread(lead, "row")), full(a.shape, 0, rdt), full(a.shape, 1, rdt))
    along = real(reduce_sum(mul(conj(v), u), (nd - 2,)))
    turn = div(reduce_sum(mul(mask, imag(u)), (nd - 2,)), reduce_sum(mul(mask, real(v)), (nd - 2,)))
    coef = make_complex(neg(along), neg(turn))
    return _diag_of(c), add(u, mul(v, spread(coef, "row")))


def _eig_jvp(primals, tangents, *, compute_v, compute_vl=False, enable_eigvec_derivs=False):
    (a,), (da,) = primals, tangents
    if (compute_v or compute_vl) and not enable_eigvec_derivs and type(da) is not Zero:
        raise NotImplementedError(
            "eig: derivatives of non-symmetric eigenvectors are only valid under "
            "assumptions on the input that cannot be checked (distinct eigenvalues, one "
            "component of largest magnitude per vector); pass enable_eigvec_derivs=True to "
            "lax.linalg.eig to opt in (as JAX), or differentiate the eigenvalues alone")
    params = dict(compute_v=compute_v, compute_vl=compute_vl,
                  enable_eigvec_derivs=enable_eigvec_derivs)
    outs = eig_p.bind(a, **params)
    if type(da) is Zero:
        return outs, [Zero(aval(o)) for o in outs]
    full_outs = outs if compute_v else eig_p.bind(a, **{**params, "compute_v": True,
                                                       "enable_eigvec_derivs": True})
    w, vr = full_outs[0], full_outs[-1]
    if aval(da).dtype.kind != "c":
        da = make_complex(da, full(aval(da).shape, 0, aval(da).dtype))
    if not (compute_v or compute_vl):
        return outs, [_diag_of(batched_matmul(solve_p.bind(vr, da), vr))]
    dw, dvr = _eig_vec_tangent(w, vr, da)
    tangents_out = [dw]
    if compute_vl:      # Aᴴ vl = conj(w) vl
        tangents_out.append(_eig_vec_tangent(conj(w), outs[1], H(da))[1])
    if compute_v:
        tangents_out.append(dvr)
    return outs, tangents_out


eig_p.def_rules(abstract_eval=_eig_aval, impl=_eig_impl, jvp=_eig_jvp)
batch_front(eig_p)


def eig(a: ArrayLike, *, compute_left_eigenvectors: bool = False,
        compute_right_eigenvectors: bool = True,
        enable_eigvec_derivs: bool = False) -> tuple[Array, ...]:
    """Eigenvalues (and left/right eigenvectors) of a general square matrix, complex:
    ``(w, vl, vr)`` with ``a @ vr = vr * w`` and ``vlᴴ a = w[:, None] * vlᴴ``, each vector
    of unit norm with its largest component real (LAPACK's ``?geev``); the vectors not
    asked for are left out. Vector derivatives need ``enable_eigvec_derivs`` (as JAX's).

    >>> import numpy as np
    >>> w, = eig(np.array([[0.0, -1.0], [1.0, 0.0]]), compute_right_eigenvectors=False)
    >>> sorted(np.asarray(w).imag.tolist())
    [-1.0, 1.0]
    """
    return tuple(bind_checked(eig_p, a, compute_v=bool(compute_right_eigenvectors),
                              compute_vl=bool(compute_left_eigenvectors),
                              enable_eigvec_derivs=bool(enable_eigvec_derivs)))
