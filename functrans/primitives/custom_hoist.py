"""Sub-jaxprs of the custom-rule primitives carry no consts: ``hoist_many`` makes bodies
traced together (a function and its rules) take all their consts as leading inputs,
which the equation passes as operands (functrans/primitives/custom.py).

>>> from jaxpr_ir import ShapedArray
>>> from functrans.tracing import trace_to_jaxpr
>>> j, c, _ = trace_to_jaxpr(lambda x: [x + np.arange(3.0)], [ShapedArray((3,), "float64")])
>>> (h,), consts = hoist_many([ClosedJaxpr(j, c)])
>>> len(h.jaxpr.invars), len(consts)
(2, 1)
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray, Var, dtype_kind
from ..tracing import Tracer, checked
from .structural import broadcast_in_dim_p

__all__ = ["hoist_many"]


def hoist_many(closeds):
    """Const-free versions of ``closeds`` that all take every const as leading inputs.

    Returns (jaxprs, consts): jaxpr k has invars ``[c_0.., c_1.., ..., own invars]``
    where only its own const slot is read.
    """
    closeds = [_splat_consts(c) for c in closeds]
    consts = []
    for c in closeds:
        consts += list(c.consts)
    out = []
    for k, c in enumerate(closeds):
        pre = []
        for m, d in enumerate(closeds):
            pre += list(c.jaxpr.constvars) if m == k else [Var(v.aval) for v in d.jaxpr.constvars]
        j = c.jaxpr
        out.append(checked(ClosedJaxpr(Jaxpr([], pre + j.invars, j.eqns, j.outvars), []),
                           "custom rule (hoisting consts)"))
    return out, consts


def _splat_consts(closed):
    """Concrete consts holding one repeated value (``ones_like`` in a JVP rule, say)
    become a broadcast of a literal inside the body, so they are not operands (and
    not residuals kept alive for reverse mode)."""
    j = closed.jaxpr
    keep_v, keep_c, eqns = [], [], []
    for v, c in zip(j.constvars, closed.consts):
        if (isinstance(c, (np.ndarray, np.generic)) and not isinstance(c, Tracer)
                and c.size > 0 and dtype_kind(c.dtype) in "biufc"):
            first = c.flat[0] if c.ndim else c[()]
            if c.ndim == 0 or bool(np.all(c == first)):
                lit = Literal(first, ShapedArray((), c.dtype))
                eqns.append(Eqn(broadcast_in_dim_p, [lit], [v],
                                dict(shape=tuple(c.shape), broadcast_dimensions=())))
                continue
        keep_v.append(v)
        keep_c.append(c)
    if not eqns:
        return closed
    return checked(ClosedJaxpr(Jaxpr(keep_v, j.invars, eqns + j.eqns, j.outvars), keep_c),
                   "custom rule (splatting consts)")
