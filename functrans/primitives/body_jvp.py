"""Helpers over a checkpoint body for ``custom``'s checkpoint rules: whether it holds
given primitives (nested bodies included), dead-code elimination of its top level, and
the primal part of its JVP as a body of its own.

>>> from jaxpr_ir import Jaxpr
>>> dce_top(Jaxpr([], [], [], [])).eqns
[]
"""
from __future__ import annotations

from typing import Any, Sequence

from jaxpr_ir import ClosedJaxpr, Jaxpr, Literal, Var
from ..tracing import trace_to_jaxpr
from ..transforms.jvp import jvp_eqn
from .base import Zero, instantiate, tangent_aval

__all__ = ["holds_primitive", "dce_top", "jvp_primal_body"]


def holds_primitive(closed: ClosedJaxpr, prims: Sequence[Any]) -> bool:
    """Whether an equation of ``closed`` or of a body nested in it binds one of ``prims``."""
    for e in closed.jaxpr.eqns:
        if e.primitive in prims:
            return True
        for k in e.primitive.subjaxpr_params:
            subs = e.params.get(k)
            for sub in subs if isinstance(subs, tuple) else (subs,):
                if isinstance(sub, ClosedJaxpr) and holds_primitive(sub, prims):
                    return True
    return False


def dce_top(j: Jaxpr) -> Jaxpr:
    """Drop the dead top-level equations of ``j``, leaving every sub-jaxpr object as it
    is: ``passes.dce`` would rebuild the body of a nested checkpoint that the forward
    equation still holds, and two jaxpr objects defining the same vars are ill-typed.
    Equations with effects stay; a dead one with a sub-jaxpr goes (it only recomputes)."""
    live = {v for v in j.outvars if isinstance(v, Var)}
    kept = []
    for e in reversed(j.eqns):
        if any(v in live for v in e.outvars) or e.primitive.has_effects:
            kept.append(e)
            live.update(x for x in e.inputs if isinstance(x, Var))
    return Jaxpr(j.constvars, j.invars, kept[::-1], j.outvars)


def jvp_primal_body(closed: ClosedJaxpr, extra: Sequence[Var], nz: Sequence[bool]) -> ClosedJaxpr:
    """The body (const-free ``closed``) run as the primal half of its JVP, with zero
    tangents for the inputs ``nz`` marks: its outputs, then the values of ``extra``.
    The primal outputs are then those of the JVP (a custom_vjp call's come from its
    ``fwd``), so differentiating them again agrees with differentiating without a
    checkpoint."""
    j = closed.jaxpr

    def fun(*xs):
        penv = dict(zip(j.invars, xs))
        tenv = {v: instantiate(Zero(tangent_aval(v.aval))) if m else Zero(tangent_aval(v.aval))
                for v, m in zip(j.invars, nz)}

        def read(a):
            return a.val if type(a) is Literal else penv[a]

        for e in j.eqns:
            out, tout = jvp_eqn(e.primitive, [read(a) for a in e.inputs],
                                [Zero(a.aval) if type(a) is Literal else tenv[a]
                                 for a in e.inputs], e.params)
            if not e.primitive.multiple_results:
                out, tout = [out], [tout]
            penv.update(zip(e.outvars, out))
            tenv.update(zip(e.outvars, tout))
        return [read(a) for a in j.outvars] + [penv[v] for v in extra]

    fj, fc, _ = trace_to_jaxpr(fun, list(j.in_avals), name="checkpoint forward", staged=True)
    return ClosedJaxpr(dce_top(fj), fc)
