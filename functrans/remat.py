"""``checkpoint`` (alias ``remat``): trade memory for recomputation in reverse mode.

``checkpoint(f)`` stages ``f`` as one ``checkpoint`` equation. Its JVP rule
computes the primal outputs, then stages the tangent computation as another
``checkpoint`` whose operands are only the body's inputs (plus whatever the
policy allows to be saved); in reverse mode that equation lands in the linear
jaxpr, so the residuals kept between the forward and backward pass are those
operands, and the body's intermediates are recomputed while transposing.

Policies (``ft.checkpoint_policies``) decide which intermediates may be saved:
``nothing_saveable`` (the default: recompute everything), ``dots_saveable``
(save the outputs of ``dot_general``, recompute the rest) and
``everything_saveable`` (no recomputation).

>>> import functrans as ft, functrans.numpy as fnp
>>> f = ft.checkpoint(lambda x: fnp.sin(fnp.sin(x)))
>>> round(float(ft.grad(f)(0.5)), 6)
0.778644
"""
from __future__ import annotations

import functools
import types

from jaxpr_ir import ClosedJaxpr, Jaxpr
from . import tracing
from .api_util import abstract_and_concrete, as_array, flatten_fun
from .primitives.base import Zero, instantiate, tangent_aval
from .primitives.control_flow_common import BodyCache
from .tracing import trace_to_jaxpr
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["checkpoint", "remat", "checkpoint_policies"]


# --------------------------------------------------------------------------- policies

def nothing_saveable(prim, *avals, **params):
    """Save nothing: every intermediate is recomputed in the backward pass."""
    return False


def everything_saveable(prim, *avals, **params):
    """Save every intermediate (checkpoint then changes nothing)."""
    return True


def dots_saveable(prim, *avals, **params):
    """Save the outputs of matrix products (``dot_general``); recompute the rest."""
    return prim.name == "dot_general"


def dots_with_no_batch_dims_saveable(prim, *avals, **params):
    """Save ``dot_general`` outputs whose product has no batch dimensions."""
    if prim.name != "dot_general":
        return False
    dn = params.get("dimension_numbers")
    try:
        (_, _), (lb, rb) = dn
        return not lb and not rb
    except (TypeError, ValueError):
        return False


checkpoint_policies = types.SimpleNamespace(
    nothing_saveable=nothing_saveable,
    everything_saveable=everything_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
)

# params hold the policy's name (a str prints and parses); the function is found here
_POLICIES = {f.__name__: f for f in (nothing_saveable, everything_saveable, dots_saveable,
                                     dots_with_no_batch_dims_saveable)}
_POLICY_NAMES: dict = {}


def _policy_name(policy) -> str:
    if policy is None:
        return "nothing_saveable"
    if isinstance(policy, str):
        if policy not in _POLICIES:
            raise ValueError(f"checkpoint: unknown policy {policy!r}; known: {sorted(_POLICIES)}")
        return policy
    if not callable(policy):
        raise TypeError(f"checkpoint: policy must be None, a name or a function "
                        f"(prim, *avals, **params) -> bool, got {type(policy).__name__}")
    name = _POLICY_NAMES.get(policy)
    if name is None:
        base = getattr(policy, "__name__", "policy")
        name = base if _POLICIES.get(base, policy) is policy else f"{base}#{len(_POLICIES)}"
        _POLICIES[name] = policy
        _POLICY_NAMES[policy] = name
    return name


# --------------------------------------------------------------------------- the transform

def checkpoint(fun=None, *, policy=None, prevent_cse=True, static_argnums=()):
    """Make reverse mode recompute ``fun``'s intermediates instead of saving them.

    ``policy``: None (save nothing), or one of ``ft.checkpoint_policies``, or a
    function ``(primitive, *in_avals, **params) -> bool`` saying which equation
    outputs may be saved. ``static_argnums``: arguments passed as Python values.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> g = ft.grad(ft.checkpoint(lambda x: fnp.sin(x) * x))
    >>> round(float(g(1.0)), 6)
    1.381773
    """
    if fun is None:
        return lambda f: checkpoint(f, policy=policy, prevent_cse=prevent_cse,
                                    static_argnums=static_argnums)
    pname = _policy_name(policy)
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    static_argnums = tuple(static_argnums)
    name = getattr(fun, "__name__", "fun")

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        if not tracing.trace_depth():   # nothing is being differentiated: just run it
            return fun(*args, **kwargs)
        nums = {a % len(args) for a in static_argnums if -len(args) <= a < len(args)}
        dyn = tuple(a for i, a in enumerate(args) if i not in nums)

        def f(*dargs):
            it = iter(dargs)
            return fun(*[args[i] if i in nums else next(it) for i in range(len(args))],
                       **kwargs)

        flat, in_tree = tree_flatten(dyn)
        flat = [as_array(x) for x in flat]
        flat_fun, out_tree = flatten_fun(f, in_tree)
        avals, vals = abstract_and_concrete(flat)
        jaxpr, consts, _ = trace_to_jaxpr(flat_fun, avals, vals, name=f"checkpoint({name})")
        from .primitives.custom import checkpoint_p, hoist_many
        (body,), hc = hoist_many([ClosedJaxpr(jaxpr, consts)])
        outs = checkpoint_p.bind(*hc, *flat, jaxpr=body, policy=pname, name=name)
        return tree_unflatten(out_tree(), outs)

    return wrapped


