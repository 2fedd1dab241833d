"""Forward mode: evaluate a jaxpr with each primitive's JVP rule.

``jvp_eval`` works on whatever it is given: concrete arrays (eager forward mode),
tracers of outer traces, or tangents that are tracers of a linear trace (which
is how ``linearize`` stages only the tangent part). ``jvp_jaxpr`` is the same
walk traced into a new jaxpr: IR -> IR.

>>> import numpy as np
>>> from jaxpr_ir import ShapedArray
>>> from functrans.tracing import trace_to_jaxpr
>>> from functrans.primitives.elementwise import sin
>>> j, c, _ = trace_to_jaxpr(lambda x: [sin(x)], [ShapedArray((), "float64")])
>>> out, t = jvp_eval(j, c, [np.float64(0.0)], [np.float64(1.0)])
>>> float(t[0])
1.0
"""
from __future__ import annotations

from jaxpr_ir import ClosedJaxpr, Literal
from .ad_util import Zero, aval, instantiate, tangent_aval
from ..tracing import Trace, Tracer, bind, outermost_trace, trace_depth, trace_to_jaxpr


def no_jvp_error(prim):
    return NotImplementedError(f"primitive '{prim.name}' has no JVP rule, so it cannot be "
                               "differentiated")


def bind_expanding(prim, args, params):
    """``bind``, except that under a trace an equation of constants only whose output is
    larger than its inputs (a broadcast or an iota of literals) is recorded in the
    outermost trace, as ``broadcast_constant`` first recorded it, instead of being
    materialised into an array constant of the trace re-evaluating it: a jitted
    special function's hundred broadcast coefficients became 1M-value inputs of its
    eager gradient's compiled calls (copied at each call: 0.9 s of erfc's 1 s).

    >>> from functrans.primitives.basic import broadcast_in_dim_p
    >>> bind_expanding(broadcast_in_dim_p, (2.0,), dict(shape=(2,), broadcast_dimensions=()))
    Array([2., 2.], dtype=float64, weak_type=True)
    """
    if trace_depth() and not prim.has_effects and not any(isinstance(x, Tracer) for x in args):
        outer = outermost_trace()
        # a plain recording trace only: in a linear (symbolic) trace the constant would
        # pass for a tangent, and linearize's own trace binds eagerly anyway
        if type(outer) is Trace:
            size_in = sum(aval(x).size for x in args)
            if sum(a.size for a in _out_avals(prim, args, params)) > max(size_in, 1):
                return outer.process(prim, args, params)
    return bind(prim, *args, **params)


def _out_avals(prim, args, params):
    outs = prim.abstract_eval(*[aval(x) for x in args], **params)
    return outs if prim.multiple_results else [outs]


def jvp_eqn(prim, primals, tangents, params):
    """Primal and tangent outputs of one equation."""
    if all(type(t) is Zero for t in tangents):
        out = bind_expanding(prim, primals, params)
        if prim.multiple_results:
            return out, [Zero(tangent_aval(aval(o))) for o in out]
        return out, Zero(tangent_aval(aval(out)))
    if prim.not_differentiable:
        out = bind(prim, *primals, **params)
        if prim.multiple_results:
            return out, [Zero(aval(o)) for o in out]
        return out, Zero(aval(out))
    if prim.jvp is None:
        raise no_jvp_error(prim)
    return prim.jvp(primals, tangents, **params)


def jvp_eval(jaxpr, consts, primals, tangents):
    """Evaluate ``jaxpr`` on primals and tangents (``Zero`` allowed); consts have zero tangent."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr, consts = jaxpr.jaxpr, list(jaxpr.consts) + list(consts)
    penv, tenv = {}, {}
    for v, x in zip(jaxpr.constvars, consts):
        penv[v] = x
    for v, x, t in zip(jaxpr.invars, primals, tangents):
        penv[v] = x
        tenv[v] = t

    def read(a):
        return a.val if type(a) is Literal else penv[a]

    def read_t(a):
        if type(a) is Literal:
            return Zero(a.aval)
        t = tenv.get(a)
        return Zero(a.aval) if t is None else t

    for eqn in jaxpr.eqns:
        ps = [read(a) for a in eqn.inputs]
        ts = [read_t(a) for a in eqn.inputs]
        out, tout = jvp_eqn(eqn.primitive, ps, ts, eqn.params)
        if eqn.primitive.multiple_results:
            for v, o, t in zip(eqn.outvars, out, tout):
                penv[v] = o
                tenv[v] = t
        else:
            penv[eqn.outvars[0]] = out
            tenv[eqn.outvars[0]] = tout
    return [read(a) for a in jaxpr.outvars], [read_t(a) for a in jaxpr.outvars]


def jvp_jaxpr(closed: ClosedJaxpr, instantiate_zeros: bool = True) -> ClosedJaxpr:
    """IR -> IR: a jaxpr taking (*primals, *tangents) and returning (*primals_out, *tangents_out).

    Every input gets a tangent input; zero tangent outputs are made into real
    zeros when ``instantiate_zeros``. Loops keep primals and tangents in separate
    loops (``Trace.staged``), so that ``partial_eval`` of the result with the tangents
    unknown gives a linear jaxpr: jvp_jaxpr + partial_eval is linearize.
    """
    n = len(closed.jaxpr.invars)
    avals = closed.in_avals + [tangent_aval(a) for a in closed.in_avals]

    def fun(*args):
        outs, touts = jvp_eval(closed.jaxpr, closed.consts, args[:n], args[n:])
        if instantiate_zeros:
            touts = [instantiate(t) for t in touts]
        return list(outs) + list(touts)

    j, consts, _ = trace_to_jaxpr(fun, avals, name="jvp_jaxpr", staged=True)
    return ClosedJaxpr(j, consts)
