"""Cases of ``jax.experimental.sparse`` behaviour, written once for both libraries:
``cases(np_mod, sparse_mod, grad)`` returns ``{name: array}``. JAX's answers are stored in
jax_sparse_reference.npz (make_jax_sparse_reference.py); tests/test_sparse.py runs the
same cases with functrans and compares."""
import numpy as np


def _mats():
    rng = np.random.default_rng(7)
    A = rng.standard_normal((4, 5)) * (rng.random((4, 5)) < 0.4)
    B = rng.standard_normal((3, 4, 5)) * (rng.random((3, 4, 5)) < 0.4)
    D = rng.standard_normal((4, 5, 2)) * (rng.random((4, 5, 1)) < 0.4)
    x = rng.standard_normal((5, 3))
    y = rng.standard_normal((2, 4))
    xb = rng.standard_normal((3, 5, 2))
    return A, B, D, x, y, xb


def _layout(out, name, m):
    out[name + "_data"], out[name + "_indices"] = np.asarray(m.data), np.asarray(m.indices)


def cases(jnp, sparse, grad):
    A, B, D, x, y, xb = _mats()
    out = {}
    M = sparse.BCOO.fromdense(jnp.asarray(A))
    _layout(out, "fromdense", M)
    _layout(out, "fromdense_nse10", sparse.BCOO.fromdense(jnp.asarray(A), nse=10))
    _layout(out, "fromdense_batch", sparse.BCOO.fromdense(jnp.asarray(B), n_batch=1))
    _layout(out, "fromdense_dense", sparse.BCOO.fromdense(jnp.asarray(D), n_dense=1))
    d = jnp.asarray([1.0, 2.0, 3.0, 4.0, 5.0])
    i = jnp.asarray(np.array([[0, 1], [2, 2], [0, 1], [3, 3], [1, 1]], np.int32))
    S = sparse.BCOO((d, i), shape=(3, 3))
    out["dups_todense"] = np.asarray(S.todense())
    _layout(out, "sum_duplicates", S.sum_duplicates())
    _layout(out, "sum_duplicates_nse4", S.sum_duplicates(nse=4))
    _layout(out, "sort_indices", S.sort_indices())
    _layout(out, "transpose", M.T)
    out["matmul"] = np.asarray(M @ jnp.asarray(x))
    out["matvec"] = np.asarray(M @ jnp.asarray(x[:, 0]))
    out["rmatmul"] = np.asarray(jnp.asarray(y) @ M)
    Mb = sparse.BCOO.fromdense(jnp.asarray(B), n_batch=1)
    out["batched_dot"] = np.asarray(sparse.bcoo_dot_general(
        Mb, jnp.asarray(xb), dimension_numbers=(([2], [1]), ([0], [0]))))
    out["batched_matmul"] = np.asarray(Mb @ jnp.asarray(x))
    Md = sparse.BCOO.fromdense(jnp.asarray(D), n_dense=1)
    out["dense_dim_dot"] = np.asarray(sparse.bcoo_dot_general(
        Md, jnp.asarray(D[:, :, 0].T), dimension_numbers=(([0], [1]), ([], []))))
    for axes in [(0,), (1,), (0, 1)]:
        out[f"reduce_sum_{axes}"] = np.asarray(
            sparse.bcoo_reduce_sum(Mb, axes=axes).todense())
    _layout(out, "eye_k1", sparse.eye(3, 4, k=1))
    _layout(out, "eye_km1", sparse.eye(4, k=-1))
    _layout(out, "empty", sparse.empty((3, 4), nse=2))
    sp = sparse.sparsify
    _layout(out, "sparsify_add", sp(lambda m: m + m)(S))
    _layout(out, "sparsify_add_scaled", sp(lambda m: 2.0 * m + m)(S))
    out["sparsify_add_dense"] = np.asarray(sp(lambda m, z: m + z)(S, jnp.ones((3, 3))))
    out["sparsify_mul_sum"] = np.asarray(sp(lambda m, z: (m * z).sum(0))(
        S, jnp.asarray(np.arange(9.0).reshape(3, 3))).todense())
    out["sparsify_sin_T"] = np.asarray(sp(lambda m: jnp.sin(m).T)(S).todense())
    out["sparsify_matmul"] = np.asarray(sp(lambda m, v: (m @ v) * 2.0)(M, jnp.asarray(x)))

    def loss(data, v):
        return ((sparse.BCOO((data, M.indices), shape=M.shape) @ v) ** 2).sum()
    out["grad_data"] = np.asarray(grad(loss)(M.data, jnp.asarray(x)))
    out["grad_dense"] = np.asarray(grad(loss, 1)(M.data, jnp.asarray(x)))
    N = sparse.BCOO.fromdense(jnp.asarray(A.T[:, :3]))
    out["spspmatmul_dense"] = np.asarray((M @ N).todense())
    out["spspdot_first_axes"] = np.asarray(sparse.bcoo_dot_general(    # layouts differ
        M, M, dimension_numbers=(([0], [0]), ([], []))).todense())
    out["sparsify_spsp"] = np.asarray(sp(lambda m, n: (m @ n).sum(1))(M, N).todense())
    C = sparse.BCSR.fromdense(jnp.asarray(A), nse=9)
    out["bcsr_data"], out["bcsr_indices"] = np.asarray(C.data), np.asarray(C.indices)
    out["bcsr_indptr"] = np.asarray(C.indptr)
    out["bcsr_matmul"] = np.asarray(C @ jnp.asarray(x))
    return out
