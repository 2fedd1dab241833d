"""IR plumbing shared by the control-flow primitives (cond, while, scan).

Sub-jaxprs of control-flow equations are ``ClosedJaxpr`` without consts: every
constant a traced body closes over becomes an explicit leading operand. The
helpers here trace Python functions into such bodies, re-list a body's inputs
(fresh unused inputs, joined consts of several branches), differentiate a body
with symbolic-zero masks (``jvp_closed``) and split its JVP into a primal part
that emits residuals and a part linear in the tangents (``split_jvp``).

>>> from jaxpr_ir import ShapedArray
>>> closed, consts = trace_hoisted(lambda x: [x], [ShapedArray((), "float64")])
>>> print(closed)
{ lambda ; a:f64[]. let  in (a,) }
>>> consts
[]
"""
from __future__ import annotations

from jaxpr_ir import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray, Var, dtype_kind
from .. import tracing
from ..sharding import mesh_frames
from ..tracing import Tracer, axis_frames, checked, trace_to_jaxpr
from .base import Zero, instantiate, tangent_aval
from .structural import broadcast_in_dim_p
from ..transforms.jvp import jvp_eval
from ..transforms.partial_eval import partial_eval
from ..transforms.transpose import transpose_jaxpr
from ..transforms.vmap import vmap_jaxpr
import numpy as np


def is_float(a) -> bool:
    return dtype_kind(a.dtype) in "fc"


def no_consts(what, closed):
    """Shape rules: a sub-jaxpr's constants must have been made explicit operands."""
    if closed.jaxpr.constvars or closed.consts:
        raise TypeError(f"{what} has consts; they must be explicit operands")


def check_types(got, want, message):
    """Shape rules: TypeError(``message(i, got_i, want_i)``, the two types as short
    strings) at the first pair of avals differing in shape or dtype."""
    for i, (a, w) in enumerate(zip(got, want)):
        if a.shape != w.shape or a.dtype != w.dtype:
            raise TypeError(message(i, a.str_short(), w.str_short()))


def _as_tuple(body) -> tuple:
    return body if type(body) is tuple else (body,)


class BodyCache:
    """What a transform derives from a body (a ClosedJaxpr, or a tuple of them), keyed by
    the bodies' identities and the other parts of ``key``. An entry holds its bodies, so
    the ids stay unique; the cache is bounded, since every retrace of a function makes new
    bodies.

    >>> c = BodyCache(); body = ClosedJaxpr(Jaxpr([], [], [], []), [])
    >>> c.get(body, 1) is None, c.put(body, "derived", 1), c.get(body, 1)
    (True, 'derived', 'derived')
    """
    def __init__(self, size=256):
        self._entries, self._size = {}, size

    def get(self, body, *key):
        hit = self._entries.get(tuple(map(id, _as_tuple(body))) + key)
        if hit is None or not all(a is b for a, b in zip(hit[0], _as_tuple(body))):
            return None
        return hit[1]

    def put(self, body, value, *key):
        if len(self._entries) >= self._size:
            self._entries.clear()
        bodies = _as_tuple(body)
        self._entries[tuple(map(id, bodies)) + key] = (bodies, value)
        return value


def axis_env_key() -> tuple:
    """What of this thread's axis env a body traced or derived now may have read (the
    collectives and ``axis_size`` read it): the named vmap frames with their positions and
    sizes, the innermost frame, the bound meshes. ``()`` outside every vmap and mesh, so a
    cache keyed by it serves a body again only under the same names and sizes.

    >>> axis_env_key()
    ()
    """
    frames, meshes = axis_frames(), mesh_frames()
    if not frames and not meshes:
        return ()
    return (len(frames), frames[-1].name if frames else None,
            tuple((i, f.name, f.size) for i, f in enumerate(frames) if f.name is not None),
            tuple((m.mesh.key, m.tracing, m.vmap_depth) for m in meshes))


