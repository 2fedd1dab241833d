"""Composite primitives written once as equations of leaf primitives, for the native
backends (``llvm``, ``cuda``), so that their op tables hold only leaves.

``DECOMPOSITIONS[name](eqn)`` returns the equations computing ``eqn``'s outputs from its
inputs with leaf primitives (the last one defines ``eqn``'s own output variable), or
None for a dtype it does not cover. ``decompose(jaxpr, lowered, dtypes)`` applies them
before fusion planning, so the pieces fuse into the same loop the composite would have
been in (no extra pass over memory). A backend keeps its own leaf where it has one:
an equation is decomposed only when ``lowered`` (the backend's op table) has no row for
it, and only for the ``dtypes`` the backend generates code for (other dtypes stay one
host step through the composite's numpy ``impl``).

Special values are as numpy's: ``logaddexp``/``logaddexp2`` of two equal infinities
is that infinity, ``sign`` gives nan on nan and ±0 on ±0 (JAX's),
``is_finite`` is ``|x| < inf`` (false on nan), and
``rsqrt``/``reciprocal`` divide 1 by ``sqrt(x)``/``x`` (±0 -> ±inf, inf -> 0,
negative -> nan, as ``1 / np.sqrt(x)``).

>>> import numpy as np
>>> import functrans as ft
>>> from functrans import lax
>>> closed = ft.make_jaxpr(lax.rsqrt)(np.ones(3))
>>> [e.primitive.name for e in decompose(closed.jaxpr, {}, {np.dtype("float64")}).eqns]
['broadcast_in_dim', 'sqrt', 'div']
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from jaxpr_ir import Eqn, Jaxpr, Literal, ShapedArray, Var, primitives

__all__ = ["DECOMPOSITIONS", "decompose"]

DECOMPOSITIONS: dict[str, Callable] = {}


def decomposition(name: str) -> Callable:
    """Register ``build(b, x, *more_inputs)`` as ``name``'s decomposition: ``b.op(name,
    *inputs, dtype=..., out=...)`` adds an equation (``out=True`` on the last one, which
    defines the result), ``b.const(v)`` a constant of the operand's shape and dtype;
    ``build`` returns None for a dtype it does not cover.

    >>> sorted(DECOMPOSITIONS)[:3]
    ['is_finite', 'logaddexp', 'logaddexp2']
    """
    def deco(build):
        def rule(eqn):
            b = _Equations(eqn)
            out = build(b, *eqn.inputs)
            return None if out is None else b.eqns
        DECOMPOSITIONS[name] = rule
        return build
    return deco


class _Equations:
    """Builds the equations of one decomposition; the value passed as ``out=True``
    becomes the decomposed equation's output variable."""

    def __init__(self, eqn):
        self.eqn = eqn
        self.aval = eqn.inputs[0].aval
        self.eqns = []

    @property
    def kind(self):
        return self.aval.dtype.kind

    def const(self, value):
        """``value`` broadcast to the operand's shape and dtype."""
        lit = Literal(value, ShapedArray((), self.aval.dtype))
        return self.op("broadcast_in_dim", lit, shape=self.aval.shape, broadcast_dimensions=())

    def op(self, name, *inputs, dtype=None, out=False, **params):
        if out:
            var = self.eqn.outvars[0]
        else:
            var = Var(ShapedArray(self.aval.shape, dtype or self.aval.dtype))
        self.eqns.append(Eqn(primitives[name], inputs, [var], params, self.eqn.source))
        return var


@decomposition("reciprocal")
def _reciprocal(b, x):
    if b.kind != "f":
        return None
    return b.op("div", b.const(1), x, out=True)


@decomposition("rsqrt")
def _rsqrt(b, x):
    if b.kind != "f":
        return None
    one = b.const(1)
    return b.op("div", one, b.op("sqrt", x), out=True)


@decomposition("square")
def _square(b, x):
    if b.kind not in "fiu":
        return None
    return b.op("mul", x, x, out=True)


