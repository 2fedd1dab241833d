"""User-defined derivatives and rematerialisation as primitives.

- ``custom_jvp_call``: call ``call_jaxpr``; its JVP evaluates ``jvp_jaxpr``
  (the user's rule, traced) instead of differentiating the body.
- ``custom_vjp_call``: call ``call_jaxpr``; its JVP runs ``fwd_jaxpr`` (outputs
  and residuals) and stages ``custom_vjp_lin``, a linear primitive whose
  transpose is the user's ``bwd_jaxpr``.
- ``checkpoint``: call ``jaxpr``; its JVP stages the tangent computation as one
  more ``checkpoint`` reading only the body's inputs (and, under a policy, the
  values it allows to be saved), so reverse mode recomputes instead of saving.
- ``stop_gradient``: identity whose derivative is zero.

Sub-jaxprs carry no consts: closed-over values are leading operands
(``num_consts`` of them). The call-like ones set ``call_param`` so that
``jaxpr_ir.passes.inline_calls`` removes them before a backend sees them.

>>> custom_jvp_call_p.call_param
'call_jaxpr'
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxpr_ir import ClosedJaxpr, DeferredJaxpr, Jaxpr, Literal, Var, dtype_kind
from ..tracing import Tracer, checked, eval_jaxpr, own_constants, trace_to_jaxpr
from ..transforms.jvp import jvp_eqn, jvp_eval
from ..transforms.transpose import backward_pass, transpose_jaxpr
from ..transforms.vmap import batched_aval, vmap_eval
from ..array import host_array
from ..errors import UnexpectedTracerError
from ..tree_util import tree_map
from .base import (Primitive, Zero, aval, instantiate, is_undefined, move_batch_axis,
                   not_mapped_size, tangent_aval)
from .control_flow_common import BodyCache, check_operands
from .body_jvp import dce_top, holds_primitive, jvp_primal_body
from .custom_hoist import hoist_many
from .custom_self import custom_self_call_p, run_rule
from .reductions import reduce_sum
from .structural import stop_gradient_p

__all__ = ["stop_gradient"]


# --------------------------------------------------------------------------- helpers

def _run(closed, args):
    return eval_jaxpr(closed.jaxpr, closed.consts, list(args))


def _np_outs(outs):
    return [np.asarray(o) for o in outs]


class ClosedOverTracerError(UnexpectedTracerError, TypeError):
    """A custom rule's function differentiated with respect to a value it closes over: an
    UnexpectedTracerError as in JAX (a TypeError too, as functrans raised before)."""


def _closed_over_error(name, kind):
    return ClosedOverTracerError(
        f"{kind} function '{name}' is being differentiated with respect to a value it "
        "closes over; its rule only covers its explicit arguments. Pass that value as an "
        "argument instead of capturing it in a closure.")


def _batch_closed(closed, dims, size, out_dims_to, sum_unbatched=None):
    """vmap of a const-free body with every output at ``out_dims_to``; returns
    (const-free batched body, hoisted consts). ``sum_unbatched[i]`` set: output i is
    summed over the batch axis instead (cotangents of unbatched inputs)."""
    avals = [batched_aval(a, d, size) for a, d in zip(closed.in_avals, dims)]

    def fun(*args):
        outs, ods = vmap_eval(closed.jaxpr, closed.consts, args, dims, size)
        res = []
        for i, (o, d, t) in enumerate(zip(outs, ods, out_dims_to)):
            if sum_unbatched is not None and sum_unbatched[i]:
                res.append(o if d is None else reduce_sum(o, (d,)))
            else:
                res.append(move_batch_axis(o, d, t, size))
        return res

    j, consts, _ = trace_to_jaxpr(fun, avals, name="vmap")
    (h,), hc = hoist_many([ClosedJaxpr(j, consts)])
    return h, hc


def _front(args, dims):
    """(size, args, dims) with every batched operand's batch axis moved to 0."""
    size = not_mapped_size(args, dims)
    args = [x if d is None else move_batch_axis(x, d, 0, size) for x, d in zip(args, dims)]
    return size, args, [None if d is None else 0 for d in dims]


def _prepend_inputs(closed, avals):
    """The body taking extra, unread leading inputs of the given avals."""
    j = closed.jaxpr
    return checked(ClosedJaxpr(Jaxpr(j.constvars, [Var(a) for a in avals] + j.invars, j.eqns,
                                     j.outvars), closed.consts), "custom rule vmap (extra inputs)")


