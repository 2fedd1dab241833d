"""functrans.scipy.sparse.linalg (cg, bicgstab, gmres) against numpy's direct solve and
scipy's iterations: real and complex systems, matrices and functions, pytrees,
preconditioners, gradients through custom_linear_solve (against the implicit formula and
finite differences), jit and vmap."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse.linalg as ssl

import functrans as ft
import functrans.numpy as fnp
from functrans.scipy.sparse import linalg as fsl
from functrans.test_util import check_grads

_RNG = np.random.default_rng(3)
_N = 12
_A = _RNG.normal(size=(_N, _N))
_SPD = _A @ _A.T + _N * np.eye(_N)
_GEN = _A + _N * np.eye(_N)
_B = _RNG.normal(size=_N)
_SYSTEMS = [("cg", _SPD), ("bicgstab", _GEN), ("gmres", _GEN), ("gmres", _A)]


def _solve(name, A, b, **kw):
    return getattr(fsl, name)(A, b, tol=1e-12, **kw)[0]


@pytest.mark.parametrize("name, A", _SYSTEMS, ids=["cg", "bicgstab", "gmres", "gmres-hard"])
def test_solution_jit_vmap(name, A):
    want = np.linalg.solve(A, _B)
    np.testing.assert_allclose(np.asarray(_solve(name, A, _B)), want, rtol=0, atol=1e-11)
    got = ft.jit(lambda a, b: _solve(name, a, b))(A, _B)
    np.testing.assert_allclose(np.asarray(got), want, rtol=0, atol=1e-11)
    rhs = _RNG.normal(size=(3, _N))
    got = ft.vmap(lambda b: _solve(name, A, b))(rhs)
    np.testing.assert_allclose(np.asarray(got), np.linalg.solve(A, rhs.T).T, rtol=0, atol=1e-11)


@pytest.mark.parametrize("name, A", _SYSTEMS[:3], ids=["cg", "bicgstab", "gmres"])
def test_gradients_are_the_implicit_ones(name, A):
    x = np.linalg.solve(A, _B)
    lam = 2 * np.linalg.solve(A.T, x)          # d|x|^2/db; d/dA = -lam x^T
    gb = ft.grad(lambda b: fnp.sum(_solve(name, A, b) ** 2))(_B)
    ga = ft.grad(lambda a: fnp.sum(_solve(name, a, _B) ** 2))(A)
    np.testing.assert_allclose(np.asarray(gb), lam, rtol=0, atol=1e-10)
    np.testing.assert_allclose(np.asarray(ga), -np.outer(lam, x), rtol=0, atol=1e-10)
    small = A[:4, :4]
    check_grads(lambda a, b: _solve(name, a, b), (small, _B[:4]), order=1, modes=("fwd", "rev"))


def test_restarted_gmres_stagnates_as_scipys():
    got = np.asarray(_solve("gmres", _A, _B, restart=5))
    want, info = ssl.gmres(_A, _B, rtol=1e-12, restart=5, maxiter=10 * _N)
    assert info > 0
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", ["cg", "bicgstab", "gmres"])
def test_complex_systems(name):
    c = _A + 1j * _RNG.normal(size=(_N, _N))
    A = c @ c.conj().T + _N * np.eye(_N) if name == "cg" else c + _N * np.eye(_N)
    b = _B + 1j * _B[::-1]
    got = np.asarray(_solve(name, A, b))
    np.testing.assert_allclose(got, np.linalg.solve(A, b), rtol=0, atol=1e-11)
    # reverse mode through a complex (Hermitian) operator: the transpose is conj(A), not
    # A, so cg's grad was wrong when it declared the system symmetric; vs forward mode
    loss = lambda s: fnp.sum(fnp.abs(_solve(name, A + s * np.diag(np.arange(_N)), b)) ** 2)
    np.testing.assert_allclose(float(ft.grad(loss)(0.5)), float(ft.jacfwd(loss)(0.5)),
                               rtol=1e-9)


@pytest.mark.parametrize("name", ["cg", "bicgstab", "gmres"])
def test_functions_pytrees_x0_and_preconditioners(name):
    op = lambda t: {"u": 2.0 * t["u"], "v": 3.0 * t["v"]}      # noqa: E731
    b = {"u": np.ones(2), "v": np.ones(3)}
    x = _solve(name, op, b, x0={"u": np.zeros(2), "v": np.ones(3)})
    np.testing.assert_allclose(np.asarray(x["u"]), 0.5)
    np.testing.assert_allclose(np.asarray(x["v"]), 1.0 / 3.0)
    A = _SPD if name == "cg" else _GEN
    got = _solve(name, A, _B, M=lambda v: v / fnp.diag(A))
    np.testing.assert_allclose(np.asarray(got), np.linalg.solve(A, _B), rtol=0, atol=1e-11)
    with pytest.raises(ValueError):
        getattr(fsl, name)(op, b, x0=np.zeros(5))


def test_tolerance_and_maxiter_stop_early():
    loose = np.asarray(fsl.cg(_SPD, _B, tol=1e-2)[0])
    err = np.linalg.norm(_SPD @ loose - _B) / np.linalg.norm(_B)
    assert 1e-12 < err <= 1e-2
    one = np.asarray(fsl.cg(_SPD, _B, maxiter=1)[0])
    r = _B    # one step from zero: the exact line minimum along b
    np.testing.assert_allclose(one, (r @ r) / (r @ _SPD @ r) * r, rtol=1e-13)


@pytest.mark.parametrize("name", ["cg", "bicgstab", "gmres"])
def test_matrix_operators_apply_to_b_shape_and_bad_inputs_raise_as_jax(name):
    # JAX's lax_scipy_sparse_test: test_*_matmul (an object with @ and .shape, b of shape
    # (3, 3) solved column by column: ft raveled b and raised), test_cg_errors
    class Op:
        def __init__(self, a):
            self.a, self.shape = a, a.shape

        def __matmul__(self, x):
            return self.a @ x
    solver = getattr(fsl, name)
    b = np.arange(9.0).reshape(3, 3)
    for A in (Op(2 * np.eye(3)), 2 * np.eye(3), fnp.asarray(2 * np.eye(3))):
        np.testing.assert_allclose(np.asarray(solver(A, b)[0]), b / 2, rtol=1e-6)
    with pytest.raises(ValueError, match="matching tree structure"):
        solver(lambda x: x, {"x": np.zeros(2)}, {"y": np.zeros(2)})
    with pytest.raises(ValueError, match="matching shapes"):
        solver(lambda x: x, np.zeros(2), np.zeros((2, 1)))
    with pytest.raises(ValueError, match="square matrix"):
        solver(np.zeros((3, 2)), np.zeros(2))
    with pytest.raises(TypeError, match="function or ndarray"):
        solver([[1.0]], np.zeros(1))


def test_gmres_info_is_an_int_as_jax():
    # JAX's gmres returns info (0, or -1 for a NaN solution); ft returned None
    x, info = fsl.gmres(_GEN, _B)
    assert int(info) == 0 and np.asarray(info).dtype.kind == "i"
    assert int(ft.jit(lambda b: fsl.gmres(_GEN, b)[1])(_B)) == 0
    assert fsl.cg(_SPD, _B)[1] is None
