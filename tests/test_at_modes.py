"""``x.at[idx]`` with JAX's keywords: ``get(mode=, fill_value=)`` ("fill"/"drop" give the
fill value out of range, "clip" clamps every index), ``mode="clip"`` on the updates, and
``subtract``/``divide``/``power``/``apply``. Expected values were computed once with
JAX 0.10.2 (x64)."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

I64_MIN = np.iinfo(np.int64).min
IDX = np.array([0, 7, -1, -9])


def test_get_fill_and_clip_match_jax():
    x = fnp.arange(5.0)
    np.testing.assert_array_equal(x.at[IDX].get(mode="fill"), [0, np.nan, 4, np.nan])
    np.testing.assert_array_equal(x.at[IDX].get(mode="drop", fill_value=-1.0), [0, -1, 4, -1])
    np.testing.assert_array_equal(x.at[IDX].get(mode="clip"), [0, 4, 4, 0])
    assert float(x.at[7].get(mode="fill", fill_value=3.0)) == 3.0
    assert float(x.at[7].get(mode="clip")) == 4.0
    np.testing.assert_array_equal(x.at[IDX[:3]].get(), [0, 4, 4])    # default: clamped
    xi = fnp.arange(6).reshape(2, 3)
    for idx, want in [((slice(None), [0, 3]), [[0, I64_MIN], [3, I64_MIN]]),
                      ((Ellipsis, [0, 3]), [[0, I64_MIN], [3, I64_MIN]]),
                      (([0, 2], [1, 3]), [1, I64_MIN]),
                      (([[0], [2]], [1, 3]), [[1, I64_MIN], [I64_MIN, I64_MIN]])]:
        got = xi.at[idx].get(mode="fill")
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(fnp.arange(3, dtype=np.uint32).at[[1, 4]].get(mode="fill"),
                                  [1, np.iinfo(np.uint32).max])
    assert bool(fnp.asarray([False, False]).at[3].get(mode="fill")) is True
    with pytest.raises(ValueError, match="mode"):
        x.at[0].get(mode="wrap")


def test_get_fill_under_jit_vmap_and_grad():
    x = fnp.arange(5.0)
    f = ft.jit(lambda v, i: v.at[i].get(mode="fill", fill_value=-1.0))
    np.testing.assert_array_equal(f(x, np.array([1, 8])), [1, -1])
    np.testing.assert_array_equal(f(x, 6), -1.0)          # a traced scalar index
    g = ft.vmap(lambda v, i: v.at[i].get(mode="fill", fill_value=0.0))
    np.testing.assert_array_equal(g(fnp.ones((3, 4)), np.array([0, 5, -1])), [1, 0, 1])

    def loss(v):
        return fnp.sum(v.at[np.array([1, 8, 1])].get(mode="fill", fill_value=0.0) ** 2)
    np.testing.assert_array_equal(ft.grad(loss)(x), [0, 4, 0, 0, 0])   # JAX's value
    np.testing.assert_array_equal(ft.jit(ft.grad(loss))(x), [0, 4, 0, 0, 0])


def test_update_modes_and_new_methods_match_jax():
    x = fnp.arange(5.0)
    idx = np.array([0, 9, -7])
    np.testing.assert_array_equal(x.at[idx].add(10.0, mode="clip"), [20, 1, 2, 3, 14])
    np.testing.assert_array_equal(x.at[idx].add(10.0), [10, 1, 2, 3, 4])          # dropped
    np.testing.assert_array_equal(x.at[idx].add(10.0, mode="drop"), [10, 1, 2, 3, 4])
    np.testing.assert_array_equal(
        x.at[[0, 9]].set(10.0, mode="clip", indices_are_sorted=True, unique_indices=True),
        [10, 1, 2, 3, 10])
    np.testing.assert_array_equal(x.at[[0, 9]].max(7.0, mode="clip"), [7, 1, 2, 3, 7])
    np.testing.assert_array_equal(x.at[[0, 9]].min(-1.0, mode="promise_in_bounds"),
                                  [-1, 1, 2, 3, 4])
    np.testing.assert_array_equal(x.at[[0, 9]].mul(3.0, mode="clip"), [0, 1, 2, 3, 12])
    rep = np.array([0, 0, 1])
    np.testing.assert_array_equal(x.at[[1, 1]].subtract(2.0), [0, -3, 2, 3, 4])
    np.testing.assert_array_equal(fnp.arange(5).at[[1, 1]].subtract(2), [0, -3, 2, 3, 4])
    np.testing.assert_array_equal(x.at[rep].apply(lambda v: v + 1), [2, 2, 2, 3, 4])
    np.testing.assert_array_equal(x.at[rep].power(2.0), [0, 1, 2, 3, 4])
    np.testing.assert_array_equal(x.at[rep].divide(2.0), [0, 0.5, 2, 3, 4])
    d = fnp.arange(5).at[[1, 1]].divide(2)     # true division, as JAX: a float result
    assert d.dtype == np.float64
    np.testing.assert_array_equal(d, [0, 0.25, 2, 3, 4])
    with pytest.raises(ValueError, match="mode"):
        x.at[0].set(1.0, mode="wrap")


def test_new_methods_under_jit_and_grad():
    x = fnp.arange(1.0, 6.0)
    np.testing.assert_allclose(ft.jit(lambda v, i: v.at[i].apply(fnp.sqrt))(x, np.array([4, 4])),
                               [1, 2, 3, 4, 5 ** 0.25])
    np.testing.assert_array_equal(ft.jit(lambda v, i: v.at[i].subtract(1.0, mode="clip"))(x, 6),
                                  [1, 2, 3, 4, 4])
    for method, vals in (("subtract", 2.0), ("divide", 2.0), ("power", 3.0)):
        def loss(v, m=method, a=vals):
            return fnp.sum(getattr(v.at[np.array([1, 3])], m)(a) ** 2)
        ref = {"subtract": lambda v: v - np.array([0, 2, 0, 2, 0.0]),
               "divide": lambda v: v / np.array([1, 2, 1, 2, 1.0]),
               "power": lambda v: v ** np.array([1, 3, 1, 3, 1.0])}[method]
        eps, e = 1e-6, np.eye(5)
        fd = [(np.sum(ref(x + eps * e[k]) ** 2) - np.sum(ref(x - eps * e[k]) ** 2)) / (2 * eps)
              for k in range(5)]
        np.testing.assert_allclose(ft.grad(loss)(x), fd, rtol=1e-6)
        np.testing.assert_allclose(ft.jit(ft.grad(loss))(x), fd, rtol=1e-6)
    g = ft.grad(lambda v: fnp.sum(v.at[np.array([0, 0])].apply(fnp.sin)))(x)
    np.testing.assert_allclose(g, [np.cos(np.sin(1.0)) * np.cos(1.0), 1, 1, 1, 1], rtol=1e-12)


def test_apply_with_constant_indices_reverse_differentiates_under_jit():
    """Constant indices are counted while tracing, so ``apply`` repeats as an unrolled
    loop that ``jit(grad)`` and ``jacrev`` go through (a traced count needs a while loop,
    which reverse mode refuses)."""
    x = np.array([0.5, 1.5, 2.5])
    f = lambda v: v.at[np.array([0, 0, 1])].apply(fnp.sin)
    d = [np.cos(np.sin(0.5)) * np.cos(0.5), np.cos(1.5), 1.0]
    np.testing.assert_allclose(ft.jit(ft.grad(lambda v: fnp.sum(f(v))))(x), d, rtol=1e-12)
    np.testing.assert_allclose(ft.jit(ft.jacrev(f))(x), np.diag(d), rtol=1e-12)
    jaxpr = str(ft.make_jaxpr(f)(x))
    assert "while" not in jaxpr, jaxpr
    traced = ft.jit(lambda v, i: v.at[i].apply(fnp.sin))(x, np.array([2, 2, 2]))
    np.testing.assert_allclose(traced, [0.5, 1.5, np.sin(np.sin(np.sin(2.5)))], rtol=1e-12)
