"""The CPU backend's native cumulative scans and argmax/argmin (``backends/llvm/scans``):
bit for bit the primitives' numpy impls on every native dtype, along every axis,
forwards and reversed, through strided and broadcast views, on empty and length-1
axes; no host step, also inside a jitted loop."""
import numpy as np
import pytest

import functrans as ft
from functrans import lax

_DTYPES = ["float64", "float32", "int64", "int32", "uint64", "uint32", "bool"]
_SCANS = {"cumsum": lax.cumsum, "cumprod": lax.cumprod, "cummax": lax.cummax,
          "cummin": lax.cummin}
_SHAPES = [(0,), (1,), (7,), (3, 0), (1, 5), (4, 1), (3, 5), (2, 3, 4), (2, 1, 3, 17), (40,)]


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0])
        x = np.round(rng.standard_normal(shape) * 3)
        pick = rng.random(shape) < 0.2
        return np.where(pick, special[rng.integers(0, len(special), shape)], x).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    info = np.iinfo(dtype)
    huge = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    small = rng.integers(max(info.min, -4), 5, shape).astype(dtype)
    return np.where(rng.random(shape) < 0.5, huge, small).astype(dtype)   # wraps


def _same_bits(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, what
    if got.dtype.kind == "f":      # nan where nan, else equal with the same sign (-0.0)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=what)
        ok = ~np.isnan(want)
        np.testing.assert_array_equal(got[ok], want[ok], err_msg=what)
        np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(want[ok]), err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _check(f, x, what):
    jf = ft.jit(f, backend="cpu")
    assert jf.lower(x).compile().cost_analysis()["host steps"] == 0, what
    _same_bits(jf(x), f(x), what)      # eager: the primitive's numpy impl


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("name", sorted(_SCANS))
def test_scans_match_the_numpy_impl(name, dtype):
    op = _SCANS[name]
    if dtype == "bool":
        x = np.ones(3, bool)
        with pytest.raises(TypeError):
            op(x, 0)
        return
    for shape in _SHAPES:
        x = _data(shape, dtype)
        for axis in range(len(shape)):
            for rev in (False, True):
                _check(lambda v: op(v, axis, rev), x, f"{name} {dtype} {shape} {axis} {rev}")
        if len(shape) >= 2:        # a transposed (strided) view of the operand
            t = tuple(reversed(range(len(shape))))
            _check(lambda v: op(lax.transpose(v, t), 0, True), x, f"{name} {shape} T")


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_extremes_match_the_numpy_impl(name, dtype):
    op = getattr(lax, name)
    for shape in _SHAPES:
        x = _data(shape, dtype, seed=1)
        for axis in range(len(shape)):
            if shape[axis] == 0:
                continue
            for idt in (np.int32, np.int64):
                _check(lambda v: op(v, axis, idt), x, f"{name} {dtype} {shape} {axis} {idt}")
        if len(shape) >= 2 and shape[0]:
            t = tuple(reversed(range(len(shape))))
            _check(lambda v: op(lax.transpose(v, t), len(shape) - 1, np.int64), x,
                   f"{name} {shape} T")


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_extremes_find_the_first_extreme_and_the_first_nan_anywhere(name):
    # the search tests blocks of elements: hits at block edges, in the tail, ties, nan
    op, n = getattr(lax, name), 53
    jf = ft.jit(lambda v: op(v, 0, np.int64), backend="cpu")
    sign = 1.0 if name == "argmax" else -1.0
    for p in [0, 1, 15, 16, 17, 31, 32, 47, 48, 49, 52]:
        for dtype in ("float64", "float32"):
            x = np.zeros(n, dtype)
            x[p] = sign * np.inf
            x[min(p + 3, n - 1)] = sign * np.inf           # a later tie
            assert int(jf(x)) == p
            y = np.full(n, -sign * np.inf, dtype)
            y[p] = np.nan
            y[(p + 7) % n] = sign * np.inf                  # nan beats inf, before or after
            assert int(jf(y)) == p
            z = np.zeros(n, dtype)
            z[p:] = -0.0                                    # -0.0 ties with 0.0: index 0
            assert int(jf(z)) == 0
    assert int(jf(np.full(n, np.nan))) == 0


def test_special_values_keep_numpy_s_ties_and_nan():
    x = np.array([-0.0, 0.0, -0.0, np.inf, np.nan, 1.0, -np.inf])
    for name in ("cummax", "cummin"):
        for rev in (False, True):
            _check(lambda v: _SCANS[name](v, 0, rev), x, f"{name} {rev}")
    i32 = np.array([2 ** 31 - 1, 1, -5, 2 ** 31 - 1], np.int32)
    _check(lambda v: lax.cumsum(v, 0), i32, "int32 sum wraps")
    _check(lambda v: lax.cumprod(v, 0), i32, "int32 product wraps")
    u32 = np.array([2 ** 31, 3, 2 ** 32 - 1], np.uint32)
    _check(lambda v: (lax.cumsum(v, 0), lax.cumprod(v, 0), lax.cummax(v, 0)), u32, "uint32")


def test_broadcast_and_literal_operands():
    def f(s):
        b = lax.broadcast_in_dim(s, (4, 3), ())
        c = lax.broadcast_in_dim(np.float64(2.0), (5,), ())
        return lax.cumsum(b, 1), lax.argmin(b, 0, np.int32), lax.cummax(c, 0, True)
    jf = ft.jit(f, backend="cpu")
    assert jf.lower(np.float64(1.5)).compile().cost_analysis()["host steps"] == 0
    for g, w in zip(jf(np.float64(1.5)), f(np.float64(1.5))):
        _same_bits(g, w, "broadcast")


def test_a_loop_with_scans_inside_runs_natively():
    def f(x):
        def body(i, c):
            x, s, m = c
            x = x + lax.cumsum(x, 0) * 1e-3
            y = lax.cummax(x[::-1], 0, True) + lax.cumprod(x * 0.0 + 1.0, 0)
            return x, s + lax.argmax(x, 0, np.int64), m + lax.argmin(y, 0, np.int32)
        return lax.fori_loop(0, 20, body, (x, np.int64(0), np.int32(0)))

    def g(x):
        def step(c, row):
            return c + lax.argmax(row, 0, np.int32), lax.cummin(row, 0, True)
        return lax.scan(step, np.int32(0), x)

    x = np.random.default_rng(0).standard_normal(37)
    m = np.random.default_rng(1).standard_normal((6, 9))
    for fun, arg in ((f, x), (g, m)):
        jf = ft.jit(fun, backend="cpu")
        assert jf.lower(arg).compile().cost_analysis()["host steps"] == 0
        want = ft.jit(fun, backend="interpret")(arg)
        for a, b in zip(jf(arg), want):
            _same_bits(a, b, fun.__name__)
