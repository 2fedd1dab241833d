"""The Schur decomposition as a primitive: ``schur a -> (t, z)`` with ``a = z t z^H``,
``z`` unitary (as ``jax.lax.linalg.schur`` with its defaults, behind
``jax.scipy.linalg.schur``).

Operands are square ``(..., n, n)``, real or complex; the outputs keep the operand's
dtype. A real operand gives the real Schur form (``t`` quasi upper triangular, a 2x2
block on the diagonal per complex eigenvalue pair), a complex one the complex form
(``t`` upper triangular). The values are LAPACK's ``?gees`` through
``scipy.linalg.schur`` (no eigenvalue ordering), one matrix of the stack at a time;
a matrix with a NaN or infinite entry gives NaN factors. The CPU backend calls the
same ``?gees`` from its generated code (the same bits); elsewhere it is a host step. Like JAX's it has no derivative: differentiating it raises.

>>> import numpy as np
>>> t, z = schur(np.array([[2.0, 1.0], [0.0, 3.0]]))
>>> np.round(np.asarray(t), 12).tolist()
[[2.0, 1.0], [0.0, 3.0]]
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from jaxpr_ir import ShapedArray
from ..typing import Array, ArrayLike
from .base import Primitive
from .linalg_common import batch_front, bind_checked, check_float, check_square

__all__ = ["schur"]

schur_p = Primitive("schur")
schur_p.multiple_results = True


def _schur_aval(a):
    check_float("schur", a, complex_ok=True)
    check_square("schur", a)
    out = ShapedArray(a.shape, a.dtype)
    return [out, out]


def _schur_impl(a):
    a = np.asarray(a)
    output = "complex" if a.dtype.kind == "c" else "real"
    if a.size == 0:
        return [a.copy(), a.copy()]
    flat = a.reshape((-1,) + a.shape[-2:])
    t = np.empty(flat.shape, a.dtype)
    z = np.empty(flat.shape, a.dtype)
    for i, m in enumerate(flat):
        if not np.all(np.isfinite(m)):
            t[i] = z[i] = np.nan
            continue
        try:
            with np.errstate(all="ignore"):
                t[i], z[i] = scipy.linalg.schur(m, output=output, check_finite=False)
        except (np.linalg.LinAlgError, ValueError):    # QR iteration did not converge
            t[i] = z[i] = np.nan
    return [t.reshape(a.shape), z.reshape(a.shape)]


def _schur_jvp(primals, tangents):
    raise NotImplementedError("schur is not differentiable (as in JAX, whose Schur "
                              "decomposition has no derivative rule)")


schur_p.def_rules(abstract_eval=_schur_aval, impl=_schur_impl, jvp=_schur_jvp)
batch_front(schur_p)


def schur(a: ArrayLike) -> tuple[Array, Array]:
    """``(t, z)``: the Schur form and unitary Schur vectors of a square matrix (stack),
    ``a = z t z^H``; real form for a real ``a``, complex for a complex one. Not
    differentiable (as in JAX).

    >>> import numpy as np
    >>> t, z = schur(np.array([[0.0, 1.0], [1.0, 0.0]]))
    >>> sorted(np.round(np.diag(np.asarray(t)), 12).tolist())
    [-1.0, 1.0]
    """
    t, z = bind_checked(schur_p, a)
    return t, z
