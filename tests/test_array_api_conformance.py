"""Regressions found by running the data-apis array-api-tests suite (the Array API
standard, 2024.12, that jax.numpy follows) against functrans.numpy; each test names the
case the outside suite generated and JAX 0.10.2's answer (x64 on)."""
import inspect

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp


def test_arange_with_only_start_and_step_counts_from_zero():
    # arange(n, step=s) is range(0, n, s): the step was taken for the stop, so
    # arange(0, step=134443008) built 134M float32s (JAX: an empty array)
    assert fnp.arange(0, step=3).tolist() == []
    assert fnp.arange(5, step=2).tolist() == [0, 2, 4]
    assert fnp.arange(5.0, step=2).tolist() == [0.0, 2.0, 4.0]
    assert fnp.arange(5, step=-1).tolist() == []
    assert fnp.arange(1, 7, 2).tolist() == [1, 3, 5]
    assert fnp.arange(3, dtype="float32").dtype == np.float32


@pytest.mark.parametrize("bounds,dtype,values", [
    ((np.float32(3),), np.float32, [0, 1, 2]),            # JAX 0.10.2: float32 (was float64)
    ((np.int16(4),), np.int16, [0, 1, 2, 3]),
    ((np.float32(0), 5.5), np.float32, [0, 1, 2, 3, 4, 5]),   # a Python float is weak
    ((np.int32(0), 5), np.int32, [0, 1, 2, 3, 4]),
    ((np.int32(0), 5.5), np.float64, [0, 1, 2, 3, 4, 5]),
    ((np.int8(1), 5, np.int16(1)), np.int16, [1, 2, 3, 4]),
    ((0, 5, np.float32(0.5)), np.float32, [0, .5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5]),
    ((np.float16(0), 3, 0.5), np.float16, [0, .5, 1, 1.5, 2, 2.5]),
    # numpy (and JAX, which calls it) subtract the bounds in uint8 and wrap: 255 values
    # for arange(uint8(3), 2) and none for arange(uint8(10), 0, -1); range() is right
    ((np.uint8(3), 2), np.uint8, []),
    ((np.uint8(10), 0, -1), np.uint8, list(range(10, 0, -1))),
    ((np.uint8(250), 260), np.uint8, [250, 251, 252, 253, 254, 255, 0, 1, 2, 3]),
])
def test_arange_dtype_is_the_bounds_promoted_type(bounds, dtype, values):
    out = fnp.arange(*bounds)
    assert out.dtype == dtype and out.tolist() == values
    assert ft.jit(lambda: fnp.arange(*bounds))().dtype == dtype


def test_arange_float32_values_are_jaxs():
    # JAX 0.10.2: arange(0, float32(1), 0.1) filled in float32
    got = fnp.arange(0, np.float32(1.0), 0.1)
    want = [0.0, 0.10000000149011612, 0.20000000298023224, 0.30000001192092896,
            0.4000000059604645, 0.5, 0.6000000238418579, 0.699999988079071, 0.800000011920929,
            0.9000000357627869]
    assert got.dtype == np.float32 and got.tolist() == want


def test_array_namespace_info_and_version_as_jax():
    info = fnp.__array_namespace_info__()
    assert fnp.__array_api_version__ == "2024.12"
    assert fnp.ones(2).__array_namespace__(api_version="2024.12") is fnp
    with pytest.raises(ValueError, match="api_version"):
        fnp.ones(2).__array_namespace__(api_version="2021.12")
    assert info.capabilities() == {"boolean indexing": False, "data-dependent shapes": False,
                                   "max dimensions": 64}
    assert info.default_device() is None and None in info.devices()
    assert info.default_dtypes() == {"real floating": np.float64, "complex floating": np.complex128,
                                     "integral": np.int64, "indexing": np.int64}
    assert list(info.dtypes(kind="unsigned integer")) == ["uint8", "uint16", "uint32", "uint64"]
    assert list(info.dtypes(kind=("bool", "real floating"))) == ["bool", "float32", "float64"]
    assert len(info.dtypes()) == 13 and "float16" not in info.dtypes()
    with pytest.raises(ValueError, match="unknown kind"):
        info.dtypes(kind="floating")


@pytest.mark.parametrize("make", [
    lambda d: fnp.zeros(2, device=d), lambda d: fnp.ones((2,), "int32", device=d),
    lambda d: fnp.empty(2, device=d), lambda d: fnp.full(2, 3.0, device=d),
    lambda d: fnp.eye(2, device=d), lambda d: fnp.arange(2, device=d),
    lambda d: fnp.linspace(0, 1, 2, device=d), lambda d: fnp.asarray([1, 2], device=d),
    lambda d: fnp.array([1, 2], device=d), lambda d: fnp.zeros_like(fnp.ones(2), device=d),
    lambda d: fnp.ones_like(fnp.ones(2), device=d), lambda d: fnp.empty_like(fnp.ones(2), device=d),
    lambda d: fnp.full_like(fnp.ones(2), 7, device=d),
    lambda d: fnp.astype(fnp.ones(2), fnp.int8, device=d)])
def test_creation_functions_take_device_as_jax(make):
    # the array API's device= keyword (JAX's): None and every listed device
    base = make(None)
    for d in fnp.__array_namespace_info__().devices() + ["cpu"]:
        out = make(d)
        assert out.dtype == base.dtype and out.tolist() == base.tolist()
    assert ft.jit(lambda x: make(ft.devices()[0]) + x)(1).tolist() == (base + 1).tolist()
    with pytest.raises(ValueError, match="unknown device"):
        make("tpu")


