"""``fnp.repeat(..., total_repeat_length=n)`` has length n as JAX's: a longer result is cut
short, a shorter one padded with the last started element, and ``repeats`` may be traced
(the point of the argument under jit). It used to be ignored: repeat(arange(4.0),
[1, 0, 3, 2], total_repeat_length=8) had 6 elements. Expected values are JAX 0.10.2's
(x64), stored here."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

A = np.arange(4.0)
R = np.array([1, 0, 3, 2])

# (repeats, axis, total, array, JAX 0.10.2's result)
CASES = [
    (R, None, 8, A, [0., 2., 2., 2., 3., 3., 3., 3.]),
    (R, None, 3, A, [0., 2., 2.]),
    (R, None, 0, A, []),
    (np.array([2, 1, 0, 0]), None, 5, A, [0., 0., 1., 3., 3.]),
    (np.array([2, 1]), None, 5, np.arange(2), [0, 0, 1, 1, 1]),
    (2, None, 4, np.float64(3.0), [3., 3., 3., 3.]),
    (2, 1, 4, np.arange(6.0).reshape(2, 3), [[0., 0., 1., 1.], [3., 3., 4., 4.]]),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_values_eager_and_jit(case):
    reps, axis, total, a, want = CASES[case]
    want = np.array(want, dtype=np.asarray(a).dtype)
    got = fnp.repeat(a, reps, axis=axis, total_repeat_length=total)
    np.testing.assert_array_equal(np.asarray(got), want)
    f = ft.jit(lambda a: fnp.repeat(a, reps, axis=axis, total_repeat_length=total))
    np.testing.assert_array_equal(np.asarray(f(a)), want)


def test_traced_repeats_under_jit_and_vmap():
    f = ft.jit(lambda a, r: fnp.repeat(a, r, total_repeat_length=8))
    np.testing.assert_array_equal(np.asarray(f(A, R)), [0., 2., 2., 2., 3., 3., 3., 3.])
    g = ft.vmap(lambda r: fnp.repeat(A, r, total_repeat_length=7))
    np.testing.assert_array_equal(np.asarray(g(np.array([R, [2, 2, 2, 2]]))),
                                  [[0., 2., 2., 2., 3., 3., 3.], [0., 0., 1., 1., 2., 2., 3.]])


def test_gradient_counts_the_kept_copies():
    # sum(repeat(v)[:6] ** 2): v[2] kept 3 times, v[3] twice (JAX 0.10.2: [0, 0, 12, 12])
    loss = lambda v, r: fnp.sum(fnp.repeat(v, r, total_repeat_length=6) ** 2)
    np.testing.assert_array_equal(np.asarray(ft.grad(loss)(A, R)), [0., 0., 12., 12.])
    np.testing.assert_array_equal(np.asarray(ft.jit(ft.grad(loss))(A, fnp.asarray(R))),
                                  [0., 0., 12., 12.])
