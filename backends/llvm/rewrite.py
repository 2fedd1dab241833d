"""Jaxpr rewrites this backend applies before planning (the cached plan's key is the
jaxpr as given, so they cost nothing on a plan hit).

``fold_dot_transposes``: ``transpose(dot_general(a, b))`` whose permutation swaps the
two free-dimension groups is ``dot_general(b, a)`` with the contractions swapped (the
output layout of dot_general is batch, lhs free, rhs free), so the product is written
directly in the layout wanted and the strided transpose disappears (BLAS takes either
operand transposed for free). Reverse-mode code is full of these (``x.T @ g``).

>>> from jaxpr_ir import Eqn, Jaxpr, Var, ShapedArray, primitives
>>> import functrans  # registers the primitives
>>> a, b = Var(ShapedArray((2, 3), "float64")), Var(ShapedArray((3, 4), "float64"))
>>> d, t = Var(ShapedArray((2, 4), "float64")), Var(ShapedArray((4, 2), "float64"))
>>> dn = (((1,), (0,)), ((), ()))
>>> j = Jaxpr([], [a, b], [Eqn(primitives["dot_general"], [a, b], [d],
...     {"dimension_numbers": dn, "preferred_element_type": None}),
...     Eqn(primitives["transpose"], [d], [t], {"permutation": (1, 0)})], [t])
>>> [e.primitive.name for e in fold_dot_transposes(j).eqns]
['dot_general']

``fold_dot_updates``: ``c - s * dot_general(a, b)`` (or ``c + s * dot``, ``c ± dot``; ``s``
a nonzero finite constant) is one ``dot_general`` with a third operand ``c`` and the
parameters ``accumulate = ∓s`` and ``accumulate_ops`` (the elementwise operations it
replaces, for the cost model): the backend copies ``c`` into the result and calls
``?gemm`` with ``alpha = ∓s, beta = 1``. The SGD update of a weight matrix
(``w - lr * x.T @ g``) then needs no product temporary and no pass over it. A broadcast
``c`` (a bias) is left to the next fused kernel, where its add is free. Only real
products BLAS serves (the emitter raises on any other: no silent fallback).
"""
from __future__ import annotations

import math

from jaxpr_ir import Jaxpr, Eqn, Literal
from .blas import TINY, gemm_sizes, has_gemm

__all__ = ["fold_dot_transposes", "fold_dot_updates"]


def _uses(jaxpr):
    n = {}
    for e in jaxpr.eqns:
        for x in e.inputs:
            if not hasattr(x, "val"):
                n[x] = n.get(x, 0) + 1
    for x in jaxpr.outvars:
        n[x] = n.get(x, 0) + 1
    return n


def _swapping_perm(dot):
    (lc, rc), (lb, rb) = dot.params["dimension_numbers"]
    la, ra = dot.inputs[0].aval, dot.inputs[1].aval
    nb = len(lb)
    nl = la.ndim - len(lc) - len(lb)
    nr = ra.ndim - len(rc) - len(rb)
    return (tuple(range(nb)) + tuple(range(nb + nl, nb + nl + nr)) + tuple(range(nb, nb + nl)))


def fold_dot_transposes(jaxpr: Jaxpr) -> Jaxpr:
    """``jaxpr`` with ``transpose(dot_general(a, b))`` (dot used only there, the
    permutation exchanging the free groups) replaced by ``dot_general(b, a)``."""
    uses = _uses(jaxpr)
    producer = {}
    for i, e in enumerate(jaxpr.eqns):
        if e.primitive.name == "dot_general" and len(e.outvars) == 1:
            producer[e.outvars[0]] = i
    drop, new = set(), {}
    for i, e in enumerate(jaxpr.eqns):
        if e.primitive.name != "transpose" or hasattr(e.inputs[0], "val"):
            continue
        j = producer.get(e.inputs[0])
        if j is None or j in drop or uses.get(e.inputs[0]) != 1:
            continue
        dot = jaxpr.eqns[j]
        if tuple(e.params["permutation"]) != _swapping_perm(dot):
            continue
        (lc, rc), (lb, rb) = dot.params["dimension_numbers"]
        params = dict(dot.params, dimension_numbers=((tuple(rc), tuple(lc)), (tuple(rb), tuple(lb))))
        new[i] = Eqn(dot.primitive, [dot.inputs[1], dot.inputs[0]], list(e.outvars), params,
                     getattr(e, "source", None))
        drop.add(j)
    if not new:
        return jaxpr
    eqns = [new.get(i, e) for i, e in enumerate(jaxpr.eqns) if i not in drop]
    return Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, jaxpr.outvars)


