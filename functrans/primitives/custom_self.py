"""``custom_self_call``: a custom function called from its own rule.

A ``custom_vjp`` function called from its own fwd or bwd, or a ``custom_jvp`` one from
its own JVP rule, with the static arguments and argument types of the call the rule is
for (``return f(x), ...`` is the common idiom): tracing the rule again there would never
end, so the rule's jaxpr records this marker instead, a call of the function's body.
When the enclosing ``custom_vjp_call`` / ``custom_jvp_call`` equation is differentiated
it evaluates its rule with ``run_rule``, which binds each marker at the top of the rule
as that equation itself (the same bodies and rules, on the marker's arguments); so does
the backward pass with bwd (``custom_vjp_lin``'s transpose). One
level of the recursion is unrolled per order of differentiation, so the primal the rule
computes keeps the user's derivative at every order (JAX retraces the rule instead, to
the same effect). Anywhere else (nested in a loop or a jit inside the rule) the marker
is a plain call of the body when evaluated, and differentiating it raises: the body's
derivative is not the user's (JAX retraces and gets the rule's).

Its batch rule is set by functrans/primitives/custom.py, which has the helpers.

>>> custom_self_call_p.call_param
'call_jaxpr'
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import Literal
from jaxpr_ir.evaluate import evaluate
from ..tracing import bind, eval_jaxpr
from ..transforms.transpose import backward_pass
from .base import Primitive, Zero, aval, instantiate
from .control_flow_common import check_operands

__all__ = ["custom_self_call_p", "run_rule", "zero_tangent_outputs"]

custom_self_call_p = Primitive("custom_self_call", multiple_results=True)
custom_self_call_p.call_param = "call_jaxpr"          # inlined by jit like the others
custom_self_call_p.subjaxpr_params = ("call_jaxpr",)


def _self_call_aval(*avals, call_jaxpr, num_consts, name):
    check_operands(f"custom_self_call {name}", avals, call_jaxpr)
    return list(call_jaxpr.out_avals)


def _self_call_impl(*args, call_jaxpr, num_consts, name):
    return [np.asarray(o) for o in eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, list(args))]


def _self_call_jvp(primals, tangents, *, call_jaxpr, num_consts, name):
    # run_rule replaces every marker at the top of a rule before the rule is
    # differentiated, so a marker met here sits inside a jit, cond or loop of the rule:
    # differentiating the body instead of the function's own rule would give the body's
    # derivative where the user defined another (a silent wrong number), so refuse
    raise NotImplementedError(
        f"differentiating the rule of custom function {name!r} at higher order met a call "
        f"of {name!r} inside a jit, cond or loop within that rule; functrans routes such "
        "a self-call through the function's own rule only when the rule calls it "
        "directly. Call it outside the jit/control flow in the rule (or call the "
        "function's undecorated body if its plain derivative is what you want).")


def _self_call_transpose(cts, *args, call_jaxpr, num_consts, name):
    # a self-call on bwd's cotangents, met when bwd is used transposed (forward mode
    # through a custom_vjp): the transpose of the body, as before the call was marked
    return backward_pass(call_jaxpr.jaxpr, call_jaxpr.consts, list(args), list(cts))


custom_self_call_p.def_rules(abstract_eval=_self_call_aval, impl=_self_call_impl,
                             jvp=_self_call_jvp, transpose=_self_call_transpose)


def _types(xs):
    return [(a.shape, np.dtype(a.dtype)) for a in xs]


def zero_tangent_outputs(rule, n_primals, zero):
    r"""The equation outputs of a custom_jvp rule jaxpr (inputs: ``n_primals`` primals, then
    one tangent per primal) that are zero when the tangents marked in ``zero`` are: those
    computed from zero tangents (and primals) only, through single-result primitives that
    have a transpose rule, that is, linear in their tangent operands (a product of a zero
    tangent and an infinite partial is 0, not NaN). JAX gives such a rule instantiated
    zeros, so its jvp of ``xlogy(x, y)`` in x alone at y = 0 is NaN while its grad is
    -inf: reverse mode drops those terms when it transposes the rule; forward mode now
    drops them too. An operand from a nonzero tangent, or a primitive with no transpose
    (a comparison, ``exp``, a loop), makes its outputs real values (zeros instantiated),
    as JAX computes them. (A rule must be linear in its tangents for reverse mode; one
    dividing by a tangent, say, is not, and its zero-tangent terms are taken as zero.)

    >>> from jaxpr_ir import parse
    >>> j = parse("{ lambda ; x:f64[] y:f64[] tx:f64[] ty:f64[]. let\n"
    ...           "a:f64[] = log y\n b:f64[] = mul tx a\n c:f64[] = div x y\n"
    ...           "d:f64[] = mul ty c\n e:f64[] = add b d in (e,) }")
    >>> sorted(v.hint for v in zero_tangent_outputs(j, 2, [False, True]))
    ['d']
    """
    tangents = rule.invars[n_primals:2 * n_primals]
    zeros = {v for v, z in zip(tangents, zero) if z}
    live = {v for v, z in zip(tangents, zero) if not z}   # values a nonzero tangent reaches
    skipped = set()
    for eqn in rule.eqns:
        ins = [a for a in eqn.inputs if type(a) is not Literal]
        if any(a in live for a in ins):
            live.update(eqn.outvars)
        elif any(a in zeros for a in ins):
            p = eqn.primitive
            if (p.transpose is not None and not p.multiple_results
                    and not p.subjaxpr_params and p.call_param is None):
                zeros.update(eqn.outvars)
                skipped.update(eqn.outvars)
            else:
                live.update(eqn.outvars)
    return skipped


def run_rule(rule, ins, prim, params, n_primals=None):
    """The outputs of the const-free rule jaxpr ``rule`` of the equation
    ``prim(*ins[:num_consts], *args, **params)`` on ``ins``; each top-level
    ``custom_self_call`` whose arguments and results have that equation's types is bound
    as that equation, on its consts and the marker's arguments. For a JVP rule
    (``n_primals`` primals, then their tangents) ``ins`` may hold symbolic ``Zero``
    tangents: the equations ``zero_tangent_outputs`` names are not run and give ``Zero``
    (the tangent outputs may be ``Zero``); the others get instantiated zeros."""
    zero = [type(t) is Zero for t in ins[n_primals:]] if n_primals is not None else []
    skip = zero_tangent_outputs(rule.jaxpr, n_primals, zero) if any(zero) else ()
    nc = params["num_consts"]
    consts = list(ins[:nc])
    body = params["call_jaxpr"]
    want_in, want_out = _types(body.in_avals[nc:]), _types(body.out_avals)

    def run_eqn(eqn, vals):
        if skip and eqn.outvars[0] in skip:
            return Zero(eqn.outvars[0].aval)
        vals = [instantiate(v) for v in vals]
        if eqn.primitive is custom_self_call_p:
            args = vals[eqn.params["num_consts"]:]
            if (_types([aval(a) for a in args]) == want_in
                    and _types(eqn.params["call_jaxpr"].out_avals) == want_out):
                return prim.bind(*consts, *args, **params)
        return bind(eqn.primitive, *vals, **eqn.params)

    return evaluate(rule.jaxpr, rule.consts, list(ins), run_eqn)
