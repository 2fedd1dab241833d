"""Batched-coordinate (BCOO) sparse arrays, with the API of ``jax.experimental.sparse``.

A ``BCOO`` of shape ``batch + sparse + dense`` holds ``data`` of shape
``batch + (nse,) + dense`` and integer ``indices`` of shape ``batch + (nse, n_sparse)``.
Every operation here is written with existing primitives (gather, scatter-add,
``dot_general``, sorts), so ``jit``, ``vmap``, ``grad`` and ``jvp`` go through them.
An index equal to (or past) the sparse shape is padding: ``todense`` drops it, as JAX's.

>>> import functrans.numpy as fnp
>>> M = BCOO.fromdense(fnp.asarray([[0.0, 2.0], [3.0, 0.0]]))
>>> M
BCOO(float64[2, 2], nse=2)
>>> (M @ fnp.asarray([1.0, 1.0])).tolist()
[2.0, 3.0]
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable, Sequence

import numpy as np

from ... import numpy as fnp
from ...array import Array
from ...batching import vmap
from ...errors import ConcretizationTypeError
from ...tracing import Tracer
from ...tree_util import register_pytree_node_class
from ._kernels import (dot_batched, from_linear_keys, in_range, linear_keys,
                       nfold_vmap)

__all__ = ["BCOO", "bcoo_todense", "bcoo_fromdense", "bcoo_extract", "bcoo_dot_general",
           "bcoo_multiply_dense", "bcoo_matmul", "bcoo_reduce_sum", "bcoo_transpose", "bcoo_sum_duplicates",
           "bcoo_sort_indices", "bcoo_reshape", "bcoo_update_layout"]

_PY_NUMBERS = (bool, int, float, complex)     # weakly typed scalars (not numpy's)
_TRACED_NSE = ("When used under a transformation (jit, vmap, grad...), nse must be given as a "
               "static argument: BCOO.fromdense(M, nse=...)")


@register_pytree_node_class
class BCOO:
    """A batched-coordinate sparse array (``jax.experimental.sparse.BCOO``).

    ``BCOO((data, indices), shape=shape)``; its leaves are ``data`` and ``indices``, so it
    passes through ``jit``, ``vmap`` (the mapped axis becomes a batch axis) and ``grad``.

    >>> import functrans.numpy as fnp
    >>> M = BCOO((fnp.asarray([1.0, 2.0]), fnp.asarray([[0, 1], [1, 0]])), shape=(2, 2))
    >>> M.todense().tolist()
    [[0.0, 1.0], [2.0, 0.0]]
    """
    __array_priority__ = 2000

    def __init__(self, args: tuple, *, shape: Sequence[int], indices_sorted: bool = False,
                 unique_indices: bool = False):
        data, indices = args
        self.data = data if isinstance(data, (Tracer, Array)) else fnp.asarray(data)
        self.indices = indices if isinstance(indices, (Tracer, Array)) else fnp.asarray(indices)
        self.shape = tuple(operator.index(d) for d in shape)
        self.indices_sorted = bool(indices_sorted)
        self.unique_indices = bool(unique_indices)
        _validate(self.data, self.indices, self.shape)

    # ---- layout
    n_batch = property(lambda self: self.indices.ndim - 2)
    n_sparse = property(lambda self: self.indices.shape[-1])
    n_dense = property(lambda self: len(self.shape) - self.n_batch - self.n_sparse)
    nse = property(lambda self: self.indices.shape[-2])
    dtype = property(lambda self: self.data.dtype)
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    T = property(lambda self: self.transpose())

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v}" for k, v in (("n_batch", self.n_batch),
                                                   ("n_dense", self.n_dense)) if v)
        dims = ", ".join(map(str, self.shape))
        return f"BCOO({np.dtype(self.dtype).name}[{dims}], nse={self.nse}{extra})"

    def tree_flatten(self):
        tail = self.shape[self.n_batch:]
        return (self.data, self.indices), (tail, self.shape, self.indices_sorted,
                                           self.unique_indices)

    @classmethod
    def tree_unflatten(cls, aux: tuple, children: Sequence[Any]) -> BCOO:
        tail, shape, srt, uniq = aux
        obj = object.__new__(cls)
        obj.data, obj.indices = children
        ind_shape = getattr(obj.indices, "shape", None)     # under vmap: the lane's batch
        obj.shape = (tuple(ind_shape[:-2]) + tail
                     if ind_shape is not None and len(ind_shape) >= 2 else shape)
        obj.indices_sorted, obj.unique_indices = srt, uniq
        return obj

    # ---- conversions
    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32,
                  n_dense: int = 0, n_batch: int = 0) -> BCOO:
        """The BCOO of a dense array (``nse`` entries per batch; all nonzeros if None)."""
        return bcoo_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    def todense(self):
        """The dense array (duplicates summed, padding dropped)."""
        return bcoo_todense(self)

    def sum_duplicates(self, nse: int | None = None, remove_zeros: bool = True) -> BCOO:
        """Duplicate indices summed; sorted, unique indices."""
        return bcoo_sum_duplicates(self, nse=nse)

    def sort_indices(self) -> BCOO:
        """The same array with its indices in lexicographic order."""
        return bcoo_sort_indices(self)

    def transpose(self, axes: Sequence[int] | None = None) -> BCOO:
        """Axes permuted (batch, sparse and dense axes each among themselves)."""
        return bcoo_transpose(self, permutation=tuple(range(self.ndim))[::-1]
                              if axes is None else tuple(axes))

    def reshape(self, *shape: Any) -> BCOO:
        """A new shape with the same entries (``n_batch == n_dense == 0`` only)."""
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return bcoo_reshape(self, new_sizes=tuple(shape))

    def sum(self, axis: int | Sequence[int] | None = None) -> BCOO:
        """Sum over ``axis`` (all axes if None), a BCOO."""
        axes = range(self.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
        return bcoo_reduce_sum(self, axes=tuple(a % self.ndim for a in axes))

    def astype(self, dtype: Any) -> BCOO:
        """Values cast to ``dtype``."""
        return self._with_data(self.data.astype(dtype))

    def _with_data(self, data: Any) -> BCOO:
        return BCOO((data, self.indices), shape=self.shape, indices_sorted=self.indices_sorted,
                    unique_indices=self.unique_indices)

    # ---- arithmetic
    def __neg__(self) -> BCOO:
        return self._with_data(-self.data)

    def __pos__(self) -> BCOO:
        return self

    def __mul__(self, other: Any) -> BCOO:
        if isinstance(other, BCOO):
            return bcoo_multiply_sparse(self, other)
        return self._with_data(bcoo_multiply_dense(self, other))

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> BCOO:
        if isinstance(other, BCOO):
            raise NotImplementedError("Division by a sparse array is not implemented because "
                                      "it would result in dense output.")
        if type(other) in _PY_NUMBERS:      # stays weak: float32 data stay float32, as JAX
            return self._with_data(self.data / other)
        return self._with_data(bcoo_multiply_dense(self, 1.0 / fnp.asarray(other)))

    def __add__(self, other: Any) -> Any:
        if isinstance(other, BCOO):
            return bcoo_add(self, other)
        if fnp.shape(other) != self.shape:
            raise NotImplementedError(
                "Addition between a sparse array X and a dense array Y is not implemented when "
                "the output shape is larger than Y.shape.")
        return self.todense() + other

    __radd__ = __add__

    def __sub__(self, other: Any) -> BCOO:
        if not isinstance(other, BCOO):
            raise NotImplementedError("Subtraction between sparse and dense array.")
        return bcoo_add(self, -other)

    def __matmul__(self, other: Any) -> Any:
        return bcoo_matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return bcoo_matmul(other, self)

    def block_until_ready(self) -> BCOO:
        return self


def _validate(data: Any, indices: Any, shape: tuple) -> None:
    if indices.ndim < 2:
        raise ValueError(f"BCOO indices must have ndim >= 2, got shape {indices.shape}")
    n_batch, (nse, n_sparse) = indices.ndim - 2, indices.shape[-2:]
    n_dense = len(shape) - n_batch - n_sparse
    if n_dense < 0:
        raise ValueError(f"BCOO indices of shape {indices.shape} do not fit shape {shape}")
    want = (shape[:n_batch], (nse,), shape[n_batch + n_sparse:])
    got = (tuple(data.shape[:n_batch]), tuple(data.shape[n_batch:n_batch + 1]),
           tuple(data.shape[n_batch + 1:]))
    batch_ok = all(b in (1, s) for b, s in zip(got[0], want[0])) and \
        all(b in (1, s) for b, s in zip(indices.shape[:n_batch], want[0]))
    if len(got[0]) != n_batch or not batch_ok or got[1:] != want[1:]:
        raise ValueError(f"BCOO data of shape {data.shape} and indices of shape "
                         f"{indices.shape} do not fit shape {shape}")
    if not np.issubdtype(np.dtype(indices.dtype), np.integer):
        raise TypeError(f"BCOO indices must be integers, got {indices.dtype}")


def _full_batch(mat: BCOO) -> tuple:
    """``data`` and ``indices`` broadcast to the full batch shape."""
    b = mat.shape[:mat.n_batch]
    return (fnp.broadcast_to(mat.data, b + mat.data.shape[mat.n_batch:]),
            fnp.broadcast_to(mat.indices, b + mat.indices.shape[mat.n_batch:]))


def _new(data: Any, indices: Any, shape: Sequence[int], srt: bool = False,
         uniq: bool = False) -> BCOO:
    return BCOO((data, indices), shape=shape, indices_sorted=srt, unique_indices=uniq)


# ---------------------------------------------------------------- dense <-> sparse
def bcoo_todense(mat: BCOO) -> Any:
    """The dense array of ``mat``: entries scattered-added, padding dropped.

    >>> import functrans.numpy as fnp
    >>> bcoo_todense(BCOO((fnp.ones(2), fnp.asarray([[1], [1]])), shape=(3,))).tolist()
    [0.0, 2.0, 0.0]
    """
    nb, ns = mat.n_batch, mat.n_sparse
    tail = mat.shape[nb:]

    def one(data, indices):
        if ns == 0:
            return data.sum(0)
        idx = tuple(indices[:, i] for i in range(ns))
        return fnp.zeros(tail, data.dtype).at[idx].add(data, mode="drop")
    return nfold_vmap(one, nb, (0, 0))(*_full_batch(mat))


def bcoo_extract(indices: Any, mat: Any, *, assume_unique: bool | None = None,
                 mode: str = "fill") -> Any:
    """The entries of dense ``mat`` at a BCOO's ``indices`` (0 at padding; ``mode="clip"``:
    the nearest entry, as JAX's elementwise products read it), as ``data``."""
    nb, ns = indices.ndim - 2, indices.shape[-1]
    mat = fnp.asarray(mat)
    indices = fnp.broadcast_to(indices, mat.shape[:nb] + indices.shape[nb:])

    def one(ind, m):
        return m.at[tuple(ind[:, i] for i in range(ns))].get(mode=mode, fill_value=0) \
            if ns else fnp.broadcast_to(m, ind.shape[:1] + m.shape)
    return nfold_vmap(one, nb, (0, 0))(indices, mat)


