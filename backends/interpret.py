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

    arrays = [c for c in consts if isinstance(c, np.ndarray)]

    def run(*args):
        with np.errstate(all="ignore"):  # IEEE results (inf, nan) without warnings
            outs = [np.asarray(o) for o in eval_jaxpr(jaxpr, consts, args)]
        # a constant (or a view of one) returned as it is would be one buffer shared by
        # every call's result: a write into one result (np.asarray(r)[0] = 1) changed the
        # next; the caller's arguments are jit's to guard (functrans.jit._unshared)
        return [o.copy() if any(np.may_share_memory(o, c) for c in arrays) else o
                for o in outs]

    run.jaxpr = closed
    return run
