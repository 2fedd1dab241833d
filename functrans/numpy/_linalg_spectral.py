"""``functrans.numpy.linalg`` decompositions and what is built on them: eigh,
eigvalsh, eig, eigvals, svd, svdvals, qr, pinv, lstsq, matrix_rank.

Every function takes real or complex matrices: eigh reads a Hermitian one (real
eigenvalues), svd/svdvals give real singular values, eig/eigvals always return
complex results. Batch axes lead.

>>> import functrans.numpy as fnp
>>> fnp.linalg.eigvalsh(fnp.asarray([[2.0, 1.0], [1.0, 2.0]])).tolist()
[1.0, 3.0]
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..primitives import linalg_decomp as LD
from ..primitives import linalg_det as LDet
from ._creation import eye as _eye, tril, triu, zeros
from ._elementwise import abs as _abs, greater, multiply, sign
from ._joining import concatenate
from ._elementwise_select import conj, real as _real, where
from ._linalg_common import as_float, check_matrix, check_square, hermitian_part, mH, mT
from ._products import matmul
from ._reductions import max as _max, sum as _sum
from ._sorting import argsort
from ._structural import expand_dims, reshape
from ._take import take_along_axis
from ._util import asarray
from ..array import Array
from ..tracing import Tracer
from ..eager_jit import compiled_when_large
from ..typing import ArrayLike

__all__ = ["eigh", "eigvalsh", "eig", "eigvals", "svd", "svdvals", "qr", "pinv", "lstsq",
           "matrix_rank", "EighResult", "EigResult", "SVDResult", "QRResult"]


class EighResult(NamedTuple):
    """``eigh``'s result: ascending eigenvalues and the eigenvectors (columns).

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.eigh(fnp.eye(2)).eigenvalues.tolist()
    [1.0, 1.0]
    """
    eigenvalues: object
    eigenvectors: object


class EigResult(NamedTuple):
    """``eig``'s result: complex eigenvalues and right eigenvectors (columns).

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.eig(fnp.eye(2)).eigenvalues.tolist()
    [(1+0j), (1+0j)]
    """
    eigenvalues: object
    eigenvectors: object


class SVDResult(NamedTuple):
    """``svd``'s result: ``a = U @ diag(S) @ Vh``.

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.svd(fnp.eye(2)).S.tolist()
    [1.0, 1.0]
    """
    U: object
    S: object
    Vh: object


class QRResult(NamedTuple):
    """``qr``'s result: ``a = Q @ R``.

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.qr(fnp.eye(2)).R.shape
    (2, 2)
    """
    Q: object
    R: object


def _lower(name, UPLO):
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"{name}: UPLO must be 'L' or 'U', got {UPLO!r}")
    return UPLO != "U"


def eigh(a: ArrayLike, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:
    """Eigenvalues (ascending, real) and eigenvectors of a real symmetric or complex
    Hermitian matrix (stack).

    With ``symmetrize_input`` (the default, as JAX) ``(a + aᴴ)/2`` is decomposed;
    otherwise only the ``UPLO`` triangle ('L' default) is read. As in JAX, the
    eigenvector derivatives are not finite where eigenvalues repeat; the eigenvalue
    derivatives are. Each eigenvector's first entry of largest magnitude is made
    real and non-negative (numpy's signs and phases may differ).

    >>> import functrans.numpy as fnp
    >>> w, v = fnp.linalg.eigh(fnp.asarray([[2.0, 0.0], [0.0, 1.0]]))
    >>> w.tolist()
    [1.0, 2.0]
    """
    (a,) = as_float("eigh", a, complex_ok=True)
    check_square("eigh", a)
    run = _EIGH[_lower("eigh", UPLO), bool(symmetrize_input)]
    if int(np.prod(np.shape(a)[:-2], dtype=np.int64)) >= _EAGER_STACK:
        run = _EIGH_COMPILED[_lower("eigh", UPLO), bool(symmetrize_input)]
    return EighResult(*run(a))


def _eigh(lower, symmetrize):
    def run(a):
        v, w = LD.eigh(hermitian_part(a) if symmetrize else a, lower=lower)
        return w, v
    return run


# A large eager stack of small matrices runs the compiled program (one native loop of
# LAPACK calls, the same calls and bits) instead of one Python call into LAPACK per
# matrix: 1e5 3x3 matrices 2.9 s -> 0.7 s (JAX 0.4 s).
_EAGER_STACK = 256
_EIGH = {(lo, sym): _eigh(lo, sym) for lo in (False, True) for sym in (False, True)}
_EIGH_COMPILED = {k: compiled_when_large(f) for k, f in _EIGH.items()}


def eigvalsh(a: ArrayLike, UPLO: str = "L", symmetrize_input: bool = True) -> Array:
    """The eigenvalues (ascending, real) of a real symmetric or complex Hermitian
    matrix (stack).

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.eigvalsh(fnp.asarray([[0.0, 1.0], [1.0, 0.0]])).tolist()
    [-1.0, 1.0]
    """
    return eigh(a, UPLO, symmetrize_input).eigenvalues


def eig(a: ArrayLike) -> EigResult:
    """Eigenvalues and right eigenvectors of a general square matrix (stack), both
    complex, ``a @ v[:, i] = w[i] * v[:, i]`` (unordered, as LAPACK returns them).
    Only the eigenvalues are differentiable (as in JAX).

    >>> import functrans.numpy as fnp
    >>> w, v = fnp.linalg.eig(fnp.asarray([[2.0, 0.0], [0.0, 3.0]]))
    >>> w.tolist()
    [(2+0j), (3+0j)]
    """
    (a,) = as_float("eig", a, complex_ok=True)
    check_square("eig", a)
    w, v = LD.eig(a, compute_right_eigenvectors=True)
    return EigResult(w, v)


def eigvals(a: ArrayLike) -> Array:
    """The (complex) eigenvalues of a general square matrix (stack), differentiable.

    >>> import functrans.numpy as fnp
    >>> sorted(fnp.linalg.eigvals(fnp.asarray([[0.0, 1.0], [-1.0, 0.0]])).tolist(),
    ...        key=lambda z: z.imag)
    [-1j, 1j]
    """
    (a,) = as_float("eigvals", a, complex_ok=True)
    check_square("eigvals", a)
    (w,) = LD.eig(a, compute_right_eigenvectors=False)
    return w


def svd(a: ArrayLike, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False, subset_by_index: tuple[int, int] | None = None
        ) -> SVDResult | Array:
    """Singular value decomposition ``SVDResult(U, S, Vh)`` of a real or complex matrix
    (stack), ``S`` real and descending; ``compute_uv=False`` gives ``S`` only.
    ``hermitian=True`` reads ``a`` as symmetric (Hermitian) and uses ``eigh``. Derivatives
    of ``U``/``Vh`` need ``full_matrices=False`` for non-square ``a``. ``subset_by_index``
    raises NotImplementedError, as JAX's does on CPU and GPU.

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.svd(fnp.asarray([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False).tolist()
    [4.0, 3.0]
    """
    if subset_by_index is not None:
        raise NotImplementedError("svd: subset_by_index is not implemented (JAX has it on "
                                  "TPU only)")
    if not compute_uv:
        return svdvals(a) if not hermitian else _hermitian_svd(a, False)
    (a,) = as_float("svd", a, complex_ok=True)
    check_matrix("svd", a)
    if hermitian:
        return _hermitian_svd(a, True)
    u, s, vt = LD.svd(a, full_matrices=bool(full_matrices), compute_uv=True)
    return SVDResult(u, s, vt)


def _hermitian_svd(a, compute_uv):
    # a = V diag(w) Vᴴ = (V P) diag(|w| P) (sign(w) ∘ V P)ᴴ with P sorting |w| descending
    (a,) = as_float("svd", a, complex_ok=True)
    check_square("svd", a)
    w, v = eigh(a)
    order = argsort(-_abs(w), axis=-1)
    w = take_along_axis(w, order, axis=-1)
    s = _abs(w)
    if not compute_uv:
        return s
    u = take_along_axis(v, expand_dims(order, -2), axis=-1)
    vh = mH(multiply(u, expand_dims(sign(w), -2).astype(u.dtype)))
    return SVDResult(u, s, vh)


def svdvals(x: ArrayLike, /) -> Array:
    """The singular values (descending, real) of a real or complex matrix or stack.

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.svdvals(fnp.asarray([[0.0, 2.0], [1.0, 0.0]])).tolist()
    [2.0, 1.0]
    """
    (x,) = as_float("svdvals", x, complex_ok=True)
    check_matrix("svdvals", x)
    return LD.svd(x, full_matrices=False, compute_uv=False)


def qr(a: ArrayLike, mode: str = "reduced") -> QRResult | Array:
    """QR decomposition of a real or complex matrix (stack): ``QRResult(Q, R)`` for mode
    'reduced' (Q (m, k), R (k, n), k = min(m, n); numpy's deprecated 'full' is its
    alias, as JAX) or 'complete' (Q (m, m)), ``R``
    alone for mode 'r', or for mode 'raw' LAPACK's packed ``QRResult(h, tau)`` with
    ``h`` (..., n, m) the transpose of ``?geqrf``'s matrix, as numpy and JAX (equal
    to LAPACK's to rounding; differentiable, where JAX's is not). Derivatives of
    'complete' factors of tall matrices are not defined (an error).

    >>> import functrans.numpy as fnp
    >>> q, r = fnp.linalg.qr(fnp.asarray([[0.0, 2.0], [1.0, 0.0]]))
    >>> fnp.abs(r).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    if mode not in ("reduced", "complete", "r", "raw", "full"):
        raise ValueError(f"qr: mode must be 'reduced', 'complete', 'r' or 'raw', got {mode!r}")
    (a,) = as_float("qr", a, complex_ok=True)
    check_matrix("qr", a)
    if mode == "raw":
        h, taus = _householder_packed(a)
        return QRResult(mT(h), taus)
    q, r = LD.qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def _householder_packed(a):
    """``?geqrf``'s ``(h, taus)`` from the reduced QR (LAPACK's Householder Q and R):
    ``E - Q[:, :k] = V (T V1ᴴ)`` (compact WY, ``E`` the first k columns of I) is an
    LU factorization without pivoting, unit lower ``V`` the reflectors, the diagonal
    of ``T V1ᴴ`` the taus (in [1, 2] for real: stable pivots; exactly 0 for a trivial
    reflector, whose vector LAPACK leaves 0). One step per column, each
    differentiable, so the packed form is too."""
    m, n = a.shape[-2:]
    k, batch, dt = min(m, n), a.shape[:-2], a.dtype
    q, r = LD.qr(a, full_matrices=False)
    x = _eye(m, k, dtype=dt) - q
    lows, taus = [zeros(batch + (m, 0), dt)], [zeros(batch + (0,), dt)]
    for j in range(k):
        pivot = x[..., j, j]
        trivial = pivot == 0
        low = where(trivial[..., None], 0, x[..., j + 1:, j] / where(trivial, 1, pivot)[..., None])
        x = x.at[..., j + 1:, j + 1:].add(-low[..., :, None] * x[..., j, j + 1:][..., None, :])
        lows.append(concatenate([zeros(batch + (j + 1,), dt), low], axis=-1)[..., None])
        taus.append(pivot[..., None])
    v = concatenate(lows + [zeros(batch + (m, n - k), dt)], axis=-1)
    r = concatenate([r, zeros(batch + (m - k, n), dt)], axis=-2)
    return triu(r) + tril(v, -1), concatenate(taus, axis=-1)


def _default_rtol(a):
    return 10.0 * max(a.shape[-2:]) * float(np.finfo(a.dtype).eps)


def pinv(a: ArrayLike, rtol: float | None = None, hermitian: bool = False, *,
         rcond: float | None = None) -> Array:
    """The Moore-Penrose pseudo-inverse via the SVD: singular values at or below
    ``rtol * max(s)`` (default ``10 * max(m, n) * eps``, as JAX) are dropped;
    ``hermitian=True`` uses the Hermitian part of ``a``; ``rcond`` is an alias of
    ``rtol`` (JAX's, for backward compatibility). Real or complex. Its
    derivative is the closed form for a locally constant rank (also at repeated
    singular values).

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.pinv(fnp.asarray([[2.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    (a,) = as_float("pinv", a, complex_ok=True)
    check_matrix("pinv", a)
    if hermitian:   # as JAX: the Hermitian part (its eigh-based SVD symmetrizes)
        check_square("pinv", a)
        a = hermitian_part(a)
    if rtol is None:
        return LDet.pinv(a, rtol=_default_rtol(a))
    return _per_batch_rtol("pinv", a, rtol, lambda r: LDet.pinv(a, rtol=r))


def _per_batch_rtol(name, a, rtol, fn):
    """``fn(r)`` for a static float ``rtol``, or for an array of them broadcast against
    ``a``'s batch axes (the Array API's and JAX's): each matrix takes its own tolerance
    (``fn`` once per distinct value, the results selected elementwise)."""
    if isinstance(rtol, Tracer):
        raise TypeError(f"{name}: rtol must be a concrete number or array (it sets which "
                        f"singular values count), got a traced {rtol.aval.str_short()}")
    r = np.asarray(rtol)
    if r.ndim == 0:
        return fn(float(r))
    try:
        r = np.broadcast_to(r, np.broadcast_shapes(r.shape, a.shape[:-2]))
    except ValueError:
        raise ValueError(f"{name}: rtol of shape {r.shape} does not broadcast against the "
                         f"batch axes {tuple(a.shape[:-2])} of a {tuple(a.shape)}") from None
    values = np.unique(r)
    if values.size == 0:
        return fn(0.0)
    out = fn(float(values[0]))
    for v in values[1:]:
        pick = (r == v).reshape(r.shape + (1,) * (out.ndim - r.ndim))
        out = where(pick, fn(float(v)), out)
    return out


def lstsq(a: ArrayLike, b: ArrayLike, rcond: float | None = None, *,
          numpy_resid: bool = False) -> tuple[Array, Array, Array, Array]:
    """Least squares ``x`` minimising ``|a x - b|`` (minimum norm), as a tuple
    ``(x, residuals, rank, s)``. Singular values at or below ``rcond * max(s)``
    (default ``eps * max(m, n)``) are dropped. As JAX's default, ``residuals`` is
    always ``sum(|a x - b|²)`` per column; ``numpy_resid=True`` gives numpy's: empty
    when ``rank < n`` or ``m <= n`` (a shape that depends on a value, so the rank must
    be concrete: not under ``jit``, as JAX's).

    >>> import functrans.numpy as fnp
    >>> x, res, rank, s = fnp.linalg.lstsq(fnp.asarray([[1.0], [1.0]]), fnp.asarray([1.0, 3.0]))
    >>> fnp.round(x, 6).tolist(), fnp.round(res, 6).tolist(), int(rank)
    ([2.0], [2.0], 1)
    """
    a, b = as_float("lstsq", a, b, complex_ok=True)
    if a.ndim != 2 or b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise ValueError(f"lstsq: a must be (m, n) and b (m,) or (m, k), got shapes "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    rcond = float(np.finfo(a.dtype).eps) * max(a.shape) if rcond is None else float(rcond)
    s = svdvals(a)
    rank = matrix_rank(a, rcond)
    vector = b.ndim == 1
    col = reshape(b, (b.shape[0], 1)) if vector else b
    x = matmul(LDet.pinv(a, rtol=rcond), col)
    r = matmul(a, x) - col
    resid = _sum(_real(multiply(conj(r), r)), axis=0)   # (k,); (1,) for a vector b, as JAX
    m, n = a.shape
    if numpy_resid and (n > int(rank) or m <= n):   # int(): a concrete rank is needed
        resid = asarray(np.zeros((0,), resid.dtype))
    return (reshape(x, (a.shape[1],)) if vector else x), resid, rank, s


def matrix_rank(M: ArrayLike, rtol: float | None = None, *, hermitian: bool = False,
                tol: float | None = None) -> Array:
    """The number of singular values above the threshold: ``tol`` (absolute, one per
    matrix) if given, else ``rtol * max(s)`` (default ``max(m, n) * eps``; give one of
    ``tol`` and ``rtol``); ``hermitian=True`` takes
    ``s`` from ``eigvalsh``. A vector has rank 1 unless it is zero.

    >>> import functrans.numpy as fnp
    >>> int(fnp.linalg.matrix_rank(fnp.asarray([[1.0, 2.0], [2.0, 4.0]])))
    1
    """
    if tol is not None and rtol is not None:
        raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
    (M,) = as_float("matrix_rank", M, complex_ok=True)
    if M.ndim < 2:
        return asarray(greater(_sum(greater(_abs(M), 0), dtype=np.int64), 0), np.int64)
    s = _hermitian_svd(M, False) if hermitian else svdvals(M)
    if s.shape[-1] == 0:
        return _sum(s, axis=-1, dtype=np.int64)
    given = rtol if tol is None else tol
    if given is None:
        given = max(M.shape[-2:]) * float(np.finfo(s.dtype).eps)
    if np.ndim(given) or isinstance(given, Tracer):   # one per matrix (JAX's, the Array API's)
        given = expand_dims(asarray(given, s.dtype), -1)
    else:
        given = s.dtype.type(given)
    cutoff = given if tol is not None else multiply(_max(s, axis=-1, keepdims=True), given)
    return _sum(greater(s, cutoff), axis=-1, dtype=np.int64)

