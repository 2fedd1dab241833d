"""quantile/median with infinities and near-overflow values against stored JAX 0.10.2
values (x64). Found by differential fuzzing (round 12): the linear rule written as
``x_lo + t (x_hi - x_lo)`` gave NaN between -inf and a finite value (JAX and numpy: -inf)
and overflowed for [1e308, -1e308] (median inf; JAX and numpy 0.0)."""
import numpy as np

import functrans as ft
import functrans.numpy as fnp

INF = np.inf
A = np.array([[-128.5, -INF, 3.0, 2.0], [1e308, -1e308, 0.0, 1.0], [INF, 1.0, -INF, 7.0]])
Q = np.array([0.0, 0.25, 0.5, 0.6, 1.0])
# jnp.quantile(A, Q, axis=1) (JAX 0.10.2, x64). An infinite value hit exactly (t = 0)
# is NaN in JAX and numpy alike (inf * 0 in the weights).
JAX_Q = [[np.nan, -1e308, np.nan], [-INF, -2.5e307, -INF], [-63.25, 0.5, 4.0],
         [-24.100000000000023, 0.7999999999999998, 5.799999999999999], [3.0, 1e308, np.nan]]
JAX_MEDIAN = [-INF, 0.0, INF]            # jnp.median(A[:, :2], axis=1), numpy's too
JAX_NANMEDIAN = [-INF, 0.0]
JAX_F32 = [-INF, -128.5, -63.75]         # quantile([-128.5, -inf, 1] f32, [.25, .5, .75])


def _close(got, want, rtol=1e-14):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               rtol=rtol, atol=0)


def test_linear_quantile_with_infinities_and_overflow_as_jax():
    _close(fnp.quantile(A, Q, axis=1), JAX_Q)
    _close(ft.jit(lambda a, q: fnp.quantile(a, q, axis=1))(A, Q), JAX_Q)
    _close(ft.vmap(lambda a: fnp.quantile(a, Q))(A), np.asarray(JAX_Q).T)
    f32 = np.array([-128.5, -INF, 1.0], np.float32)
    got = fnp.quantile(f32, np.array([0.25, 0.5, 0.75], np.float32))
    assert got.dtype == np.float32
    _close(got, JAX_F32, rtol=1e-7)


def test_median_is_the_middle_mean_without_overflow_as_jax():
    _close(fnp.median(A[:, :2], axis=1), JAX_MEDIAN)
    _close(ft.jit(lambda a: fnp.median(a, axis=1))(A[:, :2]), JAX_MEDIAN)
    b = np.array([[-INF, np.nan, -128.5], [1e308, -1e308, np.nan]])
    _close(fnp.nanmedian(b, axis=1), JAX_NANMEDIAN)
    # one middle element is returned as is (numpy 1e308; JAX's (x + x) / 2 gives inf)
    assert float(fnp.median(np.array([1e308, 1e308, 1e308]))) == 1e308
    assert float(fnp.median(np.array([1e308, 1e308]))) == INF     # the mean overflows (both)


def test_quantile_and_median_gradients_as_jax():
    x = np.array([3.0, 1.0, 2.0, 5.0, 4.0, 0.5])
    # jax.grad of jnp.quantile(a, 0.3) and jnp.median(a)
    _close(ft.grad(lambda a: fnp.quantile(a, 0.3))(x), [0.0, 0.5, 0.5, 0.0, 0.0, 0.0])
    _close(ft.grad(lambda a: fnp.median(a))(x), [0.5, 0.0, 0.5, 0.0, 0.0, 0.0])
    _close(ft.jit(ft.grad(lambda a: fnp.median(a)))(x[:5]), [1.0, 0.0, 0.0, 0.0, 0.0])
