"""Generic IR → IR passes: dead-code elimination, CSE, constant folding, inlining.

Every pass is a pure function: it builds a new ``Jaxpr`` (a ``ClosedJaxpr`` in
gives a ``ClosedJaxpr`` out, with the same consts) and never mutates its input.
Signatures are preserved (same invars and constvars; outvars may be replaced by
equal values), and sub-jaxprs in params are simplified recursively with their
own signatures unchanged, so the passes compose with any primitive.

>>> from jaxpr_ir import Jaxpr, Var, ShapedArray
>>> a = Var(ShapedArray((), "float64"))
>>> simplify(Jaxpr([], [a], [], [a])).invars == [a]
True
"""
from __future__ import annotations

import warnings

import numpy as np

from .core import ClosedJaxpr, Eqn, Jaxpr, Literal, Var

__all__ = ["dce", "dce_used_inputs", "cse", "fold_constants", "inline_calls", "sub_effects",
           "drop_barriers", "simplify", "PIPELINE"]


# ------------------------------------------------------------------ helpers

def _unwrap(x):
    if isinstance(x, ClosedJaxpr):
        return x.jaxpr, lambda j: ClosedJaxpr(j, x.consts)
    if isinstance(x, Jaxpr):
        return x, lambda j: j
    raise TypeError(f"expected a Jaxpr or ClosedJaxpr, got {type(x).__name__}")


def _sub_keys(prim):
    keys = set(prim.subjaxpr_params)
    if prim.call_param:
        keys.add(prim.call_param)
    return keys


def _map_subjaxprs(eqn, fn, memo: dict) -> dict:
    """eqn's params with every sub-jaxpr ``j`` replaced by ``fn(j)`` (a Jaxpr → Jaxpr).

    ``memo`` maps id(sub-jaxpr) to its result so that a body shared by several
    equations stays one shared object (and is processed once).
    """
    prim = eqn.primitive
    if not (prim.subjaxpr_params or prim.call_param):    # most equations: no set built
        return eqn.params
    keys = _sub_keys(prim)

    def go(v):
        if isinstance(v, (Jaxpr, ClosedJaxpr)):
            if id(v) not in memo:
                inner, wrap = _unwrap(v)
                memo[id(v)] = (v, wrap(fn(inner)))   # keep v alive so its id stays unique
            return memo[id(v)][1]
        if isinstance(v, (tuple, list)):
            return type(v)(go(x) for x in v)
        return v

    return {k: (go(v) if k in keys else v) for k, v in eqn.params.items()}


def _subjaxprs(eqn):
    def walk(v):
        if isinstance(v, (Jaxpr, ClosedJaxpr)):
            yield _unwrap(v)[0]
        elif isinstance(v, (tuple, list)):
            for x in v:
                yield from walk(x)
    for k in _sub_keys(eqn.primitive):
        yield from walk(eqn.params.get(k))


def _effectful(eqn, memo: dict) -> bool:
    """has_effects, or a sub-jaxpr (a cond branch, a loop body) contains an effect."""
    prim = eqn.primitive
    if prim.has_effects:
        return True
    if not (prim.subjaxpr_params or prim.call_param):    # no sub-jaxprs: no generator
        return False
    for j in _subjaxprs(eqn):
        if id(j) not in memo:
            memo[id(j)] = (j, any(_effectful(e, memo) for e in j.eqns))
        if memo[id(j)][1]:
            return True
    return False


def sub_effects(prim, params: dict) -> bool:
    """Whether a sub-jaxpr in ``params`` of ``prim`` (a cond branch, a loop body) holds an
    effect (then the eqn is staged, not run while tracing, like an effect itself).

    >>> from jaxpr_ir.core import Primitive
    >>> sub_effects(Primitive("demo_plain_op"), {})
    False
    """
    if not (prim.subjaxpr_params or prim.call_param):
        return False
    memo: dict = {}
    return _effectful(Eqn(prim, [], [], params), memo)


def _barrier(prim) -> bool:
    """An optimisation barrier: identity on values, opaque to CSE and constant folding
    (a primitive sets ``prevents_cse``; ``drop_barriers`` removes it at the end)."""
    return getattr(prim, "prevents_cse", False)


def _subst(env: dict):
    return lambda x: env.get(x, x) if isinstance(x, Var) else x


# ---------------------------------------------------------------------- DCE

