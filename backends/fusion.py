"""Fusion planning shared by the native backends (CPU now, CUDA later).

``plan(jaxpr, classify)`` splits a jaxpr's equations into an ordered list of steps:

- ``Kernel``: equations run as ONE loop nest over a common *loop shape*: a chain of
  elementwise equations (all of that shape) plus reductions consuming values of that
  shape. Values defined inside a kernel and needed nowhere else never touch memory.
- ``HostStep``: one equation the backend cannot generate code for; it runs through
  the primitive's numpy ``impl`` between kernels, so every jaxpr runs from day one.

*Row kernels* (``plan(..., row_fusion=True)``, for backends whose code generator lowers
them): a kernel whose reductions all reduce the same trailing axes may go on with
equations that read those results broadcast back along the reduced axes (``x - max(x,
axis=1)[:, None]``), or per row (``log(sum) + m``). The loop nest then runs per *row*
(the kept leading dimensions) through ordered ``Phase``s: ``inner`` phases loop over the
row's reduced dimensions (elementwise work and reductions), ``row`` phases run once per
row on the per-row values. Each row is re-read by the later phases while it is still in
cache, so a softmax or logsumexp reads its input from memory once instead of once per
reduction; rows are independent, so a backend may split them over threads.

*Views* (``broadcast_in_dim``, ``transpose``, ``reshape`` of a contiguous value) cost
nothing: they become strided reads (``View``) of an existing buffer, folded into the
index arithmetic of the kernels that read them, and are materialised with numpy only
where a host step or an output needs them.

*Recomputation* (``plan(..., recompute=cheap)``): a value a few cheap elementwise
equations compute from values kept anyway (a backward pass's ``1 - t*t`` of a saved
``t``) is computed again in the kernels that read it instead of being written out.

This module owns that layout knowledge
(shared by every native backend); the backend supplies ``classify(eqn)``, which says
whether its code generator can compute an equation elementwise or as a reduction.

>>> from jaxpr_ir import Jaxpr, Var, ShapedArray
>>> a = Var(ShapedArray((3,), "float64"))
>>> plan(Jaxpr([], [a], [], [a]), lambda e: None).steps
[]
"""
from __future__ import annotations

import dataclasses

from jaxpr_ir import Eqn, Literal, Var

__all__ = ["View", "Kernel", "Phase", "HostStep", "Opaque", "Plan", "plan",
           "contiguous_strides", "VIEW_RULES", "ELEMENTWISE", "REDUCE", "OPAQUE", "INNER", "ROW"]

ELEMENTWISE = "elementwise"
REDUCE = "reduce"
OPAQUE = "opaque"      # generated natively, but on its own (not fused into a loop nest)
INNER = "inner"        # a row kernel phase looping over the reduced dimensions of a row
ROW = "row"            # a row kernel phase run once per row


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
class Phase:
    """A row kernel's step per row: ``INNER`` (loops over the reduced dimensions) or
    ``ROW`` (once per row, on values of the row shape)."""
    kind: str
    eqns: list


@dataclasses.dataclass
class Kernel:
    """Equations fused into one loop nest over ``shape``.

    ``inputs``: vars read from outside (buffers or views), ``outputs``: vars defined here
    and needed later (written to fresh buffers); reduction outputs are among them.
    A row kernel also has ``phases`` (its ``eqns`` in per-row order; ``eqns`` lists them
    all), ``outer`` (how many leading dimensions of ``shape`` are kept: the row shape is
    ``shape[:outer]``) and ``carried`` (values of the loop shape an inner phase defines
    and a later one reads: the backend keeps a row of each, unless it is an output).
    """
    shape: tuple
    eqns: list
    inputs: list = dataclasses.field(default_factory=list)
    outputs: list = dataclasses.field(default_factory=list)
    reduced: set = dataclasses.field(default_factory=set)   # vars defined by reductions
    phases: list = None
    outer: int = 0
    carried: list = dataclasses.field(default_factory=list)
    # the sorted axes of each reduction in ``eqns``, kept as they are added (planning
    # asks for them at every equation: recomputing them made planning quadratic)
    reduce_axes: set = dataclasses.field(default_factory=set, repr=False, compare=False)


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


