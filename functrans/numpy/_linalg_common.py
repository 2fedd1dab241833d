"""Argument handling shared by the ``functrans.numpy.linalg`` modules: dtype
promotion (ints and bools to float64; complex only where a function supports it)
and shape checks that name the offending shape.

>>> as_float("inv", [[1, 2], [3, 4]])[0].dtype
dtype('float64')
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import bfloat16
from ._elementwise import multiply
from ._elementwise_select import conj
from ._structural import swapaxes
from ._util import asarray, check_arraylike, result_dtype

__all__ = ["as_float", "check_square", "check_matrix", "mT", "mH", "hermitian_part"]


def as_float(name: str, *xs, complex_ok: bool = False) -> list:
    """The arguments as arrays (or tracers) of one floating dtype: ints and bools
    become float64; complex input raises TypeError unless ``complex_ok``; bfloat16
    raises TypeError (LAPACK has no bfloat16 routines, nor JAX's CPU linalg: convert
    with ``.astype(float32)`` first), rather than widening to float64 silently.

    >>> [str(a.dtype) for a in as_float("solve", [1.0], [2])]
    ['float64', 'float64']
    """
    check_arraylike(name, *xs)
    dt = result_dtype(*xs)
    if dt.kind == "c" and not complex_ok:
        raise TypeError(f"{name}: complex input ({dt}) is not supported")
    if dt == bfloat16:
        raise TypeError(f"{name}: dtype bfloat16 is not supported in linalg (no LAPACK "
                        "routine for it); convert with .astype(numpy.float32) first")
    if dt.kind not in "fc":
        dt = np.dtype(np.float64)
    return [asarray(x, dt) for x in xs]


def check_square(name: str, a, what: str = "a") -> None:
    """ValueError unless ``a`` is ``(..., n, n)``.

    >>> check_square("det", np.zeros((2, 3, 3)))
    """
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: {what} must be a square matrix or a stack of them "
                         f"(shape (..., n, n)), got shape {tuple(a.shape)}")


def check_matrix(name: str, a, what: str = "a") -> None:
    """ValueError unless ``a`` has at least two axes.

    >>> check_matrix("svd", np.zeros((2, 3)))
    """
    if a.ndim < 2:
        raise ValueError(f"{name}: {what} must be a matrix or a stack of them "
                         f"(shape (..., m, n)), got shape {tuple(a.shape)}")


def mT(x):
    """Swap the last two axes.

    >>> mT(np.zeros((1, 2, 3))).shape
    (1, 3, 2)
    """
    return swapaxes(x, -1, -2)


def mH(x):
    """The conjugate transpose over the last two axes (the transpose for reals).

    >>> mH(np.array([[1j, 2.0]])).tolist()
    [[-1j], [(2-0j)]]
    """
    t = swapaxes(x, -1, -2)
    return conj(t) if t.dtype.kind == "c" else t


def hermitian_part(x):
    """``(x + xᴴ) / 2``: the symmetric (Hermitian) matrix ``x`` stands for, as JAX
    symmetrises the input of eigh, cholesky and pinv(hermitian=True).

    >>> hermitian_part(np.array([[1.0, 2.0], [0.0, 1.0]])).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    return multiply(x + mH(x), 0.5)   # a weak Python scalar: no promotion, even under strict
