"""``linear_call``: a call of a function linear in some of its operands, with a
transpose of the user's own (JAX's ``jax.custom_derivatives.linear_call``).

Operands: ``num_consts`` hoisted constants, ``num_res`` residuals (in which the call
need not be linear), then the linear operands. Params: ``callee`` (the function, a
const-free body over all operands) and ``transpose`` (its transpose: constants and
residuals, then one cotangent per output, to one value per linear operand). The
transpose of a ``linear_call`` is the ``linear_call`` of ``transpose`` with ``callee``
as its transpose, so transposing twice gives the function back. The JVP in the linear
operands is the call itself on the tangents (JAX's rule); residual tangents are
refused, as JAX's. ``jit`` inlines the callee (``call_param``), so no backend sees it.

>>> linear_call_p.call_param
'callee'
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import ClosedJaxpr
from ..tracing import eval_jaxpr, trace_to_jaxpr
from ..transforms.vmap import batched_aval, vmap_eval
from .base import (Primitive, Zero, instantiate, is_undefined, move_batch_axis,
                   not_mapped_size, tangent_aval)
from .custom import hoist_many

__all__ = ["linear_call_p"]

linear_call_p = Primitive("linear_call", multiple_results=True)
linear_call_p.call_param = "callee"
linear_call_p.subjaxpr_params = ("callee", "transpose")


def _aval(*avals, callee, transpose, num_consts, num_res):
    want = callee.in_avals
    if len(avals) != len(want) or any(a.shape != w.shape or a.dtype != w.dtype
                                      for a, w in zip(avals, want)):
        raise TypeError(f"linear_call: operands {[a.str_short() for a in avals]} do not "
                        f"match the function's {[a.str_short() for a in want]}")
    return list(callee.out_avals)


def _impl(*args, callee, transpose, num_consts, num_res):
    return [np.asarray(o) for o in eval_jaxpr(callee.jaxpr, callee.consts, list(args))]


def _jvp(primals, tangents, *, callee, transpose, num_consts, num_res):
    params = dict(callee=callee, transpose=transpose, num_consts=num_consts, num_res=num_res)
    n_front = num_consts + num_res
    if any(type(t) is not Zero for t in tangents[:n_front]):
        raise NotImplementedError(
            "linear_call: differentiating with respect to the residual arguments is not "
            "supported (as in JAX): the function is only declared linear in the others")
    outs = linear_call_p.bind(*primals, **params)
    lin_t = tangents[n_front:]
    if all(type(t) is Zero for t in lin_t):
        return outs, [Zero(tangent_aval(a)) for a in callee.out_avals]
    t_outs = linear_call_p.bind(*primals[:n_front], *[instantiate(t) for t in lin_t], **params)
    return outs, t_outs


def _transpose(cts, *args, callee, transpose, num_consts, num_res):
    n_front = num_consts + num_res
    if any(is_undefined(a) for a in args[:n_front]):
        raise TypeError("linear_call: cannot transpose with respect to the residual arguments")
    cts_in = linear_call_p.bind(*args[:n_front], *[instantiate(c) for c in cts],
                                callee=transpose, transpose=callee, num_consts=num_consts,
                                num_res=num_res)
    return [None] * n_front + list(cts_in)


def _vmapped(closed, dims, size):
    """``closed`` mapped over ``dims`` (None: unbatched) with every output at axis 0."""
    avals = [batched_aval(a, d, size) for a, d in zip(closed.in_avals, dims)]

    def fun(*args):
        outs, ods = vmap_eval(closed.jaxpr, closed.consts, args, dims, size)
        return [move_batch_axis(o, d, 0, size) for o, d in zip(outs, ods)]
    j, consts, _ = trace_to_jaxpr(fun, avals, name="vmap")
    return ClosedJaxpr(j, consts)


def _batch(args, dims, *, callee, transpose, num_consts, num_res):
    size = not_mapped_size(args, dims)
    n_front = num_consts + num_res
    # the linear operands all at axis 0 (broadcast where unbatched): the transpose then
    # maps cotangents at 0 to cotangents at 0
    args = list(args[:n_front]) + [move_batch_axis(x, d, 0, size) for x, d in
                                   zip(args[n_front:], dims[n_front:])]
    front = list(dims[:n_front])
    f = _vmapped(callee, front + [0] * (len(args) - n_front), size)
    t = _vmapped(transpose, front + [0] * len(callee.out_avals), size)
    (fb, tb), consts = hoist_many([f, t])
    outs = linear_call_p.bind(*consts, *args, callee=fb, transpose=tb,
                              num_consts=num_consts + len(consts), num_res=num_res)
    return outs, [0] * len(outs)


linear_call_p.def_rules(abstract_eval=_aval, impl=_impl, jvp=_jvp, transpose=_transpose,
                        batch=_batch)
