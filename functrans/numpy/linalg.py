"""``functrans.numpy.linalg``: ``solve inv det slogdet cholesky norm``.

Matrices are ``(..., n, n)``; leading axes are batch axes and broadcast between
operands as in numpy. Integer and bool inputs are promoted to float64; complex
inputs are not supported (TypeError). Bad shapes raise ValueError naming them.
A singular matrix gives inf/NaN (as a compiled backend would), not an exception.

>>> import functrans.numpy as fnp
>>> round(float(fnp.linalg.det(fnp.asarray([[2.0, 1.0], [1.0, 3.0]]))), 9)
5.0
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..tracing import Tracer
from ..primitives import linalg as L
from ..primitives.elementwise import add, mul
from ..primitives.structural import broadcast_in_dim, reshape as _reshape, transpose as _transpose
from . import _elementwise as _ew, _reductions as _red, _structural as _st
from ._util import asarray, broadcast_to_shape, canonicalize_axis, check_arraylike, result_dtype

__all__ = ["solve", "inv", "det", "slogdet", "cholesky", "norm", "SlogdetResult"]


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


def _float(name, *xs):
    """Arrays (or tracers) of one real floating dtype: ints and bools become float64."""
    check_arraylike(name, *xs)
    dt = result_dtype(*xs)
    if dt.kind == "c":
        raise TypeError(f"{name}: complex input ({dt}) is not supported")
    if dt.kind != "f":
        dt = np.dtype(np.float64)
    return [asarray(x, dt) for x in xs]


def _square(name, a, what="a"):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: {what} must be a square matrix or a stack of them "
                         f"(shape (..., n, n)), got shape {tuple(a.shape)}")


def _mT(x):
    if isinstance(x, Tracer):
        nd = x.ndim
        return _transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))
    return np.swapaxes(x, -1, -2)


def solve(a, b):
    """Solve ``a @ x == b``. ``b`` of rank 1 is one right-hand side vector; otherwise
    ``b`` is ``(..., n, k)``. Batch axes broadcast.

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.solve(fnp.eye(2) * 2.0, fnp.asarray([1.0, 4.0])).tolist()
    [0.5, 2.0]
    """
    a, b = _float("solve", a, b)
    _square("solve", a)
    n = a.shape[-1]
    vector = b.ndim == 1
    if vector:
        if b.shape[0] != n:
            raise ValueError(f"solve: b with shape {tuple(b.shape)} does not match a with "
                             f"shape {tuple(a.shape)} (needs {n} rows)")
        b = _reshape(b, (n, 1)) if isinstance(b, Tracer) else b.reshape(n, 1)
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
    if vector:
        x = _reshape(x, batch + (n,)) if isinstance(x, Tracer) else x.reshape(batch + (n,))
    return x


def inv(a):
    """The inverse of a square matrix (or a stack of them), as ``solve(a, I)``.

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.inv(fnp.eye(2) * 4.0).tolist()
    [[0.25, 0.0], [0.0, 0.25]]
    """
    (a,) = _float("inv", a)
    _square("inv", a)
    n = a.shape[-1]
    eye = broadcast_to_shape(np.eye(n, dtype=a.dtype), a.shape)
    return L.solve(a, eye)


def det(a):
    """The determinant of a square matrix or a stack of them.

    >>> import functrans.numpy as fnp
    >>> round(float(fnp.linalg.det(fnp.eye(3) * 2.0)), 9)
    8.0
    """
    (a,) = _float("det", a)
    _square("det", a)
    return L.det(a)


def slogdet(a):
    """``SlogdetResult(sign, logabsdet)`` of a square matrix or a stack of them.

    >>> import functrans.numpy as fnp
    >>> s, l = fnp.linalg.slogdet(fnp.asarray([[-2.0, 0.0], [0.0, 1.0]]))
    >>> float(s), round(float(l), 4)
    (-1.0, 0.6931)
    """
    (a,) = _float("slogdet", a)
    _square("slogdet", a)
    return SlogdetResult(*L.slogdet(a))


def cholesky(a, *, upper=False):
    """The Cholesky factor of a symmetric positive-definite matrix: lower ``L`` with
    ``a = L Lᵀ`` (or upper ``U = Lᵀ`` with ``upper=True``). As in JAX the input is
    symmetrised first, ``(a + aᵀ) / 2``; a matrix that is not positive definite gives NaN.

    >>> import functrans.numpy as fnp
    >>> fnp.linalg.cholesky(fnp.asarray([[4.0, 2.0], [2.0, 2.0]])).tolist()
    [[2.0, 0.0], [1.0, 1.0]]
    """
    (a,) = _float("cholesky", a)
    _square("cholesky", a)
    if isinstance(a, Tracer):
        half = broadcast_in_dim(np.asarray(0.5, a.dtype), a.shape, ())
        sym = mul(add(a, _mT(a)), half)
    else:
        sym = (a + _mT(a)) * a.dtype.type(0.5)
    out = L.cholesky(sym)
    return _mT(out) if upper else out


# --------------------------------------------------------------------------- norm

_VECTOR_ORDS = "None, 2, 1, inf, -inf, 0 or any other number p"
_MATRIX_ORDS = "None, 'fro', 1, -1, inf or -inf"


def _check_ord(ord, matrix):
    if matrix:
        if ord in (None, "fro", 1, -1, np.inf, -np.inf) and not isinstance(ord, bool):
            return
        raise ValueError(f"norm: ord={ord!r} is not supported for matrices "
                         f"(supported: {_MATRIX_ORDS}; 2, -2 and 'nuc' need an SVD)")
    if isinstance(ord, str) or isinstance(ord, bool) or not (
            ord is None or isinstance(ord, (int, float, np.integer, np.floating))):
        raise ValueError(f"norm: ord={ord!r} is not supported for vectors "
                         f"(supported: {_VECTOR_ORDS})")


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector and matrix norms, as ``numpy.linalg.norm``.

    ``axis`` an int: vector norms (ord None/2, 1, inf, -inf, 0, p); a pair: matrix
    norms (ord None/'fro', 1, -1, inf, -inf); None: the 2-norm of the flattened
    array when ``ord`` is None, else a vector or matrix norm by rank.
    As in JAX, the gradient of the 2-norm at the zero vector is NaN.

    >>> import functrans.numpy as fnp
    >>> float(fnp.linalg.norm(fnp.asarray([3.0, 4.0])))
    5.0
    """
    (x,) = _float("norm", x)
    nd = x.ndim
    if axis is None:
        if ord is None:
            axes = tuple(range(nd))
        elif nd in (1, 2):
            axes = tuple(range(nd))
        else:
            raise ValueError(f"norm: ord={ord!r} with axis=None needs a 1-d or 2-d array, "
                             f"got shape {tuple(x.shape)}")
        if ord is None:
            return _ew.sqrt(_red.sum(x * x, axis=axes, keepdims=keepdims))
    elif isinstance(axis, (tuple, list)):
        axes = tuple(canonicalize_axis(a, nd) for a in axis)
        if len(axes) not in (1, 2) or len(set(axes)) != len(axes):
            raise ValueError(f"norm: axis {axis} must be one axis or two distinct axes "
                             f"for an array of shape {tuple(x.shape)}")
    else:
        axes = (canonicalize_axis(axis, nd),)
    if len(axes) == 1:
        _check_ord(ord, False)
        return _vector_norm(x, ord, axes[0], keepdims)
    _check_ord(ord, True)
    return _matrix_norm(x, ord, axes, keepdims)