# --------------------------------------------------------------------------- stop_gradient

def stop_gradient(x: Any) -> Any:
    """The identity on values, with derivative zero (a pytree of arrays is mapped leafwise).

    >>> import functrans as ft
    >>> float(ft.grad(lambda x: x * ft.stop_gradient(x))(3.0))
    3.0
    """
    def one(v):
        if not isinstance(v, Tracer):
            return host_array(v)       # eagerly nothing can be differentiated
        if dtype_kind(v.dtype) not in "fc":
            return v
        return stop_gradient_p.bind(v)
    return tree_map(one, x)


# ------------------------------------------------ custom_self_call (primitives/custom_self.py)

def _self_call_batch(args, dims, *, call_jaxpr, num_consts, name):
    size, args, dims = _front(args, dims)
    n_out = len(call_jaxpr.out_avals)
    bj, c = _batch_closed(call_jaxpr, dims, size, [0] * n_out)
    outs = custom_self_call_p.bind(*c, *args, call_jaxpr=bj, num_consts=num_consts + len(c),
                                   name=name)
    return outs, [0] * n_out


custom_self_call_p.def_rules(batch=_self_call_batch)


# --------------------------------------------------------------------------- custom_jvp_call

# ``jvp_jaxpr``, the rule, maps (consts, args, their tangents) to (outputs, tangents); it
# may be a DeferredJaxpr, traced when the equation is differentiated (custom_rules): it
# is no sub-jaxpr the passes see, since the equation runs only ``call_jaxpr``
custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)
custom_jvp_call_p.call_param = "call_jaxpr"
custom_jvp_call_p.subjaxpr_params = ("call_jaxpr",)


def jvp_rule_of(jvp_jaxpr) -> ClosedJaxpr:
    """The rule jaxpr of a custom_jvp_call (traced now if it was deferred)."""
    return jvp_jaxpr.force() if isinstance(jvp_jaxpr, DeferredJaxpr) else jvp_jaxpr


def _custom_jvp_aval(*avals, call_jaxpr, jvp_jaxpr, num_consts, name):
    check_operands(f"custom_jvp_call {name}", avals, call_jaxpr)
    return list(call_jaxpr.out_avals)


def _custom_jvp_impl(*args, call_jaxpr, jvp_jaxpr, num_consts, name):
    return _np_outs(_run(call_jaxpr, args))


def _custom_jvp_jvp(primals, tangents, *, call_jaxpr, jvp_jaxpr, num_consts, name):
    if any(type(t) is not Zero for t in tangents[:num_consts]):
        raise _closed_over_error(name, "custom_jvp")
    outs = run_rule(jvp_rule_of(jvp_jaxpr), list(primals) + list(tangents), custom_jvp_call_p,
                    dict(call_jaxpr=call_jaxpr, jvp_jaxpr=jvp_jaxpr, num_consts=num_consts,
                         name=name), n_primals=len(primals))   # Zero tangents stay symbolic
    n = len(call_jaxpr.out_avals)
    return [instantiate(o) for o in outs[:n]], outs[n:]


def _custom_jvp_batch(args, dims, *, call_jaxpr, jvp_jaxpr, num_consts, name):
    size, args, dims = _front(args, dims)
    n_out = len(call_jaxpr.out_avals)
    cj, c1 = _batch_closed(call_jaxpr, dims, size, [0] * n_out)
    if isinstance(jvp_jaxpr, DeferredJaxpr) and not jvp_jaxpr.forced:
        # the rule is not traced yet: its batched version is deferred too
        jj = _deferred_batched_rule(jvp_jaxpr, dims, size, n_out, len(c1) + len(args),
                                    [aval(c) for c in c1])
        outs = custom_jvp_call_p.bind(*c1, *args, call_jaxpr=cj, jvp_jaxpr=jj,
                                      num_consts=num_consts + len(c1), name=name)
        return outs, [0] * n_out
    jvp_jaxpr = jvp_rule_of(jvp_jaxpr)
    jj, c2 = _batch_closed(jvp_jaxpr, list(dims) * 2, size, [0] * (2 * n_out))
    # new leading consts: c1 (read by the call), c2 (read by the rule)
    a1 = [aval(c) for c in c1]
    a2 = [aval(c) for c in c2]
    cj = _insert_after(cj, len(c1), a2)
    jj = _prepend_inputs(jj, a1)
    # the rule also takes tangents for every operand: add unread ones for c1 + c2
    jj = insert_tangent_slots(jj, len(c1) + len(c2) + len(args), a1 + a2)
    outs = custom_jvp_call_p.bind(*c1, *c2, *args, call_jaxpr=cj, jvp_jaxpr=jj,
                                  num_consts=num_consts + len(c1) + len(c2), name=name)
    return outs, [0] * n_out


