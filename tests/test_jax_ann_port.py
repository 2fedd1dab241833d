"""Regressions found by running JAX 0.10.2's tests/ann_test.py against functrans (session
32), and by comparing ``lax.approx_max_k`` / ``approx_min_k`` with JAX 0.10.2 on CPU
around it. Expected values were computed with JAX and are stored here."""
import ml_dtypes
import numpy as np
import pytest

import functrans as ft
from functrans import lax
from functrans.lax_approx import approx_top_k_output_size

# (input_size, rank, k, recall_target, reduction_input_size_override, JAX's output size)
# from jax._src.lib._jax.approx_top_k_reduction_output_size(..., aggregate_to_topk=False)
JAX_OUTPUT_SIZES = [
    (9, 1, 3, 0.95, -1, 9), (1024, 1, 10, 0.95, -1, 1024), (1025, 1, 1, 0.95, -1, 1024),
    (1025, 1, 2, 0.95, -1, 1025), (4096, 1, 10, 0.95, -1, 1024),
    (4096, 1, 10, 1.0, -1, 4096), (4096, 1, 10, 0.95, 8192, 1024),
    (100000, 1, 5, 0.99, -1, 2048), (100000, 1, 100, 0.9, -1, 2048),
    (129, 2, 2, 0.5, 258, 256), (129, 2, 2, 0.999, 258, 129), (300, 2, 10, 0.95, -1, 300),
    (1000, 2, 5, 0.9, -1, 256), (1000, 2, 5, 0.9, 5000, 128), (2000, 3, 3, 0.99, -1, 256),
    (5000, 1, 2, 0.5, 20000, 2048), (65536, 2, 128, 0.8, -1, 1024), (700, 3, 1, 0.95, -1, 128),
]


@pytest.mark.parametrize("n,rank,k,recall,override,expected", JAX_OUTPUT_SIZES)
def test_output_size_matches_xla(n, rank, k, recall, override, expected):
    assert approx_top_k_output_size(n, rank, k, recall, override) == expected


@pytest.mark.parametrize("largest", [True, False])
def test_no_aggregate_returns_jax_length_sorted(largest):
    # test_approx_max_k / aggregate_to_topk=False: functrans returned the whole dimension
    # (4096 entries) where JAX on CPU returns 1024 (shape mismatch with JAX's program)
    x = np.random.RandomState(0).randn(2, 4096).astype(np.float32)
    f = lax.approx_max_k if largest else lax.approx_min_k
    v, i = f(x, 10, aggregate_to_topk=False)
    assert v.shape == i.shape == (2, 256)           # rank 2: 128-wide windows, as JAX
    ref = np.sort(x, axis=1)
    ref = ref[:, ::-1][:, :256] if largest else ref[:, :256]
    np.testing.assert_array_equal(np.asarray(v), ref)
    np.testing.assert_array_equal(np.take_along_axis(x, np.asarray(i), 1), ref)
    v1, _ = f(x[0], 10, aggregate_to_topk=False)
    assert v1.shape == (1024,)                       # rank 1: 1024-wide windows
    v2, _ = f(x[:, :300], 10, aggregate_to_topk=False)
    assert v2.shape == (2, 300)                      # too short to reduce: kept whole


def test_signed_zeros_tie_by_index_as_jax():
    # JAX's comparator is a plain > / <: -0.0 == 0.0, ties by the lower index.
    # functrans ranked 0.0 above -0.0 (total order): indices [2, 0, 4, 1, 3]
    x = np.array([0.0, -0.0, 1.0, -0.0, 0.0])
    v, i = lax.approx_max_k(x, 5)
    assert np.asarray(i).tolist() == [2, 0, 1, 3, 4]
    assert np.signbit(np.asarray(v)).tolist() == [False, False, True, True, False]
    v, i = lax.approx_min_k(x, 5)
    assert np.asarray(i).tolist() == [0, 1, 3, 4, 2]


