"""Regressions found by running cases of JAX's own tests/lax_numpy_test.py,
lax_numpy_indexing_test.py and lax_numpy_setops_test.py against functrans (driver in
/work/jt/numpy_main): numpy's values eagerly and under jit, where they differed or raised."""
import itertools

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp


@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
def test_pad_odd_wider_than_axis_under_jit(mode):
    """reflect_type='odd' pads wider than the axis raised NotImplementedError under jit;
    numpy repeats chunks reflected about the outermost value (chained)."""
    for n, (lo, hi) in itertools.product([1, 2, 3, 4], [(0, 5), (7, 1), (10, 13), (2, 2)]):
        x = np.random.default_rng(n).normal(size=(n, 2))
        w = ((lo, hi), (1, 0))
        want = np.pad(x, w, mode, reflect_type="odd")
        backend = None if (n, lo) == (3, 10) else "interpret"   # the grid cheaply, one compiled
        got = ft.jit(lambda a: fnp.pad(a, w, mode, reflect_type="odd"), backend=backend)(x)
        np.testing.assert_allclose(got, want, rtol=1e-13, err_msg=f"{n} {(lo, hi)}")


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.bool_])
@pytest.mark.parametrize("mode,kw", [("mean", {}), ("median", {}), ("mean", {"stat_length": 2}),
                                     ("linear_ramp", {"end_values": (-3, 7)})])
def test_pad_integer_stat_modes_under_jit(dtype, mode, kw):
    """mean / median / linear_ramp of an integer array raised under jit: numpy computes in
    float64 and rounds half to even (mean, median) or floors (linear_ramp's linspace)."""
    if dtype == np.bool_ and mode != "median":
        return
    if dtype == np.uint32 and mode == "linear_ramp":
        kw = {"end_values": (0, 7)}
    x = np.array([[1, 2, 4], [5, 0, 3]]).astype(dtype)
    for w in (2, ((1, 2), (3, 0))):
        want = np.pad(x, w, mode, **kw)
        got = ft.jit(lambda a: fnp.pad(a, w, mode, **kw))(x)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_pad_of_a_scalar_is_the_scalar():
    """numpy broadcasts any pad_width to a 0-d array's no axes; functrans raised TypeError."""
    assert fnp.pad(np.float32(3), ((1, 2),)).tolist() == 3.0
    assert ft.jit(lambda a: fnp.pad(a, 1, "edge"))(np.float32(2)).tolist() == 2.0


def test_eye_traced_k():
    """jnp.eye takes a traced diagonal offset (JAX's testEyeDynamicK); it raised."""
    for k in (-4, -1, 0, 2, 5):
        got = ft.jit(lambda k: fnp.eye(3, 4, k, dtype=np.int32))(np.int32(k))
        np.testing.assert_array_equal(got, np.eye(3, 4, k, dtype=np.int32))
    np.testing.assert_array_equal(ft.vmap(lambda k: fnp.eye(2, k=k))(np.arange(-1, 2)),
                                  np.stack([np.eye(2, k=k) for k in (-1, 0, 1)]))


def test_int8_uint8_mix_is_int16_eagerly_and_under_jit():
    """uint8 with int8 promotes to int16, as numpy's and JAX's (before functrans had int16,
    eager results were widened to int64 and jit raised)."""
    c = np.array([True, False])
    a, b = np.array([1, 2], np.uint8), np.array([-1, 3], np.int8)
    assert ft.jit(lambda a, b: a * b)(a, b).dtype == np.int16
    assert ft.jit(lambda c, a, b: fnp.where(c, a, b))(c, a, b).tolist() == [1, 3]
    for f in (fnp.concatenate, fnp.stack):
        assert f([a, b]).dtype == np.int16
        assert ft.jit(lambda a, b: f([a, b]))(a, b).dtype == np.int16


