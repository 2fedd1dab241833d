"""Table rows for the linear-algebra primitives (cholesky, triangular_solve, solve,
slogdet, det) and ``functrans.numpy.linalg``. Matrices are well conditioned
(``R Rᵀ + n I`` for positive definite ones, ``R + n I`` otherwise), so the
finite-difference checks are valid; batched rows use a (2, 3, 3) stack."""
import numpy as np

import functrans.numpy as fnp
from functrans import lax
from functrans.primitives.linalg_decomp import canonical_signs, qr_pivots
from functrans.scipy.linalg import funm as _funm, schur as _schur, sqrtm as _sqrtm
from tests.cases import OpCase, gen, randn

F32 = np.float32


def spd(*shape, dtype=np.float64):
    """Symmetric positive-definite matrices of shape (..., n, n)."""
    def make(rng):
        r = rng.standard_normal(shape)
        n = shape[-1]
        return (r @ np.swapaxes(r, -1, -2) + n * np.eye(n)).astype(dtype)
    return make


def wellcond(*shape, dtype=np.float64):
    """General square matrices ``R + n I`` (far from singular)."""
    def make(rng):
        n = shape[-1]
        return (rng.standard_normal(shape) + n * np.eye(n)).astype(dtype)
    return make


def signed(*shape):
    """Matrices with determinants of both signs (a row of each stack negated)."""
    def make(rng):
        a = wellcond(*shape)(rng)
        a[..., 0, :] *= -1.0
        return a
    return make


def _tri_ref(lower, left_side, transpose_a, unit_diagonal):
    def ref(a, b):
        t = np.tril(a) if lower else np.triu(a)
        if unit_diagonal:
            n = a.shape[-1]
            t = t - t * np.eye(n) + np.eye(n)
        if transpose_a:
            t = np.swapaxes(t, -1, -2)
        if left_side:
            return np.linalg.solve(t, b)
        return np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    return ref


CASES = []


def row(name, fun, args, ref, **kw):
    CASES.append(OpCase(name, fun, args, ref, **kw))


# --------------------------------------------------------------------------- cholesky

row("linalg_cholesky", fnp.linalg.cholesky, gen(spd(3, 3)), np.linalg.cholesky)
row("linalg_cholesky_batched", fnp.linalg.cholesky, gen(spd(2, 3, 3)), np.linalg.cholesky)
row("linalg_cholesky_1x1", fnp.linalg.cholesky, gen(spd(1, 1)), np.linalg.cholesky)
row("linalg_cholesky_upper", lambda a: fnp.linalg.cholesky(a, upper=True), gen(spd(3, 3)),
    lambda a: np.linalg.cholesky(a).T)
row("linalg_cholesky_f32", fnp.linalg.cholesky, gen(spd(2, 3, 3, dtype=F32)), np.linalg.cholesky,
    rtol=1e-5, atol=1e-6)
row("linalg_cholesky_int", fnp.linalg.cholesky, [np.array([[4, 2], [2, 5]])],
    lambda a: np.linalg.cholesky(a.astype(float)), diff=False)

# --------------------------------------------------------------------------- triangular_solve

for _left in (True, False):
    for _lower in (True, False):
        for _trans in (False, True):
            _name = (f"lax_triangular_solve_{'left' if _left else 'right'}_"
                     f"{'lower' if _lower else 'upper'}{'_T' if _trans else ''}")
            _bshape = (3, 2) if _left else (2, 3)
            row(_name,
                lambda a, b, _l=_left, _lo=_lower, _t=_trans: lax.triangular_solve(
                    a, b, left_side=_l, lower=_lo, transpose_a=_t),
                gen(wellcond(3, 3), randn(*_bshape)), _tri_ref(_lower, _left, _trans, False))
row("lax_triangular_solve_unit_diag",
    lambda a, b: lax.triangular_solve(a, b, left_side=True, lower=True, unit_diagonal=True),
    gen(wellcond(3, 3), randn(3, 2)), _tri_ref(True, True, False, True))
row("lax_triangular_solve_batched",
    lambda a, b: lax.triangular_solve(a, b, left_side=True, lower=False, transpose_a=True),
    gen(wellcond(2, 3, 3), randn(2, 3, 4)), _tri_ref(False, True, True, False))