def bcoo_fromdense(mat: Any, *, nse: int | None = None, n_batch: int = 0, n_dense: int = 0,
                   index_dtype: Any = np.int32) -> BCOO:
    """A BCOO holding the nonzeros of ``mat`` (``nse`` per batch, padded with index =
    shape and value 0; all nonzeros when ``nse`` is None, which needs a concrete ``mat``).

    >>> import functrans.numpy as fnp
    >>> bcoo_fromdense(fnp.asarray([0.0, 5.0]), nse=2).indices.tolist()
    [[1], [2]]
    """
    mat = fnp.asarray(mat)
    n_sparse = mat.ndim - n_batch - n_dense
    if n_sparse < 0 or n_batch < 0 or n_dense < 0:
        raise ValueError(f"bcoo_fromdense: n_batch={n_batch}, n_dense={n_dense} do not fit "
                         f"shape {mat.shape}")
    mask = mat != 0
    if n_dense:
        mask = mask.any(tuple(range(mat.ndim - n_dense, mat.ndim)))
    if nse is None:
        if isinstance(mat, Tracer):
            raise ConcretizationTypeError(_TRACED_NSE)
        counts = np.asarray(mask).reshape(mask.shape[:n_batch] + (-1,)).sum(-1)
        nse = int(counts.max()) if counts.size else 0
    nse = operator.index(nse)
    sparse_shape = mat.shape[n_batch:n_batch + n_sparse]

    def one(m):
        if not n_sparse or not nse:      # (fnp.nonzero with size=0 raises IndexError)
            return fnp.zeros((nse, n_sparse), index_dtype)
        nz = fnp.nonzero(m, size=nse, fill_value=sparse_shape)
        return fnp.stack(nz, axis=1).astype(index_dtype)
    indices = nfold_vmap(one, n_batch)(mask)
    data = bcoo_extract(indices, mat)
    true_nse = mask.reshape(mask.shape[:n_batch] + (-1,)).sum(-1)[..., None]
    keep = fnp.arange(nse) < true_nse
    data = fnp.where(keep.reshape(keep.shape + (1,) * n_dense), data, 0)
    return _new(data, indices, mat.shape, srt=True, uniq=True)


