"""Table rows for the linear-algebra primitives (cholesky, triangular_solve, solve,
slogdet, det) and ``functrans.numpy.linalg``. Matrices are well conditioned
(``R Rᵀ + n I`` for positive definite ones, ``R + n I`` otherwise), so the
finite-difference checks are valid; batched rows use a (2, 3, 3) stack."""
import numpy as np

import functrans.numpy as fnp
from functrans import lax
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
