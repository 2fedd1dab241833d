"""conv_general_dilated, reduce_window and the cumulative reductions against values JAX
0.10.2 computed once (x64): outputs and VJPs with a random cotangent.
``tests/data/make_jax_lax_extra_reference.py`` regenerates the two .npz files."""
import ast
import os

import numpy as np
import pytest

import functrans as ft
from functrans import lax

DATA = os.path.join(os.path.dirname(__file__), "data")

from tests.data.jax_lax_extra_cases import CONV_CASES, WINDOW_CASES


@pytest.mark.parametrize("j", range(len(CONV_CASES)))
def test_conv_matches_jax(j):
    r = np.load(os.path.join(DATA, "jax_conv_reference.npz"))
    kw = CONV_CASES[j]["kw"]
    y, vjp = ft.vjp(lambda x, w: lax.conv_general_dilated(x, w, **kw), r[f"x{j}"], r[f"w{j}"])
    gx, gw = vjp(r[f"ct{j}"])
    for got, key in ((y, "y"), (gx, "gx"), (gw, "gw")):
        np.testing.assert_allclose(got, r[f"{key}{j}"], rtol=1e-10, atol=1e-12, err_msg=key)


@pytest.mark.parametrize("j", range(len(WINDOW_CASES)))
def test_reduce_window_matches_jax(j):
    r = np.load(os.path.join(DATA, "jax_reduce_window_reference.npz"))
    op, shape, w, s, p, bd, wd, init = WINDOW_CASES[j]
    rng = np.random.default_rng(j)
    x = rng.standard_normal(shape)

    def f(x):
        return lax.reduce_window(x, init, getattr(lax, op), w, s, p, bd, wd)
    y = f(x)
    np.testing.assert_allclose(y, r[f"y{j}"], rtol=1e-12)
    if f"g{j}" in r.files:             # JAX differentiates only some of them
        ct = rng.standard_normal(np.shape(y))
        np.testing.assert_allclose(ft.vjp(f, x)[1](ct)[0], r[f"g{j}"], rtol=1e-12)


def test_reduce_window_max_min_grad_goes_to_first_tie_as_jax():
    # JAX 0.10.2 (select-and-scatter): each window's cotangent goes wholly to its first
    # maximum (minimum); an elementwise-max fold split it in halves on ties (max pooling)
    x = np.array([2., 2., 1., 3., 3.])

    def g(op, pad, init):
        return ft.grad(lambda z: lax.reduce_window(z, init, op, (2,), (1,), pad).sum())
    np.testing.assert_array_equal(g(lax.max, "VALID", -np.inf)(x), [1., 1., 0., 2., 0.])
    np.testing.assert_array_equal(ft.jit(g(lax.max, "SAME", -np.inf))(x), [1., 1., 0., 2., 1.])
    np.testing.assert_array_equal(g(lax.min, "VALID", np.inf)(x), [1., 0., 2., 1., 0.])
    xt = np.array([[1., 1., 2.], [2., 0., 2.], [1., 2., 2.]])
    pool = ft.grad(lambda z: lax.reduce_window(z, -np.inf, lax.max, (2, 2), (1, 1),
                                               "SAME").sum())
    np.testing.assert_array_equal(ft.vmap(pool)(np.stack([xt, xt])),
                                  [[[0., 0., 2.], [2., 0., 2.], [0., 2., 1.]]] * 2)
    nan = lax.reduce_window(np.array([1., np.nan, 0.]), -np.inf, lax.max, (2,), (1,))
    np.testing.assert_array_equal(nan, [np.nan, np.nan])


def test_reduce_window_traced_init_and_empty_output_as_jax():
    """JAX's lax_test testReduceWindow passes init_value as a jit argument (raised
    TracerArrayConversionError), testReduceWindowWithEmptyOutput a window longer than
    the padded operand (raised a slice error): an empty result."""
    x = np.arange(24.0).reshape(2, 3, 4)
    f = lambda v, i: lax.reduce_window(v, i, lax.max, (1, 2, 2), (1, 1, 1), "VALID")  # noqa: E731
    np.testing.assert_array_equal(ft.jit(f)(x, -np.inf), f(x, -np.inf))
    np.testing.assert_array_equal(ft.jit(f)(x, 100.0), np.full((2, 2, 3), 100.0))
    e = lambda v: lax.reduce_window(v, 0.0, lax.add, (7, 1, 1), (1, 1, 1), [(1, 0), (0, 0), (0, 0)])  # noqa: E731
    for run in (lambda g: g, ft.jit):
        assert run(e)(np.ones((5, 3, 2))).shape == (0, 3, 2)


