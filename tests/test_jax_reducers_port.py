"""Regressions found by running JAX's tests/lax_numpy_reducers_test.py against functrans
(driver in /work/jt30/jtnumpy): a wrong eager nansum of bfloat16, and complex max/min
with initial= or where= that raised under jit."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp


@pytest.mark.parametrize("dtype", [None, np.float32, np.complex64, np.float64])
def test_nansum_of_bfloat16_skips_nans_eagerly(dtype):
    """testReducer (nansum, bfloat16 with NaNs): eager nansum returned NaN (numpy's
    nansum skips NaNs of its own inexact types only); jit gave the sum."""
    x = np.array([[1.5, np.nan, 2.0, -0.5], [np.nan, np.nan, 4.0, 0.25]], np.float32)
    xb = x.astype(fnp.bfloat16)
    for axis, want in [(None, 7.25), (1, [3.0, 4.25]), (0, [1.5, 0.0, 6.0, -0.25])]:
        got = fnp.nansum(xb, axis=axis, dtype=dtype)
        jitted = ft.jit(lambda v: fnp.nansum(v, axis=axis, dtype=dtype))(xb)
        for r in (got, jitted):
            assert r.dtype == (np.dtype(dtype) if dtype else fnp.bfloat16)
            np.testing.assert_array_equal(np.asarray(r).astype(np.complex128), want)


@pytest.mark.parametrize("name", ["max", "min"])
def test_complex_max_min_with_initial_or_where_under_jit(name):
    """testReducerInitial / testReducerWhere (max, min on complex): joining initial= used
    the real-only max/min primitive, a TypeError under jit; numpy's lexicographic order
    (a NaN propagates)."""
    z = np.array([[1 + 2j, 3 - 1j, 3 + 0j, -2 + 5j], [0j, 1j, -1j, 3 + 2j],
                  [complex(np.nan, 1), 0j, 1j, -1j]])
    w = np.array([True, False, True, True])
    f, ref = getattr(fnp, name), getattr(np, name)
    for kw in [dict(initial=0), dict(initial=3 + 1j, axis=1), dict(where=w, initial=-10, axis=1),
               dict(where=w, initial=2j, axis=1, keepdims=True), dict(initial=0.5 + 9j, axis=0)]:
        want = ref(z, **kw)
        for got in (f(z, **kw), ft.jit(lambda v: f(v, **kw))(z)):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_cumulative_with_bool_dtype_under_jit(name):
    """test_cumsum_boolean / testCumulativeSumBool: cumsum(x, dtype=bool) raised under jit
    (no bool cumsum primitive); numpy adds bools as logical or, multiplies them as and."""
    f, ref = getattr(fnp, name), getattr(np, name)
    for x in (np.array([0.0, 1.5, 0.0, -2.0], np.float32), np.array([False, True, False]),
              np.array([[1, 0], [0, 0], [3, -1]], np.int8), np.array([np.nan, 0.0, 0.0])):
        for axis in (None, 0):
            want = ref(x, axis=axis, dtype=bool)
            got = ft.jit(lambda v: f(v, axis=axis, dtype=bool))(x)
            assert got.dtype == np.bool_ and got.tolist() == want.tolist()
    got = ft.jit(lambda v: fnp.cumulative_sum(v, axis=-1, dtype=bool))(np.array([[0.1], [0.1], [0.0]]))
    assert got.tolist() == [[True], [True], [False]]


def test_quantiles_and_cov_under_rank_promotion_raise():
    """testQuantile / testCov: nanpercentile with several q and cov with weights broadcast
    q against the slices (and x against the weights) by implicit rank promotion, a
    ValueError under numpy_rank_promotion='raise'."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=(4, 9, 7))
    a[0, 1, :] = np.nan
    q = np.array([0.1, 0.5, 0.93])
    fw, aw = np.array([1, 2, 1, 3, 1]), np.array([0.5, 1.0, 0.25, 2.0, 1.5])
    x = rng.normal(size=(3, 5))
    with ft.numpy_rank_promotion("raise"):
        for op, qq in [("nanpercentile", q * 100), ("quantile", q), ("nanquantile", q[1])]:
            for kw in [dict(axis=(0, 2), keepdims=True, method="lower"), dict(axis=1)]:
                want = getattr(np, op)(a, qq, **kw)
                got = ft.jit(lambda v: getattr(fnp, op)(v, qq, **kw))(a)
                np.testing.assert_allclose(got, want, rtol=1e-13, equal_nan=True)
        for kw in [dict(fweights=fw), dict(aweights=aw), dict(fweights=fw, aweights=aw, ddof=0)]:
            np.testing.assert_allclose(fnp.cov(x, **kw), np.cov(x, **kw), rtol=1e-13)