def plan(jaxpr, classify, *, row_fusion=False, max_carry_bytes=1 << 16, max_kernel_eqns=None,
         recompute=None):
    """Group ``jaxpr``'s equations into kernels and host steps (see the module docstring).

    ``classify(eqn)`` returns ``ELEMENTWISE``, ``REDUCE``, ``OPAQUE`` (a native step of
    its own) or None (not native: a host step). ``row_fusion``: the backend lowers row
    kernels; ``max_carry_bytes`` bounds the bytes of one row of the values a row kernel
    carries between its phases (the backend keeps them in a per-row scratch);
    ``max_kernel_eqns``: a kernel holding that many equations is closed and the next
    one opened (a compiler's time on one loop body grows faster than its size);
    ``recompute(eqn)``: whether an elementwise equation is cheap enough to run again in
    the kernels that read its value instead of saving that value (see ``_recompute``).
    """
    views: dict = {}
    steps: list = []
    group = None          # the open Kernel
    defined_in = {}       # Var -> the Kernel defining it
    phase_of = {}         # Var -> index of the phase of its group defining it

    def close():
        nonlocal group
        if group is not None:
            steps.append(group)
            group = None

    for eqn in jaxpr.eqns:
        rule = VIEW_RULES.get(eqn.primitive.name)
        if rule is not None and len(eqn.inputs) == 1 and not eqn.primitive.multiple_results:
            x = eqn.inputs[0]
            base = _as_view(x, views).base if isinstance(x, Var) else None
            if group is not None and defined_in.get(base) is group and not (
                    row_fusion and _is_row_value(group, base, phase_of)):
                close()   # the view reads a value this kernel must first write out
            v = rule(_as_view(x, views), eqn.outvars[0].aval.shape, **eqn.params)
            if v is not None:
                views[eqn.outvars[0]] = v
                continue
        kind = classify(eqn)
        if kind in (ELEMENTWISE, REDUCE):
            if group is not None and max_kernel_eqns and len(group.eqns) >= max_kernel_eqns:
                close()
            loop_shape = tuple(eqn.outvars[0].aval.shape if kind == ELEMENTWISE
                               else eqn.inputs[0].aval.shape)
            slot = None       # phase index in a row kernel; None: a plain kernel
            if group is not None:
                if row_fusion:
                    slot = _row_slot(group, eqn, kind, loop_shape, views, defined_in,
                                     phase_of, max_carry_bytes)
                if group.phases is None and slot is not None and slot[0] == 0 \
                        and slot[1] == INNER:
                    slot = None     # fits the plain kernel as it is
                if slot is None and (group.phases is not None or group.shape != loop_shape
                                     or _reads(eqn, group.reduced, views)):
                    close()
            if group is None:
                group = Kernel(loop_shape, [])
            if slot is not None:
                _add_to_phase(group, eqn, slot, phase_of)
            else:
                phase_of.update((o, 0) for o in eqn.outvars)
            group.eqns.append(eqn)
            if kind == REDUCE:
                group.reduce_axes.add(tuple(sorted(eqn.params["axes"])))
            for o in eqn.outvars:
                defined_in[o] = group
                if kind == REDUCE:
                    group.reduced.add(o)
            continue
        close()
        steps.append(Opaque(eqn) if kind == OPAQUE else HostStep(eqn))
    close()
    _wire(jaxpr, steps, views, defined_in)
    if recompute is not None:
        changed = _recompute(jaxpr, steps, views, defined_in, recompute)
        if changed:
            _wire(jaxpr, steps, views, defined_in)    # the outputs left, then the inputs
            for k in changed:
                _prune(k, views)
            _wire(jaxpr, steps, views, defined_in)
    return Plan([s for s in steps if not isinstance(s, Kernel) or s.outputs], views)


def _reads(eqn, vars_, views):
    """Whether ``eqn`` reads one of ``vars_``, directly or through a view."""
    for x in eqn.inputs:
        if isinstance(x, Var) and (x in vars_ or (x in views and views[x].base in vars_)):
            return True
    return False


# --------------------------------------------------------------------------- row kernels

def _row_split(group):
    """How many leading loop dimensions a row kernel made of ``group`` keeps: every
    reduction reduces the same trailing axes, and at least one dimension is kept."""
    if group.phases is not None:
        return group.outer
    axes = group.reduce_axes
    if len(axes) != 1:
        return None
    (ax,) = axes
    n = len(group.shape)
    r = n - len(ax)
    if not ax or r < 1 or ax != tuple(range(r, n)):
        return None
    return r


def _phase_kinds(group):
    return [p.kind for p in group.phases] if group.phases is not None else [INNER]


def _is_row_value(group, v, phase_of):
    """A per-row value of ``group``: a reduction result, or defined by a row phase."""
    if v in group.reduced:
        return True
    return group.phases is not None and group.phases[phase_of.get(v, 0)].kind == ROW


def _is_row_view(v, loop_shape, r):
    """Whether ``v`` (a view of a row-shaped value) reads, at every index of
    ``loop_shape``, the element of the current row: the row dimensions walk the value
    contiguously from offset 0 and the others broadcast."""
    if v.offset != 0 or tuple(v.shape) != tuple(loop_shape):
        return False
    rs = contiguous_strides(loop_shape[:r])
    for d, n in enumerate(loop_shape):
        if n != 1 and v.strides[d] != (rs[d] if d < r else 0):
            return False
    return True


