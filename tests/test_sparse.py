"""functrans.experimental.sparse (BCOO, BCSR, sparsify): values vs dense numpy, layouts and
values vs JAX 0.10.2 (tests/data/jax_sparse_reference.npz), grads vs finite differences and
vs dense grads, vmap vs a loop, jit vs eager, and a GCN training step."""
import os
import sys

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import random
from functrans.errors import ConcretizationTypeError
from functrans.experimental import sparse
from functrans.experimental.sparse import BCOO, BCSR
from functrans.test_util import check_grads

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
sys.path.insert(0, DATA)
from jax_sparse_cases import cases  # noqa: E402


def _sparse_array(rng, shape, mask_shape=None, p=0.4):
    mask = rng.random(mask_shape or shape) < p
    return rng.standard_normal(shape) * mask


def test_same_layouts_and_values_as_jax():
    ref = np.load(os.path.join(DATA, "jax_sparse_reference.npz"))
    ours = cases(fnp, sparse, ft.grad)
    assert set(ours) == set(ref.files) - {"jax_version"}
    for name, got in ours.items():
        got, want = np.asarray(got), ref[name]
        assert got.shape == want.shape and got.dtype == want.dtype, (name, got, want)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("n_batch,n_dense", [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0)])
def test_fromdense_todense_round_trip(rng, n_batch, n_dense):
    A = _sparse_array(rng, (3, 4, 5), (3, 4, 1) if n_dense else None)
    M = BCOO.fromdense(A, n_batch=n_batch, n_dense=n_dense)
    assert (M.n_batch, M.n_dense, M.shape) == (n_batch, n_dense, A.shape)
    np.testing.assert_array_equal(M.todense(), A)
    padded = BCOO.fromdense(A, nse=M.nse + 2, n_batch=n_batch, n_dense=n_dense)
    np.testing.assert_array_equal(padded.todense(), A)
    flat = sparse.bcoo_update_layout(M, n_batch=0, n_dense=0)
    assert (flat.n_batch, flat.n_dense) == (0, 0)
    np.testing.assert_array_equal(flat.todense(), A)
    np.testing.assert_array_equal(ft.jit(lambda m: m.todense())(M), A)


def test_padding_and_out_of_range_indices_are_dropped():
    M = BCOO((fnp.asarray([1.0, 2.0, 3.0]), fnp.asarray([[0, 1], [2, 2], [0, 2]])),
             shape=(2, 2))
    want = np.array([[0.0, 1.0], [0.0, 0.0]])
    np.testing.assert_array_equal(M.todense(), want)
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(M @ x, want @ x)
    np.testing.assert_array_equal(x @ M, x @ want)
    np.testing.assert_array_equal(M.sum(1).todense(), want.sum(1))
    np.testing.assert_array_equal(M.sum_duplicates().todense(), want)
    assert M.sum_duplicates().nse == 1


@pytest.mark.parametrize("dims,rshape", [
    ((([1], [0]), ([], [])), (5, 3)),          # matmul
    ((([0], [0]), ([], [])), (4, 3)),          # A^T x
    ((([0, 1], [1, 0]), ([], [])), (5, 4)),    # full contraction
    ((([1], [2]), ([], [])), (2, 3, 5)),       # contraction with rhs's last axis
])
def test_dot_general_matches_dense(rng, dims, rshape):
    A = _sparse_array(rng, (4, 5))
    r = rng.standard_normal(rshape)
    got = sparse.bcoo_dot_general(BCOO.fromdense(A), r, dimension_numbers=dims)
    want = ft.lax.dot_general(fnp.asarray(A), fnp.asarray(r), dims)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    (lc, rc), _ = dims           # dense @ sparse: the same contraction, operands swapped
    got = sparse.bcoo_dot_general(r, BCOO.fromdense(A), dimension_numbers=((rc, lc), ([], [])))
    want = ft.lax.dot_general(fnp.asarray(r), fnp.asarray(A), ((rc, lc), ([], [])))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_batched_and_dense_dim_products_match_dense(rng):
    B = _sparse_array(rng, (3, 4, 5))
    Mb = BCOO.fromdense(B, n_batch=1)
    xb = rng.standard_normal((5, 3, 2))      # dot-batch axis of rhs in the middle
    got = sparse.bcoo_dot_general(Mb, xb, dimension_numbers=(([2], [0]), ([0], [1])))
    np.testing.assert_allclose(got, np.einsum("bij,jbk->bik", B, xb), atol=1e-12)
    y = rng.standard_normal((2, 4))
    np.testing.assert_allclose(y @ Mb, y @ B, atol=1e-12)            # numpy's broadcasting
    np.testing.assert_allclose(Mb @ xb.transpose(1, 0, 2), B @ xb.transpose(1, 0, 2),
                               atol=1e-12)
    C = _sparse_array(rng, (2, 3, 4, 5))       # a free batch axis, a sparse dot-batch axis
    r = rng.standard_normal((3, 6, 5))
    dims = (([3], [2]), ([1], [0]))
    got = sparse.bcoo_dot_general(BCOO.fromdense(C, n_batch=1), r, dimension_numbers=dims)
    np.testing.assert_allclose(got, ft.lax.dot_general(fnp.asarray(C), fnp.asarray(r), dims),
                               atol=1e-12)
    D = _sparse_array(rng, (4, 5, 2), (4, 5, 1))
    Md = BCOO.fromdense(D, n_dense=1)
    w = rng.standard_normal((5, 2))
    got = sparse.bcoo_dot_general(Md, w, dimension_numbers=(([1, 2], [0, 1]), ([], [])))
    np.testing.assert_allclose(got, np.einsum("ijd,jd->i", D, w), atol=1e-12)


