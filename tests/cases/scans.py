"""Table rows for ``lax.associative_scan`` (pytrees, axis, reverse, odd and even
lengths), ``lax.cumlogsumexp`` and ``lax.top_k``; references from numpy's accumulate,
logaddexp and a stable argsort. Also ``lax.approx_max_k``/``approx_min_k`` (exact on CPU)."""
import numpy as np

from functrans import lax
from tests.cases import OpCase, gen, ints, randn


def _np_top_k(x, k):
    order = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, -1), order.astype(np.int32)


def _top_k_ref(k, axis=-1):
    """Descending in IEEE total order, as JAX's top_k: +NaN first, -NaN last, 0.0 before
    -0.0; ties by the lower index."""
    def ref(x):
        m = np.moveaxis(x, axis, -1)
        pos = np.broadcast_to(np.arange(m.shape[-1]), m.shape)
        if m.dtype.kind == "f":
            nan = np.isnan(m)
            rank = np.where(nan, np.where(np.signbit(m), -1, 1), 0)
            keys = (pos, np.signbit(m), -np.where(nan, 0, m), -rank)
        else:
            keys = (pos, ~m)
        perm = np.lexsort(keys, axis=-1)[..., :k]
        return (np.moveaxis(np.take_along_axis(m, perm, -1), -1, axis),
                np.moveaxis(perm.astype(np.int32), -1, axis))
    return ref


def _top_k_specials(rng):
    return [np.array([[1.0, np.nan, 4.0, -0.0, 0.0, 4.0, np.nan, -np.inf, np.inf],
                      [2.0, 2.0, -np.nan, -1.0, -1.0, 3.0, 0.0, -0.0, 0.0]])]


def _np_approx_k(k, largest, axis=-1):
    """approx_max_k / approx_min_k as JAX's on CPU: exact; -0.0 == 0.0, ties by index."""
    def ref(x):
        m = np.moveaxis(x, axis, -1)
        order = np.argsort(-m if largest else m, axis=-1, kind="stable")[..., :k]
        return (np.moveaxis(np.take_along_axis(m, order, -1), -1, axis),
                np.moveaxis(order.astype(np.int32), -1, axis))
    return ref


def _zero_ties(rng):
    return [np.array([[0.0, -0.0, 1.0, -0.0, 0.0, -2.0], [3.0, 3.0, -0.0, 0.0, 1.0, 0.0]])]


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
    # the top_k primitive (natively a heap per row)
    OpCase("top_k_batched_f32", lambda x: lax.top_k(x, 4), gen(randn(3, 2, 11, dtype=np.float32)),
           _top_k_ref(4)),
    OpCase("top_k_axis0", lambda x: lax.top_k(x, 2, axis=0), gen(randn(5, 3)), _top_k_ref(2, 0)),
    OpCase("top_k_all_and_none", lambda x: (lax.top_k(x, 6), lax.top_k(x, 0)),
           gen(randn(2, 6)), lambda x: (_top_k_ref(6)(x), _top_k_ref(0)(x))),
    OpCase("top_k_uint64_ties", lambda x: lax.top_k(x, 5),
           gen(ints(3, 9, low=0, high=3, dtype=np.uint64)), _top_k_ref(5), diff=False),
    OpCase("top_k_nan_zeros_ties", lambda x: lax.top_k(x, 7), _top_k_specials, _top_k_ref(7),
           diff=False),
    OpCase("approx_max_k", lambda x: lax.approx_max_k(x, 3), gen(randn(4, 6)),
           _np_approx_k(3, True)),
    OpCase("approx_min_k_axis0", lambda x: lax.approx_min_k(x, 2, reduction_dimension=0),
           gen(randn(5, 3)), _np_approx_k(2, False, 0)),
    OpCase("approx_max_min_k_zero_ties",
           lambda x: (lax.approx_max_k(x, 6), lax.approx_min_k(x, 4)), _zero_ties,
           lambda x: (_np_approx_k(6, True)(x), _np_approx_k(4, False)(x)), diff=False),
    # aggregate_to_topk=False: XLA's reduced length, 256 of 1000 here (sorted, as on CPU)
    OpCase("approx_min_k_no_aggregate",
           lambda x: lax.approx_min_k(x, 5, recall_target=0.9, aggregate_to_topk=False),
           gen(randn(2, 1000, dtype=np.float32)), _np_approx_k(256, False)),
]
