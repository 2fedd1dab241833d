"""Native control flow: ``cond`` becomes a ``switch`` over basic blocks, ``while`` and
``scan`` become loops, all inside the segment function (no Python per iteration).

A sub-jaxpr is lowered with the same planner as the top level (``Lowering.emit_steps``,
through the ``planner`` the program passes down: this module does not import ``program``);
its small values live on the stack, so a scalar loop (the Lorenz RK4 benchmark) runs
in registers. Carries live in the equation's output buffers: the body's results are
copied into them at the end of each iteration (through temporaries only where a result
is itself a carry, e.g. a swap). A scan writes each iteration's ``ys`` straight into
its row of the stacked output when the body defines it.

A host step inside a sub-jaxpr (an equation without native code: debug_print...)
is called back into Python from the loop (``host_calls``); only an equation with no
impl at all makes its enclosing control flow a host step.

>>> from backends.llvm.equations import NATIVE
>>> sorted(n for n in ("cond", "while", "scan") if n in NATIVE)
['cond', 'scan', 'while']
"""
from __future__ import annotations

import llvmlite.ir as ir

import numpy as np

from jaxpr_ir import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray, Var, primitives
from .. import fusion
from . import host_calls
from .equations import clamp, native, to_i64
from .lltypes import I8, I64
from .values import Ref, nbytes

_PLANS: dict = {}     # id(jaxpr) -> (jaxpr, plan, native?)
IN_PLACE = True       # carries updated in place where safe (``in_place``); False: copied
_LIT_BODIES: dict = {}   # (id(body), literal consts) -> (body, body with them inside)


def sub_plan(jaxpr, planner):
    """(fusion plan, whether it runs natively, its host steps called back) of a
    sub-jaxpr planned by ``planner`` (``program.plan_jaxpr``), memoised."""
    hit = _PLANS.get(id(jaxpr))
    if hit is not None and hit[0] is jaxpr:
        return hit[1], hit[2]
    plan = planner(jaxpr)
    ok = all(host_calls.callable_eqn(s.eqn) for s in plan.steps
             if isinstance(s, fusion.HostStep))
    if len(_PLANS) > 4096:
        _PLANS.clear()
    _PLANS[id(jaxpr)] = (jaxpr, plan, ok)
    return plan, ok


def _all_native(planner, *closed):
    return all(not c.jaxpr.constvars and sub_plan(c.jaxpr, planner)[1] for c in closed)


def emit_sub(lw, fn, closed, in_refs, dests=None):
    """Lower ``closed`` inline; (output Vals, placed positions, Refs to release later)."""
    jaxpr = closed.jaxpr
    plan, _ = lw.plan_of(jaxpr)
    env = dict(zip(jaxpr.invars, in_refs))
    _, placed, owned = lw.emit_steps(fn, plan, env, jaxpr.outvars, dests or {}, True)
    return [lw.val(x, env, plan.views) for x in jaxpr.outvars], placed, owned


# A broadcast literal const smaller than this stays an array read each step: reading a
# few elements is free, while a broadcast defined inside the body can become a step of
# its own at every iteration (jit(jacfwd) of the 3-variable Lorenz RK4: 153 -> 176 us)
LITERAL_INSIDE_MIN = 4096


def literal_consts(closed, n, vals):
    """(body, the Vals it still takes) with those of its first ``n`` inputs (consts)
    whose Val is a scalar literal broadcast (``c * 0.99`` in a loop body is traced as a
    broadcast of 0.99 outside the loop) defined inside the body instead, as a broadcast
    of the literal: its kernels then fold the constant, where the loop would read an
    array of it (materialised outside) at every step."""
    lits = tuple((i, str(v.dtype), np.asarray(v.lit, v.dtype).tobytes())
                 for i, v in enumerate(vals[:n])
                 if v.lit is not None and int(np.prod(v.shape)) >= LITERAL_INSIDE_MIN)
    if not lits:
        return closed, vals
    key = (id(closed), lits)
    hit = _LIT_BODIES.get(key)
    if hit is None or hit[0] is not closed:
        j = closed.jaxpr
        eqns = []
        for i, _, _ in lits:
            v = j.invars[i]
            lit = Literal(np.asarray(vals[i].lit, v.aval.dtype)[()],
                          ShapedArray((), v.aval.dtype))
            eqns.append(Eqn(primitives["broadcast_in_dim"], [lit], [v],
                            dict(shape=tuple(v.aval.shape), broadcast_dimensions=())))
        gone = {i for i, _, _ in lits}
        body = ClosedJaxpr(Jaxpr(j.constvars, [v for i, v in enumerate(j.invars) if i not in gone],
                                 eqns + list(j.eqns), j.outvars), closed.consts)
        if len(_LIT_BODIES) > 4096:
            _LIT_BODIES.clear()
        hit = _LIT_BODIES[key] = (closed, body)
    gone = {i for i, _, _ in lits}
    return hit[1], [v for i, v in enumerate(vals) if i not in gone]