def _row_slot(group, eqn, kind, loop_shape, views, defined_in, phase_of, max_carry):
    """(phase index, phase kind, values it newly carries between phases) where ``eqn``
    joins ``group`` as a row kernel (an index past the last phase opens a new phase),
    or None when it cannot: ``group``'s reductions are not all over the same trailing
    axes, ``eqn`` has another loop shape, reads another row's value, or a view of a
    value of the loop shape defined here, or would carry too much."""
    r = _row_split(group)
    if r is None:
        return None
    shape = tuple(group.shape)
    if kind == REDUCE:
        if loop_shape != shape or tuple(sorted(eqn.params["axes"])) != tuple(range(r, len(shape))):
            return None
        pk = INNER
    elif loop_shape == shape:
        pk = INNER
    elif loop_shape in (shape[:r], shape[:r] + (1,) * (len(shape) - r)):
        pk = ROW                # per row (the second form: keepdims)
    else:
        return None
    kinds = _phase_kinds(group)
    lo, carried, touches = 0, [], False
    for x in eqn.inputs:
        if not isinstance(x, Var):
            continue
        v = _as_view(x, views)
        if defined_in.get(v.base) is not group:
            continue
        touches = True
        p = phase_of.get(v.base, 0)
        if _is_row_value(group, v.base, phase_of):
            if not _is_row_view(v, loop_shape, r):
                return None     # it reads other rows' values
            # a reduction is complete after its phase; a row value within its phase
            lo = max(lo, p + 1 if (kinds[p] == INNER or pk == INNER) else p)
        elif x is v.base and pk == INNER:
            lo = max(lo, p)     # the same element of a value of the loop shape
            carried.append((x, p))
        else:
            return None
    if pk == ROW and not touches:
        return None             # nothing per row to share with this kernel
    last = len(kinds) - 1
    slot = last if kinds[last] == pk and lo <= last else last + 1
    carry = list(dict.fromkeys(x for x, p in carried if p < slot and x not in group.carried))
    if carry:
        row = 1
        for d in shape[r:]:
            row *= d
        have = sum(v.aval.dtype.itemsize for v in group.carried + carry)
        if row * have > max_carry:
            return None
    return slot, pk, carry


def _add_to_phase(group, eqn, slot, phase_of):
    """Append ``eqn`` to phase ``slot`` of ``group`` (made a row kernel if it is not)."""
    index, pk, carry = slot
    if group.phases is None:
        group.outer = _row_split(group)
        group.phases = [Phase(INNER, list(group.eqns))]
    if index == len(group.phases):
        group.phases.append(Phase(pk, []))
    group.phases[index].eqns.append(eqn)
    group.carried.extend(x for x in carry if x not in group.carried)
    for o in eqn.outvars:
        phase_of[o] = index


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
        ins, outs = {}, []        # ins: an ordered set
        for e in s.eqns:
            for x in e.inputs:
                # a row kernel reads its own per-row values through views: not inputs
                base = views[x].base if isinstance(x, Var) and x in views else x
                if isinstance(x, Var) and defined_in.get(base) is not s:
                    ins[x] = None
            for o in e.outvars:
                if any(u != id(s) for u in needed_outside.get(o, ())):
                    outs.append(o)
        s.inputs, s.outputs = list(ins), outs


# --------------------------------------------------------------------------- recomputation

MAX_RECOMPUTED_EQNS = 8    # equations one recomputed value may cost each kernel reading it


def _base_var(x, views):
    b = views[x].base if x in views else x
    return b if isinstance(b, Var) else None


def _uses(jaxpr, steps, views, defined_in):
    """(last step reading each base var, {base var: [(step index, plain kernel reading it
    directly, or None for any other reader)]}); the outputs are read at step len(steps)."""
    last, users = {}, {}
    for i, s in enumerate(steps):
        for e in (s.eqns if isinstance(s, Kernel) else [s.eqn]):
            for x in e.inputs:
                b = _base_var(x, views) if isinstance(x, Var) else None
                if b is None:
                    continue
                last[b] = i
                if defined_in.get(b) is not s:
                    plain = isinstance(s, Kernel) and s.phases is None and x is b
                    users.setdefault(b, []).append((i, s if plain else None))
    for x in jaxpr.outvars:
        b = _base_var(x, views) if isinstance(x, Var) else None
        if b is not None:
            last[b] = len(steps)
            users.setdefault(b, []).append((len(steps), None))
    return last, users


