"""From JAX 0.10.2's tests/linalg_test.py, run against functrans through a fake-``jax``
shim (session 31, helper jtlinalg).  Expected values are jax 0.10.2's (x64 on) for the
same calls, stored here; no test imports jax."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.scipy.linalg import cho_factor, cho_solve, cholesky, solve, solve_sylvester

_A = np.array([[1., 2, 0], [0.5, -1, 3], [2, 0, 4]])
_B = np.array([[2., 1], [-1, 3]])
_C = np.array([[1., 2], [3, 4], [5, 6]])
_X = [[-0.07915157785825246, 0.2214174857734092], [0.7294361096740829, 0.5967408173823079],
      [0.9689601655457847, 0.6554578375582005]]


@pytest.mark.parametrize("method", ["schur", "eigen"])
def test_solve_sylvester_values(method):
    """ScipyLinalgTest.test_solve_sylvester: jax's solution, float64, complex128, float32."""
    np.testing.assert_allclose(np.asarray(solve_sylvester(_A, _B, _C, method=method)), _X,
                               rtol=1e-13)
    ac = _A + 1j * np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0.]])
    xc = solve_sylvester(ac, _B, _C - 2j, method=method)
    assert xc.dtype == np.complex128
    np.testing.assert_allclose(np.asarray(xc), [
        [-0.6006175123876649 + 0.38413307618526493j, 0.17301634272555438 - 0.8837806533382677j],
        [0.3827115755766086 - 2.209445728735335j, 0.9936187640277407 + 0.07868538657003232j],
        [1.182971241114763 - 0.36230222130067646j, 0.5124593457279804 - 0.006164687821191728j]],
        rtol=1e-13)
    x32 = solve_sylvester(*(m.astype(np.float32) for m in (_A, _B, _C)), method=method)
    assert x32.dtype == np.float32
    np.testing.assert_allclose(np.asarray(x32), [
        [-0.07915167510509491, 0.22141756117343903], [0.7294363379478455, 0.5967407822608948],
        [0.9689602255821228, 0.6554578542709351]], rtol=2e-5, atol=2e-6)
    x_int = solve_sylvester(np.array([[1, 2], [0, 3]]), np.array([[4]]), np.array([[7], [7]]))
    assert x_int.dtype == np.float64 and np.asarray(x_int).tolist() == [[1.0], [1.0]]


def test_solve_sylvester_broadcast():
    """ScipyLinalgTest.test_solve_sylvester_broadcast: batched A, unbatched B and C (the
    Kronecker version raised ValueError for any batch)."""
    x = solve_sylvester(np.stack([_A, _A.T]), _B, _C)
    np.testing.assert_allclose(np.asarray(x), [_X, [
        [0.20900155199172293, 0.01991722710812177], [3.0413864459389552, 0.45938954992240055],
        [-0.5638903259182622, 0.7408173823072944]]], rtol=1e-13)
    with pytest.raises(ValueError, match="Incompatible shapes"):
        solve_sylvester(_A, _B, _C.T)


def test_ill_conditioned_sylvester_is_nan():
    """ScipyLinalgTest.test_ill_conditioned_sylvester: eigenvalue sums below tol give
    NaNs, as JAX's (the Kronecker solve ignored tol and returned a solution)."""
    p = np.array([[1., 2], [3, 5]])
    a = p @ np.diag([1., 2]) @ np.linalg.inv(p)
    b = p @ np.diag([-1., -3]) @ np.linalg.inv(p)
    assert np.isnan(np.asarray(solve_sylvester(a, b, np.ones((2, 2)), tol=1e-5))).all()
    assert not np.isnan(np.asarray(solve_sylvester(_A, _B, _C, tol=1e-5))).any()


def test_solve_sylvester_large_float32_residual():
    """test_solve_sylvester's (100, 110) case: the Kronecker system was 11000 x 11000
    (1.9 GB, minutes); jax's float32 residual max|AX + XB - C| / max|C| is 6.1e-4 here."""
    r = np.random.RandomState(0)
    a, b, c = (r.randn(*s).astype(np.float32) for s in ((100, 100), (110, 110), (100, 110)))
    x = np.asarray(solve_sylvester(a, b, c)).astype(np.float64)
    assert x.dtype == np.float64
    resid = np.abs(a @ x + x @ b - c).max() / np.abs(c).max()
    assert resid < 2e-3, resid


def test_solve_sylvester_grad_matches_finite_differences():
    """JAX cannot differentiate solve_sylvester (schur has no rule); functrans does by the
    implicit equation A X' + X' B = C' - A' X - X B': checked by central differences."""
    def f(a, b, c):
        return fnp.sum(solve_sylvester(a, b, c) ** 2)
    grads = ft.grad(f, argnums=(0, 1, 2))(_A, _B, _C)
    eps = 1e-6
    for k, base in enumerate((_A, _B, _C)):
        fd = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            d = np.zeros_like(base)
            d[idx] = eps
            args_p = [_A, _B, _C]
            args_m = [_A, _B, _C]
            args_p[k], args_m[k] = base + d, base - d
            fd[idx] = (float(f(*args_p)) - float(f(*args_m))) / (2 * eps)
        np.testing.assert_allclose(np.asarray(grads[k]), fd, rtol=1e-6, atol=1e-7)
    dirs = [np.cos(np.arange(m.size)).reshape(m.shape) for m in (_A, _B, _C)]
    _, tangent = ft.jvp(f, (_A, _B, _C), tuple(dirs))
    np.testing.assert_allclose(float(tangent), sum(float(np.sum(g * d))
                                                   for g, d in zip(grads, dirs)), rtol=1e-10)


