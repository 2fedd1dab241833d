"""Structured control flow: ``cond``, ``switch``, ``while_loop``, ``fori_loop``, ``scan``
and ``map`` (re-exported by ``functrans.lax``).

Each traces the user's Python functions once, on abstract values, into
const-free sub-jaxprs (closed-over values become explicit operands) and binds
one primitive (``cond``, ``while`` or ``scan``; see ``control_flow_cond`` and
``control_flow_loops`` for the primitives and their rules). The primitive is
bound even when every value is concrete, so the program is the same under
every transform; eagerly its implementation loops in Python at once, or, for a loop
long enough, runs as one compiled call cached under the loop's structure (see
``control_flow_eager``).

>>> from functrans import lax
>>> float(lax.fori_loop(0, 5, lambda i, x: x + i, 0.0))
10.0
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxpr_ir import ClosedJaxpr, Jaxpr, ShapedArray, dtype_kind
from ..api_util import as_array
from ..shard_map_specs import check_carry_typing
from ..tracing import Tracer, get_aval
from ..tree_util import tree_flatten, tree_unflatten
from .control_flow_common import hoist, join_branch_consts, trace_closed
from .control_flow_cond import clamp_index, cond_p
from .control_flow_loops import scan_p, while_p
from .elementwise import add, convert_element_type, ge, lt, ne, select_n
from .reductions import reduce_max
from .structural import broadcast_in_dim
from ..typing import ArrayLike

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan"]


# --------------------------------------------------------------------------- helpers

def _leaf_paths(treedef, prefix=""):
    """Printable paths of a pytree's leaves, e.g. ``[1]['w']``."""
    if treedef.child_defs is None:
        return [prefix]
    if treedef.node_type is dict:
        keys = [f"[{k!r}]" for k in treedef.aux]
    else:
        keys = [f"[{i}]" for i in range(len(treedef.child_defs))]
    out = []
    for k, c in zip(keys, treedef.child_defs):
        out += _leaf_paths(c, prefix + k)
    return out


def _flatten_operands(tree, what):
    leaves, td = tree_flatten(tree)
    out = []
    for p, x in zip(_leaf_paths(td), leaves):
        try:
            out.append(as_array(x))
        except TypeError:
            raise TypeError(f"{what}{p} of type {type(x).__name__} is not an array: "
                            f"{x!r:.60}") from None
    return out, td


def _cast(x, dtype):
    if isinstance(x, (bool, int, float, complex)):
        return np.asarray(x, dtype)
    return convert_element_type(x, dtype)


def _trace_fun(fun, in_tree, in_avals, name, casts=None, branch=False, sources=None):
    """Trace ``fun`` (taking the pytree ``in_tree``) on abstract leaves.

    ``casts`` maps an output leaf index to a dtype it is converted to (weak-typed
    outputs adopting the type they must have). ``branch``: a cond/switch branch, which
    stages what it computes from closed-over values (it runs only when taken, as JAX's).
    ``sources``: the operand leaves (a branch's inputs are them, ``tracing.Trace.sources``).
    Returns (closed, out_tree).
    """
    box = {}

    def flat(*leaves):
        out = fun(*tree_unflatten(in_tree, leaves))
        outs, box["tree"] = _flatten_operands(out, f"the output of {name}")
        if casts:
            outs = [_cast(x, casts[i]) if i in casts else x for i, x in enumerate(outs)]
        return outs

    closed = trace_closed(flat, in_avals, name, stages_closures=branch, in_sources=sources)
    return closed, box["tree"]


def _type_str(a):
    return a.str_short()


def _check_fun(f, what):
    if not callable(f):
        raise TypeError(f"{what} must be callable, got {type(f).__name__}")


_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype


# --------------------------------------------------------------------------- cond / switch

