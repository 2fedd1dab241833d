"""Table rows for dot_general (through lax) and the fnp products: 1-D/2-D/batched
matmul with broadcasting, dot/vdot/inner/outer/tensordot, einsum strings (traces,
transposes, ellipsis, batched contractions, several operands), trace/diag/diagonal."""
import numpy as np

import functrans.numpy as fnp
from functrans import lax
from tests.cases import OpCase, gen, ints, randn


def _dg(dn):
    return lambda a, b: lax.dot_general(a, b, dn)


def _np_dg(dn):
    (lc, rc), (lb, rb) = dn

    def ref(a, b):
        letters = iter("abcdefghijklmnop")
        la = [next(letters) for _ in range(a.ndim)]
        lb_ = [next(letters) for _ in range(b.ndim)]
        for i, j in zip(lc + lb, rc + rb):
            lb_[j] = la[i]
        free_a = [la[i] for i in range(a.ndim) if i not in lc + lb]
        free_b = [lb_[j] for j in range(b.ndim) if j not in rc + rb]
        out = [la[i] for i in lb] + free_a + free_b
        return np.einsum(f"{''.join(la)},{''.join(lb_)}->{''.join(out)}", a, b)
    return ref


def _dg_case(name, dn, sa, sb, **kw):
    return OpCase(name, _dg(dn), gen(randn(*sa), randn(*sb)), _np_dg(dn), **kw)


def _es(name, spec, *shapes, **kw):
    return OpCase(name, lambda *xs: fnp.einsum(spec, *xs), gen(*[randn(*s) for s in shapes]),
                  lambda *xs: np.einsum(spec, *xs), **kw)


_BF16 = fnp.bfloat16.dtype


def _f16_products(a, b, dt=np.dtype(np.float16)):
    """The float16 (bfloat16) row's reference: float32 products rounded once to ``dt``
    (the trace sums the rounded product, as fnp.trace(a @ b) does)."""
    p = (a @ b).astype(dt)
    return (p, np.asarray(a[0] @ b[:, 1]).astype(dt), p.T,
            np.asarray(np.trace(p.astype(np.float32))).astype(dt))


