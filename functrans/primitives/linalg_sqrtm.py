"""The principal matrix square root as a primitive: ``sqrtm a`` (the Schur method
behind ``jax.scipy.linalg.sqrtm``), for square real or complex ``(..., n, n)``.

Björck–Hammarling, the point recurrence JAX uses: complex Schur form ``a = z t z^H``
(LAPACK ``zgees``), the upper-triangular root ``r`` of ``t`` (``r_ii = sqrt(t_ii)``,
``r_ij = (t_ij - sum_{i<k<j} r_ik r_kj) / (r_ii + r_jj)``), then ``z r z^H``. Always
complex, as JAX's, and computed in complex128 (float32/complex64 results rounded). A
zero numerator in the recurrence gives 0 (JAX's rule), so a singular matrix that has a
root gets it; one without (a nilpotent block) gives inf/NaN entries; inf or NaN input,
or a Schur form LAPACK fails on, gives NaN. The values equal ``scipy.linalg.sqrtm``'s
to rounding on matrices with a root (scipy 1.17 runs a recursive blocked variant).

Unlike JAX's it is differentiable: ``X dX + dX X = dA``, a Sylvester equation solved
in X's Schur basis column by column (triangular solves in a ``fori_loop``) inside a
custom linear solve, so reverse mode solves the transposed equation and higher orders
differentiate the map, not the solver. Batching: per matrix of the stack. Under jit
the CPU backend runs it natively (``backends/llvm/lapack_sqrtm.py``: the host's steps,
the same numbers to rounding); its derivative's pieces are native too.

>>> import numpy as np
>>> np.asarray(sqrtm(np.diag([4.0, 9.0]))).real.tolist()
[[2.0, 0.0], [0.0, 3.0]]
"""
from __future__ import annotations

import numpy as np
import scipy.linalg
from numpy.lib.stride_tricks import as_strided

from jaxpr_ir import ShapedArray
from ..typing import Array, ArrayLike
from .base import Primitive, Zero, aval
from .control_flow import fori_loop
from .custom import stop_gradient
from .elementwise import add, convert_element_type, eq, mul, select_n, sub
from .linalg import triangular_solve
from .linalg_common import (H, batch_front, batched_matmul, bind_checked, check_float,
                            check_square, eye_like, mT)
from .linalg_schur import schur
from .linear_solve import custom_linear_solve
from .structural import broadcast_in_dim, broadcasted_iota, zeros_like_aval

__all__ = ["sqrtm"]

sqrtm_p = Primitive("sqrtm")
_COMPLEX = {np.dtype(np.float32): np.complex64, np.dtype(np.complex64): np.complex64,
            np.dtype(np.float64): np.complex128, np.dtype(np.complex128): np.complex128}


def _sqrtm_aval(a):
    check_float("sqrtm", a, complex_ok=True)
    check_square("sqrtm", a)
    return ShapedArray(a.shape, _COMPLEX[np.dtype(a.dtype)])


def _sqrtm_triu(t):
    """numpy: the principal square root of the upper-triangular complex ``t`` by the
    column recurrence ``r_ij = (t_ij - sum_{i<k<j} r_ik r_kj) / (r_ii + r_jj)``, one
    superdiagonal at a time; the sum runs k upward from 0, and a zero numerator gives 0
    (JAX's rule: a singular matrix that has a root keeps it). The native
    kernel (``backends/llvm/lapack_sqrtm.py``) computes the same sums in the same order."""
    n = t.shape[-1]
    d = np.sqrt(np.diagonal(t))
    r = np.diag(d)
    flat, e = r.reshape(-1), r.itemsize
    for m in range(1, n):
        i = np.arange(n - m)
        j = i + m
        s = np.zeros(n - m, t.dtype)
        if m > 1:       # r[i, i+p] and r[i+p, i+m] (p = 1..m-1) as strided views of r
            left = as_strided(flat[1:], (n - m, m - 1), ((n + 1) * e, e), writeable=False)
            right = as_strided(flat[n + m:], (n - m, m - 1), ((n + 1) * e, n * e),
                               writeable=False)
            s = s + np.cumsum(left * right, axis=1)[:, -1]
        num = t[i, j] - s
        r[i, j] = np.where(num == 0, 0, num / (d[i] + d[j]))
    return r


