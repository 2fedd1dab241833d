"""functrans.scipy.linalg schur and funm against scipy (the same LAPACK ?gees, so equal
to rounding) and JAX (figures computed with jax 0.10.2 under x64 and written down
here), under jit and vmap; neither differentiates (as JAX's)."""
import numpy as np
import pytest
import scipy.linalg as sl

import functrans as ft
import functrans.numpy as fnp
from functrans.scipy import linalg as fla

_RNG = np.random.default_rng(11)
A3 = np.array([[1., 2., 3.], [4., 5., 6.], [7., 8., 10.]])
ROT = np.array([[0., -2., 1.], [2., 0., 3.], [0., 0., 1.]])     # a complex pair


def _h(z):
    return np.conj(np.swapaxes(z, -1, -2))


def _check_factors(a, t, z, output, tol):
    """``a = Z T Z^H``, Z unitary, T (quasi) upper triangular; T, Z equal scipy's."""
    t, z = np.asarray(t), np.asarray(z)
    n = a.shape[-1]
    np.testing.assert_allclose(z @ t @ _h(z), a, rtol=tol, atol=tol)
    np.testing.assert_allclose(_h(z) @ z, np.broadcast_to(np.eye(n), a.shape), atol=tol)
    below = np.tril(np.ones((n, n), bool), -2 if output == "real" else -1)
    assert np.all(t[..., below] == 0)
    flat_a = a.reshape((-1, n, n))
    for i, (ti, zi) in enumerate(zip(t.reshape((-1, n, n)), z.reshape((-1, n, n)))):
        wt, wz = sl.schur(flat_a[i], output=output)
        np.testing.assert_allclose(ti, wt, rtol=tol, atol=tol)
        np.testing.assert_allclose(zi, wz, rtol=tol, atol=tol)


