"""Constructors of sparse arrays: ``eye``, ``empty`` and ``random_bcoo``, with the API of
``jax.experimental.sparse``.

>>> eye(3).todense().tolist()
[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable, Sequence

import numpy as np

from ... import numpy as fnp
from ... import random
from ...batching import vmap
from .bcoo import BCOO, bcoo_sort_indices

__all__ = ["eye", "empty", "random_bcoo"]


def _split(shape: tuple, n_batch: int, n_dense: int) -> tuple:
    n_sparse = len(shape) - n_batch - n_dense
    if n_sparse < 0 or n_batch < 0 or n_dense < 0:
        raise ValueError(f"Invalid inputs: shape={shape}, n_dense={n_dense}, "
                         f"n_batch={n_batch}")
    return shape[:n_batch], shape[n_batch:n_batch + n_sparse], shape[n_batch + n_sparse:]


def _format(sparse_format: str) -> None:
    if sparse_format != "bcoo":
        raise NotImplementedError(f"sparse_format={sparse_format!r}: only 'bcoo' is "
                                  "implemented here (BCSR: BCSR.fromdense)")


def empty(shape: Sequence[int], dtype: Any = None, index_dtype: Any = "int32",
          sparse_format: str = "bcoo", *, n_batch: int = 0, n_dense: int = 0,
          nse: int = 0) -> BCOO:
    """An all-zero BCOO with ``nse`` padding entries (index = shape, value 0).

    >>> empty((3, 4))
    BCOO(float64[3, 4], nse=0)
    """
    _format(sparse_format)
    shape = tuple(map(operator.index, shape))
    b, s, d = _split(shape, n_batch, n_dense)
    if nse < 0:
        raise ValueError(f"Invalid inputs: nse={nse}")
    data = fnp.zeros(b + (nse,) + d, dtype or fnp.float_)
    indices = fnp.broadcast_to(fnp.asarray(s, index_dtype), b + (nse, len(s)))
    return BCOO((data, indices), shape=shape, indices_sorted=True, unique_indices=True)


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None,
        index_dtype: Any = "int32", sparse_format: str = "bcoo", *, n_batch: int = 0,
        n_dense: int = 0) -> BCOO:
    """The sparse identity (ones on diagonal ``k``) of shape ``(N, M)``.

    >>> eye(2, 3, k=1).indices.tolist()
    [[0, 1], [1, 2]]
    """
    _format(sparse_format)
    M = N if M is None else M
    _split((N, M), n_batch, n_dense)
    diag = min(N, M - k) if k > 0 else min(N + k, M)
    if diag <= 0:
        return empty((N, M), dtype, index_dtype, n_batch=n_batch, n_dense=n_dense)
    if n_batch or n_dense:
        return BCOO.fromdense(fnp.eye(N, M, k, dtype=dtype or fnp.float_), n_batch=n_batch,
                              n_dense=n_dense, index_dtype=index_dtype)
    i = np.arange(diag)
    indices = np.stack([i - min(k, 0), i + max(k, 0)], axis=1).astype(index_dtype)
    return BCOO((fnp.ones(diag, dtype or fnp.float_), indices), shape=(N, M),
                indices_sorted=True, unique_indices=True)


def random_bcoo(key: Any, shape: Sequence[int], *, dtype: Any = None,
                indices_dtype: Any = None, nse: float | int = 0.2, n_batch: int = 0,
                n_dense: int = 0, unique_indices: bool = True, sorted_indices: bool = False,
                generator: Callable[..., Any] = random.uniform, **kwds: Any) -> BCOO:
    """A random BCOO: ``nse`` entries per batch (a fraction of the sparse size if
    ``0 < nse < 1``) at random indices (distinct if ``unique_indices``), values from
    ``generator(key, shape=..., dtype=...)``. JAX's recipe; its random streams are
    functrans's, so the values are not JAX's.

    >>> random_bcoo(random.PRNGKey(0), (4, 5))
    BCOO(float64[4, 5], nse=4)
    """
    shape = tuple(map(operator.index, shape))
    if n_batch < 0 or n_dense < 0 or n_batch + n_dense > len(shape):
        raise ValueError(f"Invalid n_batch={n_batch}, n_dense={n_dense} for shape={shape}")
    b, s, d = _split(shape, n_batch, n_dense)
    sparse_size = math.prod(s)
    if not 0 <= nse < sparse_size:
        raise ValueError(f"got nse={nse}, expected to be between 0 and {sparse_size}")
    if 0 < nse < 1:
        nse = int(math.ceil(nse * sparse_size))
    nse = operator.index(nse)
    indices_dtype = indices_dtype or fnp.int_
    if sparse_size > np.iinfo(indices_dtype).max:
        raise ValueError(f"indices_dtype={indices_dtype} does not have enough range to "
                         f"generate sparse indices of size {sparse_size}.")

    def one(k):
        if not s:
            return fnp.zeros((nse, 0), indices_dtype)
        flat = random.choice(k, sparse_size, shape=(nse,), replace=not unique_indices)
        return fnp.stack(fnp.unravel_index(flat.astype(indices_dtype), s), axis=1)
    keys = random.split(key, math.prod(b) + 1)
    data = generator(keys[0], shape=b + (nse,) + d, dtype=dtype or fnp.float_, **kwds)
    indices = vmap(one)(keys[1:]).reshape(b + (nse, len(s)))
    mat = BCOO((data, indices.astype(indices_dtype)), shape=shape)
    return bcoo_sort_indices(mat) if sorted_indices else mat
