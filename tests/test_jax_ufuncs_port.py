"""Regressions found by running JAX's tests/lax_numpy_ufuncs_test.py against functrans
(driver in /work/jt30/jtnumpy): ufunc methods that tripped the user's promotion modes."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp


@pytest.mark.parametrize("name", ["add", "maximum", "bitwise_or", "frompyfunc"])
def test_outer_under_rank_promotion_raise(name):
    """test_binary_ufunc_outer: ``fnp.add.outer`` broadcast B against A's trailing 1s
    by implicit rank promotion, a ValueError under numpy_rank_promotion='raise'."""
    a = np.arange(12).reshape(4, 3)
    b = np.arange(3)
    f = fnp.frompyfunc(lambda x, y: x + y, 2, 1) if name == "frompyfunc" else getattr(fnp, name)
    want = (np.add if name == "frompyfunc" else getattr(np, name)).outer
    with ft.numpy_rank_promotion("raise"):
        for lhs, rhs in [(a, b), (b, a), (a, b[None]), (5, b)]:
            np.testing.assert_array_equal(f.outer(lhs, rhs), want(lhs, rhs))
            np.testing.assert_array_equal(ft.jit(f.outer)(lhs, rhs), want(lhs, rhs))


@pytest.mark.parametrize("name", ["add", "maximum", "frompyfunc"])
def test_traced_reduceat_under_strict_promotion(name):
    """test_binary_ufunc_reduceat / test_frompyfunc_reduceat: reduceat with traced int32
    indices compared them with int64 positions, a TypePromotionError under
    numpy_dtype_promotion='strict'."""
    x = np.arange(20.0, dtype=np.float32).reshape(5, 4) ** 1.5
    idx = np.array([0, 3, 1, 4], np.int32)
    f = fnp.frompyfunc(lambda p, q: p + q, 2, 1) if name == "frompyfunc" else getattr(fnp, name)
    ref = np.add if name == "frompyfunc" else getattr(np, name)
    with ft.numpy_dtype_promotion("strict"):
        for axis in (0, 1):
            i = idx[idx < x.shape[axis]]
            got = ft.jit(lambda v, j: f.reduceat(v, j, axis=axis))(x, i)
            assert got.dtype == np.float32
            np.testing.assert_allclose(got, ref.reduceat(x, i, axis=axis), rtol=1e-6)


def test_frompyfunc_properties_readonly():
    """test_frompyfunc_properties_readonly: nargs/nin/nout/identity/_func were plain
    attributes (ufunc.nin = 3 went through and changed the hash a jit cache keys on);
    in JAX 0.10.2 setting them is an AttributeError. Reading them still works."""
    f = lambda x, y: x * y
    u = fnp.frompyfunc(f, 2, 1, identity=1)
    assert (u.nargs, u.nin, u.nout, u.identity, u._func) == (2, 2, 1, 1, f)
    h = hash(u)
    for attr in ["nargs", "nin", "nout", "identity", "_func"]:
        with pytest.raises(AttributeError):
            setattr(u, attr, None)
    assert hash(u) == h and u == fnp.frompyfunc(f, 2, 1, identity=1)
    assert u.reduce(fnp.arange(1.0, 5.0)).item() == 24.0