def _expression(o, made, kept, views, cheap):
    """(equations computing ``o`` from values outside them, in order; the base vars they
    read) within one kernel (``made``: var -> its equation there), stopping at ``kept``
    values and values from outside; None when an equation on the way is not ``cheap``."""
    order, leaves, seen, entered = [], set(), set(), []

    def visit(v):
        if v in seen:
            return True
        seen.add(v)
        e = made.get(v)
        if e is None or (v is not o and v in kept):
            leaves.add(v)
            return True
        entered.append(e)
        if len(e.outvars) != 1 or not cheap(e) or len(entered) > MAX_RECOMPUTED_EQNS:
            return False
        for x in e.inputs:
            if not isinstance(x, Var):
                continue
            if x in views:
                b = views[x].base
                if isinstance(b, Var):
                    if b in made and b not in kept:
                        return False
                    leaves.add(b)
                continue
            if not visit(x):
                return False
        order.append(e)
        return True
    return (order, leaves) if visit(o) else None


def _recompute(jaxpr, steps, views, defined_in, cheap):
    """Recompute instead of saving: a plain kernel's output that only plain kernels of
    its shape read (directly, not through views), and that a few ``cheap`` elementwise
    equations compute from values kept in memory anyway (literals, the program's inputs,
    the kernel's other outputs, values read later still), is no longer written: each
    reader runs those equations again (a backward pass reads ``1 - t*t`` of a saved
    ``t`` this way). A value whose life this extends (read later than before) costs its
    bytes; the recomputation happens only when those are at most the saved value's, so
    peak memory never grows, and when each reader reads at most twice the saved value's
    bytes anew (the write and the read it saves). Returns the kernels that no longer
    write a value (their wiring, and that of the kernels reading it, is stale)."""
    last, users = _uses(jaxpr, steps, views, defined_in)
    forever = set(jaxpr.invars) | set(jaxpr.constvars)
    pinned, changed = set(), {}
    for k in steps:
        if not isinstance(k, Kernel) or k.phases is not None:
            continue
        made = {v: e for e in k.eqns for v in e.outvars}
        removed = set()
        for o in list(k.outputs):
            readers = users.get(o, ())
            if o in k.reduced or o in pinned or not readers or any(
                    s is None or tuple(s.shape) != tuple(o.aval.shape) for _, s in readers):
                continue
            found = _expression(o, made, set(k.outputs) - removed, views, cheap)
            if found is None:
                continue
            order, leaves = found
            end = max(i for i, _ in readers)
            size = _nbytes(o)
            if sum(_nbytes(b) for b in leaves if b not in forever and last.get(b, -1) < end) \
                    > size:
                continue
            kernels = {id(s): s for _, s in readers}.values()
            # bytes each reader reads anew, at most the write and read of ``o`` it saves
            if any(sum(_nbytes(b) for b in leaves - _bases(s, views)) > 2 * size
                   for s in kernels):
                continue
            for s in kernels:
                _inline(s, o, order, defined_in)
            for b in leaves:
                last[b] = max(last.get(b, -1), end)
            pinned.update(leaves)
            removed.add(o)
            changed[id(k)] = k
    return list(changed.values())


def _prune(k, views):
    """Drop the equations of plain kernel ``k`` whose values nothing reads any more."""
    live, keep = set(k.outputs), []
    for e in reversed(k.eqns):
        if any(v in live for v in e.outvars):
            keep.append(e)
            live.update(x for x in e.inputs if isinstance(x, Var))
            live.update(views[x].base for x in e.inputs if isinstance(x, Var) and x in views)
    k.eqns = keep[::-1]
    k.reduced &= live


def _nbytes(v):
    return v.aval.size * v.aval.dtype.itemsize


def _bases(k, views):
    """The buffer vars kernel ``k``'s equations read."""
    return {b for e in k.eqns for x in e.inputs if isinstance(x, Var)
            for b in (_base_var(x, views),) if b is not None}


def _inline(s, o, order, defined_in):
    """Put fresh copies of ``order`` (computing ``o``) at the front of kernel ``s`` and
    make its equations read the copy of ``o``."""
    sub, clones = {}, []
    for e in order:
        outs = [Var(v.aval) for v in e.outvars]
        clones.append(Eqn(e.primitive, [sub.get(x, x) if isinstance(x, Var) else x
                                        for x in e.inputs], outs, e.params, e.source))
        sub.update(zip(e.outvars, outs))
        for v in outs:
            defined_in[v] = s
    new = sub[o]
    s.eqns = clones + [e if not any(x is o for x in e.inputs) else
                       Eqn(e.primitive, [new if x is o else x for x in e.inputs], e.outvars,
                           e.params, e.source) for e in s.eqns]
