"""Integer edge rules that eager and jit must share, found by differential fuzzing
(rounds 12-13) against numpy and JAX 0.10.2.

- ``round`` of integers to ``decimals < 0``: eager wrapped as numpy (int8 127 -> -126),
  jit saturated (127): JAX raises NotImplementedError. Now both round exactly in integer
  arithmetic and wrap as integer products do (numpy's answer through int16; numpy's
  float64 steps give 4611686018427387904, not a multiple of ten, for 2**62 + 1).
- A Python int outside an integer array's dtype in a comparison: jit raised
  OverflowError (``int8 < 300``); eager and numpy 2 give the true answer. JAX 0.10.2
  wraps 300 to 44 (``int8 100 < 300`` is False there), a wrong number not copied.
- Integer ``power`` with a negative exponent: eager raises as numpy; under a trace the
  value is 1 / x**n truncated toward zero (JAX 0.10.2: -2**63 for 2**-1)."""
import operator

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

A8 = np.array([-128, 127, -126, 5, -5, 15, -15, 25, -25, 44, -45, -50, 50], np.int8)


def _modes(f):
    return {"eager": f, "jit": ft.jit(f), "interpret": ft.jit(f, backend="interpret"),
            "vmap": ft.vmap(f)}


def _exact_round(v, k, dt):
    """Half to even to a multiple of 10**k in Python ints, wrapped to ``dt``."""
    q, r = divmod(v, 10 ** k)
    q += 2 * r > 10 ** k or (2 * r == 10 ** k and q % 2)
    bits = 8 * np.dtype(dt).itemsize
    w = (q * 10 ** k) % 2 ** bits
    return w - 2 ** bits if np.dtype(dt).kind == "i" and w >= 2 ** (bits - 1) else w


@pytest.mark.parametrize("mode", ["eager", "jit", "interpret", "vmap"])
def test_round_integers_negative_decimals(mode):
    for k, want in ((1, [126, -126, 126, 0, 0, 20, -20, 20, -20, 40, -40, -50, 50]),
                    (2, [-100, 100, -100] + [0] * 10), (3, [0] * 13)):   # numpy's
        got = _modes(lambda a: fnp.round(a, -k))[mode](A8)
        assert got.dtype == np.int8 and got.tolist() == want, (k, got)
    u8 = A8.view(np.uint8)
    got = _modes(lambda a: fnp.around(a, -1))[mode](u8)
    assert got.dtype == np.uint8
    assert got.tolist() == [130, 130, 130, 0, 250, 20, 240, 20, 230, 40, 210, 210, 50]
    a64 = np.array([2 ** 62 + 1, 2 ** 62 + 5, 2 ** 62 + 15, 2 ** 63 - 1, -2 ** 63], np.int64)
    got = _modes(lambda a: fnp.round(a, -1))[mode](a64)
    assert got.tolist() == [4611686018427387900, 4611686018427387910, 4611686018427387920,
                            -9223372036854775806, 9223372036854775806]
    got = _modes(lambda a: fnp.round(a, -19))[mode](a64)       # +-10**19 wrapped
    assert got.tolist() == [0, 0, 0, -8446744073709551616, 8446744073709551616]


def test_round_integers_every_dtype_against_exact():
    rng = np.random.default_rng(13)
    for dt in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
               np.uint64):
        ii = np.iinfo(dt)
        a = np.concatenate([np.array([ii.min, ii.max, ii.max - 1, 0, 5, 15, 25], dt),
                            rng.integers(ii.min, ii.max, 24, dtype=dt, endpoint=True)])
        for k in (1, 2, 3, 5, 9, 18, 19, 20):
            want = [_exact_round(int(v), k, dt) for v in a]
            for name, f in _modes(lambda x: fnp.round(x, -k)).items():
                got = f(a)
                assert got.dtype == dt and got.tolist() == want, (dt, k, name)


def test_round_method_of_integers_is_fnp_round():
    a32 = fnp.asarray(np.array([2 ** 31 - 1, -2 ** 31, 15], np.int32))
    assert a32.round(-1).tolist() == [-2147483646, 2147483646, 20]    # numpy: -2**31 twice
    assert ft.jit(lambda x: x.round(-1))(a32).tolist() == [-2147483646, 2147483646, 20]
    assert fnp.asarray(np.float16([1.2345, 2.5])).round(2).tolist() == [1.23046875, 2.5]


def test_round_decimals_of_float16_under_grad():
    # the rounded value is a constant to grad: its cast back to float16 raised
    # AttributeError ('Array' object has no attribute 'aval'); JAX 0.10.2 grads below
    x = np.array([1.5, 2.25, -0.126], np.float16)
    g = ft.grad(lambda a: fnp.sum(fnp.asarray(fnp.round(a, 2), np.float32)))(x)
    assert g.dtype == np.float16 and g.tolist() == [0.0, 0.0, 0.0]
    g = ft.jit(ft.grad(lambda a: fnp.sum(fnp.round(a, 2) * a)))(x)
    assert g.tolist() == [1.5, 2.25, -0.1300048828125]


OPS = (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne)


@pytest.mark.parametrize("mode", ["eager", "jit", "interpret", "vmap"])
def test_compare_with_python_int_outside_dtype(mode):
    a = np.array([1, -5, 100], np.int8)
    got = _modes(lambda x: (x < 300, x > 300, x == 300, 300 >= x, x != -129, x < -200))[mode](a)
    assert [g.tolist() for g in got] == [[True] * 3, [False] * 3, [False] * 3, [True] * 3,
                                        [True] * 3, [False] * 3]   # numpy 2's (JAX wraps)
    for dt in (np.uint8, np.int16, np.uint32, np.int64, np.uint64):
        ii = np.iinfo(dt)
        x = np.array([ii.min, 0, ii.max], dt)
        for v in (ii.min - 1, ii.max + 1, -2 ** 70, 2 ** 70):
            for op in OPS:
                want = [op(int(e), v) for e in x]
                got = _modes(lambda t: op(t, v))[mode](x)
                assert got.dtype == np.bool_ and got.tolist() == want, (dt, v, op)
                got = _modes(lambda t: fnp.less(v, t))[mode](x)
                assert got.tolist() == [v < int(e) for e in x], (dt, v)


@pytest.mark.parametrize("mode", ["jit", "interpret", "vmap"])
def test_integer_power_negative_exponent_traced(mode):
    b = np.array([0, 0, 1, -1, -1, 2, -2, 3, 127], np.int8)
    e = np.array([-1, -2, -5, -3, -2, -1, -1, -2, -1], np.int8)
    want = [0, 0, 1, -1, 1, 0, 0, 0, 0]       # 1 / b**-e truncated toward zero
    for dt in (np.int8, np.int32, np.int64):
        got = _modes(fnp.power)[mode](b.astype(dt), e.astype(dt))
        assert got.dtype == dt and got.tolist() == want


def test_integer_power_negative_exponent_eager_raises():
    with pytest.raises(ValueError, match="negative"):
        fnp.power(np.int64([2]), np.int64([-1]))
    with pytest.raises(ValueError, match="negative"):    # a Python int exponent (JAX: TypeError)
        ft.jit(lambda x: x ** -1)(np.int64([2]))
