"""Typed PRNG keys in functrans.numpy's creation, comparison and arithmetic functions against JAX
0.10.2 (values measured with ``jax.random`` in /work/jaxvenv and hard-coded): creation
functions with a key dtype or a key fill, ``array``/``asarray`` of keys, ``equal`` /
``not_equal`` of whole keys, and JAX's TypeError for arithmetic on keys."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax, random

from tests.test_typed_keys_surface import K5, ONES32, both, kd, keys  # noqa: F401


def test_creation_functions_with_key_dtype_as_jax():
    k = random.split(random.key(789543))
    assert kd(k).tolist() == [[2081950096, 244262428], [1428835926, 2393052953]]
    assert both(fnp.zeros_like, k) == [[[0, 0], [0, 0]]] * 2
    assert both(fnp.ones_like, k) == [[[1, 1], [1, 1]]] * 2
    assert both(lambda x: fnp.full_like(x, 100), k) == [[[100, 100], [100, 100]]] * 2
    assert both(lambda x: fnp.full_like(x, random.key(42)), k) == [[[0, 42], [0, 42]]] * 2
    assert both(lambda x: fnp.ones(x.shape, dtype=x.dtype), k) == [[[1, 1], [1, 1]]] * 2
    assert both(lambda x: fnp.full((3,), x[1]), k) == [[kd(k)[1].tolist()] * 3] * 2
    assert fnp.zeros_like(k, dtype=np.float32).tolist() == [0.0, 0.0]   # numbers again
    assert both(fnp.array, k) == [kd(k).tolist()] * 2
    assert both(lambda x: fnp.asarray(x, dtype=x.dtype), k) == [kd(k).tolist()] * 2
    assert both(lambda x: fnp.array([x[1], x[0]]), k) == [kd(k)[::-1].tolist()] * 2
    with pytest.raises(ValueError, match="Cannot convert_element_type from key<fry> to uint32"):
        fnp.asarray(k, dtype=np.uint32)


def test_numpy_functions_refuse_keys_as_jax():
    k = keys()
    for f in (lambda: fnp.add(k, 1), lambda: ft.jit(lambda x: fnp.add(x, 1))(k)):
        with pytest.raises(TypeError, match=r"add does not accept dtypes key<fry>, int"):
            f()
    with pytest.raises(TypeError, match="add does not accept dtype key<fry>"):
        fnp.add(k, k)
    with pytest.raises(TypeError, match="negative does not accept dtype key<fry>"):
        fnp.negative(k)


def test_equal_compares_whole_keys_as_jax():
    k = keys()
    assert fnp.equal(k, k[0]).tolist() == [True, False, False, False]
    assert fnp.not_equal(k, k[0]).tolist() == [False, True, True, True]
    assert ft.jit(fnp.equal)(k, k[::-1]).tolist() == [False] * 4