def _trace_branches(funs, names, operands, what):
    """Trace every branch on the operands; outputs must agree in structure and types
    (a weakly typed output adopts the other branches' dtype)."""
    leaves, td = _flatten_operands(tuple(operands), f"{what} operand ")
    in_avals = [get_aval(x) for x in leaves]
    traced = [_trace_fun(f, td, in_avals, n, branch=True, sources=leaves)
              for f, n in zip(funs, names)]
    tree0 = traced[0][1]
    for (c, t), n in zip(traced[1:], names[1:]):
        if t != tree0:
            raise TypeError(f"{what}: {names[0]} and {n} must return the same structure, got "
                            f"{tree0} and {t}")
    paths = _leaf_paths(tree0)
    n_out = len(paths)
    casts = [dict() for _ in funs]
    for i in range(n_out):
        avs = [c.out_avals[i] for c, _ in traced]
        strong = [a for a in avs if not a.weak_type]
        # weakly typed outputs only ever promote (int -> float), never truncate (1.5 -> 1)
        target = strong[0] if strong else max(avs, key=lambda a: _KIND_RANK[dtype_kind(a.dtype)])
        for k, a in enumerate(avs):
            if _same(a, target):
                continue
            if a.weak_type and a.shape == target.shape and \
                    _KIND_RANK[dtype_kind(a.dtype)] <= _KIND_RANK[dtype_kind(target.dtype)]:
                casts[k][i] = target.dtype
                continue
            j = next(m for m, b in enumerate(avs) if b is target)
            raise TypeError(f"{what}: output{paths[i] or ''} of {names[k]} has type "
                            f"{_type_str(a)} but {names[j]} returns {_type_str(target)}; "
                            "every branch must return the same shapes and dtypes")
    closeds = []
    for k, ((c, _), f, n) in enumerate(zip(traced, funs, names)):
        closeds.append(_trace_fun(f, td, in_avals, n, casts[k], branch=True)[0]
                       if casts[k] else c)
    branches, consts = join_branch_consts(closeds)
    return leaves, tuple(branches), consts, tree0


_NO_OPERAND = object()


