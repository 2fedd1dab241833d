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

from jaxpr_ir import ClosedJaxpr, check
from . import interpret_control_flow  # noqa: F401  (registers the cond/while/scan rules)
from .interpret_eval import RULES, eval_jaxpr, run_eqn  # noqa: F401  (this backend's API)


def compile(closed: ClosedJaxpr):
    """A callable running ``closed`` with the interpreter (after a type check)."""
    check(closed)
    jaxpr, consts = closed.jaxpr, list(closed.consts)

    def run(*args):
        with np.errstate(all="ignore"):  # IEEE results (inf, nan) without warnings
            return [np.asarray(o) for o in eval_jaxpr(jaxpr, consts, args)]

    run.jaxpr = closed
    return run