# --------------------------------------------------------------------------- solve / inv

row("linalg_solve_matrix", fnp.linalg.solve, gen(wellcond(3, 3), randn(3, 2)), np.linalg.solve)
row("linalg_solve_vector", fnp.linalg.solve, gen(wellcond(3, 3), randn(3)), np.linalg.solve)
row("linalg_solve_batched", fnp.linalg.solve, gen(wellcond(2, 3, 3), randn(2, 3, 2)),
    np.linalg.solve)
row("linalg_solve_broadcast_batch", fnp.linalg.solve, gen(wellcond(3, 3), randn(2, 3, 1)),
    np.linalg.solve)
row("linalg_solve_f32", fnp.linalg.solve, gen(wellcond(3, 3, dtype=F32), randn(3, 2, dtype=F32)),
    np.linalg.solve, rtol=1e-5, atol=1e-6)
row("linalg_solve_empty_rhs", fnp.linalg.solve, gen(wellcond(3, 3), randn(3, 0)), np.linalg.solve)
row("lax_solve", lax.solve, gen(wellcond(2, 4, 4), randn(2, 4, 3)), np.linalg.solve)
row("linalg_inv", fnp.linalg.inv, gen(wellcond(3, 3)), np.linalg.inv)
row("linalg_inv_batched", fnp.linalg.inv, gen(wellcond(2, 3, 3)), np.linalg.inv)
row("linalg_inv_int", fnp.linalg.inv, [np.array([[2, 1], [1, 1]])], np.linalg.inv, diff=False)

# --------------------------------------------------------------------------- det / slogdet

row("linalg_det", fnp.linalg.det, gen(signed(3, 3)), np.linalg.det, rtol=1e-10)
row("linalg_det_batched", fnp.linalg.det, gen(signed(2, 3, 3)), np.linalg.det, rtol=1e-10)
row("linalg_det_f32", fnp.linalg.det, gen(wellcond(2, 2, dtype=F32)), np.linalg.det,
    rtol=1e-5, atol=1e-5)
row("linalg_det_empty", fnp.linalg.det, [np.zeros((0, 0))], np.linalg.det, diff=False)
row("linalg_slogdet", lambda a: tuple(fnp.linalg.slogdet(a)), gen(signed(3, 3)),
    lambda a: tuple(np.linalg.slogdet(a)))
row("linalg_slogdet_batched", lambda a: tuple(fnp.linalg.slogdet(a)), gen(signed(2, 3, 3)),
    lambda a: tuple(np.linalg.slogdet(a)))
row("linalg_slogdet_4x4", lambda a: fnp.linalg.slogdet(a)[1], gen(spd(4, 4)),
    lambda a: np.linalg.slogdet(a)[1])

# --------------------------------------------------------------------------- norm

for _ord in (None, 2, 1, np.inf, -np.inf, 3, 0.5):
    row(f"linalg_norm_vec_ord_{_ord}", lambda x, o=_ord: fnp.linalg.norm(x, ord=o),
        gen(randn(5)), lambda x, o=_ord: np.linalg.norm(x, ord=o), rtol=1e-10)
row("linalg_norm_vec_ord_0", lambda x: fnp.linalg.norm(x, ord=0), gen(randn(5)),
    lambda x: np.linalg.norm(x, ord=0))
row("linalg_norm_default_3d", fnp.linalg.norm, gen(randn(2, 3, 4)), np.linalg.norm, rtol=1e-10)
row("linalg_norm_axis_keepdims", lambda x: fnp.linalg.norm(x, axis=1, keepdims=True),
    gen(randn(3, 4)), lambda x: np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-10)
row("linalg_norm_axis_inf", lambda x: fnp.linalg.norm(x, ord=np.inf, axis=0),
    gen(randn(3, 4)), lambda x: np.linalg.norm(x, ord=np.inf, axis=0))
for _ord in (None, "fro", 1, -1, np.inf, -np.inf):
    row(f"linalg_norm_mat_ord_{_ord}", lambda x, o=_ord: fnp.linalg.norm(x, ord=o),
        gen(randn(3, 4)), lambda x, o=_ord: np.linalg.norm(x, ord=o), rtol=1e-10)
