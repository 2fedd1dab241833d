"""The ``cond`` primitive: pick one of several const-free branches by an index.

``cond index *operands`` with param ``branches`` (a tuple of ClosedJaxprs that
take the operands and agree in output types). The index is an int32 scalar,
clamped to ``[0, len(branches) - 1]`` (``lax.cond`` passes a converted bool,
``lax.switch`` a clamped integer).

Reverse mode without a partial-eval hook: the JVP rule binds a *known* cond
(primals -> primal outputs and the taken branch's residuals, every branch's
residual slots filled, zeros for the slots of the other branches) and then a
*linear* cond (residuals, tangents -> tangent outputs). The transpose of the
linear cond is a cond of the transposed branches.

>>> from jaxpr_ir import ShapedArray
>>> from functrans.primitives.control_flow_common import trace_hoisted
>>> f64 = ShapedArray((), "float64")
>>> ident, _ = trace_hoisted(lambda x: [x], [f64])
>>> float(cond_p.bind(np.int32(0), 3.0, branches=(ident, ident))[0])
3.0
"""
from __future__ import annotations

import numpy as np

from backends.interpret_control_flow import run_cond
from jaxpr_ir import ClosedJaxpr, Jaxpr, ShapedArray, Var
from ..tracing import checked
from .base import (Primitive, Zero, aval, instantiate, is_undefined, move_batch_axis,
                   not_mapped_size, tangent_aval)
from .control_flow_common import (check_types, is_float, join_branch_consts, jvp_closed,
                                  no_consts, split_jvp, tangents_staged, transpose_closed,
                                  vmap_closed, zeros_eqn)
from .elementwise_math import max_p, min_p
from .structural import broadcast_in_dim, stop_gradient_p
from .elementwise import eq, select_n
from ..transforms.vmap import vmap_eval

__all__ = []

cond_p = Primitive("cond", multiple_results=True)
cond_p.subjaxpr_params = ("branches",)


def _cond_aval(index, *ops, branches):
    if not branches:
        raise TypeError("cond: needs at least one branch")
    if index.shape != () or index.dtype != np.int32:
        raise TypeError(f"cond: the index must be an int32 scalar, got {index.str_short()}")
    outs0 = branches[0].out_avals
    for k, b in enumerate(branches):
        no_consts(f"cond: branch {k}", b)
        ins = b.in_avals
        if len(ins) != len(ops):
            raise TypeError(f"cond: branch {k} takes {len(ins)} operands but {len(ops)} "
                            "were given")
        check_types(ops, ins, lambda i, a, w: f"cond: operand {i} has type {a} but branch "
                    f"{k} expects {w}")
        outs = b.out_avals
        if len(outs) != len(outs0):
            raise TypeError(f"cond: branch 0 returns {len(outs0)} outputs but branch {k} "
                            f"returns {len(outs)}")
        check_types(outs, outs0, lambda i, a, w: f"cond: output {i} of branch {k} has type "
                    f"{a} but branch 0 gives {w}; every branch must return the same types")
    return [ShapedArray(a.shape, a.dtype, all(b.out_avals[i].weak_type for b in branches))
            for i, a in enumerate(outs0)]


def _cond_impl(index, *ops, branches):
    return run_cond(index, *ops, branches=branches)


def _cond_jvp(primals, tangents, *, branches):
    index, *ops = primals
    ts = tangents[1:]
    nz = [type(t) is not Zero and is_float(aval(x)) for x, t in zip(ops, ts)]
    n_out = len(branches[0].out_avals)
    split = tangents_staged(ts)
    out_nz = [False] * n_out
    for b in branches:
        _, onz = jvp_closed(b, nz, [False] * n_out, staged=split)
        out_nz = [x or y for x, y in zip(out_nz, onz)]
    if not any(out_nz):
        outs = cond_p.bind(index, *ops, branches=branches)
        return outs, [Zero(tangent_aval(aval(o))) for o in outs]
    t_in = [instantiate(t) for t, z in zip(ts, nz) if z]
    if not split:
        # forward mode: one cond whose branches compute primals and tangents together
        bodies, consts = join_branch_consts([jvp_closed(b, nz, out_nz, staged=False)[0]
                                             for b in branches])
        outs = cond_p.bind(index, *consts, *ops, *t_in, branches=tuple(bodies))
        it = iter(outs[n_out:])
        return outs[:n_out], [next(it) if z else Zero(tangent_aval(aval(o)))
                              for o, z in zip(outs[:n_out], out_nz)]
    n_ops = len(ops)
    splits = [split_jvp(jvp_closed(b, nz, out_nz)[0], n_ops, n_out) for b in branches]

    # known cond: every branch fills all residual slots (zeros outside its own)
    known = []
    for k, s in enumerate(splits):
        kj = s.known.jaxpr
        eqns, outs = list(kj.eqns), kj.outvars[:n_out]
        for m, other in enumerate(splits):
            if m == k:
                outs = outs + kj.outvars[n_out:]
                continue
            for a in other.res_avals:
                v, e = zeros_eqn(a)
                eqns.append(e)
                outs = outs + [v]
        known.append(checked(ClosedJaxpr(Jaxpr(kj.constvars, kj.invars, eqns, outs),
                                         s.known.consts), "cond JVP (known branch)"))
    k_branches, k_consts = join_branch_consts(known)
    k_outs = cond_p.bind(index, *k_consts, *ops, branches=tuple(k_branches))
    primal_outs, residuals = k_outs[:n_out], k_outs[n_out:]

    # linear cond: (consts, all residual slots, tangents) -> tangents
    lin = []
    for k, s in enumerate(splits):
        lj = s.linear.jaxpr
        n_res = len(s.res_avals)
        res_in = []
        for m, other in enumerate(splits):
            res_in += lj.invars[:n_res] if m == k else [Var(a) for a in other.res_avals]
        lin.append(checked(ClosedJaxpr(Jaxpr(lj.constvars, res_in + lj.invars[n_res:], lj.eqns,
                                             lj.outvars), s.linear.consts),
                           "cond JVP (linear branch)"))
    l_branches, l_consts = join_branch_consts(lin)
    t_outs = cond_p.bind(index, *l_consts, *residuals, *t_in, branches=tuple(l_branches))
    it = iter(t_outs)
    touts = [next(it) if z else Zero(tangent_aval(aval(o))) for o, z in zip(primal_outs, out_nz)]
    return primal_outs, touts


