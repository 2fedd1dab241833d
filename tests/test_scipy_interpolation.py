"""functrans.scipy.ndimage.map_coordinates, interpolate.RegularGridInterpolator and
cluster.vq.vq against scipy: every mode and method, out-of-grid points, trailing value
axes; gradients against finite differences, jit and vmap."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.cluster.vq as svq
import scipy.interpolate as sint
import scipy.ndimage as snd

import functrans as ft
import functrans.numpy as fnp
from functrans.scipy import interpolate as fint
from functrans.scipy import ndimage as fnd
from functrans.scipy.cluster import vq as fvq
from functrans.test_util import check_grads

_RNG = np.random.default_rng(5)
_IMG = _RNG.normal(size=(5, 7))
_COORDS = [_RNG.uniform(-3, 8, size=(4, 3)), _RNG.uniform(-3, 10, size=(4, 3))]
_MODES = {"constant": "grid-constant", "nearest": "nearest", "wrap": "grid-wrap",
          "mirror": "mirror", "reflect": "reflect"}


@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("mode", list(_MODES))
def test_map_coordinates_against_scipy(mode, order):
    got = fnd.map_coordinates(_IMG, _COORDS, order, mode=mode, cval=1.5)
    want = snd.map_coordinates(_IMG, _COORDS, order=order, mode=_MODES[mode], cval=1.5)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-14, atol=1e-14)
    jitted = ft.jit(lambda img, c: fnd.map_coordinates(img, list(c), order, mode=mode, cval=1.5))
    np.testing.assert_allclose(np.asarray(jitted(_IMG, tuple(_COORDS))), want, rtol=1e-14,
                               atol=1e-14)


def test_map_coordinates_rounding_ints_grads_vmap():
    half = [np.array([0.5, 1.5, 2.5])]
    assert np.asarray(fnd.map_coordinates(np.arange(4.0), half, 0)).tolist() == [1.0, 2.0, 3.0]
    ints = fnd.map_coordinates(np.arange(4) * 3, [np.array([0.5, 1.2])], 1)
    assert ints.dtype == np.int64 and np.asarray(ints).tolist() == [2, 4]
    # integer results round half away from zero, as scipy (not half to even)
    halves = fnd.map_coordinates(np.arange(-3, 3), [np.array([0.5, 1.5, 2.5, 3.5])], 1)
    assert np.asarray(halves).tolist() == [-3, -2, -1, 1]
    inside = [np.array([0.3, 2.6, 3.9]), np.array([1.2, 4.4, 0.7])]
    check_grads(lambda img, c: fnd.map_coordinates(img, [inside[0], c], 1), (_IMG, inside[1]),
                order=1, modes=("fwd", "rev"))
    batch = _RNG.normal(size=(3, 5, 7))
    got = ft.vmap(lambda im: fnd.map_coordinates(im, _COORDS, 1, mode="wrap"))(batch)
    want = [snd.map_coordinates(im, _COORDS, order=1, mode="grid-wrap") for im in batch]
    np.testing.assert_allclose(np.asarray(got), np.stack(want), rtol=1e-14, atol=1e-14)
    with pytest.raises(NotImplementedError):
        fnd.map_coordinates(_IMG, _COORDS, 3)
    with pytest.raises(ValueError):
        fnd.map_coordinates(_IMG, _COORDS[:1], 1)


_PTS = (np.sort(_RNG.uniform(0, 1, 6)), np.sort(_RNG.uniform(0, 2, 4)))
_VALS = _RNG.normal(size=(6, 4, 2))
_XI = np.stack([_RNG.uniform(-0.2, 1.2, 10), _RNG.uniform(-0.2, 2.2, 10)], -1)


@pytest.mark.parametrize("fill", [np.nan, None, 0.5])
@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_regular_grid_interpolator_against_scipy(method, fill):
    ours = fint.RegularGridInterpolator(_PTS, _VALS, method=method, fill_value=fill)
    ref = sint.RegularGridInterpolator(_PTS, _VALS, method=method, fill_value=fill,
                                       bounds_error=False)
    np.testing.assert_allclose(np.asarray(ours(_XI)), ref(_XI), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(np.asarray(ft.jit(lambda f, x: f(x))(ours, _XI)), ref(_XI),
                               rtol=1e-13, atol=1e-13)
    other = "nearest" if method == "linear" else "linear"
    np.testing.assert_allclose(np.asarray(ours(_XI[:3], method=other)),
                               ref(_XI[:3], method=other), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_regular_grid_interpolator_takes_scipys_point_forms(method):
    # a tuple of coordinate arrays (broadcast, stacked last), and for one grid a vector
    ours = fint.RegularGridInterpolator(_PTS, _VALS, method=method)
    ref = sint.RegularGridInterpolator(_PTS, _VALS, method=method, bounds_error=False)
    xs, ys = _XI[:2, 0], _XI[:2, 1]         # two points: a stacked (2, 2) reads wrongly
    for xi in [(xs, ys), (xs[:, None], ys[None, :]), _XI[0]]:
        np.testing.assert_allclose(np.asarray(ours(xi)), ref(xi), rtol=1e-13, atol=1e-13)
    one = fint.RegularGridInterpolator(_PTS[:1], _VALS[:, 0, 0], method=method)
    ref1 = sint.RegularGridInterpolator(_PTS[:1], _VALS[:, 0, 0], method=method,
                                        bounds_error=False)
    for xi in [_XI[:, 0], (_XI[:, 0],)]:
        np.testing.assert_allclose(np.asarray(one(xi)), ref1(xi), rtol=1e-13, atol=1e-13)


def test_regular_grid_interpolator_grads_vmap_errors():
    xi = np.array([[0.4, 0.9], [0.55, 1.3]])
    xi = np.clip(xi, [_PTS[0][0], _PTS[1][0]], [_PTS[0][-1], _PTS[1][-1]])
    check_grads(lambda v, x: fint.RegularGridInterpolator(_PTS, v)(x), (_VALS, xi), order=1,
                modes=("fwd", "rev"))
    vals = _RNG.normal(size=(3, 6, 4))
    got = ft.vmap(lambda v: fint.RegularGridInterpolator(_PTS, v, fill_value=None)(_XI))(vals)
    want = [sint.RegularGridInterpolator(_PTS, v, bounds_error=False, fill_value=None)(_XI)
            for v in vals]
    np.testing.assert_allclose(np.asarray(got), np.stack(want), rtol=1e-13, atol=1e-13)
    with pytest.raises(NotImplementedError):
        fint.RegularGridInterpolator(_PTS, _VALS, bounds_error=True)
    with pytest.raises(ValueError):
        fint.RegularGridInterpolator(_PTS, _VALS, method="cubic")


def test_regular_grid_interpolator_derivative_on_a_knot_uses_the_cell_below():
    # JAX (searchsorted side='left', as scipy) takes the slope of the cell below a knot
    f = fint.RegularGridInterpolator((np.array([0.0, 1.0, 3.0]),), np.array([0.0, 2.0, 3.0]))
    g = ft.grad(lambda x: f(fnp.reshape(x, (1, 1)))[0])
    assert float(g(1.0)) == 2.0 and float(g(0.0)) == 2.0 and float(g(3.0)) == 0.5
    assert float(f(np.array([[1.0]]))[0]) == 2.0


@pytest.mark.parametrize("dims", [1, 2])
def test_vq_against_scipy(dims):
    obs, book = _RNG.normal(size=(10, 3)), _RNG.normal(size=(4, 3))
    if dims == 1:
        obs, book = obs[:, 0], book[:, 0]
    codes, dist = fvq.vq(obs, book)
    want_codes, want_dist = svq.vq(obs, book)
    assert np.asarray(codes).tolist() == want_codes.tolist()
    np.testing.assert_allclose(np.asarray(dist), want_dist, rtol=1e-14)
    codes_j, dist_j = ft.jit(fvq.vq)(obs, book)
    assert np.asarray(codes_j).tolist() == want_codes.tolist()
    check_grads(lambda o, b: fvq.vq(o, b)[1], (obs, book), order=1, modes=("fwd", "rev"))
    exact = np.asarray(ft.grad(lambda b: fnp.sum(fvq.vq(book, b)[1]))(book))
    assert np.isfinite(exact).all()
    with pytest.raises(ValueError):
        fvq.vq(_RNG.normal(size=(3, 2)), _RNG.normal(size=(3, 4)))