def cond(pred: ArrayLike, true_fun: Callable[..., Any], false_fun: Callable[..., Any],
         *operands: Any, operand: Any = _NO_OPERAND) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, as one staged branch.

    ``pred`` is a boolean scalar (a number: true where nonzero, as JAX). Both branches are
    traced; their outputs must agree in structure, shapes and dtypes. ``operand=x`` (JAX's
    older spelling) is the one operand ``x``.

    >>> from functrans import lax
    >>> float(lax.cond(True, lambda x: x + 1.0, lambda x: x - 1.0, 2.0))
    3.0
    >>> float(lax.cond(False, lambda _: 1.0, lambda _: 2.0, operand=None))
    2.0
    """
    if operand is not _NO_OPERAND:
        if operands:
            raise TypeError("lax.cond: if `operand` is passed, positional `operands` should "
                            "not be passed")
        operands = (operand,)
    _check_fun(true_fun, "lax.cond: true_fun")
    _check_fun(false_fun, "lax.cond: false_fun")
    pred = as_array(pred)
    pa = get_aval(pred)
    if pa.shape != ():
        raise TypeError(f"lax.cond: the predicate must be a scalar, got {_type_str(pa)}")
    if dtype_kind(pa.dtype) in "iuf":     # a number is true where nonzero, as JAX's pred != 0
        pred = ne(pred, np.zeros((), pa.dtype))
    elif pa.dtype != np.bool_:
        raise TypeError(f"lax.cond: the predicate must be boolean or a real number, got "
                        f"{_type_str(pa)}")
    leaves, branches, consts, out_tree = _trace_branches(
        [false_fun, true_fun], ["false_fun", "true_fun"], operands, "lax.cond")
    index = _cast(pred, np.int32)
    outs = cond_p.bind(index, *consts, *leaves, branches=branches)
    return tree_unflatten(out_tree, outs)


def switch(index: ArrayLike, branches: Sequence[Callable[..., Any]], *operands: Any,
           operand: Any = _NO_OPERAND) -> Any:
    """``branches[index](*operands)``; the index is clamped to ``[0, len(branches) - 1]``.
    ``operand=x`` (JAX's older spelling, as ``cond``'s) is the one operand ``x``.

    >>> from functrans import lax
    >>> fs = [lambda x: x, lambda x: 2.0 * x, lambda x: 3.0 * x]
    >>> float(lax.switch(7, fs, 1.0)), float(lax.switch(1, fs, operand=1.0))
    (3.0, 2.0)
    """
    if operand is not _NO_OPERAND:
        if operands:
            raise TypeError("lax.switch: if `operand` is passed, positional `operands` should "
                            f"not be passed, got operand={operand!r} and operands={operands!r}")
        operands = (operand,)
    if not isinstance(branches, (list, tuple)) or not branches:
        raise TypeError("lax.switch: branches must be a non-empty sequence of functions, got "
                        f"{type(branches).__name__}")
    for k, f in enumerate(branches):
        _check_fun(f, f"lax.switch: branch {k}")
    index = as_array(index)
    ia = get_aval(index)
    if ia.shape != () or dtype_kind(ia.dtype) not in "iu":
        raise TypeError(f"lax.switch: the index must be an integer scalar, got {_type_str(ia)}")
    names = [f"branch {k}" for k in range(len(branches))]
    leaves, bs, consts, out_tree = _trace_branches(list(branches), names, operands, "lax.switch")
    if not isinstance(index, Tracer):
        # a concrete index: clamp in int64 first so large values cannot wrap in int32
        idx = np.int32(min(max(int(index), 0), len(branches) - 1))
    else:
        idx = clamp_index(_cast(index, np.int32), len(branches))
    outs = cond_p.bind(idx, *consts, *leaves, branches=bs)
    return tree_unflatten(out_tree, outs)


# --------------------------------------------------------------------------- loops

def _trace_carry_fun(fun, in_tree, init_avals, other_avals, carry_of, name, what,
                     carry_paths, carry_first=True, other_sources=None, init=None):
    """Trace a loop body whose carry must keep its type.

    ``carry_of(out_tree) -> (carry out leaf slice, ok)`` locates the carry among
    the output leaves. A weakly typed carry (initial value or output) adopts the
    other side's dtype. ``other_sources``: the values the other inputs stand for (a scan's
    xs: ``tracing.Trace.sources``); a carry is typed as its initial value ``init`` (JAX
    0.10: a carry keeps its type, mesh axes included; ``check_carry_typing``). Returns
    (closed, out_tree, carry avals).
    """
    carry_avals = list(init_avals)
    sources = None
    if other_sources is not None:
        carries = list(init)
        sources = carries + other_sources if carry_first else other_sources + carries
    casts = {}
    for _ in range(3):
        ins = carry_avals + other_avals if carry_first else other_avals + carry_avals
        closed, out_tree = _trace_fun(fun, in_tree, ins, name, casts, sources=sources)
        lo, hi = carry_of(out_tree)
        outs = closed.out_avals[lo:hi]
        changed = False
        for i, (c, o) in enumerate(zip(carry_avals, outs)):
            if _same(c, o):
                continue
            if c.shape == o.shape and o.weak_type and lo + i not in casts and \
                    _KIND_RANK[dtype_kind(o.dtype)] <= _KIND_RANK[dtype_kind(c.dtype)]:
                casts[lo + i] = c.dtype
            elif c.shape == o.shape and c.weak_type:
                carry_avals[i] = ShapedArray(c.shape, o.dtype, o.weak_type)
            else:
                raise TypeError(f"{what}: {name} changes carry element{carry_paths[i]} from "
                                f"type {_type_str(init_avals[i])} to {_type_str(o)}; the loop "
                                "carry must keep its shape and dtype")
            changed = True
        if not changed:
            n_in = len(carry_avals)
            first = 0 if carry_first else len(other_avals)
            check_carry_typing(closed, sources, range(first, first + n_in), range(lo, hi),
                               [f"{what}: {name}'s carry element{p}" for p in carry_paths])
            return closed, out_tree, carry_avals
    raise TypeError(f"{what}: the carry types of {name} do not settle")  # pragma: no cover


def _check_carry_tree(what, name, init_tree, out_tree):
    if out_tree != init_tree:
        raise TypeError(f"{what}: {name} must return a carry of the same structure as the "
                        f"initial value: got {out_tree}, expected {init_tree}")


def while_loop(cond_fun: Callable[..., Any], body_fun: Callable[..., Any],
               init_val: Any) -> Any:
    """``val = init_val; while cond_fun(val): val = body_fun(val)``, as one staged loop.

    Differentiable in forward mode only (use ``scan`` or ``fori_loop`` with
    static bounds for reverse mode).

    >>> from functrans import lax
    >>> int(lax.while_loop(lambda x: x < 10, lambda x: x * 2, 1))
    16
    """
    _check_fun(cond_fun, "lax.while_loop: cond_fun")
    _check_fun(body_fun, "lax.while_loop: body_fun")
    init, init_tree = _flatten_operands(init_val, "lax.while_loop: init_val")
    init_avals = [get_aval(x) for x in init]
    paths = _leaf_paths(init_tree)
    n = len(init)
    in_tree = tree_flatten((init_val,))[1]

    def carry_of(t):
        _check_carry_tree("lax.while_loop", "body_fun", init_tree, t)
        return 0, n

    body, _, carry_avals = _trace_carry_fun(
        body_fun, in_tree, init_avals, [], carry_of, "body_fun", "lax.while_loop", paths,
        other_sources=[], init=init)
    cond_closed, cond_tree = _trace_fun(cond_fun, in_tree, carry_avals, "cond_fun")
    outs = cond_closed.out_avals
    if len(outs) != 1 or outs[0].shape != () or outs[0].dtype != np.bool_:
        got = ", ".join(_type_str(a) for a in outs) or "nothing"
        raise TypeError(f"lax.while_loop: cond_fun must return a boolean scalar, got {got}")
    init = [x if _same(get_aval(x), a) else _cast(x, a.dtype) for x, a in zip(init, carry_avals)]
    cj, c_consts = hoist(cond_closed)
    bj, b_consts = hoist(body)
    cj, bj, fixed = _forward_unchanged_carries(cj, len(c_consts), bj, len(b_consts))
    moving = [x for i, x in enumerate(init) if i not in fixed]
    c_consts = c_consts + [init[i] for i in fixed]
    b_consts = b_consts + [init[i] for i in fixed]
    outs = iter(while_p.bind(*c_consts, *b_consts, *moving, cond_jaxpr=cj, body_jaxpr=bj,
                             cond_nconsts=len(c_consts), body_nconsts=len(b_consts)))
    return tree_unflatten(init_tree, [init[i] if i in fixed else next(outs)
                                      for i in range(n)])


def _forward_unchanged_carries(cj, c_nconsts, bj, b_nconsts):
    """Carries the body returns unchanged become constants of both loops (JAX forwards
    them too): the loop's result for them is the initial value, so reverse mode, which
    refuses to go through a while loop, still differentiates what only passes through
    it. Returns (cond, body, positions of the forwarded carries); all carries unchanged
    (a loop that can only spin or stop at once) are left as they are."""
    body = bj.jaxpr
    carry = body.invars[b_nconsts:]
    fixed = [i for i, v in enumerate(carry) if body.outvars[i] is v]
    if not fixed or len(fixed) == len(carry):
        return cj, bj, []
    keep = [i for i in range(len(carry)) if i not in fixed]

    def moved(j, nconsts, outvars):
        ins = j.invars[nconsts:]
        return ClosedJaxpr(Jaxpr([], j.invars[:nconsts] + [ins[i] for i in fixed] +
                                 [ins[i] for i in keep], j.eqns, outvars), [])
    return (moved(cj.jaxpr, c_nconsts, cj.jaxpr.outvars),
            moved(body, b_nconsts, [body.outvars[i] for i in keep]), fixed)


def _fori_bounds_dtype(lower, upper):
    """JAX's rule for the bounds: one dtype, or two signed integer dtypes of which one is
    weak (a Python int), which takes the other's. Float bounds are allowed."""
    avals = [get_aval(as_array(b)) for b in (lower, upper)]
    for nm, a in zip(("lower", "upper"), avals):
        if a.shape != () or dtype_kind(a.dtype) not in "biuf":
            raise TypeError(f"lax.fori_loop: {nm} must be a real scalar, got {_type_str(a)}")
    (lo, up) = avals
    if lo.dtype == up.dtype:
        return lo.dtype
    if dtype_kind(lo.dtype) == dtype_kind(up.dtype) == "i" and lo.weak_type != up.weak_type:
        return up.dtype if lo.weak_type else lo.dtype
    raise TypeError(f"lax.fori_loop: lower and upper must have equal types, got "
                    f"{lo.dtype} and {up.dtype} (JAX's rule; a Python int adapts to "
                    f"a signed integer bound)")


