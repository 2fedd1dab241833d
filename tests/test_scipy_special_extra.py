"""functrans.scipy.special's loggamma, boxcox, boxcox1p, dawsn, expi and spence:
values against scipy on wide grids with edges (inf, nan, 0, the region seams),
derivatives (forward and reverse) against finite differences, jit equals eager,
vmap equals a loop, float32 stays float32, complex input is refused."""
import numpy as np
import pytest
import scipy.special as sps

import functrans as ft
import functrans.numpy as fnp
from functrans.scipy import special as fss
from functrans.test_util import check_grads

_EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan]
_REAL = np.concatenate([np.linspace(-60, 60, 2401), np.geomspace(1e-300, 1e300, 301),
                        -np.geomspace(1e-300, 1e300, 301), [0.5, 1.0, 2.0, 8.0, 40.0], _EDGES])
_POS = np.concatenate([np.linspace(0, 10, 1001), np.geomspace(1e-300, 1e300, 601),
                       [-1.0, -1e-300, 0.5, 2.0], _EDGES])
_EXPI = np.concatenate([np.linspace(-700, 705, 2811), np.geomspace(1e-300, 700, 301),
                        -np.geomspace(1e-300, 700, 301), [39.999, 40.0, 40.001], _EDGES])
_LAMBDA = np.array([0.0, 0.5, -2.0, 1.7, 1e-8])


def _assert_close(got, want, rtol, atol=0.0):
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=atol)


# (function, scipy's, grid, rtol, atol): atol where a zero makes the error absolute
VALUE_ROWS = [
    ("dawsn", fss.dawsn, sps.dawsn, _REAL, 1e-14, 0.0),
    ("spence", fss.spence, sps.spence, _POS, 1e-14, 1e-300),
    # expi's zero at 0.3725 (absolute error there); ours is within 1e-15 of exact
    # at the asymptotic seam x = 40, where scipy's own error is 2.5e-14
    ("expi", fss.expi, sps.expi, _EXPI, 5e-14, 1e-15),
    ("loggamma", fss.loggamma, sps.loggamma, np.concatenate([np.linspace(-5, 170, 1751), _EDGES]),
     1e-14, 1e-14),
]


@pytest.mark.parametrize("name, ours, ref, grid, rtol, atol", VALUE_ROWS,
                         ids=[r[0] for r in VALUE_ROWS])
def test_values_match_scipy(name, ours, ref, grid, rtol, atol):
    with np.errstate(all="ignore"):
        want = ref(grid)
    _assert_close(ours(grid), want, rtol, atol)


@pytest.mark.parametrize("name", ["boxcox", "boxcox1p"])
def test_boxcox_matches_scipy(name):
    x = np.concatenate([np.linspace(-3, 50, 531), np.geomspace(1e-12, 1e12, 51), [np.inf, np.nan]])
    if name == "boxcox1p":
        tiny = np.geomspace(1e-300, 1e-10, 20)
        x = np.concatenate([x - 1.0, tiny, -tiny])
    with np.errstate(all="ignore"):
        want = getattr(sps, name)(x[:, None], _LAMBDA)
    _assert_close(getattr(fss, name)(x[:, None], _LAMBDA), want, 1e-13, 1e-300)


def test_edge_values():
    assert np.isnan(float(fss.spence(np.inf))) and np.isnan(float(fss.spence(-1.0)))
    assert float(fss.spence(1.0)) == 0.0 and np.signbit(float(fss.spence(1.0))) == 0
    assert float(fss.expi(0.0)) == -np.inf and float(fss.expi(np.inf)) == np.inf
    assert float(fss.loggamma(0.0)) == np.inf and np.isnan(float(fss.loggamma(-1.5)))
    assert float(fss.dawsn(-np.inf)) == 0.0 and np.signbit(float(fss.dawsn(-np.inf)))
    # boxcox's limit at x = 0 for small lambda > 0 is -1/lambda (scipy switches to log
    # below |lambda| = 1e-19 and says -inf; JAX and we keep the exact value)
    assert float(fss.boxcox(0.0, 1e-8)) == -1e8


GRAD_ROWS = [
    ("dawsn", fss.dawsn, [-9.0, -3.0, -0.7, 0.3, 1.5, 5.0, 12.0]),
    ("expi", fss.expi, [-50.0, -2.0, -0.3, 0.2, 1.0, 20.0, 45.0]),
    ("spence", fss.spence, [0.1, 0.5, 0.9, 1.3, 2.0, 3.5]),
    ("loggamma", fss.loggamma, [0.3, 1.0, 2.5, 20.0]),
    ("boxcox_x", lambda x: fss.boxcox(x, 0.7), [0.2, 1.0, 3.0]),
    ("boxcox_lmbda", lambda lam: fss.boxcox(2.5, lam), [-1.0, 0.3, 2.0]),
    ("boxcox1p_x", lambda x: fss.boxcox1p(x, -0.4), [-0.5, 0.01, 3.0]),
]