def test_lax_binary_ops_broadcast_size_one_axes_and_0d_operands_as_jax():
    """JAX's lax_test/lax_vmap_op_test op tables pair shapes (3, 4) with (3, 1) and
    (3, 1) with (1, 4), and LazyConstantTest adds a 0-d array to a (2, 3) one: JAX's
    lax binary ops broadcast them; traced (jit, vmap) they raised here. Operands of
    different ranks (> 0) still raise, as in JAX; broadcast_in_dim takes its
    dimensions in any order, as JAX's."""
    a, b, c = np.ones((3, 4)), np.arange(3.0).reshape(3, 1), np.arange(4.0).reshape(1, 4)
    for run in (lambda g: g, ft.jit):
        np.testing.assert_array_equal(run(lax.add)(a, b), a + b)
        np.testing.assert_allclose(run(lax.atan2)(b, c), np.arctan2(b, c), rtol=1e-15)
        np.testing.assert_array_equal(run(lax.lt)(b, c), b < c)
        np.testing.assert_array_equal(run(lax.sub)(np.array(2.0), a), 2.0 - a)
        np.testing.assert_array_equal(run(lax.complex)(b, c), b + 1j * c)
    np.testing.assert_array_equal(ft.vmap(lax.mul, (1, None))(np.ones((3, 5, 4)), b),
                                  np.broadcast_to(b, (5, 3, 4)))
    np.testing.assert_array_equal(ft.grad(lambda v: ft.jit(lax.mul)(a, v).sum())(b), [[4.0]] * 3)
    with pytest.raises(TypeError, match="same shape"):
        ft.jit(lax.add)(np.ones(3), np.ones((1, 3)))
    with pytest.raises(TypeError, match="same shape"):
        ft.jit(lax.add)(np.ones((2, 3)), np.ones((3, 3)))
    x = np.arange(6.0).reshape(3, 2)
    want = np.broadcast_to(x.T[:, None, :], (2, 4, 3))
    for run in (lambda g: g, ft.jit):
        np.testing.assert_array_equal(run(lambda v: lax.broadcast_in_dim(v, (2, 4, 3), (2, 0)))(x), want)


CUM_GRADS_JAX = """cumsum False [[6.0, 6.0, 5.0, 3.0], [22.0, 18.0, 13.0, 7.0]]
cumsum True [[0.0, 1.0, 3.0, 6.0], [4.0, 9.0, 15.0, 22.0]]
cumprod False [[-9.6, 2.4, -1.26, -2.16], [1.22, -13.9, 5.4, -0.98]]
cumprod True [[0.0, 1.0, 0.4, 4.6], [-1.68, -18.9, 23.4, 1.54]]
cummax False [[1.0, 0.0, 5.0, 0.0], [15.0, 0.0, 0.0, 7.0]]
cummax True [[0.0, 0.0, 3.0, 3.0], [0.0, 0.0, 0.0, 22.0]]
cummin False [[0.0, 6.0, 0.0, 0.0], [4.0, 5.0, 13.0, 0.0]]
cummin True [[0.0, 1.0, 0.0, 5.0], [0.0, 0.0, 15.0, 7.0]]
cumlogsumexp False [[1.495073, 0.333596, 3.70859, 0.462741], [11.902276, 3.550722, 0.813381, 5.733621]]
cumlogsumexp True [[0.0, 0.032251, 2.426356, 3.541393], [0.443406, 0.479328, 0.339642, 20.737623]]"""


def test_cumulative_reductions_gradients_match_jax():
    x = np.array([[0.3, -1.2, 2.0, 0.5], [1.0, 0.2, -0.7, 3.0]])
    w = np.arange(8.).reshape(2, 4)
    for line in CUM_GRADS_JAX.splitlines():
        name, rev, want = line.split(" ", 2)
        f = lambda x: (getattr(lax, name)(x, axis=1, reverse=rev == "True") * w).sum()  # noqa
        np.testing.assert_allclose(ft.grad(f)(x), ast.literal_eval(want), atol=1e-6, err_msg=line)


