"""Partial evaluation: split a computation into what is known now and what is staged.

``partial_eval`` is the IR -> IR split of a jaxpr given which inputs are known.
``linearize_jaxpr`` is JVP and partial evaluation in one walk: primal values are
computed (eagerly, or in an outer trace), while tangents are tracers of a fresh
linear trace, so only the linear part of the derivative is recorded.

Both rest on one fact of tracing: an equation is recorded in the innermost trace
that owns one of its inputs, so equations touching an unknown (inner) value are
staged and all others run, or are recorded, outside.

>>> import numpy as np
>>> from jaxpr_ir import ShapedArray
>>> from functrans.tracing import trace_to_jaxpr
>>> from functrans.primitives.elementwise import sin
>>> j, c, _ = trace_to_jaxpr(lambda x: [sin(x)], [ShapedArray((2,), "float64")])
>>> outs, lin = linearize_jaxpr(j, c, [np.zeros(2)], [True])
>>> print(lin.jaxpr)
{ lambda a:f64[2]; b:f64[2]. let
    c:f64[2] = mul b a
  in (c,) }
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import ClosedJaxpr, Jaxpr, Var
from jaxpr_ir.evaluate import evaluate
from .ad_util import Zero, instantiate, tangent_aval
from .. import tracing as _tracing
from ..tracing import (Trace, Tracer, bind, checked, end_trace, eval_jaxpr, get_aval,
                       new_trace, push_trace, trace_depth, wrap)
from .jvp import bind_expanding, no_jvp_error, jvp_eval


class LinearJaxpr:
    """A linear function: ``jaxpr`` maps tangents to tangents, its constvars are
    the residuals (values saved from the forward pass).

    ``all_linear``: every equation reads a tangent. True of what linearize records: an
    equation lands in the linear trace only if one of its inputs is a tracer of that
    trace, and those are the tangent inputs and what was computed from them."""
    __slots__ = ("jaxpr", "residuals")
    all_linear = True

    def __init__(self, jaxpr: Jaxpr, residuals):
        self.jaxpr = jaxpr
        self.residuals = list(residuals)

    def __call__(self, *tangents):
        return eval_jaxpr(self.jaxpr, self.residuals, tangents)

    def __str__(self):
        return str(self.jaxpr)


def linearize_jaxpr(jaxpr, consts, primals, diff_mask, n_linear_outs=None):
    """Primal outputs now, and the LinearJaxpr from tangents of the ``diff_mask`` inputs.

    With ``n_linear_outs`` only the first that many outputs get tangents (the
    rest, e.g. auxiliary outputs, are primal only)."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr, consts = jaxpr.jaxpr, list(jaxpr.consts) + list(consts)
    lin = new_trace("linearize", symbolic=True)
    try:
        tangents = [lin.new_arg(tangent_aval(get_aval(p))) if d else Zero(get_aval(p))
                    for p, d in zip(primals, diff_mask)]
        outs, touts = jvp_eval(jaxpr, consts, primals, tangents)
        if n_linear_outs is not None:
            touts = touts[:n_linear_outs]
        touts = [instantiate(t) for t in touts]
        lin_jaxpr = lin.to_jaxpr(touts)
    finally:
        end_trace(lin)
    return outs, LinearJaxpr(*prune_linear(lin_jaxpr, lin.consts))


def prune_linear(jaxpr: Jaxpr, consts):
    """Dead-code elimination of a linear jaxpr and of the residuals it no longer reads,
    so reverse mode keeps alive only what the backward pass uses."""
    live = set()
    for v in jaxpr.outvars:
        if type(v) is Var:
            live.add(v)
    kept = []
    pruned = False
    for e in reversed(jaxpr.eqns):
        outvars = e.outvars
        if (len(outvars) == 1 and outvars[0] in live) or e.primitive.has_effects or \
                any(v in live for v in outvars):
            kept.append(e)
            for a in e.inputs:
                if type(a) is Var:
                    live.add(a)
        else:
            pruned = True
    constvars = jaxpr.constvars
    if not pruned:
        for v in constvars:
            if v not in live:
                break
        else:
            return jaxpr, consts
    kept.reverse()
    keep = [i for i, v in enumerate(constvars) if v in live]
    return (checked(Jaxpr([constvars[i] for i in keep], jaxpr.invars, kept, jaxpr.outvars),
                    "linearize (pruning)"), [consts[i] for i in keep])


class JVPTracer(Tracer):
    """A value of a ``LinearizeTrace``: its primal (array or outer tracer) and its
    tangent (a tracer of the linear trace, or Zero)."""
    __slots__ = ("primal", "tangent")


_new_jvp_tracer = object.__new__   # JVPTracers are built field by field in _box


