"""Values made from weakly typed ones keep the weak type where JAX's do: creation from a
weak fill or template, joining, reshaping/reordering/selecting, gradients, device_put,
comparisons and lax's own functions, eagerly and under ``jit`` alike.

A lost weak type changes numbers: ``fnp.full((2,), 0.1) * float16`` was computed in
float64, ``fnp.ones_like(fnp.asarray(3)) * int8 * 3`` in int64 (300 where JAX wraps to
44). Expected (dtype, weak_type) pairs and values were computed with JAX 0.10.2
(JAX_ENABLE_X64=1, CPU; eager and jitted JAX agree on every row; scripts:
notes b33/weak13/run_jax.py, conseq.py). JAX without x64 gives the same weak flags
with 32-bit dtypes.
"""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax

A = fnp.array


def _bw(w):
    """A weak array of shape (2, 1) from the weak scalar ``w``."""
    return fnp.broadcast_to(w, (2, 1))


# name -> (function, arguments, JAX's (dtype, weak_type) of the result)
TABLE = {
    "full((2,), 1.0)": (lambda x: fnp.full((2,), x), (1.0,), ("float64", True)),
    "full((2,), 3)": (lambda x: fnp.full((2,), x), (3,), ("int64", True)),
    "full((2,), weak)": (lambda x: fnp.full((2,), A(x)), (1.5,), ("float64", True)),
    "full((2,), f32 scalar)": (lambda x: fnp.full((2,), x), (np.float32(1),),
                               ("float32", False)),
    "full((2,), 1.0, f32)": (lambda x: fnp.full((2,), x, fnp.float32), (1.0,),
                             ("float32", False)),
    "full_like(weak, 2.0)": (lambda x: fnp.full_like(A(x), 2.0), (1.5,), ("float64", True)),
    "full_like(f32[2], 2.0)": (lambda x: fnp.full_like(x, 2.0), (np.ones(2, np.float32),),
                               ("float32", False)),
    "full_like(1.0, 2)": (lambda x: fnp.full_like(x, 2), (1.0,), ("float64", True)),
    "zeros_like(weak)": (lambda x: fnp.zeros_like(A(x)), (1.5,), ("float64", True)),
    "zeros_like(1.0)": (lambda x: fnp.zeros_like(x), (1.0,), ("float64", True)),
    "ones_like(weak int)": (lambda x: fnp.ones_like(A(x)), (3,), ("int64", True)),
    "empty_like(weak)": (lambda x: fnp.empty_like(A(x)), (1.5,), ("float64", True)),
    "zeros_like(weak, f32)": (lambda x: fnp.zeros_like(A(x), fnp.float32), (1.5,),
                              ("float32", False)),
    "zeros_like(weak, shape)": (lambda x: fnp.zeros_like(A(x), shape=(2,)), (1.5,),
                                ("float64", True)),
    "lax.full((2,), 1.0)": (lambda x: lax.full((2,), x), (1.0,), ("float64", True)),
    "lax.full_like(weak, 2)": (lambda x: lax.full_like(_bw(x), 2), (1.5,), ("float64", True)),
    "stack([weak, weak])": (lambda x: fnp.stack([A(x), A(x)]), (1.5,), ("float64", True)),
    "stack([1.0, 2.0])": (lambda x, y: fnp.stack([x, y]), (1.0, 2.0), ("float64", True)),
    "stack([weak, f32])": (lambda x: fnp.stack([A(x), np.float32(1)]), (1.5,),
                           ("float32", False)),
    "concatenate(weak[None] x2)": (lambda x: fnp.concatenate([A(x)[None], A(x)[None]]),
                                   (1.5,), ("float64", True)),
    "hstack([1.0, 2.0])": (lambda x, y: fnp.hstack([x, y]), (1.0, 2.0), ("float64", True)),
    "vstack([weak, weak])": (lambda x: fnp.vstack([A(x), A(x)]), (1.5,), ("float64", True)),
    "column_stack([weak, weak])": (lambda x: fnp.column_stack([A(x), A(x)]), (1.5,),
                                   ("float64", True)),
    "array([weak, weak])": (lambda x: fnp.array([A(x), A(x)]), (1.5,), ("float64", False)),
    "split(weak[4])": (lambda x: fnp.split(fnp.broadcast_to(x, (4,)), 2)[0], (1.5,),
                       ("float64", True)),
    "grad(x ** 2)(1.0)": (lambda x: ft.grad(lambda v: v ** 2)(x), (1.0,), ("float64", True)),
    "grad(x ** 2)(weak)": (lambda x: ft.grad(lambda v: v ** 2)(A(x)), (1.5,),
                           ("float64", True)),
    "grad(sin)(1.0)": (lambda x: ft.grad(fnp.sin)(x), (1.0,), ("float64", True)),
    "grad(x * f32)(1.0)": (lambda x: ft.grad(lambda v: v * np.float32(2))(x), (1.0,),
                           ("float64", True)),
    "grad(x ** 2)(f64 array)": (lambda x: ft.grad(lambda v: v ** 2)(x), (np.float64(1.0),),
                                ("float64", False)),
    "device_put(1.0)": (lambda x: ft.device_put(x), (1.0,), ("float64", True)),
    "device_put(weak)": (lambda x: ft.device_put(A(x)), (1.5,), ("float64", True)),
    "device_put(3)": (lambda x: ft.device_put(x), (3,), ("int64", True)),
    "transpose(weak)": (lambda x: fnp.transpose(_bw(x)), (1.5,), ("float64", True)),
    "squeeze(weak[None])": (lambda x: fnp.squeeze(A(x)[None]), (1.5,), ("float64", True)),
    "take(weak[3], 0)": (lambda x: fnp.take(fnp.broadcast_to(x, (3,)), 0), (1.5,),
                         ("float64", True)),
    "take(weak[3], [0, 1])": (lambda x: fnp.take(fnp.broadcast_to(x, (3,)), np.array([0, 1])),
                              (1.5,), ("float64", True)),
    "take_along_axis(weak)": (lambda x: fnp.take_along_axis(_bw(x), np.zeros((1, 1), int), 0),
                              (1.5,), ("float64", True)),
    "flip(weak)": (lambda x: fnp.flip(_bw(x)), (1.5,), ("float64", True)),
    "roll(weak)": (lambda x: fnp.roll(_bw(x), 1), (1.5,), ("float64", True)),
    "tile(weak)": (lambda x: fnp.tile(_bw(x), 2), (1.5,), ("float64", True)),
    "repeat(weak)": (lambda x: fnp.repeat(_bw(x), 2), (1.5,), ("float64", True)),
    "rot90(weak)": (lambda x: fnp.rot90(_bw(x)), (1.5,), ("float64", True)),
    "pad(weak)": (lambda x: fnp.pad(_bw(x), 1), (1.5,), ("float64", True)),
    "sort(weak)": (lambda x: fnp.sort(_bw(x), axis=0), (1.5,), ("float64", True)),
    "copy(weak)": (lambda x: fnp.copy(_bw(x)), (1.5,), ("float64", True)),
    "weak.T": (lambda x: _bw(x).T, (1.5,), ("float64", True)),
    "weak.mT": (lambda x: _bw(x).mT, (1.5,), ("float64", True)),
    "weak.transpose()": (lambda x: _bw(x).transpose(), (1.5,), ("float64", True)),
    "weak.reshape(2)": (lambda x: _bw(x).reshape(2), (1.5,), ("float64", True)),
    "weak.ravel()": (lambda x: _bw(x).ravel(), (1.5,), ("float64", True)),
    "weak.flatten()": (lambda x: _bw(x).flatten(), (1.5,), ("float64", True)),
    "weak.squeeze()": (lambda x: _bw(x).squeeze(), (1.5,), ("float64", True)),
    "weak.swapaxes(0, 1)": (lambda x: _bw(x).swapaxes(0, 1), (1.5,), ("float64", True)),
    "weak.copy()": (lambda x: _bw(x).copy(), (1.5,), ("float64", True)),
    "weak.take(0)": (lambda x: _bw(x).take(0), (1.5,), ("float64", True)),
    "weak.clip(0, 1)": (lambda x: _bw(x).clip(0, 1), (1.5,), ("float64", True)),
    "weak.repeat(2)": (lambda x: _bw(x).repeat(2), (1.5,), ("float64", True)),
    "weak.max()": (lambda x: _bw(x).max(), (1.5,), ("float64", False)),
    "max(weak)": (lambda x: fnp.max(_bw(x)), (1.5,), ("float64", False)),
    "ptp(weak)": (lambda x: fnp.ptp(_bw(x)), (1.5,), ("float64", False)),
    "weak < weak": (lambda x: A(x) < A(x), (1.5,), ("bool", True)),
    "less(1.0, 2.0)": (lambda x, y: fnp.less(x, y), (1.0, 2.0), ("bool", True)),
    "f32 < weak": (lambda x: np.ones(2, np.float32) < A(x), (1.5,), ("bool", False)),
    "lax.lt(1.0, 2.0)": (lambda x, y: lax.lt(x, y), (1.0, 2.0), ("bool", True)),
    "lax.div(7, 2)": (lambda x, y: lax.div(x, y), (7, 2), ("int64", True)),
    "lax.rem(7.5, 2.0)": (lambda x, y: lax.rem(x, y), (7.5, 2.0), ("float64", True)),
    "lax.add(1.0, 2.0)": (lambda x, y: lax.add(x, y), (1.0, 2.0), ("float64", True)),
    "lax.add(1, 2)": (lambda x, y: lax.add(x, y), (1, 2), ("int64", True)),
    "lax.sin(1.0)": (lambda x: lax.sin(x), (1.0,), ("float64", True)),
    "lax.mul(weak, 2.0)": (lambda x: lax.mul(A(x), 2.0), (1.5,), ("float64", True)),
    "round(asarray(2.7))": (lambda x: fnp.round(A(x)), (2.7,), ("float64", True)),
    "round(2.7)": (lambda x: fnp.round(x), (2.7,), ("float64", True)),
    "round(weak int)": (lambda x: fnp.round(A(x)), (3,), ("int64", True)),
    "round(weak, 1)": (lambda x: fnp.round(A(x), 1), (1.5,), ("float64", True)),
    "around(weak)": (lambda x: fnp.around(A(x)), (1.5,), ("float64", True)),
    "real(3)": (lambda x: fnp.real(x), (3,), ("int64", True)),
    "conj(1.5)": (lambda x: fnp.conj(x), (1.5,), ("float64", True)),
    "imag(weak)": (lambda x: fnp.imag(A(x)), (1.5,), ("float64", True)),
    "isnan(weak)": (lambda x: fnp.isnan(A(x)), (1.5,), ("bool", True)),
    "isinf(1.5)": (lambda x: fnp.isinf(x), (1.5,), ("bool", False)),
    "logical_not(weak)": (lambda x: fnp.logical_not(A(x)), (1.5,), ("bool", True)),
}