row("linalg_norm_mat_axes_keepdims",
    lambda x: fnp.linalg.norm(x, ord=1, axis=(2, 0), keepdims=True), gen(randn(3, 2, 4)),
    lambda x: np.linalg.norm(x, ord=1, axis=(2, 0), keepdims=True))
row("linalg_norm_f32", lambda x: fnp.linalg.norm(x, axis=-1), gen(randn(2, 5, dtype=F32)),
    lambda x: np.linalg.norm(x, axis=-1), rtol=1e-6)
row("linalg_norm_empty", fnp.linalg.norm, [np.zeros((0,))], np.linalg.norm, diff=False)

# --------------------------------------------------------------------------- decompositions
# eigen/singular values of random matrices are distinct (well-separated on average), so
# the perturbation formulas and the finite differences both apply.


def sym(*shape, dtype=np.float64):
    """Random symmetric matrices (distinct eigenvalues with probability one)."""
    def make(rng):
        r = rng.standard_normal(shape)
        return (r + np.swapaxes(r, -1, -2)).astype(dtype)
    return make


def _np_eigh(a, UPLO="L"):
    """numpy's eigh with the eigenvector signs fixed as functrans fixes them."""
    w, v = np.linalg.eigh(a, UPLO=UPLO)
    return w, canonical_signs(v)


def _eigh_ref(a):
    return _np_eigh((a + np.swapaxes(a, -1, -2)) / 2)


row("linalg_eigh", lambda a: tuple(fnp.linalg.eigh(a)), gen(sym(4, 4)), _eigh_ref)
row("linalg_eigh_batched", lambda a: tuple(fnp.linalg.eigh(a)), gen(sym(2, 3, 3)), _eigh_ref)
row("linalg_eigh_nonsym_input", lambda a: tuple(fnp.linalg.eigh(a)), gen(randn(3, 3)),
    _eigh_ref)
row("linalg_eigh_upper_unsymmetrized",
    lambda a: tuple(fnp.linalg.eigh(a, UPLO="U", symmetrize_input=False)), gen(randn(3, 3)),
    lambda a: _np_eigh(a, UPLO="U"))
row("linalg_eigh_lower_unsymmetrized",
    lambda a: tuple(fnp.linalg.eigh(a, symmetrize_input=False)), gen(randn(2, 3, 3)),
    _np_eigh)
row("linalg_eigh_f32", lambda a: tuple(fnp.linalg.eigh(a)), gen(sym(3, 3, dtype=F32)),
    _eigh_ref, rtol=1e-5, atol=1e-5, fd_tol=1e-4)
row("linalg_eigvalsh", fnp.linalg.eigvalsh, gen(sym(2, 4, 4)), np.linalg.eigvalsh)
row("lax_eigh", lambda a: lax.eigh(a, lower=False), gen(sym(3, 3)),
    lambda a: _np_eigh(a, UPLO="U")[::-1])

for _shape in ((4, 3), (3, 5), (3, 3), (2, 4, 3)):
    _tag = "x".join(map(str, _shape))
    row(f"linalg_svd_reduced_{_tag}",
        lambda a: tuple(fnp.linalg.svd(a, full_matrices=False)), gen(randn(*_shape)),
        lambda a: tuple(np.linalg.svd(a, full_matrices=False)))
    row(f"linalg_svdvals_{_tag}", fnp.linalg.svdvals, gen(randn(*_shape)),
        lambda a: np.linalg.svd(a, compute_uv=False))
    row(f"linalg_qr_reduced_{_tag}", lambda a: tuple(fnp.linalg.qr(a)), gen(randn(*_shape)),
        lambda a: tuple(np.linalg.qr(a)))
row("linalg_svd_full_square", lambda a: tuple(fnp.linalg.svd(a)), gen(randn(3, 3)),
    lambda a: tuple(np.linalg.svd(a)))
row("linalg_svd_full_tall", lambda a: tuple(fnp.linalg.svd(a)), gen(randn(4, 2)),
    lambda a: tuple(np.linalg.svd(a)), diff=False)