# ---------------------------------------------------------------- products
def bcoo_dot_general(lhs: Any, rhs: Any, *, dimension_numbers: Any,
                     preferred_element_type: Any = None) -> Any:
    """``lax.dot_general`` with one BCOO operand and one dense: a dense result.

    Contraction may use sparse and dense axes; ``dot_general`` batch axes must be the
    BCOO's leading batch axes, in order.

    >>> import functrans.numpy as fnp
    >>> M = BCOO.fromdense(fnp.asarray([[1.0, 0.0], [0.0, 2.0]]))
    >>> bcoo_dot_general(M, fnp.ones((2, 3)), dimension_numbers=(([1], [0]), ([], []))).shape
    (2, 3)
    """
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = map(tuple, (lc, rc, lb, rb))
    if isinstance(lhs, BCOO) and isinstance(rhs, BCOO):
        return _spdot(lhs, rhs, lc, rc, lb, rb, preferred_element_type)
    if isinstance(rhs, BCOO):        # dense @ sparse: the transpose of sparse @ dense
        out = bcoo_dot_general(rhs, lhs, dimension_numbers=((rc, lc), (rb, lb)),
                               preferred_element_type=preferred_element_type)
        nb, nr = len(lb), rhs.ndim - len(rc) - len(rb)
        perm = (tuple(range(nb)) + tuple(range(nb + nr, out.ndim))
                + tuple(range(nb, nb + nr)))
        return fnp.transpose(out, perm)
    rhs = fnp.asarray(rhs)
    nb, ns = lhs.n_batch, lhs.n_sparse
    k = sum(d < nb for d in lb)
    if lb[:k] != tuple(range(k)) or any(d >= nb + ns for d in lb[k:]):
        raise NotImplementedError(
            f"bcoo_dot_general: dot batch dimensions {lb} must be the BCOO's leading batch "
            f"dimensions, then sparse ones (n_batch={nb}, n_sparse={ns})")
    if any(d < nb for d in lc):
        raise NotImplementedError(f"bcoo_dot_general: contracting batch dimensions {lc} of a "
                                  f"BCOO with n_batch={nb} is not implemented")
    out = dot_batched(*_full_batch(lhs), lhs.shape, rhs, lc, rc, lb[k:], rb)
    if nb > k and len(lb) > k:     # sparse dot-batch axes go before the free batch axes
        m = len(lb) - k
        out = fnp.transpose(out, tuple(range(k)) + tuple(range(nb, nb + m))
                            + tuple(range(k, nb)) + tuple(range(nb + m, out.ndim)))
    return out if preferred_element_type is None else out.astype(preferred_element_type)