def test_reductions_transpose_reshape_elementwise_match_dense(rng):
    B = _sparse_array(rng, (3, 4, 5, 2), (3, 4, 5, 1))
    M = BCOO.fromdense(B, n_batch=1, n_dense=1)
    for axes in [(0,), (1,), (2,), (3,), (1, 3), (0, 2), (0, 1, 2, 3)]:
        np.testing.assert_allclose(M.sum(axes).todense(), B.sum(axes), atol=1e-12)
    np.testing.assert_array_equal(M.transpose((0, 2, 1, 3)).todense(), B.transpose(0, 2, 1, 3))
    with pytest.raises(NotImplementedError, match="mixes batch, sparse and dense"):
        M.T
    A = _sparse_array(rng, (4, 6))
    np.testing.assert_array_equal(BCOO.fromdense(A).reshape(3, -1).todense(), A.reshape(3, 8))
    x = rng.standard_normal(B.shape)
    np.testing.assert_allclose((M * x).todense(), B * x, atol=1e-12)
    np.testing.assert_allclose((-M * 2.0).astype(np.float32).todense(), -2 * B, rtol=1e-6)
    np.testing.assert_allclose((M + M).todense(), 2 * B)
    np.testing.assert_allclose(M + x, B + x)
    S = M.sort_indices()
    np.testing.assert_array_equal(S.todense(), B)
    assert S.indices_sorted


def test_sum_duplicates_under_jit_and_vmap(rng):
    idx = rng.integers(0, 3, (3, 8, 2))
    data = rng.standard_normal((3, 8))
    M = BCOO((data, idx), shape=(3, 3, 3))
    want = np.stack([BCOO((data[b], idx[b]), shape=(3, 3)).todense() for b in range(3)])
    np.testing.assert_allclose(M.todense(), want)
    got = ft.jit(lambda m: m.sum_duplicates(nse=9))(M)
    assert got.unique_indices and got.nse == 9
    np.testing.assert_allclose(got.todense(), want, atol=1e-12)
    lanes = ft.vmap(lambda m: m.sum_duplicates(nse=9).todense())(M)
    np.testing.assert_allclose(lanes, want, atol=1e-12)


def test_grads_vs_finite_differences_and_dense(rng):
    A = _sparse_array(rng, (4, 5))
    M = BCOO.fromdense(A)
    x = rng.standard_normal((5, 3))

    def loss(data, v):
        return fnp.sum(fnp.tanh(BCOO((data, M.indices), shape=M.shape) @ v) ** 2)
    check_grads(loss, (M.data, x), order=2, modes=("fwd", "rev"))
    dense_loss = lambda a, v: fnp.sum(fnp.tanh(a @ v) ** 2)        # noqa: E731
    np.testing.assert_allclose(ft.grad(loss, 1)(M.data, x), ft.grad(dense_loss, 1)(A, x),
                               atol=1e-12)
    ga = ft.grad(dense_loss)(A, x)
    np.testing.assert_allclose(ft.grad(loss)(M.data, x), sparse.bcoo_extract(M.indices, ga),
                               atol=1e-12)
    # through fromdense: the gradient at the kept entries only
    g = ft.grad(lambda a: fnp.sum((BCOO.fromdense(a, nse=M.nse) @ x) ** 2))(A)
    np.testing.assert_allclose(g, ft.grad(lambda a: fnp.sum((a @ x) ** 2))(A) * (A != 0),
                               atol=1e-12)


