"""Table rows for complex ``functrans.numpy.linalg``: det, slogdet, inv, solve, cholesky,
eigh (Hermitian), qr, pinv, lstsq, svd(hermitian=True) and lax.triangular_solve on
complex matrices. The table differentiates real arguments, so each complex matrix is
built from two real ones (``lax.complex(re, im)``) and complex results are returned
as (real part, imaginary part): the JVP/VJP checks then cover every complex direction.
Matrices are well conditioned (``Z + n I``, ``Z Zᴴ + n I``) and batched rows use a
(2, 3, 3) stack."""
import numpy as np

import functrans.numpy as fnp
from functrans import lax
from functrans.primitives.linalg_decomp import canonical_signs
from tests.cases import OpCase, gen, randn

CASES = []


def row(name, fun, args, ref, **kw):
    CASES.append(OpCase(name, fun, args, ref, **kw))


def _z(re, im):
    return lax.complex(re, im)


def _parts(z):
    return fnp.real(z), fnp.imag(z)


def _np_parts(z):
    z = np.asarray(z)
    return z.real, z.imag


def _shifted(z, n):
    """``z + n I`` in both libraries (fnp for the function, numpy for the reference)."""
    return z + n * np.eye(z.shape[-1])


def _hpd(z):
    """``Z Zᴴ + n I``, Hermitian positive definite."""
    n = z.shape[-1]
    return z @ np.conj(np.swapaxes(z, -1, -2)) + n * np.eye(n)


def _fhpd(re, im):
    z = _z(re, im)
    return fnp.matmul(z, fnp.conj(fnp.swapaxes(z, -1, -2))) + z.shape[-1] * np.eye(z.shape[-1])


def _np_eigh(h):
    w, v = np.linalg.eigh(h)
    return (w,) + _np_parts(canonical_signs(v))


def _np_lu(z):
    import scipy.linalg as sl
    flat = z.reshape((-1,) + z.shape[-2:])
    lus, pivs = zip(*(sl.lu_factor(m) for m in flat))
    perm = np.array([np.argmax(sl.lu(m)[0], axis=0) for m in flat], np.int32)
    k = min(z.shape[-2:])
    return (*_np_parts(np.array(lus).reshape(z.shape)),
            np.array(pivs, np.int32).reshape(z.shape[:-2] + (k,)), perm.reshape(z.shape[:-1]))


def pair(*shape):
    return gen(randn(*shape), randn(*shape))


for _shape, _tag in (((3, 3), ""), ((2, 3, 3), "_batched")):
    row(f"linalg_complex_det{_tag}", lambda re, im: _parts(fnp.linalg.det(_shifted(_z(re, im), 3))),
        pair(*_shape), lambda re, im: _np_parts(np.linalg.det(_shifted(re + 1j * im, 3))))
    row(f"linalg_complex_slogdet{_tag}",
        lambda re, im: (lambda s, l: (*_parts(s), l))(*fnp.linalg.slogdet(_z(re, im))),
        pair(*_shape),
        lambda re, im: (lambda s, l: (*_np_parts(s), l))(*np.linalg.slogdet(re + 1j * im)))
    row(f"linalg_complex_inv{_tag}", lambda re, im: _parts(fnp.linalg.inv(_shifted(_z(re, im), 3))),
        pair(*_shape), lambda re, im: _np_parts(np.linalg.inv(_shifted(re + 1j * im, 3))))
    row(f"linalg_complex_cholesky{_tag}", lambda re, im: _parts(fnp.linalg.cholesky(_fhpd(re, im))),
        pair(*_shape), lambda re, im: _np_parts(np.linalg.cholesky(_hpd(re + 1j * im))))
    row(f"linalg_complex_eigh{_tag}",
        lambda re, im: (lambda w, v: (w, *_parts(v)))(*fnp.linalg.eigh(_fhpd(re, im))),
        pair(*_shape), lambda re, im: _np_eigh(_hpd(re + 1j * im)))
    row(f"linalg_complex_pinv_herm{_tag}",
        lambda re, im: _parts(fnp.linalg.pinv(_fhpd(re, im), hermitian=True)),
        pair(*_shape), lambda re, im: _np_parts(np.linalg.pinv(_hpd(re + 1j * im))))
row("linalg_complex_cholesky_upper",
    lambda re, im: _parts(fnp.linalg.cholesky(_fhpd(re, im), upper=True)), pair(3, 3),
    lambda re, im: _np_parts(np.conj(np.linalg.cholesky(_hpd(re + 1j * im)).T)))
