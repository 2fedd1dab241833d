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
