"""Types and indices behave as JAX's, the same eagerly, under every transform and under
jit (issue 13.4): branch types never truncate, data-dependent indices clamp."""
import math

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax


# --------------------------------------------------------------------------- branch types

def test_weak_branch_outputs_promote_and_never_truncate():
    # both weak: the float wins (before, switch gave 1 for 1.5)
    assert float(lax.switch(1, [lambda: 1, lambda: 1.5])) == 1.5
    assert float(lax.cond(False, lambda: 1, lambda: 1.5)) == 1.5
    # weak int into a strong float branch: promoted
    r = lax.cond(False, lambda: fnp.float32(1), lambda: 2)
    assert r.dtype == np.float32 and float(r) == 2.0
    # weak float into a strong int branch would truncate: TypeError, as JAX
    with pytest.raises(TypeError, match="false_fun"):
        lax.cond(False, lambda: fnp.int32(1), lambda: 1.5)
    with pytest.raises(TypeError):
        lax.switch(0, [lambda x: x, lambda x: x * 0.5], fnp.int32(3))
    with pytest.raises(TypeError):
        ft.jit(lambda p: lax.cond(p, lambda: fnp.int32(1), lambda: 1.5))(True)


def test_weak_loop_carries_never_truncate():
    with pytest.raises(TypeError, match="carry"):
        lax.while_loop(lambda x: x < 3, lambda x: x + 0.5, fnp.int32(1))
    with pytest.raises(TypeError, match="carry"):
        lax.fori_loop(0, 3, lambda i, x: x + 0.5, fnp.int32(1))
    assert float(lax.fori_loop(0, 3, lambda i, x: x + 0.5, 1)) == 2.5     # weak: promoted


# --------------------------------------------------------------------------- indices

X = np.arange(5.0) * 10.0


def _everywhere(f, *args):
    """f's value eagerly, under jit, as the primal under jvp/vjp, and under vmap."""
    outs = {"eager": f(*args), "jit": ft.jit(f)(*args)}
    x, *rest = args
    outs["jvp"] = ft.jvp(lambda x: f(x, *rest), (x,), (fnp.ones_like(x),))[0]
    outs["vjp"] = ft.vjp(lambda x: f(x, *rest), x)[0]
    outs["vmap"] = ft.vmap(lambda x: f(x, *rest))(fnp.stack([x, x]))[0]
    return outs


@pytest.mark.parametrize("index,want", [
    (lambda x: fnp.argmax(x) + 3, 40.0),                  # computed from data: 7 -> 4
    (lambda x: fnp.argmin(x) - 9, 0.0),                   # -9: wrapped once (-4), clamped
    (lambda x: fnp.array([7, -1, -12]) + fnp.argmin(x), [40.0, 40.0, 0.0]),
    (lambda x: np.array([9, 2]), [40.0, 20.0]),            # a numpy array: data too
])
def test_data_dependent_indices_clamp_everywhere(index, want):
    outs = _everywhere(lambda x: x[index(x)], fnp.asarray(X))
    for mode, got in outs.items():
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=mode)


def test_data_dependent_indices_clamp_in_more_dimensions():
    m = fnp.arange(12.0).reshape(3, 4)
    i = fnp.array([5, 1])
    want = np.asarray(m)[[2, 1], [3, 3]]
    np.testing.assert_array_equal(m[i, i + 3], want)
    np.testing.assert_array_equal(ft.jit(lambda m, i: m[i, i + 3])(m, i), want)
    np.testing.assert_array_equal(m[1, i], np.asarray(m)[1, [3, 1]])
    np.testing.assert_array_equal(ft.jit(lambda m, i: m[1, i])(m, i), np.asarray(m)[1, [3, 1]])


def test_gradient_of_a_clamped_gather_goes_to_the_clamped_element():
    g = ft.grad(lambda x: x[fnp.argmax(x) + 3])(fnp.asarray(X))
    np.testing.assert_array_equal(g, [0, 0, 0, 0, 1.0])
    gj = ft.jit(ft.grad(lambda x: x[fnp.argmax(x) + 3]))(fnp.asarray(X))
    np.testing.assert_array_equal(gj, g)


