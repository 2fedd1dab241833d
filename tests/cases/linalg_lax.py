"""Table rows for ``functrans.lax.linalg``'s JAX-only names: ``eig`` (left and right
vectors, JAX's opt-in vector derivatives), ``schur``, the packed Householder
reductions (``hessenberg``, ``tridiagonal``) against scipy's LAPACK wrappers (``?gehrd``,
``?sytrd``/``?hetrd``), ``householder_product``/``ormqr`` against ``?orgqr``/``?ormqr``,
``tridiagonal_solve`` against a dense solve, ``qdwh`` against ``scipy.linalg.polar`` and
``symmetric_product``. Complex inputs are built from two real ones and complex results
returned as (real, imaginary) parts, so the derivative checks cover every direction."""
import numpy as np
import scipy.linalg as sl
from scipy.linalg import lapack

import functrans.numpy as fnp
from functrans import lax
from functrans.lax import linalg as L
from tests.cases import OpCase, gen, randn

CASES = []
F32 = np.float32


def row(name, fun, args, ref, **kw):
    CASES.append(OpCase(name, fun, args, ref, **kw))


def _parts(*zs):
    return tuple(p for z in zs for p in (fnp.real(z), fnp.imag(z)))


def _np_parts(*zs):
    return tuple(p for z in zs for p in (np.real(z), np.imag(z)))


def _each(fn, *arrays):
    """``fn`` per matrix of the stacks, results stacked back (tuples of arrays)."""
    lead = arrays[0].shape[:-2]
    flat = [a.reshape((-1,) + a.shape[len(lead):]) for a in arrays]
    outs = [fn(*ms) for ms in zip(*flat)]
    return tuple(np.stack(o).reshape(lead + np.shape(o[0])) for o in zip(*outs))


def _z(re, im):
    return lax.complex(re, im)


# --------------------------------------------------------------------------- eig
# random real matrices have distinct eigenvalues; the vectors are ?geev's (unit norm,
# largest component real), which is the gauge JAX's vector derivatives assume


def _np_eig(a, left=True, right=True):
    outs = _each(lambda m: tuple(sl.eig(m, left=left, right=right)) if left or right
                 else (sl.eigvals(m),), a)
    return outs[:1] + tuple(_signed(v, np) for v in outs[1:])


def _signed(v, xp=fnp):
    """Each vector times the sign of its (real) largest component: ?geev fixes a vector
    only up to that sign, and flips it between nearby matrices (a jump the finite
    differences would see); a piecewise constant factor, so the derivative is unchanged."""
    k = xp.argmax(xp.abs(v), axis=-2)[..., None, :]
    return v * xp.sign(xp.real(xp.take_along_axis(v, k, axis=-2)))


def _eig(a, **kw):
    w, *vs = L.eig(a, **kw)
    return (w, *(_signed(v) for v in vs))


row("lax_linalg_eig_values", lambda a: _parts(*L.eig(a, compute_left_eigenvectors=False,
                                                      compute_right_eigenvectors=False)),
    gen(randn(2, 4, 4)), lambda a: _np_parts(*_np_eig(a, False, False)))
row("lax_linalg_eig_vectors", lambda a: _parts(*_eig(a, enable_eigvec_derivs=True)),
    gen(randn(4, 4)), lambda a: _np_parts(*_np_eig(a)), rtol=1e-10, atol=1e-12,
    fd_tol=1e-4, fd2_tol=1e-3)
row("lax_linalg_eig_left_batched",
    lambda a: _parts(*_eig(a, compute_right_eigenvectors=False, enable_eigvec_derivs=True)),
    gen(randn(2, 3, 3)), lambda a: _np_parts(*_np_eig(a, True, False)), rtol=1e-10,
    atol=1e-12, fd_tol=1e-4, fd2_tol=1e-3)
row("lax_linalg_eig_complex",
    lambda re, im: _parts(*_eig(_z(re, im), enable_eigvec_derivs=True)),
    gen(randn(3, 3), randn(3, 3)), lambda re, im: _np_parts(*_np_eig(re + 1j * im)),
    rtol=1e-10, atol=1e-12, fd_tol=1e-4, fd2_tol=1e-3)
