"""Array-level kernels of the BCOO operations (no ``BCOO`` objects here): vmapped batch
axes, row-major keys of sparse indices, and the sparse-dense ``dot_general``.

>>> import functrans.numpy as fnp
>>> linear_keys(fnp.asarray([[0, 1], [1, 0], [2, 0]]), (2, 2)).tolist()
[1, 2, 4]
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ... import numpy as fnp
from ...batching import vmap
from ...precision import dot_general

__all__ = ["nfold_vmap", "in_range", "linear_keys", "from_linear_keys", "dot_batched",
           "dot_unbatched"]


def nfold_vmap(f: Callable, n: int, in_axes: tuple = (0,)) -> Callable:
    """``f`` mapped over ``n`` leading axes (``None`` in ``in_axes``: not mapped)."""
    for _ in range(n):
        f = vmap(f, in_axes=in_axes)
    return f


def in_range(indices: Any, sparse_shape: tuple) -> Any:
    """Per entry: are all its sparse indices inside ``sparse_shape`` (else padding)?"""
    return ((indices >= 0) & (indices < fnp.asarray(sparse_shape, indices.dtype))).all(-1)


def linear_keys(indices: Any, sparse_shape: tuple) -> Any:
    """Row-major linear index of each entry; padding entries get ``prod(sparse_shape)``."""
    n = math.prod(sparse_shape)
    if n >= 2 ** 62:
        raise NotImplementedError(f"sparse shape {sparse_shape} too large for linear keys")
    strides = np.cumprod((1,) + sparse_shape[::-1][:-1])[::-1].astype(np.int64)
    lin = (indices.astype(np.int64) * fnp.asarray(strides)).sum(-1)
    return fnp.where(in_range(indices, sparse_shape), lin, n)


def from_linear_keys(keys: Any, sparse_shape: tuple, dtype: Any) -> Any:
    """Indices of linear keys; the key ``prod(sparse_shape)`` becomes the padding index."""
    pad = keys >= math.prod(sparse_shape)
    cols = fnp.unravel_index(fnp.where(pad, 0, keys), sparse_shape) if sparse_shape else ()
    ind = fnp.stack([fnp.where(pad, s, c) for c, s in zip(cols, sparse_shape)], axis=-1) \
        if sparse_shape else fnp.zeros(keys.shape + (0,), dtype)
    return ind.astype(dtype)


def dot_batched(data: Any, indices: Any, shape: tuple, rhs: Any, lc: tuple, rc: tuple,
                lbs: tuple, rb: tuple) -> Any:
    """Peel the BCOO's batch axes with vmap of a BCOO given as ``data`` and ``indices``
    broadcast to its full batch shape (a dot-batch axis maps rhs's ``rb`` axis too,
    a free one leaves rhs unmapped), then ``dot_unbatched`` (``lbs``: dot-batch axes
    among the sparse ones); each peeled axis is the output's next leading axis."""
    nb, k = indices.ndim - 2, len(rb) - len(lbs)
    peeled = list(rb[:k])
    tail = shape[nb:]
    lc0, lb0 = tuple(d - nb for d in lc), tuple(d - nb for d in lbs)
    rc0, rb0 = (tuple(d - sum(b < d for b in peeled) for d in ax) for ax in (rc, rb[k:]))
    dtype = fnp.result_type(data.dtype, rhs.dtype)

    def f(data, indices, r):
        return dot_unbatched(data.astype(dtype), indices, tail, r.astype(dtype), lc0, rc0,
                              lb0, rb0)
    for i in reversed(range(nb)):
        a = peeled[i] - sum(b < peeled[i] for b in peeled[:i]) if i < k else None
        f = vmap(f, in_axes=(0, 0, a))
    return f(data, indices, rhs)


def dot_unbatched(data: Any, indices: Any, tail: tuple, rhs: Any, lc: tuple, rc: tuple,
                   lb: tuple, rb: tuple) -> Any:
    """``dot_general`` of an unbatched BCOO (data ``(nse, *dense)``) with dense ``rhs``;
    ``lb``: dot-batch axes, all sparse. rhs is read at each entry's (batch, contracted)
    sparse indices, multiplied with the entry's dense block, and the products are
    scatter-added at its (batch, free) sparse indices."""
    ns = indices.shape[-1]
    pairs_s = list(zip(lb, rb)) + [(l, r) for l, r in zip(lc, rc) if l < ns]
    pairs_d = [(l - ns, r) for l, r in zip(lc, rc) if l >= ns]
    rs = [r for _, r in pairs_s]
    rest = [d for d in range(rhs.ndim) if d not in rs]
    rhs_t = fnp.transpose(rhs, tuple(rs) + tuple(rest))
    if pairs_s:      # rhs rows at each entry's sparse indices (0 at padding)
        idx = tuple(indices[:, l] for l, _ in pairs_s)
        g = rhs_t.at[idx].get(mode="fill", fill_value=0)
    else:
        g = fnp.broadcast_to(rhs_t, (indices.shape[0],) + rhs_t.shape)
    dcon = tuple(1 + l for l, _ in pairs_d)
    rcon = tuple(1 + rest.index(r) for _, r in pairs_d)
    if pairs_d:                  # (nse, dense free, rhs free)
        prod = dot_general(data, g, ((dcon, rcon), ((0,), (0,))))
    else:                        # an outer product per entry: elementwise, so it fuses
        nd, nr = data.ndim - 1, g.ndim - 1
        prod = (data.reshape(data.shape + (1,) * nr)
                * g.reshape(g.shape[:1] + (1,) * nd + g.shape[1:]))
    free_s = list(lb) + [d for d in range(ns) if d not in lc and d not in lb]
    out_shape = tuple(tail[d] for d in free_s) + prod.shape[1:]
    if not free_s:
        return prod.sum(0)
    idx = tuple(indices[:, d] for d in free_s)
    return fnp.zeros(out_shape, prod.dtype).at[idx].add(prod, mode="drop")
