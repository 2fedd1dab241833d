"""The one cost model for eager and compiled execution: flops per primitive, and the bytes
each operation (eagerly) or kernel (compiled) reads from and writes to memory.

- **flops**: ``dot_general`` 2·(output elements)·(contracted size); an elementwise or
  reducing primitive one per element it computes (a reduction: one per input element);
  transcendental primitives (exp, log, tanh, sin, ...: ``Primitive.transcendental``, set
  from the op table's rows) are counted once per element in ``transcendentals``, apart
  from the flops; views and data movement cost none; a
  ``scan`` body counts ``length`` times, a ``cond`` its most expensive branch, a
  ``while`` body once (its trip count is unknown).
- **bytes**: an operation reads each operand and writes each output once. A view
  (broadcast, reshape, transpose, squeeze, slice, rev) moves nothing; an operation
  reading a view reads the view's base, at most the view's size: a broadcast bias is read
  at its own size, a slice at the slice's. Eagerly every non-view equation is one
  operation; compiled, every kernel of the backend's plan reads its inputs and writes its
  outputs once (temporaries inside a fused kernel never reach memory).

A static analysis of the IR (like the checker), so every layer can use it: each
backend's ``cost_analysis()`` applies ``plan_cost`` to its fusion plan, the
interpreter's (``functrans.jit``) and the profiler's eager column ``jaxpr_cost`` /
``eager_traffic`` to the jaxpr; ``functrans.cost`` re-exports it.

>>> from jaxpr_ir import ClosedJaxpr, Jaxpr, Var, ShapedArray
>>> a = Var(ShapedArray((4,), "float32"))
>>> flops(ClosedJaxpr(Jaxpr([], [a], [], [a])))
{'flops': 0.0, 'transcendentals': 0.0}
"""
from __future__ import annotations

from .core import ClosedJaxpr, Jaxpr, Literal, Var

__all__ = ["VIEW_PRIMITIVES", "flops", "eager_traffic", "plan_traffic",
           "plan_flops", "plan_cost", "jaxpr_cost"]

VIEW_PRIMITIVES = frozenset({"broadcast_in_dim", "reshape", "transpose", "squeeze", "slice",
                             "rev", "expand_dims"})
# moves or reinterprets data, computes nothing
_NO_FLOPS = VIEW_PRIMITIVES | {"convert_element_type", "concatenate", "pad", "gather",
                               "dynamic_slice", "dynamic_update_slice", "select_n", "copy",
                               "iota", "bitcast_convert_type", "stop_gradient", "name",
                               "optimization_barrier", "scatter"}


def _jaxpr(x) -> Jaxpr:
    return x.jaxpr if isinstance(x, ClosedJaxpr) else x


def _size(aval) -> int:
    n = 1
    for d in aval.shape:
        n *= int(d)
    return n


def _eqn_flops(e):
    name = e.primitive.name
    out = sum(_size(v.aval) for v in e.outvars)
    if name == "dot_general":
        (lc, _), _ = e.params["dimension_numbers"]
        k = 1
        for d in lc:
            k *= int(e.inputs[0].aval.shape[d])
        # ``accumulate`` (a backend's ``c + alpha * a·b`` in one BLAS call): scale and add
        extra = float(e.params.get("accumulate_ops", 0)) * out
        return 2.0 * out * k + extra, 0.0
    if name in ("scan", "while", "cond") or e.primitive.subjaxpr_params:
        subs = []
        for key in e.primitive.subjaxpr_params:
            v = e.params.get(key)
            subs += list(v) if isinstance(v, (tuple, list)) else [v]
        costs = [_total(_jaxpr(s)) for s in subs if s is not None]
        if name == "cond":
            return max(costs, default=(0.0, 0.0))
        times = float(e.params.get("length", 1)) if name == "scan" else 1.0
        return (times * sum(c[0] for c in costs), times * sum(c[1] for c in costs))
    if name in _NO_FLOPS:
        return 0.0, 0.0
    if name.startswith("reduce_") or name in ("argmax", "argmin", "cumsum", "cumprod",
                                              "cummax", "cummin"):
        return float(sum(_size(x.aval) for x in e.inputs[:1])), 0.0
    if e.primitive.transcendental:
        return 0.0, float(out)
    return float(out), 0.0


