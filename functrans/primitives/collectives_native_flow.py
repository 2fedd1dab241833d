"""Native collectives inside control flow: which loops may call MPI, and the handles.

A collective inside a ``scan``, ``while`` or ``cond`` of a shard_map body calls MPI from
native code (``collectives_native``) when every process of the mesh is sure to make the
same calls in the same order:

- ``scan`` (and ``fori_loop`` with static bounds): the trip count is static, always;
- ``while`` (``fori_loop`` with traced bounds): only when its predicate is *unvarying*,
  the same value on every process (computed only from literals, replicated shard_map
  inputs, results of ``psum``/``pmax``/``pmin``/``all_gather`` over every mesh axis, and
  loop carries that stay so); as JAX requires of a loop with collectives. A predicate
  this analysis cannot prove the same (a data-dependent one on a local block, say)
  leaves the loop a host step (the shard_map is then not inlined);
- ``cond``: the same rule for its index when a branch communicates.

The MPI handle arrays of the calls inside reach the loop body as extra consts (the
first inputs of its jaxpr): ``rebuild`` threads them through the equation's params.

>>> from jaxpr_ir import parse
>>> outs_same(ClosedJaxpr(parse("{ lambda ; a:f64[]. let b:f64[] = sin a in (b,) }"), []),
...           [True], ())
[True]
"""
from __future__ import annotations

from jaxpr_ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var

__all__ = ["FLOW", "communicates", "pieces", "safe", "rebuild", "mark", "outs_same",
           "sub_jaxprs"]

FLOW = frozenset({"scan", "while", "cond"})
_REPLICATING = frozenset({"psum", "pmax", "pmin", "all_gather"})
_COMM = frozenset({"psum", "pmax", "pmin", "all_gather", "psum_scatter", "all_to_all",
                   "ppermute", "shard_map"})
_VARYING = _COMM | {"axis_index"}


def _closed(v):
    return v if isinstance(v, ClosedJaxpr) else ClosedJaxpr(v, [])


def sub_jaxprs(e: Eqn):
    """The jaxprs among ``e``'s params (a cond's branches, a loop's bodies)."""
    for v in e.params.values():
        if isinstance(v, (ClosedJaxpr, Jaxpr)):
            yield _closed(v).jaxpr
        elif isinstance(v, (tuple, list)):
            yield from (_closed(x).jaxpr for x in v if isinstance(x, (ClosedJaxpr, Jaxpr)))


def _any_name(eqns, names) -> bool:
    return any(e.primitive.name in names or any(_any_name(j.eqns, names) for j in sub_jaxprs(e))
               for e in eqns)


def communicates(closed: ClosedJaxpr) -> bool:
    """Whether ``closed`` (at any depth) has a collective."""
    return _any_name(closed.jaxpr.eqns, _COMM)


def _is_same(a, same) -> bool:
    return isinstance(a, Literal) or a in same


def _axes(names):
    return set(names if isinstance(names, tuple) else (names,))


def mark(e: Eqn, same: set, mesh_axes) -> None:
    """Add ``e``'s outputs to ``same`` (vars equal on every process of the mesh) when they
    are: a reduction or gather over every axis of the mesh (``mesh_axes``: the names of
    its axes of more than one process), or an equation with nothing varying inside whose
    inputs are all the same."""
    name = e.primitive.name
    if name in _REPLICATING:
        ok = set(mesh_axes) <= _axes(e.params["axis_name"])
    elif name in _VARYING or any(_any_name(j.eqns, _VARYING) for j in sub_jaxprs(e)):
        ok = False
    else:
        ok = all(_is_same(a, same) for a in e.inputs)
    if ok:
        same.update(e.outvars)


def outs_same(closed: ClosedJaxpr, flags, mesh_axes) -> list:
    """Which outputs of ``closed`` are the same on every process, given which inputs are."""
    j = closed.jaxpr
    same = {v for v, f in zip(j.invars, flags) if f} | set(j.constvars)
    for e in j.eqns:
        mark(e, same, mesh_axes)
    return [_is_same(v, same) for v in j.outvars]


