"""``functrans.numpy.linalg``: solving, inverses, determinants, Cholesky, and the
array-API helpers (matmul, vecdot, cross, trace, ...). Batch axes lead and
broadcast between operands as in numpy.

>>> import functrans.numpy as fnp
>>> fnp.linalg.inv(fnp.eye(2) * 2.0).tolist()
[[0.5, 0.0], [0.0, 0.5]]
"""
from __future__ import annotations

import operator
from typing import Any, NamedTuple, Sequence

import numpy as np

from ..primitives import linalg as L
from ..primitives import linalg_decomp as LD
from ..primitives import linalg_det as LDet
from ._creation import eye as _eye
from ._elementwise import abs as _abs, log as _log, multiply, sign as _sign, subtract
from ._elementwise_select import conj, where as _where
from ._linalg_common import as_float, check_square, hermitian_part, mH, mT
from ._products import diagonal as _diagonal, matmul as _matmul, outer as _outer
from ._products import tensordot as _tensordot, trace as _trace
from ._reductions import prod as _prod, sum as _sum
from ._structural import broadcast_to, moveaxis, reshape
from ._joining import stack
from ._take import take
from ._util import asarray, broadcast_to_shape
from ..array import Array
from ..precision import PrecisionLike, with_precision_args
from ..typing import ArrayLike, DTypeLike

__all__ = ["solve", "inv", "det", "slogdet", "cholesky", "SlogdetResult", "matmul",
           "matrix_transpose", "vecdot", "outer", "tensordot", "trace", "diagonal", "cross",
           "matrix_power", "multi_dot", "tensorinv", "tensorsolve"]


class SlogdetResult(NamedTuple):
    """What ``slogdet`` returns: the sign of the determinant and the log of its
    absolute value (``det = sign * exp(logabsdet)``).

    >>> import functrans.numpy as fnp
    >>> sign, logabsdet = fnp.linalg.slogdet(fnp.array([[0.0, 2.0], [1.0, 0.0]]))
    >>> float(sign), float(logabsdet) == float(fnp.log(2.0))
    (-1.0, True)
    """
    sign: object
    logabsdet: object


def solve(a: ArrayLike, b: ArrayLike) -> Array:
    """Solve ``a @ x == b``. ``b`` of rank 1 is one right-hand side vector; otherwise
    ``b`` is ``(..., n, k)``. Batch axes broadcast. Complex input is accepted.

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.solve(fnp.eye(2) * 2.0, fnp.asarray([1.0, 4.0])).tolist()
    [0.5, 2.0]
    """
    a, b = as_float("solve", a, b, complex_ok=True)
    check_square("solve", a)
    n = a.shape[-1]
    vector = b.ndim == 1
    if vector:
        if b.shape[0] != n:
            raise ValueError(f"solve: b with shape {tuple(b.shape)} does not match a with "
                             f"shape {tuple(a.shape)} (needs {n} rows)")
        b = reshape(b, (n, 1))
    elif b.ndim < 2 or b.shape[-2] != n:
        raise ValueError(f"solve: b with shape {tuple(b.shape)} does not match a with shape "
                         f"{tuple(a.shape)} (b must be (n,) or (..., n, k) with n = {n})")
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"solve: batch shapes of a {tuple(a.shape)} and b {tuple(b.shape)} "
                         "cannot be broadcast together") from None
    a = broadcast_to_shape(a, batch + a.shape[-2:])
    b = broadcast_to_shape(b, batch + b.shape[-2:])
    x = L.solve(a, b)
    return reshape(x, batch + (n,)) if vector else x


def inv(a: ArrayLike) -> Array:
    """The inverse of a square matrix (or a stack of them), as ``solve(a, I)``.

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.inv(fnp.eye(2) * 4.0).tolist()
    [[0.25, 0.0], [0.0, 0.25]]
    """
    (a,) = as_float("inv", a, complex_ok=True)
    check_square("inv", a)
    n = a.shape[-1]
    eye = broadcast_to_shape(np.eye(n, dtype=a.dtype), a.shape)
    return L.solve(a, eye)