@pytest.mark.parametrize("index", [5, -6, (0, 5), [0, 7]])
def test_static_python_int_indices_out_of_range_raise_everywhere(index):
    m = fnp.asarray(np.zeros((5, 5)) if isinstance(index, tuple) else X)
    for run in (lambda: m[index], lambda: ft.jit(lambda x: x[index])(m),
                lambda: ft.grad(lambda x: fnp.sum(x[index]))(m),
                lambda: ft.vmap(lambda x: x[index])(fnp.stack([m, m]))):
        with pytest.raises(IndexError, match="out of bounds"):
            run()


def test_out_of_range_scatter_rows_are_dropped_everywhere():
    x = fnp.zeros(4)
    i = fnp.array([1, 9, -9])
    want = [0.0, 1.0, 0.0, 0.0]
    for got in (x.at[i].set(1.0), ft.jit(lambda x, i: x.at[i].set(1.0))(x, i),
                ft.jvp(lambda x: x.at[i].set(1.0), (x,), (x,))[0], x.at[np.array([1, 9])].add(1.0),
                x.at[9].set(5.0) + np.array(want)):
        np.testing.assert_array_equal(got, want)
    g = ft.grad(lambda v: fnp.sum(x.at[i].set(v * 2.0)))(fnp.ones(3))
    np.testing.assert_array_equal(g, [2.0, 0.0, 0.0])


def test_take_with_an_array_fills_eagerly_as_under_jit():
    x = fnp.arange(4.0)
    i = np.array([1, 9])
    eager, jitted = fnp.take(x, i), ft.jit(lambda x, i: fnp.take(x, i))(x, i)
    np.testing.assert_array_equal(eager, [1.0, np.nan])
    np.testing.assert_array_equal(jitted, eager)
    with pytest.raises(IndexError):
        fnp.take(x, [1, 9])


# --------------------------------------------------------------------------- small ints

U8 = np.array([200, 100, 7], np.uint8)
I8 = np.array([100, -100, -128], np.int8)


@pytest.mark.parametrize("backend", [None, "interpret"])
@pytest.mark.parametrize("f", [
    lambda a: a + a, lambda a: a * 3, lambda a: a - 101, lambda a: -a, lambda a: a // 3,
    lambda a: a % 7, lambda a: fnp.maximum(a, 50), lambda a: a >> 1, lambda a: a << 1,
    lambda a: fnp.abs(a), lambda a: a * a - a,
], ids=["add", "mul", "sub_scalar", "neg", "floordiv", "mod", "max", "shr", "shl", "abs",
        "poly"])
@pytest.mark.parametrize("x", [U8, I8], ids=["uint8", "int8"])
def test_small_integers_keep_their_dtype_and_wrap(f, x, backend):
    with np.errstate(all="ignore"):
        want = f(x)          # numpy's own arithmetic: same dtype, wrapping
    assert want.dtype == x.dtype
    for got in (f(fnp.asarray(x)), ft.jit(f, backend=backend)(x), ft.vmap(f)(x[:, None])[:, 0]):
        assert got.dtype == x.dtype
        np.testing.assert_array_equal(got, want)


def test_issue_example_uint8_sum():
    a = np.array([200, 100], np.uint8)
    for got in (fnp.add(a, a), fnp.asarray(a) + fnp.asarray(a), ft.jit(fnp.add)(a, a)):
        assert got.dtype == np.uint8 and got.tolist() == [144, 200]
    # a small dtype that no input has is still widened (numpy: sin(bool) is float16)
    assert fnp.sin(np.array([True])).dtype == np.float64


# --------------------------------------------------------------------------- inf / NaN gradients

@pytest.mark.parametrize("x,want", [
    ([np.inf, 2.0, 3.0], [6.0, np.inf, np.inf]),
    ([-np.inf, 2.0, 3.0], [6.0, -np.inf, -np.inf]),
    ([0.0, 2.0, 3.0], [6.0, 0.0, 0.0]),
    ([0.0, 0.0, 3.0], [0.0, 0.0, 0.0]),
    ([1.0, 2.0, 3.0], [6.0, 3.0, 2.0]),
])
def test_prod_gradient_is_the_product_of_the_others(x, want):
    x = fnp.array(x)
    with np.errstate(all="ignore"):
        for g in (ft.grad(fnp.prod)(x), ft.jit(ft.grad(fnp.prod))(x),
                  ft.jacrev(fnp.prod)(x), ft.vmap(ft.grad(fnp.prod))(x[None])[0]):
            np.testing.assert_array_equal(g, want)


