"""The reference interpreter: evaluates a jaxpr equation by equation with each
primitive's numpy implementation. It is the semantics every other backend is
tested against.

>>> from jaxpr_ir import ClosedJaxpr, Jaxpr, Var, ShapedArray
>>> a = Var(ShapedArray((), "float64"))
>>> [float(y) for y in compile(ClosedJaxpr(Jaxpr([], [a], [], [a])))(2.0)]
[2.0]
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import ClosedJaxpr, Literal

# primitives whose evaluation needs the interpreter itself (sub-jaxprs) register here
RULES: dict = {}


def eval_jaxpr(jaxpr, consts, args):
    """Evaluate ``jaxpr`` on numpy values; returns the list of outputs."""
    env = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        env[v] = x
    for eqn in jaxpr.eqns:
        ins = [a.val if type(a) is Literal else env[a] for a in eqn.inputs]
        rule = RULES.get(eqn.primitive.name)
        if rule is not None:
            outs = rule(eqn, *ins)
        else:
            impl = eqn.primitive.impl
            if impl is None:
                raise NotImplementedError(f"interpret: primitive '{eqn.primitive.name}' has no "
                                          "implementation")
            outs = impl(*ins, **eqn.params)
        if eqn.primitive.multiple_results:
            for v, o in zip(eqn.outvars, outs):
                env[v] = o
        else:
            env[eqn.outvars[0]] = outs
    return [a.val if type(a) is Literal else env[a] for a in jaxpr.outvars]


def compile(closed: ClosedJaxpr):
    """A callable running ``closed`` with the interpreter (after a type check)."""
    try:
        from jaxpr_ir import check
    except ImportError:  # pragma: no cover - the checker is part of jaxpr_ir
        check = None
    if check is not None:
        check(closed)
    jaxpr, consts = closed.jaxpr, list(closed.consts)

    def run(*args):
        with np.errstate(all="ignore"):  # IEEE results (inf, nan) without warnings
            return [np.asarray(o) for o in eval_jaxpr(jaxpr, consts, args)]

    run.jaxpr = closed
    return run

from . import interpret_control_flow  # noqa: E402,F401  (registers cond/while/scan rules)
