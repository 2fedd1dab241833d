"""Regressions found by running JAX's tests/lax_numpy_operators_test.py against functrans
(driver in /work/jt30/jtnumpy): functions that raised under jit on complex input, or on
bfloat16, where JAX (and functrans eagerly) compute them."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

INF, NAN = np.inf, np.nan
Z = np.array([1.5 + 2.5j, -0.5 - 1.5j, 3 + 0j, 0j, complex(-0.0, -0.0), complex(3, -0.0),
              complex(NAN, 1), complex(-INF, 2), complex(2, -INF), complex(INF, NAN),
              complex(NAN, INF), complex(INF, -1), complex(INF, INF), 1e308 + 1e308j,
              5e-324 + 0j, 2.5 - 3.5j, -0.5 + 0.5j])
with np.errstate(over="ignore"):
    Z64 = Z.astype(np.complex64)             # 1e308 becomes inf


def _same(got, want, ulps=0):
    """Equal part by part (NaN where NaN, signed zeros and all) within ``ulps``."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        assert np.array_equal(np.isnan(g), np.isnan(w))
        ok = ~np.isnan(w)
        assert np.array_equal(np.signbit(g[ok]), np.signbit(w[ok]))
        np.testing.assert_allclose(g[ok], w[ok], rtol=ulps * np.finfo(g.dtype).eps, atol=0)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_sign_and_rounding_under_jit(dtype):
    """testSignComplex / testOp(sign, rint) on complex: under jit sign, rint and round
    raised TypeError ("not supported under a transform"); numpy's values (sign: the unit
    along an infinite part, NaN for two infinities, +0 at the origin)."""
    z = Z64 if dtype == np.complex64 else Z
    with np.errstate(invalid="ignore", over="ignore"):
        _same(ft.jit(fnp.sign)(z), np.sign(z), ulps=2)      # numpy divides differently
        _same(ft.jit(fnp.rint)(z), np.rint(z))
        _same(ft.jit(fnp.round)(z), np.round(z))
        _same(ft.jit(lambda v: fnp.round(v, 1))(z * 1.37), np.round(z * 1.37, 1), ulps=1)
    _same(ft.vmap(fnp.sign)(z[:6]), np.sign(z[:6]), ulps=2)
    # JAX's sign has derivative zero, for complex too
    assert ft.grad(lambda x: fnp.real(fnp.sign(x * (1 + 2j))))(0.7) == 0.0


@pytest.mark.parametrize("name", ["fmin", "fmax"])
def test_complex_fmin_fmax_under_jit(name):
    """testOp(fmin/fmax) on complex: under jit they raised TypeError (lt/gt take real
    operands). numpy's: the operand without a NaN, else lexicographic, x on a tie."""
    w = np.array([1 + 5j, -0.5 - 1j, 3 + 1j, complex(NAN, 0), 1j, 0j, complex(3, -0.0), 7,
                  complex(NAN, 2), -INF, 3, 4, 5j, 1e308, 0, 2.5 - 3.5j, -0.5 + 0.7j])
    f, ref = getattr(fnp, name), getattr(np, name)
    _same(ft.jit(f)(Z, w), ref(Z, w))
    _same(ft.jit(f)(Z[:, None], w[None, :5]), ref(Z[:, None], w[None, :5]))
    _same(ft.jit(lambda v: f(v, 2.0))(Z), ref(Z, 2.0))
    _same(ft.jit(f)(Z64, np.arange(17, dtype=np.int16)), ref(Z64, np.arange(17, dtype=np.int16)))


def test_device_put_of_bfloat16():
    """testBinaryOperatorDefers (bfloat16): device_put refused a bfloat16 ndarray (numpy
    calls its kind 'V')."""
    x = np.array([1.5, -2.25], fnp.bfloat16)
    got = ft.device_put(x)
    assert isinstance(got, ft.Array) and got.dtype == fnp.bfloat16
    assert got.tolist() == [1.5, -2.25]
    assert ft.device_put(np.array(3, fnp.bfloat16)).dtype == fnp.bfloat16
    with pytest.raises(TypeError, match="cannot place"):
        ft.device_put(np.array(["a"]))


def test_operators_defer_to_a_namedtuple_with_its_own():
    """testDeferToNamedTuple: ``array * namedtuple`` converted the NamedTuple to an array
    (eagerly and under jit) instead of calling its ``__rmul__``, as JAX does; plain lists
    and tuples stay operands (numpy's), other foreign objects get their reflected method."""
    from typing import NamedTuple

    class MyArray(NamedTuple):
        arr: object

        def __mul__(self, other):
            return MyArray(self.arr * other)

        def __rmul__(self, other):
            return MyArray(other * self.arr)

    a, b = MyArray(fnp.ones(4)), fnp.arange(4.0)
    for got in (b * a, ft.jit(lambda x, y: x * y)(b, a), a * b):
        assert isinstance(got, MyArray)
        np.testing.assert_array_equal(got.arr, [0.0, 1.0, 2.0, 3.0])

    class Deferring:
        def __radd__(self, other):
            return "deferred"
    assert b + Deferring() == "deferred"
    assert ft.jit(lambda x: (x + Deferring(), x)[1])(b).tolist() == [0.0, 1.0, 2.0, 3.0]
    np.testing.assert_array_equal(b + [1, 2, 3, 4], [1.0, 3.0, 5.0, 7.0])
    np.testing.assert_array_equal(ft.jit(lambda x: x * (2, 2, 2, 2))(b), [0.0, 2.0, 4.0, 6.0])
    with pytest.raises(TypeError):
        ft.jit(lambda x: x + {1: 2})(b)


def test_signbit_of_bool_under_strict_promotion():
    """testOp(signbit, bool): signbit compared the bools with a Python 0, a
    TypePromotionError under numpy_dtype_promotion='strict'."""
    with ft.numpy_dtype_promotion("strict"):
        for x in (np.array([True, False]), np.array([-1, 0, 3], np.int8), np.array([0, 5], np.uint16)):
            assert fnp.signbit(x).tolist() == np.signbit(x).tolist()
            assert ft.jit(fnp.signbit)(x).tolist() == np.signbit(x).tolist()


def test_bfloat16_with_python_scalars_under_strict_promotion():
    """testOp (modf, spacing, trunc, isneginf, iscomplex... on bfloat16): the strict check
    read numpy's kind of bfloat16 ('V'), so a Python int or float beside a bfloat16 array
    was a TypePromotionError; JAX lets weak scalars adapt to bfloat16."""
    bf = np.array([1.5, -2.0, np.inf, -0.25], fnp.bfloat16)
    with ft.numpy_dtype_promotion("strict"):
        assert fnp.multiply(bf, 2).dtype == fnp.bfloat16
        assert (bf + 0.5).tolist() == [2.0, -1.5, np.inf, 0.25]
        assert fnp.isneginf(bf).tolist() == [False, False, False, False]
        assert ft.jit(fnp.trunc)(bf).tolist() == [1.0, -2.0, np.inf, -0.0]
        frac, whole = fnp.modf(bf[[0, 1, 3]])
        assert frac.tolist() == [0.5, 0.0, -0.25] and whole.tolist() == [1.0, -2.0, -0.0]
        assert fnp.iscomplex(bf).tolist() == [False] * 4
        with pytest.raises(ft.dtypes.TypePromotionError):     # two strong dtypes still do
            fnp.add(bf, np.float32(1))