def _deferred_batched_rule(rule, dims, size, n_out, n_in, new_avals):
    """The batch of the deferred rule ``rule`` for operands (new consts of ``new_avals``,
    then the ``n_in`` old operands at ``dims``), itself deferred: its constants stay its
    own (not operands), kept while none is a tracer."""
    def make():
        with own_constants():
            hj, hc = _batch_closed(rule.force(), list(dims) * 2, size, [0] * (2 * n_out))
        j = hj.jaxpr
        k = len(hc)
        closed = ClosedJaxpr(Jaxpr(j.invars[:k], j.invars[k:], j.eqns, j.outvars), hc)
        closed = insert_tangent_slots(_prepend_inputs(closed, new_avals), n_in, new_avals)
        return closed, not any(isinstance(c, Tracer) for c in hc)
    return DeferredJaxpr(make, rule.label + " (batched)")


def _insert_after(closed, k, avals):
    """Insert unread inputs of ``avals`` after the first ``k`` inputs."""
    j = closed.jaxpr
    extra = [Var(a) for a in avals]
    return checked(ClosedJaxpr(Jaxpr(j.constvars, j.invars[:k] + extra + j.invars[k:], j.eqns,
                                     j.outvars), closed.consts), "custom rule vmap (extra inputs)")


def insert_tangent_slots(closed, n_primals, avals):
    """The rule's inputs are (primals, tangents); add unread tangent inputs for new consts."""
    j = closed.jaxpr
    extra = [Var(a) for a in avals]
    invs = j.invars[:n_primals] + extra + j.invars[n_primals:]
    return checked(ClosedJaxpr(Jaxpr(j.constvars, invs, j.eqns, j.outvars), closed.consts),
                   "custom rule vmap (tangent slots)")


def _custom_jvp_transpose(cts, *args, call_jaxpr, jvp_jaxpr, num_consts, name):
    # a custom_jvp function applied to a tangent (a rule such as ``f(x_dot)`` for a linear
    # ``f``) is transposed through its own body, as JAX does: the rule only says how to
    # differentiate it, and the body is linear in those inputs
    return backward_pass(call_jaxpr.jaxpr, call_jaxpr.consts, list(args), list(cts))


custom_jvp_call_p.def_rules(abstract_eval=_custom_jvp_aval, impl=_custom_jvp_impl,
                            jvp=_custom_jvp_jvp, transpose=_custom_jvp_transpose,
                            batch=_custom_jvp_batch)


# --------------------------------------------------------------------------- custom_vjp_call

custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
custom_vjp_call_p.call_param = "call_jaxpr"
custom_vjp_call_p.subjaxpr_params = ("call_jaxpr", "fwd_jaxpr", "bwd_jaxpr")


def _custom_vjp_aval(*avals, call_jaxpr, fwd_jaxpr, bwd_jaxpr, num_consts, name):
    check_operands(f"custom_vjp_call {name}", avals, call_jaxpr)
    return list(call_jaxpr.out_avals)


def _custom_vjp_impl(*args, call_jaxpr, fwd_jaxpr, bwd_jaxpr, num_consts, name):
    return _np_outs(_run(call_jaxpr, args))


def _custom_vjp_jvp(primals, tangents, *, call_jaxpr, fwd_jaxpr, bwd_jaxpr, num_consts, name):
    if any(type(t) is not Zero for t in tangents[:num_consts]):
        raise _closed_over_error(name, "custom_vjp")
    n_out = len(call_jaxpr.out_avals)
    params = dict(call_jaxpr=call_jaxpr, fwd_jaxpr=fwd_jaxpr, bwd_jaxpr=bwd_jaxpr,
                  num_consts=num_consts, name=name)
    res_outs = run_rule(fwd_jaxpr, primals, custom_vjp_call_p, params)
    outs, res = res_outs[:n_out], res_outs[n_out:]
    consts = list(primals[:num_consts])
    ts = [instantiate(t) for t in tangents[num_consts:]]
    return outs, custom_vjp_lin_p.bind(*consts, *res, *ts, num_res=len(res), **params)


