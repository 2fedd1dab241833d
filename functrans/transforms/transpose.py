"""Reverse mode: transpose a linear jaxpr, equation by equation, in reverse.

Only linear primitives need transpose rules; everything nonlinear was split off
by linearization. Equations whose inputs are all non-linear (residual
arithmetic, e.g. recomputation under ``checkpoint``) are evaluated forward first.

>>> import numpy as np
>>> from jaxpr_ir import ShapedArray
>>> from functrans.tracing import trace_to_jaxpr
>>> from functrans.primitives.elementwise import mul
>>> j, c, _ = trace_to_jaxpr(lambda x: [mul(x, np.float64(3.0))], [ShapedArray((), "float64")])
>>> from functrans.primitives.base import UndefinedPrimal
>>> [float(g) for g in backward_pass(j, c, [UndefinedPrimal(j.invars[0].aval)], [np.float64(1.0)])]
[3.0]
"""
from __future__ import annotations

from jaxpr_ir import ClosedJaxpr, Literal, Var
from .ad_util import UndefinedPrimal, Zero, add_tangents, instantiate
from .. import tracing as _tracing
from ..tracing import bind, trace_to_jaxpr


def backward_pass(jaxpr, consts, args, cts_out, all_linear=False):
    """Cotangents of the inputs given as ``UndefinedPrimal`` (Zero where none flows).

    ``args`` holds values for non-linear inputs and UndefinedPrimal for linear ones.
    Returns one entry per input: a cotangent (or Zero) for linear inputs, None otherwise.
    ``all_linear``: every equation reads a linear value (so nothing is evaluated
    forward), as in the jaxprs linearize records (``LinearJaxpr.all_linear``).
    """
    internal = _tracing.INTERNAL
    prev, internal.on = internal.on, True    # cotangents stay plain ndarrays (see INTERNAL)
    try:
        return _backward_pass(jaxpr, consts, args, cts_out, all_linear)
    finally:
        internal.on = prev


def _backward_pass(jaxpr, consts, args, cts_out, all_linear):
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr, consts = jaxpr.jaxpr, list(jaxpr.consts) + list(consts)
    # ``env`` holds the value of every non-linear var; a Var not in it is linear
    env = dict(zip(jaxpr.constvars, consts))
    for v, x in zip(jaxpr.invars, args):
        if type(x) is not UndefinedPrimal:
            env[v] = x

    # split: equations reading a linear value are transposed; the others (residual
    # arithmetic, e.g. recomputation under checkpoint) are evaluated forward now
    lin_eqns = jaxpr.eqns if all_linear else []
    for eqn in () if all_linear else jaxpr.eqns:
        for a in eqn.inputs:
            if type(a) is not Literal and a not in env:
                lin_eqns.append(eqn)
                break
        else:
            outs = bind(eqn.primitive, *[a.val if type(a) is Literal else env[a]
                                         for a in eqn.inputs], **eqn.params)
            if eqn.primitive.multiple_results:
                env.update(zip(eqn.outvars, outs))
            else:
                env[eqn.outvars[0]] = outs

    ct_env = {}
    for v, ct in zip(jaxpr.outvars, cts_out):
        if type(v) is Var and v not in env and ct is not None and type(ct) is not Zero:
            prev = ct_env.get(v)
            ct_env[v] = ct if prev is None else add_tangents(prev, ct)

    pop, get = ct_env.pop, env.get
    for eqn in reversed(lin_eqns):
        prim = eqn.primitive
        if prim.multiple_results:
            outvars = eqn.outvars
            cts = [pop(v, None) for v in outvars]
            if all(c is None for c in cts):
                continue
            cts = [Zero(v.aval) if c is None else c for v, c in zip(outvars, cts)]
        else:
            cts = pop(eqn.outvars[0], None)
            if cts is None:
                continue
        transpose = prim.transpose
        if transpose is None:
            raise TypeError(
                f"reverse-mode differentiation is not supported through primitive "
                f"'{prim.name}' (it has no transpose rule)")
        inputs = eqn.inputs
        invals = []
        for a in inputs:
            x = get(a, _LINEAR)         # Literals are never in env: they come here too
            if x is _LINEAR:
                x = a.val if type(a) is Literal else UndefinedPrimal(a.aval)
            invals.append(x)
        for a, x, ct in zip(inputs, invals, transpose(cts, *invals, **eqn.params)):
            if type(x) is UndefinedPrimal and ct is not None and type(ct) is not Zero:
                prev = ct_env.get(a)
                ct_env[a] = ct if prev is None else add_tangents(prev, ct)

    if len(args) == 1:    # the common single input, without the comprehension
        x, = args
        if type(x) is not UndefinedPrimal:
            return [None]
        v = jaxpr.invars[0]
        ct = ct_env.get(v)
        return [Zero(v.aval) if ct is None else ct]
    return [ct_env.get(v, Zero(v.aval)) if type(x) is UndefinedPrimal else None
            for v, x in zip(jaxpr.invars, args)]


_LINEAR = object()   # env.get's default: the var has no value, it is linear


def transpose_jaxpr(closed: ClosedJaxpr, linear_mask, ct_mask=None) -> ClosedJaxpr:
    """IR -> IR: from a jaxpr linear in the ``linear_mask`` inputs, a jaxpr taking
    (non-linear inputs, output cotangents) and returning the linear inputs' cotangents.
    ``ct_mask`` (default: all) names the outputs that receive a cotangent; the others
    take a symbolic zero, so equations feeding only them (a comparison beside the
    linear result) are never transposed.
    """
    in_avals, out_avals = closed.in_avals, closed.out_avals
    ct_mask = [True] * len(out_avals) if ct_mask is None else list(ct_mask)
    nonlin = [a for a, m in zip(in_avals, linear_mask) if not m]
    n = len(nonlin)

    def fun(*xs):
        it = iter(xs[:n])
        args = [UndefinedPrimal(a) if m else next(it) for a, m in zip(in_avals, linear_mask)]
        given = iter(xs[n:])
        cts_out = [next(given) if m else Zero(a) for a, m in zip(out_avals, ct_mask)]
        cts = backward_pass(closed.jaxpr, closed.consts, args, cts_out)
        return [instantiate(c) for c, m in zip(cts, linear_mask) if m]

    ct_avals = [a for a, m in zip(out_avals, ct_mask) if m]
    j, consts, _ = trace_to_jaxpr(fun, nonlin + ct_avals, name="transpose_jaxpr")
    return ClosedJaxpr(j, consts)