def _typed(x):
    return str(x.dtype), bool(x.weak_type)


@pytest.mark.parametrize("name", list(TABLE))
def test_eager_and_jit_match_jax(name):
    fn, args, want = TABLE[name]
    got = fn(*args)
    assert _typed(got) == want
    f = ft.jit(fn)
    for _ in range(2):      # the second call takes jit's fast path where it has one
        out = f(*args)
        assert _typed(out) == want
        np.testing.assert_array_equal(np.asarray(out), np.asarray(got))


_H = np.array([0.1, 1000.7], np.float16)
_F = np.array([0.1, 3.3], np.float32)
_I8 = np.array([100, -3], np.int8)
_W = lambda: fnp.broadcast_to(fnp.asarray(0.1), (2,))   # noqa: E731

# name -> (function, JAX's dtype and values): a weak result combined with a narrow array
CONSEQUENCES = {
    "full(0.1) * f16": (lambda: fnp.full((2,), 0.1) * _H,
                        ("float16", [0.0099945068359375, 100.0])),
    "zeros_like(1.0) + f16": (lambda: fnp.zeros_like(1.0) + _H,
                              ("float16", [0.0999755859375, 1000.5])),
    "ones_like(weak 3) * i8 * 3": (lambda: fnp.ones_like(fnp.asarray(3)) * _I8 * 3,
                                   ("int8", [44, -9])),
    "stack([0.1, 0.2]) * f32": (lambda: fnp.stack([0.1, 0.2]) * _F,
                                ("float32", [0.010000000707805157, 0.6600000262260437])),
    "grad(x ** 2)(1.1) * f32": (lambda: ft.grad(lambda x: x ** 2)(1.1) * _F,
                                ("float32", [0.2200000137090683, 7.260000228881836])),
    "device_put(0.1) * f16": (lambda: ft.device_put(0.1) * _H,
                              ("float16", [0.0099945068359375, 100.0])),
    "(weak < 2) * 0.1 * f32": (lambda: (fnp.asarray(1.5) < 2.0) * 0.1 * _F,
                               ("float32", [0.010000000707805157, 0.33000001311302185])),
    "((weak < 2) + 100) * i8": (lambda: ((fnp.asarray(1.5) < 2.0) + 100) * _I8,
                                ("int8", [116, -47])),
    "flip(weak) * f16": (lambda: fnp.flip(_W()) * _H, ("float16", [0.0099945068359375, 100.0])),
    "weak.T * f16": (lambda: _W().T * _H, ("float16", [0.0099945068359375, 100.0])),
    "lax.rem(7.5, 2.0) * f16": (lambda: lax.rem(7.5, 2.0) * _H,
                                ("float16", [0.14990234375, 1501.0])),
    "lax.div(7, 2) * i8": (lambda: lax.div(7, 2) * _I8, ("int8", [44, -9])),
    "lax.full((2,), 0.1) * f16": (lambda: lax.full((2,), 0.1) * _H,
                                  ("float16", [0.0099945068359375, 100.0])),
    "sort(weak) * f16": (lambda: fnp.sort(_W()) * _H, ("float16", [0.0099945068359375, 100.0])),
    "take(weak, [1, 0]) * f16": (lambda: fnp.take(_W(), np.array([1, 0])) * _H,
                                 ("float16", [0.0099945068359375, 100.0])),
    # a Python number in a product: weakly typed, so the narrow operand's dtype wins
    "dot(1.5, f16)": (lambda: fnp.dot(1.5, np.array([0.5, 1.5], np.float16)),
                      ("float16", [0.75, 2.25])),
    "inner(1.5, f16)": (lambda: fnp.inner(1.5, np.array([0.5, 1.5], np.float16)),
                        ("float16", [0.75, 2.25])),
    "outer(3, f16)": (lambda: fnp.outer(3, np.array([0.5, 1.5], np.float16)),
                      ("float16", [[1.5, 4.5]])),
    "outer(2, i8 * 100)": (lambda: fnp.outer(2, np.array([100, 100], np.int8)),
                           ("int8", [[-56, -56]])),
    "vdot(1.5, f16[1])": (lambda: fnp.vdot(1.5, np.array([0.5], np.float16)), ("float16", 0.75)),
    "round(2.7) * f16": (lambda: fnp.round(2.7) * _H, ("float16", [0.2998046875, 3002.0])),
    "real(3) * i8 * 50": (lambda: fnp.real(3) * _I8 * 50, ("int8", [-104, 62])),
    # a Python number clipped to narrow arrays takes their dtype
    "clip(1.2, f16)": (lambda: fnp.clip(1.2, np.array([0.5, 1.5], np.float16)),
                       ("float16", [1.2001953125, 1.5])),
    "clip(1.2, None, f16)": (lambda: fnp.clip(1.2, None, np.array([0.5, 1.5], np.float16)),
                             ("float16", [0.5, 1.2001953125])),
    "intersect1d(f16, 1.5)": (lambda: fnp.intersect1d(np.array([0.5, 1.5], np.float16), 1.5),
                              ("float16", [1.5])),
    "intersect1d(u8, 200)": (lambda: fnp.intersect1d(np.array([1, 200], np.uint8), 200),
                             ("uint8", [200])),
}