def _constant_scalar(x, producer):
    """The Python float ``x`` always holds (a scalar literal, or a broadcast of one), else
    None."""
    if isinstance(x, Literal):
        v = x.val
    else:
        e = producer.get(x)
        if e is None or e.primitive.name != "broadcast_in_dim" or \
                not isinstance(e.inputs[0], Literal):
            return None
        v = e.inputs[0].val
    try:
        v = float(v) if getattr(v, "size", 1) == 1 and getattr(v, "dtype", float) != complex \
            else None
    except (TypeError, ValueError):
        return None
    return v


def _gemm_product(dot, out):
    """Whether ``dot`` (used once) can be the BLAS product of an update into ``out``."""
    a, b = dot.inputs[0].aval, dot.inputs[1].aval
    o = dot.outvars[0].aval if len(dot.outvars) == 1 else None
    if o is None or o.shape != out.aval.shape or o.dtype != out.aval.dtype:
        return False
    dt = out.aval.dtype
    if dt.kind != "f" or a.dtype != dt or b.dtype != dt or not has_gemm(dt):
        return False
    _, _, nb, m, n, k = gemm_sizes(dot)
    return k > 0 and nb * m * n > 0 and nb * m * n * k > TINY


def _update_of(e, producer, uses):
    """(dot equation, scale equation or None, c, alpha) when ``e`` is ``c ± [s *] dot``."""
    name = e.primitive.name
    if name not in ("add", "sub") or len(e.inputs) != 2:
        return None
    sides = [(e.inputs[0], e.inputs[1], 1.0)] if name == "sub" else \
        [(e.inputs[0], e.inputs[1], 1.0), (e.inputs[1], e.inputs[0], 1.0)]
    sign = -1.0 if name == "sub" else 1.0
    for c, t, _ in sides:
        if isinstance(c, Literal) or isinstance(t, Literal) or uses.get(t) != 1 or \
                c.aval.shape != e.outvars[0].aval.shape or c.aval.dtype != e.outvars[0].aval.dtype:
            continue
        cp = producer.get(c)
        if cp is not None and cp.primitive.name == "broadcast_in_dim":
            continue      # a bias: its add costs nothing in the next fused kernel
        d = producer.get(t)
        scale, s = None, 1.0
        if d is not None and d.primitive.name == "mul":
            x, y = d.inputs
            for sv, dv in ((x, y), (y, x)):
                v = _constant_scalar(sv, producer)
                if v is not None and not isinstance(dv, Literal) and uses.get(dv) == 1:
                    scale, s, d = d, v, producer.get(dv)
                    break
            else:
                continue
        if d is None or d.primitive.name != "dot_general" or not _gemm_product(d, e.outvars[0]):
            continue
        alpha = sign * s
        if alpha == 0.0 or not math.isfinite(alpha):    # BLAS skips the product at alpha 0
            continue
        return d, scale, c, alpha
    return None


def fold_dot_updates(jaxpr: Jaxpr) -> Jaxpr:
    """``jaxpr`` with ``c ± s * dot_general(a, b)`` as one accumulating ``dot_general``
    (see the module doc; ``dot_general``'s ``accumulate`` parameter)."""
    uses = _uses(jaxpr)
    producer = {}
    for e in jaxpr.eqns:
        for o in e.outvars:
            producer[o] = e
    drop, new = set(), {}
    for i, e in enumerate(jaxpr.eqns):
        found = _update_of(e, producer, uses)
        if found is None:
            continue
        dot, scale, c, alpha = found
        if id(dot) in drop or (scale is not None and id(scale) in drop):
            continue
        drop.add(id(dot))
        if scale is not None:
            drop.add(id(scale))
        params = dict(dot.params, accumulate=alpha, accumulate_ops=1 if scale is None else 2)
        new[i] = Eqn(dot.primitive, [dot.inputs[0], dot.inputs[1], c], list(e.outvars), params,
                     getattr(e, "source", None))
    if not new:
        return jaxpr
    eqns = [new.get(i, e) for i, e in enumerate(jaxpr.eqns) if id(e) not in drop]
    return Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, jaxpr.outvars)
