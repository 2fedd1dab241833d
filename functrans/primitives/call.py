"""``pjit``: a call of a jitted function inside another trace, as one equation.

Its body is a ClosedJaxpr without consts (constants are explicit operands). The
rules transform the body and call it again, so ``grad(jit(f))`` and
``vmap(jit(f))`` still run compiled code.

>>> pjit_p.name
'pjit'
"""
from __future__ import annotations

from jaxpr_ir import ClosedJaxpr
from ..compiler import LRUCache, compile_closed
from ..tracing import Tracer, own_constants, trace_to_jaxpr
from ..transforms.jvp import jvp_eval
from ..transforms.partial_eval import partial_eval
from ..transforms.transpose import transpose_jaxpr
from ..transforms.vmap import vmap_jaxpr
from .base import Primitive, Zero, instantiate, is_undefined, not_mapped_size, tangent_aval
from .control_flow_common import BodyCache, axis_env_key, check_operands, hoist

pjit_p = Primitive("pjit", multiple_results=True)
pjit_p.subjaxpr_params = ("jaxpr",)
pjit_p.call_param = "jaxpr"


def _pjit_aval(*avals, jaxpr, name, backend):
    check_operands(f"pjit {name}", avals, jaxpr)
    return list(jaxpr.out_avals)


# (id of the body, backend) -> (body, executable): the entry holds its body, so the id
# stays that body's while the entry lives (ClosedJaxpr takes no weak references)
_compiled = LRUCache()


def _pjit_impl(*args, jaxpr, name, backend):
    key = (id(jaxpr), backend)
    hit = _compiled.get(key)
    if hit is None or hit[0] is not jaxpr:
        hit = (jaxpr, compile_closed(jaxpr, backend, name=name))
        _compiled.put(key, hit)
    return hit[1](*args)


def _pjit_jvp(primals, tangents, *, jaxpr, name, backend):
    # Partial evaluation splits the JVP body into a known call (primal outputs and
    # residuals, from the primals) and a linear call (tangents, from residuals and
    # tangents): the primal is computed once, and in reverse mode only the linear
    # call is staged, reading the residuals instead of recomputing them.
    nz = tuple(type(t) is not Zero for t in tangents)
    known, unknown, tk_idx, tu_idx, zero_out = _jvp_split(jaxpr, nz)
    n_out = len(jaxpr.out_avals)
    (kbody, kconsts), (ubody, uconsts) = known, unknown
    kres = pjit_p.bind(*kconsts, *primals, jaxpr=kbody,
                       name=f"jvp_known({name})", backend=backend)
    out, rest = kres[:n_out], kres[n_out:]
    n_tk = len(tk_idx)
    res = rest[n_tk:]
    touts = [None] * n_out
    for i, t in zip(tk_idx, rest[:n_tk]):
        touts[i] = t
    if tu_idx:
        ts = [t for t in tangents if type(t) is not Zero]
        tu = pjit_p.bind(*uconsts, *res, *ts, jaxpr=ubody,
                         name=f"jvp({name})", backend=backend)
        for i, t in zip(tu_idx, tu):
            touts[i] = t
    # an output whose tangent the body's JVP left a symbolic zero stays one (as JAX's
    # instantiate=False): a constant passed through the call otherwise came back with a
    # tangent of zeros, and a custom_vjp closing over it raised at second order
    return out, [Zero(tangent_aval(a)) if z else t
                 for a, z, t in zip(jaxpr.out_avals, zero_out, touts)]


_split_cache = BodyCache()


def _jvp_split(jaxpr, nz):
    """(known call, linear call, tangent outputs known, tangent outputs linear, tangent
    outputs left symbolic zeros) for a body; each call a (body, consts) pair, cached
    while the consts hold no tracer (see ``_derived``)."""
    key = (nz, axis_env_key())
    hit = _split_cache.get(jaxpr, *key)
    if hit is not None:
        return hit
    with own_constants():
        hit = _split_jvp(jaxpr, nz)
    if not any(isinstance(c, Tracer) for c in hit[0][1] + hit[1][1]):
        _split_cache.put(jaxpr, hit, *key)
    return hit


