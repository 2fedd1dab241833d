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
"""
from __future__ import annotations

from jaxpr_ir import Jaxpr, Eqn

__all__ = ["fold_dot_transposes"]


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