def _refs(lw, fn, vals):
    refs, temps = [], []
    for v in vals:
        r, t = lw.materialize(fn, v)
        refs.append(r)
        if t is not None:
            temps.append(t)
    return refs, temps


def _release(lw, refs):
    for r in refs:
        lw.release(r)


def in_place(lw, closed, first, carry, early=()):
    """{body output position j: carry[j]} for the carries the body may write straight
    into their own buffer (instead of into a temporary copied over the carry at the
    end of the step). Safe when the old carry ``c`` (body input ``first + j``) is dead
    once the step defining the new value ``x`` starts, or is read only by that step as
    a kernel that reads ``c`` at the very element it writes: a plain (not row) kernel
    over ``c``'s shape, ``x`` not a reduction, ``c`` read directly (never through a view:
    a shift, reverse, transpose or broadcast reads other elements), or as a product
    accumulated onto ``c`` (``c - lr * a @ b``) whose factors are not ``c``. Anything reading
    ``c`` later (another step, an output: ``c`` passed through or to another carry) keeps
    the copy. The kernel then reads ``c`` and writes ``x`` through one argument
    (``KernelEmitter``'s ``same``), loading ``c`` before any store. Outputs at the
    ``early`` positions (a scan's ys that are carries or views of them) are written
    before the body runs, so they do not keep the old carries alive."""
    jaxpr = closed.jaxpr
    plan, _ = lw.plan_of(jaxpr)
    defs, last = lw.liveness(plan, [x for p, x in enumerate(jaxpr.outvars) if p not in early])
    dests = {}
    if not IN_PLACE:
        return dests
    for j, ref in enumerate(carry):
        x, c = jaxpr.outvars[j], jaxpr.invars[first + j]
        if not isinstance(x, Var) or x in plan.views or x not in defs or x is c:
            continue
        i = defs[x]
        s = plan.steps[i]
        if isinstance(s, fusion.HostStep) or jaxpr.outvars.index(x) != j:
            continue
        dead = last.get(c, -1)
        if dead > i:
            continue
        if dead == i and not (_reads_at_element(s, c, x, plan.views) or
                              _accumulates_into(s, c, plan.views)):
            continue
        dests[j] = ref
    return dests


def _reads_at_element(s, c, x, views):
    """Whether step ``s`` (defining ``x``) is a plain kernel over ``c``'s shape reading
    ``c`` directly (each element where it writes the same one of ``x``)."""
    return isinstance(s, fusion.Kernel) and s.phases is None and x not in s.reduced and \
        tuple(s.shape) == c.aval.shape and \
        all(y is c or _root(y, views) is not c for e in s.eqns for y in e.inputs)


def _accumulates_into(s, c, views):
    """Whether ``s`` is a product accumulated onto ``c`` (``rewrite.fold_dot_updates``)
    whose factors are not ``c``: ``?gemm`` with beta = 1 may then update ``c`` in place."""
    e = getattr(s, "eqn", None)
    if isinstance(s, (fusion.Kernel, fusion.HostStep)) or e is None or \
            e.params.get("accumulate") is None:
        return False
    return e.inputs[2] is c and all(_root(y, views) is not c for y in e.inputs[:2])


def _root(x, views):
    v = views.get(x)
    return v.base if v is not None else x


def _update_carry(lw, fn, vals, carry, placed=()):
    """carry[j] = vals[j] for all j at once, except the ``placed`` ones the body wrote
    in place (a value that is itself a carry still to be written goes through a
    temporary, so swaps and rotations are right)."""
    ids = {id(c) for j, (v, c) in enumerate(zip(vals, carry))
           if j not in placed and not (v.ref is c and v.contiguous)}
    moves, temps = [], []
    for j, (v, c) in enumerate(zip(vals, carry)):
        if j in placed or (v.ref is c and v.contiguous):
            continue
        if v.ref is not None and id(v.ref) in ids:
            t, own = lw.new_buffer(fn, c.aval, True)
            lw.copy(fn, v, fn.ptr(t))
            if own:
                temps.append(t)
            v = lw.val_of_ref(t)
        moves.append((v, c))
    for v, c in moves:
        lw.copy(fn, v, fn.ptr(c))
    _release(lw, temps)


# --------------------------------------------------------------------------- cond

@native("cond", lambda eqn, planner: _all_native(planner, *eqn.params["branches"]),
        complex=True)
def _cond(lw, fn, eqn, ins, outs):
    branches = eqn.params["branches"]
    ops, temps = _refs(lw, fn, ins[1:])
    b = fn.b
    n = len(branches)
    idx = clamp(fn, to_i64(fn, lw.scalar(fn, ins[0]), ins[0].dtype), 0, n - 1)
    merge = fn.fn.append_basic_block("cond_end")
    blocks = [fn.fn.append_basic_block(f"branch{i}") for i in range(n)]
    sw = b.switch(idx, blocks[-1])
    for i in range(n - 1):
        sw.add_case(ir.Constant(I64, i), blocks[i])
    for i, br in enumerate(branches):
        b.position_at_end(blocks[i])
        vals, placed, owned = emit_sub(lw, fn, br, ops, dict(enumerate(outs)))
        for j, v in enumerate(vals):
            if j not in placed:
                lw.copy(fn, v, fn.ptr(outs[j]))
        _release(lw, owned)
        fn.b.branch(merge)
    b.position_at_end(merge)
    _release(lw, temps)


