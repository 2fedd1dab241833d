"""functrans.numpy.linalg and the linalg primitives beyond the shared table:
gradients against finite differences on batched inputs (also second order),
vmap/jit composition, singular inputs and error messages."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax

RNG = np.random.default_rng(0)


def _spd(*shape):
    r = RNG.standard_normal(shape)
    return r @ np.swapaxes(r, -1, -2) + shape[-1] * np.eye(shape[-1])


def _wellcond(*shape):
    return RNG.standard_normal(shape) + shape[-1] * np.eye(shape[-1])


def _fd_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def _scalar(f, w):
    """A scalar loss with a fixed random weighting of every output element."""
    def loss(x):
        return fnp.sum(f(x) * w)
    return loss


@pytest.mark.parametrize("name,fun,make", [
    ("det", fnp.linalg.det, lambda: _wellcond(2, 3, 3)),
    ("logabsdet", lambda a: fnp.linalg.slogdet(a)[1], lambda: _wellcond(2, 3, 3)),
    ("inv", fnp.linalg.inv, lambda: _wellcond(2, 3, 3)),
    ("cholesky", fnp.linalg.cholesky, lambda: _spd(2, 3, 3)),
    ("solve_a", lambda a: fnp.linalg.solve(a, np.arange(6.0).reshape(3, 2)),
     lambda: _wellcond(2, 3, 3)),
    ("solve_b", lambda b: fnp.linalg.solve(np.eye(3) * 3 + np.ones((3, 3)), b),
     lambda: RNG.standard_normal((2, 3, 2))),
])
def test_grad_against_finite_differences_batched(name, fun, make):
    x = make()
    out = np.asarray(fun(x))
    w = RNG.standard_normal(out.shape)
    loss = _scalar(fun, w)
    g = np.asarray(ft.grad(loss)(x))
    fd = _fd_grad(lambda v: float(loss(v)), x)
    if name == "cholesky":   # the function symmetrises: compare along symmetric directions
        g, fd = g + np.swapaxes(g, -1, -2), fd + np.swapaxes(fd, -1, -2)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)
    # jit(grad) and vmap(grad) over the stack agree with it
    np.testing.assert_allclose(ft.jit(ft.grad(loss))(x), ft.grad(loss)(x), rtol=1e-12)
    per = ft.vmap(ft.grad(lambda a, ww: fnp.sum(fun(a) * ww)))(x, w)
    np.testing.assert_allclose(per, ft.grad(loss)(x), rtol=1e-10, atol=1e-12)


def test_known_gradients():
    a = _wellcond(3, 3)
    # d det / dA = det(A) A^-T ;  d log|det| / dA = A^-T
    np.testing.assert_allclose(ft.grad(fnp.linalg.det)(a), np.linalg.det(a) * np.linalg.inv(a).T,
                               rtol=1e-10)
    np.testing.assert_allclose(ft.grad(lambda m: fnp.linalg.slogdet(m)[1])(a),
                               np.linalg.inv(a).T, rtol=1e-10)


def test_second_order_logdet():
    # Hessian of log det at A applied to E: -tr(A^-1 E A^-1 E) (as a quadratic form)
    a = _spd(3, 3)
    e = RNG.standard_normal((3, 3))

    def logdet(m):
        return fnp.linalg.slogdet(m)[1]

    hvp = ft.jvp(ft.grad(logdet), (a,), (e,))[1]
    ai = np.linalg.inv(a)
    np.testing.assert_allclose(np.sum(np.asarray(hvp) * e), -np.trace(ai @ e @ ai @ e), rtol=1e-8)


def test_cholesky_gradient_through_reconstruction():
    # L Lᵀ reproduces a symmetric A, so d(sum(w * L Lᵀ))/dA is symmetric-projected w
    a = _spd(4, 4)
    w = RNG.standard_normal((4, 4))

    def f(m):
        L = fnp.linalg.cholesky(m)
        return fnp.sum((L @ L.T) * w)

    g = np.asarray(ft.grad(f)(a))
    np.testing.assert_allclose(g, (w + w.T) / 2, rtol=1e-8, atol=1e-10)


def test_triangular_solve_gradients_against_fd():
    a = np.tril(_wellcond(3, 3))
    b = RNG.standard_normal((3, 2))
    for kw in (dict(left_side=True, lower=True), dict(left_side=False, lower=False,
                                                        transpose_a=True)):
        bb = b if kw["left_side"] else b.T
        w = RNG.standard_normal(bb.shape)
        loss_a = lambda m: fnp.sum(lax.triangular_solve(m, bb, **kw) * w)  # noqa: E731
        loss_b = lambda v: fnp.sum(lax.triangular_solve(a + a.T, v, **kw) * w)  # noqa: E731
        np.testing.assert_allclose(ft.grad(loss_a)(a + a.T), _fd_grad(lambda m: float(loss_a(m)),
                                                                      a + a.T), atol=1e-6)
        np.testing.assert_allclose(ft.grad(loss_b)(bb), _fd_grad(lambda v: float(loss_b(v)), bb),
                                   atol=1e-6)


def test_vmap_mixed_batched_and_unbatched():
    a = _wellcond(3, 3)
    bs = RNG.standard_normal((4, 3, 2))
    got = ft.vmap(fnp.linalg.solve, in_axes=(None, 0))(a, bs)
    np.testing.assert_allclose(got, np.linalg.solve(a, bs), rtol=1e-12)
    As = _wellcond(4, 3, 3)
    got = ft.vmap(fnp.linalg.solve, in_axes=(0, None))(As, bs[0])
    np.testing.assert_allclose(got, np.linalg.solve(As, bs[0]), rtol=1e-12)
    # batch axis last
    got = ft.vmap(fnp.linalg.det, in_axes=2)(np.moveaxis(As, 0, 2))
    np.testing.assert_allclose(got, np.linalg.det(As), rtol=1e-12)


def test_singular_gives_nan_or_inf_not_an_exception():
    s = np.ones((2, 2))
    assert float(fnp.linalg.det(s)) == 0.0
    assert not np.isfinite(np.asarray(fnp.linalg.inv(s))).all()
    assert np.isnan(np.asarray(fnp.linalg.cholesky(-np.eye(2)))).all()
    # only the failing member of a stack is NaN
    stack = np.stack([np.eye(2), -np.eye(2)])
    out = np.asarray(fnp.linalg.cholesky(stack))
    np.testing.assert_array_equal(out[0], np.eye(2))
    assert np.isnan(out[1]).all()
    sign, logabs = fnp.linalg.slogdet(s)
    assert float(sign) == 0.0 and float(logabs) == -np.inf


def test_norm_gradient_at_zero_is_nan_like_jax():
    g = np.asarray(ft.grad(fnp.linalg.norm)(np.zeros(3)))
    assert np.isnan(g).all()
    np.testing.assert_allclose(ft.grad(fnp.linalg.norm)(np.array([3.0, 4.0])), [0.6, 0.8])


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("fun", [fnp.linalg.det, fnp.linalg.inv, fnp.linalg.cholesky,
                                 lambda a: fnp.linalg.slogdet(a)])
def test_non_square_names_the_shape(fun):
    with pytest.raises(ValueError, match=r"\(2, 3\)"):
        fun(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"\(3,\)"):
        ft.jit(fun)(np.ones(3))


def test_solve_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"\(4,\).*\(3, 3\)"):
        fnp.linalg.solve(np.eye(3), np.ones(4))
    with pytest.raises(ValueError, match=r"\(4, 2\).*\(3, 3\)"):
        ft.jit(fnp.linalg.solve)(np.eye(3), np.ones((4, 2)))
    with pytest.raises(ValueError, match="batch shapes"):
        fnp.linalg.solve(np.ones((2, 3, 3)), np.ones((4, 3, 1)))


def test_primitive_shape_and_dtype_errors():
    with pytest.raises(ValueError, match="triangular_solve"):
        lax.triangular_solve(np.eye(3), np.ones((2, 2)), left_side=True)
    with pytest.raises(TypeError, match="floating"):
        lax.cholesky(np.eye(2, dtype=np.int64))
    with pytest.raises(TypeError, match="dtype"):
        lax.solve(np.eye(2), np.ones((2, 1), np.float32))
    with pytest.raises(TypeError, match="dtype"):
        lax.triangular_solve(np.eye(2) + 0j, np.ones((2, 1)), left_side=True)


@pytest.mark.parametrize("ord,shape", [("fro", (3,)), ("nuc", (3,)), ("bad", (3,)),
                                       (3, (2, 2)), ("bad", (2, 2))])
def test_norm_unsupported_ord_is_a_value_error(ord, shape):
    with pytest.raises(ValueError, match="ord"):
        fnp.linalg.norm(np.ones(shape), ord=ord)


def test_norm_axis_errors():
    with pytest.raises(ValueError):
        fnp.linalg.norm(np.ones((2, 2, 2)), ord=1)
    with pytest.raises(ValueError):
        fnp.linalg.norm(np.ones((2, 2)), axis=(0, 0))


def test_linalg_under_jit_matches_numpy():
    a = _wellcond(2, 4, 4)
    b = RNG.standard_normal((2, 4, 3))

    @ft.jit
    def f(a, b):
        x = fnp.linalg.solve(a, b)
        s, l = fnp.linalg.slogdet(a)
        return x, s * fnp.exp(l), fnp.linalg.inv(a), fnp.linalg.norm(x, axis=(-2, -1))

    x, d, ai, n = f(a, b)
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-10)
    np.testing.assert_allclose(d, np.linalg.det(a), rtol=1e-10)
    np.testing.assert_allclose(ai, np.linalg.inv(a), rtol=1e-10)
    np.testing.assert_allclose(n, np.linalg.norm(np.linalg.solve(a, b), axis=(-2, -1)), rtol=1e-10)


def test_jax_keyword_arguments():
    a = RNG.standard_normal((3, 3))
    with pytest.raises(ValueError, match="method"):
        fnp.linalg.slogdet(a, method="cholesky")
    with pytest.raises(ValueError, match="only one of rtol and rcond"):
        fnp.linalg.pinv(a, rtol=1e-3, rcond=1e-3)
    np.testing.assert_allclose(fnp.linalg.pinv(a, rcond=0.5), fnp.linalg.pinv(a, rtol=0.5))
    with pytest.raises(NotImplementedError, match="subset_by_index"):
        fnp.linalg.svd(a, subset_by_index=(0, 1))
    f32 = a.astype(np.float32)
    out = fnp.linalg.matmul(f32, f32, precision="highest", preferred_element_type=np.float64)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, f32.astype(np.float64) @ f32.astype(np.float64))
    assert fnp.linalg.vecdot(f32, f32, preferred_element_type=np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="precision"):
        fnp.linalg.tensordot(a, a, axes=1, precision="bogus")
    assert fnp.fft.fftfreq(4, device=None).tolist() == [0.0, 0.25, -0.5, -0.25]
    assert fnp.fft.rfftfreq(4, device=None).tolist() == [0.0, 0.25, 0.5]


@pytest.mark.parametrize("fn", [fnp.vecdot, fnp.linalg.vecdot])
def test_vecdot_axis_is_each_operands_own(fn):
    # numpy's gufunc rule (and JAX's moveaxis): axis=0 of (2, 2, 2) and (2, 2) pairs a's
    # axis 0 with b's axis 0; summing the broadcast product's axis 0 gave other numbers
    # (JAX's linalg_test testVecdot); int32 stays int32 (sum promoted it to int64)
    rng = np.random.default_rng(5)
    for ls, rs, ax in [((2, 2, 2), (2, 2), 0), ((2, 2, 2), (2, 2), 1), ((4, 3, 2), (3, 1), -2)]:
        a = rng.standard_normal(ls) + 1j * rng.standard_normal(ls)
        b = rng.standard_normal(rs) + 1j * rng.standard_normal(rs)
        np.testing.assert_allclose(np.asarray(fn(a, b, axis=ax)), np.vecdot(a, b, axis=ax),
                                   rtol=1e-13)
        ai, bi = (np.round(3 * x.real).astype(np.int32) for x in (a, b))
        got = fn(ai, bi, axis=ax)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(np.asarray(got), np.vecdot(ai, bi, axis=ax))
    # d/da sum(vecdot(a, b, axis=-2)) for a (4, 3, 2), b (3, 1): b broadcast over a's axes
    g = ft.grad(lambda x: fn(x, b.real, axis=-2).sum())(a.real)
    np.testing.assert_allclose(np.asarray(g), np.broadcast_to(b.real, a.shape), rtol=1e-15)


def test_max_norms_of_empty_arrays_are_zero():
    # numpy 2 and JAX give 0 (linalg_test's empty-matrix norms); the max over an empty
    # axis raised ValueError
    for shape in [(0, 2), (2, 0), (0, 0), (3, 0, 2)]:
        for o in [np.inf, 1, 2, "nuc", "fro"]:
            got = fnp.linalg.matrix_norm(np.zeros(shape), ord=o)
            np.testing.assert_array_equal(np.asarray(got), np.linalg.matrix_norm(np.zeros(shape), ord=o))
    assert float(fnp.linalg.vector_norm(np.zeros(0), ord=np.inf)) == 0.0
    np.testing.assert_array_equal(np.asarray(fnp.linalg.norm(np.zeros((2, 0)), ord=np.inf, axis=1)),
                                  np.zeros(2))