def check_operands(what, avals, body):
    """Shape rules of call-like primitives: the operands match the body's inputs."""
    ins = body.in_avals
    if len(avals) != len(ins):
        raise TypeError(f"{what}: the body takes {len(ins)} inputs, got {len(avals)}")
    check_types(avals, ins, lambda i, a, w: f"{what}: operand {i} has type {a} but the body "
                                            f"expects {w}")


def hoist(closed: ClosedJaxpr):
    """(the same program with its constvars as leading invars, the const values)."""
    j = closed.jaxpr
    if not j.constvars:
        return (closed if not closed.consts else ClosedJaxpr(j, [])), []
    return (checked(ClosedJaxpr(Jaxpr([], j.constvars + j.invars, j.eqns, j.outvars), []),
                    "hoisting a body's consts"), list(closed.consts))


def _no_literal_outputs(j: Jaxpr) -> Jaxpr:
    """Literal outputs become broadcast equations, so every output is a Var."""
    if not any(type(o) is Literal for o in j.outvars):
        return j
    eqns, outs = list(j.eqns), []
    for o in j.outvars:
        if type(o) is Literal:
            v, e = _broadcast_literal(o.val, o.aval)
            eqns.append(e)
            o = v
        outs.append(o)
    return Jaxpr(j.constvars, j.invars, eqns, outs)


def _broadcast_literal(val, aval):
    v = Var(aval)
    lit = Literal(val, ShapedArray((), aval.dtype, aval.weak_type))
    return v, Eqn(broadcast_in_dim_p, [lit], [v], dict(shape=tuple(aval.shape),
                                                         broadcast_dimensions=()))


def zeros_eqn(aval):
    """(var, eqn) defining zeros of ``aval`` inside a jaxpr being assembled by hand."""
    return _broadcast_literal(np.zeros((), aval.dtype)[()], aval)


def trace_closed(fun, in_avals, name="control flow body", staged=False,
                 stages_closures=False, in_sources=None) -> ClosedJaxpr:
    """Trace ``fun(*tracers) -> list`` on abstract values; consts kept as constvars.
    ``stages_closures``: operations on closed-over values are recorded in the body too
    (a cond branch: see ``tracing.trace_to_jaxpr``), not hoisted out of it.
    ``in_sources``: the values the inputs stand for (a cond branch's operands)."""
    jaxpr, consts, _ = trace_to_jaxpr(lambda *a: list(fun(*a)), list(in_avals), name=name,
                                      staged=staged, stages_closures=stages_closures,
                                      in_sources=in_sources)
    return ClosedJaxpr(_no_literal_outputs(jaxpr), consts)


def trace_hoisted(fun, in_avals, name="control flow body"):
    """Trace ``fun`` into a const-free body; returns (ClosedJaxpr, consts to pass first)."""
    return hoist(trace_closed(fun, in_avals, name))


def relist(j: Jaxpr, invars) -> ClosedJaxpr:
    """A const-free body with the given invars (a list of Vars of ``j`` or avals, an aval
    making a fresh input the body ignores)."""
    ins = [x if isinstance(x, Var) else Var(x) for x in invars]
    return ClosedJaxpr(Jaxpr([], ins, j.eqns, j.outvars), [])


def join_branch_consts(closeds):
    """Branches with their own consts -> const-free branches that all take
    (consts of branch 0, consts of branch 1, ..., original inputs), and the consts."""
    consts = [c for cj in closeds for c in cj.consts]
    out = []
    for k, cj in enumerate(closeds):
        invars = []
        for m, other in enumerate(closeds):
            invars += (cj.jaxpr.constvars if m == k else
                       [v.aval for v in other.jaxpr.constvars])
        out.append(relist(cj.jaxpr, invars + cj.jaxpr.invars))
    return out, consts


