"""lax operand rules JAX 0.10.2 has and functrans raised on (session 31), with values
JAX 0.10.2 computed (x64 on), stored here: lax.max/min on complex, lax.conj of real
arrays, lax.pow with an integer exponent array."""
import numpy as np

import functrans as ft
from functrans import lax

NAN = np.nan


def test_max_min_complex_lexicographic_with_jax_derivatives():
    x = np.complex64([1 + 2j, 1 + 1j, 2 + 0j, 1 + 1j, NAN + 0j, 1 + NAN * 1j])
    y = np.complex64([1 + 1j, 0 + 5j, 2 + 0j, 1 + 3j, 0j, 5 + 0j])
    # JAX: the pick is x where the comparison holds, so a NaN part loses
    np.testing.assert_array_equal(lax.max(x, y), [1 + 2j, 1 + 1j, 2, 1 + 3j, 0, 5])
    np.testing.assert_array_equal(lax.min(x, y), [1 + 1j, 5j, 2, 1 + 1j, 0, 5])
    np.testing.assert_array_equal(ft.jit(lax.min)(x, y), [1 + 1j, 5j, 2, 1 + 1j, 0, 5])
    out, t = ft.jvp(lax.max, (x, y), (np.ones(6, np.complex64), np.full(6, 2j, np.complex64)))
    assert out.dtype == np.complex64
    np.testing.assert_array_equal(t, [1, 1, 0.5 + 1j, 2j, 2j, 2j])   # JAX's; tie split
    g = ft.grad(lambda a, b: lax.max(a, b).real, argnums=(0, 1))(np.complex64(1 + 2j),
                                                                np.complex64(1 + 3j))
    np.testing.assert_array_equal(g, [0, 1])
    z = np.complex64([1 + 2j, 1 + 3j, 1 + 3j])
    np.testing.assert_array_equal(ft.grad(lambda a: lax.reduce_max(a, (0,)).real)(z),
                                  [0, 0.5, 0.5])
    np.testing.assert_array_equal(ft.vmap(lax.max)(x[None], y[None])[0], lax.max(x, y))


def test_conj_of_real_is_complex_as_jax():
    x = np.float32([1.0, 2.0])
    z = lax.conj(x)
    assert z.dtype == np.complex64 and lax.conj(np.float64(1)).dtype == np.complex128
    np.testing.assert_array_equal(z, [1, 2])
    p, t = ft.jvp(lax.conj, (x,), (np.float32([3.0, 4.0]),))
    assert t.dtype == np.complex64
    np.testing.assert_array_equal(t, [3, 4])
    (ct,) = ft.vjp(lax.conj, x)[1](np.complex64([1 + 2j, 3 - 1j]))
    assert ct.dtype == np.float32
    np.testing.assert_array_equal(ct, [1, 3])                        # JAX: real(ct)
    assert ft.grad(lambda v: lax.conj(v).imag)(np.float32(1.0)) == 0
    assert ft.grad(lambda v: (lax.conj(v) * (1 + 2j)).real)(np.float64(1.0)) == 1
    assert str(lax.conj(np.float64(-0.0))) == "(-0+0j)"
    for bad in (np.int32([1]), np.array([True]), np.float16([1.0])):
        try:
            lax.conj(bad)
        except TypeError:
            continue
        raise AssertionError(f"lax.conj({bad.dtype}) should raise, as JAX's")


def test_pow_integer_exponent_array_as_jax():
    x = np.float32([1.5, -2.0, 0.0, 0.0, 3.0, -0.5])
    n = np.int64([2, 3, 0, -1, -2, 5])
    v = lax.pow(x, n)
    assert v.dtype == np.float32
    np.testing.assert_allclose(v, [2.25, -8, 1, np.inf, 0.11111111, -0.03125], rtol=1e-7)
    t = ft.jvp(lambda a: lax.pow(a, n), (x,), (np.ones_like(x),))[1]
    want = [3, 12, 0, -np.inf, -0.07407407, 0.3125]
    np.testing.assert_allclose(t, want, rtol=1e-6)
    np.testing.assert_allclose(ft.grad(lambda a: lax.pow(a, n).sum())(x), want, rtol=1e-6)
    d2 = ft.jacfwd(ft.grad(lambda a: lax.pow(a, n).sum()))(x).diagonal()
    np.testing.assert_allclose(d2, [2, -12, 0, np.inf, 0.07407407, -2.5], rtol=1e-6)
    np.testing.assert_allclose(lax.pow(np.complex128([1 + 1j, 2j]), np.int32([3, -2])),
                               [-2 + 2j, -0.25], atol=1e-15)
    assert lax.pow(np.float64([2.0]), np.uint8([3])).dtype == np.float64
    np.testing.assert_array_equal(ft.vmap(lax.pow)(np.float64([[2, 3]]), np.int32([[3, 2]])),
                                  [[8, 9]])
    np.testing.assert_array_equal(ft.jit(lax.pow)(np.float64([2, 3]), np.int32(3)), [8, 27])
    assert lax.pow(2.0, 3) == 8.0


def test_pow_odd_exponent_beyond_float_range_keeps_sign():
    """JAX converts the exponent to the base's dtype: 16777217 becomes 16777216 in
    float32 and (-1)**16777217 comes out +1; the maths (and this) give -1."""
    x = np.float32([-1, -1, -0.0, 1.0000001, -1])
    n = np.int64([16777217, 16777216, -16777217, 16777217, -2 ** 63])
    got = lax.pow(x, n)
    np.testing.assert_allclose(got, [-1, 1, -np.inf, 7.3890553, 1], rtol=1e-6)
    np.testing.assert_array_equal(ft.jit(lax.pow)(x, n), got)
    assert lax.pow(np.float32([-1]), np.uint64([2 ** 64 - 1]))[0] == -1
    assert lax.pow(np.float64([-1]), np.int64([2 ** 53 + 1]))[0] == -1
    # d/dx x**n = n x**(n-1) = n at x = -1 for odd n
    assert ft.grad(lambda a: lax.pow(a, np.int64(16777217)))(np.float32(-1.0)) == 16777216.0