def test_prod_gradient_over_axes_and_second_order():
    m = fnp.arange(1.0, 7.0).reshape(2, 3)
    np.testing.assert_allclose(ft.grad(lambda m: fnp.sum(fnp.prod(m, axis=0)))(m),
                               [[4, 5, 6], [1, 2, 3]])
    np.testing.assert_allclose(ft.grad(lambda m: fnp.sum(fnp.prod(m, axis=1)))(m),
                               [[6, 3, 2], [30, 24, 20]])
    # Hessian of x0*x1*x2: off-diagonal entry (i, j) is the third entry, exact at a zero
    np.testing.assert_array_equal(ft.hessian(fnp.prod)(fnp.array([0.0, 2.0, 3.0])),
                                  [[0, 3, 2], [3, 0, 0], [2, 0, 0]])


@pytest.mark.parametrize("x,want", [      # JAX 0.10.2's values; weights 1, 2, 3
    ([np.inf, 1.0, 2.0], [9.0, np.inf, np.inf]),
    ([np.nan, 1.0, 2.0], [9.0, np.nan, np.nan]),
    ([0.0, 2.0, 3.0], [23.0, 0.0, 0.0]),
    ([0.0, 0.0, 3.0], [1.0, 0.0, 0.0]),
    ([1.0, 2.0, 3.0], [23.0, 11.0, 6.0]),
])
def test_cumprod_gradient_has_no_division(x, want):
    def f(x):
        return fnp.sum(fnp.cumprod(x) * fnp.arange(1.0, 4.0))
    x = fnp.array(x)
    with np.errstate(all="ignore"):
        for g in (ft.grad(f)(x), ft.jit(ft.grad(f))(x), ft.vmap(ft.grad(f))(x[None])[0]):
            np.testing.assert_array_equal(g, want)
        # reversed: d/dx of sum(cumprod_rev([2, 0, 3]) * w) as JAX
        np.testing.assert_array_equal(ft.grad(lambda x: fnp.sum(
            lax.cumprod(x, reverse=True) * fnp.arange(1.0, 4.0)))(fnp.array([2.0, 0.0, 3.0])),
            [0.0, 12.0, 3.0])
    # second order exact at a zero (JAX's Hessian)
    np.testing.assert_array_equal(ft.hessian(f)(fnp.array([0.0, 2.0, 3.0])),
                                  [[0, 11, 6], [11, 0, 0], [6, 0, 0]])


def test_max_min_gradients_with_inf_and_nan_as_jax():
    np.testing.assert_array_equal(ft.grad(fnp.max)(fnp.array([1.0, np.inf])), [0.0, 1.0])
    np.testing.assert_array_equal(ft.grad(fnp.min)(fnp.array([-np.inf, 1.0, -np.inf])),
                                  [0.5, 0.0, 0.5])
    with np.errstate(all="ignore"):    # JAX's rule: no element equals a NaN maximum
        assert np.isnan(ft.grad(fnp.max)(fnp.array([1.0, np.nan]))).all()