@pytest.mark.parametrize("name, fn, points", GRAD_ROWS, ids=[r[0] for r in GRAD_ROWS])
def test_derivatives_match_finite_differences(name, fn, points):
    check_grads(fn, (fnp.asarray(np.array(points)),), order=1, rtol=1e-5, atol=1e-7)


def test_dawsn_derivative_far_out_has_no_cancellation_or_overflow():
    """1 - 2x dawsn(x) was -inf at 3e38 in float32 (2x overflowed), NaN at +-inf and pure
    cancellation noise from ~1e8 (fuzz round 8, dawsn(x + K) with extreme constants).
    The slope there is -R(1/x^2) of dawsn's asymptotic form: about -1/(2x^2) - 3/(4x^4)."""
    x = np.array([40.0, -100.0, 1e5, -1e8, 1e150, 1e300, np.inf, -np.inf])
    g = np.asarray(ft.vmap(ft.grad(fss.dawsn))(x))
    with np.errstate(over="ignore"):     # -sum (2n-1)!! / (2x^2)^n, n >= 1
        want = -sum(np.prod(np.arange(1, 2 * n, 2)) / (2 * x * x) ** n for n in range(1, 8))
    np.testing.assert_allclose(g, want, rtol=1e-12, atol=0)
    assert (g <= 0).all() and np.isfinite(g).all()
    x32 = np.array([3e38, -3e38, np.inf, 30.0], np.float32)
    for fn in (ft.vmap(ft.grad(fss.dawsn)), ft.jit(ft.vmap(ft.grad(fss.dawsn)))):
        g32 = np.asarray(fn(x32))
        assert g32.dtype == np.float32
        np.testing.assert_allclose(g32, [0.0, 0.0, 0.0, -sum(
            np.prod(np.arange(1, 2 * n, 2)) / 1800.0 ** n for n in range(1, 8))], rtol=1e-6)


def test_closed_form_derivatives():
    x = np.array([-3.0, 0.4, 2.0])
    np.testing.assert_allclose(np.asarray(ft.vmap(ft.grad(fss.dawsn))(x)),
                               1 - 2 * x * sps.dawsn(x), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(ft.vmap(ft.grad(fss.expi))(x)), np.exp(x) / x,
                               rtol=1e-13)
    xs = np.array([0.3, 1.0, 4.0])
    np.testing.assert_allclose(np.asarray(ft.vmap(ft.grad(fss.spence))(xs)),
                               [np.log(0.3) / 0.7, -1.0, np.log(4.0) / -3.0], rtol=1e-13)


NAMES = ["dawsn", "expi", "spence", "loggamma"]


@pytest.mark.parametrize("name", NAMES)
def test_jit_vmap_and_float32(name):
    fn = getattr(fss, name)
    x = np.array([0.05, 0.7, 1.9, 6.0, 30.0, 55.0])
    eager = np.asarray(fn(x))
    np.testing.assert_allclose(np.asarray(ft.jit(fn)(x)), eager, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(ft.vmap(fn)(x)),
                               np.array([float(fn(v)) for v in x]), rtol=1e-15)
    got32 = fn(x.astype(np.float32))
    assert got32.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got32), eager, rtol=2e-5)


def test_boxcox_jit_vmap():
    x, lam = np.array([0.5, 2.0, 9.0]), np.array([0.0, 0.3, -1.0])
    eager = np.asarray(fss.boxcox(x, lam))
    np.testing.assert_allclose(np.asarray(ft.jit(fss.boxcox)(x, lam)), eager, rtol=1e-15)
    np.testing.assert_allclose(np.asarray(ft.vmap(fss.boxcox1p, in_axes=(0, None))(x, 0.3)),
                               sps.boxcox1p(x, 0.3), rtol=1e-14)


@pytest.mark.parametrize("name", [n for n in NAMES if n != "loggamma"] + ["boxcox", "boxcox1p"])
def test_complex_input_is_refused(name):
    # loggamma takes complex input (scipy's principal branch): test_scipy_special_more
    args = (np.array([1.0 + 1.0j]),) + ((0.5,) if name.startswith("boxcox") else ())
    with pytest.raises(TypeError, match=f"{name}: complex input"):
        getattr(fss, name)(*args)
