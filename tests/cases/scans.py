"""Table rows for ``lax.associative_scan`` (pytrees, axis, reverse, odd and even
lengths), ``lax.cumlogsumexp`` and ``lax.top_k``; references from numpy's accumulate,
logaddexp and a stable argsort."""
import numpy as np

from functrans import lax
from tests.cases import OpCase, gen, ints, randn


def _np_top_k(x, k):
    order = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, -1), order.astype(np.int32)


def _pair_scan(a, b):
    return (lax.add(a[0], b[0]), lax.mul(a[1], b[1]))


CASES = [
    OpCase("associative_scan_add_odd", lambda x: lax.associative_scan(lax.add, x),
           gen(randn(7)), lambda x: np.cumsum(x)),
    OpCase("associative_scan_max_even_axis1",
           lambda x: lax.associative_scan(lax.max, x, axis=1), gen(randn(3, 8)),
           lambda x: np.maximum.accumulate(x, axis=1)),
    OpCase("associative_scan_pytree_reverse",
           lambda x, y: lax.associative_scan(_pair_scan, (x, y), reverse=True, axis=-1),
           gen(randn(2, 5), randn(2, 5)),
           lambda x, y: (np.cumsum(x[:, ::-1], 1)[:, ::-1], np.cumprod(y[:, ::-1], 1)[:, ::-1])),
    OpCase("associative_scan_length_one", lambda x: lax.associative_scan(lax.mul, x),
           gen(randn(1, 3)), lambda x: x),
    OpCase("cumlogsumexp", lambda x: lax.cumlogsumexp(x, axis=1), gen(randn(3, 6)),
           lambda x: np.logaddexp.accumulate(x, axis=1)),
    OpCase("cumlogsumexp_reverse", lambda x: lax.cumlogsumexp(x, reverse=True), gen(randn(5)),
           lambda x: np.logaddexp.accumulate(x[::-1])[::-1]),
    OpCase("top_k", lambda x: lax.top_k(x, 3), gen(randn(4, 6)), lambda x: _np_top_k(x, 3)),
    OpCase("top_k_int_ties", lambda x: lax.top_k(x, 4), gen(ints(2, 7, dtype=np.int32)),
           lambda x: _np_top_k(x, 4), diff=False),
]