def _vector_norm(x, ord, ax, keepdims):
    kw = dict(axis=ax, keepdims=keepdims)
    if ord is None or ord == 2:
        return _ew.sqrt(_red.sum(x * x, **kw))
    ax_ = _ew.abs(x)
    if ord == np.inf:
        return _red.max(ax_, **kw)
    if ord == -np.inf:
        return _red.min(ax_, **kw)
    if ord == 0:
        return _red.sum(_ew.not_equal(x, 0).astype(x.dtype), **kw)
    if ord == 1:
        return _red.sum(ax_, **kw)
    p = float(ord)
    return _ew.power(_red.sum(_ew.power(ax_, p), **kw), 1.0 / p)


def _matrix_norm(x, ord, axes, keepdims):
    row, col = axes
    if ord is None or ord == "fro":
        out = _ew.sqrt(_red.sum(x * x, axis=axes, keepdims=True))
    else:
        red = _red.max if ord in (1, np.inf) else _red.min
        # ord ±1: extreme column sum (sum over rows); ord ±inf: extreme row sum
        inner, outer = (row, col) if ord in (1, -1) else (col, row)
        out = red(_red.sum(_ew.abs(x), axis=inner, keepdims=True), axis=outer, keepdims=True)
    if keepdims:
        return out
    return _st.reshape(out, tuple(s for i, s in enumerate(x.shape) if i not in axes))
