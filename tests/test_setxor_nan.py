"""setxor1d with NaNs against JAX 0.10.2 (x64) and numpy: NaN != NaN, so each array's
NaN is an element of its own and is kept (two NaNs when both arrays hold one). Found by
differential fuzzing (round 12): the NaN was dropped (membership by isin is False for
NaN), setxor1d([nan, 1, nan], [nan, 2]) gave [1, 2] for [1, 2, nan, nan]."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

NAN = np.nan
CASES = [  # (ar1, ar2, JAX's setxor1d, JAX's with size=6, fill_value=-5)
    ([NAN, 1.0, NAN], [NAN, 2.0], [1.0, 2.0, NAN, NAN], [1.0, 2.0, NAN, NAN, -5.0, -5.0]),
    ([NAN, 1.0, NAN], [2.0], [1.0, 2.0, NAN], [1.0, 2.0, NAN, -5.0, -5.0, -5.0]),
    ([1.0], [NAN, 1.0], [NAN], [NAN, -5.0, -5.0, -5.0, -5.0, -5.0]),
    ([NAN], [NAN], [NAN, NAN], [NAN, NAN, -5.0, -5.0, -5.0, -5.0]),
    ([1.0, 2.0], [2.0, 3.0], [1.0, 3.0], [1.0, 3.0, -5.0, -5.0, -5.0, -5.0]),
]


@pytest.mark.parametrize("a,b,want,want_sized", CASES)
def test_setxor1d_keeps_each_arrays_nan_as_jax(a, b, want, want_sized):
    a, b = np.array(a), np.array(b)
    np.testing.assert_array_equal(fnp.setxor1d(a, b), want)
    np.testing.assert_array_equal(fnp.setxor1d(a, b, size=6, fill_value=-5), want_sized)
    got = ft.jit(lambda x, y: fnp.setxor1d(x, y, size=6, fill_value=-5))(a, b)
    np.testing.assert_array_equal(got, want_sized)
    np.testing.assert_array_equal(fnp.setxor1d(a, b), np.setxor1d(a, b))