def test_sort_and_argsort_complex():
    """Complex arrays raised TypeError; numpy and JAX sort them by real part, then
    imaginary part, NaNs last in each (testSortComplex)."""
    a = np.array([1 + 1j, np.nan + 0j, 1 - 1j, 0 + np.nan * 1j, -1 + 0j,
                  np.nan + np.nan * 1j, 2 + 0j, 1 - 1j], np.complex64)
    for f in (fnp.sort, ft.jit(fnp.sort)):
        np.testing.assert_array_equal(f(a), np.sort(a))
    for f in (fnp.argsort, ft.jit(fnp.argsort)):
        np.testing.assert_array_equal(f(a), np.argsort(a, kind="stable"))
    desc = ft.jit(lambda a: fnp.argsort(a, descending=True))(a)
    np.testing.assert_array_equal(desc, fnp.argsort(a, descending=True))
    b = np.random.default_rng(0).normal(size=(3, 4, 2)).round().view(np.complex128)[..., 0]
    np.testing.assert_array_equal(ft.jit(lambda b: fnp.sort(b, axis=0))(b), np.sort(b, axis=0))


def test_digitize_decreasing_bins():
    """Decreasing bins took the wrong searchsorted side: values equal to a bin edge fell
    into the neighbouring bin."""
    x = np.array([-2.0, 0, 1, 1.5, 2.5, 3, 7, np.nan])
    bins = np.array([3.0, 1, -1])
    for right in (False, True):
        want = np.digitize(x, bins, right=right)
        np.testing.assert_array_equal(fnp.digitize(x, bins, right=right), want)
        np.testing.assert_array_equal(ft.jit(lambda x: fnp.digitize(x, bins, right=right))(x), want)


def test_ix_boolean_mask_is_its_nonzero_positions():
    """ix_ of a boolean mask used the mask's 0/1 values as indices (numpy: positions)."""
    rows, cols = fnp.ix_(np.array([True, False, True]), np.array([1, 0]))
    want = np.ix_(np.array([True, False, True]), np.array([1, 0]))
    np.testing.assert_array_equal(rows, want[0])
    np.testing.assert_array_equal(cols, want[1])
    with pytest.raises(TypeError, match="mask"):
        ft.jit(lambda m: fnp.ix_(m))(np.array([True, False]))


def test_bincount_traced_negatives_count_at_zero_and_bools():
    """Under jit negative values were dropped; JAX counts them at 0 (testBincountNegative).
    numpy counts a bool array as 0/1; functrans raised."""
    x, w = np.array([-1, 0, 3, -5]), np.array([1.0, 2.0, 3.0, 4.0])
    got = ft.jit(lambda x, w: fnp.bincount(x, w, length=5))(x, w)
    np.testing.assert_array_equal(got, [7.0, 0, 0, 3, 0])
    np.testing.assert_array_equal(fnp.bincount(np.array([True, False, True])), [1, 2])


def test_polymul_trim_leading_zeros_and_convolve_preferred_type():
    """polymul ignored trim_leading_zeros=True (numpy always trims); convolve/correlate
    ignored preferred_element_type."""
    p, q = np.array([0.0, 1, 2]), np.array([1.0, 2])
    np.testing.assert_array_equal(fnp.polymul(p, q, trim_leading_zeros=True), np.polymul(p, q))
    assert fnp.polymul(p, q).shape == (4,)
    a = np.array([1, 2, 3], np.int32)
    for f in (fnp.convolve, fnp.correlate):
        r = f(a, a, preferred_element_type=np.float64)
        assert r.dtype == np.float64
        np.testing.assert_array_equal(r, getattr(np, f.__name__)(a, a))


