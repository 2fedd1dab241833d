"""Checkify: evaluate a jaxpr threading an error value through it (IR -> IR).

The error value is a pytree (``primitives.checks_error.Error``: per kind of error a
flag, the code of the first site that failed and that site's payload). Each equation
goes through its primitive's ``checkify`` rule,
``rule(error, enabled, *args, **params) -> (error, out)``, which applies the primitive
and may add a check (``enabled``: the set of error classes asked for); a primitive with
no rule is applied as it is. The rules (NaN, division, indexing, control flow, calls,
``check`` itself) are attached to the primitives by ``primitives.checks``; a call-like
primitive without one (custom_jvp/custom_vjp calls) keeps its rules and has its body's
errors computed beside it (``beside``).
``checkify_eval`` runs eagerly or records into an outer trace; ``checkify_jaxpr`` is the
same walk traced into a new jaxpr whose first inputs and outputs are the error's leaves.

>>> from jaxpr_ir import ShapedArray
>>> from functrans.tracing import trace_to_jaxpr
>>> from functrans.primitives.elementwise import add
>>> j, c, _ = trace_to_jaxpr(lambda x: [add(x, x)], [ShapedArray((), "float64")])
>>> err, outs = checkify_eval(j, c, [1.5], (), frozenset())
>>> err, [float(o) for o in outs]
((), [3.0])
"""
from __future__ import annotations

from typing import Any, Callable

from jaxpr_ir import ClosedJaxpr, Literal
from ..tracing import bind, eval_jaxpr, get_aval, trace_to_jaxpr
from ..tree_def import tree_flatten, tree_unflatten

__all__ = ["checkify_eval", "checkify_jaxpr", "beside"]


def _no_rule(prim, error, enabled, *args, **params):
    """No rule: applied as it is; a call-like primitive (``call_param``: custom_jvp/vjp
    calls...) whose body takes its operands gets its body's errors ``beside`` it."""
    if not prim.subjaxpr_params:
        return error, bind(prim, *args, **params)
    body = params.get(prim.call_param) if prim.call_param else None
    if body is not None and len(body.in_avals) == len(args) and all(
            a.shape == get_aval(x).shape and a.dtype == get_aval(x).dtype
            for a, x in zip(body.in_avals, args)):
        return beside(prim, body, error, enabled, args, params)
    raise NotImplementedError(
        f"checkify: primitive '{prim.name}' holds sub-jaxprs but has no checkify rule, "
        "so the checks inside it cannot be threaded out")


def beside(prim, body: ClosedJaxpr, error, enabled, args, params):
    """The outputs from ``prim`` itself (its custom rules stay), the errors from
    ``body`` (taking the same operands) evaluated beside it, only if the body can fail."""
    leaves, tree = tree_flatten(error)
    checked, out_tree = checkify_jaxpr(body, enabled, error)
    if out_tree != tree:
        got = eval_jaxpr(checked, [], list(leaves) + list(args))
        error = tree_unflatten(out_tree, got[:out_tree.num_leaves])
    return error, bind(prim, *args, **params)


def checkify_eval(jaxpr, consts, args, error: Any, enabled: frozenset):
    """Evaluate ``jaxpr`` on ``args`` with every primitive's checkify rule, starting from
    ``error``. Returns ``(error, outs)``."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr, consts = jaxpr.jaxpr, list(jaxpr.consts) + list(consts)
    env = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for eqn in jaxpr.eqns:
        vals = [a.val if type(a) is Literal else env[a] for a in eqn.inputs]
        prim = eqn.primitive
        rule = getattr(prim, "checkify", None)
        if rule is None:
            error, out = _no_rule(prim, error, enabled, *vals, **eqn.params)
        else:
            error, out = rule(error, enabled, *vals, **eqn.params)
        if prim.multiple_results:
            env.update(zip(eqn.outvars, out))
        else:
            env[eqn.outvars[0]] = out
    return error, [a.val if type(a) is Literal else env[a] for a in jaxpr.outvars]


def checkify_jaxpr(closed: ClosedJaxpr, enabled: frozenset, error: Any, at: int = 0,
                   out_at: int = 0, extra: Callable | None = None):
    """IR -> IR: ``closed`` with the leaves of an error shaped as ``error`` (a pytree of
    values or avals) inserted as inputs before input ``at`` and as outputs before output
    ``out_at``. ``extra(error, ins, outs) -> error``, if given, runs after the body (a
    while loop's body checks its condition on the new carry this way).
    Returns ``(new ClosedJaxpr, the output error's treedef)``."""
    leaves, tree = tree_flatten(error)
    err_avals = [get_aval(x) for x in leaves]
    n = len(err_avals)
    in_avals = list(closed.in_avals)
    avals = in_avals[:at] + err_avals + in_avals[at:]
    box = []

    def fun(*flat):
        err = tree_unflatten(tree, list(flat[at:at + n]))
        ins = list(flat[:at]) + list(flat[at + n:])
        err, outs = checkify_eval(closed.jaxpr, closed.consts, ins, err, enabled)
        if extra is not None:
            err = extra(err, ins, outs)
        out_leaves, out_tree = tree_flatten(err)
        box.append(out_tree)
        return list(outs[:out_at]) + list(out_leaves) + list(outs[out_at:])

    j, consts, _ = trace_to_jaxpr(fun, avals, name="checkify")
    return ClosedJaxpr(j, consts), box[0]