def fori_loop(lower: ArrayLike, upper: ArrayLike, body_fun: Callable[..., Any],
              init_val: Any, *, unroll: int | bool | None = None) -> Any:
    """``for i in range(lower, upper): val = body_fun(i, val)``.

    With static bounds (Python numbers or concrete arrays) it is a ``scan`` of
    ``int(upper) - int(lower)`` steps, differentiable in both modes, whose counter ``i``
    is a weakly typed integer from ``int(lower)`` (float bounds truncate, as JAX's);
    with traced bounds it is a ``while_loop`` (forward mode only) counting in the
    bounds' dtype, and ``unroll`` must be left at None, False or 1 (JAX's rule).

    >>> from functrans import lax
    >>> float(lax.fori_loop(1, 4, lambda i, x: x * i, 1.0))
    6.0
    >>> float(lax.fori_loop(0.0, 3.0, lambda i, x: x + i, 0.0))
    3.0
    """
    _check_fun(body_fun, "lax.fori_loop: body_fun")
    dt = _fori_bounds_dtype(lower, upper)
    if not isinstance(lower, Tracer) and not isinstance(upper, Tracer):
        lo = int(np.asarray(lower))
        length = max(int(np.asarray(upper)) - lo, 0)

        def step(carry, _):
            i, x = carry
            return (add(i, 1), body_fun(i, x)), None

        u = max(length, 1) if unroll is True else (1 if unroll in (None, False) else int(unroll))
        (_, out), _ = scan(step, (lo, init_val), None, length=length, unroll=u)
        return out
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError(f"lax.fori_loop: unroll={unroll!r} needs static loop bounds; "
                         "these are traced")
    i0, upper = _cast(lower, dt), _cast(upper, dt)

    def cond_fun(c):
        return c[0] < c[1]

    def body(c):
        i, u, x = c
        return add(i, _cast(1, dt)), u, body_fun(i, x)

    return while_loop(cond_fun, body, (i0, upper, init_val))[2]


