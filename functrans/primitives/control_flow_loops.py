"""The loop primitives ``while`` and ``scan``, each with all its rules.

``while *cond_consts *body_consts *init`` with params ``cond_jaxpr`` (consts,
carry -> bool[]), ``body_jaxpr`` (consts, carry -> carry), ``cond_nconsts``,
``body_nconsts``. Forward-mode differentiable (one loop over primal and tangent
carries); its trip count is unknown in advance, so residuals cannot be stored
and reverse mode raises.

``scan *consts *init *xs`` with params ``jaxpr`` ((consts, carry, x) -> (carry,
y)), ``length``, ``reverse``, ``num_consts``, ``num_carry``, ``linear`` (which
operands are linear, informative) and ``unroll``. Reverse mode: the JVP binds a
known scan that also stacks the per-iteration residuals, then a scan linear in
the tangents; the transpose of that is a scan in the other direction.

>>> from jaxpr_ir import ShapedArray
>>> from functrans.primitives.control_flow_common import trace_hoisted
>>> from functrans.primitives.elementwise import add
>>> f64 = ShapedArray((), "float64")
>>> body, _ = trace_hoisted(lambda c, x: [add(c, x), c], [f64, f64])
>>> c, ys = scan_p.bind(0.0, np.arange(4.0), jaxpr=body, length=4, reverse=False,
...                     num_consts=0, num_carry=1, linear=(False, False), unroll=1)
>>> float(c), ys.tolist()
(6.0, [0.0, 0.0, 1.0, 3.0])
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import ClosedJaxpr, Jaxpr, ShapedArray
from ..tracing import Tracer, checked, eval_jaxpr
from .base import (Primitive, Zero, aval, instantiate, is_undefined, move_batch_axis,
                   not_mapped_size, tangent_aval)
from .control_flow_common import (BatchMemo, check_types, copy_jaxpr, hoist, is_float,
                                  jvp_closed, memo_batching, no_consts, relist, split_jvp,
                                  tangents_staged, trace_hoisted, transpose_closed,
                                  vmap_closed)
from .control_flow_eager import run_scan_eager, run_while_eager
from .elementwise import add, select_n
from .reductions import reduce_or
from .structural import broadcast_in_dim
from ..transforms.vmap import batched_aval, vmap_eval

__all__ = []


def _check_body(what, got, want, name_of):
    check_types(got, want, lambda i, a, w: f"{what}: {name_of(i)} has type {a} but {w} "
                "is expected")


def _check_carry(what, outs, carry):
    """The body's first len(carry) outputs keep the carry's types."""
    check_types(outs, carry, lambda i, a, w: f"{what} changes carry element {i} from type "
                f"{w} to {a}; the carry must keep its type")


# =========================================================================== while

while_p = Primitive("while", multiple_results=True)
while_p.subjaxpr_params = ("cond_jaxpr", "body_jaxpr")


def _while_aval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    no_consts("while: cond_jaxpr", cond_jaxpr)
    no_consts("while: body_jaxpr", body_jaxpr)
    cc = avals[:cond_nconsts]
    bc = avals[cond_nconsts:cond_nconsts + body_nconsts]
    carry = avals[cond_nconsts + body_nconsts:]
    if len(cond_jaxpr.in_avals) != len(cc) + len(carry):
        raise TypeError(f"while: cond_jaxpr takes {len(cond_jaxpr.in_avals)} inputs, expected "
                        f"{len(cc)} consts + {len(carry)} carry elements")
    if len(body_jaxpr.in_avals) != len(bc) + len(carry):
        raise TypeError(f"while: body_jaxpr takes {len(body_jaxpr.in_avals)} inputs, expected "
                        f"{len(bc)} consts + {len(carry)} carry elements")
    _check_body("while", list(cc) + list(carry), cond_jaxpr.in_avals,
                lambda i: f"cond_jaxpr input {i}")
    _check_body("while", list(bc) + list(carry), body_jaxpr.in_avals,
                lambda i: f"body_jaxpr input {i}")
    outs = cond_jaxpr.out_avals
    if len(outs) != 1 or outs[0].shape != () or outs[0].dtype != np.bool_:
        raise TypeError("while: cond_jaxpr must return one boolean scalar, got "
                        f"({', '.join(a.str_short() for a in outs)})")
    bouts = body_jaxpr.out_avals
    if len(bouts) != len(carry):
        raise TypeError(f"while: body_jaxpr returns {len(bouts)} values for a carry of "
                        f"{len(carry)} elements")
    _check_carry("while: body_jaxpr", bouts, carry)
    return list(carry)


def _while_impl(*args, **params):
    return run_while_eager(while_p, args, params)


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
                  body_nconsts=body_nconsts)
    nc, nb = cond_nconsts, body_nconsts
    cc, bc, init = primals[:nc], primals[nc:nc + nb], primals[nc + nb:]
    bc_t, init_t = tangents[nc:nc + nb], tangents[nc + nb:]
    bc_nz = [type(t) is not Zero and is_float(aval(x)) for x, t in zip(bc, bc_t)]
    carry_nz = [type(t) is not Zero and is_float(aval(x)) for x, t in zip(init, init_t)]
    while True:   # a carry has a tangent if the body can give it one
        jb, out_nz = jvp_closed(body_jaxpr, bc_nz + carry_nz, carry_nz, staged=False)
        new = [a or b for a, b in zip(carry_nz, out_nz)]
        if new == carry_nz:
            break
        carry_nz = new
    if not any(carry_nz):
        outs = while_p.bind(*primals, **params)
        return outs, [Zero(tangent_aval(aval(o))) for o in outs]
    n_b, n_c = len(bc), len(init)
    n_bt = sum(bc_nz)
    jj = jb.jaxpr   # inputs: bc, carry, bc tangents, carry tangents
    ins = jj.invars
    body = ClosedJaxpr(Jaxpr([], jj.constvars + ins[:n_b] + ins[n_b + n_c:n_b + n_c + n_bt]
                             + ins[n_b:n_b + n_c] + ins[n_b + n_c + n_bt:], jj.eqns,
                             jj.outvars), [])
    checked(body, "while JVP (body)")
    t_avals = [tangent_aval(aval(x)) for x, z in zip(init, carry_nz) if z]
    cj = copy_jaxpr(cond_jaxpr.jaxpr)
    cond = relist(cj, cj.invars + t_avals)
    bc_tan = [instantiate(t) for t, z in zip(bc_t, bc_nz) if z]
    init_tan = [instantiate(t) if type(t) is not Zero else np.zeros(a.shape, a.dtype)
                for t, z, a in zip(init_t, carry_nz, (aval(x) for x in init)) if z]
    jvp_params = dict(cond_jaxpr=cond, body_jaxpr=body, cond_nconsts=nc,
                      body_nconsts=len(jb.consts) + n_b + n_bt)
    args = [*cc, *jb.consts, *bc, *bc_tan, *init, *init_tan]
    eager = not any(isinstance(x, Tracer) for x in args)
    outs = while_p.bind(*args, **jvp_params)
    # the primal outputs come from a primal-only loop unless all is concrete, so
    # that (under linearize) they never depend on the staged tangent loop
    primal = outs[:n_c] if eager else while_p.bind(*primals, **params)
    it = iter(outs[n_c:])
    touts = [next(it) if z else Zero(tangent_aval(aval(p))) for p, z in zip(primal, carry_nz)]
    return primal, touts


def _while_transpose(cts, *args, **params):
    raise TypeError(
        "Reverse-mode differentiation does not work for lax.while_loop: its trip count is "
        "only known at run time, so the values of each iteration cannot be saved for the "
        "backward pass. Use lax.scan, or lax.fori_loop with static (Python int) bounds, "
        "which are reverse-differentiable; forward mode (jvp, jacfwd) works with while_loop.")


_batched_bodies = BatchMemo()


def _while_batch(args, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    size = not_mapped_size(args, dims)
    nc, nb = cond_nconsts, body_nconsts
    flags = tuple(d is not None for d in dims)
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=nc,
                  body_nconsts=nb)
    carry_b, pred_b, cj, c_consts, bj, b_consts = memo_batching(
        _batched_bodies, while_p, params, (cond_jaxpr, body_jaxpr), (flags, size, nc),
        lambda: _while_batch_bodies(cond_jaxpr, body_jaxpr, flags, nc, nb, size))
    cc, bc, init = args[:nc], args[nc:nc + nb], args[nc + nb:]
    cc = [x if d is None else move_batch_axis(x, d, 0, size) for x, d in zip(cc, dims[:nc])]
    bc = [x if d is None else move_batch_axis(x, d, 0, size)
          for x, d in zip(bc, dims[nc:nc + nb])]
    init = [move_batch_axis(x, d, 0, size) if b else x
            for x, d, b in zip(init, dims[nc + nb:], carry_b)]
    if not pred_b:
        outs = while_p.bind(*c_consts, *cc, *b_consts, *bc, *init, cond_jaxpr=cj, body_jaxpr=bj,
                            cond_nconsts=len(c_consts) + nc, body_nconsts=len(b_consts) + nb)
        return outs, [0 if b else None for b in carry_b]
    outs = while_p.bind(*c_consts, *cc, *b_consts, *cc, *bc, *init, cond_jaxpr=cj,
                        body_jaxpr=bj, cond_nconsts=len(c_consts) + nc,
                        body_nconsts=len(b_consts) + nc + nb)
    return outs, [0] * len(outs)


def _while_batch_bodies(cond_jaxpr, body_jaxpr, flags, nc, nb, size):
    """(which carries are batched, whether the predicate is, the batched cond and body with
    their hoisted consts). Every batched operand has its batch axis at 0."""
    cc_b, bc_b, carry_b = list(flags[:nc]), list(flags[nc:nc + nb]), list(flags[nc + nb:])
    nd = lambda bs: [0 if b else None for b in bs]  # noqa: E731
    while True:
        _, ods = vmap_closed(body_jaxpr, nd(bc_b) + nd(carry_b), size)
        new = [b or d is not None for b, d in zip(carry_b, ods)]
        _, (pd,) = vmap_closed(cond_jaxpr, nd(cc_b) + nd(new), size)
        if pd is not None:
            new = [True] * len(new)   # lanes stop at different steps: every carry varies
        if new == carry_b:
            break
        carry_b = new
    carry_dims = nd(carry_b)
    if pd is None:
        cj, c_consts = hoist(vmap_closed(cond_jaxpr, nd(cc_b) + carry_dims, size)[0])
        bj, b_consts = hoist(vmap_closed(body_jaxpr, nd(bc_b) + carry_dims, size, carry_dims)[0])
        return carry_b, False, cj, c_consts, bj, b_consts
    # a batched predicate: loop while any lane runs; finished lanes keep their carry
    in_avals = [batched_aval(a, d, size) for a, d in
                zip(list(cond_jaxpr.in_avals) + list(body_jaxpr.in_avals),
                    nd(cc_b) + carry_dims + nd(bc_b) + carry_dims)]
    cc_avals, carry_avals = in_avals[:nc], in_avals[nc + len(carry_b) + nb:]
    bc_avals = in_avals[nc + len(carry_b):nc + len(carry_b) + nb]

    def lanes_running(ccs, carry):
        (p,), (d,) = vmap_eval(cond_jaxpr.jaxpr, (), list(ccs) + list(carry),
                               nd(cc_b) + carry_dims, size)
        return move_batch_axis(p, d, 0, size)

    def any_running(*a):
        return [reduce_or(lanes_running(a[:nc], a[nc:]), (0,))]

    def step(*a):
        ccs, bcs, carry = a[:nc], a[nc:nc + nb], a[nc + nb:]
        p = lanes_running(ccs, carry)
        new, ods = vmap_eval(body_jaxpr.jaxpr, (), list(bcs) + list(carry),
                             nd(bc_b) + carry_dims, size)
        res = []
        for old, x, d in zip(carry, new, ods):
            x = move_batch_axis(x, d, 0, size)
            which = broadcast_in_dim(p, aval(x).shape, (0,))
            res.append(select_n(which, old, x))
        return res

    cj, c_consts = trace_hoisted(any_running, cc_avals + carry_avals, "batched while cond")
    bj, b_consts = trace_hoisted(step, cc_avals + bc_avals + carry_avals, "batched while body")
    return carry_b, True, cj, c_consts, bj, b_consts


while_p.def_rules(abstract_eval=_while_aval, impl=_while_impl, jvp=_while_jvp,
                  transpose=_while_transpose, batch=_while_batch)


# =========================================================================== scan

scan_p = Primitive("scan", multiple_results=True)
scan_p.subjaxpr_params = ("jaxpr",)


def _scan_aval(*avals, jaxpr, length, reverse, num_consts, num_carry, linear=None, unroll=1):
    no_consts("scan: jaxpr", jaxpr)
    if not isinstance(length, int) or length < 0:
        raise TypeError(f"scan: length must be a non-negative int, got {length!r}")
    consts = avals[:num_consts]
    carry = avals[num_consts:num_consts + num_carry]
    xs = avals[num_consts + num_carry:]
    if linear is not None and len(linear) != len(avals):
        raise TypeError(f"scan: linear has {len(linear)} entries for {len(avals)} operands")
    for i, x in enumerate(xs):
        if not x.shape or x.shape[0] != length:
            raise TypeError(f"scan: xs argument {i} has type {x.str_short()} but its leading "
                            f"axis must have the scan length {length}")
    ins = jaxpr.in_avals
    if len(ins) != len(avals):
        raise TypeError(f"scan: the body takes {len(ins)} inputs but there are {len(consts)} "
                        f"consts, {len(carry)} carry elements and {len(xs)} xs")
    slices = [ShapedArray(x.shape[1:], x.dtype, x.weak_type) for x in xs]
    names = ([f"const {i}" for i in range(len(consts))] + [f"carry element {i}" for i in
             range(len(carry))] + [f"a slice of xs argument {i}" for i in range(len(xs))])
    _check_body("scan: body input", list(consts) + list(carry) + slices, ins,
                lambda i: names[i])
    outs = jaxpr.out_avals
    if len(outs) < len(carry):
        raise TypeError(f"scan: the body returns {len(outs)} values for a carry of "
                        f"{len(carry)} elements")
    _check_carry("scan: the body", outs, carry)
    return list(carry) + [ShapedArray((length,) + a.shape, a.dtype, a.weak_type)
                          for a in outs[num_carry:]]


def _scan_impl(*args, **params):
    return run_scan_eager(scan_p, args, params)


def _split3(xs, nc, nk):
    return list(xs[:nc]), list(xs[nc:nc + nk]), list(xs[nc + nk:])


def _residual_kinds(known, res_vars, primals, nc, nk):
    """How the scan JVP's linear scan gets each residual of the known body: residuals
    that are consts or xs of the loop are passed as they are (("const" | "xs", value)),
    the others are stacked by the known scan (("stack", None))."""
    kj = known.jaxpr
    res_kind = []
    for r in res_vars:
        if r in kj.invars and kj.invars.index(r) < nc:
            res_kind.append(("const", primals[kj.invars.index(r)]))
        elif r in kj.invars and kj.invars.index(r) >= nc + nk:
            res_kind.append(("xs", primals[kj.invars.index(r)]))
        elif r in kj.constvars:
            res_kind.append(("const", known.consts[kj.constvars.index(r)]))
        else:
            res_kind.append(("stack", None))
    return res_kind


def _scan_jvp(primals, tangents, *, jaxpr, length, reverse, num_consts, num_carry, linear,
              unroll):
    nc, nk = num_consts, num_carry
    consts, init, xs = _split3(primals, nc, nk)
    c_t, init_t, xs_t = _split3(tangents, nc, nk)
    nzf = lambda ps, ts: [type(t) is not Zero and is_float(aval(p))  # noqa: E731
                          for p, t in zip(ps, ts)]
    c_nz, carry_nz, xs_nz = nzf(consts, c_t), nzf(init, init_t), nzf(xs, xs_t)
    n_y = len(jaxpr.out_avals) - nk
    split = tangents_staged(tangents)
    while True:   # fixed point: a carry has a tangent if the body can give it one
        jc, out_nz = jvp_closed(jaxpr, c_nz + carry_nz + xs_nz, carry_nz + [False] * n_y,
                                staged=split)
        new = [a or b for a, b in zip(carry_nz, out_nz[:nk])]
        if new == carry_nz:
            break
        carry_nz = new
    params = dict(length=length, reverse=reverse, unroll=unroll)
    ys_nz = out_nz[nk:]
    if not any(carry_nz) and not any(ys_nz):
        outs = scan_p.bind(*primals, jaxpr=jaxpr, num_consts=nc, num_carry=nk,
                           linear=(False,) * len(primals), **params)
        return outs, [Zero(tangent_aval(aval(o))) for o in outs]
    if not split:
        return _scan_jvp_joint(primals, tangents, jc, out_nz, (c_nz, carry_nz, xs_nz),
                               nc, nk, n_y, params)
    n_in = len(primals)
    s = split_jvp(jc, n_in, nk + n_y)
    kj, lj = s.known.jaxpr, s.linear.jaxpr
    n_res = len(s.res_avals)
    res_kind = _residual_kinds(s.known, kj.outvars[nk + n_y:], primals, nc, nk)
    stacked = [r for r, (k, _) in zip(kj.outvars[nk + n_y:], res_kind) if k == "stack"]
    known_body = ClosedJaxpr(Jaxpr([], kj.constvars + kj.invars, kj.eqns,
                                   kj.outvars[:nk + n_y] + stacked), [])
    checked(known_body, "scan JVP (known body)")
    k_consts = list(s.known.consts)
    k_outs = scan_p.bind(*k_consts, *primals, jaxpr=known_body, num_consts=len(k_consts) + nc,
                         num_carry=nk, linear=(False,) * (len(k_consts) + n_in), **params)
    primal_outs = k_outs[:nk + n_y]
    stacked_vals = iter(k_outs[nk + n_y:])

    # the linear scan: consts (non-linear, then tangents), carry tangents, xs
    # (stacked residuals and xs residuals, then tangents)
    res_vars = lj.invars[:n_res]
    tan_vars = lj.invars[n_res:]
    n_ct, n_kt = sum(c_nz), sum(carry_nz)
    inv_res, inv_vals, xs_res, xs_vals = [], [], [], []
    for v, (kind, val) in zip(res_vars, res_kind):
        if kind == "const":
            inv_res.append(v)
            inv_vals.append(val)
        else:
            xs_res.append(v)
            xs_vals.append(next(stacked_vals) if kind == "stack" else val)
    lin_invars = (lj.constvars + inv_res + tan_vars[:n_ct] + tan_vars[n_ct:n_ct + n_kt]
                  + xs_res + tan_vars[n_ct + n_kt:])
    lin_body = checked(ClosedJaxpr(Jaxpr([], lin_invars, lj.eqns, lj.outvars), []),
                       "scan JVP (linear body)")
    nl_consts = list(s.linear.consts) + inv_vals
    t_consts = [instantiate(t) for t, z in zip(c_t, c_nz) if z]
    t_init = [instantiate(t) if type(t) is not Zero else np.zeros(aval(p).shape, aval(p).dtype)
              for p, t, z in zip(init, init_t, carry_nz) if z]
    t_xs = [instantiate(t) for t, z in zip(xs_t, xs_nz) if z]
    lin_ops = nl_consts + t_consts + t_init + xs_vals + t_xs
    lin_flags = ((False,) * len(nl_consts) + (True,) * (len(t_consts) + len(t_init))
                 + (False,) * len(xs_vals) + (True,) * len(t_xs))
    t_outs = scan_p.bind(*lin_ops, jaxpr=lin_body, num_consts=len(nl_consts) + len(t_consts),
                         num_carry=len(t_init), linear=lin_flags, **params)
    it = iter(t_outs)
    touts = [next(it) if z else Zero(tangent_aval(aval(o)))
             for o, z in zip(primal_outs, carry_nz + ys_nz)]
    return primal_outs, touts


def _scan_jvp_joint(primals, tangents, jc, out_nz, nz, nc, nk, n_y, params):
    """Forward mode: one scan over (consts, tangent consts), (carry, tangent carry),
    (xs, tangent xs), with the JVP body ``jc`` re-listed in that order."""
    c_nz, carry_nz, xs_nz = nz
    consts, init, xs = _split3(primals, nc, nk)
    c_t, init_t, xs_t = _split3(tangents, nc, nk)
    j = jc.jaxpr
    n_in = len(primals)
    p_vars, t_vars = j.invars[:n_in], j.invars[n_in:]
    n_ct, n_kt = sum(c_nz), sum(carry_nz)
    invars = (j.constvars + p_vars[:nc] + t_vars[:n_ct] + p_vars[nc:nc + nk]
              + t_vars[n_ct:n_ct + n_kt] + p_vars[nc + nk:] + t_vars[n_ct + n_kt:])
    n_out = nk + n_y
    po, to = j.outvars[:n_out], j.outvars[n_out:]
    n_kto = sum(out_nz[:nk])          # == n_kt: carry tangents went to a fixed point
    body = checked(ClosedJaxpr(Jaxpr([], invars, j.eqns,
                                     po[:nk] + to[:n_kto] + po[nk:] + to[n_kto:]), []),
                   "scan JVP (joint body)")
    t_consts = [instantiate(t) for t, z in zip(c_t, c_nz) if z]
    t_init = [instantiate(t) if type(t) is not Zero else np.zeros(aval(p).shape, aval(p).dtype)
              for p, t, z in zip(init, init_t, carry_nz) if z]
    t_xs = [instantiate(t) for t, z in zip(xs_t, xs_nz) if z]
    ops = list(jc.consts) + consts + t_consts + init + t_init + xs + t_xs
    outs = scan_p.bind(*ops, jaxpr=body, num_consts=len(jc.consts) + nc + len(t_consts),
                       num_carry=nk + len(t_init), linear=(False,) * len(ops), **params)
    carry, t_carry = outs[:nk], outs[nk:nk + n_kt]
    ys, t_ys = outs[nk + n_kt:nk + n_kt + n_y], outs[nk + n_kt + n_y:]
    it_c, it_y = iter(t_carry), iter(t_ys)
    touts = ([next(it_c) if z else Zero(tangent_aval(aval(o))) for o, z in zip(carry, carry_nz)]
             + [next(it_y) if z else Zero(tangent_aval(aval(o)))
                for o, z in zip(ys, out_nz[nk:])])
    return carry + ys, touts


def _scan_transpose(cts, *args, jaxpr, length, reverse, num_consts, num_carry, linear, unroll):
    nc, nk = num_consts, num_carry
    consts, init, xs = _split3(args, nc, nk)
    # a carry given as a concrete value (zeros of a tangent that starts at zero) is
    # treated as linear too: the body is linear in every carry; its cotangent is dropped
    c_lin = [is_undefined(c) for c in consts]
    x_lin = [is_undefined(x) for x in xs]
    c_nl = [c for c in consts if not is_undefined(c)]
    x_nl = [x for x in xs if not is_undefined(x)]
    tj = transpose_closed(jaxpr, c_lin + [True] * nk + x_lin)
    ct_carry = [instantiate(c) for c in cts[:nk]]
    ct_ys = [instantiate(c) for c in cts[nk:]]
    n_cnl, n_acc, n_xnl = len(c_nl), sum(c_lin), len(x_nl)
    acc_avals = [c.aval for c in consts if is_undefined(c)]
    cnl_avals = [aval(c) for c in c_nl]
    ct_carry_avals = [aval(c) for c in ct_carry]
    x_slice_avals = [ShapedArray(aval(x).shape[1:], aval(x).dtype) for x in x_nl]
    y_slice_avals = [ShapedArray(aval(y).shape[1:], aval(y).dtype) for y in ct_ys]

    def body(*a):
        cnl = a[:n_cnl]
        acc = a[n_cnl:n_cnl + n_acc]
        ctc = a[n_cnl + n_acc:n_cnl + n_acc + nk]
        rest = a[n_cnl + n_acc + nk:]
        xnl, cty = rest[:n_xnl], rest[n_xnl:]
        outs = eval_jaxpr(tj.jaxpr, tj.consts, [*cnl, *xnl, *ctc, *cty])
        ct_c, ct_carry_in, ct_x = outs[:n_acc], outs[n_acc:n_acc + nk], outs[n_acc + nk:]
        return [add(s, t) for s, t in zip(acc, ct_c)] + list(ct_carry_in) + list(ct_x)

    bj, b_consts = trace_hoisted(body, cnl_avals + acc_avals + ct_carry_avals + x_slice_avals
                                 + y_slice_avals, "transposed scan body")
    acc0 = [np.zeros(a.shape, a.dtype) for a in acc_avals]
    ops = [*b_consts, *c_nl, *acc0, *ct_carry, *x_nl, *ct_ys]
    outs = scan_p.bind(*ops, jaxpr=bj, length=length, reverse=not reverse,
                       num_consts=len(b_consts) + n_cnl, num_carry=n_acc + nk,
                       linear=(False,) * len(ops), unroll=unroll)
    acc_it = iter(outs[:n_acc])
    ct_init = outs[n_acc:n_acc + nk]
    ct_xs_it = iter(outs[n_acc + nk:])
    return ([next(acc_it) if m else None for m in c_lin]
            + [ct if is_undefined(c) else None for c, ct in zip(init, ct_init)]
            + [next(ct_xs_it) if m else None for m in x_lin])


def _scan_batch(args, dims, *, jaxpr, length, reverse, num_consts, num_carry, linear, unroll):
    size = not_mapped_size(args, dims)
    nc, nk = num_consts, num_carry
    flags = tuple(d is not None for d in dims)
    to, bj, b_consts = memo_batching(
        _batched_bodies, scan_p, dict(jaxpr=jaxpr), jaxpr, (flags, size, nc, nk),
        lambda: _scan_batch_body(jaxpr, flags, nc, nk, size))
    consts, init, xs = _split3(args, nc, nk)
    c_d, init_d, xs_d = _split3(dims, nc, nk)
    consts = [x if d is None else move_batch_axis(x, d, 0, size) for x, d in zip(consts, c_d)]
    init = [move_batch_axis(x, d, 0, size) if t is not None else x
            for x, d, t in zip(init, init_d, to)]
    xs = [x if d is None else move_batch_axis(x, d, 1, size) for x, d in zip(xs, xs_d)]
    ops = [*b_consts, *consts, *init, *xs]
    lin = (False,) * len(b_consts) + tuple(linear or (False,) * len(args))
    outs = scan_p.bind(*ops, jaxpr=bj, length=length, reverse=reverse,
                       num_consts=len(b_consts) + nc, num_carry=nk, linear=lin, unroll=unroll)
    return outs, to[:nk] + [None if d is None else 1 for d in to[nk:]]


def _scan_batch_body(jaxpr, flags, nc, nk, size):
    """(the batched outputs' dims, the batched body, its hoisted consts): batched consts
    and carries have their batch axis at 0, batched xs at 1 (0 in a slice)."""
    c_b, carry_b, xs_b = _split3(list(flags), nc, nk)
    nd = lambda bs: [0 if b else None for b in bs]  # noqa: E731
    while True:
        in_dims = nd(c_b) + nd(carry_b) + nd(xs_b)
        _, ods = vmap_closed(jaxpr, in_dims, size)
        new = [b or d is not None for b, d in zip(carry_b, ods[:nk])]
        if new == carry_b:
            break
        carry_b = new
    to = nd(carry_b) + [None if d is None else 0 for d in ods[nk:]]
    bj, b_consts = hoist(vmap_closed(jaxpr, in_dims, size, to)[0])
    return to, bj, b_consts


scan_p.def_rules(abstract_eval=_scan_aval, impl=_scan_impl, jvp=_scan_jvp,
                 transpose=_scan_transpose, batch=_scan_batch)
