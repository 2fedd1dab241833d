"""``custom_vmap_call``: a function with a user-defined batching rule
(``functrans.custom_batching.custom_vmap``), as JAX's ``custom_vmap_call``.

Operands: ``num_consts`` closed-over values, then the function's flat arguments. Params:
``call_jaxpr`` (the const-free body, what runs unbatched and what ``jit`` inlines),
``rule`` and ``name``. ``rule`` is a flat rule object:
``rule(axis_size, in_batched, *args) -> (outs, out_batched)`` over the flat arguments
(the consts are not passed: the user's rule closes over them itself), batched arguments
with their batch axis first, ``out_batched`` a list of bools; its ``name`` is the user's
rule's name (for errors). The param is the rule's index in this module's table
(``register_rule``), so jaxprs print.

- batching: the rule runs on the batched arguments (any Python: it is not traced);
  outputs it marks batched carry their batch axis first.
- JVP (JAX's): one ``custom_vmap_call`` on (primals, tangents) whose body is the JVP of
  the body and whose rule is the JVP of the rule, vmapped over what only the primals or
  only the tangents batch. Reverse mode would have to split that equation into a known
  primal part and a linear part, which it cannot: linearising raises JAX's ValueError
  (combine with ``custom_vjp`` outside for reverse mode).
- no transpose (nothing linear is ever staged), no lowering: ``jit`` inlines the body.

>>> custom_vmap_call_p.call_param
'call_jaxpr'
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxpr_ir import ClosedJaxpr
from ..tracing import SymbolicTrace, Tracer, eval_jaxpr, get_aval, trace_to_jaxpr
from ..transforms.jvp import jvp_eval
from ..transforms.vmap import vmap_eval
from .base import Primitive, Zero, instantiate, move_batch_axis, tangent_aval
from .control_flow_common import check_operands
from .custom import hoist_many

__all__ = ["custom_vmap_call_p", "register_rule"]

# rule objects live in this table and equations name them by index (a printable param,
# as the callbacks' functions); one entry per key, so retracing does not grow it
_RULES: list = []
_KEYS: dict = {}


def register_rule(rule: Any, key: Any = None) -> int:
    """The table index of ``rule`` (the one already registered under ``key`` if any)."""
    try:
        hit = _KEYS.get(key) if key is not None else None
    except TypeError:                  # an unhashable key: a new entry
        key, hit = None, None
    if hit is None:
        _RULES.append(rule)
        hit = len(_RULES) - 1
        if key is not None:
            _KEYS[key] = hit
    return hit

custom_vmap_call_p = Primitive("custom_vmap_call", multiple_results=True)
custom_vmap_call_p.call_param = "call_jaxpr"          # jit inlines the body
custom_vmap_call_p.subjaxpr_params = ("call_jaxpr",)


def _aval(*avals, call_jaxpr, num_consts, rule, name):
    check_operands(f"custom_vmap_call {name}", avals, call_jaxpr)
    return list(call_jaxpr.out_avals)


def _impl(*args, call_jaxpr, num_consts, rule, name):
    return [np.asarray(o) for o in eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, list(args))]


# --------------------------------------------------------------------------- batching

def _batch(args, dims, *, call_jaxpr, num_consts, rule, name):
    if any(d is not None for d in dims[:num_consts]):
        raise NotImplementedError(
            f"custom_vmap function {name!r} closes over a value that is batched by an "
            "enclosing vmap; its vmap rule cannot see it. Pass that value as an argument.")
    args, dims = args[num_consts:], dims[num_consts:]
    size = {get_aval(x).shape[d] for x, d in zip(args, dims) if d is not None}.pop()
    args = [x if d is None else move_batch_axis(x, d, 0, size) for x, d in zip(args, dims)]
    rule = _RULES[rule]
    outs, out_batched = rule(int(size), [d is not None for d in dims], *args)
    want = call_jaxpr.out_avals
    if len(outs) != len(want) or len(out_batched) != len(want):
        raise ValueError(f"custom vmap rule ({rule.name}) of {name!r} returned "
                         f"{len(outs)} outputs and {len(out_batched)} batching flags for "
                         f"a function with {len(want)} outputs")
    for i, (o, b, w) in enumerate(zip(outs, out_batched, want)):
        a = get_aval(o)
        shape = (size,) + tuple(w.shape) if b else tuple(w.shape)
        if tuple(a.shape) != shape or np.dtype(a.dtype) != np.dtype(w.dtype):
            raise ValueError(
                f"custom vmap rule ({rule.name}) of {name!r}: output {i} has type "
                f"{a.str_short()} but, {'batched' if b else 'unbatched'}, it must be "
                f"{w.update(shape=shape).str_short()} (batch size {size})")
    return list(outs), [0 if b else None for b in out_batched]


# --------------------------------------------------------------------------- JVP

class JvpRule:
    """The vmap rule of the JVP of a custom_vmap function, from the function's rule
    (JAX's ``jvp_of_rule_rule``): on (primals, tangents) both batched it is the JVP of
    the rule; what only the primals or only the tangents batch is vmapped over, the
    output batch axes found by that vmap."""

    def __init__(self, rule: Any, n_args: int):
        self.rule, self.n = rule, n_args
        self.name = rule.name

    def __repr__(self):
        return f"jvp({self.rule!r})"

    def __call__(self, axis_size, in_batched, *args):
        n, rule = self.n, self.rule
        ps, ts = list(args[:n]), list(args[n:])
        pb, tb = list(in_batched[:n]), list(in_batched[n:])
        if any(p and t for p, t in zip(pb, tb)) and any(p != t for p, t in zip(pb, tb)):
            # the rule's batch axis and a vmap over the extra-batched ones would be two
            # axes for one batch (a (size, size) result): batch the partners instead
            for i in range(n):
                if pb[i] != tb[i]:
                    if pb[i]:
                        ts[i] = move_batch_axis(ts[i], None, 0, axis_size)
                    else:
                        ps[i] = move_batch_axis(ps[i], None, 0, axis_size)
                    pb[i] = tb[i] = True
        both = [p and t for p, t in zip(pb, tb)]
        # the per-example inputs of the JVP of the rule (batched where both are: that
        # axis is the rule's own); extra axes are stripped for tracing and vmapped over
        extra = [(p and not t) for p, t in zip(pb, tb)] + [(t and not p) for p, t in zip(pb, tb)]
        flat = ps + ts
        avals = [get_aval(x) for x in flat]
        avals = [a.update(shape=a.shape[1:]) if e else a for a, e in zip(avals, extra)]
        box = {}

        def jvp_fun(*xs):
            def primal_rule(*p):
                outs, ob = rule(axis_size, both, *p)
                box["batched"] = list(ob)
                return list(outs)
            j, c, _ = trace_to_jaxpr(primal_rule, avals[:n], name=f"custom_vmap rule ({self.name})")
            outs, touts = jvp_eval(j, c, list(xs[:n]), list(xs[n:]))
            return list(outs) + [instantiate(t) for t in touts]

        if not any(extra):
            outs = jvp_fun(*flat)
            dims = [None] * len(outs)
        else:
            j, c, _ = trace_to_jaxpr(jvp_fun, avals, name=f"jvp of custom_vmap rule ({self.name})")
            outs, dims = vmap_eval(j, c, flat, [0 if e else None for e in extra], axis_size)
            outs = [o if d is None else move_batch_axis(o, d, 0, axis_size)
                    for o, d in zip(outs, dims)]
        mutual = box["batched"]
        ob = [b or d is not None for b, d in zip(mutual * 2, dims)]
        return outs, ob


def _linearize_error(name):
    return ValueError(
        "Linearization failed to produce known values for all output primals. This is "
        f"typically caused by attempting to differentiate a function (here the custom_vmap "
        f"function {name!r}) that uses custom_vmap in reverse mode: custom_vmap functions "
        "do not support reverse-mode autodiff. To define both their vmap and reverse-mode "
        "derivative, put a custom_vjp outside the custom_vmap.")


def _jvp(primals, tangents, *, call_jaxpr, num_consts, rule, name):
    if any(type(t) is not Zero for t in tangents[:num_consts]):
        raise TypeError(
            f"custom_vmap function {name!r} is being differentiated with respect to a value "
            "it closes over; pass that value as an argument instead.")
    if any(isinstance(t, Tracer) and type(t._trace) is SymbolicTrace for t in tangents):
        raise _linearize_error(name)        # linearize: primal outputs would be staged
    nc = num_consts
    n = len(primals) - nc
    in_avals = call_jaxpr.in_avals

    def jvp_body(*xs):
        consts, ps, ts = xs[:nc], xs[nc:nc + n], xs[nc + n:]
        outs, touts = jvp_eval(call_jaxpr.jaxpr, call_jaxpr.consts, list(consts) + list(ps),
                               [Zero(a) for a in in_avals[:nc]] + list(ts))
        return list(outs) + [instantiate(t) for t in touts]

    avals = list(in_avals) + [tangent_aval(a) for a in in_avals[nc:]]
    j, c, _ = trace_to_jaxpr(jvp_body, avals, name=f"jvp of custom_vmap({name})")
    # constants the JVP rules made become leading operands: the body stays const-free
    (body,), consts = hoist_many([ClosedJaxpr(j, c)])
    ts = [instantiate(t) for t in tangents[nc:]]
    outs = custom_vmap_call_p.bind(*consts, *primals, *ts, call_jaxpr=body,
                                   num_consts=len(consts) + nc, rule=register_rule(JvpRule(_RULES[rule], n), ("jvp", rule, n)),
                                   name=name)
    m = len(call_jaxpr.out_avals)
    return outs[:m], outs[m:]


custom_vmap_call_p.def_rules(abstract_eval=_aval, impl=_impl, batch=_batch, jvp=_jvp)