def scan(f: Callable[..., Any], init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int | bool = 1) -> tuple[Any, Any]:
    """Loop ``f(carry, x) -> (carry, y)`` over the leading axis of ``xs``.

    Returns ``(final carry, stacked ys)``; with ``reverse=True`` it runs from the
    last element to the first (``ys`` keep the order of ``xs``).

    >>> from functrans import lax
    >>> import numpy as np
    >>> c, ys = lax.scan(lambda c, x: (c + x, c), 0.0, np.arange(4.0))
    >>> float(c), ys.tolist()
    (6.0, [0.0, 0.0, 1.0, 3.0])
    """
    _check_fun(f, "lax.scan: f")
    init_leaves, init_tree = _flatten_operands(init, "lax.scan: init")
    xs_leaves, xs_tree = _flatten_operands(xs, "lax.scan: xs")
    x_paths = _leaf_paths(xs_tree)
    lengths = []
    for p, x in zip(x_paths, xs_leaves):
        a = get_aval(x)
        if a.ndim == 0:
            raise TypeError(f"lax.scan: xs{p} is a scalar ({_type_str(a)}); every xs leaf needs "
                            "a leading axis to scan over")
        lengths.append((p, a))
    if lengths and len({a.shape[0] for _, a in lengths}) > 1:
        desc = ", ".join(f"xs{p} has type {_type_str(a)} (length {a.shape[0]})"
                         for p, a in lengths)
        raise TypeError(f"lax.scan: all xs leaves must have the same leading length: {desc}")
    if length is not None:
        if isinstance(length, Tracer) or int(length) != length or length < 0:
            raise TypeError(f"lax.scan: length must be a non-negative Python int, got {length!r}")
        length = int(length)
        if lengths and lengths[0][1].shape[0] != length:
            p, a = lengths[0]
            raise TypeError(f"lax.scan: length={length} but xs{p} has type {_type_str(a)} "
                            f"(length {a.shape[0]})")
    elif lengths:
        length = lengths[0][1].shape[0]
    else:
        raise ValueError("lax.scan: give xs or an explicit length")
    unroll = max(length, 1) if unroll is True else (1 if unroll is False else int(unroll))
    if unroll < 0:
        raise ValueError(f"lax.scan: unroll must be a bool or an int >= 0, got {unroll}")
    unroll = max(unroll, 1)   # 0 means no unrolling, as 1 (JAX)
    init_avals = [get_aval(x) for x in init_leaves]
    x_avals = [get_aval(x) for x in xs_leaves]
    x_avals = [ShapedArray(a.shape[1:], a.dtype, a.weak_type) for a in x_avals]
    in_tree = tree_flatten((init, xs))[1]
    n = len(init_leaves)

    def body(carry, x):
        out = f(carry, x)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError("lax.scan: f must return a pair (carry, y), got "
                            f"{type(out).__name__}")
        return tuple(out)

    def carry_of(t):
        _check_carry_tree("lax.scan", "f", init_tree, t.child_defs[0])
        return 0, n

    closed, out_tree, carry_avals = _trace_carry_fun(
        body, in_tree, init_avals, x_avals, carry_of, "f", "lax.scan", _leaf_paths(init_tree),
        other_sources=list(xs_leaves), init=init_leaves)
    ys_tree = out_tree.child_defs[1]
    init_leaves = [x if _same(get_aval(x), a) else _cast(x, a.dtype)
                   for x, a in zip(init_leaves, carry_avals)]
    bj, consts = hoist(closed)
    ops = [*consts, *init_leaves, *xs_leaves]
    outs = scan_p.bind(*ops, jaxpr=bj, length=length, reverse=bool(reverse),
                       num_consts=len(consts), num_carry=n, linear=(False,) * len(ops),
                       unroll=unroll)
    return tree_unflatten(init_tree, outs[:n]), tree_unflatten(ys_tree, outs[n:])


