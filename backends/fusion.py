"""Fusion planning shared by the native backends (CPU now, CUDA later).

``plan(jaxpr, classify)`` splits a jaxpr's equations into an ordered list of steps:

- ``Kernel``: equations run as ONE loop nest over a common *loop shape*: a chain of
  elementwise equations (all of that shape) plus reductions consuming values of that
  shape. Values defined inside a kernel and needed nowhere else never touch memory.
- ``HostStep``: one equation the backend cannot generate code for; it runs through
  the primitive's numpy ``impl`` between kernels, so every jaxpr runs from day one.

*Views* (``broadcast_in_dim``, ``transpose``, ``reshape`` of a contiguous value) cost
nothing: they become strided reads (``View``) of an existing buffer, folded into the
index arithmetic of the kernels that read them, and are materialised with numpy only
where a host step or an output needs them. This module owns that layout knowledge
(shared by every native backend); the backend supplies ``classify(eqn)``, which says
whether its code generator can compute an equation elementwise or as a reduction.

>>> from jaxpr_ir import Jaxpr, Var, ShapedArray
>>> a = Var(ShapedArray((3,), "float64"))
>>> plan(Jaxpr([], [a], [], [a]), lambda e: None).steps
[]
"""
from __future__ import annotations

import dataclasses

from jaxpr_ir import Literal, Var

__all__ = ["View", "Kernel", "HostStep", "Opaque", "Plan", "plan", "contiguous_strides",
           "VIEW_RULES", "ELEMENTWISE", "REDUCE", "OPAQUE"]

ELEMENTWISE = "elementwise"
REDUCE = "reduce"
OPAQUE = "opaque"      # generated natively, but on its own (not fused into a loop nest)


def contiguous_strides(shape):
    """Row-major strides in elements.

    >>> contiguous_strides((2, 3, 4))
    (12, 4, 1)
    """
    out, s = [], 1
    for d in reversed(shape):
        out.append(s)
        s *= d
    return tuple(reversed(out))


@dataclasses.dataclass(frozen=True)
class View:
    """A strided read of ``base`` (a buffer Var or a scalar Literal) with ``shape``."""
    base: object
    shape: tuple
    strides: tuple   # in elements; 0 on broadcast dimensions
    offset: int = 0

    @property
    def contiguous(self):
        return self.offset == 0 and self.dense

    @property
    def dense(self):
        """Row-major order from ``offset`` on (strides of size-1 dimensions do not matter)."""
        s = 1
        for d in reversed(range(len(self.shape))):
            if self.shape[d] == 0:
                return True
            if self.shape[d] != 1 and self.strides[d] != s:
                return False
            s *= self.shape[d]
        return True


@dataclasses.dataclass
class Kernel:
    """Equations fused into one loop nest over ``shape``.

    ``inputs``: vars read from outside (buffers or views), ``outputs``: vars defined here
    and needed later (written to fresh buffers); reduction outputs are among them.
    """
    shape: tuple
    eqns: list
    inputs: list = dataclasses.field(default_factory=list)
    outputs: list = dataclasses.field(default_factory=list)
    reduced: set = dataclasses.field(default_factory=set)   # vars defined by reductions


@dataclasses.dataclass
class HostStep:
    eqn: object


@dataclasses.dataclass
class Opaque:
    """One equation with its own native emitter (control flow, BLAS, gather...)."""
    eqn: object


@dataclasses.dataclass
class Plan:
    steps: list
    views: dict          # Var -> View, for vars defined by view equations


# --------------------------------------------------------------------------- view rules
# Each rule maps the operand's View and the eqn params to the result's View, or None
# when the result is not a strided read of the operand's base.

def _view_broadcast_in_dim(v, out_shape, *, shape, broadcast_dimensions):
    strides = [0] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        strides[d] = v.strides[i] if v.shape[i] == shape[d] else 0
    return View(v.base, tuple(shape), tuple(strides), v.offset)


def _view_transpose(v, out_shape, *, permutation):
    return View(v.base, tuple(out_shape), tuple(v.strides[p] for p in permutation), v.offset)


def _view_reshape(v, out_shape, **params):
    if not v.dense:
        return None
    return View(v.base, tuple(out_shape), contiguous_strides(out_shape), v.offset)


def _view_squeeze(v, out_shape, *, dimensions):
    keep = [i for i in range(len(v.shape)) if i not in dimensions]
    return View(v.base, tuple(out_shape), tuple(v.strides[i] for i in keep), v.offset)