def copy_jaxpr(j: Jaxpr) -> Jaxpr:
    """The same program with fresh Vars (a Var is defined once in a whole program)."""
    env = {}

    def new(v):
        nv = Var(v.aval)
        env[v] = nv
        return nv

    def use(a):
        return a if type(a) is Literal else env[a]

    constvars = [new(v) for v in j.constvars]
    invars = [new(v) for v in j.invars]
    eqns = []
    for e in j.eqns:
        ins = [use(a) for a in e.inputs]
        eqns.append(Eqn(e.primitive, ins, [new(v) for v in e.outvars], e.params, e.source))
    return Jaxpr(constvars, invars, eqns, [use(a) for a in j.outvars])


# --------------------------------------------------------------------------- differentiation

def jvp_closed(closed: ClosedJaxpr, nonzero, instantiate_out, staged=True):
    """JVP of a const-free body with tangents only for the ``nonzero`` inputs.

    Returns (ClosedJaxpr with consts mapping (*primals, *nonzero tangents) to
    (*primal outs, *nonzero tangent outs), out_nonzero). Outputs in
    ``instantiate_out`` always get a tangent (zeros if need be); integer and
    bool values never have one. ``staged``: the result will be split by
    ``split_jvp``, so loops inside it must keep primals and tangents apart.
    """
    avals = closed.in_avals
    n = len(avals)
    t_avals = [tangent_aval(a) for a, z in zip(avals, nonzero) if z]
    box = []

    def fun(*args):
        it = iter(args[n:])
        ts = [next(it) if z else Zero(tangent_aval(a)) for a, z in zip(avals, nonzero)]
        outs, touts = jvp_eval(closed.jaxpr, closed.consts, list(args[:n]), ts)
        out_avals = closed.out_avals
        out_nz = [is_float(a) and (type(t) is not Zero or inst)
                  for a, t, inst in zip(out_avals, touts, instantiate_out)]
        box.append(out_nz)
        return list(outs) + [instantiate(t) for t, z in zip(touts, out_nz) if z]

    jc = trace_closed(fun, list(avals) + t_avals, name="jvp of a control-flow body",
                      staged=staged)
    return jc, box[0]


def tangents_staged(tangents) -> bool:
    """Whether some tangent is staged apart from its primal (``Trace.staged``), as under
    linearize and grad: then a control-flow JVP is split into a primal part that emits
    residuals and a part linear in the tangents, which reverse mode transposes. Otherwise
    (jvp, jacfwd, at any nesting) one loop or branch carrying primals and tangents
    together is cheaper: no residuals are stored."""
    for t in tangents:
        if isinstance(t, Tracer) and t._trace.staged:
            return True
    return False


class SplitJvp:
    """``known``: (*primals) -> (*primal outs, *residuals), consts as constvars;
    ``linear``: (*residuals, *tangents) -> (*tangent outs), consts as constvars.
    ``res_avals`` the residuals' types."""
    __slots__ = ("known", "linear", "res_avals")

    def __init__(self, known, linear, res_avals):
        self.known, self.linear, self.res_avals = known, linear, res_avals


def split_jvp(jc: ClosedJaxpr, n_primal_in: int, n_primal_out: int) -> SplitJvp:
    """Partial-evaluate a JVP body with primals known and tangents unknown."""
    n_in = len(jc.in_avals)
    kj, uj, out_known = partial_eval(jc, [True] * n_primal_in + [False] * (n_in - n_primal_in))
    if not all(out_known[:n_primal_out]):
        raise AssertionError("control flow: a primal output depends on a tangent")
    kjx, ujx = kj.jaxpr, uj.jaxpr
    n_known = sum(out_known)
    k_outs = kjx.outvars[:n_known]
    residuals = kjx.outvars[n_known:]
    # known tangent outputs do not depend on any tangent: they are zeros
    known_j = Jaxpr(kjx.constvars, kjx.invars, kjx.eqns, k_outs[:n_primal_out] + residuals)
    u_it = iter(ujx.outvars)
    eqns, outs = list(ujx.eqns), []
    for i, k in enumerate(out_known[n_primal_out:], n_primal_out):
        if k:
            v, e = zeros_eqn(jc.out_avals[i])
            eqns.append(e)
            outs.append(v)
        else:
            outs.append(next(u_it))
    lin_j = _no_literal_outputs(Jaxpr(ujx.constvars, ujx.invars, eqns, outs))
    known_j = _no_literal_outputs(known_j)
    return SplitJvp(ClosedJaxpr(known_j, kj.consts), ClosedJaxpr(lin_j, uj.consts),
                    [a.aval for a in residuals])