class LinearizeTrace(Trace):
    """Linearize while the user's function runs: each primitive applied to this trace's
    tracers runs its JVP rule at once, so the primal is computed (eagerly, or in an
    outer trace) and only the tangent part is recorded, into the linear trace above.

    Equivalent to tracing a jaxpr and then ``linearize_jaxpr``, in one pass: no
    jaxpr of the primal computation is built.
    """
    __slots__ = ("linear",)

    def process(self, prim, args, params):
        primals, tangents = [], []
        zeros = 0
        for x in args:
            if type(x) is JVPTracer and x._trace is self:
                primals.append(x.primal)
                tangents.append(x.tangent)    # never Zero: _box unwraps those
            else:
                primals.append(x)
                tangents.append(None)
                zeros += 1
        if prim.not_differentiable or zeros == len(tangents):
            return bind(prim, *primals, **params)   # no derivative flows: plain values
        if zeros:
            tangents = [Zero(get_aval(x)) if t is None else t
                        for x, t in zip(primals, tangents)]
        if prim.jvp is None:
            raise no_jvp_error(prim)
        internal = _tracing.INTERNAL
        prev, internal.on = internal.on, True      # the rule's eager values stay plain
        try:
            out, tout = prim.jvp(primals, tangents, **params)
        finally:
            internal.on = prev
        if prim.multiple_results:
            return [self._box(o, t) for o, t in zip(out, tout)]
        return self._box(out, tout)

    def _box(self, primal, tangent):
        if type(tangent) is Zero:  # no derivative flows through it: a plain value, which
            # user code sees (an Array, as any eager result it is given)
            return wrap(primal) if type(primal) is np.ndarray else primal
        t = _new_jvp_tracer(JVPTracer)
        t._trace = self
        # a tangent tracer has the primal's type: reuse it rather than build one
        if isinstance(tangent, Tracer):
            t.aval = tangent.aval
            t.val = primal.val if isinstance(primal, Tracer) else primal
        elif isinstance(primal, Tracer):
            t.aval = primal.aval
            t.val = primal.val
        else:
            t.aval = get_aval(primal)
            t.val = primal
        t.ir_var = None
        t.primal = primal
        t.tangent = tangent
        return t

    def to_jaxpr(self, outs):  # pragma: no cover - nothing is recorded in this trace
        raise TypeError("a LinearizeTrace records no jaxpr")


def linearize_fun(fun, primals, diff_mask, n_linear_outs=None, name="linearize", prune=True):
    """``linearize_jaxpr`` of ``fun`` without tracing it first (see ``LinearizeTrace``).

    ``fun`` takes and returns flat lists. Returns (primal outputs, LinearJaxpr).
    ``prune=False`` keeps dead tangent equations: for a caller that transposes the
    result at once, pruning only costs time (the backward pass skips them anyway).
    """
    T = push_trace(LinearizeTrace(trace_depth(), name))
    T.detaches = True      # converting a value to a Python number would lose its tangent
    lin = None
    try:
        lin = new_trace("linearize", symbolic=True)   # tangents never carry values
        T.linear = lin
        args = []
        for p, d in zip(primals, diff_mask):
            if d:
                a = get_aval(p)
                args.append(T._box(p, lin.new_arg(tangent_aval(a))))
            else:
                args.append(p)
        outs = list(fun(*args))
        prim_outs, touts = [], []
        for o in outs:
            if type(o) is JVPTracer and o._trace is T:
                prim_outs.append(o.primal)
                touts.append(o.tangent)
            else:
                if isinstance(o, Tracer) and o._trace is T:  # pragma: no cover
                    raise AssertionError("unexpected tracer")
                prim_outs.append(o)
                touts.append(Zero(get_aval(o)))
        if n_linear_outs is not None:
            touts = touts[:n_linear_outs]
        touts = [instantiate(t) for t in touts]
        lin_jaxpr = lin.to_jaxpr(touts)
    finally:
        if lin is not None:
            end_trace(lin)
        end_trace(T)
    if not prune:
        return prim_outs, LinearJaxpr(lin_jaxpr, lin.consts)
    return prim_outs, LinearJaxpr(*prune_linear(lin_jaxpr, lin.consts))


def partial_eval(closed: ClosedJaxpr, known):
    """IR -> IR split of ``closed`` given a mask of known inputs.

    Returns ``(known_jaxpr, unknown_jaxpr, out_known)``: ``known_jaxpr`` maps the
    known inputs to the known outputs followed by residuals; ``unknown_jaxpr``
    maps (residuals, unknown inputs) to the unknown outputs; ``out_known`` says
    which outputs are known.
    """
    avals = closed.in_avals
    K = new_trace("partial_eval (known)")
    try:
        kargs = [K.new_arg(a) if k else None for a, k in zip(avals, known)]
        U = new_trace("partial_eval (unknown)")
        try:
            args = [x if k else U.new_arg(a) for x, a, k in zip(kargs, avals, known)]
            outs = evaluate(closed.jaxpr, closed.consts, args,
                            lambda e, ins: bind_expanding(e.primitive, ins, e.params))
            out_known = [not (isinstance(o, Tracer) and o._trace is U) for o in outs]
            u_outs = [o for o, k in zip(outs, out_known) if not k]
            u_jaxpr = U.to_jaxpr(u_outs)
        finally:
            end_trace(U)
        # residuals owned by the known trace become its outputs and inputs of the unknown
        res_from_known = [isinstance(c, Tracer) and c._trace is K for c in U.consts]
        k_outs = [o for o, k in zip(outs, out_known) if k]
        k_outs += [c for c, r in zip(U.consts, res_from_known) if r]
        k_jaxpr = K.to_jaxpr(k_outs)
    finally:
        end_trace(K)
    res_vars = [v for v, r in zip(u_jaxpr.constvars, res_from_known) if r]
    other_vars = [v for v, r in zip(u_jaxpr.constvars, res_from_known) if not r]
    other_consts = [c for c, r in zip(U.consts, res_from_known) if not r]
    unknown = checked(ClosedJaxpr(Jaxpr(other_vars, res_vars + u_jaxpr.invars, u_jaxpr.eqns,
                                        u_jaxpr.outvars), other_consts),
                      "partial_eval (unknown part)")
    return ClosedJaxpr(k_jaxpr, K.consts), unknown, out_known