def test_at_max_min_gradient_of_untouched_and_nan_elements():
    x = fnp.array([0.0, np.nan])
    np.testing.assert_array_equal(ft.grad(lambda x: fnp.sum(x.at[0].max(1.0)))(x), [0, 1])
    np.testing.assert_array_equal(ft.grad(lambda x: fnp.sum(x.at[0].min(1.0)))(x), [1, 1])
    # a written NaN position, as JAX and as fnp.maximum: a NaN equals no candidate, so 0
    np.testing.assert_array_equal(
        ft.grad(lambda x: fnp.sum(x.at[0].max(1.0)))(fnp.array([np.nan, 2.0])), [0, 1])
    np.testing.assert_array_equal(
        ft.grad(lambda x: fnp.sum(x.at[0].max(1.0)))(fnp.array([np.nan, 2.0])),
        ft.grad(lambda x: fnp.sum(x.at[1:].get() + fnp.maximum(x[0], 1.0)))(
            fnp.array([np.nan, 2.0])))
    np.testing.assert_array_equal(
        ft.jit(ft.grad(lambda x: fnp.sum(x.at[0].max(1.0))))(x), [0, 1])
    assert float(ft.grad(lambda u: fnp.sum(fnp.zeros(2).at[0].max(u)))(np.nan)) == 0.0
    # both NaN (JAX: 0 and 0, not shared halves)
    x_nan = fnp.array([np.nan])
    np.testing.assert_array_equal(ft.grad(lambda x: fnp.sum(x.at[0].max(np.nan)))(x_nan), [0])
    assert float(ft.grad(lambda u: fnp.sum(x_nan.at[0].min(u)))(np.nan)) == 0.0
    # an untouched NaN keeps 1 when rows repeat, clamp or are dropped
    three = fnp.array([1.0, np.nan, 0.0])
    g = ft.grad(lambda x: fnp.sum(x.at[fnp.array([0, 0, 5])].max(fnp.array([1.0, 1.0, 3.0]))))
    np.testing.assert_array_equal(g(three), [1 / 3, 1, 1])
    np.testing.assert_array_equal(ft.jit(g)(three), [1 / 3, 1, 1])
    np.testing.assert_array_equal(       # a tie: shared evenly, as JAX
        ft.grad(lambda x: fnp.sum(x.at[0].max(1.0)))(fnp.array([1.0, 5.0])), [0.5, 1.0])


# --------------------------------------------------------------------------- warnings

import warnings  # noqa: E402

QUIET_CASES = {
    "divide by zero": lambda: fnp.array([1.0]) / 0.0,
    "log(0)": lambda: fnp.log(fnp.zeros(1)),
    "sqrt(-1)": lambda: fnp.sqrt(-fnp.ones(1)),
    "exp overflow": lambda: fnp.exp(fnp.array([1000.0])),
    "inf - inf": lambda: fnp.array([np.inf]) - np.inf,
    "0 * inf": lambda: fnp.zeros(1) * np.inf,
    "arctanh(1)": lambda: fnp.arctanh(fnp.ones(1)),
    "integer // 0": lambda: fnp.array([1]) // 0,
    "x % 0.0": lambda: fnp.array([1.0]) % 0.0,
    "prod 0 * inf": lambda: fnp.prod(fnp.array([0.0, np.inf])),
    "sum overflow": lambda: fnp.sum(fnp.array([1e308, 1e308])),
    "mean of empty": lambda: fnp.mean(fnp.zeros(0)),
    "var, no dof": lambda: fnp.var(fnp.ones(1), ddof=1),
    "std of inf": lambda: fnp.std(fnp.array([np.inf, 1.0])),
    "grad of log at 0": lambda: ft.grad(lambda x: fnp.sum(fnp.log(x)))(fnp.zeros(2)),
    "interpret backend": lambda: ft.jit(lambda x: fnp.log(x) / x, backend="interpret")(
        fnp.zeros(2)),
    "cpu backend": lambda: ft.jit(lambda x: fnp.log(x) / x)(fnp.zeros(2)),
}


@pytest.mark.parametrize("case", QUIET_CASES)
def test_eager_operations_give_ieee_results_without_numpy_warnings(case):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")
        ft.numpy_warnings.install()       # as at import: the library's filter comes first
        QUIET_CASES[case]()
    assert [str(w.message) for w in seen] == []


def test_the_users_own_numpy_calls_still_warn():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")
        ft.numpy_warnings.install()
        np.log(np.zeros(1))
    assert any("divide by zero" in str(w.message) for w in seen)


@pytest.mark.parametrize("lo,hi", [(-1, 2), (-1, 300), (None, 3), (5, None)])
def test_clip_of_small_ints_with_out_of_range_python_bounds(lo, hi):
    # a Python-int bound outside uint8/int8's range clips as numpy does (it raised
    # OverflowError under jit: the bound was converted to the array's dtype)
    for x in (np.array([0, 5, 200], np.uint8), np.array([-128, 0, 100], np.int8)):
        want = np.clip(x, lo, hi)
        for f in (lambda v: fnp.clip(v, lo, hi), ft.jit(lambda v: fnp.clip(v, lo, hi))):
            got = np.asarray(f(x))
            assert got.dtype == x.dtype and got.tolist() == want.tolist(), (x, lo, hi, got)