@pytest.mark.parametrize("name", list(CONSEQUENCES))
def test_weak_results_give_jax_numbers_with_narrow_arrays(name):
    fn, (dtype, values) = CONSEQUENCES[name]
    for got in (fn(), ft.jit(fn)()):
        assert str(got.dtype) == dtype
        assert np.asarray(got).tolist() == values


def test_lax_ops_on_python_numbers_fast_path_keeps_types_and_errors():
    """lax's binary ops on two Python numbers of one type bind at once, and a primitive's
    eager weak result is typed from its abstract evaluation (cached per primitive and
    Python types), without a throwaway trace: the second call equals the first and jit,
    and the rule's errors stay."""
    calls = [lambda: lax.add(1.0, 2.0), lambda: lax.add(1, 2), lambda: lax.mul(2j, 1j),
             lambda: lax.sin(1.0), lambda: lax.lt(1.0, 2.0), lambda: lax.max(1.0, 2.0),
             lambda: lax.sub(2 ** 62, -(2 ** 62) + 1), lambda: lax.add(2 ** 62, 2 ** 62)]
    for f in calls:
        a, b, j = f(), f(), ft.jit(f)()
        assert _typed(a) == _typed(b) == _typed(j)
        np.testing.assert_array_equal(np.asarray(a), np.asarray(j))
    # JAX 0.10.2 (x64): int64 arithmetic, wrapping
    assert lax.sub(2 ** 62, -(2 ** 62) + 1).tolist() == 9223372036854775807
    assert lax.add(2 ** 62, 2 ** 62).tolist() == -9223372036854775808
    assert _typed(lax.add(1.0, 2.0)) == ("float64", True) and lax.add(1.0, 2.0).tolist() == 3.0
    with pytest.raises(TypeError, match="sin"):
        lax.sin(1)
    with pytest.raises(TypeError):
        lax.bitwise_and(1.0, 2.0)
    with pytest.raises(TypeError):
        lax.add(1, 2.0)
    with pytest.raises(OverflowError):
        lax.add(2 ** 70, 1)