row("linalg_svd_no_uv", lambda a: fnp.linalg.svd(a, compute_uv=False), gen(randn(2, 3, 4)),
    lambda a: np.linalg.svd(a, compute_uv=False))
row("linalg_svd_hermitian", lambda a: fnp.linalg.svd(a, hermitian=True, compute_uv=False),
    gen(sym(3, 3)), lambda a: np.linalg.svd(a, hermitian=True, compute_uv=False))
row("linalg_svd_hermitian_uv",
    lambda a: fnp.linalg.matmul(*fnp.linalg.svd(a, hermitian=True)[::2]), gen(sym(3, 3)),
    lambda a: np.matmul(*np.linalg.svd(a, hermitian=True)[::2]))
row("linalg_svdvals_complex", lambda re, im: fnp.linalg.svdvals(lax.complex(re, im)),
    gen(randn(3, 2), randn(3, 2)), lambda re, im: np.linalg.svd(re + 1j * im, compute_uv=False))
row("lax_svd", lambda a: lax.svd(a, full_matrices=False), gen(randn(3, 2)),
    lambda a: tuple(np.linalg.svd(a, full_matrices=False)))
row("linalg_qr_complete_square", lambda a: tuple(fnp.linalg.qr(a, mode="complete")),
    gen(randn(3, 3)), lambda a: tuple(np.linalg.qr(a, mode="complete")))
row("linalg_qr_complete_wide", lambda a: tuple(fnp.linalg.qr(a, mode="complete")),
    gen(randn(2, 4)), lambda a: tuple(np.linalg.qr(a, mode="complete")))
row("linalg_qr_complete_tall", lambda a: tuple(fnp.linalg.qr(a, mode="complete")),
    gen(randn(4, 2)), lambda a: tuple(np.linalg.qr(a, mode="complete")), diff=False)
row("linalg_qr_r", lambda a: fnp.linalg.qr(a, mode="r"), gen(randn(4, 3)),
    lambda a: np.linalg.qr(a, mode="r"))
row("lax_qr", lambda a: lax.qr(a, full_matrices=False), gen(randn(2, 3, 2)),
    lambda a: tuple(np.linalg.qr(a)))


def _parts(z):
    return fnp.real(z), fnp.imag(z)


row("linalg_eigvals", lambda a: _parts(fnp.linalg.eigvals(a)), gen(randn(4, 4)),
    lambda a: (np.linalg.eigvals(a).real, np.linalg.eigvals(a).imag))
row("linalg_eigvals_batched", lambda a: _parts(fnp.linalg.eigvals(a)), gen(randn(2, 3, 3)),
    lambda a: (np.linalg.eigvals(a).real, np.linalg.eigvals(a).imag))
row("linalg_eigvals_complex_input",
    lambda re, im: _parts(fnp.linalg.eigvals(lax.complex(re, im))), gen(randn(3, 3), randn(3, 3)),
    lambda re, im: (np.linalg.eigvals(re + 1j * im).real, np.linalg.eigvals(re + 1j * im).imag))
row("linalg_eig", lambda a: tuple(fnp.linalg.eig(a)), gen(randn(3, 3)),
    lambda a: tuple(np.asarray(x, np.complex128) for x in np.linalg.eig(a)), diff=False)

# --------------------------------------------------------------------------- compositions

row("linalg_pinv_tall", fnp.linalg.pinv, gen(randn(4, 3)), np.linalg.pinv)
row("linalg_pinv_wide_batched", fnp.linalg.pinv, gen(randn(2, 2, 3)), np.linalg.pinv)
row("linalg_pinv_identity", fnp.linalg.pinv, [np.eye(3)], np.linalg.pinv)
row("linalg_lstsq", lambda a, b: fnp.linalg.lstsq(a, b), gen(randn(5, 3), randn(5, 2)),
    lambda a, b: tuple(np.asarray(v, np.int64) if np.ndim(v) == 0 else v
                       for v in np.linalg.lstsq(a, b, rcond=None)), batch=False)
row("linalg_lstsq_vector", lambda a, b: fnp.linalg.lstsq(a, b)[0], gen(randn(4, 2), randn(4)),
    lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0], batch=False)
