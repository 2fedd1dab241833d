"""The bookkeeping of ``shard_map``: partition specs per array, block shapes, and the
replication check (which mesh axes a value of the body may vary along).

A normalized spec has one entry per dimension of the array: the tuple of mesh axis names
the dimension is split over (``()``: whole).

>>> from functrans.sharding import Mesh, P
>>> from jaxpr_ir import ShapedArray
>>> normalize_spec(P("i"), ShapedArray((4, 3), "float64"), Mesh((1,), ("i",)), "x")
(('i',), ())
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import Literal, ShapedArray
from .sharding import PartitionSpec, mesh_frames
from .tracing import Tracer
from .tree_util import tree_leaves

__all__ = ["normalize_spec", "spec_leaves", "block_aval", "global_aval", "check_replication",
           "spec_axes", "reverse_mode_plan", "collective_axes", "typing_key",
           "replicated_axes", "forget_typing"]

# collectives and how they change the set of axes a value varies along
_REDUCING = {"psum", "pmax", "pmin", "all_gather"}     # result: the same on every member
_SPREADING = {"psum_scatter", "ppermute", "all_to_all", "axis_index"}   # result: varies
JAX_REDUCING = {"psum", "pmax", "pmin"}   # JAX 0.10's typing: all_gather's result varies


def normalize_spec(spec, aval, mesh, what, divisible=True):
    """The per-dimension tuple of axis names, checked against ``aval`` and ``mesh`` (and,
    for a global array, ``divisible``: each split dimension into its blocks)."""
    if not isinstance(spec, PartitionSpec):
        raise TypeError(f"shard_map: the spec of {what} must be a PartitionSpec, got {spec!r}")
    if len(spec) > aval.ndim:
        raise ValueError(f"shard_map: {what} has rank {aval.ndim} (shape {aval.shape}) but its "
                         f"spec {spec!r} names {len(spec)} dimensions")
    out, seen = [], set()
    for dim, e in enumerate(tuple(spec) + (None,) * (aval.ndim - len(spec))):
        names = () if e is None else (e if isinstance(e, tuple) else (e,))
        for n in names:
            if n not in mesh.axis_names:
                raise ValueError(f"shard_map: the spec {spec!r} of {what} names {n!r}, which "
                                 f"is not an axis of {mesh!r}")
            if n in seen:
                raise ValueError(f"shard_map: the spec {spec!r} of {what} uses axis {n!r} "
                                 f"twice")
            seen.add(n)
        k = mesh.axis_size(names) if names else 1
        if divisible and aval.shape[dim] % k:
            raise ValueError(f"shard_map: dimension {dim} of {what} (shape {aval.shape}) has "
                             f"size {aval.shape[dim]}, which does not divide into {k} blocks "
                             f"over mesh axes {names} (spec {spec!r})")
        out.append(names)
    return tuple(out)


def spec_leaves(specs, tree, what):
    """One spec per leaf of ``tree``: ``specs`` is a PartitionSpec (for the whole subtree)
    or a tuple/list/dict with the structure of ``tree`` down to where specs are given; None
    (for the whole subtree) gives None per leaf."""
    if specs is None or isinstance(specs, PartitionSpec):
        return [specs] * len(tree_leaves(tree))
    if isinstance(specs, (tuple, list)) and isinstance(tree, (tuple, list)):
        if len(specs) != len(tree):
            raise ValueError(f"shard_map: {what} has {len(specs)} entries for {len(tree)} values")
        return [s for sp, t in zip(specs, tree) for s in spec_leaves(sp, t, what)]
    if isinstance(specs, dict) and isinstance(tree, dict):
        if set(specs) != set(tree):
            raise ValueError(f"shard_map: {what} keys {sorted(specs)} differ from the values' "
                             f"keys {sorted(tree)}")
        return [s for k in sorted(tree) for s in spec_leaves(specs[k], tree[k], what)]
    raise TypeError(f"shard_map: {what} {specs!r} does not match the structure of the values "
                    f"(a PartitionSpec, or a tuple/list/dict of them)")


def spec_axes(spec):
    """The set of mesh axes a normalized spec splits over."""
    return {n for names in spec for n in names}


def block_aval(aval, spec, mesh):
    """The aval of one process's block of a global array."""
    shape = tuple(s // (mesh.axis_size(n) if n else 1) for s, n in zip(aval.shape, spec))
    return ShapedArray(shape, aval.dtype, aval.weak_type)


def global_aval(aval, spec, mesh):
    """The aval of the global array assembled from blocks of type ``aval``."""
    shape = tuple(s * (mesh.axis_size(n) if n else 1) for s, n in zip(aval.shape, spec))
    return ShapedArray(shape, aval.dtype, aval.weak_type)


def collective_axes(jaxpr):
    """Every axis name a collective inside ``jaxpr`` (at any depth) names."""
    names = set()
    for e in jaxpr.eqns:
        n = e.params.get("axis_name")
        if n is not None and e.primitive.name in _REDUCING | _SPREADING:
            names.add(n)
        names |= _collective_axes_of_params(e)
    return names


def varying_axes(jaxpr, in_vary, mesh_axes, reducing=_REDUCING):
    """For each output of ``jaxpr``: the set of mesh axes it may vary along, given those of
    its inputs. Conservative: a value is only called replicated when it provably is.
    ``reducing``: the collectives whose result is the same on every member (JAX's typing
    counts an all_gather's result as varying: ``JAX_REDUCING``)."""
    env = dict(zip(jaxpr.invars, in_vary))
    _walk(env, jaxpr.eqns, mesh_axes, reducing)
    return [set() if type(a) is Literal else env.get(a, set()) for a in jaxpr.outvars]


def _walk(env, eqns, mesh_axes, reducing):
    """``varying_axes``'s pass: the typing of each equation's outputs into ``env``."""
    get = lambda a: set() if type(a) is Literal else env.get(a, set())   # noqa: E731
    for e in eqns:
        ins = set().union(*[get(a) for a in e.inputs]) if e.inputs else set()
        name = e.primitive.name
        n = e.params.get("axis_name")
        if name in reducing and n is not None:
            out = ins - {n}
        elif name in (_REDUCING | _SPREADING) - reducing and n is not None:
            out = ins | ({n} & mesh_axes)
        elif name in _CONTROL_FLOW:
            outs = _CONTROL_FLOW[name](e.params, [get(a) for a in e.inputs], mesh_axes,
                                       reducing)
            for v, o in zip(e.outvars, outs):
                env[v] = o
            continue
        elif e.primitive.call_param and e.primitive.call_param in e.params:
            body = e.params[e.primitive.call_param]
            outs = varying_axes(body.jaxpr, [get(a) for a in e.inputs], mesh_axes, reducing)
            for v, o in zip(e.outvars, outs):
                env[v] = o
            continue
        else:
            out = ins | (_collective_axes_of_params(e) & mesh_axes)
        for v in e.outvars:
            env[v] = out


def _body(b):
    return getattr(b, "jaxpr", b)


def _scan_vary(params, ins, mesh_axes, reducing):
    nc, nk = params["num_consts"], params["num_carry"]
    consts, carry, xs = ins[:nc], ins[nc:nc + nk], ins[nc + nk:]
    while True:     # carries only gain axes: a fixed point within len(mesh_axes) rounds
        outs = varying_axes(_body(params["jaxpr"]), consts + carry + xs, mesh_axes, reducing)
        new = [c | o for c, o in zip(carry, outs[:nk])]
        if new == carry:
            return carry + outs[nk:]
        carry = new


def _while_vary(params, ins, mesh_axes, reducing):
    cn, bn = params["cond_nconsts"], params["body_nconsts"]
    cc, bc, carry = ins[:cn], ins[cn:cn + bn], ins[cn + bn:]
    while True:     # a predicate that varies makes every carry vary (the trip count does)
        pred = varying_axes(_body(params["cond_jaxpr"]), cc + carry, mesh_axes, reducing)[0]
        outs = varying_axes(_body(params["body_jaxpr"]), bc + carry, mesh_axes, reducing)
        new = [c | o | pred for c, o in zip(carry, outs)]
        if new == carry:
            return carry
        carry = new


def _cond_vary(params, ins, mesh_axes, reducing):
    index, ops = ins[0], ins[1:]
    per_branch = [varying_axes(_body(b), ops, mesh_axes, reducing) for b in params["branches"]]
    return [set(index).union(*outs) for outs in zip(*per_branch)]


_CONTROL_FLOW = {"scan": _scan_vary, "while": _while_vary, "cond": _cond_vary}


def _collective_axes_of_params(e):
    names = set()
    for v in e.params.values():
        for b in (v if isinstance(v, (tuple, list)) else (v,)):
            bj = getattr(b, "jaxpr", None)
            if bj is not None and hasattr(bj, "eqns"):
                names |= collective_axes(bj)
    return names


def check_replication(jaxpr, in_specs, out_specs, mesh):
    """Raise if an output spec claims replication along an axis its value may vary along."""
    mesh_axes = set(mesh.axis_names)
    outs = varying_axes(jaxpr, [spec_axes(s) for s in in_specs], mesh_axes)
    for i, (vary, spec) in enumerate(zip(outs, out_specs)):
        bad = sorted(vary - spec_axes(spec))
        if bad:
            entries = [None if not n else n[0] if len(n) == 1 else n for n in spec]
            while entries and entries[-1] is None:
                entries.pop()
            shown = PartitionSpec(*entries)
            raise ValueError(
                f"shard_map: out_specs give output {i} the spec {shown!r}, which says it is "
                f"replicated along mesh axis {bad[0]!r}, but it may vary along {bad[0]!r} "
                f"(reduce it there with psum/pmean/pmax/all_gather, split a dimension over "
                f"{bad[0]!r} in out_specs, or pass check_rep=False)")



# --------------------------------------------------------------------------- reverse mode

def _primal_of(x):
    """A value being differentiated (a grad inside the grad) is typed as its primal."""
    while isinstance(x, Tracer) and hasattr(x, "primal"):
        x = x.primal
    return x


_UNSEEN = object()   # stands in a typing for "a value of a trace whose inputs are not known"


def _vary_of(values, frame):
    """The mesh axes each value of a body being traced varies along by JAX's typing (one
    pass over the body so far, and over each trace inside it that holds them: a jit, vmap,
    checkpoint, cond branch or scan body inside the body records the values its inputs
    stand for, ``Trace.sources``); None for a value whose typing this cannot see (one of a
    trace that records no sources, or computed from a loop carry)."""
    return [None if _UNSEEN in v else v for v in _vary_sets(values, frame, {})]


def _vary_sets(values, frame, memo):
    values = [_primal_of(x) for x in values]
    out, by_trace = [], {}
    for i, x in enumerate(values):
        if x is None:               # an input that stands for no one value (a loop carry)
            out.append({_UNSEEN})
        elif isinstance(x, Tracer) and x._trace.level >= frame.level:
            by_trace.setdefault(id(x._trace), []).append(i)
            out.append({_UNSEEN})
        else:                       # a constant or a value closed over from outside
            out.append(set())
    for idx in by_trace.values():
        t = values[idx[0]]._trace
        if t.level == frame.level:
            invars, ins = t.invars, frame.ad_vary[1]
        elif t.sources is None:
            continue                # unseen
        else:
            if id(t) not in memo:   # this trace's inputs: its constants, then arguments
                memo[id(t)] = _vary_sets(list(t.consts) + list(t.sources), frame, memo)
            invars, ins = list(t.constvars) + list(t.invars), memo[id(t)]
        env = _typed_so_far(t, invars, ins, set(frame.mesh.axis_names))
        for i in idx:
            out[i] = env.get(values[i].ir_var, set())
    return out


_TYPED: dict = {}   # id(trace) -> [trace, env, equations typed]: a body typed once, not per ask


def forget_typing():
    """Drop the typing of traces kept by ``_typed_so_far`` (a body's trace has ended)."""
    _TYPED.clear()


def _typed_so_far(t, invars, ins, mesh_axes):
    """The typing env of trace ``t``'s values so far, extended by its new equations (a
    trace only appends; its inputs' typing is fixed, constants lifted later are added)."""
    entry = _TYPED.get(id(t))
    if entry is None or entry[0] is not t:
        if len(_TYPED) > 64:
            _TYPED.clear()
        entry = _TYPED[id(t)] = [t, {}, 0]
    env = entry[1]
    for v, vary in zip(invars, ins):
        env.setdefault(v, vary)
    _walk(env, t.eqns[entry[2]:], mesh_axes, JAX_REDUCING)
    entry[2] = len(t.eqns)
    return env


def typing_key(values):
    """Inside a shard_map body traced with ``check_rep=True``: the mesh axes each of
    ``values`` varies along (a jit traced there keys its reuse by them, as a reverse mode
    inside it depends on them); None elsewhere."""
    frames = mesh_frames()
    if not frames or not frames[-1].tracing or frames[-1].ad_vary is None or all(
            frames[-1].mesh.axis_size(a) == 1 for a in frames[-1].ad_vary[0]):
        return None
    return tuple(None if v is None else frozenset(v) for v in _vary_of(values, frames[-1]))


def _typed_body_axes():
    """(the innermost shard_map frame, its manual axes of size > 1) while a body is traced
    with ``check_rep=True``; None otherwise or when no such axis is left."""
    frames = mesh_frames()
    if not frames or not frames[-1].tracing or frames[-1].ad_vary is None:
        return None
    frame = frames[-1]
    axes = {a for a in frame.ad_vary[0] if frame.mesh.axis_size(a) > 1}
    return (frame, axes) if axes else None


def replicated_axes(values, what):
    """Inside a shard_map body traced with ``check_rep=True``: for each of ``values`` the
    manual mesh axes (of size > 1) it is replicated along by JAX's typing; None elsewhere.
    A custom_vjp's bwd sees JAX's cotangents through them (``custom_rules``)."""
    typed = _typed_body_axes()
    if typed is None:
        return None
    frame, axes = typed
    varies = _vary_of(values, frame)
    if any(v is None for v in varies):
        raise ValueError(f"{what} inside a shard_map body with check_rep=True (JAX's "
                         "check_vma=True): the mesh-axis typing of its inputs is not seen "
                         "(a value of a trace that records no sources); pass "
                         "check_rep=False (check_vma=False)")
    return [tuple(sorted(axes - v)) for v in varies]


def check_replicated_cotangents(rep_in: list, cts: list, name: str) -> list:
    """Inside a shard_map body traced with ``check_rep=True``: raise if a cotangent ``cts[k]``
    of custom_vjp ``name``'s bwd varies along a mesh axis its argument is replicated along
    (``rep_in[k]``, from ``replicated_axes``), which JAX's typing refuses (ValueError) and a
    per-process backward pass would silently average; returns ``cts``.

    Example: a custom_vjp bwd returning ``g * u`` (u split over "i") as the cotangent of a
    weight given with ``P()`` raises here."""
    what = f"custom_vjp '{name}' bwd"
    got = replicated_axes(cts, what)
    for k, (want, have) in enumerate(zip(rep_in, got)):
        bad = sorted(set(want) - set(have))
        if bad:
            raise ValueError(
                f"{what}: its cotangent output {k} (shape {tuple(np.shape(cts[k]))}) varies "
                f"along mesh axis {bad[0]!r} but the argument is replicated along it (JAX "
                f"0.10 refuses it too: a bwd output must have its argument's type, mesh "
                f"axes included); reduce it over "
                f"{bad[0]!r} in bwd (psum) or pass check_rep=False")
    return cts


def check_carry_typing(closed, sources, carry_in, carry_out, names) -> None:
    """Inside a shard_map body traced with ``check_rep=True``: raise TypeError (as JAX 0.10)
    if a loop body ``closed``, its inputs standing for ``sources`` (a carry for its initial
    value), makes carry output ``carry_out[k]`` vary along a mesh axis its input
    ``carry_in[k]`` is replicated along: a carry keeps its initial value's typing (what a
    reverse mode inside the body was planned with).

    Example: ``fori_loop(0, 2, lambda k, c: c + x, w)`` with ``w`` given by ``P()`` and
    ``x`` split over "i" raises here; ``lax.pcast(w, "i", to="varying")`` as the initial
    value does not."""
    typed = _typed_body_axes()
    if typed is None or sources is None:
        return
    frame, axes = typed
    ins = _vary_of(list(closed.consts) + list(sources), frame)
    if any(v is None for v in ins):
        return      # an initial value of unseen typing: a reverse mode inside refuses
    j = closed.jaxpr
    env = dict(zip(list(j.constvars) + list(j.invars), ins))
    _walk(env, j.eqns, set(frame.mesh.axis_names), JAX_REDUCING)
    get = lambda a: set() if type(a) is Literal else env.get(a, set())   # noqa: E731
    for i, o, what in zip(carry_in, carry_out, names):
        extra = sorted((get(j.outvars[o]) - get(j.invars[i])) & axes)
        if extra:
            raise TypeError(f"{what} is replicated along mesh axis {extra[0]!r} on entry but "
                            f"varies along it on output; in a shard_map body with "
                            f"check_rep=True a loop carry keeps its type (as JAX's "
                            f"check_vma=True): make the initial value varying with "
                            f"lax.pcast(init, {extra[0]!r}, to='varying'), or pass "
                            f"check_rep=False")


def reverse_mode_plan(diff_inputs, outputs, what):
    """How reverse mode taken inside a shard_map body traced with ``check_rep=True`` gets
    JAX 0.10's values (``check_vma=True``), or None outside such a body.

    JAX types each value with the manual mesh axes it varies along: the cotangent of a value
    replicated along an axis is one value, summed over the axis where it meets varying
    values (the transpose of the implicit ``pvary``), and ``psum`` transposes to a copy.
    functrans's backward pass runs per process, ``psum`` transposing to ``psum``: each
    process then holds a part of a replicated value's cotangent, the parts summing to it.
    So the plan is: divide the cotangent of an output replicated along axes by their sizes
    (its parts), and ``psum`` the cotangent of a differentiated input replicated along axes
    over them. Returns (per output: the divisor, per input: the axes to psum over)."""
    typed = _typed_body_axes()
    if typed is None:
        return None
    frame, axes = typed
    varies = _vary_of(list(diff_inputs) + list(outputs), frame)
    for i, vary in enumerate(varies):
        if vary is None:
            which = (f"differentiated input leaf {i}" if i < len(diff_inputs) else
                     f"output leaf {i - len(diff_inputs)}")
            raise ValueError(
                f"{what} inside a shard_map body with check_rep=True (JAX's check_vma=True): "
                f"{which} is a value of a trace inside the body whose "
                "inputs functrans does not follow (a scan / fori_loop / while_loop carry), "
                "so it cannot see its mesh-axis typing and cannot give JAX's values (a "
                "replicated value's cotangent summed over the axis). Take the gradient "
                "outside the loop, or pass check_rep=False (check_vma=False) for JAX's "
                "check_vma=False values.")
    plan_in = [tuple(sorted(axes - vary)) for vary in varies[:len(diff_inputs)]]
    divisors = [int(np.prod([frame.mesh.axis_size(a) for a in axes - vary]))
                for vary in varies[len(diff_inputs):]]
    return divisors, plan_in
