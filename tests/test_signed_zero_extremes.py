"""max/min of signed zeros: -0.0 is below +0.0 wherever they are, eagerly, under every
transform and on every backend, as JAX gives it (found by the differential fuzzer:
numpy's own answer depends on the order of the elements and on its SIMD path, and eager
results had followed it while compiled code did not)."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp


def _cases():
    out = []
    for n in (2, 3, 17, 1000):
        first = np.zeros(n)
        first[0] = -0.0
        last = np.zeros(n)
        last[-1] = -0.0
        out += [first, last, np.full(n, -0.0), np.zeros(n)]
    return out


def _sign(x):
    return np.signbit(np.asarray(x, dtype=np.float64)).tolist()


MODES = {
    "eager": lambda f: f,
    "jit_cpu": lambda f: ft.jit(f, backend="cpu"),
    "jit_interpret": lambda f: ft.jit(f, backend="interpret"),
}


@pytest.mark.parametrize("mode", MODES)
def test_min_of_signed_zeros_is_negative_zero_and_max_positive(mode):
    run = MODES[mode]
    for x in _cases():
        has_neg, has_pos = bool(np.signbit(x).any()), bool((~np.signbit(x)).any())
        assert _sign(run(fnp.min)(x)) is has_neg, (mode, x[:3], x[-3:])
        assert _sign(run(fnp.max)(x)) is (not has_pos), (mode, x[:3], x[-3:])
        assert _sign(run(lambda v: fnp.asarray(v).min())(x)) is has_neg


@pytest.mark.parametrize("mode", MODES)
def test_axis_keepdims_and_vmap_keep_the_rule(mode):
    run = MODES[mode]
    x = np.array([[-0.0, 0.0, 0.0], [0.0, 0.0, -0.0], [0.0, 0.0, 0.0], [-0.0, 1.0, -0.0]])
    want_min = [True, True, False, True]
    want_max = [False, False, False, False]
    assert _sign(run(lambda v: fnp.min(v, axis=1))(x)) == want_min
    assert _sign(run(lambda v: fnp.max(v, axis=1, keepdims=True))(x).ravel()) == want_max
    assert _sign(run(ft.vmap(fnp.min))(x)) == want_min
    assert _sign(run(lambda v: fnp.min(v, axis=0))(x)) == [True, False, True]
    # float32 and nan keep numpy's rules otherwise
    y = np.array([[np.nan, -0.0], [0.0, -0.0]], np.float32)
    got = np.asarray(run(lambda v: fnp.min(v, axis=1))(y))
    assert np.isnan(got[0]) and _sign(got[1:]) == [True] and got.dtype == np.float32