def det(a: ArrayLike) -> Array:
    """The determinant of a square matrix or a stack of them. Its gradient is the
    transposed adjugate, finite at singular matrices too (as JAX's). 2x2 and 3x3
    matrices take JAX's explicit products (its values within an ulp, its exact gradients).

    >>> import functrans.numpy as fnp
    >>> round(float(fnp.linalg.det(fnp.eye(3) * 2.0)), 9)
    8.0
    """
    (a,) = as_float("det", a, complex_ok=True)
    check_square("det", a)
    n = a.shape[-1]
    if n == 2:      # JAX's explicit products for 2x2 and 3x3 (same values, same gradients)
        return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]
    if n == 3:
        e = lambda i, j: a[..., i, j]      # noqa: E731
        return (e(0, 0) * e(1, 1) * e(2, 2) + e(0, 1) * e(1, 2) * e(2, 0)
                + e(0, 2) * e(1, 0) * e(2, 1) - e(0, 2) * e(1, 1) * e(2, 0)
                - e(0, 0) * e(1, 2) * e(2, 1) - e(0, 1) * e(1, 0) * e(2, 2))
    return LDet.det(a)


def slogdet(a: ArrayLike, *, method: str | None = None) -> SlogdetResult:
    """``SlogdetResult(sign, logabsdet)`` of a square matrix or a stack of them: by LU
    (``method`` None or 'lu', the default) or by QR ('qr': ``sign = det(Q) prod sign(r_ii)``,
    ``logabsdet = sum log|r_ii|``), as JAX. ``sign`` is a unit phase for complex input.

    >>> import functrans.numpy as fnp
    >>> s, l = fnp.linalg.slogdet(fnp.asarray([[-2.0, 0.0], [0.0, 1.0]]))
    >>> float(s), round(float(l), 4)
    (-1.0, 0.6931)
    """
    if method not in (None, "lu", "qr"):
        raise ValueError(f"slogdet: method must be None, 'lu' or 'qr', got {method!r}")
    (a,) = as_float("slogdet", a, complex_ok=True)
    check_square("slogdet", a)
    if method != "qr":
        return SlogdetResult(*LDet.slogdet(a))
    q, r = LD.qr(a, full_matrices=False)
    d = _diagonal(r, 0, -2, -1)
    size = _abs(d)
    if d.dtype.kind == "c":     # d / |d|, 0 at 0
        zero = size == 0
        phase = _where(zero, 0, d / _where(zero, 1, size).astype(d.dtype))
    else:
        phase = _sign(d)
    return SlogdetResult(LDet.det(q) * _prod(phase, axis=-1), _sum(_log(size), axis=-1))


def cholesky(a: ArrayLike, *, upper: bool = False, symmetrize_input: bool = True) -> Array:
    """The Cholesky factor of a symmetric (Hermitian) positive-definite matrix: lower
    ``L`` with ``a = L Lᴴ`` (or upper ``U = Lᴴ`` with ``upper=True``). As in JAX the
    input is symmetrised first, ``(a + aᴴ) / 2``; a matrix that is not positive
    definite gives NaN. With ``symmetrize_input=False`` only the lower triangle is read.

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.cholesky(fnp.asarray([[4.0, 2.0], [2.0, 2.0]])).tolist()
    [[2.0, 0.0], [1.0, 1.0]]
    """
    (a,) = as_float("cholesky", a, complex_ok=True)
    check_square("cholesky", a)
    out = L.cholesky(hermitian_part(a) if symmetrize_input else a)
    return mH(out) if upper else out


# --------------------------------------------------------------------------- array-API helpers

def matmul(x1: ArrayLike, x2: ArrayLike, /, *, precision: PrecisionLike = None,
           preferred_element_type: DTypeLike | None = None) -> Array:
    """``x1 @ x2`` (as ``functrans.numpy.matmul``; ``precision`` is checked, operands are
    converted to ``preferred_element_type`` first).

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.matmul(fnp.eye(2), fnp.ones((2, 1))).tolist()
    [[1.0], [1.0]]
    """
    return with_precision_args(_matmul)(x1, x2, precision=precision,
                                        preferred_element_type=preferred_element_type)