def _custom_vjp_batch(args, dims, *, call_jaxpr, fwd_jaxpr, bwd_jaxpr, num_consts, name):
    size, args, dims = _front(args, dims)
    n_out = len(call_jaxpr.out_avals)
    n_res = len(fwd_jaxpr.out_avals) - n_out
    nc = num_consts
    cj, c1 = _batch_closed(call_jaxpr, dims, size, [0] * n_out)
    fj, c2 = _batch_closed(fwd_jaxpr, dims, size, [0] * (n_out + n_res))
    arg_dims = list(dims[nc:])
    bdims = list(dims[:nc]) + [0] * (n_res + n_out)
    bj, c3 = _batch_closed(bwd_jaxpr, bdims, size, [0] * len(arg_dims),
                           sum_unbatched=[d is None for d in arg_dims])
    a1, a2, a3 = ([aval(c) for c in cs] for cs in (c1, c2, c3))
    # operands: c1, c2, c3, old consts, args; each body reads only its own slot
    cj = _insert_after(cj, len(c1), a2 + a3)
    fj = _insert_after(_prepend_inputs(fj, a1), len(c1) + len(c2), a3)
    bj = _prepend_inputs(bj, a1 + a2)
    outs = custom_vjp_call_p.bind(*c1, *c2, *c3, *args, call_jaxpr=cj, fwd_jaxpr=fj,
                                  bwd_jaxpr=bj, num_consts=nc + len(c1) + len(c2) + len(c3),
                                  name=name)
    return outs, [0] * n_out


custom_vjp_call_p.def_rules(abstract_eval=_custom_vjp_aval, impl=_custom_vjp_impl,
                            jvp=_custom_vjp_jvp, batch=_custom_vjp_batch)


# --------------------------------------------------------------------------- custom_vjp_lin
# Operands: (consts, residuals, tangents of the arguments); linear in the tangents.
# Its transpose is the user's bwd, whose self-calls are bound as the custom_vjp_call
# equation (``call_jaxpr`` and ``fwd_jaxpr`` are its; None once batched: then, as in
# forward mode, they run the body). Applied forward (jvp of a custom_vjp function) it
# is the transpose of bwd, which exists when bwd is linear in the cotangents.

custom_vjp_lin_p = Primitive("custom_vjp_lin", multiple_results=True)
custom_vjp_lin_p.subjaxpr_params = ("bwd_jaxpr",)
_fwd_of_bwd: dict = {}


def _lin_aval(*avals, bwd_jaxpr, num_consts, num_res, name, **_):
    n_front = num_consts + num_res
    ins = bwd_jaxpr.in_avals
    n_out = len(ins) - n_front
    want_t = bwd_jaxpr.out_avals
    got_t = avals[n_front:]
    if len(got_t) != len(want_t) or any(a.shape != b.shape for a, b in zip(got_t, want_t)):
        raise TypeError(f"custom_vjp_lin {name}: tangents "
                        f"{[a.str_short() for a in got_t]} do not match the arguments "
                        f"{[a.str_short() for a in want_t]}")
    return [tangent_aval(a) for a in ins[n_front:n_front + n_out]]


def _forward_of_bwd(bwd_jaxpr, n_front, name):
    key = id(bwd_jaxpr)
    hit = _fwd_of_bwd.get(key)
    if hit is not None and hit[0] is bwd_jaxpr:
        return hit[1]
    mask = [False] * n_front + [True] * (len(bwd_jaxpr.in_avals) - n_front)
    try:
        fj = transpose_jaxpr(bwd_jaxpr, mask)
    except Exception as e:
        raise TypeError(
            f"forward-mode differentiation (jvp) of custom_vjp function '{name}' needs its "
            "bwd to be linear in the cotangents (it is used transposed); it is not: "
            f"{type(e).__name__}: {e}. Use reverse mode (grad/vjp) or custom_jvp.") from None
    if len(_fwd_of_bwd) > 256:   # bounded: every trace makes a new bwd body
        _fwd_of_bwd.clear()
    _fwd_of_bwd[key] = (bwd_jaxpr, fj)
    return fj


def _lin_impl(*args, bwd_jaxpr, num_consts, num_res, name, **_):
    fj = _forward_of_bwd(bwd_jaxpr, num_consts + num_res, name)
    return _np_outs(_run(fj, args))