def test_solve_sylvester_jit_and_vmap():
    x = ft.jit(solve_sylvester)(_A, _B, _C)
    np.testing.assert_allclose(np.asarray(x), _X, rtol=1e-13)
    xv = ft.vmap(solve_sylvester, in_axes=(None, None, 0))(_A, _B, np.stack([_C, 2 * _C]))
    np.testing.assert_allclose(np.asarray(xv), [_X, 2 * np.asarray(_X)], rtol=1e-13)
    with pytest.raises(ValueError, match="Unrecognized method"):
        solve_sylvester(_A, _B, _C, method="kron")


_SPD = np.array([[4., 2, 1], [2, 5, 3], [1, 3, 6]])


@pytest.mark.parametrize("lower", [False, True])
def test_scipy_solve_pos_reads_one_triangle(lower):
    """ScipyLinalgTest.testSolve (assume_a='pos' with np.triu / np.tril of an SPD matrix):
    scipy and JAX read only the triangle ``lower`` names; functrans symmetrised the input
    (a half-zero matrix) and returned [0.32, 0.068, 0.059, -1.34]-like garbage."""
    a = np.tril(_SPD) if lower else np.triu(_SPD)
    x = solve(a, np.array([1., 2, 3]), assume_a="pos", lower=lower)
    np.testing.assert_allclose(np.asarray(x), [0.08955223880597016, 0.10447761194029848,
                                               0.4328358208955224], rtol=1e-14)
    c = cholesky(a, lower=lower)
    want = np.array([[2.0, 1.0, 0.5], [0.0, 2.0, 1.25], [0.0, 0.0, 2.0463381929681126]])
    np.testing.assert_allclose(np.asarray(c), want.T if lower else want, rtol=1e-14, atol=0)
    junk = 7 * (np.triu(np.ones((3, 3)), 1) if lower else np.tril(np.ones((3, 3)), -1))
    c2, low = cho_factor(a + junk, lower=lower)      # the other triangle is never read
    np.testing.assert_allclose(np.asarray(cho_solve((c2, low), np.array([1., 2, 3]))),
                               np.asarray(x), rtol=1e-14)


def test_scipy_cholesky_grad_is_one_triangle():
    """functrans's gradient of scipy.linalg.cholesky(a, lower=True) is the derivative of
    what it computes (only the lower triangle is read: upper entries 0, checked by central
    differences). JAX's lax rule with symmetrize_input=False returns a different split
    between a[i, j] and a[j, i] (their sums agree)."""
    g = np.asarray(ft.grad(lambda x: fnp.sum(cholesky(x, lower=True)))(_SPD))
    eps, fd = 1e-6, np.zeros((3, 3))
    for idx in np.ndindex(3, 3):
        d = np.zeros((3, 3))
        d[idx] = eps
        fd[idx] = (float(fnp.sum(cholesky(_SPD + d, lower=True)))
                   - float(fnp.sum(cholesky(_SPD - d, lower=True)))) / (2 * eps)
    np.testing.assert_allclose(g, fd, atol=1e-8)
    jax_g = np.array([[0.14939194878403364, -0.18141948784033635, 0.015271180544538153],
                      [0.44358051215966365, 0.18919487840336346, -0.15271180544538154],
                      [0.26527118054453813, 0.34728819455461846, 0.24433888871261045]])
    np.testing.assert_allclose(g + g.T, jax_g + jax_g.T, rtol=1e-12)


def test_lstsq_numpy_resid():
    """NumpyLinalgTest.testLstsq / testLstsqZeroMatrix call lstsq(numpy_resid=True)
    (raised ValueError). jax 0.10.2: full-rank tall a gives sum |a x - b|^2 per column;
    rank < n or m <= n gives an empty array."""
    a = np.array([[1., 2, 0], [0, 1, 1], [1, 0, 1], [2, 1, 0], [0, 0, 1]])
    b = np.array([[1., 0], [2, 1], [0, 1], [1, 1], [3, 0]])
    x, res, rank, s = fnp.linalg.lstsq(a, b, numpy_resid=True)
    np.testing.assert_allclose(np.asarray(x), np.linalg.lstsq(a, b, rcond=None)[0], rtol=1e-12)
    want = np.sum((a @ np.linalg.lstsq(a, b, rcond=None)[0] - b) ** 2, axis=0)
    np.testing.assert_allclose(np.asarray(res), want, rtol=1e-12)
    assert int(rank) == 3
    deficient = np.outer(np.arange(1., 6), [1., 2, 3])
    assert fnp.linalg.lstsq(deficient, b, numpy_resid=True)[1].shape == (0,)
    assert fnp.linalg.lstsq(a.T[:, :3], b[:3], numpy_resid=True)[1].shape == (0,)  # m <= n
    assert fnp.linalg.lstsq(np.zeros((4, 2)), b[:4], numpy_resid=True)[1].shape == (0,)
    assert fnp.linalg.lstsq(deficient, b)[1].shape == (2,)       # the default: always full


