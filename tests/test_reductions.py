"""Reductions and products beyond the shared table: random shapes x axes x keepdims
against numpy (eager and jit), derivatives at ties (max/min split evenly) and at
zeros (prod/cumprod, one and two zeros), vmap of the rules, and error messages."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import functrans as ft
import functrans.numpy as fnp
from functrans import lax

REDUCERS = ["sum", "prod", "mean", "var", "std", "max", "min", "all", "any", "ptp"]


@st.composite
def array_and_axis(draw, min_dims=0, nonempty=False):
    shape = tuple(draw(st.lists(st.integers(1 if nonempty else 0, 4), min_size=min_dims,
                                max_size=4)))
    dtype = draw(st.sampled_from([np.float64, np.float32, np.int32, np.int64, np.bool_]))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    nd = len(shape)
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none" or nd == 0:
        axis = None
    elif kind == "int":
        axis = draw(st.integers(-nd, nd - 1))
    else:
        axes = draw(st.lists(st.integers(0, nd - 1), unique=True, max_size=nd))
        axis = tuple(a - nd if draw(st.booleans()) else a for a in axes)
    return x, axis, draw(st.booleans())


def _close(got, want, dtype_check=True):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape
    if dtype_check:
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind == "f":
        tol = 1e-5 if want.dtype == np.float32 else 1e-10
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def _empty_reduced(x, axis):
    axes = range(x.ndim) if axis is None else ((axis,) if isinstance(axis, int) else axis)
    return any(x.shape[a] == 0 for a in axes)


@pytest.mark.parametrize("name", REDUCERS)
@given(data=array_and_axis())
def test_reductions_match_numpy_eager_and_jit(name, data):
    x, axis, keepdims = data
    if name in ("var", "std", "mean") and x.dtype == np.bool_:
        x = x.astype(np.int32)
    if name == "ptp" and x.dtype == np.bool_:
        return   # numpy's ptp subtracts bools, which it rejects
    fn = getattr(fnp, name)
    np_fn = getattr(np, name)
    if name in ("max", "min", "ptp") and _empty_reduced(x, axis):
        with pytest.raises(ValueError, match="zero-size"):
            fn(x, axis=axis, keepdims=keepdims)
        with pytest.raises(ValueError, match="zero-size"):
            ft.jit(lambda v: fn(v, axis=axis, keepdims=keepdims))(x)
        return
    with np.errstate(all="ignore"), _nowarn():
        want = np_fn(x, axis=axis, keepdims=keepdims)
        eager = fn(x, axis=axis, keepdims=keepdims)
        jitted = ft.jit(lambda v: fn(v, axis=axis, keepdims=keepdims))(x)
    _close(eager, want)
    _close(jitted, want)


class _nowarn:
    """Silence numpy's 'mean of empty slice' style warnings inside the block."""
    def __enter__(self):
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        return self._w.__exit__(*exc)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@given(data=array_and_axis(min_dims=1, nonempty=True))
def test_argmax_argmin_match_numpy(name, data):
    x, axis, keepdims = data
    if isinstance(axis, tuple):
        axis = axis[0] if axis else None
    want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    _close(getattr(fnp, name)(x, axis=axis, keepdims=keepdims), want)
    _close(ft.jit(lambda v: getattr(fnp, name)(v, axis=axis, keepdims=keepdims))(x), want)


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@given(data=array_and_axis(min_dims=1))
def test_cumulative_match_numpy(name, data):
    x, axis, _ = data
    if isinstance(axis, tuple):
        axis = axis[0] if axis else None
    if x.dtype.kind == "f":
        x = np.clip(x, -2, 2)
    want = getattr(np, name)(x, axis=axis)
    _close(getattr(fnp, name)(x, axis=axis), want)
    _close(ft.jit(lambda v: getattr(fnp, name)(v, axis=axis))(x), want)


@given(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3), st.integers(0, 2),
       st.booleans(), st.booleans())
def test_matmul_random_batched_shapes(n, k, m, nbatch, vec_a, vec_b):
    rng = np.random.default_rng(n * 100 + k * 10 + m)
    bshape = tuple(rng.integers(1, 3, nbatch))
    a = rng.standard_normal((k,) if vec_a else bshape + (n, k))
    b = rng.standard_normal((k,) if vec_b else (bshape[1:] if nbatch else ()) + (k, m))
    want = np.matmul(a, b)
    _close(fnp.matmul(a, b), want)
    _close(ft.jit(fnp.matmul)(a, b), want)


