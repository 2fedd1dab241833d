"""``pjit``: a call of a jitted function inside another trace, as one equation.

Its body is a ClosedJaxpr without consts (constants are explicit operands). The
rules transform the body and call it again, so ``grad(jit(f))`` and
``vmap(jit(f))`` still run compiled code.

>>> pjit_p.name
'pjit'
"""
from __future__ import annotations

from jaxpr_ir import ClosedJaxpr
from .base import Primitive, Zero, instantiate, is_undefined, tangent_aval

pjit_p = Primitive("pjit", multiple_results=True)
pjit_p.subjaxpr_params = ("jaxpr",)
pjit_p.call_param = "jaxpr"


def _pjit_aval(*avals, jaxpr, name, backend):
    ins = jaxpr.in_avals
    if len(avals) != len(ins):
        raise TypeError(f"pjit {name}: body takes {len(ins)} inputs, got {len(avals)}")
    for i, (a, b) in enumerate(zip(avals, ins)):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise TypeError(f"pjit {name}: input {i} has type {a.str_short()} but the body "
                            f"expects {b.str_short()}")
    return list(jaxpr.out_avals)


_compiled = {}


def _pjit_impl(*args, jaxpr, name, backend):
    from backends import get_backend
    key = (id(jaxpr), backend)
    hit = _compiled.get(key)
    if hit is None or hit[0] is not jaxpr:
        hit = (jaxpr, get_backend(backend).compile(jaxpr))
        _compiled[key] = hit
    return hit[1](*args)


def _pjit_jvp(primals, tangents, *, jaxpr, name, backend):
    from ..transforms.jvp import jvp_jaxpr
    out = pjit_p.bind(*primals, jaxpr=jaxpr, name=name, backend=backend)
    if all(type(t) is Zero for t in tangents):
        return out, [Zero(tangent_aval(a)) for a in jaxpr.out_avals]
    n_out = len(jaxpr.out_avals)
    # The tangent part is its own call reading primals and tangents (it recomputes
    # what it needs), so the primal outputs never land in a linear trace.
    h = _hoist_consts(_select_outputs(jvp_jaxpr(jaxpr), range(n_out, 2 * n_out)))
    ts = [instantiate(t) for t in tangents]
    tout = pjit_p.bind(*h.consts_as_args, *primals, *ts, jaxpr=h.closed, name=f"jvp({name})",
                       backend=backend)
    return out, tout


def _select_outputs(closed, idx):
    from jaxpr_ir import Jaxpr
    from jaxpr_ir.passes import dce
    j = closed.jaxpr
    j2 = Jaxpr(j.constvars, j.invars, j.eqns, [j.outvars[i] for i in idx])
    return ClosedJaxpr(dce(j2), closed.consts)


def _pjit_transpose(cts, *args, jaxpr, name, backend):
    from ..transforms.transpose import transpose_jaxpr
    mask = [is_undefined(a) for a in args]
    tj = transpose_jaxpr(jaxpr, mask)
    tj = _hoist_consts(tj)
    nonlin = [a for a in args if not is_undefined(a)]
    cts = [instantiate(c) for c in cts]
    outs = pjit_p.bind(*tj.consts_as_args, *nonlin, *cts, jaxpr=tj.closed,
                       name=f"transpose({name})", backend=backend)
    it = iter(outs)
    return [next(it) if m else None for m in mask]


class _Hoisted:
    __slots__ = ("closed", "consts_as_args")

    def __init__(self, closed, consts):
        self.closed = closed
        self.consts_as_args = consts


def _hoist_consts(closed: ClosedJaxpr) -> _Hoisted:
    """Turn constvars into leading invars, so the body carries no consts."""
    from jaxpr_ir import Jaxpr
    j = closed.jaxpr
    return _Hoisted(ClosedJaxpr(Jaxpr([], j.constvars + j.invars, j.eqns, j.outvars), []),
                    list(closed.consts))


def _pjit_batch(args, dims, *, jaxpr, name, backend):
    from ..transforms.vmap import vmap_jaxpr
    from .base import not_mapped_size
    size = not_mapped_size(args, dims)
    bj, out_dims = vmap_jaxpr(jaxpr, dims, size)
    h = _hoist_consts(bj)
    outs = pjit_p.bind(*h.consts_as_args, *args, jaxpr=h.closed, name=f"vmap({name})",
                       backend=backend)
    return outs, out_dims


pjit_p.def_rules(abstract_eval=_pjit_aval, impl=_pjit_impl, jvp=_pjit_jvp,
                 transpose=_pjit_transpose, batch=_pjit_batch)


def hoist_consts(closed):
    """Public helper: (consts-free ClosedJaxpr, const values to pass as leading operands)."""
    h = _hoist_consts(closed)
    return h.closed, h.consts_as_args