row("linalg_complex_solve",
    lambda re, im, b: _parts(fnp.linalg.solve(_shifted(_z(re, im), 3), b)),
    gen(randn(2, 3, 3), randn(2, 3, 3), randn(2, 3, 2)),
    lambda re, im, b: _np_parts(np.linalg.solve(_shifted(re + 1j * im, 3), b)))
row("linalg_complex_lu",        # the factors' parts; pivots and permutation as they are
    lambda re, im: (lambda f, p, q: (*_parts(f), p, q))(*lax.lu(_z(re, im))),
    pair(2, 4, 3), lambda re, im: _np_lu(re + 1j * im))
row("linalg_complex_eigh_upper_unsymmetrized",
    lambda re, im: (lambda w, v: (w, *_parts(v)))(
        *fnp.linalg.eigh(_fhpd(re, im), UPLO="U", symmetrize_input=False)),
    pair(3, 3), lambda re, im: _np_eigh(_hpd(re + 1j * im)))
row("linalg_complex_eigvalsh", lambda re, im: fnp.linalg.eigvalsh(_fhpd(re, im)), pair(2, 4, 4),
    lambda re, im: np.linalg.eigvalsh(_hpd(re + 1j * im)))


def _degenerate(rng):
    """A Hermitian (2, 5, 5) stack with eigenvalues 1, 1, 2, 2, 2 (as rounding leaves
    them): which basis of each eigenspace comes back is LAPACK's choice, the same on
    every backend (the CPU backend calls the same ?heevd on the same bits)."""
    z = rng.standard_normal((2, 5, 5)) + 1j * rng.standard_normal((2, 5, 5))
    q = np.linalg.qr(z)[0]
    h = q @ np.diag([1.0, 1.0, 2.0, 2.0, 2.0]) @ np.conj(np.swapaxes(q, -1, -2))
    return [h.real, h.imag]


# eigenvectors at repeated eigenvalues have no derivative; float32 parts no useful
# finite differences: these rows check values, vmap and jit (every backend) only
row("linalg_complex_eigh_degenerate",
    lambda re, im: (lambda w, v: (w, *_parts(v)))(*fnp.linalg.eigh(
        _z(re, im), symmetrize_input=False)),
    _degenerate, lambda re, im: _np_eigh(re + 1j * im), diff=False)
row("linalg_complex64_eigh_batched",
    lambda re, im: (lambda w, v: (w, *_parts(v)))(*fnp.linalg.eigh(
        _z(re, im).astype(np.complex64), symmetrize_input=False)),
    lambda rng: [a.astype(np.float32) for a in _np_parts(_hpd(
        rng.standard_normal((3, 4, 4)) + 1j * rng.standard_normal((3, 4, 4))))],
    lambda re, im: _np_eigh(re + 1j * im), diff=False, rtol=1e-5, atol=1e-6)
row("linalg_complex64_pinv_batched",
    lambda re, im: _parts(fnp.linalg.pinv(_z(re, im).astype(np.complex64))),
    gen(randn(2, 4, 3, dtype=np.float32), randn(2, 4, 3, dtype=np.float32)),
    lambda re, im: _np_parts(np.linalg.pinv((re + 1j * im).astype(np.complex64))),
    diff=False, rtol=1e-5, atol=1e-6)

for _shape in ((4, 3), (3, 5), (3, 3), (2, 4, 3)):
    _tag = "x".join(map(str, _shape))
    row(f"linalg_complex_qr_reduced_{_tag}",
        lambda re, im: tuple(p for f in fnp.linalg.qr(_z(re, im)) for p in _parts(f)),
        pair(*_shape),
        lambda re, im: tuple(p for f in np.linalg.qr(re + 1j * im) for p in _np_parts(f)))
    row(f"linalg_complex_pinv_{_tag}", lambda re, im: _parts(fnp.linalg.pinv(_z(re, im))),
        pair(*_shape), lambda re, im: _np_parts(np.linalg.pinv(re + 1j * im)))
row("linalg_complex_qr_complete_square",
    lambda re, im: tuple(p for f in fnp.linalg.qr(_z(re, im), mode="complete") for p in _parts(f)),
    pair(3, 3),
    lambda re, im: tuple(p for f in np.linalg.qr(re + 1j * im, "complete") for p in _np_parts(f)))