def test_bfloat16_operand():
    # test_approx_max_k3 / test_approx_min_k3: bfloat16 was refused ("must be a floating
    # type, got bfloat16"); JAX computes it
    z = np.array([1, 0, 3, 2, 1, 0], ml_dtypes.bfloat16)
    v, i = lax.approx_max_k(z, 2)
    assert v.dtype == ml_dtypes.bfloat16 and np.asarray(v, np.float32).tolist() == [3, 2]
    assert np.asarray(i).tolist() == [2, 3]
    v, i = lax.approx_min_k(z, 2)
    assert np.asarray(v, np.float32).tolist() == [0, 0] and np.asarray(i).tolist() == [1, 5]


def test_out_of_range_reduction_dimension_raises():
    # WRONG NUMBER before: reduction_dimension=3 of a rank-3 operand was folded to 0
    y = np.random.RandomState(0).randn(4, 7, 5)
    for d in (3, -4):
        with pytest.raises(ValueError, match="axis .* out of range"):
            lax.approx_max_k(y, 2, reduction_dimension=d)


@pytest.mark.parametrize("kwargs,err,msg", [
    (dict(k=0), ValueError, "k must be positive"),
    (dict(k=10), ValueError, "k=10 is larger"),
    (dict(k=2, recall_target=0.0), ValueError, r"recall_target must be in \(0, 1\]"),
    (dict(k=2, recall_target=1.5), ValueError, "recall_target"),
    (dict(k=2, reduction_input_size_override=8), ValueError, "smaller than"),
])
def test_argument_checks(kwargs, err, msg):
    # JAX raises for each (k at trace time, recall/override when XLA compiles);
    # functrans accepted k=0, recall_target outside (0, 1] and a too small override
    with pytest.raises(err, match=msg):
        lax.approx_max_k(np.arange(9.0), **kwargs)


def test_operand_checks():
    with pytest.raises(TypeError, match="at least one dimension"):   # was ZeroDivisionError
        lax.approx_max_k(np.float32(1), 1)
    with pytest.raises(ValueError, match="floating type, got int32"):  # JAX: ValueError
        lax.approx_min_k(np.arange(4, dtype=np.int32), 2)
    with pytest.raises(ValueError, match="reduction would return 256 > 129"):
        lax.approx_max_k(np.ones((2, 129)), 2, recall_target=0.5,
                         reduction_input_size_override=258, aggregate_to_topk=False)


def test_nan_ranks_first():
    x = np.array([1.0, np.nan, 3.0, -np.nan])
    for f in (lax.approx_max_k, lax.approx_min_k):
        v, i = f(x, 3)
        assert np.asarray(i).tolist()[:2] == [1, 3]


def test_grad_matches_jax():
    y = np.array([[1.764052345967664, 0.4001572083672233, 0.9787379841057392, 2.240893199201458],
                  [1.8675579901499675, -0.977277879876411, 0.9500884175255894, -0.1513572082976979],
                  [-0.10321885179355784, 0.41059850193837233, 0.144043571160878, 1.454273506962975]])
    g = ft.grad(lambda a: (ft.numpy.sin(lax.approx_max_k(a, 2)[0]) * np.arange(2.0)).sum())(y)
    np.testing.assert_allclose(np.asarray(g), [[-0.19205531283602323, 0, 0, 0],
                                               [0, 0, 0.5816111670040677, 0],
                                               [0, 0.9168820901169656, 0, 0]], rtol=1e-12)
    g = ft.grad(lambda a: (ft.numpy.sin(lax.approx_min_k(a, 2, reduction_dimension=0)[0])
                           * np.arange(4.0)).sum())(y)
    np.testing.assert_allclose(np.asarray(g), [
        [0, 0.9209997627996086, 0, 0],
        [0, 0.5592811938290797, 1.1632223340081354, 2.9657020459793952],
        [0, 0, 1.9792872999997522, 0.3487779481195258]], rtol=1e-12)
