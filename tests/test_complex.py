"""Complex numbers under the transforms (issue 14.7): JAX's conventions for gradients
of real functions of complex inputs, ``holomorphic=True`` for grad/jacfwd/jacrev, and
the errors JAX raises. Expected values were computed once with JAX 0.10.2 (x64)."""
import warnings

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


def test_jacrev_and_jacobian_of_a_real_function_of_complex_inputs_follow_jax():
    # JAX's jacrev (and jacobian, which is jacrev) takes complex inputs when the outputs
    # are real: each row is grad's df/dx - i df/dy; jacfwd still raises, as JAX's
    want = np.diag(np.conj(Z) / np.abs(Z))
    np.testing.assert_allclose(ft.jacrev(fnp.abs)(Z), want, rtol=1e-12)
    np.testing.assert_allclose(ft.jacobian(fnp.abs)(Z), want, rtol=1e-12)
    got = ft.jacrev(lambda d: fnp.abs(d["z"]) + d["x"])({"z": Z, "x": np.ones(3)})
    np.testing.assert_allclose(got["z"], want, rtol=1e-12)
    np.testing.assert_allclose(got["x"], np.eye(3), rtol=0)
    with pytest.raises(TypeError, match="real floating inputs"):
        ft.jacfwd(fnp.abs)(Z)
    with pytest.raises(TypeError, match="real floating outputs"):
        ft.jacrev(lambda z: z * 2)(Z)


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


ZNAN = np.array([[1 + 2j, np.nan, 3 - 1j, 2 + 0.5j], [np.nan * 1j, 1j, 2, 0.5 - 3j]])


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("ddof", [0, 1])
def test_nanvar_nanstd_of_complex_input_match_numpy(axis, ddof):
    with warnings.catch_warnings():  # numpy: "Degrees of freedom <= 0" for a 1-entry slice
        warnings.simplefilter("ignore", RuntimeWarning)
        for ours, ref in ((fnp.nanvar, np.nanvar), (fnp.nanstd, np.nanstd)):
            want = ref(ZNAN, axis=axis, ddof=ddof)
            got = ours(ZNAN, axis=axis, ddof=ddof)
            assert got.dtype == want.dtype == np.float64
            np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)
            np.testing.assert_allclose(ft.jit(lambda a: ours(a, axis=axis, ddof=ddof))(ZNAN),
                                       want, rtol=1e-12, equal_nan=True)


def test_grad_of_nanstd_nanvar_of_complex_input_follows_jax():
    # values from JAX 0.10.2 (x64); NaN entries get a zero gradient
    g = ft.grad(lambda v: fnp.sum(fnp.nanstd(v, axis=1, ddof=1)))(ZNAN)
    np.testing.assert_allclose(g, [
        [-0.2773500981126146 - 0.41602514716892186j, 0,
         0.2773500981126146 + 0.41602514716892186j, 0],
        [0, -0.17902871850985821 - 0.3580574370197165j, 0.2506402059138015 - 0.1432229748078866j,
         -0.07161148740394328 + 0.5012804118276031j]], rtol=1e-12, atol=1e-15)
    g = ft.jit(ft.grad(fnp.nanvar))(ZNAN)
    np.testing.assert_allclose(g, np.array([[-5 - 25j, 0, 19 + 11j, 7 - 7j],
                                            [0, -17 - 13j, 7 - 1j, -11 + 35j]]) / 36,
                               rtol=1e-12, atol=1e-15)


def test_complex_to_real_conversion_takes_the_real_part_silently():
    # as JAX's convert_element_type; numpy's astype warns (ComplexWarning), which
    # the transpose of a real -> complex promotion reached under grad
    lax = ft.lax
    z = np.array([1.5 + 2.0j, -3.0 - 1.0j])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert lax.convert_element_type(z, np.float64).tolist() == [1.5, -3.0]
        assert ft.jit(lambda v: lax.convert_element_type(v, np.float32))(z).tolist() == [1.5, -3.0]
        g = ft.grad(lambda s: fnp.real(fnp.sum((s * (1.0 + 2.0j)) ** 2)))(np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, [-6.0, -12.0])


def test_complex_ordering_comparisons_traced_are_lexicographic():
    """a > b on complex arrays: numpy and jax.numpy compare the real parts, then the
    imaginary parts; eager worked but jit/vmap raised 'gt: dtype complex128 is not
    supported' (found by /work/fuzz_jax: `where(z > 0, z, 0)` under jit)."""
    a = np.array([1 + 2j, 1 + 3j, -1j, 2 + 0j, 1 + 2j])
    b = np.array([1 + 3j, 1 + 2j, 0j, 1 + 5j, 1 + 2j])
    for name in ("less", "less_equal", "greater", "greater_equal"):
        f, ref = getattr(fnp, name), getattr(np, name)(a[:5], b[:5])
        for g in (f, ft.jit(f), ft.vmap(f)):
            np.testing.assert_array_equal(g(a[:5], b[:5]), ref)
    z = a[:5].astype(np.complex64)
    np.testing.assert_array_equal(ft.jit(lambda z: fnp.where(z > 0, z, 0))(z),
                                  np.where(z > 0, z, 0))


def test_complex_extrema_traced_follow_numpy():
    """maximum/minimum/argmax/argmin of complex arrays under jit raised ('max: dtype
    complex128 is not supported'); eagerly they are numpy's: lexicographic order, the
    first operand (element) holding a NaN wins. JAX 0.10.2 agrees without NaNs (its
    maximum ignores NaNs: maximum(nan+0j, 0j) is 0j there; its argmax raises); sort, max
    and min already agreed (checked against JAX)."""
    nan = complex(np.nan, 0.0)
    a = np.array([1 + 2j, 1 + 1j, 3 - 1j, nan, complex(2, np.nan), -1 + 5j, 2j, 0j])
    b = np.array([1 + 3j, 2 + 0j, 3 - 2j, 0j, 1 + 0j, nan, complex(0, np.nan), -0.0 + 0j])
    for name in ("maximum", "minimum"):
        f, ref = getattr(fnp, name), getattr(np, name)(a, b)
        for g in (f, ft.jit(f), ft.vmap(f)):
            np.testing.assert_array_equal(g(a, b), ref)
        np.testing.assert_array_equal(ft.jit(f)(a[:3], 1 + 1j), getattr(np, name)(a[:3], 1 + 1j))
        np.testing.assert_array_equal(ft.jit(f)(a[:3].astype(np.complex64), b[0]),
                                      getattr(np, name)(a[:3].astype(np.complex64), b[0]))
    finite = np.array([[1 + 2j, 3 - 1j, 3 + 0j, -1 + 5j], [3 + 0j, 3 + 0j, 1j, -np.inf + 0j],
                       [2j, -1j, 0j, -1j]])
    withnan = finite.copy()
    withnan[1, 2] = complex(0, np.nan)
    for x in (finite, withnan):
        for name in ("argmax", "argmin"):
            f = getattr(fnp, name)
            for axis in (None, 0, 1):
                want = getattr(np, name)(x, axis=axis)
                np.testing.assert_array_equal(f(x, axis=axis), want)
                np.testing.assert_array_equal(ft.jit(lambda v: f(v, axis=axis))(x), want)
    # expected values computed with JAX 0.10.2 (jnp.maximum / jnp.minimum without NaNs)
    np.testing.assert_array_equal(ft.jit(fnp.maximum)(a[:3], b[:3]), [1 + 3j, 2 + 0j, 3 - 1j])
    np.testing.assert_array_equal(ft.jit(fnp.minimum)(a[:3], b[:3]), [1 + 2j, 1 + 1j, 3 - 2j])