def repeat_where_hit(operand: ArrayLike, hits: ArrayLike,
                     apply: Callable[[Any], Any]) -> Any:
    """``operand`` with ``apply`` (a map of whole arrays of its shape and dtype) applied
    ``hits[i]`` times at each position ``i``: the rule of ``x.at[idx].apply(func)`` and
    ``lax.scatter_apply``, where a repeated index applies ``func`` again. Concrete hits
    give a Python loop (reverse-differentiable, also under jit); traced ones a while loop.

    >>> import numpy as np
    >>> repeat_where_hit(np.full(3, 2.0), np.array([2, 1, 0]), lambda v: v * v).tolist()
    [16.0, 4.0, 2.0]
    """
    if not isinstance(hits, Tracer):
        hits = np.asarray(hits)
        out = operand
        for k in range(1, int(np.max(hits, initial=0)) + 1):
            out = select_n(ge(hits, np.full(hits.shape, k, hits.dtype)), out, apply(out))
        return out
    shape = tuple(get_aval(hits).shape)

    def body(carry):
        k, v = carry
        k = add(k, np.ones((), k.dtype))
        return k, select_n(ge(hits, broadcast_in_dim(k, shape, ())), v, apply(v))

    most = reduce_max(hits, tuple(range(len(shape)))) if shape else hits
    return while_loop(lambda c: lt(c[0], most), body,
                      (np.zeros((), get_aval(hits).dtype), operand))[1]