def test_vmap_over_batched_bcoo_matches_a_loop(rng):
    B = _sparse_array(rng, (3, 4, 5))
    Mb = BCOO.fromdense(B, n_batch=1)
    x = rng.standard_normal((5, 2))
    got = ft.vmap(lambda m, v: m @ v, in_axes=(0, None))(Mb, x)
    np.testing.assert_allclose(got, np.stack([b @ x for b in B]), atol=1e-12)
    out = ft.vmap(lambda a: BCOO.fromdense(a, nse=20))(B)       # a BCOO comes out batched
    assert isinstance(out, BCOO) and out.n_batch == 1 and out.shape == B.shape
    np.testing.assert_array_equal(out.todense(), B)


def test_jit_with_bcoo_arguments_and_results(rng):
    A = _sparse_array(rng, (4, 5))
    M = BCOO.fromdense(A)
    x = rng.standard_normal(5)
    f = ft.jit(lambda m, v: (m @ v, 3.0 * m))
    y, m3 = f(M, x)
    np.testing.assert_allclose(y, A @ x, atol=1e-12)
    assert isinstance(m3, BCOO) and m3.shape == A.shape
    np.testing.assert_allclose(m3.todense(), 3 * A)
    with pytest.raises(ConcretizationTypeError, match="nse must be given"):
        ft.jit(lambda a: BCOO.fromdense(a))(A)


def test_sparsify_rules_and_errors(rng):
    A = _sparse_array(rng, (4, 5))
    M = BCOO.fromdense(A)
    x = rng.standard_normal((5, 3))

    def f(m, v):
        return fnp.sum((2.0 * m + m).T, axis=1), (m * m) @ v, fnp.sqrt(fnp.abs(m))
    s, mm, root = sparse.sparsify(f)(M, x)
    assert isinstance(s, BCOO) and isinstance(root, BCOO)
    np.testing.assert_allclose(s.todense(), (3 * A).sum(0), atol=1e-12)
    np.testing.assert_allclose(mm, (A * A) @ x, atol=1e-12)
    np.testing.assert_allclose(root.todense(), np.sqrt(np.abs(A)))
    jitted = ft.jit(sparse.sparsify(lambda m, v: fnp.sum(m @ v)))
    np.testing.assert_allclose(jitted(M, x), (A @ x).sum())
    g = ft.grad(lambda v: sparse.sparsify(lambda m, w: fnp.sum((m @ w) ** 2))(M, v))(x)
    np.testing.assert_allclose(g, 2 * A.T @ (A @ x), atol=1e-12)
    with pytest.raises(NotImplementedError, match="^sparse rule for cumsum is not impl"):
        sparse.sparsify(fnp.cumsum)(M)
    with pytest.raises(NotImplementedError, match="would result in dense output"):
        sparse.sparsify(fnp.exp)(M)
    with pytest.raises(NotImplementedError, match="Subtraction between sparse and dense"):
        sparse.sparsify(lambda m, y: m - y)(M, fnp.ones(A.shape))


def test_constructors():
    np.testing.assert_array_equal(sparse.eye(3, 4, k=-1).todense(), np.eye(3, 4, k=-1))
    np.testing.assert_array_equal(sparse.eye(3, n_batch=1).todense(), np.eye(3))
    e = sparse.empty((2, 3), nse=2)
    np.testing.assert_array_equal(e.indices, [[2, 3], [2, 3]])
    np.testing.assert_array_equal(e.todense(), np.zeros((2, 3)))
    R = sparse.random_bcoo(random.PRNGKey(0), (3, 4, 5), n_batch=1, nse=0.5,
                           sorted_indices=True)
    assert R.shape == (3, 4, 5) and R.nse == 10 and R.indices_sorted
    for b in range(3):
        assert len({tuple(r) for r in np.asarray(R.indices[b]).tolist()}) == 10   # unique


def test_bcsr(rng):
    A = _sparse_array(rng, (4, 5))
    C = BCSR.fromdense(A, nse=12)
    np.testing.assert_array_equal(C.todense(), A)
    assert C.indptr.tolist()[-1] == int((A != 0).sum())
    x = rng.standard_normal((5, 2))
    np.testing.assert_allclose(C @ x, A @ x, atol=1e-12)
    np.testing.assert_allclose(ft.jit(lambda c, v: c @ v)(C, x), A @ x, atol=1e-12)
    B = _sparse_array(rng, (2, 4, 5))
    Cb = BCSR.fromdense(B, n_batch=1)
    np.testing.assert_array_equal(Cb.todense(), B)