# --------------------------------------------------------------------------- while

@native("while", lambda eqn, planner: _all_native(planner, eqn.params["cond_jaxpr"],
                                                   eqn.params["body_jaxpr"]), complex=True)
def _while(lw, fn, eqn, ins, outs):
    p = eqn.params
    cn, bn = p["cond_nconsts"], p["body_nconsts"]
    cond, cvals = literal_consts(p["cond_jaxpr"], cn, ins[:cn])
    body_jaxpr, bvals = literal_consts(p["body_jaxpr"], bn, ins[cn:cn + bn])
    cc, t1 = _refs(lw, fn, cvals)
    bc, t2 = _refs(lw, fn, bvals)
    carry = list(outs)
    for v, c in zip(ins[cn + bn:], carry):
        lw.copy(fn, v, fn.ptr(c))
    b = fn.b
    head = fn.fn.append_basic_block("while_head")
    body = fn.fn.append_basic_block("while_body")
    done = fn.fn.append_basic_block("while_end")
    b.branch(head)
    b.position_at_end(head)
    (pred,), _, owned = emit_sub(lw, fn, cond, cc + carry)
    go = lw.scalar(fn, pred)
    _release(lw, owned)
    fn.b.cbranch(go, body, done)
    b.position_at_end(body)
    dests = in_place(lw, body_jaxpr, len(bc), carry)
    vals, placed, owned = emit_sub(lw, fn, body_jaxpr, bc + carry, dests)
    _update_carry(lw, fn, vals, carry, placed)
    _release(lw, owned)
    fn.b.branch(head)
    b.position_at_end(done)
    _release(lw, t1 + t2)


# --------------------------------------------------------------------------- scan

def _carry_ys(lw, closed, nc, ncar):
    """The ys positions of a scan body whose value is one of its carries or a view of
    one (``scan(lambda c, x: (f(c), c))``): copied to their row at the start of the step."""
    jaxpr = closed.jaxpr
    views = lw.plan_of(jaxpr)[0].views
    carries = set(jaxpr.invars[nc:nc + ncar])
    return frozenset(p for p in range(ncar, len(jaxpr.outvars))
                     if isinstance(jaxpr.outvars[p], Var)
                     and _root(jaxpr.outvars[p], views) in carries)


def _row_ref(fn, ref, idx, row_aval):
    step = nbytes(row_aval)
    p = fn.b.gep(fn.ptr(ref), [fn.b.mul(idx, ir.Constant(I64, step))], source_etype=I8)
    return Ref("ptr", p, row_aval)


@native("scan", lambda eqn, planner: _all_native(planner, eqn.params["jaxpr"]), complex=True)
def _scan(lw, fn, eqn, ins, outs):
    p = eqn.params
    nc, ncar, length, reverse = p["num_consts"], p["num_carry"], p["length"], p["reverse"]
    body, cvals = literal_consts(p["jaxpr"], nc, ins[:nc])
    consts, t1 = _refs(lw, fn, cvals)
    xs, t2 = _refs(lw, fn, ins[nc + ncar:])
    carry = list(outs[:ncar])
    ys = list(outs[ncar:])
    for v, c in zip(ins[nc:nc + ncar], carry):
        lw.copy(fn, v, fn.ptr(c))
    x_avals = body.jaxpr.in_avals[len(consts) + ncar:]
    y_avals = body.jaxpr.out_avals[ncar:]
    early = _carry_ys(lw, body, len(consts), ncar)
    in_carry = in_place(lw, body, len(consts), carry, early)

    def iteration(i):
        idx = fn.b.sub(ir.Constant(I64, length - 1), i) if reverse else i
        x_refs = [_row_ref(fn, r, idx, a) for r, a in zip(xs, x_avals)]
        dests = {ncar + j: _row_ref(fn, r, idx, a) for j, (r, a) in enumerate(zip(ys, y_avals))}
        plan = lw.plan_of(body.jaxpr)[0]
        at_start = dict(zip(body.jaxpr.invars[len(consts):len(consts) + ncar], carry))
        for p in early:            # ys read from the old carries: before they change
            lw.copy(fn, lw.val(body.jaxpr.outvars[p], at_start, plan.views), fn.ptr(dests[p]))
        vals, placed, owned = emit_sub(lw, fn, body, consts + carry + x_refs,
                                       {**dests, **in_carry})
        for j in range(len(ys)):
            if ncar + j not in placed and ncar + j not in early:
                lw.copy(fn, vals[ncar + j], fn.ptr(dests[ncar + j]))
        _update_carry(lw, fn, vals[:ncar], carry, placed)
        _release(lw, owned)
    fn.loop(length, iteration)
    _release(lw, t1 + t2)