row("lax_linalg_eig_f32_values", lambda a: _parts(L.eig(a)[0]), gen(randn(3, 3, dtype=F32)),
    lambda a: _np_parts(np.linalg.eigvals(a.astype(np.float64)).astype(np.complex64)),
    rtol=1e-5, atol=1e-5, diff=False)
row("lax_linalg_schur", lambda a: tuple(L.schur(a)), gen(randn(2, 3, 3)),
    lambda a: _each(sl.schur, a), diff=False, rtol=1e-12, atol=1e-13)
row("lax_linalg_schur_no_vectors", lambda a: L.schur(a, compute_schur_vectors=False)[0],
    gen(randn(4, 4)), lambda a: sl.schur(a)[0], diff=False, rtol=1e-12, atol=1e-13)

# --------------------------------------------------------------------------- reflectors


def _gehrd(m):
    h, tau, _ = lapack.get_lapack_funcs("gehrd", (m,))(m)
    return h, tau[:m.shape[-1] - 1]


def _sytrd(lower):
    def run(m):
        name = "hetrd" if np.iscomplexobj(m) else "sytrd"
        out = lapack.get_lapack_funcs(name, (m,))(m, lower=int(lower))
        return out[:4]
    return run


def _sym(*shape):
    return lambda rng: (lambda x: x + np.swapaxes(x, -1, -2))(rng.standard_normal(shape))


row("lax_linalg_hessenberg", lambda a: L.hessenberg(a), gen(randn(2, 4, 4)),
    lambda a: _each(_gehrd, a), rtol=1e-10, atol=1e-12)
row("lax_linalg_hessenberg_f32", lambda a: L.hessenberg(a), gen(randn(4, 4, dtype=F32)),
    _gehrd, rtol=1e-4, atol=1e-5, diff=False)
row("lax_linalg_hessenberg_complex", lambda re, im: _parts(*L.hessenberg(_z(re, im))),
    gen(randn(3, 3), randn(3, 3)), lambda re, im: _np_parts(*_gehrd(re + 1j * im)),
    rtol=1e-10, atol=1e-12)
row("lax_linalg_tridiagonal_lower", lambda a: L.tridiagonal(a), gen(_sym(2, 4, 4)),
    lambda a: _each(_sytrd(True), a), rtol=1e-10, atol=1e-12)
row("lax_linalg_tridiagonal_upper", lambda a: L.tridiagonal(a, lower=False),
    gen(randn(4, 4)), _sytrd(False), rtol=1e-10, atol=1e-12)
row("lax_linalg_tridiagonal_complex",
    lambda re, im: (lambda o: (*_parts(o[0]), o[1], o[2], *_parts(o[3])))(
        L.tridiagonal(_z(re, im))),
    gen(randn(3, 3), randn(3, 3)),
    lambda re, im: (lambda o: (*_np_parts(o[0]), o[1], o[2], *_np_parts(o[3])))(
        _sytrd(True)(re + 1j * im)), rtol=1e-10, atol=1e-12)
row("lax_linalg_tridiagonal_f32", lambda a: L.tridiagonal(a, lower=False),
    gen(randn(4, 4, dtype=F32)), _sytrd(False), rtol=1e-4, atol=1e-5, diff=False)


def _orgqr(a, tau):
    return lapack.get_lapack_funcs("orgqr", (a,))(a, tau)[0]


def _ormqr(left, trans):
    def run(a, tau, c):
        f = lapack.get_lapack_funcs("unmqr" if np.iscomplexobj(a) else "ormqr", (a,))
        t = ("C" if np.iscomplexobj(a) else "T") if trans else "N"
        return f("L" if left else "R", t, a, tau, c, max(1, c.shape[1] * 64))[0]
    return run


def _taus(*shape):
    return lambda rng: rng.uniform(0.5, 1.5, shape)


row("lax_linalg_householder_product", L.householder_product,
    gen(randn(5, 3), _taus(3)), _orgqr, rtol=1e-10, atol=1e-12)
row("lax_linalg_householder_product_batched", L.householder_product,
    gen(randn(2, 4, 3), _taus(2, 2)),
    lambda a, t: np.stack([_orgqr(m, s) for m, s in zip(a, t)]), rtol=1e-10, atol=1e-12)
