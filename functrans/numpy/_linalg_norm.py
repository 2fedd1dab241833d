"""``functrans.numpy.linalg`` norms: norm, vector_norm, matrix_norm, and cond.

Every ord of numpy is supported, on real and complex input (a complex input gives
a real norm; its 2/-2/'nuc' matrix norms use the complex SVD). As in JAX, the
gradient of the 2-norm at the zero vector is NaN.

>>> import functrans.numpy as fnp
>>> float(fnp.linalg.norm(fnp.asarray([3.0, 4.0])))
5.0
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import bfloat16
from ._elementwise import abs as _abs, multiply, not_equal, power, sqrt
from ._elementwise_select import imag, real
from ._linalg_basic import inv
from ._linalg_common import as_float, check_square
from ._linalg_spectral import svdvals
from ._reductions import max as _max, min as _min, sum as _sum
from ._structural import expand_dims, moveaxis, reshape
from ._util import asarray, canonicalize_axis
from typing import Sequence
from ..array import Array
from ..typing import ArrayLike

__all__ = ["norm", "vector_norm", "matrix_norm", "cond"]

_VECTOR_ORDS = "None, 2, 1, inf, -inf, 0 or any other number p"
_MATRIX_ORDS = "None, 'fro', 'nuc', 1, -1, 2, -2, inf or -inf"


def _abs2(x):
    """|x|², real, with a gradient also at 0."""
    if x.dtype.kind == "c":
        re, im = real(x), imag(x)
        return re * re + im * im
    return x * x


def _check_ord(ord, matrix):
    if matrix:
        if not isinstance(ord, bool) and ord in (None, "fro", "nuc", 1, -1, 2, -2, np.inf,
                                                 -np.inf):
            return
        raise ValueError(f"norm: ord={ord!r} is not supported for matrices "
                         f"(supported: {_MATRIX_ORDS})")
    if isinstance(ord, (str, bool)) or not (
            ord is None or isinstance(ord, (int, float, np.integer, np.floating))):
        raise ValueError(f"norm: Invalid order {ord!r} for vector norm. (supported: "
                         f"{_VECTOR_ORDS}; for infinity use numpy.inf)")


def norm(x: ArrayLike, ord: int | float | str | None = None,
         axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Array:
    """Vector and matrix norms, as ``numpy.linalg.norm``.

    ``axis`` an int: vector norms (ord None/2, 1, inf, -inf, 0, p); a pair: matrix
    norms (ord None/'fro', 'nuc', 1, -1, 2, -2, inf, -inf); None: the 2-norm of the
    flattened array when ``ord`` is None, else a vector or matrix norm by rank.

    bfloat16 (JAX's) is computed in float32 and rounded once.

    >>> import functrans.numpy as fnp
    >>> float(fnp.linalg.norm(fnp.asarray([[3.0, 0.0], [0.0, 4.0]]), ord=2))
    4.0
    """
    if getattr(x, "dtype", None) == bfloat16:
        return asarray(norm(asarray(x, np.float32), ord, axis, keepdims), bfloat16)
    (x,) = as_float("norm", x, complex_ok=True)
    nd = x.ndim
    if axis is None:
        if ord is None:
            return sqrt(_sum(_abs2(x), axis=tuple(range(nd)), keepdims=keepdims))
        if nd not in (1, 2):
            raise ValueError(f"norm: ord={ord!r} with axis=None needs a 1-d or 2-d array, "
                             f"got shape {tuple(x.shape)}")
        axes = tuple(range(nd))
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


def _max_norm(x, axis, keepdims=False):
    """The max of nonnegative magnitudes; 0 over an empty axis (numpy 2's, JAX's norms)."""
    empty = x.shape[axis] == 0 if x.ndim else False
    return _max(x, axis=axis, keepdims=keepdims, **({"initial": 0.0} if empty else {}))


def _vector_norm(x, ord, ax, keepdims):
    kw = dict(axis=ax, keepdims=keepdims)
    if ord is None or ord == 2:
        return sqrt(_sum(_abs2(x), **kw))
    mag = _abs(x)
    if ord == np.inf:
        return _max_norm(mag, **kw)
    if ord == -np.inf:
        return _min(mag, **kw)
    if ord == 0:
        return _sum(asarray(not_equal(x, 0), mag.dtype), **kw)
    if ord == 1:
        return _sum(mag, **kw)
    p = float(ord)
    return power(_sum(power(mag, p), **kw), 1.0 / p)


def _matrix_norm(x, ord, axes, keepdims):
    row, col = axes
    if ord is None or ord == "fro":
        out = sqrt(_sum(_abs2(x), axis=axes, keepdims=True))
    elif ord in ("nuc", 2, -2):
        s = svdvals(moveaxis(x, (row, col), (-2, -1)))
        red = {"nuc": _sum, 2: _max_norm, -2: _min}[ord]
        out = red(s, axis=-1)
        # the two reduced axes come back as size-1 axes at their places
        for ax in sorted(axes):
            out = expand_dims(out, ax)
    else:
        red = _max_norm if ord in (1, np.inf) else _min
        # ord ±1: extreme column sum (sum over rows); ord ±inf: extreme row sum
        inner, outer = (row, col) if ord in (1, -1) else (col, row)
        out = red(_sum(_abs(x), axis=inner, keepdims=True), axis=outer, keepdims=True)
    if keepdims:
        return out
    return reshape(out, tuple(s for i, s in enumerate(x.shape) if i not in axes))


def vector_norm(x: ArrayLike, /, *, axis: int | Sequence[int] | None = None, keepdims: bool = False,
                ord: int | float | str = 2) -> Array:
    """The vector ``ord``-norm along ``axis`` (an int, a tuple of axes, or None for
    all axes), as the array API's ``vector_norm``.

    >>> import functrans.numpy as fnp
    >>> float(fnp.linalg.vector_norm(fnp.ones((2, 2)), ord=1))
    4.0
    """
    (x,) = as_float("vector_norm", x, complex_ok=True)
    _check_ord(ord, False)
    if axis is None or isinstance(axis, (tuple, list)):
        axes = tuple(range(x.ndim)) if axis is None else tuple(
            canonicalize_axis(a, x.ndim) for a in axis)
        rest = [i for i in range(x.ndim) if i not in axes]
        flat = reshape(moveaxis(x, axes, tuple(range(x.ndim - len(axes), x.ndim))),
                       tuple(x.shape[i] for i in rest) + (-1,))
        out = _vector_norm(flat, ord, -1, False)
        if keepdims:
            out = reshape(out, tuple(1 if i in axes else x.shape[i] for i in range(x.ndim)))
        return out
    return _vector_norm(x, ord, canonicalize_axis(axis, x.ndim), keepdims)


def matrix_norm(x: ArrayLike, /, *, keepdims: bool = False,
                ord: int | float | str = "fro") -> Array:
    """The matrix ``ord``-norm of the last two axes.

    >>> import functrans.numpy as fnp
    >>> float(fnp.linalg.matrix_norm(fnp.eye(3), ord="nuc"))
    3.0
    """
    (x,) = as_float("matrix_norm", x, complex_ok=True)
    if x.ndim < 2:
        raise ValueError(f"matrix_norm: needs at least 2 axes, got shape {tuple(x.shape)}")
    _check_ord(ord, True)
    return _matrix_norm(x, ord, (x.ndim - 2, x.ndim - 1), keepdims)


def cond(x: ArrayLike, p: int | float | str | None = None) -> Array:
    """The condition number of a matrix (stack) in the ``p``-norm: with p None, 2 or
    -2 the ratio of extreme singular values, else ``norm(x, p) * norm(inv(x), p)``.

    >>> import functrans.numpy as fnp
    >>> float(fnp.linalg.cond(fnp.asarray([[2.0, 0.0], [0.0, 0.5]])))
    4.0
    """
    (x,) = as_float("cond", x, complex_ok=True)
    if x.ndim < 2:
        raise ValueError(f"cond: needs a matrix or a stack, got shape {tuple(x.shape)}")
    if p in (None, 2, -2):
        s = svdvals(x)
        big, small = _max(s, axis=-1), _min(s, axis=-1)
        return big / small if p != -2 else small / big
    check_square("cond", x)
    axes = (-2, -1)
    return multiply(norm(x, p, axes), norm(inv(x), p, axes))
