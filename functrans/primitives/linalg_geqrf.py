"""``geqrf``: LAPACK's Householder QR in packed form, ``(a, taus)`` as ``?geqrf`` leaves
them: ``R`` in the upper triangle of ``a`` (..., m, n), reflector ``i``'s vector (past
its unit entry ``i``) below the diagonal of column ``i``, and ``taus`` (..., min(m, n)),
so that ``Q = H_0 ... H_{k-1}``, ``H_i = I - taus[i] v_i v_iᴴ``
(``householder_product(a, taus)`` forms Q). The values are numpy.linalg.qr's
``mode='raw'`` ones (LAPACK's, float32/complex64 computed in double and rounded),
transposed back to ``a``'s layout: ``jnp.linalg.qr(mode='raw')`` is its transpose, as
numpy's and JAX's. Like JAX's ``geqrf`` it has no derivative rule (differentiating
raises); under jit it runs as a host step.

>>> import numpy as np
>>> h, taus = geqrf(np.array([[3.0], [4.0]]))
>>> np.asarray(h).tolist(), np.asarray(taus).tolist()
([[-5.0], [0.5]], [1.6])
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import ShapedArray
from .base import Primitive
from .linalg_common import batch_front, bind_checked, check_float, host_multi
from ..typing import Array, ArrayLike

__all__ = ["geqrf"]

geqrf_p = Primitive("geqrf")
geqrf_p.multiple_results = True


def _geqrf_aval(a):
    check_float("geqrf", a, complex_ok=True, half_ok=False)
    if a.ndim < 2:
        raise ValueError(f"geqrf: expected a matrix or a stack of them, got {a.str_short()}")
    m, n = a.shape[-2:]
    return [ShapedArray(a.shape, a.dtype), ShapedArray(a.shape[:-2] + (min(m, n),), a.dtype)]


def _geqrf_impl(a):
    a = np.asarray(a)
    outs = _geqrf_aval(ShapedArray(a.shape, a.dtype))

    def raw(x):
        h, taus = np.linalg.qr(x, mode="raw")       # h is numpy's transposed layout
        return [np.swapaxes(h, -1, -2), taus]
    return host_multi(raw, a, outs)


geqrf_p.def_rules(abstract_eval=_geqrf_aval, impl=_geqrf_impl)
batch_front(geqrf_p)


def geqrf(a: ArrayLike) -> tuple[Array, Array]:
    """The packed Householder QR ``(a, taus)`` of a real or complex matrix (stack), as
    LAPACK's ``?geqrf`` (see the module docstring).

    >>> import numpy as np
    >>> h, taus = geqrf(np.array([[0.0, 2.0], [1.0, 0.0]]))
    >>> np.abs(np.asarray(h)).tolist()
    [[1.0, 0.0], [1.0, 2.0]]
    """
    h, taus = bind_checked(geqrf_p, a)
    return h, taus