@pytest.mark.parametrize("src", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1, 13, 40])
def test_float_to_uint32_is_one_rule_eagerly_and_compiled(src, n):
    """numpy's float -> uint32 of out-of-range values changes with the array length (its
    SIMD loop gives 2**31 where its scalar loop wraps). ``fnp.asarray(x, uint32)`` converts
    on the host as JAX's does (numpy's cast), by one rule at every length; ``astype`` and
    ``lax.convert_element_type`` saturate as JAX's (XLA's), eagerly, in the interpreter
    and on the CPU backend."""
    vals = np.array([-np.inf, -1e20, -2.5e9, -1.0, -0.5, 3e9, 4.5e9, 1e20, np.inf, np.nan,
                     255.5, 2.0 ** 32, 7.0])
    x = np.resize(vals.astype(src), n)
    host = np.resize(np.array([0, 0, 1794967296, 4294967295, 0, 3000000000,
                               205032704 if src == np.float64 else 205032448, 0, 0,
                               2 ** 31, 255, 0, 7], np.uint64), n).astype(np.uint32)
    top = 2 ** 32 - 1
    saturated = np.resize(np.array([0, 0, 0, 0, 0, 3000000000, top, top, top, 0, 255, top, 7],
                                   np.uint64), n).astype(np.uint32)
    results = {
        "Array.astype": (fnp.asarray(x).astype(np.uint32), saturated),
        "fnp.asarray": (fnp.asarray(x, np.uint32), host),
        "lax": (lax.convert_element_type(x, np.uint32), saturated),
        "interpret": (ft.jit(lambda a: a.astype(np.uint32), backend="interpret")(x), saturated),
        "cpu": (ft.jit(lambda a: a.astype(np.uint32), backend="cpu")(x), saturated),
    }
    for where, (got, want) in results.items():
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=where)


# JAX 0.10.2's float -> int conversions (x.astype(dt), x64 on) of these values, stored
_SATURATE_IN = [300.7, -5.2, 1e20, -1e20, np.nan, np.inf, -np.inf, 255.9, -0.9, -128.5,
                -129.0, 127.99, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64]
_SATURATE_JAX = {
    "uint8": [255, 0, 255, 0, 0, 255, 0, 255, 0, 0, 0, 127, 255, 0, 255],
    "int8": [127, -5, 127, -128, 0, 127, -128, 127, 0, -128, -128, 127, 127, -128, 127],
    "int32": [300, -5, 2147483647, -2147483648, 0, 2147483647, -2147483648, 255, 0, -128,
              -129, 127, 2147483647, -2147483648, 2147483647],
    "int64": [300, -5, 2 ** 63 - 1, -2 ** 63, 0, 2 ** 63 - 1, -2 ** 63, 255, 0, -128, -129,
              127, 2 ** 63 - 1, -2 ** 63, 2 ** 63 - 1],
    "uint64": [300, 0, 2 ** 64 - 1, 0, 0, 2 ** 64 - 1, 0, 255, 0, 0, 0, 127, 2 ** 63, 0,
               2 ** 64 - 1],
}


def _saturate(v, dst):
    """The rule in plain Python: truncate toward zero, clamp to dst's range, NaN -> 0."""
    info = np.iinfo(dst)
    return 0 if math.isnan(v) else min(max(info.min, math.trunc(v) if math.isfinite(v)
                                           else int(math.copysign(2 ** 70, v))), info.max)


@pytest.mark.parametrize("dst", sorted(_SATURATE_JAX))
def test_the_saturation_rule_is_jaxs(dst):
    assert [_saturate(v, dst) for v in _SATURATE_IN] == _SATURATE_JAX[dst]


@pytest.mark.parametrize("src", ["float64", "float32", "float16"])
@pytest.mark.parametrize("dst", ["uint8", "int8", "int32", "uint32", "int64", "uint64"])
def test_float_to_int_saturates_as_jax(src, dst):
    """``(img * 255).astype(uint8)`` of a value above 1 is 255 in JAX (XLA saturates; NaN
    gives 0); numpy's cast gave 44 (300.7 wrapped) here, INT_MIN for NaN to int32."""
    with np.errstate(over="ignore"):     # 1e20 and above are inf in float16
        x = np.array(_SATURATE_IN + [0.5, -0.0, 65504.0, 4e9]).astype(src)
    want = [_saturate(v, dst) for v in x.astype(np.float64).tolist()]
    conv = lambda a: a.astype(dst)   # noqa: E731
    for where, got in {"eager": fnp.asarray(x).astype(dst),
                       "fnp.astype": fnp.astype(x, dst),        # numpy input (wrapped once)
                       "fnp.astype list": fnp.astype(x.tolist(), dst) if src == "float64" else
                       fnp.astype(x, dst),
                       "lax": lax.convert_element_type(x, dst),
                       "interpret": ft.jit(conv, backend="interpret")(x),
                       "cpu": ft.jit(conv, backend="cpu")(x),
                       "cpu vmap": ft.jit(ft.vmap(conv))(x)}.items():
        got = np.asarray(got)
        assert got.dtype == np.dtype(dst) and got.tolist() == want, (where, src, dst, got)


