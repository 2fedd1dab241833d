"""trapezoid of integer and bool samples (and integer sample points) against JAX 0.10.2
(x64): the data are converted to float before the pairwise sums and the differences of x.
Found by differential fuzzing (round 12): int8 y summed as int8 wrapped (-128 + -1 is
127), so trapezoid gave 66.5 where JAX gives -61.5 (numpy's own int8 sums wrap too)."""
import numpy as np

import functrans as ft
import functrans.numpy as fnp

Y = np.array([[-128, 7, 3], [-1, 24, 8], [7, -3, -127]], np.int8)
X = np.array([-128, 127, 100], np.int8)


def test_trapezoid_of_int8_does_not_wrap_as_jax():
    for f in (fnp.trapezoid, ft.jit(fnp.trapezoid, static_argnames="axis")):
        got = f(Y, axis=0)
        assert got.dtype == np.float64
        assert got.tolist() == [-61.5, 26.0, -54.0]                     # JAX's
    got = ft.jit(lambda a, b: fnp.trapezoid(a, x=b, axis=0))(Y, X)
    assert got.tolist() == [-16528.5, 3669.0, 3009.0]                   # JAX's
    assert fnp.trapezoid(np.array([250, 10, 255], np.uint8)).item() == 262.5
    assert fnp.trapezoid(np.array([True, True, False])).item() == 1.5


def test_trapezoid_float_dtypes_and_gradient_unchanged():
    assert fnp.trapezoid(np.float32([1, 2])).dtype == np.float32
    assert fnp.trapezoid(np.float16([1, 2])).dtype == np.float16
    g = ft.grad(lambda a: fnp.trapezoid(a, x=X))(np.array([1.0, 2.0, 3.0]))
    assert g.tolist() == [127.5, 114.0, -13.5]                          # JAX's