def test_intersect1d_return_indices_promotion_and_fill():
    """intersect1d(return_indices=True) raised NotImplementedError; the values kept ar1's
    dtype (numpy promotes: it concatenates); with size= the padding defaulted to 0 where
    JAX pads with the smallest common value (setxor1d too)."""
    a, b = np.array([5, 1, 3, 1], np.uint8), np.array([3, 0, 5, 5], np.int32)
    want = np.intersect1d(a, b, return_indices=True)
    for w, g in zip(want, fnp.intersect1d(a, b, return_indices=True)):
        np.testing.assert_array_equal(g, w)
        assert g.dtype == w.dtype or w.dtype.kind == "i"
    vals, i1, i2 = ft.jit(lambda a, b: fnp.intersect1d(a, b, return_indices=True, size=4))(a, b)
    assert vals.dtype == np.int32
    assert vals.tolist() == [3, 5, 3, 3] and i1.tolist() == [2, 0, 4, 4]
    assert i2.tolist() == [0, 2, 4, 4]
    x = ft.jit(lambda a, b: fnp.setxor1d(a, b, size=5))(np.array([4.0, 2.0]), np.array([2.0, 7.0]))
    assert x.tolist() == [4.0, 7.0, 4.0, 4.0, 4.0]


def test_at_wrap_negative_indices_false():
    """x.at[idx] methods lacked JAX's wrap_negative_indices (a TypeError): with False a
    negative index is out of range, so get clamps it to 0 or fills, updates drop it
    (testWrapNegativeIndices1D)."""
    x = np.arange(5.0) + 1
    idx = np.array([-6, -1, 0, 4, 7])
    f = lambda x, i: x.at[i].get(mode="fill", fill_value=-9.0, wrap_negative_indices=False)
    for g in (lambda x, i: f(fnp.asarray(x), i), ft.jit(f)):
        assert g(x, idx).tolist() == [-9.0, -9.0, 1.0, 5.0, -9.0]
    clip = ft.jit(lambda x, i: x.at[i].get(wrap_negative_indices=False))(x, idx)
    assert clip.tolist() == [1.0, 1.0, 1.0, 5.0, 5.0]
    up = ft.jit(lambda x, i: x.at[i].add(10.0, wrap_negative_indices=False))(x, idx)
    assert up.tolist() == [11.0, 2.0, 3.0, 4.0, 15.0]
    assert fnp.asarray(x).at[-1].set(0.0, wrap_negative_indices=False).tolist() == x.tolist()
    assert fnp.asarray(x).at[-1].set(0.0, mode="clip", wrap_negative_indices=False).tolist()[0] == 0.0


def test_complex_to_bool_under_jit_is_nonzero():
    """astype(bool) of a complex array under jit read the real part only (1j -> False);
    numpy and jnp test x != 0."""
    x = np.array([1j, 0, 2 + 0j, 0 + 0j, 1 - 1j], np.complex64)
    for f in (lambda a: a.astype(bool), lambda a: fnp.astype(a, bool),
              lambda a: fnp.asarray(a, bool)):
        np.testing.assert_array_equal(ft.jit(f)(x), x.astype(bool))


def test_argwhere_of_a_0d_array_has_no_columns():
    """numpy's argwhere of a 0-d array is (k, 0); functrans gave (k, 1)."""
    assert fnp.argwhere(np.float32(2)).shape == np.argwhere(np.float32(2)).shape == (1, 0)
    assert fnp.argwhere(np.float32(0)).shape == (0, 0)
    assert ft.jit(lambda a: fnp.argwhere(a, size=3))(np.float32(2)).shape == (3, 0)


def test_setdiff1d_assume_unique_keeps_ar1_order():
    """numpy (and JAX) return ar1's order with assume_unique=True; functrans sorted."""
    a, b = np.array([2, 8, 4, 9, 3]), np.array([3, 7])
    np.testing.assert_array_equal(fnp.setdiff1d(a, b, assume_unique=True),
                                  np.setdiff1d(a, b, assume_unique=True))
    got = ft.jit(lambda a, b: fnp.setdiff1d(a, b, assume_unique=True, size=6, fill_value=0))(a, b)
    assert got.tolist() == [2, 8, 4, 9, 0, 0]