@decomposition("is_finite")
def _is_finite(b, x):
    if b.kind != "f":
        return None
    inf = b.const(np.inf)
    return b.op("lt", b.op("abs", x), inf, dtype=np.bool_, out=True)


@decomposition("sign")
def _sign(b, x):
    """1 where x > 0, -1 where x < 0, else 0 (select_n picks its second case where the
    predicate holds). For floats the last case is ``x`` itself: nan stays nan and a zero
    keeps its sign, as JAX's sign (numpy's ``np.sign(-0.0)`` is ``0.0``)."""
    if b.kind not in "fiu":
        return None
    zero, one = b.const(0), b.const(1)
    positive = b.op("gt", x, zero, dtype=np.bool_)
    if b.kind == "u":
        return b.op("select_n", positive, zero, one, out=True)
    minus_one = b.const(-1)
    negative = b.op("lt", x, zero, dtype=np.bool_)
    rest = x if b.kind == "f" else zero
    rest = b.op("select_n", negative, rest, minus_one)
    return b.op("select_n", positive, rest, one, out=True)


@decomposition("logistic")
def _logistic(b, x):
    """1 / (1 + exp(-x)): 0 at -inf (exp overflows to inf), 1 at inf, nan at nan."""
    if b.kind != "f":
        return None
    one = b.const(1)
    return b.op("div", one, b.op("add", one, b.op("exp", b.op("neg", x))), out=True)


def _logaddexp_base(b, x, y, base_exp, log1p_scale, tie):
    """numpy's logaddexp(2): ``x + tie`` where x == y (so (inf, inf) -> inf and
    (-inf, -inf) -> -inf, where x - y is nan), else ``max + log1p(base_exp(-|x - y|))``
    (scaled to base 2); nan if either is nan."""
    if b.kind != "f":
        return None
    bool_ = np.bool_
    gap = b.op("neg", b.op("abs", b.op("sub", x, y)))
    tail = b.op("log1p", b.op(base_exp, gap))
    if log1p_scale != 1:
        tail = b.op("mul", tail, b.const(log1p_scale))
    apart = b.op("add", b.op("max", x, y), tail)
    tied = b.op("add", x, b.const(tie))
    return b.op("select_n", b.op("eq", x, y, dtype=bool_), apart, tied, out=True)


@decomposition("logaddexp")
def _logaddexp(b, x, y):
    return _logaddexp_base(b, x, y, "exp", 1, math.log(2.0))


@decomposition("logaddexp2")
def _logaddexp2(b, x, y):
    return _logaddexp_base(b, x, y, "exp2", 1 / math.log(2.0), 1.0)


def decompose(jaxpr: Jaxpr, lowered, dtypes) -> Jaxpr:
    """``jaxpr`` with every composite equation the backend has no row for (not in
    ``lowered``) and whose operand dtype is in ``dtypes`` replaced by its leaves; the
    same jaxpr object when nothing changes. Inputs, outputs and constants are the same
    variables, so a plan of the result reads and writes ``jaxpr``'s own buffers.

    >>> from jaxpr_ir import Var, ShapedArray, Eqn, Jaxpr, primitives
    >>> x = Var(ShapedArray((2,), "float32")); y = Var(x.aval)
    >>> j = Jaxpr([], [x], [Eqn(primitives["square"], [x], [y], {})], [y])
    >>> [e.primitive.name for e in decompose(j, {}, {np.dtype("float32")}).eqns]
    ['mul']
    """
    eqns, changed = [], False
    for e in jaxpr.eqns:
        rule = DECOMPOSITIONS.get(e.primitive.name)
        pieces = None
        if rule is not None and e.primitive.name not in lowered and e.inputs and \
                e.inputs[0].aval.dtype in dtypes:
            pieces = rule(e)
        if pieces is None:
            eqns.append(e)
        else:
            eqns.extend(pieces)
            changed = True
    if not changed:
        return jaxpr
    return Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, jaxpr.outvars)