def test_gcn_training_step(rng):
    """One GCN layer, relu(Â X W), on a 30-node random graph: the sparse step's loss and
    gradient equal the dense ones, and a jitted SGD step lowers the loss."""
    n, f_in, f_out = 30, 6, 3
    adj = (rng.random((n, n)) < 0.1).astype(float)
    adj = np.maximum(adj, adj.T) + np.eye(n)
    deg = adj.sum(1)
    a_hat = adj / np.sqrt(deg[:, None] * deg[None, :])
    A = BCOO.fromdense(a_hat)
    X, Y = rng.standard_normal((n, f_in)), rng.standard_normal((n, f_out))
    W = 0.1 * rng.standard_normal((f_in, f_out))

    def loss(w, a, x, y):
        return fnp.mean((ft.nn.relu(a @ (x @ w)) - y) ** 2)
    step = ft.jit(lambda w, a, x, y: w - 0.5 * ft.grad(loss)(w, a, x, y))
    np.testing.assert_allclose(loss(W, A, X, Y), loss(W, a_hat, X, Y), rtol=1e-12)
    np.testing.assert_allclose(ft.grad(loss)(W, A, X, Y), ft.grad(loss)(W, a_hat, X, Y),
                               atol=1e-12)
    W1 = step(W, A, X, Y)
    assert float(loss(W1, A, X, Y)) < float(loss(W, A, X, Y))


def test_dot_general_random_dimension_numbers_match_dense_or_refuse(rng):
    """Random contracting / batch axes for every layout of a 4-d BCOO, the BCOO on either
    side: the result equals the dense dot_general, or NotImplementedError (never a wrong
    number)."""
    shape = (2, 3, 4, 2)
    A = _sparse_array(rng, shape)
    computed = 0
    for _ in range(40):
        nb = int(rng.integers(0, 3))
        M = BCOO.fromdense(A, n_batch=nb, n_dense=int(rng.integers(0, 3 - nb)))
        axes = [int(a) for a in rng.permutation(4)]
        ncon, nbat = int(rng.integers(1, 3)), int(rng.integers(0, 2))
        lc, lb = axes[:ncon], axes[ncon:ncon + nbat]
        rshape = [shape[d] for d in lb + lc] + [3]
        perm = rng.permutation(len(rshape))
        r = rng.standard_normal(rshape).transpose(perm)
        inv = [int(i) for i in np.argsort(perm)]
        rb, rc = inv[:nbat], inv[nbat:nbat + ncon]
        for dims, lhs, rhs in [(((lc, rc), (lb, rb)), M, r), (((rc, lc), (rb, lb)), r, M)]:
            dense = [fnp.asarray(A) if x is M else fnp.asarray(x) for x in (lhs, rhs)]
            try:
                got = sparse.bcoo_dot_general(lhs, rhs, dimension_numbers=dims)
            except NotImplementedError:
                continue
            np.testing.assert_allclose(got, ft.lax.dot_general(*dense, dims), atol=1e-12)
            computed += 1
    assert computed >= 20


def test_sparse_sparse_products(rng):
    A, B = _sparse_array(rng, (4, 5)), _sparse_array(rng, (5, 3))
    M, N = BCOO.fromdense(A), BCOO.fromdense(B)
    P = M @ N
    assert isinstance(P, BCOO) and P.nse == M.nse * N.nse        # JAX's size bound
    np.testing.assert_allclose(P.todense(), A @ B, atol=1e-12)
    np.testing.assert_allclose(ft.jit(lambda m, n: (m @ n).todense())(M, N), A @ B,
                               atol=1e-12)
    f = lambda d: fnp.sum((BCOO((d, M.indices), shape=M.shape) @ N).todense() ** 2)  # noqa
    check_grads(f, (M.data,), order=1, modes=("rev",))
    with pytest.raises(NotImplementedError, match="batch or dense dimensions"):
        BCOO.fromdense(A, n_batch=1) @ N


def test_python_numbers_stay_weak_in_products():
    """Fuzz round 9: float32 BCOO * 2.0 (and 2.0 * M, M / 2.0) had float64 data (the number
    became a float64 array); JAX 0.10.2 keeps float32. Numpy scalars and arrays promote."""
    a = np.array([[1.0, 0.0], [0.0, 2.0]], np.float32)
    M = BCOO.fromdense(a, nse=2)
    for out, want in ((M * 2.0, [[2, 0], [0, 4]]), (2.0 * M, [[2, 0], [0, 4]]),
                      (M / 2.0, [[0.5, 0], [0, 1]]), (M * True, a)):
        assert out.dtype == np.float32 and out.data.dtype == np.float32
        np.testing.assert_array_equal(out.todense(), want)
    assert (M * np.float64(2)).dtype == np.float64 and (M * fnp.ones(2)).dtype == np.float64
    jitted = ft.jit(lambda d: (BCOO.fromdense(d, nse=2) * 2.0).todense())(a)
    assert jitted.dtype == np.float32