row("linalg_matrix_rank", fnp.linalg.matrix_rank,
    [np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]])],
    lambda m: np.linalg.matrix_rank(m), diff=False)
row("linalg_matrix_rank_tol", lambda m: fnp.linalg.matrix_rank(m, tol=1.5),
    [np.diag([3.0, 1.0, 2.0])], lambda m: np.linalg.matrix_rank(m, tol=1.5), diff=False)
for _p in (None, 2, -2, 1, -1, "fro", "nuc", np.inf):
    row(f"linalg_cond_{_p}", lambda x, p=_p: fnp.linalg.cond(x, p), gen(wellcond(3, 3)),
        lambda x, p=_p: np.linalg.cond(x, p))
for _n in (0, 1, 3, -2):
    row(f"linalg_matrix_power_{_n}", lambda a, n=_n: fnp.linalg.matrix_power(a, n),
        gen(wellcond(2, 3, 3)), lambda a, n=_n: np.linalg.matrix_power(a, n))
row("linalg_multi_dot", lambda a, b, c: fnp.linalg.multi_dot([a, b, c]),
    gen(randn(3), randn(3, 4), randn(4)), lambda a, b, c: np.linalg.multi_dot([a, b, c]))
row("linalg_tensorinv", lambda a: fnp.linalg.tensorinv(a, ind=1),
    lambda rng: [wellcond(6, 6)(rng).reshape(6, 2, 3)],
    lambda a: np.linalg.tensorinv(a, ind=1))
row("linalg_tensorsolve", fnp.linalg.tensorsolve,
    lambda rng: [wellcond(6, 6)(rng).reshape(2, 3, 6), rng.standard_normal((2, 3))],
    np.linalg.tensorsolve)
row("linalg_cross", fnp.linalg.cross, gen(randn(2, 3), randn(3)), np.cross)
row("linalg_cross_axis0", lambda a, b: fnp.linalg.cross(a, b, axis=0),
    gen(randn(3, 2), randn(3, 2)), lambda a, b: np.cross(a, b, axis=0))
row("linalg_vecdot", fnp.linalg.vecdot, gen(randn(2, 4), randn(4)),
    lambda a, b: np.sum(a * b, -1))
row("linalg_outer", fnp.linalg.outer, gen(randn(3), randn(2)), np.outer)
row("linalg_trace", fnp.linalg.trace, gen(randn(2, 3, 3)),
    lambda a: np.trace(a, axis1=-2, axis2=-1))
row("linalg_diagonal", lambda a: fnp.linalg.diagonal(a, offset=1), gen(randn(2, 3, 4)),
    lambda a: np.diagonal(a, 1, -2, -1))
row("linalg_matmul", fnp.linalg.matmul, gen(randn(2, 3, 4), randn(4, 2)), np.matmul)
row("linalg_matrix_transpose", fnp.linalg.matrix_transpose, gen(randn(2, 3, 4)),
    lambda a: np.swapaxes(a, -1, -2))
row("linalg_tensordot", lambda a, b: fnp.linalg.tensordot(a, b, axes=1),
    gen(randn(2, 3), randn(3, 4)), lambda a, b: np.tensordot(a, b, 1))

# --------------------------------------------------------------------------- more norms

for _ord in (2, -2, "nuc"):
    row(f"linalg_norm_mat_ord_{_ord}", lambda x, o=_ord: fnp.linalg.norm(x, ord=o),
        gen(randn(3, 4)), lambda x, o=_ord: np.linalg.norm(x, ord=o))
    row(f"linalg_norm_mat_ord_{_ord}_axes_keepdims",
        lambda x, o=_ord: fnp.linalg.norm(x, ord=o, axis=(2, 0), keepdims=True),
        gen(randn(3, 2, 4)), lambda x, o=_ord: np.linalg.norm(x, ord=o, axis=(2, 0),
                                                              keepdims=True))
for _ord in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
    row(f"linalg_norm_complex_mat_{_ord}",
        lambda re, im, o=_ord: fnp.linalg.norm(lax.complex(re, im), ord=o),
        gen(randn(3, 2), randn(3, 2)), lambda re, im, o=_ord: np.linalg.norm(re + 1j * im, o))
