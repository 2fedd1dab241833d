"""``dot_general``: the one contraction primitive (matmul, tensordot, einsum, ...).

``dimension_numbers = ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``.
The output has the batch dims first (in ``lhs_batch`` order), then the free dims
of ``lhs``, then those of ``rhs``, each in their original order, as in JAX.
The numpy implementation transposes each operand to (batch, free, contract),
reshapes it to 3-D and calls the BLAS-backed ``np.matmul``.

It is bilinear: the JVP is ``dot(tl, r) + dot(l, tr)``, and the transpose with
respect to either operand is another dot_general followed by a transpose.
Batching turns a batched operand's axis into an extra batch dimension when both
are batched, and into a free dimension when only one is.

>>> import numpy as np
>>> dot_general(np.ones((2, 3)), np.ones((3, 4)), (((1,), (0,)), ((), ()))).shape
(2, 4)
"""
from __future__ import annotations

import numpy as np

from backends.llvm.blas import balance_threads as balance_blas_threads
from jaxpr_ir import ShapedArray, bfloat16, dtype_kind
from ..tracing import Tracer, get_aval
from .base import Primitive, Zero, add_tangents, aval, is_undefined, move_batch_axis
from .structural import transpose
from .elementwise import convert_element_type

__all__ = ["dot_general", "dot"]

dot_general_p = Primitive("dot_general")


def _free_dims(ndim, contract, batch):
    return tuple(i for i in range(ndim) if i not in contract and i not in batch)