for _left in (True, False):
    for _tr in (False, True):
        row(f"lax_linalg_ormqr_{'left' if _left else 'right'}{'_t' if _tr else ''}",
            lambda a, t, c, _l=_left, _t=_tr: L.ormqr(a, t, c, left=_l, transpose=_t),
            gen(randn(4, 3), _taus(3), randn(4, 2) if _left else randn(2, 4)),
            _ormqr(_left, _tr), rtol=1e-10, atol=1e-12)
row("lax_linalg_ormqr_complex_t",
    lambda ar, ai, t, cr, ci: _parts(L.ormqr(_z(ar, ai), t.astype(np.complex128),
                                             _z(cr, ci), transpose=True)),
    gen(randn(4, 3), randn(4, 3), _taus(3), randn(4, 2), randn(4, 2)),
    lambda ar, ai, t, cr, ci: _np_parts(_ormqr(True, True)(ar + 1j * ai,
                                                           t.astype(np.complex128),
                                                           cr + 1j * ci)),
    rtol=1e-10, atol=1e-12, diff_argnums=(0, 1, 3, 4))

# --------------------------------------------------------------------------- solves


def _dense_tri(dl, d, du, b):
    m = d.shape[-1]
    full = np.zeros(d.shape + (m,), np.result_type(dl, d, du))
    i = np.arange(m)
    full[..., i, i] = d
    full[..., i[1:], i[:-1]] = dl[..., 1:]
    full[..., i[:-1], i[1:]] = du[..., :-1]
    return np.linalg.solve(full, b)


row("lax_linalg_tridiagonal_solve", L.tridiagonal_solve,
    gen(randn(5), randn(5), randn(5), randn(5, 2)), _dense_tri, rtol=1e-9, atol=1e-11,
    fd_tol=1e-4)
row("lax_linalg_tridiagonal_solve_batched", L.tridiagonal_solve,
    gen(randn(2, 4), randn(2, 4, shift=3.0), randn(2, 4), randn(2, 4, 3)), _dense_tri,
    rtol=1e-9, atol=1e-11)
row("lax_linalg_tridiagonal_solve_perturbed",
    lambda dl, d, du, b: L.tridiagonal_solve(dl, d, du, b, perturb_singular=True),
    gen(randn(2, 5), randn(2, 5), randn(2, 5), randn(2, 5, 2)), _dense_tri, rtol=1e-9,
    atol=1e-11, fd_tol=1e-4)
row("lax_linalg_tridiagonal_solve_f32", L.tridiagonal_solve,
    gen(randn(4, dtype=F32), randn(4, dtype=F32, shift=3.0), randn(4, dtype=F32),
        randn(4, 1, dtype=F32)), _dense_tri, rtol=1e-4, atol=1e-5, diff=False)
row("lax_linalg_tridiagonal_solve_complex",
    lambda a, b, c, d, e, f, g, h: _parts(L.tridiagonal_solve(_z(a, b), _z(c, d), _z(e, f),
                                                              _z(g, h))),
    gen(*[randn(3)] * 6, randn(3, 2), randn(3, 2)),
    lambda a, b, c, d, e, f, g, h: _np_parts(_dense_tri(a + 1j * b, c + 1j * d, e + 1j * f,
                                                        g + 1j * h)),
    rtol=1e-9, atol=1e-11, fd_tol=1e-4)


def _polar(x):
    u, h = sl.polar(x)
    return u, h


row("lax_linalg_qdwh", lambda x: L.qdwh(x)[:2], gen(randn(5, 3)), _polar, rtol=1e-10,
    atol=1e-12, diff=False)
row("lax_linalg_qdwh_f32", lambda x: L.qdwh(x)[:2], gen(randn(4, 4, dtype=F32)), _polar,
    rtol=1e-4, atol=1e-5, diff=False)
row("lax_linalg_qdwh_complex", lambda re, im: _parts(*L.qdwh(_z(re, im))[:2]),
    gen(randn(3, 3), randn(3, 3)), lambda re, im: _np_parts(*_polar(re + 1j * im)),
    rtol=1e-10, atol=1e-12, diff=False)
row("lax_linalg_symmetric_product",
    lambda a, c: L.symmetric_product(a, c, alpha=2.0, beta=-0.5, symmetrize_output=True),
    gen(randn(2, 3, 4), _sym(2, 3, 3)),
    lambda a, c: 2.0 * a @ np.swapaxes(a, -1, -2) - 0.5 * c)