def transpose_closed(closed: ClosedJaxpr, linear_mask) -> ClosedJaxpr:
    """(non-linear inputs, output cotangents) -> cotangents of the linear inputs; consts kept."""
    tj = transpose_jaxpr(closed, linear_mask)
    return ClosedJaxpr(_no_literal_outputs(tj.jaxpr), tj.consts)


def vmap_closed(closed: ClosedJaxpr, in_dims, size, out_dims_to=None):
    """Batched body (consts as constvars) and its output batch dims."""
    # the axis name is inherited from the enclosing vmap (collectives in the body)
    bj, out_dims = vmap_jaxpr(closed, list(in_dims), size, out_dims_to=out_dims_to)
    return ClosedJaxpr(_no_literal_outputs(bj.jaxpr), bj.consts), out_dims


def _tracers(x, found):
    if isinstance(x, (tuple, list)):
        for y in x:
            _tracers(y, found)
    elif isinstance(x, Tracer):
        found.append(x)
    return found


class BatchMemo:
    """Batched bodies kept by ``memo_batching``: results free of tracers in ``plain``;
    results holding constants of the outermost trace (``bind_outermost`` records the
    broadcast constants of batching rules there) in ``owned``, valid while that trace
    (``owner``) is the outermost one, and dropped when another trace starts."""
    def __init__(self):
        self.plain, self.owned, self.owner = BodyCache(), BodyCache(), None


def memo_batching(memo: BatchMemo, prim, params, bodies, key, make):
    """``make()``, the part of ``prim``'s batching rule that batches its bodies (a
    ClosedJaxpr or a tuple of them), cached by the bodies' identities, ``key`` (which
    operands are batched, the axis size) and the axis name. Without it nested loops
    multiply their work: an enclosing loop batches its body several times (the fixed point
    over which carries are batched, then the final body), and each time every loop inside
    would be batched anew, its own fixed point included. Not cached: bodies with
    collectives (they read the axis env) and results holding tracers of a trace other
    than the outermost.

    >>> m = BatchMemo(); body = ClosedJaxpr(Jaxpr([], [], [], []), [])
    >>> memo_batching(m, None, {}, body, (1,), lambda: ("batched", []))
    ('batched', [])
    >>> memo_batching(m, None, {}, body, (1,), lambda: 1 / 0)
    ('batched', [])
    """
    frames = axis_frames()
    full = (tuple(key), frames[-1].name if frames else None)
    try:
        hash(full)
    except TypeError:
        return make()
    if prim is not None and tracing.body_defers_concrete(prim, params):
        return make()
    outer = tracing.outermost_trace()     # where bind_outermost records the constants
    hit = memo.plain.get(bodies, *full)
    if hit is not None:
        return hit
    if outer is not None:
        owned = memo.owned.get(bodies, *full, id(outer))
        if owned is not None and owned[0] is outer:   # (another thread may own the memo)
            return owned[1]
    hit = make()
    found = _tracers(hit, [])
    if not found:
        memo.plain.put(bodies, hit, *full)
    elif outer is not None and outer.alive and all(t._trace is outer for t in found):
        if memo.owner is not outer:    # drop the entries of traces that have ended
            memo.owned, memo.owner = BodyCache(), outer
        memo.owned.put(bodies, (outer, hit), *full, id(outer))
    return hit