# JAX 0.10.2 (x64) of reductions with an integer dtype= over x = [-1.5, 300.7, 1e20, nan]:
# the input converts by the saturating rule before it accumulates (and wraps there)
_ACC_X = np.array([-1.5, 300.7, 1e20, np.nan])
_ACC_JAX = {
    "sum": (lambda a: fnp.sum(a, dtype=np.uint8), 254),
    "sum int8": (lambda a: fnp.sum(a, dtype=np.int8), -3),
    "prod": (lambda a: fnp.prod(a[:2], dtype=np.int8), -127),
    "nansum": (lambda a: fnp.nansum(a, dtype=np.uint8), 254),
    "mean": (lambda a: fnp.mean(a[:3], dtype=np.uint8), 84),
    "trace": (lambda a: fnp.trace(fnp.diag(a), dtype=np.uint8), 254),
    "cumsum": (lambda a: fnp.cumsum(a, dtype=np.uint8), [0, 255, 254, 254]),
    "cumulative_sum": (lambda a: fnp.cumulative_sum(a, dtype=np.uint8), [0, 255, 254, 254]),
    "cumprod": (lambda a: fnp.cumprod(a, dtype=np.int16), [-1, -300, 300, 0]),
    "nancumsum": (lambda a: fnp.nancumsum(a, dtype=np.int8), [-1, 126, -3, -3]),
    "complex sum": (lambda a: fnp.sum(a.astype(np.complex64) - 1j, dtype=np.int8), -3),
    "Array.sum": (lambda a: fnp.asarray(a).sum(dtype=np.uint8), 254),
    "Array.prod": (lambda a: fnp.asarray(a)[:2].prod(dtype=np.int8), -127),
    "Array.cumsum": (lambda a: fnp.asarray(a).cumsum(dtype=np.uint8), [0, 255, 254, 254]),
    "Array.cumprod": (lambda a: fnp.asarray(a).cumprod(dtype=np.int16), [-1, -300, 300, 0]),
    "Array.trace": (lambda a: fnp.diag(a).trace(dtype=np.uint8), 254),
}


@pytest.mark.parametrize("name", sorted(_ACC_JAX))
def test_integer_dtype_reductions_of_floats_saturate_everywhere(name):
    """Eagerly, numpy's ``dtype=`` cast wrapped the float inputs (sum([-1.5, 300.7, 1e20,
    nan], dtype=uint8) was 43, under jit and in JAX 254)."""
    f, want = _ACC_JAX[name]
    for where, got in {"eager numpy": f(_ACC_X), "eager Array": f(fnp.asarray(_ACC_X)),
                       "interpret": ft.jit(f, backend="interpret")(_ACC_X),
                       "cpu": ft.jit(f, backend="cpu")(_ACC_X)}.items():
        assert np.asarray(got).tolist() == want, (name, where, got)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64])
def test_integer_reciprocal_of_zero_is_numpys_everywhere(dtype):
    """numpy's integer reciprocal is C's 1 / x in int32 or int64: 1 / 0 is that width's
    most negative integer, 0 once int8 / int16 keep its low bits; jit gave -128 for int8
    where eager (numpy) gave 0 (found by fuzz11)."""
    x = np.array([0, 1, 2, -1] if np.dtype(dtype).kind == "i" else [0, 1, 2], dtype)
    with np.errstate(all="ignore"):
        want = np.reciprocal(x)
    for backend in ("interpret", "cpu"):
        got = ft.jit(fnp.reciprocal, backend=backend)(x)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(fnp.reciprocal(x)), want)
