"""How the interpreter runs one equation, and its evaluation of a whole jaxpr (the one
evaluator of ``jaxpr_ir.evaluate`` with ``run_eqn``).

A primitive runs its numpy implementation, unless it evaluates sub-jaxprs (``cond``,
``while``, ``scan``): those register a rule in ``RULES`` (``interpret_control_flow``).

>>> from jaxpr_ir import parse
>>> j = parse("{ lambda ; a:f64[]. let b:f64[] = neg a in (b,) }")
>>> [float(y) for y in eval_jaxpr(j, [], [2.0])]
[-2.0]
"""
from __future__ import annotations

from jaxpr_ir.evaluate import evaluate

__all__ = ["RULES", "run_eqn", "eval_jaxpr"]

# primitives whose evaluation needs the interpreter itself (sub-jaxprs) register here
RULES: dict = {}


def run_eqn(eqn, ins):
    """The outputs of one equation on numpy inputs (a list for multiple results)."""
    rule = RULES.get(eqn.primitive.name)
    if rule is not None:
        return rule(eqn, *ins)
    impl = eqn.primitive.impl
    if impl is None:
        raise NotImplementedError(f"interpret: primitive '{eqn.primitive.name}' has no "
                                  "implementation")
    return impl(*ins, **eqn.params)


def eval_jaxpr(jaxpr, consts, args, hook=None) -> list:
    """Evaluate ``jaxpr`` on numpy values; returns the list of outputs. ``hook(index, eqn,
    inputs, outputs)`` sees every equation (see ``jaxpr_ir.evaluate``)."""
    return evaluate(jaxpr, consts, args, run_eqn, hook)