@pytest.mark.parametrize("jit", [False, True])
def test_rem_and_div_truncate_as_jax(jit):
    """jax 0.10.2's lax.rem / lax.div (XLA's): the remainder has x's sign and integer
    division rounds toward zero; x rem 0 is x, x / 0 is -1 (all ones unsigned). They were
    the primitives' numpy (flooring) rules: lax.rem(-3., 2.) gave 1.0, lax.div(-7, 2) -4."""
    run = (lambda f: ft.jit(f, backend="cpu")) if jit else (lambda f: f)
    i32 = np.iinfo(np.int32).min
    x = np.array([7, -7, 7, -7, 5, -5, 0, i32], np.int32)
    y = np.array([2, 2, -2, -2, 0, 0, 0, -1], np.int32)
    assert run(lax.rem)(x, y).tolist() == [1, -1, 1, -1, 5, -5, 0, 0]
    assert run(lax.div)(x, y).tolist() == [3, -3, -3, 3, -1, -1, -1, i32]
    u, v = np.array([7, 5], np.uint32), np.array([2, 0], np.uint32)
    assert run(lax.rem)(u, v).tolist() == [1, 5] and run(lax.div)(u, v).tolist() == [3, 2**32 - 1]
    f = run(lax.rem)(np.array([-3.0, 3.0, -4.0, -1.0]), np.array([2.0, -2.0, 2.0, np.inf]))
    assert f.tolist() == [-1.0, 1.0, -0.0, -1.0] and np.signbit(f[2])


def test_reshape_dimensions_and_scalar_select_predicate_as_jax():
    """JAX's lax_vmap_test testReshape passes ``dimensions=`` (a transpose first; it was
    not a parameter here) and testSelect a 0-d predicate with (3,) cases under vmap
    (raised: the predicate must have the cases' shape)."""
    x = np.arange(24.0).reshape(2, 3, 4)
    f = lambda v: lax.reshape(v, (4, 6), dimensions=(2, 0, 1))   # noqa: E731
    want = np.transpose(x, (2, 0, 1)).reshape(4, 6)
    for run in (lambda g: g, ft.jit):
        np.testing.assert_array_equal(run(f)(x), want)
    np.testing.assert_array_equal(ft.vmap(f)(np.stack([x, x + 1])), [want, want + 1])
    with pytest.raises(ValueError, match="permutation"):
        lax.reshape(x, (24,), dimensions=(0, 1))
    g = lambda p, a, b: lax.select_n(p, a, b)   # noqa: E731
    np.testing.assert_array_equal(ft.jit(g)(np.array(True), np.zeros(3), np.ones(3)), np.ones(3))
    np.testing.assert_array_equal(
        ft.vmap(g, (0, 0, 0))(np.array([True, False]), np.zeros((2, 3)), np.ones((2, 3))),
        [[1.0] * 3, [0.0] * 3])
    np.testing.assert_array_equal(
        ft.grad(lambda a: g(np.array(False), a, 2 * a).sum())(np.ones(3)), np.ones(3))