def matrix_transpose(x: ArrayLike, /) -> Array:
    """Swap the last two axes of an array of rank two or more.

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.matrix_transpose(fnp.zeros((4, 2, 3))).shape
    (4, 3, 2)
    """
    if np.ndim(x) < 2:
        raise ValueError(f"matrix_transpose: needs at least 2 axes, got shape {np.shape(x)}")
    return mT(x)


def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1, precision: PrecisionLike = None,
           preferred_element_type: DTypeLike | None = None) -> Array:
    """``sum(conj(x1) * x2)`` over ``axis``, the vector dot product; ``axis`` names each
    operand's own axis (numpy's gufunc rule, JAX's moveaxis), the other axes broadcast.
    Integers keep their dtype (numpy's vecdot, not ``sum``'s promotion).

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.vecdot(fnp.asarray([1.0, 2.0]), fnp.asarray([3.0, 4.0])).item()
    11.0
    """
    def dot(a, b):
        a, b = moveaxis(a, axis, -1), moveaxis(b, axis, -1)
        if a.shape[-1] != b.shape[-1]:
            raise ValueError(f"vecdot: axis {axis} has sizes {a.shape[-1]} and {b.shape[-1]}")
        prod = multiply(conj(a), b)
        return _sum(prod, axis=-1, dtype=prod.dtype)
    return with_precision_args(dot)(x1, x2, precision=precision,
                                    preferred_element_type=preferred_element_type)