def _spdot(lhs: BCOO, rhs: BCOO, lc: tuple, rc: tuple, lb: tuple, rb: tuple,
           preferred_element_type: Any) -> BCOO:
    """Sparse-sparse ``dot_general`` (unbatched, no dense axes, no dot-batch axes), JAX's
    layout: one entry per pair of entries, ``lhs.nse * rhs.nse`` of them, lhs-major, at
    (lhs free, rhs free) indices, its value the product where the contracted indices
    agree (and are in range), else 0."""
    if lb or rb or lhs.n_batch or rhs.n_batch or lhs.n_dense or rhs.n_dense:
        raise NotImplementedError(
            "bcoo_dot_general of two BCOO arrays with batch or dense dimensions (or dot "
            f"batch dimensions) is not implemented: n_batch {lhs.n_batch}/{rhs.n_batch}, "
            f"n_dense {lhs.n_dense}/{rhs.n_dense}, batch dims {lb}/{rb}")
    li, ri = lhs.indices, rhs.indices
    ok = (in_range(li, lhs.shape)[:, None] & in_range(ri, rhs.shape)[None, :])
    for l, r in zip(lc, rc):
        if lhs.shape[l] != rhs.shape[r]:
            raise TypeError(f"bcoo_dot_general: contracting dimension sizes differ: "
                            f"{lhs.shape} axis {l}, {rhs.shape} axis {r}")
        ok = ok & (li[:, l][:, None] == ri[:, r][None, :])
    dtype = preferred_element_type or fnp.result_type(lhs.dtype, rhs.dtype)
    data = fnp.where(ok, lhs.data[:, None] * rhs.data[None, :], 0).astype(dtype).ravel()
    lf = [d for d in range(lhs.ndim) if d not in lc]
    rf = [d for d in range(rhs.ndim) if d not in rc]
    nl, nr = lhs.nse, rhs.nse
    dt = fnp.result_type(li.dtype, ri.dtype)
    cols = ([fnp.broadcast_to(li[:, d][:, None], (nl, nr)).astype(dt) for d in lf]
            + [fnp.broadcast_to(ri[:, d][None, :], (nl, nr)).astype(dt) for d in rf])
    indices = (fnp.stack(cols, axis=-1).reshape((nl * nr, len(cols))) if cols
               else fnp.zeros((nl * nr, 0), dt))
    shape = tuple(lhs.shape[d] for d in lf) + tuple(rhs.shape[d] for d in rf)
    return _new(data, indices, shape)