CASES = [
    # ------------------------------------------------------------- dot_general
    _dg_case("dot_general_matmul", (((1,), (0,)), ((), ())), (2, 3), (3, 4)),
    _dg_case("dot_general_batch", (((2,), (1,)), ((0,), (0,))), (2, 3, 4), (2, 4, 5)),
    _dg_case("dot_general_mixed", (((0, 3), (3, 1)), ((2,), (0,))), (3, 2, 4, 5), (4, 5, 2, 3)),
    _dg_case("dot_general_outer", (((), ()), ((), ())), (2, 3), (4,)),
    _dg_case("dot_general_empty_contract", (((1,), (0,)), ((), ())), (2, 0), (0, 3)),
    OpCase("dot_general_int32", _dg((((1,), (0,)), ((), ()))),
           gen(ints(2, 3, dtype=np.int32), ints(3, 2, dtype=np.int32)),
           lambda a, b: a @ b, diff=False),
    OpCase("dot_general_f32", _dg((((0,), (0,)), ((), ()))),
           gen(randn(3, 2, dtype=np.float32), randn(3, 4, dtype=np.float32)),
           lambda a, b: a.T @ b, rtol=1e-5, diff=False),
    OpCase("dot_general_preferred_f64",
           lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())),
                                        preferred_element_type=np.float64),
           gen(randn(2, 3, dtype=np.float32), randn(3, 2, dtype=np.float32)),
           lambda a, b: a.astype(np.float64) @ b.astype(np.float64), diff=False),
    OpCase("lax_dot", lax.dot, gen(randn(3, 4), randn(4)), np.dot),
    # ------------------------------------------------------------- matmul / dot
    OpCase("matmul_2d", fnp.matmul, gen(randn(2, 3), randn(3, 4)), np.matmul),
    OpCase("matmul_vec_vec", fnp.matmul, gen(randn(3), randn(3)), np.matmul),
    OpCase("matmul_mat_vec", fnp.matmul, gen(randn(2, 3), randn(3)), np.matmul),
    OpCase("matmul_vec_batched", fnp.matmul, gen(randn(3), randn(2, 3, 4)), np.matmul),
    OpCase("matmul_batched", fnp.matmul, gen(randn(2, 3, 4), randn(2, 4, 5)), np.matmul),
    OpCase("matmul_broadcast", fnp.matmul, gen(randn(2, 1, 3, 4), randn(5, 4, 2)), np.matmul),
    OpCase("matmul_2d_batched", fnp.matmul, gen(randn(3, 4), randn(2, 4, 5)), np.matmul),
    OpCase("matmul_batched_2d", fnp.matmul, gen(randn(2, 3, 4), randn(4, 5)), np.matmul),
    OpCase("matmul_int_float", fnp.matmul, gen(ints(2, 3, dtype=np.int32), randn(3, 2)),
           np.matmul, diff_argnums=(1,)),
    OpCase("matmul_operator", lambda a, b: fnp.asarray(a) @ b, gen(randn(2, 3), randn(3, 2)),
           np.matmul),
    OpCase("dot_nd", fnp.dot, gen(randn(2, 3), randn(4, 3, 2)), np.dot),
    OpCase("dot_scalar", fnp.dot, gen(randn(), randn(2, 3)), np.dot),
    OpCase("dot_vec", fnp.dot, gen(randn(4), randn(4)), np.dot),
    OpCase("vdot", fnp.vdot, gen(randn(2, 3), randn(3, 2)), np.vdot),
    OpCase("inner", fnp.inner, gen(randn(2, 3), randn(4, 3)), np.inner),
    OpCase("outer", fnp.outer, gen(randn(2, 2), randn(3)), np.outer),
    OpCase("tensordot_int", fnp.tensordot, gen(randn(2, 3, 4), randn(3, 4, 2)), np.tensordot),
    OpCase("tensordot_pairs", lambda a, b: fnp.tensordot(a, b, ([0, 2], [2, 0])),
           gen(randn(2, 3, 4), randn(4, 5, 2)), lambda a, b: np.tensordot(a, b, ([0, 2], [2, 0]))),
    # ------------------------------------------------------------- einsum
    _es("einsum_trace", "ii->", (3, 3)),
    _es("einsum_transpose", "ij->ji", (2, 3)),
    _es("einsum_ellipsis_matmul", "...ij,...jk->...ik", (2, 3, 4), (2, 4, 2)),
    _es("einsum_ellipsis_broadcast", "...ij,...jk->...ik", (2, 1, 3, 4), (5, 4, 2)),
    _es("einsum_inner", "i,i", (4,), (4,)),
    _es("einsum_bmm", "bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
    _es("einsum_implicit", "ij,jk", (2, 3), (3, 4)),
    _es("einsum_implicit_sorted", "ba", (2, 3)),
    _es("einsum_diag", "ii->i", (3, 3)),
    _es("einsum_partial_diag", "iij->ji", (3, 3, 2)),
    _es("einsum_three", "ij,jk,kl->il", (2, 3), (3, 4), (4, 2)),
    _es("einsum_sum_out", "ijk->j", (2, 3, 4)),
    _es("einsum_outer", "i,j->ij", (2,), (3,)),
    _es("einsum_trace_product", "ij,ji->", (3, 4), (4, 3)),
    _es("einsum_shared_batch", "bi,bi->b", (3, 4), (3, 4)),
    _es("einsum_broadcast_one", "i,i->i", (1,), (3,)),
    # ------------------------------------------------------------- trace / diagonal / diag
    OpCase("trace", fnp.trace, gen(randn(3, 3)), np.trace),
    OpCase("trace_offset_axes", lambda x: fnp.trace(x, 1, 2, 0), gen(randn(3, 2, 4)),
           lambda x: np.trace(x, 1, 2, 0)),
    OpCase("trace_int32", fnp.trace, gen(ints(3, 3, dtype=np.int32)), np.trace, diff=False),
    OpCase("diagonal", fnp.diagonal, gen(randn(3, 4)), np.diagonal),
    OpCase("diagonal_offset", lambda x: fnp.diagonal(x, 1), gen(randn(3, 3)),
           lambda x: np.diagonal(x, 1)),
    OpCase("diagonal_neg_offset_axes", lambda x: fnp.diagonal(x, -1, 2, 0), gen(randn(4, 2, 3)),
           lambda x: np.diagonal(x, -1, 2, 0)),
    OpCase("diagonal_inf_off_diag", fnp.diagonal,
           [np.array([[1.0, np.inf], [-np.inf, 2.0]])], np.diagonal, diff=False),
    OpCase("diag_vector", fnp.diag, gen(randn(3)), np.diag),
    OpCase("diag_vector_offset", lambda v: fnp.diag(v, 2), gen(randn(3)), lambda v: np.diag(v, 2)),
    OpCase("diag_vector_neg_offset", lambda v: fnp.diag(v, -1), gen(randn(2)),
           lambda v: np.diag(v, -1)),
    OpCase("diag_matrix", lambda x: fnp.diag(x, -1), gen(randn(3, 4)), lambda x: np.diag(x, -1)),
    # float16: products accumulated in float32, rounded once (XLA's CPU dot)
    OpCase("matmul_dot_einsum_f16", lambda a, b: (fnp.matmul(a, b), fnp.dot(a[0], b[:, 1]),
                                                  fnp.einsum("ij,jk->ki", a, b),
                                                  fnp.trace(fnp.matmul(a, b))),
           gen(randn(3, 8, dtype=np.float16), randn(8, 3, dtype=np.float16)),
           lambda a, b: _f16_products(a.astype(np.float32), b.astype(np.float32)),
           diff=False, rtol=2.0 ** -10, atol=2.0 ** -14),
    OpCase("matmul_dot_einsum_bf16", lambda a, b: (fnp.matmul(a, b), fnp.dot(a[0], b[:, 1]),
                                                   fnp.einsum("ij,jk->ki", a, b),
                                                   fnp.trace(fnp.matmul(a, b))),
           gen(randn(3, 8, dtype=_BF16), randn(8, 3, dtype=_BF16)),
           lambda a, b: _f16_products(a.astype(np.float32), b.astype(np.float32), _BF16),
           diff=False, rtol=2.0 ** -7, atol=2.0 ** -14),
]