def dce(jaxpr, used_outputs=None):
    """Remove equations whose outputs are never used; keep effectful ones.

    The invars and constvars are kept as they are (the signature does not
    change). ``used_outputs`` (one bool per outvar) drops the outvars marked
    False first, so their producers become dead too.

    >>> from jaxpr_ir import parse
    >>> j = dce(parse("{ lambda ; a:f64[]. let  in (a, a) }"), [True, False])
    >>> len(j.outvars)
    1
    """
    j, wrap = _unwrap(jaxpr)
    outvars = list(j.outvars)
    if used_outputs is not None:
        if len(used_outputs) != len(outvars):
            raise ValueError(f"dce: {len(used_outputs)} used_outputs flags for "
                             f"{len(outvars)} outputs")
        outvars = [v for v, u in zip(outvars, used_outputs) if u]
    return wrap(_dce(j, outvars, {}, {}))


def _dce(j: Jaxpr, outvars, memo: dict, effects: dict) -> Jaxpr:
    live = {v for v in outvars if isinstance(v, Var)}
    kept = []
    for eqn in reversed(j.eqns):   # backwards: liveness flows from uses to definitions
        if not (any(v in live for v in eqn.outvars) or _effectful(eqn, effects)):
            continue
        params = _map_subjaxprs(eqn, lambda s: _dce(s, s.outvars, memo, effects), memo)
        kept.append(eqn if params is eqn.params else
                    Eqn(eqn.primitive, eqn.inputs, eqn.outvars, params, eqn.source))
        live.update(x for x in eqn.inputs if isinstance(x, Var))
    return Jaxpr(j.constvars, j.invars, kept[::-1], outvars)


def dce_used_inputs(jaxpr) -> list:
    """Which invars the jaxpr still reads once dead code is removed.

    >>> from jaxpr_ir import parse
    >>> dce_used_inputs(parse("{ lambda ; a:f64[] b:f64[]. let  in (b,) }"))
    [False, True]
    """
    j = _unwrap(dce(jaxpr))[0]
    used = {x for e in j.eqns for x in e.inputs if isinstance(x, Var)}
    used.update(v for v in j.outvars if isinstance(v, Var))
    return [v in used for v in j.invars]


# ---------------------------------------------------------------------- CSE

def cse(jaxpr):
    """Merge equations that apply the same primitive to the same inputs and params.

    Inputs compare by identity (vars) or by value and type (literals); params
    compare structurally, sub-jaxprs too (up to the naming of their variables).
    Effectful equations are never merged.

    >>> from jaxpr_ir import parse
    >>> j = parse("{ lambda ; a:f64[]. let  in (a,) }")
    >>> len(cse(j).eqns)
    0
    """
    j, wrap = _unwrap(jaxpr)
    return wrap(_cse(j, {}, {}, {}))


def _atom_key(x):
    if isinstance(x, Literal):
        # bytes, not ==: 0.0 and -0.0 differ, and a NaN literal equals itself
        return ("lit", x.aval.dtype.str, x.aval.weak_type, np.asarray(x.val).tobytes())
    return ("var", id(x))


def _jaxpr_key(j: Jaxpr, keys: dict):
    """A hashable value equal for two jaxprs exactly when they are the same program up to
    the names of their variables (vars become their position of definition)."""
    index = {}

    def atom(x):
        if isinstance(x, Literal):
            return _atom_key(x)
        i = index.get(x)
        return ("var", i) if i is not None else ("free", id(x))

    def define(vs):
        for v in vs:
            index[v] = len(index)
        return tuple(v.aval for v in vs)

    head = (define(j.constvars), define(j.invars))
    eqns = []
    for e in j.eqns:
        ins = tuple(map(atom, e.inputs))
        params = tuple(sorted((k, _param_key(v, keys)) for k, v in e.params.items()))
        eqns.append((e.primitive.name, ins, params, define(e.outvars)))
    return head + (tuple(eqns), tuple(map(atom, j.outvars)))


def _param_key(v, keys: dict):
    if isinstance(v, (Jaxpr, ClosedJaxpr)):
        if id(v) not in keys:   # the entry holds v, so its id stays unique meanwhile
            keys[id(v)] = (v, _jaxpr_key(_unwrap(v)[0], keys))
        consts = tuple(id(c) for c in v.consts) if isinstance(v, ClosedJaxpr) else ()
        return ("jaxpr", keys[id(v)][1], consts)
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, tuple(_param_key(x, keys) for x in v))
    if isinstance(v, dict):
        return ("dict", tuple(sorted((repr(k), _param_key(x, keys)) for k, x in v.items())))
    if isinstance(v, np.ndarray):
        return ("array", v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, (float, np.floating, complex, np.complexfloating)):
        return (type(v).__name__, repr(v))    # repr: NaN equals NaN, -0.0 differs from 0.0
    try:
        hash(v)
    except TypeError:
        return ("id", id(v))                  # unknown unhashable value: equal only to itself
    return (type(v).__name__, v)              # type first: 1, 1.0 and True stay distinct


