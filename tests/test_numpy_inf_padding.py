"""Values next to inf and NaN that used to be computed as x * 0 (NaN there): size=
padding, piecewise's default branch and derivatives, cross, compress; JAX 0.10.2's answers."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp


@pytest.mark.parametrize("jitted", [False, True])
def test_size_padding_is_fill_value_even_next_to_inf_and_nan(jitted):
    """The padding of a size= result is fill_value (0 by default), as JAX's: it was
    computed as picked * 0 + fill, NaN when the last entry was inf or NaN; size=0 raised."""
    run = ft.jit if jitted else (lambda f: f)
    x = np.array([1.0, 0.0, np.inf])
    assert run(lambda a: fnp.extract(a > 5, a, size=3))(x).tolist() == [np.inf, 0.0, 0.0]
    assert run(lambda a: fnp.extract(a > 5, a, size=3, fill_value=7.0))(x).tolist() == \
        [np.inf, 7.0, 7.0]
    assert run(lambda a: fnp.setdiff1d(a, np.array([1.0]), size=3))(x).tolist() == \
        [0.0, np.inf, 0.0]
    y = np.array([0.0, np.nan, 2.0])
    assert run(lambda a: fnp.extract(a > 1, a, size=2, fill_value=-1.0))(y).tolist() == [2.0, -1.0]
    assert fnp.nonzero(np.array([0, 1]), size=0)[0].shape == (0,)


@pytest.mark.parametrize("jitted", [False, True])
def test_piecewise_derivative_reaches_only_the_chosen_branch_as_jax(jitted):
    """JAX's piecewise is a per-element switch: a branch's derivative only reaches the
    elements it was chosen for. Evaluating every branch on all of x and selecting gave
    NaN gradients (sqrt at 0, v*v at inf) and NaN values where x was inf (default x * 0);
    the expected values are JAX 0.10.2's."""
    run = ft.jit if jitted else (lambda f: f)
    f = lambda x: fnp.sum(fnp.piecewise(x, [x < 0], [lambda v: fnp.sqrt(-v), fnp.log]))
    assert run(ft.grad(f))(np.array([4.0, -1.0, 0.0])).tolist() == [0.25, -0.5, np.inf]
    g = lambda x: fnp.sum(fnp.piecewise(x, [x < 0], [lambda v: v * v]))
    assert run(ft.grad(g))(np.array([np.inf, -1.0, 3.0])).tolist() == [0.0, -2.0, 0.0]
    assert run(lambda x: fnp.piecewise(x, [x < 0], [lambda v: v * 2]))(
        np.array([np.inf, -1.0])).tolist() == [0.0, -2.0]
    assert run(lambda a: fnp.cross(a, fnp.asarray([3.0, 1.0, 4.0])))(
        np.array([np.inf, 2.0])).tolist() == [8.0, -np.inf, np.inf]
    assert run(lambda a: fnp.compress(a < 0, a, size=2, fill_value=5.0))(
        np.array([np.inf, -1.0, 3.0])).tolist() == [-1.0, 5.0]


def test_unique_counts_with_size_below_the_number_of_uniques():
    """Fuzz round 9: with size= cutting uniques off, the last kept count ran to the end
    of the sorted array (counts of [1, 2, 3, 4, 5, 5] with size=3 were [1, 1, 4]). Wants
    are numpy's counts cut to size, as JAX 0.10.2 gives; padding counts are 0."""
    a = np.array([1, 2, 3, 4, 5, 5])
    for size, want in ((1, [1]), (3, [1, 1, 1]), (5, [1, 1, 1, 1, 2]), (7, [1, 1, 1, 1, 2, 0, 0])):
        for f in (fnp.unique, ft.jit(fnp.unique, static_argnames=("return_counts", "size"))):
            assert f(a, return_counts=True, size=size)[1].tolist() == want
    x = np.array([-2.0, 0.0, -1.0, 1.0, -0.0, -0.0, 2.0, -0.0, -1.0])
    assert fnp.unique(x, return_counts=True, size=4)[1].tolist() == [1, 2, 4, 1]
    assert ft.vmap(lambda v: fnp.unique(v, return_counts=True, size=2)[1])(
        np.array([[3, 1, 1, 2, 2, 2], [5, 5, 4, 4, 4, 9]])).tolist() == [[2, 3], [3, 2]]
    assert fnp.unique_counts(np.array([3, 1, 1, 2, 2, 2]), size=2).counts.tolist() == [2, 3]
    assert fnp.unique(np.zeros(0), return_counts=True, size=3)[1].tolist() == [0, 0, 0]