def _split_jvp(jaxpr, nz):
    in_avals = jaxpr.in_avals
    n_in, n_out = len(in_avals), len(jaxpr.out_avals)
    t_avals = [tangent_aval(a) for a, m in zip(in_avals, nz) if m]

    zero_out = []

    def fun(*xs):
        it = iter(xs[n_in:])
        ts = [next(it) if m else Zero(tangent_aval(a)) for a, m in zip(in_avals, nz)]
        outs, touts = jvp_eval(jaxpr.jaxpr, jaxpr.consts, xs[:n_in], ts)
        zero_out[:] = [type(t) is Zero for t in touts]
        return list(outs) + [instantiate(t) for t in touts]

    j, c, _ = trace_to_jaxpr(fun, list(in_avals) + t_avals, name="pjit jvp", staged=True)
    kj, uj, out_known = partial_eval(ClosedJaxpr(j, c), [True] * n_in + [False] * len(t_avals))
    assert all(out_known[:n_out]), "a primal output depends on tangents"
    tk_idx = [i for i in range(n_out) if out_known[n_out + i]]
    tu_idx = [i for i in range(n_out) if not out_known[n_out + i]]
    return hoist(kj), hoist(uj), tk_idx, tu_idx, tuple(zero_out)


def _derived(cache, body, key, make):
    """``make()`` -> (a body derived from ``body``, its constants, *rest), cached per
    ``body``, ``key`` and the axis env (a collective's rule reads the enclosing names and
    sizes), so repeated calls of vmap(jit(f)) or grad(jit(f)) bind the same derived body
    and find its executable again. The derivation records its constants itself
    (``own_constants``), not in the enclosing trace, so it holds no value of that trace;
    one still holding a tracer (a collective's rule records in the vmap's trace) is not
    kept past this call."""
    key = (*key, axis_env_key())
    hit = cache.get(body, *key)
    if hit is None:
        with own_constants():
            hit = make()
        if not any(isinstance(c, Tracer) for c in hit[1]):
            cache.put(body, hit, *key)
    return hit


_transpose_cache = BodyCache()


def _pjit_transpose(cts, *args, jaxpr, name, backend):
    mask = [is_undefined(a) for a in args]
    ct_mask = tuple(type(c) is not Zero for c in cts)   # symbolic zeros stay out
    hit = _derived(_transpose_cache, jaxpr, (tuple(mask), ct_mask),
                   lambda: hoist(transpose_jaxpr(jaxpr, mask, ct_mask)))
    tbody, tconsts = hit
    nonlin = [a for a in args if not is_undefined(a)]
    cts = [instantiate(c) for c, m in zip(cts, ct_mask) if m]
    outs = pjit_p.bind(*tconsts, *nonlin, *cts, jaxpr=tbody,
                       name=f"transpose({name})", backend=backend)
    it = iter(outs)
    return [next(it) if m else None for m in mask]


_batch_cache = BodyCache()


def _pjit_batch(args, dims, *, jaxpr, name, backend):
    size = not_mapped_size(args, dims)

    def make():
        bj, out_dims = vmap_jaxpr(jaxpr, dims, size)
        return (*hoist(bj), out_dims)
    body, consts, out_dims = _derived(_batch_cache, jaxpr, (tuple(dims), size), make)
    outs = pjit_p.bind(*consts, *args, jaxpr=body, name=f"vmap({name})",
                       backend=backend)
    return outs, out_dims


pjit_p.def_rules(abstract_eval=_pjit_aval, impl=_pjit_impl, jvp=_pjit_jvp,
                 transpose=_pjit_transpose, batch=_pjit_batch)