def _sqrtm_impl(a):
    a = np.asarray(a)
    dt = _COMPLEX[a.dtype]
    flat = a.reshape((int(np.prod(a.shape[:-2], dtype=np.int64)),) + a.shape[-2:])
    out = np.empty(flat.shape, dt)
    for i, m in enumerate(flat):
        if m.size == 0:
            break
        out[i] = np.nan
        if not np.all(np.isfinite(m)):
            continue
        with np.errstate(all="ignore"):   # a singular matrix: infs and NaNs, no warning
            try:
                t, z = scipy.linalg.schur(m.astype(np.complex128), output="complex",
                                          check_finite=False)
            except (np.linalg.LinAlgError, ValueError):     # zgees did not converge
                continue
            out[i] = (z @ _sqrtm_triu(t)) @ z.conj().T
    return out.reshape(a.shape)


def _sylvester_triu(r, c):
    """``y`` with ``r y + y r = c`` for upper-triangular ``r`` (stacks (..., n, n)), column
    by column: ``(r + r_jj I) y[:, j] = c[:, j] - y[:, :j] r[:j, j]`` (columns of ``y``
    from j on are still 0), each a triangular solve; columns picked by one-hot products."""
    a = aval(r)
    nd, n = a.ndim, a.shape[-1]
    col = a.shape[:-1] + (1,)
    rows = broadcasted_iota(np.int32, col, nd - 2)
    cols = broadcasted_iota(np.int32, a.shape, nd - 1)
    eye = eye_like(r)

    def step(j, y):
        j = convert_element_type(j, np.int32)
        e = convert_element_type(eq(rows, broadcast_in_dim(j, col, ())), a.dtype)
        r_j = batched_matmul(r, e)                                 # r[:, j]
        r_jj = broadcast_in_dim(batched_matmul(e, r_j, tx=True), a.shape, tuple(range(nd)))
        rhs = sub(batched_matmul(c, e), batched_matmul(y, r_j))
        y_j = triangular_solve(add(r, mul(eye, r_jj)), rhs, left_side=True, lower=False)
        return select_n(eq(cols, broadcast_in_dim(j, a.shape, ())), y,
                        broadcast_in_dim(y_j, a.shape, tuple(range(nd))))
    return fori_loop(0, n, step, zeros_like_aval(a))


def _sqrtm_jvp(primals, tangents):
    # X X = A  =>  X dX + dX X = dA: a Sylvester equation, solved in X's Schur basis
    # (X = Z T Z^H, T upper triangular) as a custom linear solve, so reverse mode solves
    # the transposed equation (Xᵀ W + W Xᵀ = B, i.e. W = solve(Bᵀ)ᵀ)
    (a,), (da,) = primals, tangents
    x = sqrtm_p.bind(a)
    if type(da) is Zero:
        return x, Zero(aval(x))
    t, z = schur(stop_gradient(x))        # the solver's constants: no derivative needed

    def solve(_, b):
        y = _sylvester_triu(t, batched_matmul(batched_matmul(H(z), b), z))
        return batched_matmul(batched_matmul(z, y), H(z))

    dx = custom_linear_solve(
        lambda v: add(batched_matmul(x, v), batched_matmul(v, x)),
        convert_element_type(da, aval(x).dtype), solve,
        transpose_solve=lambda _, b: mT(solve(None, mT(b))))
    return x, dx


sqrtm_p.def_rules(abstract_eval=_sqrtm_aval, impl=_sqrtm_impl, jvp=_sqrtm_jvp)
batch_front(sqrtm_p)


def sqrtm(a: ArrayLike) -> Array:
    """The principal square root of a square matrix (stack), by the Schur method:
    complex always (as JAX's), so a real matrix with negative eigenvalues has one.
    Differentiable (a Sylvester equation; JAX's is not).

    >>> import numpy as np
    >>> r = sqrtm(np.array([[-1.0, 0.0], [0.0, 4.0]]))
    >>> np.asarray(r).tolist()
    [[1j, 0j], [0j, (2+0j)]]
    """
    return bind_checked(sqrtm_p, a)