# --------------------------------------------------------------------------- ties

def test_max_gradient_splits_ties_evenly():
    x = np.array([1.0, 3.0, 3.0, 2.0, 3.0])
    g = ft.grad(lambda v: fnp.max(v))(x)
    np.testing.assert_allclose(g, [0, 1 / 3, 1 / 3, 0, 1 / 3])
    g = ft.grad(lambda v: fnp.min(v))(np.array([0.0, 0.0, 1.0]))
    np.testing.assert_allclose(g, [0.5, 0.5, 0.0])
    g = ft.jit(ft.grad(lambda v: fnp.sum(fnp.max(v, axis=1))))(np.array([[2.0, 2.0], [1.0, 5.0]]))
    np.testing.assert_allclose(g, [[0.5, 0.5], [0.0, 1.0]])


def test_max_jvp_ties_and_vmap():
    x = np.array([[1.0, 4.0, 4.0], [2.0, 2.0, 2.0]])
    t = np.array([[5.0, 1.0, 3.0], [3.0, 6.0, 9.0]])
    _, tout = ft.jvp(lambda v: fnp.max(v, axis=1), (x,), (t,))
    np.testing.assert_allclose(tout, [2.0, 6.0])
    g = ft.vmap(ft.grad(lambda v: fnp.max(v)))(x)
    np.testing.assert_allclose(g, [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])


def test_cummax_gradient_with_ties():
    x = np.array([1.0, 3.0, 3.0, 0.0])
    g = ft.grad(lambda v: fnp.sum(lax.cummax(v, 0)))(x)
    # out = [x0, x1, tie(x1, x2), tie(x1, x2)]
    np.testing.assert_allclose(g, [1.0, 2.0, 1.0, 0.0])


# --------------------------------------------------------------------------- zeros in prod

def _prod_grad_analytic(x):
    return np.array([np.prod(np.delete(x, i)) for i in range(x.size)])


@pytest.mark.parametrize("x", [
    np.array([2.0, 0.0, 3.0, -1.5]),          # one zero
    np.array([0.0, 2.0, 0.0, 5.0]),           # two zeros
    np.array([0.0]),
    np.array([1.5, -2.0, 0.5]),               # no zero
])
def test_prod_gradient_with_zeros(x):
    want = _prod_grad_analytic(x)
    np.testing.assert_allclose(ft.grad(fnp.prod)(x), want)
    np.testing.assert_allclose(ft.jit(ft.grad(fnp.prod))(x), want)
    # forward mode, one basis vector at a time, against the same values
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = 1.0
        _, t = ft.jvp(fnp.prod, (x,), (e,))
        np.testing.assert_allclose(t, want[i])


def test_prod_gradient_with_zero_matches_finite_differences():
    x = np.array([[0.7, 0.0, -1.2], [0.0, 0.0, 2.0], [1.1, 0.9, -0.4]])
    f = lambda v: fnp.sum(fnp.prod(v, axis=1) ** 2 + fnp.prod(v, axis=1))  # noqa: E731
    g = ft.grad(f)(x)
    eps = 1e-6
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = eps
        fd = (float(f(x + e)) - float(f(x - e))) / (2 * eps)
        np.testing.assert_allclose(g[idx], fd, rtol=1e-6, atol=1e-8)


def _sum_cumprod_grad(x):
    want = np.zeros_like(x)
    for i in range(x.size):           # d/dx_i of sum_k prod_{j<=k} x_j
        for k in range(i, x.size):
            want[i] += np.prod(np.delete(x[:k + 1], i))
    return want


@pytest.mark.parametrize("x", [np.array([2.0, 0.0, 3.0, 0.0, 4.0]),
                               np.array([0.0, 0.0, 1.5]), np.array([1.5, -2.0, 0.0])])
def test_cumprod_gradient_with_zeros(x):
    g = ft.grad(lambda v: fnp.sum(fnp.cumprod(v)))(x)
    np.testing.assert_allclose(g, _sum_cumprod_grad(x))
    gr = ft.jit(ft.grad(lambda v: fnp.sum(lax.cumprod(v, 0, reverse=True))))(x)
    np.testing.assert_allclose(gr, _sum_cumprod_grad(x[::-1])[::-1])


