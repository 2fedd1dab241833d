"""Helpers shared by the linear-algebra primitive modules (``linalg``,
``linalg_decomp``): dtype and shape checks, batched matrix products built from
``dot_general``, constant masks, and the batching rule that moves the vmapped
axis to the front (numpy.linalg loops over leading axes itself).

>>> import numpy as np
>>> mT(np.arange(6.0).reshape(1, 2, 3)).shape
(1, 3, 2)
"""
from __future__ import annotations

import numpy as np
import scipy.linalg.lapack as scipy_lapack

from .base import aval, move_batch_axis, not_mapped_size
from .dot import dot_general
from .elementwise import add, complex as complex_, conj, mul, real
from .reductions import reduce_sum
from .structural import broadcast_in_dim, full, transpose
from ..tracing import Tracer, get_aval

__all__ = ["check_float", "check_square", "bind_checked", "mT", "H", "as_dtype_of",
           "real_dtype", "host_multi", "spread", "scale_cols", "hermitian_from_triangle",
           "batched_matmul", "const_like", "eye_like", "trace_prod", "batch_front",
           "nan_on_error", "lapack_eigh", "lapack_svd"]


def check_float(name, *avals, complex_ok=False, half_ok=True):
    """Operands of one floating dtype (complex too when ``complex_ok``), else TypeError;
    float16 raises NotImplementedError unless ``half_ok`` (LAPACK has no half-precision
    routines: JAX's CPU decompositions raise so too).

    >>> from jaxpr_ir import ShapedArray
    >>> check_float("f", ShapedArray((2, 2), "float64"))
    """
    kinds = "fc" if complex_ok else "f"
    for i, a in enumerate(avals):
        if a.dtype.kind not in kinds:
            what = "floating or complex" if complex_ok else "real floating"
            raise TypeError(f"{name}: operand {i} must be a {what} array, got {a.str_short()}")
        if not half_ok and a.dtype == np.float16:
            raise NotImplementedError(
                f"{name}: Unsupported dtype float16 (no LAPACK routine for it); convert with "
                f".astype(numpy.float32) first")
    if len({a.dtype for a in avals}) > 1:
        shown = " and ".join(a.str_short() for a in avals)
        raise TypeError(f"{name}: operands must share one dtype, got {shown}")


def check_square(name, a):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: expected a square matrix or a stack of them "
                         f"(shape (..., n, n)), got {a.str_short()}")


def bind_checked(prim, *args, **params):
    """Bind, running the shape rule first also when eager (bind skips it then)."""
    if not any(isinstance(a, Tracer) for a in args):
        prim.abstract_eval(*[get_aval(a) for a in args], **params)
    return prim.bind(*args, **params)


def mT(x):
    """Swap the last two axes."""
    nd = aval(x).ndim
    return transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def H(x):
    """The conjugate transpose over the last two axes (the transpose for reals).

    >>> H(np.array([[1j, 2.0]])).tolist()
    [[-1j], [(2-0j)]]
    """
    t = mT(x)
    return conj(t) if aval(x).dtype.kind == "c" else t


def real_dtype(dtype):
    """The real dtype of the same precision (float32 for complex64...).

    >>> real_dtype(np.complex64)
    dtype('float32')
    """
    dtype = np.dtype(dtype)
    return np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype


def as_dtype_of(x, dtype):
    """Real ``x`` as ``dtype``: itself for a real one, ``x + 0i`` for a complex one
    (linear in ``x``; its transpose takes the real part).

    >>> as_dtype_of(np.array([1.0]), np.complex128).tolist()
    [(1+0j)]
    """
    if np.dtype(dtype).kind != "c":
        return x
    return complex_(x, full(aval(x).shape, 0, aval(x).dtype))