def _cse(j: Jaxpr, memo: dict, effects: dict, keys: dict) -> Jaxpr:
    env, seen, eqns = {}, {}, []
    sub = _subst(env)
    for eqn in j.eqns:
        params = _map_subjaxprs(eqn, lambda s: _cse(s, memo, effects, keys), memo)
        new = Eqn(eqn.primitive, map(sub, eqn.inputs), eqn.outvars, params, eqn.source)
        if eqn.outvars and not _barrier(eqn.primitive) and not _effectful(new, effects):
            key = (eqn.primitive.name, tuple(map(_atom_key, new.inputs)),
                   tuple(sorted((k, _param_key(v, keys)) for k, v in params.items())),
                   tuple(v.aval for v in eqn.outvars))
            prev = seen.get(key)
            if prev is not None:
                env.update(zip(eqn.outvars, prev))
                continue
            seen[key] = eqn.outvars
        eqns.append(new)
    return Jaxpr(j.constvars, j.invars, eqns, list(map(sub, j.outvars)))


# ---------------------------------------------------------- constant folding

def fold_constants(jaxpr):
    """Evaluate equations whose inputs are all literals and whose outputs are scalars.

    Uses ``primitive.impl``; the results become literals in later uses. Effectful,
    control-flow and call primitives, non-scalar results and failing impls are
    left alone.

    >>> from jaxpr_ir import parse
    >>> fold_constants(parse("{ lambda ; . let  in (1.0:f64[],) }")).outvars
    [Literal(np.float64(1.0):f64[])]
    """
    j, wrap = _unwrap(jaxpr)
    return wrap(_fold(j, {}, {}))


def _evaluate(eqn, inputs):
    """The folded output literals, or None when this equation cannot be folded."""
    prim = eqn.primitive
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")      # e.g. ComplexWarning from a cast
            res = prim.impl(*[np.asarray(x.val) for x in inputs], **eqn.params)
        outs = list(res) if prim.multiple_results else [res]
        if len(outs) != len(eqn.outvars):
            return None
        lits = []
        for r, v in zip(outs, eqn.outvars):
            a = np.asarray(r)
            if a.shape != ():
                return None
            if a.dtype != v.aval.dtype:
                # e.g. f32 op with a weak f64 literal computed in f64 by numpy
                if not np.can_cast(a.dtype, v.aval.dtype, "same_kind"):
                    return None
                with np.errstate(all="ignore"):
                    a = a.astype(v.aval.dtype)
            lits.append(Literal(a[()], v.aval))
        return lits
    except Exception:   # a rule that cannot run on these values just is not folded
        return None


def _fold(j: Jaxpr, memo: dict, effects: dict) -> Jaxpr:
    env, eqns = {}, []
    sub = _subst(env)
    for eqn in j.eqns:
        prim = eqn.primitive
        inputs = list(map(sub, eqn.inputs))
        if (prim.impl is not None and not _sub_keys(prim) and eqn.outvars
                and not _barrier(prim)
                and all(isinstance(x, Literal) for x in inputs)
                and all(v.aval.shape == () for v in eqn.outvars)
                and not _effectful(eqn, effects)):
            lits = _evaluate(eqn, inputs)
            if lits is not None:
                env.update(zip(eqn.outvars, lits))
                continue
        params = _map_subjaxprs(eqn, lambda s: _fold(s, memo, effects), memo)
        eqns.append(Eqn(prim, inputs, eqn.outvars, params, eqn.source))
    return Jaxpr(j.constvars, j.invars, eqns, list(map(sub, j.outvars)))


# ------------------------------------------------------------------ inlining

def inline_calls(jaxpr):
    """Replace each call-like equation (``primitive.call_param`` set) by its body.

    Bodies are inlined recursively with fresh vars per call site; sub-jaxprs of
    other primitives (cond branches, loop bodies) are inlined in place.

    >>> from jaxpr_ir import parse
    >>> len(inline_calls(parse("{ lambda ; a:f64[]. let  in (a,) }")).eqns)
    0
    """
    j, wrap = _unwrap(jaxpr)
    return wrap(_inline(j, {}, {}))


