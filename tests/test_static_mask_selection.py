"""extract / compress / a boolean-mask compaction with a concrete (numpy) mask inside
vmap, jit and grad: the mask fixes the output size, so no size= is needed (JAX's vmap
and grad accept it). They raised ConcretizationError whenever the data was traced.
Values from JAX 0.10.2 (x64): jax.vmap / jax.grad of the same functions."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

C = np.array([[True, False], [False, True], [True, True]])
X = np.arange(6.0).reshape(3, 2)


def test_extract_and_compress_with_a_numpy_mask_under_vmap_as_jax():
    got = ft.vmap(lambda a: fnp.extract(C, a))(np.stack([X, X + 1]))
    assert got.tolist() == [[0.0, 3.0, 4.0, 5.0], [1.0, 4.0, 5.0, 6.0]]
    got = ft.vmap(lambda a: fnp.compress(np.array([True, False, True]), a, axis=0))(
        np.stack([X, X]))
    assert got.tolist() == [[[0.0, 1.0], [4.0, 5.0]], [[0.0, 1.0], [4.0, 5.0]]]


def test_extract_with_a_numpy_mask_under_grad_and_jit():
    g = ft.grad(lambda a: fnp.sum(fnp.extract(C, a) ** 2))(X)
    assert g.tolist() == [[0.0, 0.0], [0.0, 6.0], [8.0, 10.0]]        # JAX's
    assert ft.jit(lambda a: fnp.extract(C, a))(X).tolist() == [0.0, 3.0, 4.0, 5.0]
    assert ft.jit(ft.grad(lambda a: fnp.sum(fnp.extract(C, a) ** 2)))(X).tolist() == g.tolist()


def test_a_traced_mask_still_needs_size():
    with pytest.raises(ft.errors.ConcretizationError, match="size="):
        ft.jit(lambda a, c: fnp.extract(c, a))(X, C)


def test_compress_pads_a_short_numpy_mask_under_vmap():
    """A mask shorter than the axis is padded with False; the padding ran as a traced
    concatenate under vmap, so the mask became a tracer and compress raised (fuzz12)."""
    x = np.arange(24.0).reshape(2, 4, 3)
    got = ft.vmap(lambda a: fnp.compress(np.array([False, True]), a, axis=0))(x)
    assert got.tolist() == [[[3.0, 4.0, 5.0]], [[15.0, 16.0, 17.0]]]   # JAX's
    got = ft.vmap(lambda a: fnp.compress(np.array([False, False]), a, axis=-2))(x[..., :0])
    assert got.shape == (2, 0, 0)