def _lin_jvp(primals, tangents, *, bwd_jaxpr, num_consts, num_res, name, **_):
    fj = _forward_of_bwd(bwd_jaxpr, num_consts + num_res, name)
    return jvp_eval(fj.jaxpr, fj.consts, primals, tangents)


def _lin_transpose(cts, *args, bwd_jaxpr, call_jaxpr, fwd_jaxpr, num_consts, num_res, name):
    n_front = num_consts + num_res
    if any(is_undefined(a) for a in args[:n_front]):
        raise TypeError(f"custom_vjp {name}: cannot transpose with respect to residuals")
    ins = list(args[:n_front]) + [instantiate(c) for c in cts]
    cts_in = _run(bwd_jaxpr, ins) if call_jaxpr is None else run_rule(
        bwd_jaxpr, ins, custom_vjp_call_p, dict(call_jaxpr=call_jaxpr, fwd_jaxpr=fwd_jaxpr,
                                                bwd_jaxpr=bwd_jaxpr, num_consts=num_consts,
                                                name=name))
    return [None] * n_front + list(cts_in)


def _lin_batch(args, dims, *, bwd_jaxpr, num_consts, num_res, name, **_):
    size = not_mapped_size(args, dims)
    n_front = num_consts + num_res
    # tangents all at axis 0 (broadcast where unbatched): bwd then maps cts at 0 to cts at 0
    args = list(args[:n_front]) + [move_batch_axis(x, d, 0, size) for x, d in
                                   zip(args[n_front:], dims[n_front:])]
    n_t = len(args) - n_front
    n_ct = len(bwd_jaxpr.in_avals) - n_front
    bdims = list(dims[:n_front]) + [0] * n_ct
    bj, c = _batch_closed(bwd_jaxpr, bdims, size, [0] * n_t)
    outs = custom_vjp_lin_p.bind(*c, *args, bwd_jaxpr=bj, call_jaxpr=None, fwd_jaxpr=None,
                                 num_consts=num_consts + len(c), num_res=num_res, name=name)
    return outs, [0] * len(outs)


custom_vjp_lin_p.def_rules(abstract_eval=_lin_aval, impl=_lin_impl, jvp=_lin_jvp,
                           transpose=_lin_transpose, batch=_lin_batch)


# --------------------------------------------------------------------------- checkpoint

checkpoint_p = Primitive("checkpoint", multiple_results=True)
checkpoint_p.call_param = "jaxpr"
checkpoint_p.subjaxpr_params = ("jaxpr",)

# params hold a policy's name (a str prints and parses); ``functrans.remat`` registers
# the functions here: name -> (primitive, *in_avals, **params) -> may its outputs be saved
CHECKPOINT_POLICIES: dict = {}

# The identity on its operands, which the compile passes do not see through: CSE never
# merges two of them and constant folding leaves them alone, so equations reading its
# outputs are never merged with the same equations reading its inputs. The transpose of
# a checkpoint feeds its recomputation through one (unless prevent_cse=False): otherwise
# under jit CSE would merge the recomputation with the forward pass and the residuals it
# was meant to drop would be kept after all. The last pass of the compile pipeline
# (``jaxpr_ir.passes.drop_barriers``) removes it, so backends never see it.
optimization_barrier_p = Primitive("optimization_barrier", multiple_results=True)
optimization_barrier_p.prevents_cse = True


def _barrier_jvp(primals, tangents):
    return optimization_barrier_p.bind(*primals), list(tangents)


def _barrier_batch(args, dims):
    return optimization_barrier_p.bind(*args), list(dims)


optimization_barrier_p.def_rules(
    abstract_eval=lambda *avals: list(avals),
    impl=lambda *xs: list(xs),
    jvp=_barrier_jvp,
    transpose=lambda cts, *args: list(cts),
    batch=_barrier_batch,
)


# ``checkpoint_name(x, name)``: the identity, naming its value for the policies
# ``save_only_these_names`` / ``save_any_names_but_these``. Like the barrier it is
# removed by the last compile pass (``prevents_cse``), so backends never see it.
name_p = Primitive("name")
name_p.prevents_cse = True
name_p.def_rules(
    abstract_eval=lambda a, *, name: a,
    impl=lambda x, *, name: x,
    jvp=lambda primals, tangents, *, name: (name_p.bind(primals[0], name=name), tangents[0]),
    transpose=lambda ct, x, *, name: [ct],
    batch=lambda args, dims, *, name: (name_p.bind(args[0], name=name), dims[0]),
)