def test_hermitian_inputs_under_strict_promotion():
    """eigh_test testEigh / testEighIdentity / testEigvalsh and linalg_test testCholesky
    run under numpy_dtype_promotion('strict') (JaxTestCase's default): complex64 and
    complex128 eigh / eigvalsh / cholesky / pinv(hermitian=True) raised TypePromotionError
    (the symmetrising (x + x^H) * 0.5 used a float scalar of the real dtype)."""
    z = np.array([[2, 1 - 1j, 0], [1 + 1j, 3, 1j], [0, -1j, 4]])
    for dt in (np.complex64, np.complex128):
        a = z.astype(dt)
        with ft.numpy_dtype_promotion("strict"):
            w = fnp.linalg.eigvalsh(a)
            w2, v = fnp.linalg.eigh(a)
            c = fnp.linalg.cholesky(a)
            p = fnp.linalg.pinv(a, hermitian=True)
        tol = 1e-5 if dt == np.complex64 else 1e-13
        assert w.dtype == np.finfo(dt).dtype and c.dtype == dt and v.dtype == dt
        np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(z), rtol=tol)
        np.testing.assert_allclose(np.asarray(w2), np.linalg.eigvalsh(z), rtol=tol)
        np.testing.assert_allclose(np.asarray(c), np.linalg.cholesky(z), rtol=tol, atol=tol)
        np.testing.assert_allclose(np.asarray(p), np.linalg.inv(z), rtol=tol, atol=tol)


@pytest.mark.parametrize("left_side,transpose_a,want", [
    (True, False, [0., 0.24858789, 0.36895686, 0.52608887]),
    (True, True, [-0.11244035, 0.19684419, 0.34026595, 0.56246404]),
    (False, False, [-0.11244035, 0.19684419, 0.34026595, 0.56246404]),
    (False, True, [0., 0.24858789, 0.36895686, 0.52608887])])
def test_lax_triangular_solve_vector_b(left_side, transpose_a, want):
    """ScipyLinalgTest.testTriangularSolveGrad with a_shape (4, 4), b_shape (4,): JAX's
    lax.linalg.triangular_solve takes b of rank a.ndim - 1 as a vector (functrans raised
    'must have the same rank'); values are jax 0.10.2's."""
    a = np.tril(np.random.RandomState(0).randn(4, 4)) + 5 * np.eye(4)
    x = ft.lax.linalg.triangular_solve(a, np.arange(4.), left_side=left_side, lower=True,
                                       transpose_a=transpose_a)
    assert x.shape == (4,)
    np.testing.assert_allclose(np.asarray(x), want, rtol=1e-7, atol=1e-12)
    xb = ft.lax.linalg.triangular_solve(np.stack([a, a]), np.stack([np.arange(4.)] * 2),
                                        left_side=left_side, lower=True,
                                        transpose_a=transpose_a)
    np.testing.assert_allclose(np.asarray(xb), [want, want], rtol=1e-7, atol=1e-12)
    g = ft.grad(lambda b: fnp.sum(ft.lax.linalg.triangular_solve(
        a, b, left_side=left_side, lower=True, transpose_a=transpose_a)))(np.arange(4.))
    op = a.T if transpose_a != (not left_side) else a      # x = op^-1 b as a column solve
    np.testing.assert_allclose(np.asarray(g), np.linalg.solve(op.T, np.ones(4)), rtol=1e-12)


def test_structured_matrices_of_empty_input():
    """ScipyLinalgTest.testToeplitzConstruction / testHankelConstruction /
    testCirculantConstruction with a length-0 input: jax 0.10.2 returns empty matrices
    (functrans raised 'the input must not be empty')."""
    from functrans.scipy.linalg import circulant, hankel, toeplitz
    e = np.zeros(0)
    assert toeplitz(e).shape == (0, 0)
    assert toeplitz(e, np.arange(3.)).shape == (0, 3)
    assert toeplitz(np.arange(3.), e).shape == (3, 0)
    assert hankel(e).shape == (0, 0) and hankel(np.zeros((2, 0))).shape == (2, 0, 0)
    assert hankel(np.arange(2.), e).shape == (2, 0)
    assert circulant(e).shape == (0, 0) and circulant(np.zeros((3, 0))).shape == (3, 0, 0)
    assert toeplitz(np.zeros((2, 0)), np.ones((2, 3))).shape == (2, 0, 3)
    assert toeplitz(e).dtype == np.float64
