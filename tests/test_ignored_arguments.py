"""Arguments functrans accepted and then ignored, where JAX's result depends on them (found
by the ported10 programs and an unused-parameter scan of the public functions). Expected
values are JAX 0.10.2's (x64), stored here: put_along_axis(mode=) clamped nothing,
polyfit(rcond=) kept every singular value (and solved the normal equations), and
mask_indices(size=) returned the unpadded indices."""
import numpy as np

import functrans as ft
import functrans.numpy as fnp


def test_put_along_axis_mode():
    a = np.zeros((2, 3))
    got = fnp.put_along_axis(a, np.array([[5], [1]]), 1.0, axis=1, inplace=False, mode="clip")
    np.testing.assert_array_equal(np.asarray(got), [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    got = fnp.put_along_axis(a, np.array([[5], [-1]]), 1.0, axis=1, inplace=False)
    np.testing.assert_array_equal(np.asarray(got), [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]])


def test_polyfit_rcond_drops_small_singular_values():
    t = np.linspace(0, 1, 6)
    y = t ** 2
    want = [0.338156646177257, 0.29625408297045525, 0.16201059653631708]
    np.testing.assert_allclose(np.asarray(fnp.polyfit(t, y, 2, rcond=0.5)), want, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ft.jit(lambda y: fnp.polyfit(t, y, 2, rcond=0.5))(y)),
                               want, rtol=1e-12)
    g = ft.grad(lambda y: fnp.sum(fnp.polyfit(t, y, 2, rcond=0.5) ** 2))(y)
    np.testing.assert_allclose(np.asarray(g), [0.05213211597923116, 0.07555048109588113,
                                               0.10767386767386929, 0.14850227571319569,
                                               0.1980357052138603, 0.2562741561758631], rtol=1e-9)
    g = ft.grad(lambda y: fnp.sum(fnp.polyfit(t, y, 2) ** 2))(y)
    np.testing.assert_allclose(np.asarray(g), [4.46428571428571, -0.8928571428571422,
                                               -3.571428571428568, -3.5714285714285685,
                                               -0.8928571428571411, 4.464285714285711], rtol=1e-9)


def test_mask_indices_size():
    rows, cols = fnp.mask_indices(3, fnp.triu, size=8)
    np.testing.assert_array_equal(np.asarray(rows), [0, 0, 0, 1, 1, 2, 0, 0])
    np.testing.assert_array_equal(np.asarray(cols), [0, 1, 2, 1, 2, 2, 0, 0])
    rows, cols = fnp.mask_indices(3, fnp.triu, size=2)
    np.testing.assert_array_equal(np.asarray(rows), [0, 0])
    np.testing.assert_array_equal(np.asarray(cols), [0, 1])


def test_lax_slice_in_dim_none_and_negative_bounds():
    # JAX 0.10.2 runs these; functrans raised (int(None), negative bounds) and had other
    # keyword names (start/limit for start_index/limit_index)
    x = np.arange(6.0)
    for (lo, hi), want in [((None, None), [0., 1., 2., 3., 4., 5.]), ((1, None), [1., 2., 3., 4., 5.]),
                           ((-3, -1), [3., 4.]), ((None, -2), [0., 1., 2., 3.])]:
        np.testing.assert_array_equal(np.asarray(ft.lax.slice_in_dim(x, lo, hi)), want)
        np.testing.assert_array_equal(np.asarray(ft.jit(lambda x: ft.lax.slice_in_dim(x, lo, hi))(x)), want)
    got = ft.lax.slice_in_dim(np.arange(12.0).reshape(2, 6), start_index=1, limit_index=5, stride=2, axis=1)
    np.testing.assert_array_equal(np.asarray(got), [[1., 3.], [7., 9.]])
    g = ft.grad(lambda x: ft.lax.slice_in_dim(x, -3, None).sum())(x)
    np.testing.assert_array_equal(np.asarray(g), [0., 0., 0., 1., 1., 1.])
