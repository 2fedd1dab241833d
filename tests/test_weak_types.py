"""Weak types of eager values: a value made from a Python scalar is weakly typed eagerly
(``WeakArray``) as under ``jit``, so a program gives the same dtypes both ways.

Expected (dtype, weak_type) pairs were computed with JAX 0.10.2 (JAX_ENABLE_X64=1, CPU):
eager and jitted JAX agree on every row (script: notes b32/weak/run_jax.py).
"""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax

A = fnp.array


def _f32(n=3):
    return np.ones(n, np.float32)


# name -> (function, arguments, JAX's (dtype, weak_type) of the result, eager and jitted)
TABLE = {
    "array(1.0)": (lambda x: A(x), (1.0,), ("float64", True)),
    "array(2)": (lambda x: A(x), (2,), ("int64", True)),
    "array(1j)": (lambda x: A(x), (1j,), ("complex128", True)),
    "asarray(2.5)": (lambda x: fnp.asarray(x), (2.5,), ("float64", True)),
    "array(1.0, float32)": (lambda x: A(x, dtype=fnp.float32), (1.0,), ("float32", False)),
    "asarray(1.0, float64)": (lambda x: fnp.asarray(x, dtype=fnp.float64), (1.0,),
                              ("float64", False)),
    "array(1.0, copy)": (lambda x: A(x, copy=True), (1.0,), ("float64", True)),
    "array(np.float32)": (lambda x: A(x), (np.float32(1),), ("float32", False)),
    "array(np.float64)": (lambda x: A(x), (np.float64(1),), ("float64", False)),
    "array(np 0-d)": (lambda x: A(x), (np.array(1.0),), ("float64", False)),
    # the brief's case (JAX dtypes_test testBinaryPromotionJitInvariance)
    "array(f32) + array(1.0)": (lambda x, y: A(x) + A(y), (np.float32(1), 1.0),
                                ("float32", False)),
    "array(1.0) + array(f32)": (lambda x, y: A(x) + A(y), (1.0, np.float32(1)),
                                ("float32", False)),
    "array(i8) + array(2)": (lambda x, y: A(x) + A(y), (np.int8(1), 2), ("int8", False)),
    "array(f16) * array(2.0)": (lambda x, y: A(x) * A(y), (np.float16(1), 2.0),
                                ("float16", False)),
    "array(1.0) + array(2)": (lambda x, y: A(x) + A(y), (1.0, 2), ("float64", True)),
    "array(f32[3]) - array(1.0)": (lambda x, y: A(x) - A(y), (_f32(), 1.0), ("float32", False)),
    "add(1.0, 2.0)": (lambda x, y: fnp.add(x, y), (1.0, 2.0), ("float64", True)),
    "sin(1.0)": (lambda x: fnp.sin(x), (1.0,), ("float64", True)),
    "sin(array(2))": (lambda x: fnp.sin(A(x)), (2,), ("float64", True)),
    "-array(1.0)": (lambda x: -A(x), (1.0,), ("float64", True)),
    "abs(array(1j))": (lambda x: fnp.abs(A(x)), (1j,), ("float64", True)),
    "array(1) / array(2)": (lambda x, y: A(x) / A(y), (1, 2), ("float64", True)),
    "array(7) // 2": (lambda x: A(x) // 2, (7,), ("int64", True)),
    "array(3.0) ** 2": (lambda x: A(x) ** 2, (3.0,), ("float64", True)),
    "sum(array(1.0))": (lambda x: fnp.sum(A(x)), (1.0,), ("float64", False)),
    "where(c, 1.0, 0.0)": (lambda c, x, y: fnp.where(c, x, y),
                           (np.array([True, False]), 1.0, 0.0), ("float64", True)),
    "where(c, f32, 0.0)": (lambda c, x, y: fnp.where(c, x, y),
                           (np.array([True, False]), _f32(2), 0.0), ("float32", False)),
    "where(c, 1.0, 0.0) * f32": (lambda c, x, y: fnp.where(c, x, y) * _f32(2),
                                 (np.array([True, False]), 1.0, 0.0), ("float32", False)),
    "array(1.0).astype(float32)": (lambda x: A(x).astype(fnp.float32), (1.0,),
                                   ("float32", False)),
    "convert_element_type(1.0, f32)": (lambda x: lax.convert_element_type(x, fnp.float32),
                                       (1.0,), ("float32", False)),
    "maximum(array(1.0), 0.0)": (lambda x: fnp.maximum(A(x), 0.0), (1.0,), ("float64", True)),
    "exp(2)": (lambda x: fnp.exp(x), (2,), ("float64", True)),
    "floor(array(1.5))": (lambda x: fnp.floor(A(x)), (1.5,), ("float64", True)),
    "dot(array(2.0), array(3.0))": (lambda x, y: fnp.dot(A(x), A(y)), (2.0, 3.0),
                                    ("float64", True)),
    "square(array(2.0))": (lambda x: fnp.square(A(x)), (2.0,), ("float64", True)),
    "f32 * array(2.0)": (lambda x: _f32(2) * A(x), (2.0,), ("float32", False)),
    "i8 + array(1)": (lambda x: np.ones(2, np.int8) + A(x), (1,), ("int8", False)),
    "f32 + array(1j)": (lambda x: _f32(2) + A(x), (1j,), ("complex64", False)),
    "broadcast_to(array(1.0))": (lambda x: fnp.broadcast_to(A(x), (3,)), (1.0,),
                                 ("float64", True)),
    "reshape(array(1.0))": (lambda x: fnp.reshape(A(x), (1, 1)), (1.0,), ("float64", True)),
    "array(1.0)[None]": (lambda x: A(x)[None], (1.0,), ("float64", True)),
    "broadcast_to(array(1.0))[0]": (lambda x: fnp.broadcast_to(A(x), (3,))[0], (1.0,),
                                    ("float64", True)),
    "clip(array(1.5), 0, 1)": (lambda x: fnp.clip(A(x), 0, 1), (1.5,), ("float64", True)),
    "real(array(1j))": (lambda x: fnp.real(A(x)), (1j,), ("float64", True)),
    "add(1.0, f32)": (lambda x, y: fnp.add(x, y), (1.0, _f32()), ("float32", False)),
}


def _typed(x):
    return str(x.dtype), bool(x.weak_type)


@pytest.mark.parametrize("name", list(TABLE))
def test_eager_matches_jax(name):
    fn, args, want = TABLE[name]
    assert _typed(fn(*args)) == want


@pytest.mark.parametrize("name", list(TABLE))
def test_jit_matches_jax_and_eager(name):
    fn, args, want = TABLE[name]
    f = ft.jit(fn)
    got = f(*args)
    assert _typed(got) == want
    again = f(*args)                 # the second call takes jit's fast path where it has one
    assert _typed(again) == want
    np.testing.assert_array_equal(np.asarray(got), np.asarray(fn(*args)))


def test_jit_outputs_of_python_scalars_are_weak():
    # JAX: jit(lambda: 1.0)() and jit(lambda x: x * 2)(1.0) are weak float64
    assert _typed(ft.jit(lambda: 1.0)()) == ("float64", True)
    f = ft.jit(lambda x: x * 2)
    assert [_typed(f(1.0)) for _ in range(3)] == [("float64", True)] * 3
    assert _typed(f(np.float64(1.0))) == ("float64", False)
    assert _typed(f(fnp.asarray(1.0))) == ("float64", True)


def test_weak_argument_is_part_of_jit_signature():
    # the same shape and dtype, weak or not: different results (and compiled programs)
    f = ft.jit(lambda x, c: x * c)
    x = _f32(2)
    strong = np.float64(3.0) * np.ones((), np.float64)      # a strong float64 0-d array
    for _ in range(2):
        assert f(x, fnp.asarray(3.0)).dtype == np.float32
        assert f(x, fnp.asarray(np.float64(3.0))).dtype == np.float64
        assert f(x, strong).dtype == np.float64


def test_closed_over_weak_constant_under_jit():
    c = fnp.asarray(2.0)
    x = _f32(2)
    assert ft.jit(lambda v: v * c)(x).dtype == np.float32
    assert (x * c).dtype == np.float32
    out = ft.jit(lambda v: fnp.where(v > 0, c, 0.0))(x)
    assert _typed(out) == _typed(fnp.where(x > 0, c, 0.0)) == ("float64", True)


def test_repr_shows_weak_type():
    assert repr(fnp.asarray(1.0)) == "Array(1., dtype=float64, weak_type=True)"
    assert repr(fnp.asarray([1.0])) == "Array([1.], dtype=float64)"


def test_numpy_derived_values_are_strong():
    w = fnp.asarray(2.0)
    assert not np.sin(w).weak_type          # numpy's own function
    assert w.copy().weak_type and w.T.weak_type          # methods keep it (JAX's)
    assert type(np.asarray(w)) is np.ndarray
    assert pickle.loads(pickle.dumps(w)).weak_type     # a pickled weak value stays weak
    assert fnp.asarray(True).weak_type is False        # a Python bool: strong, as JAX's


def test_inplace_operator_with_weak_operand():
    x = fnp.ones(2, fnp.float32)
    x += fnp.asarray(1.0)
    assert x.dtype == np.float32 and x.tolist() == [2.0, 2.0]


def test_weak_leaves_in_jit_fast_path_pytrees():
    g = ft.jit(lambda p: [q * 2 for q in p])
    x = _f32(2)
    for _ in range(3):       # the first call compiles, the next ones take the fast path
        w, y = g([fnp.asarray(0.5), x])
        assert _typed(w) == ("float64", True) and y.dtype == np.float32
        s, _ = g([fnp.asarray(np.float64(0.5)), x])
        assert _typed(s) == ("float64", False)
        assert ft.jit(lambda a, b: a * b)(x, fnp.asarray(0.5)).dtype == np.float32


def test_python_int_beyond_small_dtype_converts_as_jit():
    # JAX 0.10.2: int8 ones + 300 -> 45 (300 taken as int8, wrapping), 300 * x -> 44,
    # uint8 ones - 257 -> 0, eagerly and jitted; numpy raises OverflowError
    x, u = fnp.ones(2, fnp.int8), fnp.ones(2, fnp.uint8)
    for got in (x + 300, fnp.add(x, 300), ft.jit(fnp.add)(x, 300)):
        assert got.dtype == np.int8 and got.tolist() == [45, 45]
    assert (300 * x).tolist() == [44, 44] and (u - 257).tolist() == [0, 0]
    with pytest.raises(OverflowError):          # beyond int64, a Python int is no weak int64
        fnp.add(x, 2 ** 64)


def test_strict_promotion_accepts_weak_arrays():
    # JAX 0.10.2 with numpy_dtype_promotion('strict'): float32 * asarray(2.0) is float32,
    # float32 * asarray(np.float64(2.0)) raises TypePromotionError (eager and jitted alike)
    x = fnp.ones(2, fnp.float32)
    with ft.numpy_dtype_promotion("strict"):
        assert (x * fnp.asarray(2.0)).dtype == np.float32
        assert ft.jit(lambda a, b: a * b)(x, fnp.asarray(2.0)).dtype == np.float32
        with pytest.raises(ft.dtypes.TypePromotionError, match="strict"):
            x * fnp.asarray(np.float64(2.0))


def test_python_number_ops_take_the_cached_fast_path_with_the_traced_types():
    """Eager ops on Python numbers and WeakArrays alone are computed by numpy once their
    kinds were typed by the traced path (a throwaway trace per op cost 5-15 us): the
    second call equals the first in value, dtype and weak type; numpy errors (2 ** -1 of
    ints, an int beyond int64) still go through the traced path."""
    from functrans import weak_values
    w, i = fnp.asarray(2.0), fnp.asarray(3)
    calls = [lambda: fnp.sin(1.0), lambda: fnp.add(1, 2), lambda: fnp.add(1, 2.5),
             lambda: fnp.exp(w), lambda: w * i, lambda: fnp.less(w, 1),
             lambda: fnp.true_divide(1, 2), lambda: fnp.power(2, -1),
             lambda: fnp.floor_divide(7, 0), lambda: fnp.add(1j, w)]
    for f in calls:
        a, b = f(), f()
        assert (a.dtype, a.weak_type) == (b.dtype, b.weak_type)
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        assert (a.dtype, a.weak_type) == (ft.jit(f)().dtype, ft.jit(f)().weak_type)
    assert len(weak_values._NUMBER_TYPES) >= 8
    with pytest.raises(OverflowError):
        fnp.add(2 ** 70, 1.0)