def _total(j: Jaxpr):
    f = t = 0.0
    for e in j.eqns:
        a, b = _eqn_flops(e)
        f, t = f + a, t + b
    return f, t


def flops(closed) -> dict:
    """``{"flops", "transcendentals"}`` of running ``closed`` once (see the module doc)."""
    f, t = _total(_jaxpr(closed))
    return {"flops": f, "transcendentals": t}


def _read_bytes(x, base_of) -> int:
    """Bytes an operation reads for operand ``x``: a view's base, at most the view."""
    if isinstance(x, Literal):
        return 0
    base = base_of.get(x, x)
    if isinstance(base, Literal):
        return 0
    n = min(_size(x.aval), _size(base.aval))
    return n * base.aval.dtype.itemsize


# identities that return their operand eagerly (no copy)
_IDENTITIES = frozenset({"stop_gradient", "name", "optimization_barrier"})


def eager_traffic(closed) -> dict:
    """``{"operations", "bytes"}`` of running ``closed``'s top-level equations one by
    one, as eager execution does (call-like equations should be inlined first)."""
    j = _jaxpr(closed)
    base_of, ops, nbytes = {}, 0, 0
    for e in j.eqns:
        if e.primitive.name in _IDENTITIES:
            for x, v in zip(e.inputs, e.outvars):
                base_of[v] = base_of.get(x, x)
            continue
        if e.primitive.name in VIEW_PRIMITIVES and isinstance(e.inputs[0], Var):
            x = e.inputs[0]
            base_of[e.outvars[0]] = base_of.get(x, x)
            continue
        if e.primitive.name in VIEW_PRIMITIVES:     # a broadcast literal: a scalar view
            base_of[e.outvars[0]] = e.inputs[0]
            continue
        ops += 1
        nbytes += sum(_read_bytes(x, base_of) for x in e.inputs)
        nbytes += sum(_size(v.aval) * v.aval.dtype.itemsize for v in e.outvars)
    return {"operations": ops, "bytes": nbytes}


def plan_traffic(plan) -> int:
    """Bytes a compiled backend plan moves: every fused kernel reads its inputs (views at
    their base, at most the view's size) and writes its outputs; any other step is one
    equation. ``plan`` has ``steps`` and ``views`` (``backends.fusion.Plan``)."""
    base_of = {v: view.base for v, view in plan.views.items()}
    total = 0
    for s in plan.steps:
        if hasattr(s, "inputs") and hasattr(s, "outputs"):
            ins, outs = list(s.inputs), list(s.outputs)
        else:
            ins, outs = list(s.eqn.inputs), list(s.eqn.outvars)
        total += sum(_read_bytes(x, base_of) for x in ins if hasattr(x, "aval"))
        total += sum(_size(v.aval) * v.aval.dtype.itemsize for v in outs)
    return total


def _plan_eqns(plan):
    for s in plan.steps:
        yield from (s.eqns if hasattr(s, "eqns") else [s.eqn])


def plan_flops(plan) -> dict:
    """``{"flops", "transcendentals"}`` of the equations a backend plan runs (its fused
    kernels' and its other steps'; views compute nothing)."""
    f = t = 0.0
    for e in _plan_eqns(plan):
        a, b = _eqn_flops(e)
        f, t = f + a, t + b
    return {"flops": f, "transcendentals": t}


def plan_cost(plan) -> dict:
    """What a backend's ``cost_analysis()`` reports from this model for its plan:
    ``{"flops", "transcendentals", "bytes accessed"}``."""
    return {**plan_flops(plan), "bytes accessed": float(plan_traffic(plan))}


def jaxpr_cost(closed) -> dict:
    """The same keys as ``plan_cost`` for ``closed`` run equation by equation (the
    interpreter): flops of the jaxpr, bytes of ``eager_traffic``."""
    return {**flops(closed), "bytes accessed": float(eager_traffic(closed)["bytes"])}
