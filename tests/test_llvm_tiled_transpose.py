"""Transposing kernels walk tiles (``backends.llvm.kernels.KernelEmitter._tile_axis``):
their values are bit-identical to numpy's on every shape (edge tiles cut short),
dtype, layout and thread split, and kernels that do not transpose keep their loops.
"""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

RNG = np.random.default_rng(0)


def _arr(shape, dtype):
    if dtype == np.bool_:
        return RNG.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-1000, 1000, shape).astype(dtype)
    x = RNG.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def _ir(f, *args):
    return ft.jit(f, backend="cpu").lower(*args).compile().as_text()


@pytest.mark.parametrize("shape", [(1, 300), (300, 1), (33, 65), (1000, 3), (3, 1000),
                                   (32, 32), (64, 97), (129, 257)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64,
                                   np.bool_, np.complex64, np.complex128])
def test_transpose_copy_bit_identical(shape, dtype):
    x = _arr(shape, dtype)
    got = np.asarray(ft.jit(lambda a: fnp.transpose(a) * 1)(x))
    assert got.dtype == (x.T * 1).dtype
    np.testing.assert_array_equal(got, x.T * 1)


@pytest.mark.parametrize("shape,perm", [((5, 40, 70), (0, 2, 1)), ((40, 3, 70), (2, 1, 0)),
                                        ((4, 33, 2, 65), (0, 3, 2, 1)),
                                        ((2, 64, 8, 64), (0, 2, 1, 3)),
                                        ((3, 50, 60, 2), (0, 2, 1, 3)),
                                        ((6, 7, 45, 50), (3, 0, 2, 1))])
def test_permutations_bit_identical(shape, perm):
    x = _arr(shape, np.float32)
    y = _arr(tuple(shape[p] for p in perm), np.float32)
    got = ft.jit(lambda a, b: fnp.transpose(a, perm) * 2.0 + b)(x, y)
    np.testing.assert_array_equal(np.asarray(got), np.transpose(x, perm) * np.float32(2.0) + y)


def test_batched_and_noncontiguous_inputs():
    x = _arr((3, 90, 140), np.float64)
    f = ft.jit(lambda a: fnp.swapaxes(a[:, ::2, 1::3], 1, 2) - 1.0)
    np.testing.assert_array_equal(np.asarray(f(x)), np.swapaxes(x[:, ::2, 1::3], 1, 2) - 1.0)
    g = ft.vmap(ft.jit(lambda a: a.T + a.T * a.T))
    np.testing.assert_array_equal(np.asarray(g(x)), np.swapaxes(x, 1, 2) + np.swapaxes(x, 1, 2) ** 2)


def test_threaded_transposing_kernel_splits_exactly():
    # sin is compute-heavy: a kernel this large runs on the thread pool, shares of its
    # outer (tiled) axis that need not fall on tile boundaries
    x = _arr((1031, 517), np.float64)
    f = ft.jit(lambda a: fnp.sin(a.T) * 3.0)
    assert "tloop" in _ir(lambda a: fnp.sin(a.T) * 3.0, x)
    np.testing.assert_array_equal(np.asarray(f(x)), np.asarray(ft.jit(fnp.sin)(x.T.copy())) * 3.0)


def test_only_transposing_kernels_tile():
    x = _arr((256, 128), np.float32)
    assert "tloop" in _ir(lambda a: a.T + 0, x)
    assert "tloop" not in _ir(lambda a: a * 2 + 1, x)
    assert "tloop" not in _ir(lambda a: fnp.sum(a.T * 2, axis=1), x)   # a reduction: order kept
    assert "tloop" not in _ir(lambda a: a.T + 0, _arr((8, 8), np.float32))   # fits in cache


@pytest.mark.parametrize("shape", [(32, 512), (256, 256), (64, 96)])
def test_tile_element_loop_unrolled_not_scattered(shape):
    # the tile's innermost loop steps along the output's strided axis: left to LLVM's
    # unroll threshold it was vectorised into scatters (4x slower on a 32 x 512 a + b.T);
    # unrolled, the loop along the output's rows is vectorised instead (whole tiles
    # only: an edge tile keeps its loop)
    a, b = _arr(shape, np.float32), _arr(shape[::-1], np.float32)
    text = _ir(lambda a, b: a + b.T, a, b)
    assert '"llvm.loop.unroll.full"' in text
    assert "masked.scatter" not in text
    np.testing.assert_array_equal(np.asarray(ft.jit(lambda a, b: a + b.T)(a, b)), a + b.T)