# --------------------------------------------------------------------------- dot_general rules

def test_dot_general_batch_rule_has_no_loop():
    a = np.random.default_rng(0).standard_normal((7, 2, 3))
    b = np.random.default_rng(1).standard_normal((3, 4))
    jaxpr = ft.make_jaxpr(ft.vmap(lambda x: fnp.matmul(x, b)))(a)
    names = [e.primitive.name for e in jaxpr.jaxpr.eqns]
    assert names.count("dot_general") == 1, names
    _close(ft.vmap(lambda x: fnp.matmul(x, b))(a), a @ b)
    both = ft.vmap(fnp.matmul)(a, np.stack([b] * 7))
    _close(both, a @ b)


def test_dot_general_second_derivative():
    a = np.random.default_rng(0).standard_normal((3, 3))
    g = ft.grad(lambda x: fnp.sum(fnp.matmul(x, x)))
    basis = np.eye(9).reshape(9, 3, 3)
    # forward over reverse, vmapped over the basis: the Hessian, row by row
    h = ft.vmap(lambda e: ft.jvp(g, (a,), (e,))[1])(basis)
    h = np.moveaxis(np.asarray(h).reshape(3, 3, 3, 3), (0, 1), (2, 3))
    eye, ones = np.eye(3), np.ones((3, 3))
    # d2/dx_ab dx_cd of sum(x @ x) = [b == c] + [a == d]
    want = np.einsum("bc,ad->abcd", eye, ones) + np.einsum("ad,bc->abcd", eye, ones)
    np.testing.assert_allclose(h, want)


def test_einsum_empty_and_int_eager_jit_agree():
    for spec, ops in [("ij,jk->ik", [np.zeros((2, 0)), np.zeros((0, 3))]),
                      ("i,i", [np.arange(3, dtype=np.int32), np.arange(3, dtype=np.int32)]),
                      ("ii", [np.arange(9).reshape(3, 3)])]:
        want = np.einsum(spec, *ops)
        _close(fnp.einsum(spec, *ops), want)
        _close(ft.jit(lambda *o: fnp.einsum(spec, *o))(*ops), want)


def test_einsum_path_of_traced_operands_and_opt_einsum_names():
    """JAX's einsum_path plans from shapes, so it runs under jit, and takes opt_einsum's
    strategy names ('auto', 'eager'): ours refused tracers and raised KeyError on those."""
    ops = [np.ones((2, 2)), np.ones((2, 3, 4)), np.ones((3, 4, 2))]
    for opt in ("auto", "eager", "greedy", "optimal", True):
        assert fnp.einsum_path("ij,jkl,klm", *ops, optimize=opt)[0] == [
            "einsum_path", (1, 2), (0, 1)]

    def f(*o):
        path, _ = fnp.einsum_path("ij,jkl,klm", *o, optimize="auto")
        return fnp.einsum("ij,jkl,klm", *o, optimize=path)
    _close(ft.jit(f)(*ops), np.einsum("ij,jkl,klm", *ops))


def test_reduction_keywords_of_jax_and_the_array_api():
    """JAX's promote_integers= (sum/prod), correction= (var/std) and max/min of empty
    slices with initial= (eager and jitted): TypeError / ValueError before."""
    x = (np.arange(6, dtype=np.int8) * 50).reshape(2, 3)
    for f in (fnp.sum, ft.jit(fnp.sum, static_argnames="promote_integers")):
        assert f(x, promote_integers=False).dtype == np.int8
        assert f(x, promote_integers=False).item() == np.sum(x, dtype=np.int8)
        assert f(x, promote_integers=True).dtype == np.int64
    assert fnp.prod(np.array([True, False]), promote_integers=False).dtype == np.int64
    y = np.arange(10.0)
    for f in (fnp.var, fnp.std, ft.jit(fnp.var, static_argnames="correction")):
        _close(f(y, correction=1), getattr(np, f.__name__)(y, ddof=1))
    with pytest.raises(ValueError, match="ddof and correction"):
        fnp.var(y, ddof=1, correction=0)
    e = np.zeros((3, 0), np.float32)
    for f in (lambda a: fnp.max(a, axis=1, initial=1.0), ft.jit(lambda a: fnp.min(a, initial=2))):
        got = f(e)
        want = np.max(e, axis=1, initial=1.0) if got.ndim else np.min(e, initial=2)
        assert got.dtype == want.dtype and np.array_equal(got, want)


