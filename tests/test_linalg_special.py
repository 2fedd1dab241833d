"""The special cases of functrans.numpy.linalg that the shared table cannot reach:
repeated eigenvalues (JAX's convention), determinants of singular matrices and
their gradients, complex norms, pinv at repeated singular values, the derivatives
that are errors, and the decompositions under jit on the default backend."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax

RNG = np.random.default_rng(7)


def _cofactors(m):
    n = m.shape[-1]
    c = np.zeros_like(m)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(m, i, -2), j, -1)
            c[..., i, j] = (-1) ** (i + j) * np.linalg.det(minor)
    return c


def _fd(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


# --------------------------------------------------------------------------- eigh, degenerate

@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # inf * 0 in the eigenvector tangent
def test_eigh_repeated_eigenvalues_follow_jax():
    a = np.diag([1.0, 1.0, 2.0])
    # eigenvalue sums stay differentiable: d tr(A) = I
    g = np.asarray(ft.grad(lambda m: fnp.sum(fnp.linalg.eigvalsh(m)))(a))
    np.testing.assert_allclose(g, np.eye(3), atol=1e-12)
    # eigenvalue tangents are finite, eigenvector tangents are not (as in JAX)
    t = RNG.standard_normal((3, 3))
    t = t + t.T
    _, (dw, dv) = ft.jvp(lambda m: tuple(fnp.linalg.eigh(m)), (a,), (t,))
    assert np.isfinite(np.asarray(dw)).all()
    assert not np.isfinite(np.asarray(dv)).all()
    # the largest (simple) eigenvalue's gradient is its eigenvector's outer product
    g_top = np.asarray(ft.grad(lambda m: fnp.linalg.eigvalsh(m)[2])(a))
    np.testing.assert_allclose(g_top, np.diag([0.0, 0.0, 1.0]), atol=1e-12)


def test_eigh_distinct_eigenvector_gradient_against_fd():
    r = RNG.standard_normal((4, 4))
    a = r + r.T
    w = RNG.standard_normal((4, 4))

    def loss(m):   # |v| weighting: invariant to the eigenvectors' signs
        return fnp.sum(fnp.abs(fnp.linalg.eigh(m)[1]) * w)

    g = np.asarray(ft.grad(loss)(a))
    np.testing.assert_allclose(g + g.T, (lambda f: f + f.T)(_fd(lambda m: float(loss(m)), a)),
                               rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------- det at singular

@pytest.mark.parametrize("a", [
    np.array([[1.0, 2.0], [2.0, 4.0]]),                           # rank 1 of 2
    np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]),  # rank 2 of 3
    np.ones((3, 3)),                                               # rank 1 of 3: grad 0
    np.zeros((3, 3)),
    np.diag([2.0, 0.0, 3.0]),
])
def test_det_gradient_at_singular_matrices_is_the_cofactor_matrix(a):
    want = _cofactors(a)
    for f in (ft.grad(fnp.linalg.det), ft.jit(ft.grad(fnp.linalg.det))):
        np.testing.assert_allclose(f(a), want, atol=1e-12)


def test_det_gradient_vmapped_over_singular_and_regular():
    stack = np.stack([np.array([[1.0, 2.0], [2.0, 4.0]]), np.array([[2.0, 1.0], [0.5, 3.0]])])
    got = ft.vmap(ft.grad(fnp.linalg.det))(stack)
    np.testing.assert_allclose(got, _cofactors(stack), atol=1e-12)


def test_det_second_derivative_against_fd():
    for a in (np.eye(3), RNG.standard_normal((3, 3)) + 3 * np.eye(3)):
        e = RNG.standard_normal((3, 3))
        hvp = np.asarray(ft.jvp(ft.grad(fnp.linalg.det), (a,), (e,))[1])
        eps = 1e-5
        fd = (_cofactors(a + eps * e) - _cofactors(a - eps * e)) / (2 * eps)
        np.testing.assert_allclose(hvp, fd, atol=1e-7)


def test_slogdet_at_singular_matches_numpy():
    sign, logabs = fnp.linalg.slogdet(np.ones((2, 2)))
    assert float(sign) == 0.0 and float(logabs) == -np.inf


_INF, _NAN = np.inf, np.nan


@pytest.mark.parametrize("a, grad, jvp_ones, jvp_eye", [   # JAX 0.10.2's numbers
    (np.array([[1.0, 2.0], [2.0, 4.0]]), [[_INF, -_INF], [-_INF, _INF]], _INF, _INF),
    (np.zeros((2, 2)), [[_NAN, _NAN], [_NAN, _NAN]], _NAN, _NAN),
    (np.array([[0.0, 0.0], [0.0, 1.0]]), [[_INF, _NAN], [_NAN, _NAN]], _INF, _INF),
    (np.zeros((1, 1)), [[_INF]], _INF, _INF),
])
def test_slogdet_derivatives_at_singular_small_matrices_as_jax(a, grad, jvp_ones, jvp_eye):
    # JAX's analytic 1x1/2x2 rule: tr(adj(A) dA) / det A, so ±inf (NaN where 0/0)
    logabs = lambda m: fnp.linalg.slogdet(m)[1]        # noqa: E731
    for g in (ft.grad(logabs), ft.jit(ft.grad(logabs))):
        np.testing.assert_array_equal(np.asarray(g(a)), np.array(grad))
    for t, want in ((np.ones_like(a), jvp_ones), (np.eye(len(a)), jvp_eye)):
        np.testing.assert_array_equal(float(ft.jvp(logabs, (a,), (t,))[1]), want)
    stack = np.stack([a, np.eye(len(a)) * 2.0])                  # batched: regular lane exact
    got = np.asarray(ft.vmap(ft.grad(logabs))(stack))
    np.testing.assert_array_equal(got[0], np.array(grad))
    np.testing.assert_allclose(got[1], np.eye(len(a)) / 2.0, rtol=1e-15)


def test_slogdet_gradient_at_singular_3x3_as_jax():
    # JAX's: LU (getrf), then trsm solves that divide by the zero pivot: ±inf and NaN
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
    want = [[-_INF, _INF, -_INF], [_INF, -_INF, _INF], [_NAN, _NAN, _NAN]]
    logabs = lambda m: fnp.linalg.slogdet(m)[1]        # noqa: E731
    for g in (ft.grad(logabs), ft.jit(ft.grad(logabs))):
        np.testing.assert_array_equal(np.asarray(g(a)), np.array(want))
    assert np.isnan(float(ft.jvp(logabs, (a,), (np.eye(3),))[1]))
    got = np.asarray(ft.vmap(ft.grad(logabs))(np.stack([a, np.eye(3) * 2.0])))
    np.testing.assert_array_equal(got[0], np.array(want))
    np.testing.assert_allclose(got[1], np.eye(3) / 2.0, rtol=1e-15)
    # rank 2 of 4 (JAX 0.10.2's pattern)
    b = np.array([[1.0, 2.0, 0.0, 1.0], [2.0, 4.0, 0.0, 2.0], [0.0, 1.0, 1.0, 0.0],
                  [1.0, 3.0, 1.0, 1.0]])
    g = np.asarray(ft.grad(logabs)(b))
    assert np.isnan(g).all()                           # JAX 0.10.2: NaN throughout


def test_det_of_2x2_and_3x3_is_jax_s_explicit_products():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    np.testing.assert_array_equal(np.asarray(ft.grad(fnp.linalg.det)(a)), [[4.0, -2.0],
                                                                          [-2.0, 1.0]])
    h = np.asarray(ft.hessian(fnp.linalg.det)(a)).reshape(4, 4)
    np.testing.assert_array_equal(h, np.rot90(np.diag([1.0, -1.0, -1.0, 1.0])))
    b = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
    np.testing.assert_array_equal(np.asarray(ft.grad(fnp.linalg.det)(b)),
                                  [[-3.0, 6.0, -3.0], [6.0, -12.0, 6.0], [-3.0, 6.0, -3.0]])
    m = RNG.standard_normal((4, 3, 3))
    np.testing.assert_allclose(fnp.linalg.det(m), np.linalg.det(m), rtol=1e-13)
    np.testing.assert_allclose(ft.jit(fnp.linalg.det)(m), np.linalg.det(m), rtol=1e-13)


# --------------------------------------------------------------------------- complex norms

@pytest.mark.parametrize("ord", [None, "fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf])
def test_complex_matrix_norm_value_and_gradient(ord):
    re, im = RNG.standard_normal((2, 3, 3))
    z = re + 1j * im
    np.testing.assert_allclose(fnp.linalg.norm(z, ord), np.linalg.norm(z, ord), rtol=1e-12)

    def f(x, y):
        return fnp.linalg.norm(lax.complex(x, y), ord)
    gx, gy = ft.grad(f, argnums=(0, 1))(re, im)
    np.testing.assert_allclose(gx, _fd(lambda x: float(np.linalg.norm(x + 1j * im, ord)), re),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gy, _fd(lambda y: float(np.linalg.norm(re + 1j * y, ord)), im),
                               rtol=1e-5, atol=1e-6)


def test_complex_vector_norms():
    z = RNG.standard_normal(5) + 1j * RNG.standard_normal(5)
    for ord in (None, 1, 2, 3, np.inf, -np.inf, 0):
        np.testing.assert_allclose(fnp.linalg.norm(z, ord), np.linalg.norm(z, ord), rtol=1e-12)
    assert fnp.linalg.norm(z).dtype == np.float64


def test_complex_solve_and_inv():
    a = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3)) + 3 * np.eye(3)
    b = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
    np.testing.assert_allclose(fnp.linalg.solve(a, b), np.linalg.solve(a, b), rtol=1e-12)
    np.testing.assert_allclose(fnp.linalg.inv(a), np.linalg.inv(a), rtol=1e-12)


# --------------------------------------------------------------------------- pinv, lstsq

def test_pinv_derivative_at_repeated_singular_values():
    # at I the pseudo-inverse is the inverse: d pinv = -dA (an SVD route gets this wrong)
    e = RNG.standard_normal((3, 3))
    _, dp = ft.jvp(fnp.linalg.pinv, (np.eye(3),), (e,))
    np.testing.assert_allclose(dp, -e, atol=1e-12)


def test_pinv_of_rank_deficient_matrix_and_its_gradient():
    u = RNG.standard_normal((4, 2))
    a = u @ RNG.standard_normal((2, 3))   # rank 2
    np.testing.assert_allclose(fnp.linalg.pinv(a), np.linalg.pinv(a), atol=1e-10)
    # along a rank-preserving direction the derivative matches finite differences
    e = u @ RNG.standard_normal((2, 3))
    _, dp = ft.jvp(fnp.linalg.pinv, (a,), (e,))
    eps = 1e-6
    fd = (np.linalg.pinv(a + eps * e) - np.linalg.pinv(a - eps * e)) / (2 * eps)
    np.testing.assert_allclose(dp, fd, atol=1e-6)


def test_lstsq_rank_deficient_is_minimum_norm():
    a = np.array([[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]])
    b = np.array([1.0, 2.0, 3.0])
    x, resid, rank, s = fnp.linalg.lstsq(a, b)
    want = np.linalg.lstsq(a, b, rcond=None)
    np.testing.assert_allclose(x, want[0], atol=1e-12)
    assert int(rank) == 1
    np.testing.assert_allclose(resid, [np.sum((a @ want[0] - b) ** 2)], rtol=1e-10)


# --------------------------------------------------------------------------- errors

def test_undefined_derivatives_raise():
    with pytest.raises(NotImplementedError, match="eigenvectors"):
        ft.jvp(lambda a: fnp.linalg.eig(a)[1], (np.eye(2) + 1.0,), (np.eye(2),))
    with pytest.raises(NotImplementedError, match="full_matrices"):
        ft.jvp(lambda a: fnp.linalg.svd(a)[0], (np.ones((3, 2)),), (np.ones((3, 2)),))


def test_complete_qr_of_a_tall_matrix_differentiates_as_lapacks_q():
    # JAX differentiates the Householder Q (its extra columns are LAPACK's choice, a
    # smooth function of the input): finite differences of numpy's qr, jvp and grad
    x = RNG.standard_normal((5, 3))
    t = RNG.standard_normal((5, 3))
    _, (dq, dr) = ft.jvp(lambda a: fnp.linalg.qr(a, mode="complete"), (x,), (t,))
    eps = 1e-6
    (qp, rp), (qm, rm) = np.linalg.qr(x + eps * t, "complete"), np.linalg.qr(x - eps * t, "complete")
    np.testing.assert_allclose(dq, (qp - qm) / (2 * eps), atol=1e-7)
    np.testing.assert_allclose(dr, (rp - rm) / (2 * eps), atol=1e-7)
    w = RNG.standard_normal((5, 5))
    g = ft.grad(lambda a: fnp.sum(fnp.linalg.qr(a, mode="complete")[0] * w))(x)
    np.testing.assert_allclose(np.sum(g * t), np.sum(dq * w), rtol=1e-12)


def test_bad_arguments():
    with pytest.raises(TypeError, match="floating"):
        lax.eigh(np.eye(2, dtype=np.int64))
    with pytest.raises(ValueError, match="mode"):
        fnp.linalg.qr(np.eye(2), mode="economic")      # numpy's removed mode (JAX raises)
    with pytest.raises(ValueError, match="UPLO"):
        fnp.linalg.eigh(np.eye(2), UPLO="X")
    with pytest.raises(ValueError, match="size 3"):
        fnp.linalg.cross(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="not .*square"):
        fnp.linalg.tensorinv(np.ones((2, 3)), ind=1)


def test_public_names_are_exactly_jax_linalg():
    want = {"cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals",
            "eigvalsh", "inv", "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
            "matrix_transpose", "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve",
            "svd", "svdvals", "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot",
            "vector_norm"}
    public = {n for n in fnp.linalg.__all__ if not n.endswith("Result")}
    assert public == want
    leaked = {n for n in vars(fnp.linalg) if not n.startswith("_")} - set(fnp.linalg.__all__)
    assert not leaked, leaked


# --------------------------------------------------------------------------- jit, default backend

@pytest.mark.parametrize("name,fun,make", [
    ("eigh", lambda a: tuple(fnp.linalg.eigh(a)), lambda: (lambda r: r + np.swapaxes(r, -1, -2))(
        RNG.standard_normal((2, 4, 4)))),
    ("svd", lambda a: tuple(fnp.linalg.svd(a, full_matrices=False)),
     lambda: RNG.standard_normal((2, 4, 3))),
    ("qr", lambda a: tuple(fnp.linalg.qr(a)), lambda: RNG.standard_normal((3, 2))),
    ("eigvals", fnp.linalg.eigvals, lambda: RNG.standard_normal((3, 3))),
    ("pinv", fnp.linalg.pinv, lambda: RNG.standard_normal((3, 2))),
    ("det_grad", ft.grad(fnp.linalg.det), lambda: np.ones((3, 3))),
    ("norm_nuc", lambda a: fnp.linalg.norm(a, "nuc"), lambda: RNG.standard_normal((3, 2))),
])
def test_jit_default_backend_matches_eager(name, fun, make):
    x = make()
    want = fun(x)
    got = ft.jit(fun)(x)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10, atol=1e-12)


def test_eigh_under_jit_calls_lapack_natively(monkeypatch):
    from backends.llvm import lapack
    from functrans.primitives import linalg_decomp
    if not lapack.available():
        pytest.fail("scipy (a dependency) is missing: eigh cannot call LAPACK natively")
    r = RNG.standard_normal((3, 5, 5)).astype(np.float32)
    s = r + np.swapaxes(r, -1, -2)
    for lower in (True, False):
        want = [np.asarray(x) for x in lax.eigh(s, lower=lower)]

        def no_host_step(*args, **kwargs):
            raise AssertionError("eigh ran as a host step")
        monkeypatch.setattr(linalg_decomp.eigh_p, "impl", no_host_step)
        got = ft.jit(lambda a, lo=lower: lax.eigh(a, lower=lo), backend="cpu")(s)
        monkeypatch.undo()
        # same eigenvalues, and the same eigenvectors (signs fixed the same way)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-4, atol=1e-4)
    bad = ft.jit(lambda a: lax.eigh(a)[1], backend="cpu")(np.full((2, 2), np.nan))
    assert np.isnan(np.asarray(bad)).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cholesky_and_solve_under_jit_call_lapack_natively(monkeypatch, dtype):
    from functrans.primitives import linalg as linalg_prims
    r = RNG.standard_normal((3, 4, 4))
    spd = (r @ np.swapaxes(r, -1, -2) + 4 * np.eye(4)).astype(dtype)
    a = (RNG.standard_normal((3, 4, 4)) + 4 * np.eye(4)).astype(dtype)
    b = RNG.standard_normal((3, 4, 2)).astype(dtype)
    want_c, want_s = np.asarray(lax.cholesky(spd)), np.asarray(lax.solve(a, b))

    def no_host_step(*args, **kwargs):
        raise AssertionError("ran as a host step")
    monkeypatch.setattr(linalg_prims.cholesky_p, "impl", no_host_step)
    monkeypatch.setattr(linalg_prims.solve_p, "impl", no_host_step)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(ft.jit(lax.cholesky, backend="cpu")(spd), want_c, atol=tol)
    np.testing.assert_allclose(ft.jit(lax.solve, backend="cpu")(a, b), want_s, atol=tol,
                               rtol=tol)
    # a transposed (non-contiguous) operand, and failures as NaN like the numpy impl
    got = ft.jit(lambda m, v: lax.solve(m.T, v), backend="cpu")(a[0], b[0])
    np.testing.assert_allclose(got, np.linalg.solve(a[0].T, b[0]), atol=tol, rtol=tol)
    bad = ft.jit(lax.cholesky, backend="cpu")(np.stack([np.eye(2), -np.eye(2)]).astype(dtype))
    np.testing.assert_array_equal(np.asarray(bad)[0], np.eye(2))
    assert np.isnan(np.asarray(bad)[1]).all()
    sing = ft.jit(lax.solve, backend="cpu")(np.ones((2, 2), dtype), np.ones((2, 1), dtype))
    assert np.isnan(np.asarray(sing)).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_det_and_triangular_solve_under_jit_call_lapack_natively(monkeypatch, dtype):
    from functrans.primitives import linalg as linalg_prims, linalg_det
    a = (RNG.standard_normal((3, 4, 4)) + 2 * np.eye(4)).astype(dtype)
    a[0, 0] *= -1.0
    b = RNG.standard_normal((3, 4, 2)).astype(dtype)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]], dtype)
    kinds = [dict(left_side=ls, lower=lo, transpose_a=tr, unit_diagonal=ud)
             for ls in (True, False) for lo in (True, False) for tr in (False, True)
             for ud in (False, True)]
    want_det = np.asarray(lax.det(a))
    want_tri = [np.asarray(lax.triangular_solve(a, b if k["left_side"] else
                                                np.swapaxes(b, -1, -2), **k)) for k in kinds]

    def no_host_step(*args, **kwargs):
        raise AssertionError("ran as a host step")
    monkeypatch.setattr(linalg_det.det_p, "impl", no_host_step)
    monkeypatch.setattr(linalg_prims.triangular_solve_p, "impl", no_host_step)
    tol = 1e-11 if dtype == np.float64 else 2e-4
    np.testing.assert_allclose(ft.jit(lax.det, backend="cpu")(a), want_det, rtol=tol)
    assert float(ft.jit(lax.det, backend="cpu")(singular)) == 0.0
    for k, want in zip(kinds, want_tri):
        rhs = b if k["left_side"] else np.swapaxes(b, -1, -2)
        got = ft.jit(lambda m, v, kw=k: lax.triangular_solve(m, v, **kw), backend="cpu")(a, rhs)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=str(k))
    zero_diag = np.triu(np.ones((2, 2), dtype)) - np.eye(2, dtype=dtype)
    bad = ft.jit(lambda m, v: lax.triangular_solve(m, v, left_side=True), backend="cpu")(
        zero_diag, np.ones((2, 1), dtype))
    # JAX's (BLAS trsm, no singularity check): 1/0 = inf, then (1 - inf)/0 = -inf
    assert np.asarray(bad).ravel().tolist() == [-np.inf, np.inf]


def test_roots_against_numpy_and_finite_differences():
    for p in ([1.0, -3.0, 2.0], [0.0, 2.0, 0.0, -8.0, 0.0, 0.0], [1.0, 0.0, 1.0], [3.0],
              [0.0, 0.0], [2, -4]):
        got = np.sort_complex(np.asarray(fnp.roots(np.array(p))))
        np.testing.assert_allclose(got, np.sort_complex(np.roots(np.array(p)) + 0j),
                                   atol=1e-12)
    assert np.isnan(np.asarray(fnp.roots(np.array([0.0, 1.0, -1.0]), strip_zeros=False))).any()
    c = np.array([1.0, -6.0, 11.0, -6.0])      # roots 1, 2, 3

    def largest(q):
        return fnp.max(fnp.real(fnp.roots(q, strip_zeros=False)))
    g = ft.grad(largest)(c)
    fd = _fd(lambda q: float(np.max(np.roots(q).real)), c)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)
    with pytest.raises(TypeError, match="strip_zeros"):
        ft.jit(fnp.roots)(c)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3), (5, 1)])
@pytest.mark.parametrize("full", [False, True])
def test_qr_under_jit_calls_lapack_natively(monkeypatch, shape, full):
    from functrans.primitives import linalg_decomp
    for dtype, tol in ((np.float64, 1e-12), (np.float32, 1e-5)):
        x = RNG.standard_normal(shape).astype(dtype)
        want = [np.asarray(v) for v in lax.qr(x, full_matrices=full)]

        def no_host_step(*args, **kwargs):
            raise AssertionError("qr ran as a host step")
        monkeypatch.setattr(linalg_decomp.qr_p, "impl", no_host_step)
        got = ft.jit(lambda a: lax.qr(a, full_matrices=full), backend="cpu")(x)
        monkeypatch.undo()
        for g, w in zip(got, want):     # the same routines as numpy: the same signs
            np.testing.assert_allclose(g, w, atol=tol, rtol=tol)


def test_pinv_under_jit_calls_lapack_natively(monkeypatch):
    from functrans.primitives import linalg_det
    cases = [RNG.standard_normal((4, 3)), RNG.standard_normal((2, 3, 5)).astype(np.float32)]
    deficient = RNG.standard_normal((3, 3))
    deficient[2] = deficient[0] + deficient[1]
    cases.append(deficient)
    want = [np.asarray(fnp.linalg.pinv(x)) for x in cases]

    def no_host_step(*args, **kwargs):
        raise AssertionError("pinv ran as a host step")
    monkeypatch.setattr(linalg_det.pinv_p, "impl", no_host_step)
    for x, w in zip(cases, want):
        tol = 1e-10 if x.dtype == np.float64 else 1e-4
        np.testing.assert_allclose(ft.jit(fnp.linalg.pinv, backend="cpu")(x), w, atol=tol,
                                   rtol=tol)
