"""The one evaluator: a loop over a jaxpr's equations, parametrised by how one equation
runs and by an optional per-equation hook.

Every walker of a jaxpr is this loop: the interpreter backend runs an equation with the
primitive's numpy implementation, eager replay (``functrans.eval_jaxpr``) binds the
primitive (so the replay can itself be traced), the NaN finder and the profiler watch
each equation through the hook.

>>> from jaxpr_ir import parse
>>> j = parse("{ lambda ; a:f64[]. let b:f64[] = neg a in (b,) }")
>>> evaluate(j, [], [2.0], lambda eqn, ins: -ins[0])
[-2.0]
>>> _ = evaluate(j, [], [2.0], lambda eqn, ins: -ins[0],
...              hook=lambda i, eqn, ins, outs: print(i, eqn.primitive.name, ins, outs))
0 neg [2.0] [-2.0]
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

from .core import Eqn, Jaxpr, Literal

__all__ = ["evaluate"]

RunEqn = Callable[[Eqn, list], object]
EqnHook = Callable[[int, Eqn, list, list], None]


def evaluate(jaxpr: Jaxpr, consts: Sequence, args: Sequence, run_eqn: RunEqn,
             hook: Optional[EqnHook] = None) -> list:
    """The outputs of ``jaxpr`` on ``consts`` and ``args``.

    ``run_eqn(eqn, input_values)`` computes one equation: a list of outputs for a
    primitive with ``multiple_results``, else the one output. ``hook(index, eqn,
    input_values, output_values)`` (outputs always as a list) runs after each equation;
    to stop early it raises.
    """
    env = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for i, eqn in enumerate(jaxpr.eqns):
        ins = [a.val if type(a) is Literal else env[a] for a in eqn.inputs]
        outs = run_eqn(eqn, ins)
        if eqn.primitive.multiple_results:
            env.update(zip(eqn.outvars, outs))
            if hook is not None:
                hook(i, eqn, ins, outs)
        else:
            env[eqn.outvars[0]] = outs
            if hook is not None:
                hook(i, eqn, ins, [outs])
    return [a.val if type(a) is Literal else env[a] for a in jaxpr.outvars]
