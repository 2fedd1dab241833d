"""Taylor-mode propagation (``jet``'s engine): evaluate a jaxpr on truncated Taylor
series, equation by equation, with each primitive's rule from ``JET_RULES``.

A value is its primal and its series ``[x_1, ..., x_K]`` of *unscaled* Taylor
coefficients (``x(t) = x_0 + x_1 t + ... + x_K t^K``), or ``None``: a series of zeros
(constants, integer values, what only non-differentiable operations computed).
A rule is ``rule(primals, series, **params) -> (primal_out, series_out)`` (lists for a
primitive with several results; ``None`` for a zero output series); it computes with
the library's operations, so ``jet`` works eagerly and under ``jit``/``vmap``/``grad``.
Where no rule is registered:

- a primitive that is not differentiable (comparisons, rounding, ``iota``) gives
  zero series;
- a call-like primitive (``custom_jvp_call``, ``custom_vjp_call``, ``checkpoint``,
  ``custom_vmap_call``: ``call_param`` set) propagates through its body (as JAX's jet,
  custom derivative rules are not used); ``pjit`` has a rule: one jit of the jet of
  its body;
- anything else raises ``NotImplementedError`` naming the primitive.

>>> import numpy as np
>>> from functrans import lax
>>> outs, series = jet_fun(lambda x: [x * x], [np.float64(3.0)], [[np.float64(1.0)]])
>>> float(outs[0]), [float(t) for t in series[0]]     # (3 + t)^2 = 9 + 6t + t^2
(9.0, [6.0])
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from jaxpr_ir import ClosedJaxpr, Literal, dtype_kind
from ..api_util import abstract_and_concrete
from ..tracing import bind, get_aval, trace_to_jaxpr
from .. import numpy as fnp

__all__ = ["JET_RULES", "jet_fun", "jet_eval", "zeros_like_value"]

# primitive -> rule(primals, series, **params) -> (primal_out, series_out)
JET_RULES: dict = {}


def _no_rule(prim):
    return NotImplementedError(
        f"jet: primitive '{prim.name}' has no Taylor-mode (jet) rule, so functions using it "
        "cannot be expanded with functrans.experimental.jet.jet")


def zeros_like_value(x):
    """Zeros of ``x``'s shape and dtype (a zero series' terms)."""
    a = get_aval(x)
    return fnp.zeros(a.shape, a.dtype)


def _inexact(x) -> bool:
    return dtype_kind(get_aval(x).dtype) in "fc"


def _eqn(eqn, ps, ss, order):
    prim, params = eqn.primitive, eqn.params
    if prim.not_differentiable or all(s is None for s in ss):
        out = bind(prim, *ps, **params)
        return out, ([None] * len(out) if prim.multiple_results else None)
    ss = [[zeros_like_value(p)] * order if s is None else s for p, s in zip(ps, ss)]
    rule = JET_RULES.get(prim)
    if rule is not None:
        return rule(ps, ss, **params)
    if prim.call_param:          # the body takes the equation's operands (type-checked)
        body = params[prim.call_param]
        consts = list(body.consts) if isinstance(body, ClosedJaxpr) else []
        j = body.jaxpr if isinstance(body, ClosedJaxpr) else body
        return jet_eval(j, consts, ps, ss, order)
    raise _no_rule(prim)


def _keep(x, s):
    """Integer and boolean values carry no series."""
    return s if s is not None and _inexact(x) else None


def jet_eval(jaxpr, consts, primals, series, order: int):
    """Primal outputs and their series (``None``: zero) of ``jaxpr`` at ``primals`` with
    input ``series`` (each a list of ``order`` terms, or ``None``)."""
    env = {}
    for v, c in zip(jaxpr.constvars, consts):
        env[v] = (c, None)
    for v, p, s in zip(jaxpr.invars, primals, series):
        env[v] = (p, s)

    def read(a):
        return (a.val, None) if type(a) is Literal else env[a]

    for eqn in jaxpr.eqns:
        ps, ss = zip(*[read(a) for a in eqn.inputs]) if eqn.inputs else ((), ())
        out, sout = _eqn(eqn, list(ps), list(ss), order)
        if eqn.primitive.multiple_results:
            for v, o, s in zip(eqn.outvars, out, sout):
                env[v] = (o, _keep(o, s))
        else:
            env[eqn.outvars[0]] = (out, _keep(out, sout))
    outs = [read(a) for a in jaxpr.outvars]
    return [o for o, _ in outs], [s for _, s in outs]


def jet_fun(fun: Callable[..., Any], primals, series):
    """``fun`` (flat lists in, a flat list out) traced at ``primals`` and expanded:
    (primal outputs, their series, zeros instantiated), in unscaled coefficients."""
    order = len(series[0]) if series else 0
    avals, vals = abstract_and_concrete(list(primals))
    j, consts, _ = trace_to_jaxpr(lambda *xs: list(fun(*xs)), avals, vals, name="jet")
    outs, souts = jet_eval(j, consts, list(primals), [list(s) for s in series], order)
    return outs, [[zeros_like_value(o)] * order if s is None else list(s)
                  for o, s in zip(outs, souts)]
