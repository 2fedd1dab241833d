"""functrans.scipy.special.hyp2f1's op-table rows: values against scipy over the real line
(and JAX 0.10.2's conventions where the real function has no finite value), derivatives
against finite differences and mpmath, jit (native: no host step) against the
interpreter, vmap against a loop."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as ssp

import functrans as ft
from functrans.scipy import special as fsp
from functrans.test_util import check_grads


def _grid():
    rng = np.random.default_rng(0)
    n = 800
    a, b = rng.uniform(-5, 5, n), rng.uniform(-5, 5, n)
    c = rng.uniform(-5, 8, n)
    x = np.concatenate([rng.uniform(-12, 1, n // 2), rng.uniform(0.85, 1, n // 2)])
    a[:60] = np.round(a[:60])                                   # polynomials
    c[60:120] = a[60:120] + b[60:120] + np.round(rng.uniform(-4, 4, 60))   # integer c-a-b
    c[120:160] = np.round(c[120:160])                           # poles of c among them
    return a, b, c, x


def test_values_against_scipy_over_the_real_line():
    a, b, c, x = _grid()
    got, want = np.asarray(fsp.hyp2f1(a, b, c, x)), ssp.hyp2f1(a, b, c, x)
    fin = np.isfinite(want)
    assert fin.sum() > 700
    rel = np.abs(got[fin] - want[fin]) / np.abs(want[fin])
    assert np.median(rel) < 5e-15 and rel.max() < 1e-10, rel.max()
    # where scipy has no finite value, neither have we
    assert not np.isfinite(got[~fin]).any()


def test_special_values_as_jax():
    cases = [  # (a, b, c, x, value): JAX 0.10.2's where it is right, scipy's elsewhere
        (1.0, 2.0, -3.0, 0.5, np.inf), (1.0, 2.0, 0.0, 0.5, np.inf),   # c a pole
        (-3.0, 2.0, -5.0, 0.5, np.inf),                                 # as JAX (scipy 1.875)
        (1.5, 2.5, 3.7, 1.5, np.inf), (1.5, 2.5, 3.7, 1.0, np.inf),    # x > 1; x = 1, d <= 0
        (1.5, 2.5, 5.0, 1.0, ssp.gamma(5) * ssp.gamma(1) / (ssp.gamma(3.5) * ssp.gamma(2.5))),
        (2.0, 3.0, 4.0, 0.0, 1.0), (0.0, 2.0, 3.0, 5.0, 1.0),
        (1.0, 2.0, 2.0, 5.0, -0.25), (1.0, 2.0, 2.0, -5.0, 1 / 6),     # (1-x)^-a
        (-3.0, 2.0, 5.0, -5.0, 36.285714285714285), (-3.0, 2.0, 5.0, 2.0, 0.0857142857142857),
        (-2.0, 5.0, 1.0, 1.0, 6.0),                                     # polynomials (JAX inf)
        (1.5, 2.5, 3.7, -30.0, 0.014307753037511488),                   # JAX: inf
        (1.5, 2.5, 3.7, 0.999999, 650.3879315445824),                   # JAX: 44.18
        (1.5, 2.5, 3.7, np.nan, np.nan),                                # JAX: 1
    ]
    a, b, c, x, want = (np.array(v) for v in zip(*cases))
    np.testing.assert_allclose(np.asarray(fsp.hyp2f1(a, b, c, x)), want, rtol=1e-13)


def test_derivative_in_x_to_second_order_and_in_the_parameters():
    x = np.array([-3.0, -0.7, 0.3, 0.6])
    f = lambda x: fsp.hyp2f1(1.5, 2.5, 3.7, x)       # noqa: E731
    check_grads(f, (x,), order=2, modes=("fwd", "rev"), rtol=1e-6)
    d1 = ft.vmap(ft.grad(f))(x)
    np.testing.assert_allclose(np.asarray(d1), 1.5 * 2.5 / 3.7 * ssp.hyp2f1(2.5, 3.5, 4.7, x),
                               rtol=1e-13)
    check_grads(fsp.hyp2f1, (np.array([1.5, -0.5]), np.array([2.5, 1.2]),
                             np.array([3.7, 2.2]), np.array([0.4, -2.0])),
                order=1, modes=("fwd", "rev"), rtol=1e-6)


def test_parameter_derivatives_against_mpmath_and_nan_where_unconverged():
    ga, gb = ft.grad(fsp.hyp2f1, argnums=(0, 1))(1.5, 2.5, 3.7, -3.0)
    np.testing.assert_allclose([float(ga), float(gb)],
                               [-0.207662695442606894, -0.105391436577831796], rtol=1e-12)
    # a non-positive integer a (JAX: NaN), beyond the series' disc through Pfaff's form
    np.testing.assert_allclose(float(ft.grad(fsp.hyp2f1)(-3.0, 2.0, 5.0, -5.0)),
                               -48.0785409246924101, rtol=1e-12)
    g = ft.grad(fsp.hyp2f1, argnums=(0, 1, 2, 3))(1.5, 2.5, 3.7, 0.995)
    assert np.isnan([float(v) for v in g[:3]]).all()           # JAX: inaccurate numbers
    np.testing.assert_allclose(float(g[3]), 1.5 * 2.5 / 3.7 * ssp.hyp2f1(2.5, 3.5, 4.7, 0.995),
                               rtol=1e-12)


@pytest.mark.slow       # the CPU backend compiles the whole branch tree: ~10 s on 2 cores
def test_jit_is_native_and_equals_the_interpreter_and_vmap_a_loop():
    a, b, c, x = (v[::20] for v in _grid())
    jf = ft.jit(fsp.hyp2f1)
    assert jf.lower(a, b, c, x).compile().cost_analysis()["host steps"] == 0
    eager = np.asarray(fsp.hyp2f1(a, b, c, x))
    np.testing.assert_allclose(np.asarray(jf(a, b, c, x)), eager, rtol=1e-13)
    interp = ft.jit(fsp.hyp2f1, backend="interpret")(a, b, c, x)
    np.testing.assert_allclose(np.asarray(interp), eager, rtol=1e-13)
    loop = [float(fsp.hyp2f1(*v)) for v in zip(a[:6], b[:6], c[:6], x[:6])]
    np.testing.assert_allclose(np.asarray(ft.vmap(fsp.hyp2f1)(a[:6], b[:6], c[:6], x[:6])),
                               loop, rtol=1e-14)


def test_float32():
    got = fsp.hyp2f1(np.float32(1.5), np.float32(2.5), np.float32(3.7), np.float32(0.97))
    assert got.dtype == np.float32
    np.testing.assert_allclose(float(got), ssp.hyp2f1(1.5, 2.5, 3.7, 0.97), rtol=1e-5)