def _checkpoint_aval(*avals, jaxpr, policy, name, prevent_cse=True):
    check_operands(f"checkpoint {name}", avals, jaxpr)
    return list(jaxpr.out_avals)


def _checkpoint_impl(*args, jaxpr, policy, name, prevent_cse=True):
    return _np_outs(_run(jaxpr, args))


_fwd_cache = BodyCache()
_jvp_fwd_cache = BodyCache()
_tangent_cache = BodyCache()


def _saveable(closed, policy):
    pol = CHECKPOINT_POLICIES[policy]
    return tuple(i for i, e in enumerate(closed.jaxpr.eqns)
                 if pol(e.primitive, *[a.aval for a in e.inputs], **e.params))


def _saveable_vars(closed, saveable):
    return [v for i in saveable for v in closed.jaxpr.eqns[i].outvars]


def _fwd_body(closed, saveable, keep):
    """The body with the outputs of the saveable equations that ``keep`` marks (one
    flag per output of each saveable equation) appended to its outputs."""
    hit = _fwd_cache.get(closed, saveable, keep)
    if hit is not None:
        return hit
    j = closed.jaxpr
    extra = [v for v, k in zip(_saveable_vars(closed, saveable), keep) if k]
    return _fwd_cache.put(closed, ClosedJaxpr(Jaxpr([], j.invars, j.eqns,
                                                    list(j.outvars) + extra), []),
                          saveable, keep)


def _jvp_fwd_body(closed, saveable, keep, nz):
    """(body, consts): the forward body of a body holding custom calls, whose JVP takes
    primal outputs from the rule (custom_vjp: fwd) and differentiates them again as the
    rule's code: the primal half of the JVP (body_jvp.jvp_primal_body), kept values appended."""
    hit = _jvp_fwd_cache.get(closed, saveable, keep, nz)
    extra = [v for v, k in zip(_saveable_vars(closed, saveable), keep) if k]
    (body,), consts = hit or hoist_many([jvp_primal_body(closed, extra, nz)])
    if hit or any(isinstance(c, Tracer) for c in consts):    # (consts: see _tangent_body)
        return (body,), consts
    return _jvp_fwd_cache.put(closed, ((body,), consts), saveable, keep, nz)


def _tangent_body(closed, saveable, nz):
    """(const-free jaxpr, its consts, used): the jaxpr maps (consts, used primals, used
    saved values, nonzero tangents) to the tangents; ``used`` marks which primals and
    saveable values (in that order) it reads.

    It recomputes the primal values the tangents need, except the outputs of the
    saveable equations, which it reads from its inputs: only those it actually reads
    are saved (a policy allowing more saves no more than reverse mode needs).
    """
    hit = _tangent_cache.get(closed, saveable, nz)
    if hit is not None:
        return hit
    j = closed.jaxpr
    saved_vars = _saveable_vars(closed, saveable)
    in_avals = j.in_avals
    t_avals = [tangent_aval(a) for a, m in zip(in_avals, nz) if m]
    n, ns = len(in_avals), len(saved_vars)
    save_set = set(saveable)

    def fun(*xs):
        penv = dict(zip(j.invars, xs[:n]))
        saved = dict(zip(saved_vars, xs[n:n + ns]))
        it = iter(xs[n + ns:])
        tenv = {v: (next(it) if m else Zero(tangent_aval(v.aval))) for v, m in zip(j.invars, nz)}

        def read(a):
            return a.val if type(a) is Literal else penv[a]

        def read_t(a):
            return Zero(a.aval) if type(a) is Literal else tenv[a]

        for i, e in enumerate(j.eqns):
            out, tout = jvp_eqn(e.primitive, [read(a) for a in e.inputs],
                                [read_t(a) for a in e.inputs], e.params)
            if not e.primitive.multiple_results:
                out, tout = [out], [tout]
            if i in save_set:   # the saved value replaces the recomputed one (DCE drops it)
                out = [saved[v] for v in e.outvars]
            penv.update(zip(e.outvars, out))
            tenv.update(zip(e.outvars, tout))
        return [instantiate(read_t(a)) for a in j.outvars]

    tj, tc, _ = trace_to_jaxpr(fun, list(in_avals) + [v.aval for v in saved_vars] + t_avals,
                               name="checkpoint tangent", staged=True)  # transposed later
    tj = dce_top(tj)
    reads = {x for e in tj.eqns for x in e.inputs if isinstance(x, Var)}
    reads.update(v for v in tj.outvars if isinstance(v, Var))
    used = tuple(v in reads for v in tj.invars[:n + ns])
    tj = Jaxpr(tj.constvars, [v for v, u in zip(tj.invars, used) if u] + tj.invars[n + ns:],
               tj.eqns, tj.outvars)
    (body,), consts = hoist_many([ClosedJaxpr(tj, tc)])
    if any(isinstance(c, Tracer) for c in consts):
        # captured from the trace around this one (a closed-over value of an enclosing
        # jvp): valid only here, so not cached (a later jvp of this body, jvp-of-jvp,
        # would bind a tracer of a jvp that has ended)
        return body, consts, used
    return _tangent_cache.put(closed, (body, consts, used), saveable, nz)


