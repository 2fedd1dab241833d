"""Batched compressed-sparse-row (BCSR) arrays, with the API of
``jax.experimental.sparse.BCSR``: ``data``, column ``indices`` and row pointers
``indptr``; two sparse axes after ``n_batch`` batch axes. Its operations go through the
equivalent BCOO (row indices recovered from ``indptr``), so they are differentiable and
batchable as the BCOO ones.

>>> import functrans.numpy as fnp
>>> M = BCSR.fromdense(fnp.asarray([[0.0, 1.0, 2.0], [0.0, 0.0, 0.0], [3.0, 0.0, 0.0]]))
>>> M.indptr.tolist()
[0, 2, 2, 3]
>>> (M @ fnp.ones(3)).tolist()
[3.0, 0.0, 3.0]
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from ... import numpy as fnp
from ...tracing import Tracer
from ...tree_util import register_pytree_node_class
from ._kernels import nfold_vmap
from .bcoo import BCOO, bcoo_fromdense, bcoo_sort_indices

__all__ = ["BCSR", "bcsr_fromdense", "bcsr_todense"]


@register_pytree_node_class
class BCSR:
    """A batched CSR matrix: ``BCSR((data, indices, indptr), shape=shape)``.

    >>> import functrans.numpy as fnp
    >>> M = BCSR((fnp.asarray([5.0]), fnp.asarray([1]), fnp.asarray([0, 1, 1])), shape=(2, 2))
    >>> M.todense().tolist()
    [[0.0, 5.0], [0.0, 0.0]]
    """
    __array_priority__ = 2000

    def __init__(self, args: tuple, *, shape: Sequence[int], indices_sorted: bool = False,
                 unique_indices: bool = False):
        self.data, self.indices, self.indptr = (
            x if isinstance(x, Tracer) else fnp.asarray(x) for x in args)
        self.shape = tuple(operator.index(d) for d in shape)
        self.indices_sorted, self.unique_indices = bool(indices_sorted), bool(unique_indices)
        nb = self.indices.ndim - 1
        if len(self.shape) < nb + 2 or self.indptr.shape[-1] != self.shape[nb] + 1:
            raise ValueError(f"BCSR indices {self.indices.shape} and indptr "
                             f"{self.indptr.shape} do not fit shape {self.shape}")

    n_batch = property(lambda self: self.indices.ndim - 1)
    n_sparse = property(lambda self: 2)
    n_dense = property(lambda self: len(self.shape) - self.n_batch - 2)
    nse = property(lambda self: self.indices.shape[-1])
    dtype = property(lambda self: self.data.dtype)
    ndim = property(lambda self: len(self.shape))

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v}" for k, v in (("n_batch", self.n_batch),
                                                   ("n_dense", self.n_dense)) if v)
        dims = ", ".join(map(str, self.shape))
        return f"BCSR({np.dtype(self.dtype).name}[{dims}], nse={self.nse}{extra})"

    def tree_flatten(self):
        return (self.data, self.indices, self.indptr), (
            self.shape[self.n_batch:], self.shape, self.indices_sorted, self.unique_indices)

    @classmethod
    def tree_unflatten(cls, aux: tuple, children: Sequence[Any]) -> BCSR:
        tail, shape, srt, uniq = aux
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = children
        ind_shape = getattr(obj.indices, "shape", None)
        obj.shape = tuple(ind_shape[:-1]) + tail if ind_shape is not None else shape
        obj.indices_sorted, obj.unique_indices = srt, uniq
        return obj

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32,
                  n_dense: int = 0, n_batch: int = 0) -> BCSR:
        """The BCSR of a dense array (two sparse axes after ``n_batch``)."""
        return bcsr_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    @classmethod
    def from_bcoo(cls, arr: BCOO) -> BCSR:
        """The BCSR of a BCOO with two sparse axes (its indices sorted first)."""
        if arr.n_sparse != 2:
            raise ValueError("Must have 2 sparse dimensions to be converted to BCSR.")
        if not arr.indices_sorted:
            arr = bcoo_sort_indices(arr)
        n_rows = arr.shape[arr.n_batch]

        def ptr(rows):
            counts = fnp.bincount(rows, length=n_rows + 1)[:n_rows]   # padding: dropped
            return fnp.concatenate([fnp.zeros(1, rows.dtype),
                                    fnp.cumsum(counts).astype(rows.dtype)])
        b = arr.shape[:arr.n_batch]
        ind = fnp.broadcast_to(arr.indices, b + arr.indices.shape[arr.n_batch:])
        indptr = nfold_vmap(ptr, arr.n_batch)(fnp.minimum(ind[..., 0], n_rows))
        return cls((arr.data, ind[..., 1], indptr), shape=arr.shape, indices_sorted=True,
                   unique_indices=arr.unique_indices)

    def to_bcoo(self) -> BCOO:
        """The equivalent BCOO (entries past ``indptr[-1]`` are padding)."""
        n_rows = self.shape[self.n_batch]

        def rows(indptr, cols):
            k = fnp.arange(cols.shape[0], dtype=indptr.dtype)
            return fnp.searchsorted(indptr[1:], k, side="right").astype(cols.dtype)
        r = nfold_vmap(rows, self.n_batch, (0, 0))(self.indptr, self.indices)
        r = fnp.minimum(r, n_rows)
        return BCOO((self.data, fnp.stack([r, self.indices], axis=-1)), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    def todense(self) -> Any:
        """The dense array."""
        return self.to_bcoo().todense()

    def __matmul__(self, other: Any) -> Any:
        return self.to_bcoo() @ other

    def __rmatmul__(self, other: Any) -> Any:
        return other @ self.to_bcoo()

    def __neg__(self) -> BCSR:
        return BCSR((-self.data, self.indices, self.indptr), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    def __mul__(self, other: Any) -> BCSR:
        if fnp.ndim(other) != 0:
            raise NotImplementedError("BCSR * array: only scalars (use to_bcoo())")
        return BCSR((self.data * other, self.indices, self.indptr), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    __rmul__ = __mul__


def bcsr_fromdense(mat: Any, *, nse: int | None = None, n_batch: int = 0, n_dense: int = 0,
                   index_dtype: Any = np.int32) -> BCSR:
    """A BCSR holding the nonzeros of ``mat`` (padding: column index = ncols, value 0).

    >>> import functrans.numpy as fnp
    >>> bcsr_fromdense(fnp.eye(2), nse=3).indices.tolist()
    [0, 1, 2]
    """
    mat = fnp.asarray(mat)
    if mat.ndim - n_batch - n_dense != 2:
        raise ValueError("bcsr_fromdense: must have 2 sparse dimensions.")
    return BCSR.from_bcoo(bcoo_fromdense(mat, nse=nse, n_batch=n_batch, n_dense=n_dense,
                                         index_dtype=index_dtype))


def bcsr_todense(mat: BCSR) -> Any:
    """The dense array of a BCSR."""
    return mat.todense()
