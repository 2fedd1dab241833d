"""Regressions found by running JAX 0.10.2's tests/lax_numpy_indexing_test.py against
functrans (driver in /work/jt33/jt13; each test names the JAX test it comes from)."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp


def test_traced_index_into_empty_axis_is_an_index_error():
    """testIndexingEmptyDimension: jit(lambda i: x[0, i])(0) with x of shape (2, 0) raised
    a ValueError from dynamic_slice's shape check; as JAX (and numpy eagerly), an
    IndexError. Slices of the empty axis still work."""
    x = fnp.ones((2, 0))
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 0"):
        ft.jit(lambda i: x[0, i])(0)
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 0"):
        x[0, 0]
    got = ft.jit(lambda i: (x[i, :], x[i, None], x[i, 1:], x[i, 1:3:2]))(1)
    assert [g.shape for g in got] == [(0,), (1, 0), (0,), (0,)]


_SCALAR_BOOL_INDICES = [
    True, False, (Ellipsis, True), (slice(None), True), (True, slice(None), True),
    np.index_exp[:2, 0, False], np.index_exp[:2, np.array([0, 2]), True],
    np.index_exp[np.array([1, 0]), :, True], np.index_exp[True, :, True, :, np.array(True)],
    (None, True, 1), (1, Ellipsis, True, None)]


@pytest.mark.parametrize("idx", _SCALAR_BOOL_INDICES, ids=str)
def test_scalar_bool_index_get_and_update(idx):
    """testScalarBoolUpdate (and x[True] under jit): a 0-d boolean index adds an axis of
    length 1 (True) or 0 (False) and counts as an advanced index (numpy's and JAX's
    rule); x.at[idx].set raised IndexError, jit(x[idx]) too (eager x[idx] went through
    numpy). Values against numpy's, which JAX's test compares with."""
    x = np.arange(24).reshape(2, 3, 4)
    want = x[idx]
    upd = (1 + np.arange(want.shape[-1] if want.ndim else 1)) * 100
    upd = upd.reshape(want.shape[-1:])
    set_want, add_want = x.copy(), x.copy()
    set_want[idx] = upd
    add_want[idx] += 5
    for get in (lambda v: v[idx], ft.jit(lambda v: v[idx])):
        got = get(fnp.asarray(x))
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    for put in (lambda v, u: v.at[idx].set(u), ft.jit(lambda v, u: v.at[idx].set(u))):
        np.testing.assert_array_equal(put(fnp.asarray(x), upd), set_want)
    np.testing.assert_array_equal(fnp.asarray(x).at[idx].add(5), add_want)


def test_scalar_bool_index_gradient_and_traced_mask():
    g = ft.grad(lambda v: fnp.sum(v[:, True] ** 2))(np.arange(3.0))
    np.testing.assert_array_equal(g, [0.0, 2.0, 4.0])
    with pytest.raises(ft.errors.NonConcreteBooleanIndexError):
        ft.jit(lambda v, b: v[b])(np.arange(3.0), np.bool_(True))
