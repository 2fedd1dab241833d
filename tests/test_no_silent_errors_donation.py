"""Donation never writes into memory the caller still sees (issue 13.2)."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp


def _address(a):
    return a.__array_interface__["data"][0]


def test_a_numpy_input_is_never_overwritten_and_earlier_results_never_change():
    f = ft.jit(lambda x: x * 2.0, donate_argnums=0)
    x = np.ones(3)
    a = f(x)
    b = f(x)
    np.testing.assert_array_equal(x, np.ones(3))
    np.testing.assert_array_equal(a, [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(b, [2.0, 2.0, 2.0])


def test_an_array_viewing_user_memory_is_not_donated():
    f = ft.jit(lambda x: x + 1.0, donate_argnums=0)
    user = np.zeros(4)
    view = fnp.asarray(user)
    out = f(view)
    np.testing.assert_array_equal(user, np.zeros(4))
    np.testing.assert_array_equal(out, np.ones(4))
    np.testing.assert_array_equal(view, np.zeros(4))        # still usable


def test_a_donated_functrans_array_is_reused_and_deleted():
    f = ft.jit(lambda x: x * 2.0, donate_argnums=0)
    a = f(np.ones(3))
    where = _address(a)
    b = f(a)
    np.testing.assert_array_equal(b, [4.0, 4.0, 4.0])
    assert _address(b) == where               # the output took over the donated buffer
    assert isinstance(a, ft.array.DeletedArray)
    assert "deleted" in repr(a)       # printable, without its data
    for use in (lambda: a + 1.0, lambda: np.sin(a), lambda: a[0],
                lambda: fnp.sum(a), lambda: f(a), lambda: ft.jit(lambda t: t)(a),
                lambda: a.tolist(), lambda: float(a[0])):
        with pytest.raises(RuntimeError, match="deleted"):
            use()


def test_donate_argnames_donates_that_parameter():
    # JAX's jit(..., donate_argnames='p'), as the optimiser-step idiom writes it
    f = ft.jit(lambda p, g: p - 0.1 * g, donate_argnames="p")
    a = f(np.ones(3), np.ones(3))
    b = f(a, np.ones(3))
    np.testing.assert_allclose(b, [0.8] * 3)
    assert isinstance(a, ft.array.DeletedArray)
    with pytest.raises(ValueError, match="donate_argnames"):
        ft.jit(lambda p: p, donate_argnames="q")


def test_a_buffer_with_another_view_is_not_donated():
    f = ft.jit(lambda x: x * 2.0, donate_argnums=0)
    a = f(np.ones(3))
    kept = np.asarray(a)           # the caller still sees a's memory through this view
    b = f(a)
    np.testing.assert_array_equal(kept, [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(a, [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(b, [4.0, 4.0, 4.0])


def test_donation_of_pytrees_and_non_donated_arguments():
    f = ft.jit(lambda p, y: {"w": p["w"] * y, "b": p["b"] + y}, donate_argnums=0)
    y = np.full(2, 3.0)
    p = {"w": np.ones(2), "b": np.zeros(2)}
    q = f(p, y)
    r = f(q, y)
    np.testing.assert_array_equal(p["w"], np.ones(2))
    np.testing.assert_array_equal(y, np.full(2, 3.0))
    np.testing.assert_array_equal(r["w"], np.full(2, 9.0))
    np.testing.assert_array_equal(r["b"], np.full(2, 6.0))


def test_donation_in_a_loop_gives_the_undonated_values():
    step = ft.jit(lambda x: x * 0.5 + 1.0, donate_argnums=0)
    plain = ft.jit(lambda x: x * 0.5 + 1.0)
    x = y = np.arange(5.0)
    history = []
    for _ in range(5):
        x = step(x)
        y = plain(y)
        history.append(np.array(y))
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(history[0], np.arange(5.0) * 0.5 + 1.0)