def _dot_general_aval(lhs, rhs, *, dimension_numbers, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers

    def fail(why):
        raise TypeError(f"dot_general: {why} (lhs {lhs.str_short()}, rhs {rhs.str_short()}, "
                        f"contracting dims {tuple(lc)} and {tuple(rc)}, batch dims "
                        f"{tuple(lb)} and {tuple(rb)})")
    if len(lc) != len(rc) or len(lb) != len(rb):
        fail("lhs and rhs need the same number of contracting and of batch dimensions")
    for dims, x, side in ((lc + lb, lhs, "lhs"), (rc + rb, rhs, "rhs")):
        if len(set(dims)) != len(dims) or any(not 0 <= d < x.ndim for d in dims):
            fail(f"{side} contracting/batch dimensions are repeated or out of range")
    for a, b in zip(lc, rc):
        if lhs.shape[a] != rhs.shape[b]:
            fail(f"contracting dimension {a} of lhs (size {lhs.shape[a]}) does not match "
                 f"dimension {b} of rhs (size {rhs.shape[b]})")
    for a, b in zip(lb, rb):
        if lhs.shape[a] != rhs.shape[b]:
            fail(f"batch dimension {a} of lhs (size {lhs.shape[a]}) does not match "
                 f"dimension {b} of rhs (size {rhs.shape[b]})")
    if lhs.dtype != rhs.dtype:
        fail(f"operand dtypes differ ({lhs.dtype} and {rhs.dtype}); promote them first")
    out_dtype = np.dtype(preferred_element_type) if preferred_element_type is not None \
        else lhs.dtype
    if dtype_kind(lhs.dtype) not in "fciub" or dtype_kind(out_dtype) not in "fciub":
        fail(f"dtype {lhs.dtype} is not supported")
    shape = (tuple(lhs.shape[d] for d in lb)
             + tuple(lhs.shape[d] for d in _free_dims(lhs.ndim, lc, lb))
             + tuple(rhs.shape[d] for d in _free_dims(rhs.ndim, rc, rb)))
    weak = lhs.weak_type and rhs.weak_type and preferred_element_type is None
    return ShapedArray(shape, out_dtype, weak)


# products of at least this many multiply-adds first set numpy's BLAS to the free cores
_BLAS_BALANCE_MIN = 1 << 16


def _dot_general_impl(lhs, rhs, *, dimension_numbers, preferred_element_type=None):
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    (lc, rc), (lb, rb) = dimension_numbers
    out_dtype = np.dtype(preferred_element_type) if preferred_element_type is not None \
        else lhs.dtype
    lf, rf = _free_dims(lhs.ndim, lc, lb), _free_dims(rhs.ndim, rc, rb)
    bshape = tuple(lhs.shape[d] for d in lb)
    lfs, rfs = tuple(lhs.shape[d] for d in lf), tuple(rhs.shape[d] for d in rf)
    nb, k = int(np.prod(bshape)), int(np.prod([lhs.shape[d] for d in lc]))
    a = np.transpose(lhs, tuple(lb) + lf + tuple(lc)).reshape(nb, int(np.prod(lfs)), k)
    b = np.transpose(rhs, tuple(rb) + tuple(rc) + rf).reshape(nb, k, int(np.prod(rfs)))
    # float16 products accumulate in float32 and round once, as XLA's CPU dot
    work = np.dtype(np.float32) if out_dtype in (np.float16, bfloat16) else out_dtype
    if work != a.dtype:
        a, b = a.astype(work), b.astype(work)
    if a.size * b.shape[-1] >= _BLAS_BALANCE_MIN:
        balance_blas_threads()
    out = np.matmul(a, b)
    return np.asarray(out.reshape(bshape + lfs + rfs), dtype=out_dtype)


def _dot_general_jvp(primals, tangents, *, dimension_numbers, preferred_element_type=None):
    (x, y), (tx, ty) = primals, tangents
    params = dict(dimension_numbers=dimension_numbers,
                  preferred_element_type=preferred_element_type)
    out = dot_general_p.bind(x, y, **params)
    t = Zero(aval(out))
    if type(tx) is not Zero:
        t = add_tangents(t, dot_general_p.bind(tx, y, **params))
    if type(ty) is not Zero:
        t = add_tangents(t, dot_general_p.bind(x, ty, **params))
    return out, t


def _transpose_operand(ct, other, this_aval, this_dims, other_dims, ct_other_free):
    """Cotangent of one operand: contract ``ct`` with ``other`` over other's free dims.

    this_dims/other_dims: (contract, batch) of the operand being solved for and of
    ``other``; ct_other_free: the positions in ``ct`` of other's free dims.
    """
    (tc, tb), (oc, ob) = this_dims, other_dims
    other_free = _free_dims(aval(other).ndim, oc, ob)
    nb = len(tb)
    if aval(other).dtype != aval(ct).dtype:
        other = convert_element_type(other, aval(ct).dtype)
    dims = ((tuple(ct_other_free), other_free), (tuple(range(nb)), tuple(ob)))
    res = dot_general_p.bind(ct, other, dimension_numbers=dims, preferred_element_type=None)
    # res axes: batch (tb order), this operand's free dims, then other's contracting
    # dims in increasing order, each paired with one of this operand's contracting dims
    this_free = _free_dims(this_aval.ndim, tc, tb)
    paired = [tc[i] for i in np.argsort(oc, kind="stable")]
    res_dims = list(tb) + list(this_free) + paired
    res = transpose(res, tuple(int(i) for i in np.argsort(res_dims)))
    return convert_element_type(res, this_aval.dtype)


def _dot_general_transpose(ct, x, y, *, dimension_numbers, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    if is_undefined(x) and is_undefined(y):
        raise TypeError("dot_general: cannot transpose a product of two linear values")
    xa, ya = aval(x), aval(y)
    nb = len(lb)
    lf, rf = _free_dims(xa.ndim, lc, lb), _free_dims(ya.ndim, rc, rb)
    if is_undefined(x):
        if type(ct) is Zero:
            return [Zero(xa), None]
        ct_rf = tuple(range(nb + len(lf), nb + len(lf) + len(rf)))
        return [_transpose_operand(ct, y, xa, (lc, lb), (rc, rb), ct_rf), None]
    if type(ct) is Zero:
        return [None, Zero(ya)]
    ct_lf = tuple(range(nb, nb + len(lf)))
    return [None, _transpose_operand(ct, x, ya, (rc, rb), (lc, lb), ct_lf)]


def _dot_general_batch(args, dims, *, dimension_numbers, preferred_element_type=None):
    (x, y), (dx, dy) = args, dims
    (lc, rc), (lb, rb) = dimension_numbers

    def shift(ds):
        return tuple(d + 1 for d in ds)
    params = dict(preferred_element_type=preferred_element_type)
    if dx is not None and dy is not None:
        # both batched: the vmapped axis becomes a new leading batch dimension
        x, y = move_batch_axis(x, dx, 0), move_batch_axis(y, dy, 0)
        dn = ((shift(lc), shift(rc)), ((0,) + shift(lb), (0,) + shift(rb)))
        return dot_general_p.bind(x, y, dimension_numbers=dn, **params), 0
    if dx is not None:
        # only lhs batched: its axis 0 is its first free dim
        x = move_batch_axis(x, dx, 0)
        dn = ((shift(lc), rc), (shift(lb), rb))
        return dot_general_p.bind(x, y, dimension_numbers=dn, **params), len(lb)
    y = move_batch_axis(y, dy, 0)
    dn = ((lc, shift(rc)), (lb, shift(rb)))
    nfree_l = aval(x).ndim - len(lc) - len(lb)
    return dot_general_p.bind(x, y, dimension_numbers=dn, **params), len(lb) + nfree_l


dot_general_p.def_rules(abstract_eval=_dot_general_aval, impl=_dot_general_impl,
                        jvp=_dot_general_jvp, transpose=_dot_general_transpose,
                        batch=_dot_general_batch)


def _canon_dn(dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    return ((tuple(int(d) for d in lc), tuple(int(d) for d in rc)),
            (tuple(int(d) for d in lb), tuple(int(d) for d in rb)))


def dot_general(lhs, rhs, dimension_numbers, preferred_element_type=None):
    """Contract ``lhs`` and ``rhs`` (same dtype) over the given dimensions.

    >>> import numpy as np
    >>> dot_general(np.ones((5, 2, 3)), np.ones((5, 3, 4)),
    ...             (((2,), (1,)), ((0,), (0,)))).shape
    (5, 2, 4)
    """
    if preferred_element_type is not None:
        preferred_element_type = np.dtype(preferred_element_type)
    params = dict(dimension_numbers=_canon_dn(dimension_numbers),
                  preferred_element_type=preferred_element_type)
    if not (isinstance(lhs, Tracer) or isinstance(rhs, Tracer)):
        # eager binds skip the shape rule; run it so bad shapes get its message
        _dot_general_aval(get_aval(lhs), get_aval(rhs), **params)
    return dot_general_p.bind(lhs, rhs, **params)


def dot(lhs, rhs, preferred_element_type=None):
    """Vector/matrix products of rank-1 or rank-2 operands (last axis of lhs with the
    first axis of rhs).

    >>> import numpy as np
    >>> float(dot(np.ones(3), np.ones(3)))
    3.0
    """
    a, b = aval(lhs), aval(rhs)
    if a.ndim not in (1, 2) or b.ndim not in (1, 2):
        raise TypeError(f"dot: operands must have rank 1 or 2, got {a.str_short()} and "
                        f"{b.str_short()}; use dot_general")
    return dot_general(lhs, rhs, (((a.ndim - 1,), (0,)), ((), ())), preferred_element_type)