def _inlinable_body(eqn):
    key = eqn.primitive.call_param
    body = eqn.params.get(key) if key else None
    if not isinstance(body, (Jaxpr, ClosedJaxpr)):
        return None
    b = _unwrap(body)[0]
    # consts would need non-literal values here; a malformed call is left for check()
    if b.constvars or len(b.invars) != len(eqn.inputs) or len(b.outvars) != len(eqn.outvars):
        return None
    return body


def _inline(j: Jaxpr, memo: dict, bodies: dict) -> Jaxpr:
    env, eqns = {}, []
    sub = _subst(env)
    for eqn in j.eqns:
        inputs = list(map(sub, eqn.inputs))
        body = _inlinable_body(eqn)
        if body is None:
            params = _map_subjaxprs(eqn, lambda s: _inline(s, memo, bodies), memo)
            eqns.append(Eqn(eqn.primitive, inputs, eqn.outvars, params, eqn.source))
            continue
        if id(body) not in bodies:   # inline the body's own calls once, however often called
            bodies[id(body)] = (body, _inline(_unwrap(body)[0], memo, bodies))
        b = bodies[id(body)][1]
        benv = dict(zip(b.invars, inputs))
        bsub = _subst(benv)
        for be in b.eqns:
            outs = [Var(v.aval, v.hint) for v in be.outvars]   # fresh per call site
            eqns.append(Eqn(be.primitive, map(bsub, be.inputs), outs, be.params, be.source))
            benv.update(zip(be.outvars, outs))
        env.update(zip(eqn.outvars, map(bsub, b.outvars)))
    return Jaxpr(j.constvars, j.invars, eqns, list(map(sub, j.outvars)))


# ------------------------------------------------------------- barriers

def drop_barriers(jaxpr):
    """Replace each optimisation barrier (and any identity marker a primitive declares
    with ``prevents_cse``) by its operands: the last pass, once nothing merges
    equations any more, so backends never see one. A barrier must be an identity
    with one output per operand.

    >>> from jaxpr_ir import parse
    >>> len(drop_barriers(parse("{ lambda ; a:f64[]. let  in (a,) }")).eqns)
    0
    """
    j, wrap = _unwrap(jaxpr)
    return wrap(_drop_barriers(j, {}))


def _drop_barriers(j: Jaxpr, memo: dict) -> Jaxpr:
    env, eqns = {}, []
    sub = _subst(env)
    for eqn in j.eqns:
        inputs = list(map(sub, eqn.inputs))
        if _barrier(eqn.primitive):
            if len(inputs) != len(eqn.outvars):
                raise ValueError(f"drop_barriers: {eqn.primitive.name} has {len(inputs)} "
                                 f"operands but {len(eqn.outvars)} results")
            env.update(zip(eqn.outvars, inputs))
            continue
        params = _map_subjaxprs(eqn, lambda s: _drop_barriers(s, memo), memo)
        eqns.append(Eqn(eqn.primitive, inputs, eqn.outvars, params, eqn.source))
    return Jaxpr(j.constvars, j.invars, eqns, list(map(sub, j.outvars)))


# the compile pipeline, in order; tools that show each stage (stage dumps) walk it too
PIPELINE = (("inline_calls", inline_calls), ("fold_constants", fold_constants),
            ("cse", cse), ("dce", dce), ("drop_barriers", drop_barriers))


def simplify(jaxpr, observe=None):
    """``drop_barriers(dce(cse(fold_constants(inline_calls(jaxpr)))))``: the passes of
    ``PIPELINE`` in order. ``observe(pass_name, result)``, if given, sees the result of every pass.

    >>> from jaxpr_ir import parse
    >>> print(simplify(parse("{ lambda ; a:f64[]. let  in (a,) }")))
    { lambda ; a:f64[]. let  in (a,) }
    >>> simplify(parse("{ lambda ; a:f64[]. let  in (a,) }"), lambda n, j: print(n))
    inline_calls
    fold_constants
    cse
    dce
    drop_barriers
    { lambda ; a:f64[]. let  in (a,) }
    """
    for name, run_pass in PIPELINE:
        jaxpr = run_pass(jaxpr)
        if observe is not None:
            observe(name, jaxpr)
    return jaxpr
