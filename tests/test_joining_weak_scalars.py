"""append / diff(prepend=, append=) / concatenate of an integer array with a Python
scalar, eagerly and under jit, against JAX 0.10.2 (x64). Found by differential fuzzing
(round 12): eagerly the weak scalar's int64 array could not be cast into the uint8 result
(TypeError 'same_kind') while jit gave JAX's answer; diff with n=0 joined prepend and
append (shape (2, 5)) where numpy and JAX return the input."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

U8 = np.array([3, 1, 200], np.uint8)
X = np.arange(6.0).reshape(2, 3)


def both(f, *args):
    return [f(*args), ft.jit(f)(*args)]


@pytest.mark.parametrize("name,f,want,dtype", [
    ("append 5", lambda a: fnp.append(a, 5), [3, 1, 200, 5], np.uint8),
    ("append -1 wraps", lambda a: fnp.append(a, -1), [3, 1, 200, 255], np.uint8),
    ("diff prepend", lambda a: fnp.diff(a, prepend=2), [1, 254, 199], np.uint8),
    ("concatenate strong", lambda a: fnp.concatenate([a, fnp.asarray(np.array([-2]))]),
     [3, 1, 200, -2], np.int64),
])
def test_integer_array_joined_with_a_python_scalar_as_jax(name, f, want, dtype):
    for got in both(f, U8):
        assert got.dtype == dtype, name
        assert got.tolist() == want, name


def test_diff_uint32_with_prepend_and_append_as_jax():
    for got in both(lambda a: fnp.diff(a, prepend=2, append=-1), np.array([3, 1], np.uint32)):
        assert got.dtype == np.uint32
        assert got.tolist() == [1, 4294967294, 4294967294]


def test_diff_of_order_zero_is_the_input():
    for got in both(lambda a: fnp.diff(a, n=0, prepend=0, append=-1), X):
        assert got.shape == (2, 3)
        assert got.tolist() == X.tolist()


def test_concatenate_with_an_explicit_dtype_still_refuses_float_to_int():
    with pytest.raises(TypeError):
        fnp.concatenate([np.array([300.7]), np.array([1.0])], dtype=np.uint8)
