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

from .. import fusion
from . import host_calls
from .equations import clamp, native, to_i64
from .lltypes import I8, I64
from .values import Ref, nbytes

_PLANS: dict = {}     # id(jaxpr) -> (jaxpr, plan, native?)


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


def _update_carry(lw, fn, vals, carry):
    """carry[j] = vals[j] for all j at once (a value that is itself a carry goes
    through a temporary, so swaps and rotations are right)."""
    ids = {id(c) for c in carry}
    moves, temps = [], []
    for v, c in zip(vals, carry):
        if v.ref is c and v.contiguous:
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
    cc, t1 = _refs(lw, fn, ins[:cn])
    bc, t2 = _refs(lw, fn, ins[cn:cn + bn])
    carry = list(outs)
    for v, c in zip(ins[cn + bn:], carry):
        lw.copy(fn, v, fn.ptr(c))
    b = fn.b
    head = fn.fn.append_basic_block("while_head")
    body = fn.fn.append_basic_block("while_body")
    done = fn.fn.append_basic_block("while_end")
    b.branch(head)
    b.position_at_end(head)
    (pred,), _, owned = emit_sub(lw, fn, p["cond_jaxpr"], cc + carry)
    go = lw.scalar(fn, pred)
    _release(lw, owned)
    fn.b.cbranch(go, body, done)
    b.position_at_end(body)
    vals, _, owned = emit_sub(lw, fn, p["body_jaxpr"], bc + carry)
    _update_carry(lw, fn, vals, carry)
    _release(lw, owned)
    fn.b.branch(head)
    b.position_at_end(done)
    _release(lw, t1 + t2)


# --------------------------------------------------------------------------- scan

def _row_ref(fn, ref, idx, row_aval):
    step = nbytes(row_aval)
    p = fn.b.gep(fn.ptr(ref), [fn.b.mul(idx, ir.Constant(I64, step))], source_etype=I8)
    return Ref("ptr", p, row_aval)


@native("scan", lambda eqn, planner: _all_native(planner, eqn.params["jaxpr"]), complex=True)
def _scan(lw, fn, eqn, ins, outs):
    p = eqn.params
    body = p["jaxpr"]
    nc, ncar, length, reverse = p["num_consts"], p["num_carry"], p["length"], p["reverse"]
    consts, t1 = _refs(lw, fn, ins[:nc])
    xs, t2 = _refs(lw, fn, ins[nc + ncar:])
    carry = list(outs[:ncar])
    ys = list(outs[ncar:])
    for v, c in zip(ins[nc:nc + ncar], carry):
        lw.copy(fn, v, fn.ptr(c))
    x_avals = body.jaxpr.in_avals[nc + ncar:]
    y_avals = body.jaxpr.out_avals[ncar:]

    def iteration(i):
        idx = fn.b.sub(ir.Constant(I64, length - 1), i) if reverse else i
        x_refs = [_row_ref(fn, r, idx, a) for r, a in zip(xs, x_avals)]
        dests = {ncar + j: _row_ref(fn, r, idx, a) for j, (r, a) in enumerate(zip(ys, y_avals))}
        vals, placed, owned = emit_sub(lw, fn, body, consts + carry + x_refs, dests)
        for j in range(len(ys)):
            if ncar + j not in placed:
                lw.copy(fn, vals[ncar + j], fn.ptr(dests[ncar + j]))
        _update_carry(lw, fn, vals[:ncar], carry)
        _release(lw, owned)
    fn.loop(length, iteration)
    _release(lw, t1 + t2)

