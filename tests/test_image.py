"""functrans.image (jax.image) against values JAX 0.10.2 computed (x64): every method, up
and down, with and without antialiasing, edge padding (cubic-pytorch), a traced scale's
gradient, and jit/vmap agreeing with the eager call."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import image

X = np.array([[0.5, -1.0, 2.0, 3.0], [1.5, 0.0, -2.0, 1.0], [0.25, 4.0, 1.0, -0.5]])

JAX = [  # method, shape, antialias, jax.image.resize(X, shape, method, antialias)
    ("linear", (5, 3), True, [[0.05, 0.5, 2.7], [0.45, -0.1, 1.66], [1.05, -1.0, 0.1],
                              [1.245, 1.1, 0.01], [1.375, 2.5, -0.05]]),
    ("cubic", (2, 6), True, [[1.012624609276, 0.019143612501, -0.776013799715, 0.195974340111,
                              1.551364365971, 2.484064796824],
                             [0.601678001183, 1.795415919177, 2.406215630759, 0.146046051067,
                              -0.295958832971, -0.045186702712]]),
    ("lanczos3", (4, 2), False, [[-0.538288554678, 3.132517724547], [0.294997296809, 0.851155672358],
                                 [1.769384110059, -0.863933517854], [2.2490640888, -0.10988674162]]),
    ("area", (2, 3), True, [[0.458333333333, -0.0, 1.916666666667], [1.166666666667, 1.333333333333, 0.0]]),
    ("cubic-pytorch", (5, 2), False, [[-0.67225, 3.11425], [-0.067125, 1.388125], [0.9375, -0.6875],
                                      [1.942125, -0.535625], [2.54725, 0.03175]]),
    ("nearest", (5, 3), True, [[0.5, 2.0, 3.0], [0.5, 2.0, 3.0], [1.5, -2.0, 1.0],
                               [0.25, 1.0, -0.5], [0.25, 1.0, -0.5]]),
]


@pytest.mark.parametrize("method, shape, antialias, want", JAX, ids=[c[0] for c in JAX])
def test_resize_matches_jax(method, shape, antialias, want):
    got = image.resize(X, shape, method, antialias=antialias)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-11)
    jitted = ft.jit(lambda x: image.resize(x, shape, method, antialias=antialias))(X)
    np.testing.assert_allclose(jitted, got, rtol=1e-12, atol=1e-14)
    batched = ft.vmap(lambda x: image.resize(x, shape, method, antialias=antialias))(
        np.stack([X, 2 * X]))
    np.testing.assert_allclose(batched[1], 2 * np.asarray(got), rtol=1e-12, atol=1e-14)


def test_resize_dtypes_and_traced_scale_gradient():
    assert image.resize(fnp.arange(3), (6,), "nearest").dtype == fnp.arange(3).dtype
    assert image.resize(fnp.ones(3, np.float32), (5,), "linear").dtype == np.float32
    g = ft.grad(lambda s: fnp.sum(image.scale_and_translate(
        X, (3, 5), (1,), s, fnp.array([0.3]), "linear") ** 2))(fnp.array([1.2]))
    np.testing.assert_allclose(g, [7.077546296296], rtol=1e-10)   # JAX 0.10.2
    with pytest.raises(ValueError, match="Unknown resize method"):
        image.resize(X, (2, 2), "bogus")