remat = checkpoint


# --------------------------------------------------------------------------- the JVP rule

_fwd_cache = BodyCache()
_tangent_cache = BodyCache()


def _saveable(closed, policy):
    pol = _POLICIES[policy]
    return tuple(i for i, e in enumerate(closed.jaxpr.eqns)
                 if pol(e.primitive, *[a.aval for a in e.inputs], **e.params))


def _fwd_body(closed, saveable):
    """The body with the saveable equations' outputs appended to its outputs."""
    hit = _fwd_cache.get(closed, saveable)
    if hit is not None:
        return hit
    j = closed.jaxpr
    extra = [v for i in saveable for v in j.eqns[i].outvars]
    return _fwd_cache.put(closed, ClosedJaxpr(Jaxpr([], j.invars, j.eqns,
                                                    list(j.outvars) + extra), []), saveable)


def _tangent_body(closed, saveable, nz):
    """Const-free jaxpr (consts, primals, saved, nonzero tangents) -> tangents, and its consts.

    It recomputes the primal values the tangents need, except the outputs of the
    saveable equations, which it reads from ``saved``.
    """
    hit = _tangent_cache.get(closed, saveable, nz)
    if hit is not None:
        return hit
    from jaxpr_ir import Literal
    from jaxpr_ir.passes import dce
    from .primitives.custom import hoist_many
    from .transforms.jvp import jvp_eqn
    j = closed.jaxpr
    saved_vars = [v for i in saveable for v in j.eqns[i].outvars]
    in_avals = j.in_avals
    t_avals = [tangent_aval(a) for a, m in zip(in_avals, nz) if m]
    n, ns = len(in_avals), len(saved_vars)
    save_set = set(saveable)

    def fun(*xs):
        penv = dict(zip(j.invars, xs[:n]))
        saved = dict(zip(saved_vars, xs[n:n + ns]))
        it = iter(xs[n + ns:])
        tenv = {v: (next(it) if m else Zero(tangent_aval(v.aval))) for v, m in zip(j.invars, nz)}

        def read(a):
            return a.val if type(a) is Literal else penv[a]

        def read_t(a):
            return Zero(a.aval) if type(a) is Literal else tenv[a]

        for i, e in enumerate(j.eqns):
            out, tout = jvp_eqn(e.primitive, [read(a) for a in e.inputs],
                                [read_t(a) for a in e.inputs], e.params)
            if not e.primitive.multiple_results:
                out, tout = [out], [tout]
            if i in save_set:   # the saved value replaces the recomputed one (DCE drops it)
                out = [saved[v] for v in e.outvars]
            penv.update(zip(e.outvars, out))
            tenv.update(zip(e.outvars, tout))
        return [instantiate(read_t(a)) for a in j.outvars]

    tj, tc, _ = trace_to_jaxpr(fun, list(in_avals) + [v.aval for v in saved_vars] + t_avals,
                               name="checkpoint tangent", staged=True)  # transposed later
    tj = dce(tj)
    (body,), consts = hoist_many([ClosedJaxpr(tj, tc)])
    return _tangent_cache.put(closed, (body, consts), saveable, nz)


def checkpoint_jvp(primals, tangents, closed, policy, name):
    """JVP of a ``checkpoint`` equation (see the module docstring)."""
    from .primitives.custom import checkpoint_p
    saveable = _saveable(closed, policy)
    n_out = len(closed.jaxpr.outvars)
    if saveable:
        res = checkpoint_p.bind(*primals, jaxpr=_fwd_body(closed, saveable), policy=policy,
                                name=name)
        outs, saved = res[:n_out], res[n_out:]
    else:
        outs, saved = checkpoint_p.bind(*primals, jaxpr=closed, policy=policy, name=name), []
    nz = tuple(type(t) is not Zero for t in tangents)
    body, consts = _tangent_body(closed, saveable, nz)
    ts = [t for t in tangents if type(t) is not Zero]
    touts = checkpoint_p.bind(*consts, *primals, *saved, *ts, jaxpr=body, policy=policy,
                              name=f"jvp({name})")
    return outs, touts