def _view_slice(v, out_shape, *, start_indices, limit_indices, strides):
    steps = strides or (1,) * len(start_indices)
    off = v.offset + sum(s * st for s, st in zip(start_indices, v.strides))
    return View(v.base, tuple(out_shape), tuple(st * k for st, k in zip(v.strides, steps)), off)


def _view_rev(v, out_shape, *, dimensions):
    off, strides = v.offset, list(v.strides)
    for d in dimensions:
        if v.shape[d] > 0:
            off += (v.shape[d] - 1) * strides[d]
        strides[d] = -strides[d]
    return View(v.base, tuple(out_shape), tuple(strides), off)


VIEW_RULES = {
    "slice": _view_slice,
    "rev": _view_rev,
    "broadcast_in_dim": _view_broadcast_in_dim,
    "transpose": _view_transpose,
    "reshape": _view_reshape,
    "squeeze": _view_squeeze,
}


# --------------------------------------------------------------------------- planner

def _as_view(x, views):
    if isinstance(x, Literal):
        return View(x, (), (), 0)
    v = views.get(x)
    if v is not None:
        return v
    return View(x, x.aval.shape, contiguous_strides(x.aval.shape), 0)


def plan(jaxpr, classify):
    """Group ``jaxpr``'s equations into kernels and host steps (see the module docstring).

    ``classify(eqn)`` returns ``ELEMENTWISE``, ``REDUCE``, ``OPAQUE`` (a native step of
    its own) or None (not native: a host step).
    """
    views: dict = {}
    steps: list = []
    group = None          # the open Kernel
    defined_in = {}       # Var -> the Kernel defining it

    def close():
        nonlocal group
        if group is not None:
            steps.append(group)
            group = None

    for eqn in jaxpr.eqns:
        rule = VIEW_RULES.get(eqn.primitive.name)
        if rule is not None and len(eqn.inputs) == 1 and not eqn.primitive.multiple_results:
            x = eqn.inputs[0]
            if isinstance(x, Var) and group is not None and defined_in.get(x) is group:
                close()   # the view reads a value this kernel must first write out
            v = rule(_as_view(x, views), eqn.outvars[0].aval.shape, **eqn.params)
            if v is not None:
                views[eqn.outvars[0]] = v
                continue
        kind = classify(eqn)
        if kind in (ELEMENTWISE, REDUCE):
            loop_shape = (eqn.outvars[0].aval.shape if kind == ELEMENTWISE
                          else eqn.inputs[0].aval.shape)
            if group is not None:
                uses_reduced = any(isinstance(x, Var) and x in group.reduced for x in eqn.inputs)
                if group.shape != loop_shape or uses_reduced:
                    close()
            if group is None:
                group = Kernel(tuple(loop_shape), [])
            group.eqns.append(eqn)
            for o in eqn.outvars:
                defined_in[o] = group
                if kind == REDUCE:
                    group.reduced.add(o)
            continue
        close()
        steps.append(Opaque(eqn) if kind == OPAQUE else HostStep(eqn))
    close()
    _wire(jaxpr, steps, views, defined_in)
    return Plan([s for s in steps if not isinstance(s, Kernel) or s.outputs], views)


def _wire(jaxpr, steps, views, defined_in):
    """Fill each kernel's inputs (external vars read) and outputs (vars needed outside)."""
    needed_outside = {}   # Var -> set of kernels (or None for host/output) using it

    def use(x, user):
        if isinstance(x, Var):
            base = views[x].base if x in views else x
            needed_outside.setdefault(x, set()).add(user)
            if base is not x and isinstance(base, Var):
                needed_outside.setdefault(base, set()).add(user)

    for s in steps:
        if isinstance(s, Kernel):
            for e in s.eqns:
                for x in e.inputs:
                    use(x, id(s))
        else:
            for x in s.eqn.inputs:
                use(x, None)
    for x in jaxpr.outvars:
        use(x, None)
    for s in steps:
        if not isinstance(s, Kernel):
            continue
        ins, outs = [], []
        for e in s.eqns:
            for x in e.inputs:
                if isinstance(x, Var) and defined_in.get(x) is not s and x not in ins:
                    ins.append(x)
            for o in e.outvars:
                if any(u != id(s) for u in needed_outside.get(o, ())):
                    outs.append(o)
        s.inputs, s.outputs = ins, outs