@pytest.mark.parametrize("output", ["real", "complex"])
@pytest.mark.parametrize("kind", ["real", "complex"])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (2, 1, 5, 5)])
def test_schur_against_scipy_eager_jit_vmap(output, kind, shape):
    a = _RNG.standard_normal(shape)
    if kind == "complex":
        a = a + 1j * _RNG.standard_normal(shape)
    form = "complex" if kind == "complex" else output
    t, z = fla.schur(a, output=output)
    want_dtype = np.complex128 if form == "complex" else np.float64
    assert np.asarray(t).dtype == np.asarray(z).dtype == want_dtype
    _check_factors(a, t, z, form, 1e-12)
    tj, zj = ft.jit(lambda x: fla.schur(x, output=output))(a)
    assert np.array_equal(np.asarray(tj), np.asarray(t))
    assert np.array_equal(np.asarray(zj), np.asarray(z))
    b = a if a.ndim > 2 else np.stack([a, a.T])
    tv, zv = ft.vmap(lambda x: fla.schur(x, output=output))(b)
    tb, zb = fla.schur(b, output=output)
    np.testing.assert_allclose(np.asarray(tv), np.asarray(tb), rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(np.asarray(zv), np.asarray(zb), rtol=1e-14, atol=1e-14)
    _check_factors(b, tv, zv, form, 1e-12)


def test_schur_real_form_keeps_a_2x2_block_and_float32():
    t, z = fla.schur(ROT)
    assert np.asarray(t)[1, 0] != 0          # the complex pair stays a real 2x2 block
    _check_factors(ROT, t, z, "real", 1e-13)
    a = _RNG.standard_normal((3, 3)).astype(np.float32)
    t, z = fla.schur(a)
    assert np.asarray(t).dtype == np.float32
    _check_factors(a, t, z, "real", 1e-5)
    tc, _ = fla.schur(a, output="complex")
    assert np.asarray(tc).dtype == np.complex64


def test_schur_edge_cases_and_errors():
    t, z = fla.schur(np.array([[np.nan, 1.0], [0.0, 2.0]]))
    assert np.isnan(np.asarray(t)).all() and np.isnan(np.asarray(z)).all()
    t, _ = fla.schur(np.zeros((2, 0, 0)))
    assert np.asarray(t).shape == (2, 0, 0)
    t, _ = fla.schur(np.array([[1, 2], [3, 4]]))          # integers: float64
    assert np.asarray(t).dtype == np.float64
    with pytest.raises(ValueError, match="'real' or 'complex'"):
        fla.schur(A3, output="rsf")
    with pytest.raises(ValueError, match="square"):
        fla.schur(np.ones((2, 3)))


@pytest.mark.parametrize("fn", [
    lambda a: fla.schur(a)[0].sum(), lambda a: fla.schur(a, output="complex")[1].real.sum(),
    lambda a: fla.funm(a, fnp.exp).real.sum()])
def test_differentiating_schur_or_funm_raises_naming_schur(fn):
    for transform in (ft.grad, ft.jacfwd):
        with pytest.raises(NotImplementedError, match="schur is not differentiable"):
            transform(fn)(A3)


def test_funm_against_scipy_expm_and_jax():
    a = _RNG.standard_normal((4, 4))
    f = fla.funm(a, fnp.exp)
    assert np.asarray(f).dtype == np.complex128
    np.testing.assert_allclose(np.asarray(f), sl.expm(a), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.asarray(ft.jit(lambda x: fla.funm(x, np.exp))(a)),
                               sl.funm(a, np.exp), rtol=1e-12, atol=1e-13)
    f, err = fla.funm(A3, fnp.sin, disp=False)
    jax_f = np.array([[-0.74214788, -0.24431253, 0.12102987],
                      [-0.16362596, -0.09327605, -0.40793849],
                      [0.06573695, -0.43558495, -0.59572435]])
    np.testing.assert_allclose(np.asarray(f), jax_f, atol=1e-8)
    np.testing.assert_allclose(np.asarray(f), sl.funm(A3, np.sin), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(float(err), 9.573688562838713e-16, rtol=1e-6)   # JAX's and scipy's


def test_funm_sqrt_of_spd_complex_input_and_float32():
    r = _RNG.standard_normal((5, 5))
    spd = r @ r.T + 5 * np.eye(5)
    s = np.asarray(fla.funm(spd, fnp.sqrt))
    np.testing.assert_allclose(s, sl.funm(spd, np.sqrt), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(s @ s, spd, rtol=1e-12, atol=1e-11)
    c = _RNG.standard_normal((3, 3)) + 1j * _RNG.standard_normal((3, 3))
    np.testing.assert_allclose(np.asarray(fla.funm(c, fnp.cos)), sl.funm(c, np.cos),
                               rtol=1e-12, atol=1e-12)
    f32 = fla.funm(A3.astype(np.float32), fnp.exp)
    assert np.asarray(f32).dtype == np.complex64
    np.testing.assert_allclose(np.asarray(f32), sl.expm(A3), rtol=2e-4)
    f, err = fla.funm(ROT, fnp.exp, disp=False)     # complex pair: through rsf2csf
    np.testing.assert_allclose(np.asarray(f), sl.expm(ROT), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(float(err), sl.funm(ROT, np.exp, disp=False)[1], rtol=1e-6)


def test_funm_repeated_eigenvalue_gives_jax_and_scipy_answer_and_error():
    # a Jordan block: Parlett's recurrence divides by 0 (JAX and scipy keep the
    # numerator: F's off-diagonal stays 0) and the estimate says so (err = 1)
    f, err = fla.funm(np.array([[1.0, 1.0], [0.0, 1.0]]), fnp.exp, disp=False)
    np.testing.assert_allclose(np.asarray(f), np.e * np.eye(2), rtol=1e-15)
    assert float(err) == 1.0
    f, err = fla.funm(np.array([[2.0]]), fnp.exp, disp=False)
    np.testing.assert_allclose(np.asarray(f), [[np.exp(2.0)]], rtol=1e-15)
    assert float(err) == np.finfo(np.float64).eps
    with pytest.raises(ValueError, match="square"):
        fla.funm(np.ones((2, 2, 2)), fnp.exp)
