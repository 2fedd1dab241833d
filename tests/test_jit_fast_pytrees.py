"""jit's fast path takes plain tuples and lists of arrays (a model's parameters): the call
skips tree_flatten and the signature rebuild of the slow path (~100 µs of the MLP step's
dispatch under load, against ~17 µs), keyed on each container's class and its leaves'
shapes, dtypes and classes, so any other structure or leaf goes the slow way."""
import numpy as np
import pytest

import functrans as ft
from functrans.jit import Jitted


def _no_slow(monkeypatch):
    monkeypatch.setattr(Jitted, "_call_slow", lambda *a: pytest.fail("slow path"))


def _sgd(p, x):
    (w1, b1), (w2, b2) = p
    y = ft.numpy.tanh(x @ w1 + b1) @ w2 + b2
    loss = ft.numpy.mean(y * y)
    return [(w1 * 0.5, b1 + loss), (w2 - 1.0, b2)], loss


def _params(rng):
    return ((rng.standard_normal((3, 4)), np.zeros(4)), (rng.standard_normal((4, 2)), np.ones(2)))


def test_nested_tuples_of_arrays_take_the_fast_path(monkeypatch):
    rng = np.random.default_rng(0)
    p, x = _params(rng), rng.standard_normal((5, 3))
    f = ft.jit(_sgd, backend="cpu")
    want = f(p, x)                               # compiles on the slow path
    with monkeypatch.context() as m:
        _no_slow(m)
        got = f(p, x)
        q = _params(np.random.default_rng(1))    # new values, same signature
        got_q = f(q, x)
    for a, b in zip(ft.tree_util.tree_leaves(got), ft.tree_util.tree_leaves(want)):
        np.testing.assert_array_equal(a, b)
    assert ft.tree_util.tree_structure(got) == ft.tree_util.tree_structure(want)
    ref = ft.jit(_sgd, backend="interpret")(q, x)
    for a, b in zip(ft.tree_util.tree_leaves(got_q), ft.tree_util.tree_leaves(ref)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    # Arrays (compiled results) are leaves as well: the next step takes the last's output
    r = tuple(tuple(layer) for layer in got_q[0])
    assert all(isinstance(v, ft.Array) for v in ft.tree_util.tree_leaves(r))
    want_r = f(r, np.asarray(x))
    with monkeypatch.context() as m:
        _no_slow(m)
        np.testing.assert_array_equal(f(r, x)[1], want_r[1])


def test_another_structure_or_leaf_is_another_signature():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal(3), rng.standard_normal(3)
    f = ft.jit(lambda t: t[0] * 2.0 - t[1], backend="cpu")
    for arg in ((a, b), [a, b], (a, b), [a, b]):
        np.testing.assert_allclose(f(arg), a * 2.0 - b)
    assert f.cache_info()["misses"] == 2              # the tuple and the list
    np.testing.assert_allclose(f((a, b.astype(np.float32))), a * 2.0 - b, rtol=1e-6)
    np.testing.assert_allclose(f((a, 1.5)), a * 2.0 - 1.5)     # a scalar leaf: slow path
    np.testing.assert_allclose(f((a, b)), a * 2.0 - b)
    g = ft.jit(lambda t, u: t[0] + t[1][0] * u, backend="cpu")
    for _ in range(2):
        np.testing.assert_allclose(g((a, (b,)), 3.0), a + b * 3.0)   # nested + scalar arg
        np.testing.assert_allclose(g((a, [b]), a), a + b * a)


def test_a_deleted_array_in_a_tuple_raises_as_on_the_slow_path():
    f = ft.jit(lambda t: t[0] + t[1], backend="cpu")
    x = ft.jit(lambda v: v + 0.0)(np.arange(3.0))
    y = np.ones(3)
    np.testing.assert_array_equal(f((x, y)), np.arange(3.0) + 1)
    np.testing.assert_array_equal(f((x, y)), np.arange(3.0) + 1)
    ft.jit(lambda v: v * 2.0, donate_argnums=0)(x)      # x's buffer is donated: x deleted
    with pytest.raises(Exception) as fast_err:
        f((x, y))
    with pytest.raises(Exception) as slow_err:
        ft.jit(lambda t: t[0] + t[1], backend="cpu")((x, y))
    assert type(fast_err.value) is type(slow_err.value)
    assert str(fast_err.value) == str(slow_err.value)


def test_tracers_in_a_tuple_still_trace():
    f = ft.jit(lambda t: ft.numpy.sum(t[0] * t[1]), backend="cpu")
    a, b = np.arange(3.0), np.ones(3)
    f((a, b))
    f((a, b))
    g = ft.grad(lambda u: f((u, b)))(a)
    np.testing.assert_allclose(g, b)


def test_deep_nesting_takes_the_slow_path():
    from functrans.api_util import FAST_DEPTH
    a = np.arange(3.0)
    deep = a
    for _ in range(FAST_DEPTH + 3):
        deep = (deep,)
    f = ft.jit(lambda t: ft.tree_util.tree_leaves(t)[0] + 1.0, backend="cpu")
    for _ in range(2):
        np.testing.assert_array_equal(f(deep), a + 1.0)
    assert not f._fast