def _carry_fix(body, before, carry, after, n_out, mesh_axes):
    """The carries that stay the same every iteration: a fixpoint from the initial
    flags (the body's carry outputs are its first ``n_out``)."""
    while True:
        out = outs_same(body, before + carry + after, mesh_axes)[:n_out]
        new = [c and o for c, o in zip(carry, out)]
        if new == carry:
            return carry
        carry = new


def pieces(e: Eqn, same: set, mesh_axes) -> list:
    """The sub-jaxprs of a control-flow equation, each with which of its inputs are the
    same on every process: [cond, body] of a while, [body] of a scan, a cond's branches."""
    f = [_is_same(a, same) for a in e.inputs]
    p, name = e.params, e.primitive.name
    if name == "scan":
        nc, nk = p["num_consts"], p["num_carry"]
        carry = _carry_fix(p["jaxpr"], f[:nc], f[nc:nc + nk], f[nc + nk:], nk, mesh_axes)
        return [(p["jaxpr"], f[:nc] + carry + f[nc + nk:])]
    if name == "while":
        cn, bn = p["cond_nconsts"], p["body_nconsts"]
        carry = _carry_fix(p["body_jaxpr"], f[cn:cn + bn], f[cn + bn:], [], len(f) - cn - bn,
                           mesh_axes)
        return [(p["cond_jaxpr"], f[:cn] + carry), (p["body_jaxpr"], f[cn:cn + bn] + carry)]
    return [(b, f[1:]) for b in p["branches"]]


def safe(e: Eqn, same: set, mesh_axes) -> bool:
    """Whether every process runs ``e``'s sub-jaxprs the same number of times, in the same
    branch, when one of them communicates (see the module doc)."""
    name = e.primitive.name
    if name == "scan" or not any(communicates(_closed(j)) for j, _ in pieces(e, same, ())):
        return True
    if name == "cond":
        return _is_same(e.inputs[0], same)
    cond, flags = pieces(e, same, mesh_axes)[0]
    return outs_same(cond, flags, mesh_axes)[0]


def rebuild(e: Eqn, new: list, handles: list) -> Eqn:
    """``e`` with sub-jaxprs ``new`` (in ``pieces``' order, each taking its handle arrays
    as its first inputs) and ``handles[k]``, the outer vars of sub-jaxpr k's handles, as
    extra inputs where the primitive passes consts."""
    p, name, ins = dict(e.params), e.primitive.name, list(e.inputs)
    if name == "scan":
        (h,) = handles
        p.update(jaxpr=new[0], num_consts=p["num_consts"] + len(h),
                 linear=(False,) * len(h) + tuple(p["linear"]))
        return Eqn(e.primitive, h + ins, e.outvars, p, e.source)
    if name == "while":
        hc, hb = handles
        cn = p["cond_nconsts"]
        p.update(cond_jaxpr=new[0], body_jaxpr=new[1], cond_nconsts=cn + len(hc),
                 body_nconsts=p["body_nconsts"] + len(hb))
        return Eqn(e.primitive, hc + ins[:cn] + hb + ins[cn:], e.outvars, p, e.source)
    # cond: every branch takes all branches' handles (each reads its own)
    flat = [v for h in handles for v in h]
    branches = []
    for k, b in enumerate(new):
        j = b.jaxpr
        before = sum(len(h) for h in handles[:k])
        mine, rest = j.invars[:len(handles[k])], j.invars[len(handles[k]):]
        pad = [Var(v.aval) for v in flat]
        pad[before:before + len(mine)] = mine
        branches.append(ClosedJaxpr(Jaxpr(j.constvars, pad + list(rest), j.eqns, j.outvars),
                                    b.consts))
    p["branches"] = tuple(branches)
    return Eqn(e.primitive, ins[:1] + flat + ins[1:], e.outvars, p, e.source)
