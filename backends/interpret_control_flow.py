"""The interpreter's control flow: ``cond``, ``while`` and ``scan`` run as Python
branches and loops, evaluating their (const-free) sub-jaxprs with
``backends.interpret_eval.eval_jaxpr``. ``functrans`` uses the same functions as the
primitives' eager implementations, so eager and interpreted results agree.

>>> import numpy as np
>>> from jaxpr_ir import ClosedJaxpr, Jaxpr, Var, ShapedArray
>>> a = Var(ShapedArray((), "float64"))
>>> ident = ClosedJaxpr(Jaxpr([], [a], [], [a]))
>>> run_cond(np.int32(5), np.float64(2.0), branches=(ident, ident))
[array(2.)]
"""
from __future__ import annotations

import numpy as np

from .interpret_eval import RULES, eval_jaxpr


def _typed(vals, avals):
    return [np.asarray(v, dtype=a.dtype) for v, a in zip(vals, avals)]


def run_cond(index, *operands, branches):
    """Evaluate ``branches[clamp(index, 0, n - 1)]`` on the operands."""
    i = min(max(int(index), 0), len(branches) - 1)
    b = branches[i]
    return _typed(eval_jaxpr(b.jaxpr, (), operands), b.out_avals)


def run_while(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """``while cond(carry): carry = body(carry)``."""
    cc = list(args[:cond_nconsts])
    bc = list(args[cond_nconsts:cond_nconsts + body_nconsts])
    carry = list(args[cond_nconsts + body_nconsts:])
    cj, bj = cond_jaxpr.jaxpr, body_jaxpr.jaxpr
    while eval_jaxpr(cj, (), cc + carry)[0]:
        carry = eval_jaxpr(bj, (), bc + carry)
    return _typed(carry, bj.in_avals[body_nconsts:])


def run_scan(*args, jaxpr, length, reverse, num_consts, num_carry, linear=None, unroll=1):
    """Loop ``length`` times over the leading axis of the xs, threading the carry and
    stacking the per-iteration outputs (from the end when ``reverse``)."""
    j = jaxpr.jaxpr
    consts = list(args[:num_consts])
    carry = list(args[num_consts:num_consts + num_carry])
    xs = [np.asarray(x) for x in args[num_consts + num_carry:]]
    y_avals = j.out_avals[num_carry:]
    ys = [np.empty((length,) + tuple(a.shape), a.dtype) for a in y_avals]
    steps = range(length - 1, -1, -1) if reverse else range(length)
    for i in steps:
        outs = eval_jaxpr(j, (), consts + carry + [x[i] for x in xs])
        carry = outs[:num_carry]
        for buf, y in zip(ys, outs[num_carry:]):
            buf[i] = y
    return _typed(carry, j.in_avals[num_consts:num_consts + num_carry]) + ys


RULES["cond"] = lambda eqn, *args: run_cond(*args, **eqn.params)
RULES["while"] = lambda eqn, *args: run_while(*args, **eqn.params)
RULES["scan"] = lambda eqn, *args: run_scan(*args, **eqn.params)