# --------------------------------------------------------------------------- errors

def test_error_messages():
    with pytest.raises(ValueError, match=r"\(2, 3\) and \(4, 5\)"):
        fnp.matmul(np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(ValueError, match=r"\(2, 3\) and \(4, 5\)"):
        ft.jit(fnp.matmul)(np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(ValueError, match=r"\(2, 3\) and \(4, 5\)"):
        ft.jit(fnp.dot)(np.ones((2, 3)), np.ones((4, 5)))
    msg = r"f64\[2,3\].*f64\[4,5\].*contracting dims \(1,\) and \(0,\)"
    with pytest.raises(TypeError, match=msg):
        lax.dot_general(np.ones((2, 3)), np.ones((4, 5)), (((1,), (0,)), ((), ())))
    # mixed dtypes are JAX's: computed in the wider one (e6620da), not refused
    mixed = lax.dot_general(np.ones(3), np.ones(3, np.float32), (((0,), (0,)), ((), ())))
    assert mixed.dtype == np.float64 and float(mixed) == 3.0
    with pytest.raises(ValueError, match="zero-size array"):
        ft.jit(fnp.max)(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="zero-size array"):
        fnp.min(np.zeros((3, 0)), axis=1)
    with pytest.raises(ValueError, match="empty sequence"):
        ft.jit(fnp.argmax)(np.zeros(0))
    with pytest.raises(ValueError, match="out of bounds"):
        ft.jit(lambda x: fnp.sum(x, axis=2))(np.ones((2, 3)))
    with pytest.raises(ValueError, match="repeated axis"):
        ft.jit(lambda x: fnp.sum(x, axis=(0, -2)))(np.ones((2, 3)))
    with pytest.raises(ValueError, match="operands"):
        fnp.einsum("ij,jk->ik", np.ones((2, 3)))
    with pytest.raises(ValueError, match="sizes 3 and 4"):
        ft.jit(lambda a, b: fnp.einsum("ij,jk->ik", a, b))(np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(TypeError, match="reduce_and"):
        lax.reduce_and(np.ones(3), (0,))


def test_empty_reductions_identity():
    for f, want in [(fnp.sum, 0.0), (fnp.prod, 1.0)]:
        _close(f(np.zeros((0,))), np.float64(want))
        _close(ft.jit(f)(np.zeros((0,))), np.float64(want))
    _close(ft.jit(fnp.any)(np.zeros((0,), bool)), np.bool_(False))
    _close(ft.jit(fnp.all)(np.zeros((0,), bool)), np.bool_(True))


def test_uint32_reductions_are_uint64():
    x = np.array([4_000_000_000, 4_000_000_000], np.uint32)
    for f in (fnp.sum, fnp.cumsum, fnp.prod, fnp.cumprod):
        assert f(x).dtype == np.uint64
        assert ft.jit(f)(x).dtype == np.uint64
    assert int(fnp.sum(x)) == 8_000_000_000
    assert int(ft.jit(fnp.sum)(x)) == 8_000_000_000
    # the product wraps modulo 2**64, as numpy's
    assert int(ft.jit(fnp.prod)(x)) == int(np.prod(x)) == 16 * 10 ** 18 % 2 ** 64


@pytest.mark.parametrize("backend", ["cpu", "interpret"])
def test_uint8_sum_is_uint64_and_uint64_wraps(backend):
    x = np.array([200, 255, 100, 1], np.uint8)
    for f in (fnp.sum, fnp.cumsum, fnp.prod, fnp.cumprod):
        want = getattr(np, f.__name__)(x)
        for got in (f(x), ft.jit(f, backend=backend)(x)):
            assert got.dtype == np.uint64 == want.dtype, f
            np.testing.assert_array_equal(got, want)
    assert int(fnp.sum(x)) == 556 and fnp.mean(x).dtype == np.float64
    big = np.array([2 ** 64 - 1, 2 ** 63, 5], np.uint64)
    with np.errstate(over="ignore"):
        want = [big + big, big * big, big - np.uint64(7), np.sum(big), np.cumsum(big)]

    def f(v):
        return v + v, v * v, v - np.uint64(7), fnp.sum(v), fnp.cumsum(v)
    for got in (f(fnp.asarray(big)), ft.jit(f, backend=backend)(big)):
        for g, w in zip(got, want):
            assert g.dtype == np.uint64
            np.testing.assert_array_equal(g, w)


def test_where_and_initial_as_jax():
    # JAX's where= / initial= (a TypeError before): masked elements take the identity,
    # initial joins the result; max/min need initial with a mask
    x = np.random.RandomState(0).randn(3, 4)
    w = np.array([True, False, True, True])
    m = np.where(x > 0, x, 0.0)
    np.testing.assert_allclose(fnp.sum(x, axis=0, where=x > 0), m.sum(0))
    np.testing.assert_allclose(fnp.sum(x, axis=1, initial=2.0, where=x > 0), m.sum(1) + 2.0)
    np.testing.assert_allclose(fnp.prod(x, where=x > 0), np.prod(np.where(x > 0, x, 1.0)))
    np.testing.assert_allclose(fnp.mean(x, axis=1, where=w), x[:, w].mean(1))
    np.testing.assert_allclose(fnp.var(x, axis=0, ddof=1, where=x > -0.5),
                               np.var(x, axis=0, ddof=1, where=x > -0.5))
    np.testing.assert_allclose(fnp.std(x, where=x > 0), np.std(x[x > 0]))
    np.testing.assert_allclose(fnp.max(x, axis=1, where=x < 1.0, initial=-10.0),
                               np.max(x, axis=1, where=x < 1.0, initial=-10.0))
    assert float(fnp.min(x, initial=-5.0)) == -5.0
    assert fnp.any(x > 0, axis=0, where=w[None]).tolist() == np.any(x > 0, 0, where=w[None]).tolist()
    with pytest.raises(ValueError, match="initial"):
        fnp.max(x, where=x > 0)
    f = lambda a: (fnp.mean(a, axis=1, where=w).sum() + fnp.var(a, where=a > 0)
                   + fnp.max(a, axis=0, where=a < 1.0, initial=-10.0).sum())
    np.testing.assert_allclose(ft.jit(f)(x), f(x), rtol=1e-12)
    np.testing.assert_allclose(fnp.asarray(x).mean(where=x > 0),
                               x[x > 0].mean())
    g = ft.grad(lambda a: fnp.mean(a, where=a > 0))(x)
    np.testing.assert_allclose(g, (x > 0) / (x > 0).sum())


def test_einsum_interleaved_sublists_as_numpy():
    # numpy's (and JAX's) second calling form: operand, sublist, ..., [output sublist]
    rng = np.random.default_rng(0)
    b, c, d = rng.standard_normal((2, 3)), rng.standard_normal((3, 4)), rng.standard_normal((5, 2, 3))
    cases = [(b, [0, 1], c, [1, 2]), (b, [0, 1], c, [1, 2], [2, 0]),
             (d, [Ellipsis, 0, 1], c, [1, 2], [Ellipsis, 2]), (b, [0, 1], [1])]
    for args in cases:
        np.testing.assert_allclose(fnp.einsum(*args), np.einsum(*args), rtol=1e-13)
    g = ft.grad(lambda x: fnp.sum(fnp.einsum(x, [0, 1], c, [1, 2]) ** 2))(b)
    np.testing.assert_allclose(g, 2 * (b @ c) @ c.T, rtol=1e-12)
    jitted = ft.jit(lambda x, y: fnp.einsum(x, [0, 1], y, [1, 2], [2, 0]))
    np.testing.assert_allclose(jitted(b, c), (b @ c).T, rtol=1e-13)
    with pytest.raises(ValueError, match="sublist labels"):
        fnp.einsum(b, [0, "i"])


def test_nan_reductions_take_where_and_initial():
    """nansum/nanprod/nanmax/nanmin take initial= and where=, nanmean/nanvar/nanstd take
    where= (JAX's and numpy's; TypeError before), eager and jitted; nanvar with no
    degrees of freedom left is NaN as numpy's (0 / -1 gave -0.0)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 5))
    x[0, 1] = np.nan
    x[2, :] = np.nan
    w = rng.random((4, 5)) > 0.3
    cases = [("nansum", dict(initial=1.0, where=w)), ("nanprod", dict(where=w, initial=2.0)),
             ("nanmax", dict(where=w, initial=-5.0)), ("nanmin", dict(initial=5.0)),
             ("nanmean", dict(where=w)), ("nanvar", dict(where=w, ddof=1)),
             ("nanstd", dict(where=w)), ("nanvar", dict(ddof=4))]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, kw in cases:
            for axis in (None, 1):
                want = getattr(np, name)(x, axis=axis, **kw)
                f = lambda a: getattr(fnp, name)(a, axis=axis, **kw)  # noqa: E731
                for g in (f, ft.jit(f)):
                    got = g(x)
                    assert got.shape == np.shape(want)
                    np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_average_with_weights_over_several_axes():
    """numpy 2's (JAX's) average: weights of shape a.shape[axis] for a tuple axis, in the
    axis order given (TypeError before)."""
    rng = np.random.default_rng(1)
    for shape, axis in [((2, 3, 4), (1, 2)), ((2, 3, 4), (2, 0)), ((2, 3, 4, 5), (3, 0, 2, 1)),
                        ((2, 3, 4), -1)]:
        a = rng.normal(size=shape)
        w = rng.random(tuple(shape[x] for x in np.atleast_1d(axis)))
        want = np.average(a, axis, w)
        _close(fnp.average(a, axis, w), want)
        _close(ft.jit(lambda x, v: fnp.average(x, axis, v))(a, w), want)
    with pytest.raises(ValueError, match="do not match"):
        fnp.average(np.ones((2, 3)), 1, np.ones(2))


def test_var_std_with_a_given_mean():
    """numpy 2's (JAX's) mean= of var/std: a precomputed mean of keepdims shape (TypeError
    before), eager, jitted, and differentiable in the mean."""
    rng = np.random.default_rng(2)
    x = rng.normal(size=(5, 4, 3))
    mu = rng.normal(size=(1, 4, 1))
    for name in ("var", "std"):
        want = getattr(np, name)(x, axis=(0, 2), ddof=1, mean=mu)
        f = lambda a, m: getattr(fnp, name)(a, axis=(0, 2), ddof=1, mean=m)  # noqa: E731
        _close(f(x, mu), want)
        _close(ft.jit(f)(x, mu), want)
    g = ft.grad(lambda m: fnp.var(np.arange(4.0), mean=m))(np.array(1.0))
    assert float(g) == -1.0         # d/dm mean((x - m)^2) = -2 mean(x - m)


def test_initial_must_be_a_scalar_and_complex_var_dtype():
    """JAX's ValueError for a non-scalar initial= (it broadcast silently), and
    var/std with a complex dtype= are complex under jit as eagerly (jit gave float64)."""
    for f in (fnp.sum, fnp.max, fnp.nansum, fnp.nanmin):
        with pytest.raises(ValueError, match="initial value must be a scalar"):
            f(np.ones((2, 3, 4)), axis=-1, initial=np.zeros((1, 2, 3)))
    x = np.arange(10).reshape(2, 5)
    for name in ("var", "std"):
        want = getattr(np, name)(x, dtype=np.complex128)
        for g in (getattr(fnp, name), ft.jit(getattr(fnp, name), static_argnames="dtype")):
            got = g(x, dtype=np.complex128)
            assert got.dtype == np.complex128
            _close(got, want)


@pytest.mark.parametrize("mask", [np.array([0.5, 0.0, 1.0]), np.array([1, 0, 1]), [1, 0, 1]])
@pytest.mark.parametrize("fun", [fnp.sum, fnp.mean, fnp.var, fnp.nansum,
                                 lambda a, where: fnp.max(a, where=where, initial=0.0)])
def test_non_boolean_where_masks_raise(fun, mask):
    """A float or integer where= mask was cast to bool (0.5 counted as true); numpy raises
    TypeError (no safe cast) and JAX 0.10.2 ValueError ('where must be None or a boolean
    array'), eagerly and under jit."""
    x = np.array([1.0, 2.0, 4.0])
    with pytest.raises(ValueError, match="boolean"):
        fun(x, where=mask)
    with pytest.raises(ValueError, match="boolean"):
        ft.jit(lambda a: fun(a, where=np.asarray(mask)))(x)
    assert float(fun(x, where=np.asarray(mask) != 0)) == float(fun(x[[0, 2]], where=None))