for _ord in (None, 1, np.inf, 3):
    row(f"linalg_norm_complex_vec_{_ord}",
        lambda re, im, o=_ord: fnp.linalg.norm(lax.complex(re, im), ord=o, axis=-1),
        gen(randn(2, 3), randn(2, 3)),
        lambda re, im, o=_ord: np.linalg.norm(re + 1j * im, o, axis=-1))
row("linalg_vector_norm", lambda x: fnp.linalg.vector_norm(x, axis=(0, 2), ord=3),
    gen(randn(2, 3, 4)), lambda x: np.linalg.norm(np.moveaxis(x, 1, 0).reshape(3, -1), 3,
                                                  axis=1))
row("linalg_vector_norm_all", lambda x: fnp.linalg.vector_norm(x, keepdims=True),
    gen(randn(2, 3)), lambda x: np.linalg.norm(x.reshape(-1)).reshape(1, 1))
row("linalg_matrix_norm", lambda x: fnp.linalg.matrix_norm(x, ord=2), gen(randn(2, 3, 4)),
    lambda x: np.linalg.norm(x, 2, axis=(-2, -1)))
row("linalg_svd_complex",
    lambda re, im: tuple(fnp.abs(x) for x in fnp.linalg.svd(lax.complex(re, im),
                                                               full_matrices=False)),
    gen(randn(4, 3), randn(4, 3)),
    lambda re, im: tuple(np.abs(x) for x in np.linalg.svd(re + 1j * im, full_matrices=False)))
row("linalg_svd_complex_reconstruct",
    lambda re, im: _parts(fnp.linalg.matmul(*fnp.linalg.svd(lax.complex(re, im),
                                                             full_matrices=False)[::2])),
    gen(randn(2, 3), randn(2, 3)),
    lambda re, im: (lambda z: (z.real, z.imag))(np.matmul(*np.linalg.svd(
        re + 1j * im, full_matrices=False)[::2])))

# --------------------------------------------------------------------------- lu / sqrtm


def _scipy_lu(a):
    import scipy.linalg as sl
    flat = a.reshape((-1,) + a.shape[-2:])
    lus, pivs = zip(*(sl.lu_factor(m) for m in flat))
    piv = np.array(pivs, np.int32).reshape(a.shape[:-2] + (min(a.shape[-2:]),))
    # scipy's a = p l u: a[perm] = l u with perm[i] the row of p's column i holding 1
    perm = np.array([np.argmax(sl.lu(m)[0], axis=0) for m in flat], np.int32)
    return np.array(lus).reshape(a.shape), piv, perm.reshape(a.shape[:-1])


def _scipy_sqrtm(a):
    import scipy.linalg as sl
    flat = a.reshape((-1,) + a.shape[-2:])
    return np.array([sl.sqrtm(m.astype(complex)) for m in flat]).reshape(a.shape)


row("lax_lu", lax.lu, gen(randn(4, 4)), _scipy_lu)
row("lax_lu_batched", lax.lu, gen(randn(2, 3, 3)), _scipy_lu)
row("lax_lu_f32", lax.lu, gen(randn(3, 3, dtype=F32)), _scipy_lu, rtol=1e-5, atol=1e-6)
row("lax_lu_wide", lax.lu, gen(randn(3, 5)), _scipy_lu)         # rectangular, as JAX's
row("lax_lu_tall_batched", lax.lu, gen(randn(2, 5, 3)), _scipy_lu)
def _scipy_qr_pivots(a):
    import scipy.linalg as sl
    flat = a.reshape((-1,) + a.shape[-2:])
    return np.array([sl.qr(m, mode="r", pivoting=True)[1] for m in flat],
                    np.int32).reshape(a.shape[:-2] + a.shape[-1:])


row("qr_pivots", qr_pivots, gen(randn(4, 5)), _scipy_qr_pivots, diff=False)
row("qr_pivots_batched", qr_pivots, gen(randn(2, 5, 3)), _scipy_qr_pivots, diff=False)
# qr(mode='raw'): LAPACK's packed reflectors from the QR (differentiable; JAX's is not)
row("linalg_qr_raw_tall", lambda a: tuple(fnp.linalg.qr(a, mode="raw")), gen(randn(4, 3)),
    lambda a: tuple(np.linalg.qr(a, mode="raw")))
