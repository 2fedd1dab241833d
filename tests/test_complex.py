"""Complex numbers under the transforms (issue 14.7): JAX's conventions for gradients
of real functions of complex inputs, ``holomorphic=True`` for grad/jacfwd/jacrev, and
the errors JAX raises. Expected values were computed once with JAX 0.10.2 (x64)."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

Z = np.array([1 + 2j, -0.5 + 0.3j, 2 - 1j])


def test_grad_of_a_real_function_of_complex_inputs_follows_jax():
    # JAX: df/dx - i df/dy
    np.testing.assert_allclose(ft.grad(lambda z: fnp.sum(fnp.abs(z) ** 2))(Z),
                               [2 - 4j, -1 - 0.6j, 4 + 2j], rtol=1e-12)
    np.testing.assert_allclose(ft.grad(lambda z: fnp.real(fnp.sum(z * z)))(Z),
                               [2 + 4j, -1 + 0.6j, 4 - 2j], rtol=1e-12)


def test_grad_holomorphic():
    np.testing.assert_allclose(ft.grad(lambda z: fnp.sum(z * z), holomorphic=True)(Z),
                               [2 + 4j, -1 + 0.6j, 4 - 2j], rtol=1e-12)
    v, g = ft.value_and_grad(lambda z: fnp.sum(fnp.sin(z)), holomorphic=True)(Z)
    np.testing.assert_allclose(g, np.cos(Z), rtol=1e-12)


def test_complex_output_needs_holomorphic_and_holomorphic_needs_complex():
    with pytest.raises(TypeError, match="holomorphic=True"):
        ft.grad(lambda z: fnp.sum(z * z))(Z)
    with pytest.raises(TypeError, match="complex inputs"):
        ft.grad(lambda x: x * x, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match="complex output"):
        ft.grad(lambda z: fnp.abs(fnp.sum(z)), holomorphic=True)(Z)
    with pytest.raises(TypeError, match="complex inputs"):
        ft.jacfwd(fnp.sin, holomorphic=True)(np.ones(2))


def test_jacobians_holomorphic():
    np.testing.assert_allclose(ft.jacfwd(lambda z: z * z, holomorphic=True)(Z),
                               np.diag(2 * Z), rtol=1e-12)
    want = np.diag([2.032723 - 3.051898j, 0.917371 + 0.145995j, -0.642148 + 1.068607j])
    np.testing.assert_allclose(ft.jacrev(fnp.sin, holomorphic=True)(Z), want, atol=1e-6)


def test_var_std_of_complex_inputs_under_transforms():
    np.testing.assert_allclose(ft.jit(fnp.var)(Z), 2.564444, atol=1e-6)
    assert ft.jit(fnp.var)(Z).dtype == np.float64
    np.testing.assert_allclose(ft.grad(fnp.var)(Z),
                               [0.111111 - 1.044444j, -0.888889 + 0.088889j,
                                0.777778 + 0.955556j], atol=1e-6)
    np.testing.assert_allclose(ft.grad(fnp.std)(Z),
                               [0.034692 - 0.326106j, -0.277537 + 0.027754j,
                                0.242845 + 0.298352j], atol=1e-6)
    zs = np.stack([Z, 2 * Z])
    np.testing.assert_allclose(ft.vmap(lambda z: fnp.std(z, ddof=1))(zs),
                               np.std(zs, axis=1, ddof=1), rtol=1e-12)
