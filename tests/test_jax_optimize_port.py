"""From JAX 0.10.2's tests/scipy_optimize_test.py (TestLBFGS): minimize with
method='l-bfgs-experimental-do-not-rely-on-this' (it raised "method not recognized").
The expected values are jax 0.10.2's (x64 on) for the same calls, stored here: the same
iterates, evaluation counts and status codes (JAX's L-BFGS stops with status 5, a failed
line search, on several of these; functrans must do the same, not do better or worse)."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.scipy.optimize import minimize

M = "l-bfgs-experimental-do-not-rely-on-this"
_Z0 = np.array([1., 2. - 3.j, 4., -5.j])


def _rosen(x):
    return fnp.sum(100.0 * (x[1:] - x[:-1] ** 2.0) ** 2.0 + (1 - x[:-1]) ** 2.0, axis=0)


def _himmelblau(p):
    x, y = p
    return (x ** 2 + y - 11.) ** 2 + (x + y ** 2 - 7.) ** 2


def _sphere(z):
    return fnp.real(fnp.dot(fnp.conj(z - _Z0), z - _Z0))


def _complex_rosen(z):
    return _rosen(fnp.concatenate([fnp.real(z), fnp.imag(z)]))


# name: (fun, x0, options, jax's x, fun, nit, nfev, njev, status)
_CASES = {
    "rosen": (_rosen, np.zeros(2), {}, [0.17354647186935693, 0.0], 0.7737371028820773,
              1, 6, 6, 5),
    "himmelblau": (_himmelblau, np.zeros(2), dict(gtol=1e-7),
                   [3.0000000444226416, 1.9999999432051707], 7.739129780053418e-14,
                   8, 13, 13, 4),
    "sphere": (_sphere, np.zeros(4, complex), dict(gtol=1e-6), _Z0.tolist(), 0.0, 1, 3, 3, 0),
    "complex_rosen": (_complex_rosen, np.zeros(3, complex), dict(gtol=1e-6),
                      [0.7027711239431854 + 0.029659454546394622j,
                       0.4739947695753733 + 0.006889833912903305j,
                       0.19951724119530329 + 0.000292261032339486j],
                      3.050385900307115, 10, 20, 20, 5),
    "rosen_maxiter": (_rosen, np.zeros(3), dict(maxiter=5),
                      [0.24702054141035537, 0.029465909654539296, 0.0032508548532417516],
                      1.609042855257543, 3, 12, 12, 5),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_lbfgs_matches_jax(name):
    """TestLBFGS.test_minimize / test_minimize_complex_sphere / test_complex_rosenbrock."""
    fun, x0, opts, x, f, nit, nfev, njev, status = _CASES[name]
    r = ft.jit(lambda x0: minimize(fun, x0, method=M, options=opts))(x0)
    assert r.x.dtype == x0.dtype
    np.testing.assert_allclose(np.asarray(r.x), np.asarray(x), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(float(r.fun), f, rtol=1e-6, atol=1e-15)
    assert (int(r.nit), int(r.nfev), int(r.njev), int(r.status)) == (nit, nfev, njev, status)
    assert bool(r.success) == (status == 0)
    assert r.hess_inv is None


def test_lbfgs_float32_tracks_jax():
    """TestLBFGS.test_minimize in float32 (maxcor=3, maxiter=8): JAX's iterate after 9
    steps (status 1, maxiter); float32 rounding differs in the 6th digit."""
    r = minimize(_rosen, np.zeros(5, np.float32), method=M, options=dict(maxcor=3, maxiter=8))
    assert r.x.dtype == np.float32 and r.fun.dtype == np.float32
    np.testing.assert_allclose(np.asarray(r.x), [0.8164017200469971, 0.65534907579422,
                                                 0.37232503294944763, 0.12318934500217438,
                                                 0.0016531654400750995], rtol=2e-5, atol=1e-7)
    assert (int(r.nit), int(r.nfev), int(r.status)) == (9, 22, 1)


def test_lbfgs_complex_sphere_solution():
    """TestLBFGS.test_minimize_complex_sphere: the minimiser of |z - z0|^2 is z0."""
    r = minimize(_sphere, fnp.zeros(4, complex), method=M, options=dict(gtol=1e-6))
    np.testing.assert_allclose(np.asarray(r.x), _Z0, atol=1e-12)


def test_lbfgs_options_checked():
    with pytest.raises(TypeError, match="line_search_maxiter"):
        minimize(_rosen, np.zeros(2), method=M, options=dict(line_search_maxiter=3))
    with pytest.raises(TypeError, match="L-BFGS"):
        minimize(_rosen, np.zeros(2, complex), method="BFGS")
