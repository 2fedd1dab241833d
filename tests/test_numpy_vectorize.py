"""fnp.vectorize cases from JAX's lax_numpy_vectorize_test: None arguments, outputs with
dimensions of their own, vectorized keyword arguments, and the argument/output checks."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp


def test_none_argument_is_passed_through():
    f = fnp.vectorize(lambda x, y: x if y is None else x + y)
    x = np.arange(10)
    np.testing.assert_array_equal(np.asarray(f(x, None)), x)
    np.testing.assert_array_equal(np.asarray(f(x, np.arange(10, 20))), 2 * x + 10)
    g = fnp.vectorize(lambda x, y: x if y is None else x + y, signature="(k),(k)->(k)")
    with pytest.raises(ValueError, match="None at locations"):
        g(x, None)


def test_outputs_keep_their_own_dimensions_without_signature():
    f = fnp.vectorize(lambda x: x + fnp.linspace(-1, 1, 5))
    assert f(0.5).shape == (5,)
    out = f(np.array([0.0, 1.0, 2.0]))
    assert out.shape == (3, 5)
    np.testing.assert_allclose(np.asarray(out)[2], 2 + np.linspace(-1, 1, 5))
    assert ft.jit(f)(np.ones((2, 3))).shape == (2, 3, 5)


def test_keyword_arguments_are_vectorized_as_numpy():
    f = fnp.vectorize(lambda x, y=1.0: x * y)
    want = np.vectorize(lambda x, y=1.0: x * y)(np.arange(3.0), y=np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(np.asarray(f(np.arange(3.0), y=np.array([1.0, 2.0, 3.0]))),
                                  want)
    g = fnp.vectorize(lambda x, y, func=fnp.add: func(x, y), excluded=(2, "func"))
    np.testing.assert_array_equal(np.asarray(g(np.arange(4), 2, func=fnp.power)),
                                  np.arange(4) ** 2)


def test_excluded_and_output_checks():
    with pytest.raises(TypeError, match="excluded"):
        fnp.vectorize(lambda x: x, excluded={1.5})
    with pytest.raises(ValueError, match="negative"):
        fnp.vectorize(lambda x: x, excluded={-1})
    z = np.zeros((2, 2))
    with pytest.raises(ValueError, match="does not match core dimensions"):
        fnp.vectorize(fnp.dot, signature="(n,m),(m,k)->(n)")(z, z)
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'n'"):
        fnp.vectorize(fnp.dot, signature="(n,m),(m,k)->(n,n)")(np.zeros((2, 3)),
                                                                np.zeros((3, 4)))


@pytest.mark.parametrize("signature", [None, "(),()->()"])
def test_rank_promotion_of_loop_dimensions(signature):
    """test_rank_promotion_error (JAX issue 22305): vectorize broadcast loop dimensions of
    different ranks silently under numpy_rank_promotion='raise'/'warn' (the function sees
    only the vmapped scalars); JAX raises / warns, except for 0-d operands and loop ranks
    that agree after the core dimensions are set aside."""
    f = fnp.vectorize(fnp.add, signature=signature)
    r2, r1, r0 = np.zeros((10, 10)), np.zeros(10), np.zeros(())
    with ft.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError, match="operands with shapes .* require rank promotion"):
            f(r2, r1)
        assert f(r2, r0).shape == (10, 10) and f(r1, r0).shape == (10,)
        f2 = fnp.vectorize(fnp.add, signature="(n),()->(n)")
        np.testing.assert_array_equal(f2(r2 + 1, r1 + 2), np.full((10, 10), 3.0))
    with ft.numpy_rank_promotion("warn"):
        with pytest.warns(UserWarning, match="require rank promotion") as rec:
            f(r2, r1)
        assert rec[0].filename == __file__          # pointed at the caller's line
    assert f(r2, r1).shape == (10, 10)              # "allow" (the default)
