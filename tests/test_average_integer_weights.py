"""average of integer data with integer weights against JAX 0.10.2 (x64; JAX computes in
float32, so 1e-6) and numpy (float64, exact here). Found by differential fuzzing (round
12): the products a * w ran in int8 and wrapped (127 * 2 = -2), so
average([-128, 127, 3, -1], weights=[1, 2, 3, 4]) was -12.5 (JAX and numpy 13.1)."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

Y = np.array([[-128, 127, 3, -1], [127, -128, 100, 120], [-100, 90, -128, 127]], np.int8)
W = np.array([1, 2, 3, 4], np.int8)
W0 = np.array([100, 120, -128], np.int8)


@pytest.mark.parametrize("jitted", [False, True])
def test_integer_weighted_average_does_not_wrap(jitted):
    run = ft.jit if jitted else (lambda f: f)
    got = run(lambda a: fnp.average(a, axis=1, weights=W))(Y)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, [13.100000381469727, 65.0999984741211, 20.399999618530273],
                               rtol=1e-6)                                # JAX's
    np.testing.assert_allclose(got, np.average(Y, axis=1, weights=W), rtol=1e-15)
    avg, scl = run(lambda a: fnp.average(a, axis=0, weights=W0, returned=True))(Y)
    np.testing.assert_allclose(avg, [165.6521759033203, -154.13043212890625,
                                     311.7826232910156, -21.2608699798584], rtol=1e-6)
    assert scl.tolist() == [92.0] * 4
    u = run(lambda a: fnp.average(a, axis=1, weights=W.astype(np.uint8)))(Y.astype(np.uint8))
    np.testing.assert_allclose(u, [141.1, 116.3, 122.8], rtol=1e-15)     # numpy's
