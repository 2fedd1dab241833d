"""Behaviour of the elementwise family beyond the op table: broadcasting of random
shapes, numpy 2 (NEP 50) promotion eagerly and under jit, error messages, and
edge cases (division by zero, shift amounts, tie and zero gradients)."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.errors import ConcretizationError


def _both(f, *args):
    """f eagerly and under jit (interpreter), as numpy arrays."""
    return np.asarray(f(*args)), np.asarray(ft.jit(f, backend="interpret")(*args))


# --------------------------------------------------------------------------- broadcasting

_BINOPS = {
    "add": (fnp.add, np.add), "subtract": (fnp.subtract, np.subtract),
    "multiply": (fnp.multiply, np.multiply), "maximum": (fnp.maximum, np.maximum),
    "minimum": (fnp.minimum, np.minimum), "arctan2": (fnp.arctan2, np.arctan2),
    "true_divide": (fnp.true_divide, np.true_divide), "power": (fnp.power, np.power),
    "hypot": (fnp.hypot, np.hypot), "equal": (fnp.equal, np.equal),
    "less": (fnp.less, np.less), "remainder": (fnp.remainder, np.remainder),
}


@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4),
       op=st.sampled_from(sorted(_BINOPS)),
       dtypes=st.sampled_from([("float64", "float64"), ("float32", "float32"),
                               ("float32", "float64"), ("int32", "float64")]),
       seed=st.integers(0, 2**16))
def test_random_broadcasting_matches_numpy(shapes, op, dtypes, seed):
    rng = np.random.default_rng(seed)
    x = (rng.uniform(0.5, 2.0, shapes.input_shapes[0]) * 3).astype(dtypes[0])
    y = rng.uniform(0.5, 2.0, shapes.input_shapes[1]).astype(dtypes[1])
    f, ref = _BINOPS[op]
    want = ref(x, y)
    eager, jitted = _both(f, x, y)
    for got in (eager, jitted):
        assert got.shape == want.shape == shapes.result_shape
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6 if "float32" in dtypes else 1e-13)


@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3),
       seed=st.integers(0, 2**16))
def test_random_where_broadcasting(shapes, seed):
    rng = np.random.default_rng(seed)
    c = rng.random(shapes.input_shapes[0]) < 0.5
    x = rng.standard_normal(shapes.input_shapes[1])
    y = rng.integers(0, 5, shapes.input_shapes[2]).astype(np.int32)
    for got in _both(fnp.where, c, x, y):
        np.testing.assert_array_equal(got, np.where(c, x, y))
        assert got.dtype == np.float64


# --------------------------------------------------------------------------- NEP 50 promotion

F32, F64, I32, I64, U32, U64, U8 = (np.ones(3, d) for d in ("float32", "float64", "int32",
                                                              "int64", "uint32", "uint64", "uint8"))
B = np.array([True, False, True])

# (function, args, expected dtype): expected is numpy's, except where numpy would
# produce a dtype outside the supported set (int8, float16), widened to int64/float64
PROMOTION = [
    (fnp.multiply, (F32, 2.0), "float32"),
    (fnp.multiply, (2.0, F32), "float32"),
    (fnp.multiply, (I32, 2.5), "float64"),
    (fnp.add, (I64, True), "int64"),
    (fnp.add, (I32, 2), "int32"),
    (fnp.add, (I32, I64), "int64"),
    (fnp.add, (U32, I32), "int64"),
    (fnp.multiply, (U32, 3), "uint32"),
    # uint64: numpy's rules, which are JAX's with x64 for every integer and bool pair
    (fnp.add, (U64, I64), "float64"),
    (fnp.add, (U64, I32), "float64"),
    (fnp.add, (U64, U32), "uint64"),
    (fnp.add, (U64, U8), "uint64"),
    (fnp.add, (U64, B), "uint64"),
    (fnp.multiply, (U64, 3), "uint64"),
    (fnp.multiply, (U64, 2.5), "float64"),
    (fnp.add, (U64, F32), "float64"),
    (fnp.floor_divide, (U64, U64), "uint64"),
    (fnp.true_divide, (U64, 2), "float64"),
    (fnp.sign, (U64,), "uint64"),
    (fnp.abs, (U64,), "uint64"),
    (fnp.right_shift, (U64, 3), "uint64"),
    (fnp.add, (F32, I32), "float64"),
    (fnp.add, (F32, np.float64(1.0)), "float64"),
    (fnp.add, (B, B), "bool"),
    (fnp.multiply, (B, 1.5), "float64"),
    (fnp.add, (B, 1), "int64"),
    (fnp.true_divide, (I32, I32), "float64"),
    (fnp.true_divide, (F32, 2), "float32"),
    (fnp.floor_divide, (I32, 2), "int32"),
    (fnp.floor_divide, (F32, 2.0), "float32"),
    (fnp.remainder, (I32, 3), "int32"),
    (fnp.power, (I32, 2), "int32"),
    (fnp.power, (F32, 2), "float32"),
    (fnp.power, (I32, 2.0), "float64"),
    (fnp.power, (F32, I32), "float64"),
    (fnp.maximum, (I32, 0.5), "float64"),
    (fnp.arctan2, (I32, I32), "float64"),
    (fnp.equal, (I32, 2.5), "bool"),
    (fnp.less, (F32, 1), "bool"),
    (fnp.sin, (I32,), "float64"),
    (fnp.sin, (F32,), "float32"),
    (fnp.sqrt, (U32,), "float64"),
    (fnp.abs, (I32,), "int32"),
    (fnp.sign, (U32,), "uint32"),
    (fnp.floor, (I32,), "int32"),
    (fnp.square, (I32,), "int32"),
    (fnp.negative, (F32,), "float32"),
    (fnp.bitwise_and, (U32, 7), "uint32"),
    (fnp.left_shift, (I32, 3), "int32"),
    (fnp.isnan, (F32,), "bool"),
    (lambda x: fnp.clip(x, 0, 1), (I32,), "int32"),
    (lambda x: fnp.clip(x, 0.0, 1.0), (I32,), "float64"),
    (lambda x: fnp.clip(x, 0.0, 1.0), (F32,), "float32"),
    (lambda c, x: fnp.where(c, x, 0.5), (B, F32), "float32"),
    (lambda c, x: fnp.where(c, x, 0.5), (B, I32), "float64"),
    # numpy gives int8 / float16 here; the library widens
    (fnp.remainder, (B, B), "int64"),
    (fnp.square, (B,), "int64"),
    (fnp.sin, (B,), "float64"),
    (fnp.sqrt, (B,), "float64"),
]


def _call_with(f, args):
    # Python scalars stay Python scalars (closed over), arrays are traced under jit
    arrays = [a for a in args if isinstance(a, np.ndarray)]

    def g(*arrs):
        it = iter(arrs)
        return f(*[next(it) if isinstance(a, np.ndarray) else a for a in args])
    return g, arrays


@pytest.mark.parametrize("f, args, want", PROMOTION,
                         ids=[f"{getattr(f, '__name__', 'fn')}-{i}" for i, (f, _, _) in
                              enumerate(PROMOTION)])
def test_promotion_eager_and_jit_agree_with_numpy(f, args, want):
    g, arrays = _call_with(f, args)
    eager, jitted = _both(g, *arrays)
    assert eager.dtype == np.dtype(want), f"eager gave {eager.dtype}"
    assert jitted.dtype == np.dtype(want), f"jit gave {jitted.dtype}"
    np.testing.assert_allclose(jitted.astype(np.float64), eager.astype(np.float64), rtol=1e-6)


def test_weak_scalar_tracer_keeps_array_dtype():
    # inside jit a Python float stays weak: f32 * 2.0 is f32 also via a traced scalar
    out = ft.jit(lambda x: fnp.multiply(x, fnp.sin(0.5)))(np.ones(2, np.float32))
    assert out.dtype == np.float64 or out.dtype == np.float32   # sin(0.5) is concrete
    out = ft.jit(lambda x, s: x * s)(np.ones(2, np.float32), np.float32(2))
    assert out.dtype == np.float32


# --------------------------------------------------------------------------- errors

def test_shape_mismatch_names_both_shapes():
    x, y = np.ones(3), np.ones(4)
    with pytest.raises(ValueError, match=r"\(3,\).*\(4,\)"):
        fnp.add(x, y)
    with pytest.raises(ValueError, match=r"\(3,\).*\(4,\)"):
        ft.jit(fnp.add)(x, y)
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4,\)"):
        ft.grad(lambda a, b: fnp.sum(fnp.multiply(a, b)))(np.ones((2, 3)), np.ones(4))


def test_string_argument_is_named():
    with pytest.raises(TypeError, match="str"):
        fnp.add(np.ones(2), "a")
    with pytest.raises(TypeError, match="str"):
        ft.jit(lambda x: fnp.multiply(x, "a"))(np.ones(2))
    with pytest.raises(TypeError, match="str"):
        fnp.sin("x")


def test_lax_is_strict_and_names_both_types():
    # checked when traced (eager lax calls numpy directly, for speed)
    with pytest.raises(TypeError, match=r"f64\[3\].*f32\[3\]"):
        ft.jit(lax.add)(np.ones(3), np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"f64\[3\].*f64\[2\]"):
        ft.jit(lax.max)(np.ones(3), np.ones(2))


def test_unsupported_dtypes_raise_naming_the_function():
    with pytest.raises(TypeError, match="bitwise_and"):
        ft.jit(fnp.bitwise_and)(np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="negative"):
        ft.jit(fnp.negative)(np.array([True]))
    with pytest.raises(TypeError, match="shift_left"):
        ft.jit(lax.shift_left)(np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="item sizes"):
        ft.jit(lambda v: lax.bitcast_convert_type(v, np.float32))(np.ones(2))
    with pytest.raises(TypeError, match="item sizes"):
        ft.jit(lambda v: lax.bitcast_convert_type(v, np.uint64))(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="int8 is not supported"):
        ft.jit(lambda v: lax.bitcast_convert_type(v, np.uint8))(np.ones(2, np.int8))
    with pytest.raises(ValueError, match="negative"):
        ft.jit(lambda v: lax.integer_pow(v, -1))(np.arange(3))
    with pytest.raises(ValueError, match="negative"):
        ft.jit(lambda v: fnp.power(v, -1))(np.arange(3))


def test_where_single_argument():
    x = np.array([0.0, 1.0, 2.0])
    (idx,) = fnp.where(x > 0)
    np.testing.assert_array_equal(idx, [1, 2])
    with pytest.raises(ConcretizationError, match="three-argument"):
        ft.jit(lambda a: fnp.where(a > 0))(x)
    with pytest.raises(ValueError, match="both x and y"):
        fnp.where(x > 0, x)


# --------------------------------------------------------------------------- edge cases

@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "uint64", "uint8"])
def test_integer_division_by_zero_is_numpy_zero_without_warnings(dtype):
    x = np.array([7, 0, 5, 3], dtype)
    y = np.array([0, 0, 2, 0], dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for f, want in ((fnp.floor_divide, [0, 0, 2, 0]), (fnp.remainder, [0, 0, 1, 0])):
            for got in _both(f, x, y):
                assert got.dtype == np.dtype(dtype)
                np.testing.assert_array_equal(got, want)


def test_signed_floor_semantics_match_numpy():
    x = np.array([-7, 7, -7, 7, -1, np.iinfo(np.int32).min], np.int32)
    y = np.array([2, -2, -2, 2, 3, -1], np.int32)
    with np.errstate(all="ignore"):
        for f, ref in ((fnp.floor_divide, np.floor_divide), (fnp.remainder, np.remainder)):
            for got in _both(f, x, y):
                np.testing.assert_array_equal(got, ref(x, y))


def test_float_floor_divide_and_remainder_match_numpy_on_a_grid():
    v = np.array([-7.5, -3.0, -1.0, -0.1, -0.0, 0.0, 0.3, 1.0, 2.5, 7.0, 1e10, np.inf, np.nan])
    x, y = np.meshgrid(v, v[np.isfinite(v) & (v != 0)])
    with np.errstate(all="ignore"):
        for f, ref in ((fnp.floor_divide, np.floor_divide), (fnp.remainder, np.remainder)):
            want = ref(x, y)
            for got in _both(f, x, y):
                np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(ft.jit(fnp.floor_divide)(1.0, 0.1), np.floor_divide(1.0, 0.1))
    np.testing.assert_array_equal(ft.jit(fnp.floor_divide)(np.array([1.0, -1.0, 0.0]),
                                                           np.zeros(3)),
                                  [np.inf, -np.inf, np.nan])


@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64"])
def test_shifts_by_bit_width_or_more(dtype):
    bits = np.dtype(dtype).itemsize * 8
    x = np.array([1, 5, 2**20, 3, 7], dtype)
    if dtype[0] != "u":
        x[-1] = -7
    s = np.array([0, bits - 1, bits, bits + 3, 2 * bits], dtype)
    for f, ref in ((fnp.left_shift, np.left_shift), (fnp.right_shift, np.right_shift)):
        for got in _both(f, x, s):
            np.testing.assert_array_equal(got, ref(x, s))
    # lax: logical shifts give 0 from the bit width on; arithmetic fills with the sign
    for got in _both(lax.shift_left, x, s):
        assert (got[2:] == 0).all()
    for got in _both(lax.shift_right_logical, x, s):
        assert (got[2:] == 0).all()
    if dtype[0] != "u":
        for got in _both(lax.shift_right_arithmetic, x, s):
            np.testing.assert_array_equal(got[2:], [0, 0, -1])


def test_negative_shift_amounts_are_out_of_range():
    x = np.array([-8, 8], np.int32)
    s = np.array([-1, -1], np.int32)
    for got in _both(lax.shift_left, x, s):
        np.testing.assert_array_equal(got, [0, 0])
    for got in _both(lax.shift_right_arithmetic, x, s):
        np.testing.assert_array_equal(got, [-1, 0])


def test_bitcast_round_trip():
    x = np.array([1.0, -2.5, np.inf], np.float32)
    u = lax.bitcast_convert_type(x, np.uint32)
    assert u.dtype == np.uint32 and u[0] == 0x3F800000
    back = ft.jit(lambda v: lax.bitcast_convert_type(v, "float32"))(u)
    np.testing.assert_array_equal(back, x)


@pytest.mark.parametrize("op", [fnp.maximum, fnp.minimum, lax.max, lax.min])
def test_max_min_tie_gradients_split_evenly(op):
    gx, gy = ft.grad(lambda a, b: op(a, b), argnums=(0, 1))(1.5, 1.5)
    assert float(gx) == 0.5 and float(gy) == 0.5
    gx, gy = ft.grad(lambda a, b: fnp.sum(op(a, b)), argnums=(0, 1))(np.array([1.0, 3.0]),
                                                                     np.array([2.0, 2.0]))
    big = op is fnp.maximum or op is lax.max
    np.testing.assert_array_equal(gx, [0.0, 1.0] if big else [1.0, 0.0])
    np.testing.assert_array_equal(gy, [1.0, 0.0] if big else [0.0, 1.0])


def test_pow_gradients_at_zero():
    # d/dx x**2 at 0 is 0; d/dy 0**y at y = 2 is 0; d/dx x**0 is 0 (even at 0)
    gx, gy = ft.grad(lambda x, y: fnp.power(x, y), argnums=(0, 1))(0.0, 2.0)
    assert float(gx) == 0.0 and float(gy) == 0.0
    gx, gy = ft.grad(lambda x, y: fnp.power(x, y), argnums=(0, 1))(0.0, 0.0)
    assert float(gx) == 0.0 and float(gy) == 0.0
    gx, gy = ft.grad(lambda x, y: fnp.power(x, y), argnums=(0, 1))(0.0, 1.0)
    assert float(gx) == 1.0 and float(gy) == 0.0
    assert float(ft.grad(lambda x: fnp.power(x, 3))(0.0)) == 0.0
    assert float(ft.grad(lambda x: fnp.power(x, 0))(0.0)) == 0.0
    assert float(ft.grad(lambda x: x ** 2)(3.0)) == 6.0
    gx, gy = ft.grad(lambda x, y: fnp.power(x, y), argnums=(0, 1))(2.0, 3.0)
    assert float(gx) == 12.0 and np.isclose(float(gy), 8 * math.log(2.0))



def test_pow_mixed_second_derivative_at_zero_exponent():
    # JAX's testPowSecondDerivative: the Hessian of x**y at (4, 0) is [[0, 1/x], [1/x, log(x)**2]];
    # the x-derivative's guard at y == 0 once zeroed the cross terms
    want = np.array([[0.0, 0.25], [0.25, math.log(4.0) ** 2]])
    for jac in (ft.jacfwd, ft.jacrev):
        got = jac(jac(lax.pow, (0, 1)), (0, 1))(4.0, 0.0)
        np.testing.assert_allclose(np.array(got, dtype=float), want, rtol=1e-12)

def test_abs_and_clip_gradients_at_kinks():
    assert float(ft.grad(fnp.abs)(0.0)) == 1.0          # as JAX
    assert float(ft.grad(fnp.abs)(-2.0)) == -1.0
    g = ft.grad(lambda x: fnp.sum(fnp.clip(x, -1.0, 1.0)))(np.array([-2.0, 0.5, 3.0]))
    np.testing.assert_array_equal(g, [0.0, 1.0, 0.0])


def test_piecewise_constant_functions_have_zero_gradient():
    for f in (fnp.floor, fnp.ceil, fnp.round, fnp.sign, lambda x: fnp.floor_divide(x, 0.7)):
        assert float(ft.grad(lambda x: fnp.sum(f(x)))(1.3)) == 0.0


def test_erf_against_math_erf():
    x = np.concatenate([np.linspace(-7, 7, 4001), [0.0, -0.0, 1e-300, np.inf, -np.inf]])
    want = np.array([math.erf(v) for v in x])
    got = np.asarray(lax.erf(x))
    np.testing.assert_allclose(got, want, rtol=2e-15, atol=0)
    assert np.signbit(lax.erf(np.float64(-0.0)))
    assert np.isnan(lax.erf(np.float64(np.nan)))
    g = ft.grad(lax.erf)(0.5)
    assert np.isclose(float(g), 2 / math.sqrt(math.pi) * math.exp(-0.25), rtol=1e-14)


def test_round_decimals_match_numpy():
    x = np.array([1.005, 2.675, -1.25, 123.456, -0.5, 1e300])
    for d in (-2, -1, 0, 1, 2, 3):
        want = np.round(x, d)
        for got in _both(lambda v: fnp.round(v, d), x):
            np.testing.assert_array_equal(got, want)
    xf = x[:5].astype(np.float32)
    for got in _both(lambda v: fnp.round(v, 2), xf):
        np.testing.assert_array_equal(got, np.round(xf, 2))


def test_clip_bounds():
    x = np.arange(-3.0, 4.0)
    for got in _both(lambda v: fnp.clip(v, None, None), x):
        np.testing.assert_array_equal(got, x)
    for got in _both(lambda v: fnp.clip(v, 2, -2), x):     # lo > hi gives hi, as numpy
        np.testing.assert_array_equal(got, np.clip(x, 2, -2))
    for got in _both(lambda v: fnp.clip(v, min=-1), x):
        np.testing.assert_array_equal(got, np.clip(x, min=-1))
    with pytest.raises(TypeError, match="multiple values for argument 'min'"):
        fnp.clip(x, 0, 1, min=0)    # the bound given twice (JAX's signature since d31f205)


def test_nan_handling_max_fmax_isnan():
    x = np.array([np.nan, 1.0, np.nan])
    y = np.array([2.0, np.nan, np.nan])
    for f, ref in ((fnp.maximum, np.maximum), (fnp.fmax, np.fmax), (fnp.fmin, np.fmin),
                   (fnp.minimum, np.minimum)):
        for got in _both(f, x, y):
            np.testing.assert_array_equal(got, ref(x, y))
    for f, ref in ((fnp.isnan, np.isnan), (fnp.isinf, np.isinf), (fnp.isfinite, np.isfinite)):
        z = np.array([np.nan, np.inf, -np.inf, 0.0, 1.0])
        for got in _both(f, z):
            np.testing.assert_array_equal(got, ref(z))
    for got in _both(fnp.hypot, np.array([np.inf, 3e200, 0.0]), np.array([np.nan, 4e200, 0.0])):
        np.testing.assert_array_equal(got, np.hypot([np.inf, 3e200, 0.0], [np.nan, 4e200, 0.0]))


def test_eager_results_are_arrays_and_methods_route_here():
    x = fnp.asarray(np.array([1.0, -2.0]))
    for out in (fnp.add(x, 1), fnp.sin(x), fnp.less(x, 0), fnp.abs(x), fnp.power(x, 2)):
        assert isinstance(out, ft.Array)
    f = ft.jit(lambda a, b: (a + b, a - b, a * b, a / b, a // b, a % b, a ** b, -a, abs(a),
                             a < b, a <= b, a > b, a >= b, a == b, a != b))
    a, b = np.array([3.0, -4.5]), np.array([2.0, 1.5])
    with np.errstate(invalid="ignore"):
        powers = a ** b
    want = (a + b, a - b, a * b, a / b, a // b, a % b, powers, -a, abs(a),
            a < b, a <= b, a > b, a >= b, a == b, a != b)
    for got, w in zip(f(a, b), want):
        np.testing.assert_allclose(got, w, rtol=1e-15)
    i, j = np.array([12, 5], np.int32), np.array([10, 3], np.int32)
    g = ft.jit(lambda p, q: (p & q, p | q, p ^ q, ~p, fnp.left_shift(p, q), fnp.right_shift(p, 1)))
    for got, w in zip(g(i, j), (i & j, i | j, i ^ j, ~i, i << j, i >> 1)):
        np.testing.assert_array_equal(got, w)
        assert got.dtype == w.dtype


def test_complex_parts_and_abs_gradient():
    z = np.array([1 + 2j, -3 + 0.5j])
    for got, want in zip(ft.jit(lambda v: (fnp.real(v), fnp.imag(v), fnp.conj(v), fnp.abs(v)))(z),
                         (z.real, z.imag, z.conj(), np.abs(z))):
        np.testing.assert_allclose(got, want, rtol=1e-15)
    g = ft.grad(lambda x, y: lax.abs(lax.complex(x, y)), argnums=(0, 1))(3.0, 4.0)
    np.testing.assert_allclose([float(g[0]), float(g[1])], [0.6, 0.8], rtol=1e-15)


def test_kink_derivatives_are_jaxs():
    """At their kinks these take JAX 0.10.2's values: hypot 1/2 at the origin (JAX's
    max(|x|, |y|) split) and 0 where hypot is infinite; fmax/fmin's tie goes to the
    second argument (JAX's where(x > y | isnan(y), x, y)); hard_tanh's is 1 at ±1."""
    import functrans.nn as fnn
    g2 = ft.grad(fnp.hypot, argnums=(0, 1))
    assert [float(v) for v in g2(0.0, 0.0)] == [0.5, 0.5]
    assert [float(v) for v in g2(1.0, np.inf)] == [0.0, 0.0]
    assert [float(v) for v in g2(3.0, 4.0)] == [0.6, 0.8]
    for f in (fnp.fmax, fnp.fmin):
        assert [float(v) for v in ft.grad(f, argnums=(0, 1))(1.0, 1.0)] == [0.0, 1.0]
        assert [float(v) for v in ft.grad(f, argnums=(0, 1))(1.0, np.nan)] == [1.0, 0.0]
    assert float(ft.grad(fnp.fmax)(2.0, 1.0)) == 1.0 and float(ft.grad(fnp.fmin)(2.0, 1.0)) == 0.0
    assert [float(ft.grad(fnn.hard_tanh)(v)) for v in (-1.0, 1.0, 1.5)] == [1.0, 1.0, 0.0]