def host_multi(fn, a, out_avals):
    """Run a numpy.linalg decomposition returning several arrays; if it fails on
    some matrix of the stack (NaN/inf input, no convergence), those outputs are NaN.

    >>> from jaxpr_ir import ShapedArray
    >>> host_multi(lambda m: [np.linalg.inv(m)], np.eye(2), [ShapedArray((2, 2), "float64")])[0].tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
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


def spread(v, along):
    """``(..., n)`` to ``(..., n, n)``: ``v[j]`` at ``[i, j]`` (along="row") or
    ``v[i]`` at ``[i, j]`` (along="col").

    >>> spread(np.array([1.0, 2.0]), "row").tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    """
    a = aval(v)
    nd = a.ndim
    shape = a.shape + (a.shape[-1],)
    keep = nd if along == "row" else nd - 1
    return broadcast_in_dim(v, shape, tuple(range(nd - 1)) + (keep,))


def scale_cols(x, v):
    """``x[..., i, j] * v[..., j]``.

    >>> scale_cols(np.ones((2, 2)), np.array([1.0, 2.0])).tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    """
    a = aval(x)
    return mul(x, broadcast_in_dim(v, a.shape, tuple(range(a.ndim - 2)) + (a.ndim - 1,)))


def hermitian_from_triangle(da, lower):
    """The Hermitian matrix one triangle of ``da`` stands for (the strict triangle
    mirrored and conjugated; the real part of the diagonal, as LAPACK reads it): the
    tangent of a matrix that ``eigh``/``cholesky`` read through one triangle only.

    >>> hermitian_from_triangle(np.array([[1.0, 5.0], [2.0, 3.0]]), True).tolist()
    [[1.0, 2.0], [2.0, 3.0]]
    """
    n = aval(da).shape[-1]
    tri = np.tril(np.ones((n, n)), -1) if lower else np.triu(np.ones((n, n)), 1)
    half = mul(da, const_like(tri, da))
    diag = mul(da, eye_like(da))
    if aval(da).dtype.kind == "c":
        diag = as_dtype_of(real(diag), aval(da).dtype)
    return add(add(half, H(half)), diag)


def batched_matmul(x, y, tx=False, ty=False):
    """Batched ``op(x) @ op(y)`` over equal leading batch axes, by one dot_general."""
    nd = aval(x).ndim
    batch = tuple(range(nd - 2))
    cx = nd - 2 if tx else nd - 1
    cy = nd - 1 if ty else nd - 2
    return dot_general(x, y, (((cx,), (cy,)), (batch, batch)))


def const_like(mask, like):
    """A constant (n, n) matrix broadcast to the shape and dtype of ``like``."""
    a = aval(like)
    m = np.asarray(mask, dtype=a.dtype)
    return broadcast_in_dim(m, a.shape, (a.ndim - 2, a.ndim - 1))


def eye_like(like):
    return const_like(np.eye(aval(like).shape[-1]), like)


def trace_prod(g, t):
    """``sum_ij g_ij t_ij`` over the last two axes: tr(gᵀ t), linear in ``t``."""
    nd = aval(t).ndim
    return reduce_sum(mul(g, t), (nd - 2, nd - 1))


def batch_front(prim):
    """Batching: put every operand's batch axis in front (numpy.linalg loops over it)."""
    def rule(args, dims, **params):
        size = not_mapped_size(args, dims)
        moved = [move_batch_axis(x, d, 0, size) for x, d in zip(args, dims)]
        out = prim.bind(*moved, **params)
        return (out, [0] * len(out)) if prim.multiple_results else (out, 0)
    prim.batch = rule
    return rule


def nan_on_error(fn, *arrays, out_shape, dtype):
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


def _each_matrix(call, m, outs):
    """``call(matrix)`` (a tuple of arrays, LinAlgError on failure) on each matrix of the
    stack ``m``, stored into ``outs`` (arrays shaped ``m``'s batch + each result's)."""
    flat = m.reshape((-1,) + m.shape[-2:])
    flat_outs = [o.reshape((flat.shape[0],) + o.shape[m.ndim - 2:]) for o in outs]
    for i, x in enumerate(flat):
        for dst, src in zip(flat_outs, call(x)):
            dst[i] = src
    return outs


def lapack_eigh(m, lower):
    """``(w, v)`` of each matrix of the double-precision stack ``m`` by scipy's
    ``dsyevd``/``zheevd`` (``jobz='V'``) with the workspace LAPACK's query gives, as
    numpy.linalg.eigh calls it; the library and the calls the CPU backend makes
    natively, so the same bits. LinAlgError where LAPACK fails.

    >>> w, v = lapack_eigh(np.array([[2.0, 1.0], [1.0, 2.0]]), True)
    >>> w.tolist()
    [1.0, 3.0]
    """
    n, cplx = m.shape[-1], m.dtype.kind == "c"
    w, v = np.empty(m.shape[:-1], np.float64), np.empty(m.shape, m.dtype)
    if n == 0:
        return w, v
    if cplx:
        work, iwork, rwork, _ = scipy_lapack.zheevd_lwork(n, compute_v=1, lower=int(lower))
        sizes = dict(lwork=int(np.real(work)), lrwork=int(rwork), liwork=int(iwork))
    else:
        work, iwork, _ = scipy_lapack.dsyevd_lwork(n, compute_v=1, lower=int(lower))
        sizes = dict(lwork=int(work), liwork=int(iwork))
    routine = scipy_lapack.zheevd if cplx else scipy_lapack.dsyevd

    def call(x):
        wi, vi, info = routine(x, compute_v=1, lower=int(lower), **sizes)
        if info != 0:
            raise np.linalg.LinAlgError(f"eigh: ?syevd/?heevd info {info}")
        return wi, vi
    return _each_matrix(call, m, [w, v])


def lapack_svd(m):
    """The reduced ``(u, s, vt)`` of each matrix of the double-precision stack ``m``
    (non-empty matrices) by scipy's ``dgesdd``/``zgesdd`` (``jobz='S'``) with the
    workspace LAPACK's query gives, as numpy.linalg.svd calls it; the library the CPU
    backend calls natively. LinAlgError where LAPACK fails.

    >>> u, s, vt = lapack_svd(np.array([[3.0, 0.0], [0.0, -4.0]]))
    >>> s.tolist()
    [4.0, 3.0]
    """
    rows, cols = m.shape[-2:]
    k = min(rows, cols)
    outs = [np.empty(m.shape[:-1] + (k,), m.dtype), np.empty(m.shape[:-2] + (k,), np.float64),
            np.empty(m.shape[:-2] + (k, cols), m.dtype)]
    cplx = m.dtype.kind == "c"
    query = scipy_lapack.zgesdd_lwork if cplx else scipy_lapack.dgesdd_lwork
    work, _ = query(rows, cols, compute_uv=1, full_matrices=0)
    routine = scipy_lapack.zgesdd if cplx else scipy_lapack.dgesdd

    def call(x):
        u, s, vt, info = routine(x, compute_uv=1, full_matrices=0, lwork=int(np.real(work)))
        if info != 0:
            raise np.linalg.LinAlgError(f"svd: ?gesdd info {info}")
        return u, s, vt
    return _each_matrix(call, m, outs)