def test_nanmean_and_average_dtypes():
    """testReducer (nanmean with dtype=) and testAverage (returned=True): nanmean divided
    by a count in the input's dtype (nanmean(float32, dtype=float16) was float32,
    complex with dtype=complex64 complex128); average's sum of integer weights was int64
    where numpy and JAX give the average's floating dtype."""
    x = np.array([[1.5, np.nan, 3.0], [2.0, 3.0, 4.0]], np.float32)
    z = np.array([[1 + 2j, np.nan, 3 - 1j], [2, 3, 4]])
    for arr, dt, want in [(x, np.float16, [2.25, 3.0]), (z, np.complex64, [2 + 0.5j, 3])]:
        for got in (fnp.nanmean(arr, axis=1, dtype=dt),
                    ft.jit(lambda v: fnp.nanmean(v, axis=1, dtype=dt))(arr)):
            assert got.dtype == dt
            np.testing.assert_array_equal(got, want)
    a = np.arange(8, dtype=np.int8).reshape(2, 1, 4)
    avg, wsum = fnp.average(a, 0, np.array([1, 2], np.int8), returned=True)
    assert avg.dtype == wsum.dtype == np.float64
    np.testing.assert_array_equal(wsum, np.full((1, 4), 3.0))


def test_nanvar_mean_and_cov_dtype_arguments():
    """testReducerWithMean (nanvar/nanstd with mean=) and testCovDtype (cov with dtype=):
    JAX 0.10.2 and numpy take them; functrans raised TypeError."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 6))
    x[1, 2] = np.nan
    for axis in (None, 0, 1):
        m = np.nanmean(x, axis=axis, keepdims=True) + 0.3
        for name in ("nanvar", "nanstd"):
            want = getattr(np, name)(x, axis=axis, mean=m, ddof=1)
            got = ft.jit(lambda v, mm: getattr(fnp, name)(v, axis=axis, mean=mm, ddof=1))(x, m)
            np.testing.assert_allclose(got, want, rtol=1e-13)
    y = rng.normal(size=(3, 7))
    for dt in (np.float32, np.complex128):
        got = fnp.cov(y, dtype=dt)
        assert got.dtype == dt
        np.testing.assert_allclose(got, np.cov(y, dtype=dt), rtol=1e-5)


def test_weighted_quantile_average_under_strict_and_raise_modes():
    """testWeightedQuantile (several q with weights=) and testAverage (integer data and
    weights) under JaxTestCase's numpy_rank_promotion='raise' and
    numpy_dtype_promotion='strict': the quantile broadcast q against the slices' total
    weight by rank promotion and average multiplied float64 data by integer weights,
    both raising inside the library. Values stored from JAX 0.10.2 (x64)."""
    x = np.array([[0.5, 2.0, -1.0], [3.0, np.nan, 4.0], [1.5, 1.0, 0.0], [-2.0, 5.0, 2.5]])
    w = np.array([[1.0, 2.0, 0.5], [3.0, 1.0, 1.0], [0.5, 0.5, 4.0], [2.0, 1.0, 1.0]])
    q = np.array([0.25, 0.5, 0.75])
    xi = np.array([[-128, 127, 3, -1], [5, 6, 7, 8]], np.int8)
    with ft.numpy_rank_promotion("raise"), ft.numpy_dtype_promotion("strict"):
        for f in (fnp.nanquantile, ft.jit(fnp.nanquantile, static_argnames=("axis", "method"))):
            got = f(x, q, axis=0, weights=w, method="inverted_cdf")
            np.testing.assert_array_equal(got, [[-2.0, 2.0, 0.0], [1.5, 2.0, 0.0],
                                                [3.0, 5.0, 2.5]])
        got = fnp.nanpercentile(x, q * 100, axis=1, weights=w, method="inverted_cdf",
                                keepdims=True)
        np.testing.assert_array_equal(got[..., 0], [[0.5, 3.0, 0.0, -2.0], [2.0, 3.0, 0.0, -2.0],
                                                    [2.0, 3.0, 0.0, 2.5]])
        avg, wsum = fnp.average(xi, 1, xi, returned=True)    # int8 squares in floating point
        np.testing.assert_allclose(avg, [32523.0, 6.692307472229004], rtol=1e-7)
        np.testing.assert_array_equal(wsum, [1.0, 26.0])
        assert fnp.average(xi.astype(np.int32), None, np.ones((2, 4), np.int32)) == 3.375
        with pytest.raises(ValueError, match="strict"):    # mixed dtypes: as JAX, no path
            fnp.average(np.ones(3, np.float32), weights=np.ones(3, np.int32))


@pytest.mark.parametrize("dtype", [int, "int32", bool])
def test_cov_rejects_non_inexact_dtype(dtype):
    """testCovDtype: cov(x, dtype=int) is a ValueError in JAX 0.10.2 ("cov: dtype must be
    a subclass of float or complex"; numpy fails casting x - mean back to int); functrans
    computed in float and ignored the dtype."""
    with pytest.raises(ValueError, match="cov: dtype must be a subclass of float or complex"):
        fnp.cov(fnp.arange(5), dtype=dtype)
    assert fnp.cov(fnp.arange(5), dtype="bfloat16").dtype == fnp.bfloat16