def test_cumlogsumexp_derivatives_at_ties_are_jaxs():
    """cumlogsumexp of equal entries had wrong derivatives (its logaddexp combine took the
    formula's derivative: max splits a tie, abs'(0) = 1 then gave all of it to one side):
    jvp of zeros(4) along [0, 1, 2, 3] was [0, 1, 1.33, 3], not the running means; a Cox
    partial likelihood at beta = 0 (round 9 programs) had wrong gradients and Hessians.
    Expected values from JAX 0.10.2 (x64)."""
    import functrans.numpy as fnp
    _, t = ft.jvp(lax.cumlogsumexp, (np.zeros(4),), (np.arange(4.0),))
    np.testing.assert_allclose(t, [0, 0.5, 1, 1.5], rtol=1e-15)
    w = np.array([1.0, 0.0, 2.0, 0.5, 1.0])
    f = lambda x: fnp.sum(w * lax.cumlogsumexp(x))
    x = np.array([0.0, 0.0, 1.0, 1.0, 2.0])
    want = [1.55856928, 0.55856928, 1.51834871, 0.36611494, 0.49839779]
    np.testing.assert_allclose(ft.grad(f)(x), want, rtol=2e-8)
    np.testing.assert_allclose(ft.jit(ft.grad(f))(x), want, rtol=2e-8)
    np.testing.assert_allclose(ft.grad(f)(np.zeros(5)), [1.99166667, 0.99166667, 0.99166667,
                                                           0.325, 0.2], rtol=2e-8)
    np.testing.assert_allclose(ft.hessian(f)(np.zeros(5))[:2],
                               [[0.69819444, -0.29347222, -0.29347222, -0.07125, -0.04],
                                [-0.29347222, 0.69819444, -0.29347222, -0.07125, -0.04]],
                               rtol=1e-7)
    g = ft.grad(lambda x: fnp.sum(w * lax.cumlogsumexp(x, reverse=True)))(np.zeros(5))
    np.testing.assert_allclose(g, [0.2, 0.2, 0.86666667, 1.11666667, 2.11666667], rtol=2e-8)


def test_cumlogsumexp_jet_at_ties():
    """jet expands cumlogsumexp's body (not its custom JVP): at equal entries its first
    coefficient was [0, 1, 1.33] along [0, 1, 2] (the tie handed to one side). Running
    softmax means and E[x''] + Var(x'), the exact coefficients, now; values unchanged."""
    from functrans.experimental.jet import jet
    out, (c1, c2) = jet(lax.cumlogsumexp, (np.zeros(3),), ((np.arange(3.0), np.ones(3)),))
    np.testing.assert_allclose(out, np.log([1.0, 2.0, 3.0]), rtol=1e-15)
    np.testing.assert_allclose(c1, [0, 0.5, 1], rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(c2, [1, 1.25, 1 + 2 / 3], rtol=1e-14)


def test_reduce_window_mul_jvp_skips_padding_taps():
    """A window's product over padding is the product of its operand elements: the
    padding tap ``acc * 1`` made the tangent ``t * 1 + inf * 0`` = NaN (seed 30224).
    JAX 0.10.2 gives NaN here too ([nan, 5, 1] for [inf, 2, 3] SAME, and NaN where
    inf * -0.64 meets padding); the maths, d(x*y) = y dx + x dy over the real elements
    only, gives the values below (also jitted and under vmap)."""
    def jvp(x, pad):
        f = lambda a: lax.reduce_window(a, 1.0, lax.mul, (2,), (1,), pad)  # noqa: E731
        return ft.jvp(f, (x,), (np.ones_like(x),))[1]
    x = np.array([-0.057, -0.64, np.inf])
    np.testing.assert_allclose(jvp(x, "SAME"), [-0.697, np.inf, 1.0], rtol=1e-15)
    np.testing.assert_allclose(jvp(x, ((1, 1),)), [1.0, -0.697, np.inf, 1.0], rtol=1e-15)
    y = np.array([np.inf, 2.0, 3.0])
    np.testing.assert_array_equal(ft.jit(jvp, static_argnums=1)(y, ((1, 1),)), [1, np.inf, 5, 1])
    np.testing.assert_array_equal(ft.vmap(lambda v: jvp(v, "SAME"))(np.stack([y, y])),
                                  [[np.inf, 5, 1]] * 2)
    # inf * -inf inside one window: its slope -inf + inf is NaN in the maths too
    np.testing.assert_array_equal(jvp(np.array([2.0, np.inf, -np.inf]), "SAME"),
                                  [np.inf, np.nan, 1.0])
    # base dilation holes are skipped the same way (no NaN from the hole next to inf)
    z = lax.reduce_window(np.array([np.inf, 2.0]), 1.0, lax.mul, (2,), (1,), "VALID", (2,))
    np.testing.assert_array_equal(z, [np.inf, 2.0])
    t = ft.jvp(lambda a: lax.reduce_window(a, 1.0, lax.mul, (2,), (1,), "VALID", (2,)),
               (np.array([np.inf, 2.0]),), (np.array([1.0, 1.0]),))[1]
    np.testing.assert_array_equal(t, [1.0, 1.0])
