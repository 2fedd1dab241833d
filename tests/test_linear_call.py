"""``jax.custom_derivatives``' names: ``linear_call`` (JAX's docstring examples, under
jit/grad/vmap/linear_transpose) and ``custom_gradient``/``closure_convert`` there."""
import numpy as np
import pytest

import functrans as ft
import functrans.custom_derivatives as cd
from functrans.custom_derivatives import linear_call


def _div_add(x, denom):
    return x + linear_call(lambda r, x: x / r, lambda r, t: t / r, denom, x)


def _custom_id(x):
    return linear_call(lambda _, x: x, lambda _, t: 7.0, (), x)


def _transpose(f, example):
    return lambda y: ft.linear_transpose(f, example)(y)[0]


def test_jax_docstring_examples():
    assert float(_div_add(9.0, 3.0)) == 12.0
    assert float(_transpose(lambda x: _div_add(x, 3.0), 1.0)(18.0)) == 24.0
    t1 = _transpose(_custom_id, 1.0)
    t2 = _transpose(t1, 1.0)
    t3 = _transpose(t2, 1.0)
    assert [float(f(1.0)) for f in (_custom_id, t1, t2, t3)] == [1.0, 7.0, 1.0, 7.0]


def test_under_transforms():
    assert float(ft.grad(_custom_id)(1.0)) == 7.0
    assert float(ft.jit(ft.grad(_custom_id))(1.0)) == 7.0
    assert float(ft.jvp(_custom_id, (1.0,), (2.0,))[1]) == 2.0
    np.testing.assert_array_equal(np.asarray(ft.vmap(ft.grad(_custom_id))(np.ones(3))), 7.0)
    d = np.arange(1.0, 4.0)
    np.testing.assert_allclose(np.asarray(ft.vmap(ft.grad(_div_add))(np.ones(3), d)), 1 + 1 / d)
    np.testing.assert_allclose(np.asarray(ft.jit(ft.vmap(_div_add))(np.ones(3), d)), 1 + 1 / d)


def test_residual_derivatives_and_bad_transposes_raise():
    with pytest.raises(NotImplementedError, match="residual"):
        ft.grad(lambda d: _div_add(2.0, d))(3.0)
    with pytest.raises(TypeError, match="structure"):
        linear_call(lambda r, x: x, lambda r, t: (t, t), (), 1.0)


def test_custom_derivatives_module_names():
    f = cd.custom_gradient(lambda x: (x * 2.0, lambda g: (g * 5.0,)))
    assert float(ft.grad(f)(1.0)) == 5.0
    assert cd.custom_gradient is ft.custom_gradient and cd.closure_convert is ft.closure_convert
    assert cd.custom_jvp is ft.custom_jvp