def _checkpoint_jvp(primals, tangents, *, jaxpr, policy, name, prevent_cse=True):
    # The primal outputs (and the values the policy saves) come from one checkpoint
    # equation; the tangents from another whose operands are only the body's inputs and
    # the saved values it reads: in reverse mode that one lands in the linear jaxpr, so
    # its intermediates are recomputed while transposing instead of kept as residuals.
    saveable = _saveable(jaxpr, policy)
    if len(saveable) == len(jaxpr.jaxpr.eqns):
        # nothing to recompute: exactly the plain JVP, so reverse mode saves what it
        # saves without checkpoint (a checkpoint equation would save every output)
        return jvp_eval(jaxpr.jaxpr, jaxpr.consts, list(primals), list(tangents))
    nz = tuple(type(t) is not Zero for t in tangents)
    body, consts, used = _tangent_body(jaxpr, saveable, nz)
    n, n_out = len(primals), len(jaxpr.jaxpr.outvars)
    keep = used[n:]
    params = dict(policy=policy, name=name, prevent_cse=prevent_cse)
    if holds_primitive(jaxpr, (custom_vjp_call_p, custom_jvp_call_p)):  # see _jvp_fwd_body
        (fbody,), fconsts = _jvp_fwd_body(jaxpr, saveable, keep, nz)
        res = checkpoint_p.bind(*fconsts, *primals, jaxpr=fbody, **params)
        outs, saved = res[:n_out], res[n_out:]
    elif any(keep):
        res = checkpoint_p.bind(*primals, jaxpr=_fwd_body(jaxpr, saveable, keep), **params)
        outs, saved = res[:n_out], res[n_out:]
    else:
        outs, saved = checkpoint_p.bind(*primals, jaxpr=jaxpr, **params), []
    ts = [t for t in tangents if type(t) is not Zero]
    ps = [p for p, u in zip(primals, used[:n]) if u]
    touts = checkpoint_p.bind(*consts, *ps, *saved, *ts, jaxpr=body,
                              **dict(params, name=f"jvp({name})"))
    return outs, touts


def _checkpoint_transpose(cts, *args, jaxpr, policy, name, prevent_cse=True):
    # the body is linear in the undefined inputs; backward_pass evaluates its
    # non-linear equations forward first: that is the recomputation. Under a trace its
    # inputs pass through an optimisation barrier first, so that no compile pass merges
    # the recomputation with the forward pass it repeats.
    args = list(args)
    known = [i for i, a in enumerate(args) if not is_undefined(a)]
    if prevent_cse and any(isinstance(args[i], Tracer) for i in known):
        for i, b in zip(known, optimization_barrier_p.bind(*[args[i] for i in known])):
            args[i] = b
    return backward_pass(jaxpr.jaxpr, jaxpr.consts, args, list(cts))


def _checkpoint_batch(args, dims, *, jaxpr, policy, name, prevent_cse=True):
    size, args, dims = _front(args, dims)
    n_out = len(jaxpr.out_avals)
    bj, c = _batch_closed(jaxpr, dims, size, [0] * n_out)
    outs = checkpoint_p.bind(*c, *args, jaxpr=bj, policy=policy, name=name,
                             prevent_cse=prevent_cse)
    return outs, [0] * n_out


checkpoint_p.def_rules(abstract_eval=_checkpoint_aval, impl=_checkpoint_impl,
                       jvp=_checkpoint_jvp, transpose=_checkpoint_transpose,
                       batch=_checkpoint_batch)