def bcoo_matmul(lhs: Any, rhs: Any) -> Any:
    """``lhs @ rhs`` with numpy's rules: a dense result with one BCOO operand, a BCOO with
    two. Stacks of matrices on both sides need equal stack shapes (the BCOO's batch axes).

    >>> import functrans.numpy as fnp
    >>> bcoo_matmul(fnp.ones((2, 3)), BCOO.fromdense(fnp.eye(3))).tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    lhs = lhs if isinstance(lhs, BCOO) else fnp.asarray(lhs)
    rhs = rhs if isinstance(rhs, BCOO) else fnp.asarray(rhs)
    a, b = lhs.ndim, rhs.ndim
    if isinstance(lhs, BCOO) and isinstance(rhs, BCOO) and max(a, b) > 2:
        raise NotImplementedError(f"matmul of two BCOO arrays of shapes {lhs.shape} and "
                                  f"{rhs.shape}: stacks are not implemented")
    if not a or not b:
        raise ValueError("matmul: operands must have at least one axis")
    lc, rc = a - 1, max(b - 2, 0)
    if lhs.shape[lc] != rhs.shape[rc]:
        raise ValueError(f"matmul: shapes {lhs.shape} and {rhs.shape} do not align")
    if a > 2 and b > 2:
        if a != b or lhs.shape[:-2] != rhs.shape[:-2]:
            raise NotImplementedError(f"matmul of a BCOO with stacks of shapes {lhs.shape} and "
                                      f"{rhs.shape}: the stack shapes must be equal")
        batch = list(range(a - 2))
        return bcoo_dot_general(lhs, rhs, dimension_numbers=(([lc], [rc]), (batch, batch)))
    out = bcoo_dot_general(lhs, rhs, dimension_numbers=(([lc], [rc]), ([], [])))
    if a == 2 and b > 2:      # numpy: the matrix broadcast over rhs's stack
        out = fnp.moveaxis(out, 0, b - 2)
    return out


def bcoo_multiply_dense(sp_mat: BCOO, v: Any) -> Any:
    """The ``data`` of ``sp_mat * v`` (``v`` dense, broadcast to the BCOO's shape; a Python
    number stays weak: float32 data times 2.0 stay float32, as in JAX)."""
    if type(v) in _PY_NUMBERS:
        return sp_mat.data * v
    v = fnp.asarray(v)
    if v.ndim == 0:
        return sp_mat.data * v
    v = fnp.broadcast_to(v, sp_mat.shape)
    return sp_mat.data * bcoo_extract(sp_mat.indices, v, mode="clip")


def bcoo_multiply_sparse(lhs: BCOO, rhs: BCOO) -> BCOO:
    """Elementwise product of two BCOO arrays of one shape, on ``lhs``'s entries
    (same indices and unique: a product of data)."""
    if lhs.shape != rhs.shape:
        raise ValueError(f"bcoo_multiply_sparse: shapes {lhs.shape} and {rhs.shape} differ")
    if lhs.indices is rhs.indices and lhs.unique_indices:
        return lhs._with_data(lhs.data * rhs.data)
    if not lhs.unique_indices:
        lhs = bcoo_sum_duplicates(lhs, nse=lhs.nse)
    return lhs._with_data(bcoo_multiply_dense(lhs, rhs.todense()))


def bcoo_add(lhs: BCOO, rhs: BCOO) -> BCOO:
    """Sum of two BCOO arrays of one shape: their entries concatenated (JAX's layout)."""
    if lhs.shape != rhs.shape:
        raise NotImplementedError("Addition between sparse matrices of different shapes.")
    if lhs.indices is rhs.indices:
        return lhs._with_data(lhs.data + rhs.data)
    if lhs.indices.ndim != rhs.indices.ndim or lhs.data.ndim != rhs.data.ndim:
        raise NotImplementedError("Addition between sparse matrices with different "
                                  "batch/dense dimensions.")
    (ld, li), (rd, ri) = _full_batch(lhs), _full_batch(rhs)
    ax = lhs.n_batch
    return _new(fnp.concatenate([ld, rd], axis=ax), fnp.concatenate([li, ri], axis=ax),
                lhs.shape)


# ---------------------------------------------------------------- layout
def bcoo_update_layout(mat: BCOO, *, n_batch: int | None = None,
                       n_dense: int | None = None) -> BCOO:
    """The same array with batch and/or dense axes turned into sparse ones
    (``n_batch`` and ``n_dense`` may only go down to 0 here).

    >>> import functrans.numpy as fnp
    >>> M = BCOO.fromdense(fnp.eye(2), n_batch=1)
    >>> bcoo_update_layout(M, n_batch=0).n_batch
    0
    """
    n_batch = mat.n_batch if n_batch is None else n_batch
    n_dense = mat.n_dense if n_dense is None else n_dense
    if (n_batch, n_dense) == (mat.n_batch, mat.n_dense):
        return mat
    if n_batch not in (0, mat.n_batch) or n_dense not in (0, mat.n_dense):
        raise NotImplementedError(f"bcoo_update_layout from n_batch={mat.n_batch}, n_dense="
                                  f"{mat.n_dense} to n_batch={n_batch}, n_dense={n_dense}")
    data, indices = _full_batch(mat)
    nb, nse = mat.n_batch, mat.nse
    if n_batch == 0 and nb:
        bshape = mat.shape[:nb]
        cols = [fnp.broadcast_to(fnp.arange(s, dtype=indices.dtype).reshape(
            (1,) * i + (s,) + (1,) * (nb - i)), bshape + (nse,)) for i, s in enumerate(bshape)]
        indices = fnp.concatenate([c[..., None] for c in cols] + [indices], axis=-1)
        indices = indices.reshape((-1, indices.shape[-1]))
        data = data.reshape((-1,) + data.shape[nb + 1:])
        nb = 0
    if n_dense == 0 and mat.n_dense:
        dshape = mat.shape[len(mat.shape) - mat.n_dense:]
        grid = fnp.stack([g.ravel() for g in fnp.indices(dshape)], axis=-1).astype(indices.dtype)
        m = grid.shape[0]
        ind = fnp.concatenate([fnp.broadcast_to(indices[..., :, None, :],
                                                indices.shape[:-1] + (m, indices.shape[-1])),
                               fnp.broadcast_to(grid, indices.shape[:-1] + grid.shape)], -1)
        indices = ind.reshape(ind.shape[:nb] + (-1, ind.shape[-1]))
        data = data.reshape(data.shape[:nb] + (-1,))
    return _new(data, indices, mat.shape)


def bcoo_transpose(mat: BCOO, *, permutation: Sequence[int]) -> BCOO:
    """Axes permuted; batch, sparse and dense axes must each stay among themselves.

    >>> import functrans.numpy as fnp
    >>> bcoo_transpose(BCOO.fromdense(fnp.ones((2, 3))), permutation=(1, 0)).shape
    (3, 2)
    """
    perm = tuple(operator.index(p) for p in permutation)
    nb, ns = mat.n_batch, mat.n_sparse
    if sorted(perm) != list(range(mat.ndim)):
        raise ValueError(f"bcoo_transpose: {perm} is not a permutation of {mat.ndim} axes")
    pb, ps, pd = perm[:nb], perm[nb:nb + ns], perm[nb + ns:]
    if sorted(pb) != list(range(nb)) or sorted(ps) != list(range(nb, nb + ns)):
        raise NotImplementedError(
            f"bcoo_transpose: permutation {perm} mixes batch, sparse and dense axes "
            f"(n_batch={nb}, n_sparse={ns}, n_dense={mat.n_dense})")
    indices = fnp.transpose(mat.indices, pb + (nb, nb + 1))
    indices = indices[..., [p - nb for p in ps]] if ns else indices
    data = fnp.transpose(mat.data, pb + (nb,) + tuple(p - ns + 1 for p in pd))
    keep = ps == tuple(range(nb, nb + ns))
    return _new(data, indices, tuple(mat.shape[p] for p in perm),
                srt=mat.indices_sorted and keep, uniq=mat.unique_indices)


def bcoo_reduce_sum(mat: BCOO, *, axes: Sequence[int]) -> BCOO:
    """Sum over ``axes``, a BCOO (summing a batch axis first turns batch axes sparse).

    >>> import functrans.numpy as fnp
    >>> bcoo_reduce_sum(BCOO.fromdense(fnp.ones((2, 3))), axes=(0,)).todense().tolist()
    [2.0, 2.0, 2.0]
    """
    axes = sorted({operator.index(a) % max(mat.ndim, 1) for a in axes})
    if any(a < mat.n_batch for a in axes):
        mat = bcoo_update_layout(mat, n_batch=0)
    nb, ns = mat.n_batch, mat.n_sparse
    data, indices = mat.data, mat.indices
    sp_axes = [a - nb for a in axes if nb <= a < nb + ns]
    if sp_axes:      # padding entries could land inside once a column is dropped
        ok = in_range(indices, mat.shape[nb:nb + ns])
        data = fnp.where(ok.reshape(ok.shape + (1,) * mat.n_dense), data, 0)
        indices = indices[..., [c for c in range(ns) if c not in sp_axes]]
    d_axes = tuple(a - ns + 1 for a in axes if a >= nb + ns)
    if d_axes:
        data = data.sum(d_axes)
    shape = tuple(s for i, s in enumerate(mat.shape) if i not in axes)
    return _new(data, indices, shape)


def _per_batch(mat: BCOO, one: Callable) -> tuple:
    data, indices = _full_batch(mat)
    return nfold_vmap(one, mat.n_batch, (0, 0))(data, indices)


def bcoo_sort_indices(mat: BCOO) -> BCOO:
    """Entries in row-major order of their indices (padding last).

    >>> import functrans.numpy as fnp
    >>> M = BCOO((fnp.asarray([1.0, 2.0]), fnp.asarray([[1], [0]])), shape=(2,))
    >>> bcoo_sort_indices(M).data.tolist()
    [2.0, 1.0]
    """
    sshape = mat.shape[mat.n_batch:mat.n_batch + mat.n_sparse]

    def one(data, indices):
        order = fnp.argsort(linear_keys(indices, sshape), stable=True)
        return data[order], indices[order]
    data, indices = _per_batch(mat, one)
    return _new(data, indices, mat.shape, srt=True, uniq=mat.unique_indices)


def bcoo_sum_duplicates(mat: BCOO, *, nse: int | None = None) -> BCOO:
    """Entries with one index summed: sorted, unique indices, ``nse`` per batch (the
    number of distinct indices when None, which needs concrete indices); padding (index
    = shape) fills the rest, the first padding entry holding the sum of the entries
    whose indices were out of range, as JAX's.

    >>> import functrans.numpy as fnp
    >>> M = BCOO((fnp.asarray([1.0, 2.0, 4.0]), fnp.asarray([[1], [0], [1]])), shape=(2,))
    >>> bcoo_sum_duplicates(M).data.tolist()
    [2.0, 5.0]
    """
    sshape = mat.shape[mat.n_batch:mat.n_batch + mat.n_sparse]
    n = math.prod(sshape)
    if nse is None:
        if isinstance(mat.indices, Tracer):
            raise ConcretizationTypeError(_TRACED_NSE.replace("BCOO.fromdense(M, ", "sum_"
                                                              "duplicates("))
        keys = np.asarray(linear_keys(_full_batch(mat)[1], sshape)).reshape((-1, mat.nse))
        nse = max((len(set(k[k < n].tolist())) for k in keys), default=0)
    nse = operator.index(nse)

    def one(data, indices):
        keys = linear_keys(indices, sshape)
        order = fnp.argsort(keys, stable=True)
        sk, sd = keys[order], data[order]
        first = fnp.concatenate([fnp.ones(1, bool), sk[1:] != sk[:-1]]) if sk.shape[0] \
            else fnp.zeros(0, bool)
        seg = fnp.cumsum(first) - 1   # padding entries: summed in the slot after the rest
        uk = fnp.full((nse,), n, keys.dtype).at[seg].set(sk, mode="drop")
        ud = fnp.zeros((nse,) + data.shape[1:], data.dtype).at[seg].add(sd, mode="drop")
        return ud, from_linear_keys(uk, sshape, indices.dtype)
    data, indices = _per_batch(mat, one)
    return _new(data, indices, mat.shape, srt=True, uniq=True)


def bcoo_reshape(mat: BCOO, *, new_sizes: Sequence[int]) -> BCOO:
    """The same entries in a new shape (unbatched BCOO without dense axes only).

    >>> import functrans.numpy as fnp
    >>> bcoo_reshape(BCOO.fromdense(fnp.eye(2)), new_sizes=(4,)).todense().tolist()
    [1.0, 0.0, 0.0, 1.0]
    """
    if mat.n_batch or mat.n_dense:
        raise NotImplementedError(f"bcoo_reshape with n_batch={mat.n_batch}, n_dense="
                                  f"{mat.n_dense}")
    new = [operator.index(d) for d in new_sizes]
    if new.count(-1) == 1:
        new[new.index(-1)] = mat.size // max(math.prod(d for d in new if d != -1), 1)
    new = tuple(new)
    if math.prod(new) != mat.size:
        raise ValueError(f"cannot reshape a BCOO of shape {mat.shape} into {tuple(new_sizes)}")
    keys = linear_keys(mat.indices, mat.shape)
    return _new(mat.data, from_linear_keys(keys, new, mat.indices.dtype), new,
                srt=mat.indices_sorted, uniq=mat.unique_indices)