row("linalg_qr_raw_wide_batched", lambda a: tuple(fnp.linalg.qr(a, mode="raw")),
    gen(randn(2, 3, 5)), lambda a: tuple(np.linalg.qr(a, mode="raw")))
row("lax_lu_pivots_to_permutation", lambda p: lax.lu_pivots_to_permutation(p, 4),
    [np.array([[2, 3, 2, 3], [0, 1, 3, 3]], np.int32)],
    lambda p: np.array([[2, 3, 0, 1], [0, 1, 3, 2]], np.int32), diff=False)
row("scipy_linalg_sqrtm", lambda a: _sqrtm(a), gen(spd(3, 3)), _scipy_sqrtm, diff=False,
    rtol=1e-10, atol=1e-12)
# derivatives (a Sylvester equation; JAX's sqrtm has none) on the parts, away from the
# branch cut: a real matrix's negative eigenvalue sits on it (its root's sign flips
# with the rounding of a zero imaginary part), so differences there mean nothing
row("scipy_linalg_sqrtm_parts", lambda a: _parts(_sqrtm(a)), gen(spd(2, 3, 3)),
    lambda a: (lambda z: (z.real, z.imag))(_scipy_sqrtm(a)), rtol=1e-10, atol=1e-12)
row("scipy_linalg_sqrtm_complex_parts", lambda re, im: _parts(_sqrtm(lax.complex(re, im))),
    gen(spd(3, 3), randn(3, 3, scale=0.3)),
    lambda re, im: (lambda z: (z.real, z.imag))(_scipy_sqrtm(re + 1j * im)),
    rtol=1e-10, atol=1e-12)
row("scipy_linalg_sqrtm_negative_eigenvalues", lambda a: _sqrtm(a), gen(randn(2, 3, 3)),
    _scipy_sqrtm, diff=False, rtol=1e-10, atol=1e-12)

# --------------------------------------------------------------------------- schur / funm
# the Schur primitive is scipy's LAPACK ?gees on the host, so T and Z equal scipy's to
# rounding (unique up to Z's column phases only through LAPACK's choices: the same here)


def _scipy_schur(a, output="real"):
    import scipy.linalg as sl
    flat = a.reshape((-1,) + a.shape[-2:])
    ts, zs = zip(*(sl.schur(m, output=output) for m in flat))
    return np.array(ts).reshape(a.shape), np.array(zs).reshape(a.shape)


def _complex_parts(fn):
    return lambda re, im: tuple(p for x in fn(re + 1j * im) for p in (x.real, x.imag))


row("scipy_linalg_schur", lambda a: _schur(a), gen(randn(4, 4)), _scipy_schur, diff=False,
    rtol=1e-12, atol=1e-13)
row("scipy_linalg_schur_batched", lambda a: _schur(a), gen(randn(2, 3, 3)), _scipy_schur,
    diff=False, rtol=1e-12, atol=1e-13)
row("scipy_linalg_schur_f32", lambda a: _schur(a), gen(randn(3, 3, dtype=F32)), _scipy_schur,
    diff=False, rtol=1e-5, atol=1e-6)
row("scipy_linalg_schur_output_complex", lambda a: _schur(a, output="complex"),
    gen(randn(2, 3, 3)), lambda a: _scipy_schur(a, "complex"), diff=False, rtol=1e-12,
    atol=1e-13)
row("scipy_linalg_schur_complex_input",
    _complex_parts(lambda z: _schur(z)), gen(randn(2, 3, 3), randn(2, 3, 3)),
    _complex_parts(lambda z: _scipy_schur(z, "complex")), diff=False, rtol=1e-12, atol=1e-13)
row("scipy_linalg_funm_exp", lambda a: _funm(a, fnp.exp), gen(randn(4, 4)),
    lambda a: __import__("scipy.linalg").linalg.funm(a, np.exp).astype(complex),
    diff=False, rtol=1e-10, atol=1e-12)