row("linalg_complex_qr_complete_wide",
    lambda re, im: tuple(p for f in fnp.linalg.qr(_z(re, im), mode="complete") for p in _parts(f)),
    pair(2, 4),
    lambda re, im: tuple(p for f in np.linalg.qr(re + 1j * im, "complete") for p in _np_parts(f)))
row("linalg_complex_lstsq",
    lambda re, im, b: (lambda x, r, k, s: (*_parts(x), r, k, s))(
        *fnp.linalg.lstsq(_z(re, im), b)),
    gen(randn(5, 3), randn(5, 3), randn(5, 2)),
    lambda re, im, b: (lambda x, r, k, s: (*_np_parts(x), r, np.int64(k), s))(
        *np.linalg.lstsq(re + 1j * im, b, rcond=None)), batch=False)
row("linalg_complex_svd_hermitian",
    lambda re, im: fnp.linalg.svd(_fhpd(re, im) - 4.0 * np.eye(3), hermitian=True,
                                  compute_uv=False),
    pair(3, 3), lambda re, im: np.linalg.svd(_hpd(re + 1j * im) - 4.0 * np.eye(3),
                                             compute_uv=False))
row("linalg_complex_svd_hermitian_uv",
    lambda re, im: _parts(fnp.linalg.matmul(
        *fnp.linalg.svd(_fhpd(re, im) - 4.0 * np.eye(3), hermitian=True)[::2])),
    pair(3, 3), lambda re, im: _np_parts(np.matmul(
        *np.linalg.svd(_hpd(re + 1j * im) - 4.0 * np.eye(3), hermitian=True)[::2])))


def _np_tri(a, b):
    return np.linalg.solve(np.tril(a), b)


row("lax_complex_triangular_solve",
    lambda re, im, b: _parts(lax.triangular_solve(_shifted(_z(re, im), 3), b + 0j,
                                                  left_side=True, lower=True)),
    gen(randn(2, 3, 3), randn(2, 3, 3), randn(2, 3, 2)),
    lambda re, im, b: _np_parts(_np_tri(_shifted(re + 1j * im, 3), b)))

# --------------------------------------------------------------------------- JAX's extra arguments


def _signed(re):
    a = re + 3.0 * np.eye(re.shape[-1])
    a[..., 0, :] *= -1.0
    return a


row("linalg_slogdet_qr", lambda a: tuple(fnp.linalg.slogdet(a, method="qr")),
    lambda rng: [_signed(rng.standard_normal((2, 3, 3)))], lambda a: tuple(np.linalg.slogdet(a)))
row("linalg_complex_slogdet_qr",
    lambda re, im: (lambda s, l: (*_parts(s), l))(*fnp.linalg.slogdet(_z(re, im), method="qr")),
    pair(2, 3, 3),
    lambda re, im: (lambda s, l: (*_np_parts(s), l))(*np.linalg.slogdet(re + 1j * im)))
row("linalg_cholesky_unsymmetrized",
    lambda re, im: _parts(fnp.linalg.cholesky(_fhpd(re, im), symmetrize_input=False)),
    pair(3, 3), lambda re, im: _np_parts(np.linalg.cholesky(_hpd(re + 1j * im))))
row("linalg_matrix_rank_hermitian", lambda re, im: fnp.linalg.matrix_rank(
    _fhpd(re, im) - 4.0 * np.eye(3), hermitian=True), pair(3, 3),
    lambda re, im: np.linalg.matrix_rank(_hpd(re + 1j * im) - 4.0 * np.eye(3), hermitian=True),
    diff=False)


def _lower_hermitian(a):
    """The Hermitian matrix the lower triangle of ``a`` stands for (real diagonal)."""
    low = np.tril(a, -1)
    return low + np.conj(np.swapaxes(low, -1, -2)) + np.real(a) * np.eye(a.shape[-1])


# cholesky reads the lower triangle only: its derivative at a non-symmetric input too
row("lax_cholesky_nonsymmetric_input", lambda a: lax.cholesky(a + 6.0 * np.eye(3)),
    gen(randn(2, 3, 3)), lambda a: np.linalg.cholesky(_lower_hermitian(a + 6.0 * np.eye(3))))
row("linalg_complex_cholesky_nonhermitian_unsymmetrized",
    lambda re, im: _parts(fnp.linalg.cholesky(_shifted(_z(re, im), 6.0), symmetrize_input=False)),
    pair(3, 3), lambda re, im: _np_parts(np.linalg.cholesky(
        _lower_hermitian(_shifted(re + 1j * im, 6.0)))))