def outer(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """The outer product of two vectors (1-d only, as ``jax.numpy.linalg.outer``).

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.outer(fnp.asarray([1.0, 2.0]), fnp.asarray([3.0])).tolist()
    [[3.0], [6.0]]
    """
    if np.ndim(x1) != 1 or np.ndim(x2) != 1:
        raise ValueError(f"outer: needs two 1-d arrays, got shapes {np.shape(x1)} and "
                         f"{np.shape(x2)}")
    return _outer(x1, x2)


def tensordot(x1: ArrayLike, x2: ArrayLike, /, *, axes: int | Sequence[Any] = 2,
              precision: PrecisionLike = None, preferred_element_type: DTypeLike | None = None,
              out_sharding: None = None) -> Array:
    """``functrans.numpy.tensordot`` with the array-API keyword ``axes`` (and JAX's
    ``precision``/``preferred_element_type``; ``out_sharding`` must be None).

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.tensordot(fnp.ones((2, 3)), fnp.ones((3, 2)), axes=1).tolist()
    [[3.0, 3.0], [3.0, 3.0]]
    """
    if out_sharding is not None:
        raise NotImplementedError("linalg.tensordot: out_sharding is not supported")
    return with_precision_args(_tensordot)(x1, x2, axes, precision=precision,
                                           preferred_element_type=preferred_element_type)


def trace(x: ArrayLike, /, *, offset: int = 0, dtype: DTypeLike | None = None) -> Array:
    """The trace of the last two axes (a stack of matrices gives a stack of traces).

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.trace(fnp.eye(3)).item()
    3.0
    """
    return _trace(x, offset, -2, -1, dtype)


def diagonal(x: ArrayLike, /, *, offset: int = 0) -> Array:
    """The diagonal of the last two axes.

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.diagonal(fnp.eye(2) * 3.0).tolist()
    [3.0, 3.0]
    """
    return _diagonal(x, offset, -2, -1)


def cross(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Array:
    """The cross product of 3-vectors along ``axis`` (which must have size 3 in both);
    the other axes broadcast.

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.cross(fnp.asarray([1.0, 0.0, 0.0]), fnp.asarray([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    s1, s2 = np.shape(x1), np.shape(x2)
    if not s1 or not s2 or s1[axis] != 3 or s2[axis] != 3:
        raise ValueError(f"cross: both arrays need size 3 along axis {axis}, got shapes "
                         f"{s1} and {s2}")
    a = moveaxis(x1, axis, -1)
    b = moveaxis(x2, axis, -1)
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    a, b = broadcast_to(a, shape), broadcast_to(b, shape)
    a0, a1, a2 = (take(a, i, axis=-1) for i in range(3))
    b0, b1, b2 = (take(b, i, axis=-1) for i in range(3))
    out = stack([subtract(a1 * b2, a2 * b1), subtract(a2 * b0, a0 * b2),
                 subtract(a0 * b1, a1 * b0)], axis=-1)
    return moveaxis(out, -1, axis)


# --------------------------------------------------------------------------- compositions

def matrix_power(a: ArrayLike, n: int) -> Array:
    """``a`` multiplied by itself ``n`` times (an integer; negative: powers of the
    inverse; 0: the identity), by repeated squaring.

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.matrix_power(fnp.asarray([[1.0, 1.0], [0.0, 1.0]]), 3).tolist()
    [[1.0, 3.0], [0.0, 1.0]]
    """
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"matrix_power: n must be an integer, got {n!r}") from None
    a = asarray(a)   # integer matrices keep their dtype for n >= 0, as numpy's
    if n < 0:
        (a,) = as_float("matrix_power", a, complex_ok=True)
    check_square("matrix_power", a)
    if n == 0:
        return broadcast_to(_eye(a.shape[-1], dtype=a.dtype), a.shape)
    if n < 0:
        a, n = inv(a), -n
    result = None
    base = a
    while n:
        if n & 1:
            result = base if result is None else _matmul(result, base)
        n >>= 1
        if n:
            base = _matmul(base, base)
    return result


def multi_dot(arrays: Sequence[ArrayLike], *, precision: PrecisionLike = None) -> Array:
    """The product of a chain of matrices; the first may be 1-d (a row vector) and
    the last 1-d (a column vector), as ``numpy.linalg.multi_dot``.

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.multi_dot([fnp.ones(2), fnp.eye(2), fnp.ones(2)]).item()
    2.0
    """
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError(f"multi_dot: needs at least two arrays, got {len(arrays)}")
    for i, x in enumerate(arrays):
        nd = np.ndim(x)
        ok = nd == 2 or (nd == 1 and i in (0, len(arrays) - 1))
        if not ok:
            raise ValueError(f"multi_dot: array {i} has shape {np.shape(x)}; the first and "
                             "last may be 1-d, the others must be 2-d")
    out = arrays[0]
    for x in arrays[1:]:
        out = _matmul(out, x)
    return out


def tensorinv(a: ArrayLike, ind: int = 2) -> Array:
    """The inverse of ``a`` seen as a linear map from its last axes (after the first
    ``ind``) to its first ``ind`` axes: ``tensordot(tensorinv(a), a, ind)`` is the identity.

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.tensorinv(fnp.eye(4).reshape(4, 2, 2), ind=1).shape
    (2, 2, 4)
    """
    (a,) = as_float("tensorinv", a, complex_ok=True)
    if ind <= 0:
        raise ValueError(f"tensorinv: ind must be a positive integer, got {ind}")
    out_shape, in_shape = a.shape[:ind], a.shape[ind:]
    rows, cols = int(np.prod(out_shape)), int(np.prod(in_shape))
    if rows != cols:
        raise ValueError(f"tensorinv: a of shape {tuple(a.shape)} with ind={ind} is not "
                         f"square ({rows} x {cols})")
    return reshape(inv(reshape(a, (rows, cols))), in_shape + out_shape)


def tensorsolve(a: ArrayLike, b: ArrayLike, axes: Sequence[int] | None = None) -> Array:
    """``x`` with ``tensordot(a, x, x.ndim) == b``; ``axes`` of ``a`` are first moved
    to the end, as ``numpy.linalg.tensorsolve``.

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.tensorsolve(fnp.eye(4).reshape(2, 2, 4), fnp.ones((2, 2))).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    a, b = as_float("tensorsolve", a, b, complex_ok=True)
    if axes is not None:
        axes = [ax % a.ndim for ax in (axes if isinstance(axes, (tuple, list)) else [axes])]
        a = moveaxis(a, axes, list(range(a.ndim - len(axes), a.ndim)))
    x_shape = a.shape[b.ndim:]
    size = int(np.prod(x_shape))
    if int(np.prod(a.shape[:b.ndim])) != size or a.shape[:b.ndim] != b.shape:
        raise ValueError(f"tensorsolve: a of shape {tuple(a.shape)} and b of shape "
                         f"{tuple(b.shape)} do not make a square system")
    return reshape(solve(reshape(a, (size, size)), reshape(b, (size,))), x_shape)