def _cond_transpose(cts, index, *ops, branches):
    if is_undefined(index):
        raise TypeError("cond: the branch index cannot be a linear input")
    mask = [is_undefined(o) for o in ops]
    nonlin = [o for o in ops if not is_undefined(o)]
    cts = [instantiate(c) for c in cts]
    tbs, consts = join_branch_consts([transpose_closed(b, mask) for b in branches])
    outs = cond_p.bind(index, *consts, *nonlin, *cts, branches=tuple(tbs))
    it = iter(outs)
    return [None] + [next(it) if m else None for m in mask]


def clamp_index(index, n):
    """``index`` (int32, any shape) clamped to [0, n - 1]. The cond primitive clamps
    by definition; doing it explicitly keeps the batched select exact on every backend."""
    shape = aval(index).shape
    lo = broadcast_in_dim(np.int32(0), shape, ())
    hi = broadcast_in_dim(np.int32(n - 1), shape, ())
    return min_p.bind(max_p.bind(index, lo), hi)


def _cond_batch(args, dims, *, branches):
    index, *ops = args
    size = not_mapped_size(args, dims)
    op_dims = list(dims[1:])
    if dims[0] is None:
        n_out = len(branches[0].out_avals)
        out_b = [False] * n_out
        for b in branches:
            _, ods = vmap_closed(b, op_dims, size)
            out_b = [x or d is not None for x, d in zip(out_b, ods)]
        to = [0 if x else None for x in out_b]
        bjs, consts = join_branch_consts([vmap_closed(b, op_dims, size, to)[0] for b in branches])
        outs = cond_p.bind(index, *consts, *ops, branches=tuple(bjs))
        return outs, to
    # a batched index: every branch runs on all lanes, and a select picks per lane
    idx = clamp_index(move_batch_axis(index, dims[0], 0, size), len(branches))
    per_branch = []
    for i, b in enumerate(branches):
        b_ops, b_dims = _lanes_of_branch(idx, i, ops, op_dims, size, len(branches))
        outs, ods = vmap_eval(b.jaxpr, b.consts, b_ops, b_dims, size)
        per_branch.append([move_batch_axis(o, d, 0, size) for o, d in zip(outs, ods)])
    res, out_dims = [], []
    for k in range(len(per_branch[0])):
        j = _forwarded_operand(branches, k)
        if j is not None and op_dims[j] is None:   # every branch returns operand j as it is
            res.append(ops[j])
            out_dims.append(None)
            continue
        cases = [p[k] for p in per_branch]
        which = broadcast_in_dim(idx, aval(cases[0]).shape, (0,))
        res.append(cases[0] if len(cases) == 1 else select_n(which, *cases))
        out_dims.append(0)
    return res, out_dims


def _forwarded_operand(branches, k):
    """The operand every branch returns unchanged as output ``k`` (None if they differ):
    under a batched index it stays unbatched, as in JAX (vmap's out_axes=None)."""
    found = set()
    for b in branches:
        o = b.jaxpr.outvars[k]
        ins = b.jaxpr.invars
        found.add(next((i for i, v in enumerate(ins) if v is o), None) if type(o) is Var else None)
    return found.pop() if len(found) == 1 else None



def _lanes_of_branch(idx, i, ops, op_dims, size, n_branches):
    """Branch ``i``'s float operands, their derivative cut (stop_gradient) on the lanes
    that select another branch, as JAX does: a branch's value there is discarded, and a
    derivative it cannot take (sqrt at 0: 0 * inf) would otherwise come back as NaN."""
    if n_branches == 1:
        return ops, op_dims
    out_ops, out_dims = [], []
    for x, d in zip(ops, op_dims):
        if not is_float(aval(x)):
            out_ops.append(x)
            out_dims.append(d)
            continue
        x = move_batch_axis(x, d, 0, size)
        mine = broadcast_in_dim(eq(idx, broadcast_in_dim(np.int32(i), aval(idx).shape, ())),
                                aval(x).shape, (0,))
        out_ops.append(select_n(mine, stop_gradient_p.bind(x), x))
        out_dims.append(0)
    return out_ops, out_dims


cond_p.def_rules(abstract_eval=_cond_aval, impl=_cond_impl, jvp=_cond_jvp,
                 transpose=_cond_transpose, batch=_cond_batch)
