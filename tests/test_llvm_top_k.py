"""The CPU backend's native ``top_k`` (``backends/llvm/top_k``: a heap of k per row, then
heapsort): bit for bit the primitive's numpy impl (a stable sort by top_k's key) on
every dtype it takes, with NaNs, signed zeros, infinities and ties, along either axis,
for k = 0, 1, n and in between, on sorted, reversed and constant rows (the heap's
worst and best cases); no host step."""
import numpy as np
import pytest

import functrans as ft
from functrans import lax

_DTYPES = ["float64", "float32", "int64", "int32", "uint64", "uint32"]
_SHAPES = [((8,), 3), ((8,), 8), ((8,), 0), ((5, 37), 4), ((3, 4, 50), 50), ((2, 1000), 1),
           ((1, 3000), 200)]


def _data(shape, dtype, rng):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        x = np.round(rng.standard_normal(shape) * 2).astype(dtype)     # many ties
        m = rng.random(shape)
        x[m < 0.1] = np.nan
        x[m < 0.03] = -np.nan
        x[(m > 0.1) & (m < 0.2)] = -0.0
        x[(m > 0.2) & (m < 0.25)] = np.inf
        x[(m > 0.25) & (m < 0.3)] = -np.inf
        return x
    info = np.iinfo(dtype)
    huge = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    return np.where(rng.random(shape) < 0.5, huge, rng.integers(0, 4, shape).astype(dtype))


def _same_bits(got, want):
    got, want = np.ascontiguousarray(got), np.ascontiguousarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def _check(x, k, axis=-1):
    f = lambda a: lax.top_k(a, k, axis=axis)
    for g, w in zip(ft.jit(f)(x), f(x)):          # eager: the primitive's numpy impl
        _same_bits(np.asarray(g), np.asarray(w))


@pytest.mark.parametrize("dtype", _DTYPES)
def test_native_top_k_is_the_impl_bit_for_bit(dtype):
    rng = np.random.default_rng(0)
    for shape, k in _SHAPES:
        x = _data(shape, dtype, rng)
        _check(x, k)
        if len(shape) > 1 and k <= shape[0]:
            _check(x, k, axis=0)


@pytest.mark.parametrize("order", ["ascending", "descending", "constant", "all_nan"])
def test_heap_worst_and_best_case_rows(order):
    x = np.arange(2000, dtype=np.float64)
    x = {"ascending": x, "descending": x[::-1].copy(), "constant": np.zeros(2000),
         "all_nan": np.full(2000, np.nan)}[order]
    for k in (1, 7, 100, 2000):
        _check(x, k)


def test_no_host_step_and_a_million_values():
    x = np.random.default_rng(1).standard_normal(1 << 20)
    f = lambda a: lax.top_k(a, 1000)
    assert ft.jit(f).lower(x).compile().cost_analysis()["host steps"] == 0
    v, i = ft.jit(f)(x)
    order = np.argsort(-x, kind="stable")[:1000]
    np.testing.assert_array_equal(np.asarray(i), order.astype(np.int32))
    np.testing.assert_array_equal(np.asarray(v), x[order])


def test_order_is_jax_total_order():
    """As JAX 0.10.2's lax.top_k (checked there): +NaN first, -NaN last, 0.0 before -0.0."""
    x = np.array([1.0, np.nan, 4.0, -0.0, 0.0, 4.0, -np.nan, -np.inf, np.inf])
    want = [1, 8, 2, 5, 0, 4, 3, 7, 6]
    for f in (lambda a: lax.top_k(a, 9), ft.jit(lambda a: lax.top_k(a, 9))):
        v, i = f(x)
        assert np.asarray(i).tolist() == want
        _same_bits(np.asarray(v), x[want])
        v32, i32 = f(x.astype(np.float32))
        assert np.asarray(i32).tolist() == want


def test_grad_and_vmap_through_the_primitive():
    x = np.random.default_rng(2).standard_normal((3, 6))
    g = ft.grad(lambda a: (lax.top_k(a, 2)[0] ** 2).sum())(x)
    want = np.zeros_like(x)
    idx = np.argsort(-x, axis=-1, kind="stable")[:, :2]
    np.put_along_axis(want, idx, 2 * np.take_along_axis(x, idx, -1), -1)
    np.testing.assert_allclose(np.asarray(g), want)
    np.testing.assert_allclose(np.asarray(ft.jit(ft.grad(lambda a: lax.top_k(a, 2)[0].sum()))(x)),
                               (want != 0).astype(float))
    v = ft.vmap(lambda r: lax.top_k(r, 3), in_axes=1)(x.T.copy())
    for got, w in zip(v, lax.top_k(x, 3)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(w))