def test_clip_and_reshape_parameters_are_jax_and_the_array_apis():
    assert list(inspect.signature(fnp.clip).parameters)[:3] == ["x", "min", "max"]
    assert list(inspect.signature(fnp.reshape).parameters)[:2] == ["a", "shape"]
    x = fnp.arange(5)
    assert fnp.clip(x, 1, 3).tolist() == fnp.clip(x, min=1, max=3).tolist() == [1, 1, 2, 3, 3]
    assert fnp.clip(x, a_min=1, a_max=2).tolist() == [1, 1, 2, 2, 2]    # numpy's keywords
    with pytest.raises(TypeError, match="once"):
        fnp.clip(x, 1, a_min=2)
    assert fnp.reshape(x[:4], shape=(2, 2), copy=True).shape == (2, 2)
    assert fnp.reshape(x[:4], newshape=(4, 1)).shape == (4, 1)
    with pytest.raises(TypeError, match="once"):
        fnp.reshape(x[:4], (2, 2), newshape=(4,))


def test_unique_inverse_of_a_0d_array_is_0d():
    # numpy's and JAX's unique(return_inverse=True) give the input's shape; a 0-d input
    # gave shape (1,)
    assert fnp.unique_inverse(fnp.asarray(3.0)).inverse_indices.shape == ()
    assert fnp.unique_all(fnp.asarray(3.0)).inverse_indices.shape == ()
    assert fnp.unique(fnp.asarray(3.0), return_inverse=True)[1].shape == ()


def test_pinv_and_matrix_rank_take_an_rtol_per_matrix():
    # the Array API's rtol array, broadcast against the batch axes (JAX's); it raised
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4, 3))
    a[1, :, 2] = a[1, :, 1] * (1 + 1e-3)        # nearly rank 2: its rtol decides
    r = np.array([1e-12, 1e-2, 1e-12])
    want = np.stack([np.linalg.pinv(a[i], rcond=r[i]) for i in range(3)])
    np.testing.assert_allclose(fnp.linalg.pinv(a, rtol=r), want, rtol=1e-9, atol=1e-9)
    g = ft.grad(lambda m: fnp.sum(fnp.linalg.pinv(m, rtol=r)))(a)
    g1 = ft.grad(lambda m: fnp.sum(fnp.linalg.pinv(m, rtol=1e-2)))(a[1])
    np.testing.assert_allclose(g[1], g1, rtol=1e-12)
    assert fnp.linalg.matrix_rank(a, rtol=r).tolist() == [3, 2, 3]
    assert fnp.linalg.pinv(np.ones((0, 2, 3), np.float32), rtol=np.ones(0, np.float32)).shape \
        == (0, 3, 2)
    with pytest.raises(ValueError, match="broadcast"):
        fnp.linalg.pinv(a, rtol=np.ones(2))


def _bits_equal(got, want):
    got, want = np.asarray(got), np.asarray(want)
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        assert ((np.isnan(g) & np.isnan(w)) | ((g == w) & (np.signbit(g) == np.signbit(w)))).all(), \
            (got, want)


def test_signbit_reads_the_sign_of_a_nan():
    # numpy's and JAX's signbit(-nan) is True; it was False (the sign was not read)
    x = np.array([-np.nan, np.nan, -0.0, 0.0, -1.0, np.inf, -np.inf])
    want = [True, False, True, False, True, False, True]
    for dt in (np.float64, np.float32, np.float16, fnp.bfloat16):
        assert fnp.signbit(x.astype(dt)).tolist() == want
        assert ft.jit(fnp.signbit)(x.astype(dt)).tolist() == want
    assert fnp.signbit(np.array([-3, 2])).tolist() == [True, False]


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_expm1_and_tanh_edges_are_the_array_apis(dtype):
    # JAX 0.10.2's values (the standard's); numpy's formulas gave expm1(inf+0j) = inf+nanj,
    # expm1(nan+0j) = nan+nanj, expm1(-0+0j) = -0+0j, tanh(inf + 3.6e150j) = 1-0j
    inf, nan = np.inf, np.nan
    z = np.array([complex(-0.0, 0.0), complex(inf, 0.0), complex(nan, 0.0),
                  complex(-inf, 2.5), complex(-inf, inf), complex(-inf, nan)], dtype)
    want = np.array([0j, complex(inf, 0.0), complex(nan, 0.0), complex(-1.0, 0.0),
                     complex(-1.0, 0.0), complex(-1.0, 0.0)], dtype)
    t = np.array([complex(inf, 3.0e38), complex(inf, 2.5), complex(-inf, -2.5)], dtype)
    t_want = np.array([1 + 0j, 1 + 0j, complex(-1.0, -0.0)], dtype)
    with np.errstate(all="ignore"):
        for f in (lambda v: v, ft.jit, lambda g: ft.jit(g, backend="interpret")):
            _bits_equal(f(fnp.expm1)(z), want)
            _bits_equal(f(fnp.tanh)(t), t_want)
        # away from the edges the values are numpy's formula's
        w = np.array([1 + 1j, -2.5 + 1e-5j, 1e-10 + 1e-10j], dtype)
        np.testing.assert_allclose(fnp.expm1(w), np.expm1(w), rtol=4 * np.finfo(dtype).eps)


def test_take_along_axis_defaults_to_the_last_axis():
    # JAX's and the Array API's axis=-1; the axis was required
    assert fnp.take_along_axis(fnp.asarray([3, 1, 2]), fnp.asarray([1, 0])).tolist() == [1, 3]
    assert fnp.take_along_axis(fnp.asarray([[3, 1, 2]]), fnp.asarray([[2, 0]])).tolist() == [[2, 3]]
    assert fnp.take_along_axis(fnp.asarray([False]), fnp.asarray([], int)).tolist() == []
