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


# jax 0.10.2, eager and jitted alike: maximum/minimum order -0.0 below +0.0 in either
# operand order; fmax/fmin are where(x > y | isnan(y), x, y) and give y on a tie; clip is
# minimum(hi, maximum(lo, x)); cummax/cummin and scatter max/min combine as maximum/minimum
_PAIRS = [(0.0, -0.0), (-0.0, 0.0), (0.0, 0.0), (-0.0, -0.0)]
_PAIR_WANT = {"maximum": [False, False, False, True], "minimum": [True, True, False, True],
              "fmax": [True, False, False, True], "fmin": [True, False, False, True]}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", MODES)
def test_elementwise_extremes_order_signed_zeros_as_jax(mode, dtype):
    run = MODES[mode]
    x = np.array([p[0] for p in _PAIRS], dtype)
    y = np.array([p[1] for p in _PAIRS], dtype)
    for name, want in _PAIR_WANT.items():
        got = run(getattr(fnp, name))(x, y)
        assert got.dtype == dtype and _sign(got) == want, (mode, name, _sign(got))
    clip = [(-0.0, 0.0, 1.0, False), (0.0, -0.0, 1.0, False), (-0.0, -1.0, 0.0, True),
            (0.0, -1.0, -0.0, True), (-0.0, 0.0, 0.0, False), (0.0, -0.0, -0.0, True)]
    for v, lo, hi, neg in clip:
        got = run(lambda a, lo=lo, hi=hi: fnp.clip(a, lo, hi))(np.array([v], dtype))
        assert _sign(got) == [neg], (mode, "clip", v, lo, hi)
    z = np.array([0.0, -0.0, 0.0, -0.0], dtype)
    assert _sign(run(lambda a: ft.lax.cummax(a, 0))(z)) == [False] * 4
    assert _sign(run(lambda a: ft.lax.cummin(a, 0))(z[::-1].copy())) == [True] * 4
    assert _sign(run(lambda a: ft.lax.cummax(a, 0, reverse=True))(z)) == [False] * 3 + [True]
    neg, pos = fnp.full(2, -0.0, dtype), fnp.zeros(2, dtype)
    assert _sign(run(lambda a: neg.at[np.array([0, 0, 1])].max(a))(z[1:])) == [False, True]
    assert _sign(run(lambda a: pos.at[np.array([0, 1, 1])].min(a))(z[:3])) == [False, True]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", MODES)
def test_sign_keeps_the_sign_of_zero_as_jax(mode, dtype):
    """jax 0.10.2: sign(-0.0) is -0.0 (numpy's is 0.0, which eager and the decomposition
    for the native backends followed); nan stays nan."""
    got = MODES[mode](fnp.sign)(np.array([-0.0, 0.0, -2.0, 3.0, np.nan], dtype))
    assert got.dtype == dtype and _sign(got[:4]) == [True, False, True, False]
    assert got[2:4].tolist() == [-1.0, 1.0] and np.isnan(got[4])


def test_extremes_take_a_python_literal_first_beside_a_weak_tracer():
    """maximum(0.1, weak traced float) raised AttributeError ('float' object has no
    attribute 'dtype'): a schedule ``maximum(0.1, exp(-c * step))`` on a scan's Python-int
    step counter (round 9 programs). Values as JAX 0.10.2's; complex literals too."""
    def body(c, _):
        t = fnp.exp(-3e-3 * (c - 100))
        return c + 50, (fnp.maximum(0.9, t), fnp.minimum(1.1, t), fnp.maximum(t, 0.9),
                        fnp.maximum(1j, c * 1j + 0.5), fnp.minimum(0.5 + 60j, c * 1j + 0.5))
    _, (a, b, c, d, e) = ft.lax.scan(body, 0, None, length=4)
    t = np.exp(-3e-3 * (np.arange(0, 200, 50) - 100))
    np.testing.assert_allclose(a, np.maximum(0.9, t), rtol=1e-15)
    np.testing.assert_allclose(b, np.minimum(1.1, t), rtol=1e-15)
    np.testing.assert_allclose(c, np.maximum(0.9, t), rtol=1e-15)
    z = np.arange(0, 200, 50) * 1j + 0.5
    np.testing.assert_array_equal(d, np.maximum(1j, z))
    np.testing.assert_array_equal(e, np.minimum(0.5 + 60j, z))
    assert ft.jit(lambda s: fnp.maximum(0.5, s * 1.0))(3) == 3.0
