"""fnp.ufunc / frompyfunc against numpy's ufunc methods: call (broadcasting, several
outputs, empty input), reduce (axes, keepdims, initial, identity), accumulate,
reduceat, outer, at (repeated indices, unary and binary); jit, vmap and grad."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

_ADD = fnp.frompyfunc(lambda x, y: x + y, 2, 1, identity=0)
_MUL = fnp.ufunc(lambda x, y: x * y, 2, 1, identity=1)
_A = np.arange(1.0, 25.0).reshape(2, 3, 4)


def _eq(got, want):
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_call_broadcasts_and_returns_several_outputs():
    _eq(_ADD(_A, np.arange(4.0)), _A + np.arange(4.0))
    q, r = fnp.frompyfunc(lambda x, y: (x // y, x % y), 2, 2)(np.arange(7), 3)
    _eq(q, np.arange(7) // 3)
    _eq(r, np.arange(7) % 3)
    assert _ADD(np.zeros((0, 2)), 1.0).shape == (0, 2)
    with pytest.raises(TypeError):
        _ADD(_A)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, None, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduce_against_numpy(axis, keepdims):
    for ours, ref in ((_ADD, np.add), (_MUL, np.multiply)):
        _eq(ours.reduce(_A, axis=axis, keepdims=keepdims),
            ref.reduce(_A, axis=axis, keepdims=keepdims))
        _eq(ours.reduce(_A, axis=axis, keepdims=keepdims, initial=2.0),
            ref.reduce(_A, axis=axis, keepdims=keepdims, initial=2.0))


def test_reduce_of_empty_input():
    _eq(_ADD.reduce(np.zeros((0, 3))), np.zeros(3))
    _eq(_MUL.reduce(np.zeros((2, 0)), axis=1), np.ones(2))
    with pytest.raises(ValueError):
        fnp.frompyfunc(lambda x, y: x + y, 2, 1).reduce(np.zeros((0, 3)))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_accumulate_reduceat_outer_against_numpy(axis):
    _eq(_ADD.accumulate(_A, axis=axis), np.add.accumulate(_A, axis=axis))
    _eq(_MUL.accumulate(_A, axis=axis), np.multiply.accumulate(_A, axis=axis))
    idx = [0, 1, 0] if _A.shape[axis] > 1 else [0]
    _eq(_ADD.reduceat(_A, idx, axis=axis), np.add.reduceat(_A, idx, axis=axis))
    _eq(_ADD.reduceat(np.arange(8), [0, 4, 1, 5]), np.add.reduceat(np.arange(8), [0, 4, 1, 5]))
    _eq(_MUL.outer(np.arange(3.0), _A[0]), np.multiply.outer(np.arange(3.0), _A[0]))


def test_at_against_numpy():
    want = np.zeros(5)
    np.add.at(want, [0, 0, 2, 4, 0], 1.5)
    _eq(_ADD.at(np.zeros(5), np.array([0, 0, 2, 4, 0]), 1.5, inplace=False), want)
    want = np.arange(12.0).reshape(3, 4)
    np.multiply.at(want, (np.array([0, 2, 0]), np.array([1, 3, 1])), np.array([2.0, 3.0, 4.0]))
    got = _MUL.at(np.arange(12.0).reshape(3, 4), (np.array([0, 2, 0]), np.array([1, 3, 1])),
                  np.array([2.0, 3.0, 4.0]), inplace=False)
    _eq(got, want)
    neg = fnp.frompyfunc(lambda x: -x, 1, 1)
    _eq(neg.at(np.arange(4.0), np.array([1, 3, 3]), inplace=False), [0.0, -1.0, 2.0, 3.0])
    with pytest.raises(NotImplementedError):
        _ADD.at(np.zeros(3), np.array([0]), 1.0)


def test_jit_vmap_grad():
    a = np.arange(1.0, 6.0)
    _eq(ft.jit(_MUL.reduce)(a), 120.0)
    _eq(ft.vmap(_ADD.accumulate)(_A[0]), np.add.accumulate(_A[0], axis=1))
    _eq(ft.grad(lambda x: _MUL.reduce(x))(a), 120.0 / a)
    _eq(ft.jit(lambda x: _ADD.at(x, np.array([1, 1]), 2.0, inplace=False))(a),
        a + np.array([0, 4.0, 0, 0, 0]))
    assert _ADD.nin == 2 and _ADD.nout == 1 and _ADD.identity == 0
