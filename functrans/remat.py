"""``checkpoint`` (alias ``remat``): trade memory for recomputation in reverse mode.

``checkpoint(f)`` stages ``f`` as one ``checkpoint`` equation (the primitive and its
rules live in ``functrans.primitives.custom``). Its JVP rule computes the primal
outputs, then stages the tangent computation as another ``checkpoint`` whose
operands are only the body's inputs (plus whatever the policy allows to be saved);
in reverse mode that equation lands in the linear jaxpr, so the residuals kept
between the forward and backward pass are those operands, and the body's
intermediates are recomputed while transposing.

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
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from jaxpr_ir import ClosedJaxpr, Jaxpr, Var, dtype_kind
from jaxpr_ir.passes import cse
from . import tracing
from .api_util import abstract_and_concrete, as_array, flatten_fun
from .primitives.custom import CHECKPOINT_POLICIES, checkpoint_p, hoist_many, name_p
from .tracing import trace_to_jaxpr
from .transforms.partial_eval import linearize_fun
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["checkpoint", "remat", "checkpoint_policies", "checkpoint_name", "Recompute",
           "Saveable", "Offloadable",
           "saved_residuals", "print_saved_residuals"]


# --------------------------------------------------------------------------- policies

def nothing_saveable(prim, *avals, **params):
    """Save nothing: every intermediate is recomputed in the backward pass.

    >>> import jaxpr_ir
    >>> nothing_saveable(jaxpr_ir.primitives["dot_general"])
    False
    """
    return False


def everything_saveable(prim, *avals, **params):
    """Save every intermediate (checkpoint then changes nothing).

    >>> import jaxpr_ir
    >>> everything_saveable(jaxpr_ir.primitives["sin"])
    True
    """
    return True


def dots_saveable(prim, *avals, **params):
    """Save the outputs of matrix products (``dot_general``); recompute the rest.

    >>> import jaxpr_ir
    >>> dot, sin = jaxpr_ir.primitives["dot_general"], jaxpr_ir.primitives["sin"]
    >>> dots_saveable(dot), dots_saveable(sin)
    (True, False)
    """
    return prim.name == "dot_general"


def dots_with_no_batch_dims_saveable(prim, *avals, **params):
    """Save ``dot_general`` outputs whose product has no batch dimensions.

    >>> import jaxpr_ir
    >>> dot = jaxpr_ir.primitives["dot_general"]
    >>> dots_with_no_batch_dims_saveable(dot, dimension_numbers=(((1,), (0,)), ((), ())))
    True
    >>> dots_with_no_batch_dims_saveable(dot, dimension_numbers=(((2,), (1,)), ((0,), (0,))))
    False
    """
    if prim.name != "dot_general":
        return False
    dn = params.get("dimension_numbers")
    try:
        (_, _), (lb, rb) = dn
        return not lb and not rb
    except (TypeError, ValueError):
        return False


def checkpoint_name(x: Any, name: str) -> Any:
    """``x`` unchanged, its value named ``name`` for the policies
    ``save_only_these_names`` and ``save_any_names_but_these`` (a pytree is named
    leafwise). Outside ``checkpoint`` and every transform it does nothing.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> pol = ft.checkpoint_policies.save_only_these_names("s")
    >>> f = ft.checkpoint(lambda x: fnp.sin(ft.checkpoint_name(fnp.sin(x), "s")), policy=pol)
    >>> round(float(ft.grad(f)(0.5)), 6)
    0.778644
    """
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: name must be a str, got {type(name).__name__}")
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [name_p.bind(v, name=name)
                                 if isinstance(v, tracing.Tracer) else v for v in leaves])


def save_only_these_names(*names: str) -> Callable[..., bool]:
    """A policy saving the values named (``checkpoint_name``) with one of ``names``.

    >>> import jaxpr_ir
    >>> pol = save_only_these_names("a")
    >>> pol(jaxpr_ir.primitives["name"], name="a"), pol(jaxpr_ir.primitives["name"], name="b")
    (True, False)
    """
    keep = frozenset(names)

    def save_only_these_names(prim, *avals, **params):
        return prim.name == "name" and params.get("name") in keep
    return save_only_these_names


def save_any_names_but_these(*names: str) -> Callable[..., bool]:
    """A policy saving every named value (``checkpoint_name``) except those in ``names``.

    >>> import jaxpr_ir
    >>> pol = save_any_names_but_these("a")
    >>> pol(jaxpr_ir.primitives["name"], name="a"), pol(jaxpr_ir.primitives["name"], name="b")
    (False, True)
    """
    drop = frozenset(names)

    def save_any_names_but_these(prim, *avals, **params):
        return prim.name == "name" and params.get("name") not in drop
    return save_any_names_but_these


def save_from_both_policies(left: Callable[..., bool], right: Callable[..., bool]
                            ) -> Callable[..., bool]:
    """A policy saving what either ``left`` or ``right`` saves.

    >>> import jaxpr_ir
    >>> pol = save_from_both_policies(dots_saveable, save_only_these_names("a"))
    >>> pol(jaxpr_ir.primitives["dot_general"]), pol(jaxpr_ir.primitives["sin"])
    (True, False)
    """
    def save_from_both_policies(prim, *avals, **params):
        return bool(left(prim, *avals, **params) or right(prim, *avals, **params))
    return save_from_both_policies


class _Decision:
    """A policy's answer other than a bool (JAX's ``Recompute`` and ``Saveable``): read
    as the bool it stands for."""
    __slots__ = ("_name", "_save")

    def __init__(self, name: str, save: bool):
        self._name, self._save = name, save

    def __bool__(self) -> bool:
        return self._save

    def __repr__(self) -> str:
        return self._name


Recompute = _Decision("Recompute", False)
Saveable = _Decision("Saveable", True)


class Offloadable(NamedTuple):
    """JAX's answer "save it in memory kind ``dst`` (moved from ``src``)". functrans has one
    memory space (the host's), so offloading a residual is saving it: true as a bool.

    >>> bool(Offloadable("device", "pinned_host"))
    True
    """
    src: Any
    dst: Any


def offload_dot_with_no_batch_dims(offload_src: Any, offload_dst: Any) -> Callable[..., Any]:
    """JAX's policy offloading the products with no batch dimensions to host memory. One
    memory space here: it saves them (as ``dots_with_no_batch_dims_saveable``).

    >>> import jaxpr_ir
    >>> pol = offload_dot_with_no_batch_dims("device", "pinned_host")
    >>> pol(jaxpr_ir.primitives["dot_general"], dimension_numbers=(((1,), (0,)), ((), ())))
    Offloadable(src='device', dst='pinned_host')
    """
    def offload_dot_with_no_batch_dims(prim, *avals, **params):
        if dots_with_no_batch_dims_saveable(prim, *avals, **params):
            return Offloadable(offload_src, offload_dst)
        return Recompute
    return offload_dot_with_no_batch_dims


def save_and_offload_only_these_names(*, names_which_can_be_saved: Any,
                                      names_which_can_be_offloaded: Any, offload_src: Any,
                                      offload_dst: Any) -> Callable[..., Any]:
    """JAX's policy saving the values named in ``names_which_can_be_saved`` and offloading
    those in ``names_which_can_be_offloaded`` (disjoint); the rest is recomputed. One
    memory space here: the offloaded values are saved.

    >>> import jaxpr_ir
    >>> pol = save_and_offload_only_these_names(names_which_can_be_saved=["a"],
    ...     names_which_can_be_offloaded=["b"], offload_src="device", offload_dst="pinned_host")
    >>> [pol(jaxpr_ir.primitives["name"], name=n) for n in "abc"]
    [Saveable, Offloadable(src='device', dst='pinned_host'), Recompute]
    """
    saved, offloaded = set(names_which_can_be_saved), set(names_which_can_be_offloaded)
    if saved & offloaded:
        raise ValueError(f"The names should be exclusive and should not intersect in "
                         f"`names_which_can_be_saved` and `names_which_can_be_offloaded`. Got "
                         f"names_which_can_be_saved={saved}, names_which_can_be_offloaded="
                         f"{offloaded} and the intersection={saved & offloaded}")

    def save_and_offload_only_these_names(prim, *avals, **params):
        if prim.name == "name" and params.get("name") in saved:
            return Saveable
        if prim.name == "name" and params.get("name") in offloaded:
            return Offloadable(offload_src, offload_dst)
        return Recompute
    return save_and_offload_only_these_names


def save_anything_except_these_names(*names_not_to_save: str) -> Callable[..., bool]:
    """JAX 0.10.2's policy of that name, which saves every value (the names are accepted
    and not consulted: a named value's producer is saved anyway); as
    ``everything_saveable``.

    >>> import jaxpr_ir
    >>> save_anything_except_these_names("a")(jaxpr_ir.primitives["name"], name="a")
    True
    """
    def save_anything_except_these_names(prim, *avals, **params):
        return True
    return save_anything_except_these_names


checkpoint_policies = types.SimpleNamespace(
    nothing_saveable=nothing_saveable,
    everything_saveable=everything_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_and_offload_only_these_names=save_and_offload_only_these_names,
    save_anything_except_these_names=save_anything_except_these_names,
    save_only_these_names=save_only_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_from_both_policies=save_from_both_policies,
)

# params hold the policy's name (a str prints and parses); the rules find the function
# in the primitive's registry
_POLICIES = CHECKPOINT_POLICIES
_POLICIES.update({f.__name__: f for f in (nothing_saveable, everything_saveable, dots_saveable,
                                          dots_with_no_batch_dims_saveable)})
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

def checkpoint(fun: Callable[..., Any] | None = None, *, policy: Any = None,
               prevent_cse: bool = True, static_argnums: int | Sequence[int] = ()) -> Any:
    """Make reverse mode recompute ``fun``'s intermediates instead of saving them.

    Reverse mode normally keeps every intermediate of the forward pass that the
    backward pass needs. Under ``checkpoint`` it keeps only ``fun``'s inputs (and what
    ``policy`` allows) and runs ``fun`` again during the backward pass: less memory,
    more arithmetic. Values and derivatives are unchanged. Outside every transform
    ``fun`` just runs. Usable as ``@checkpoint`` or ``@checkpoint(policy=...)``.

    Args:
      fun: the function; arguments are arrays, scalars or pytrees of them. With ``fun``
        omitted, ``checkpoint`` returns a decorator taking the other arguments.
      policy: which intermediates may be saved after all: None (the default: none, all
        are recomputed), one of ``ft.checkpoint_policies`` (``nothing_saveable``,
        ``everything_saveable``, ``dots_saveable``,
        ``dots_with_no_batch_dims_saveable``) or its name, or a function
        ``(primitive, *in_avals, **params) -> bool`` called per equation of ``fun``.
      prevent_cse: True (the default): under ``jit`` the recomputation is kept apart
        from the forward pass by an optimisation barrier, so that no compile pass (CSE
        above all) merges it back and the memory saving survives compilation. False
        lets the passes merge it (fewer operations, the residuals kept after all);
        values and derivatives are the same either way.
      static_argnums: positions of arguments passed to ``fun`` as Python values, not
        traced: an int or a sequence of ints.

    Returns:
      The function, keeping ``fun``'s ``__name__`` and ``__doc__`` (``functools.wraps``).

    >>> import functrans as ft, functrans.numpy as fnp
    >>> g = ft.grad(ft.checkpoint(lambda x: fnp.sin(x) * x))
    >>> round(float(g(1.0)), 6)
    1.381773
    >>> f = ft.checkpoint(lambda x, n: x ** n, static_argnums=1,
    ...                   policy=ft.checkpoint_policies.dots_saveable)
    >>> float(ft.grad(f)(2.0, 3))
    12.0
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
        jaxpr, consts, _ = trace_to_jaxpr(flat_fun, avals, vals, name=f"checkpoint({name})",
                                          in_sources=flat)
        (body,), hc = hoist_many([ClosedJaxpr(jaxpr, consts)])
        outs = checkpoint_p.bind(*hc, *flat, jaxpr=body, policy=pname, name=name,
                                 prevent_cse=bool(prevent_cse))
        return tree_unflatten(out_tree(), outs)

    return wrapped


remat = checkpoint


# --------------------------------------------------------------------------- reports

class SavedResiduals:
    """The values reverse mode keeps from the forward pass to the backward pass.

    ``entries``: one (shape, dtype, bytes, origin) per distinct saved value, where
    origin is ``argument i`` or the primitive and source line that computed it;
    ``count`` and ``bytes`` are the totals.
    """

    def __init__(self, entries):
        self.entries = entries
        self.count = len(entries)
        self.bytes = sum(e[2] for e in entries)

    def __repr__(self):
        return f"SavedResiduals(count={self.count}, bytes={self.bytes})"

    def __str__(self):
        rows = [(f"{np.dtype(d).name}{list(s)}", f"{b:,}", o) for s, d, b, o in self.entries]
        w0 = max([len("value")] + [len(r[0]) for r in rows])
        w1 = max([len("bytes")] + [len(r[1]) for r in rows])
        lines = [f"{'value':<{w0}}  {'bytes':>{w1}}  saved from"]
        lines += [f"{a:<{w0}}  {b:>{w1}}  {c}" for a, b, c in rows]
        lines.append(f"total: {self.count} values, {self.bytes:,} bytes")
        return "\n".join(lines)


def _origin(jaxpr: Jaxpr, v) -> str:
    """Where ``v`` comes from: an argument, a constant, or the equation defining it
    (looked up inside call-like bodies such as checkpoint's, down to the user's line)."""
    if v in jaxpr.invars:
        return f"argument {jaxpr.invars.index(v)}"
    if v in jaxpr.constvars:
        return "a constant"
    for e in jaxpr.eqns:
        if v in e.outvars:
            body = e.params.get(e.primitive.call_param) if e.primitive.call_param else None
            if body is not None:
                inner = body.jaxpr if isinstance(body, ClosedJaxpr) else body
                w = inner.outvars[e.outvars.index(v)]
                if isinstance(w, Var) and w not in inner.invars:
                    return _origin(inner, w)
            return f"{e.primitive.name} at {e.source or 'an unknown line'}"
    return "a literal"


def saved_residuals(fun: Callable[..., Any], *args: Any) -> SavedResiduals:
    """The residuals reverse mode saves for ``fun`` at ``args`` (differentiating every
    floating leaf), each distinct value once, with shape, dtype, bytes and where it
    was computed. Values computed twice the same way count once (as after jit's CSE).

    >>> import functrans as ft, functrans.numpy as fnp, numpy as np
    >>> r = ft.saved_residuals(ft.checkpoint(lambda x: fnp.sin(fnp.sin(x))), np.ones(3))
    >>> r.count, r.bytes, r.entries[0][3]
    (1, 24, 'argument 0')
    """
    flat, in_tree = tree_flatten(tuple(args))
    flat = [as_array(x) for x in flat]
    mask = [dtype_kind(getattr(x, "dtype", None) or np.result_type(x)) in "fc"
            for x in flat]      # Python floats stay Python floats in as_array
    flat_fun, _ = flatten_fun(lambda *a: fun(*a), in_tree)

    def stage(*xs):
        _, lin = linearize_fun(flat_fun, list(xs), mask, name="saved_residuals")
        return list(lin.residuals)

    avals, vals = abstract_and_concrete(flat)
    capture, tracing.CAPTURE_SOURCE = tracing.CAPTURE_SOURCE, True   # name the lines
    try:
        jaxpr, _, _ = trace_to_jaxpr(stage, avals, vals, name="saved_residuals")
    finally:
        tracing.CAPTURE_SOURCE = capture
    # as jit would: a broadcast constant that several recomputations read (tanh's
    # derivative reads a broadcast 1, recorded in the outermost trace) is kept once
    jaxpr = cse(jaxpr)
    entries, seen = [], set()
    for v in jaxpr.outvars:
        if isinstance(v, Var):
            if v in seen:
                continue
            seen.add(v)
        a = v.aval
        nbytes = int(np.prod(a.shape, dtype=np.int64)) * np.dtype(a.dtype).itemsize
        origin = _origin(jaxpr, v) if isinstance(v, Var) else "a literal"
        entries.append((tuple(a.shape), np.dtype(a.dtype), nbytes, origin))
    return SavedResiduals(entries)


def print_saved_residuals(fun: Callable[..., Any], *args: Any) -> None:
    """Print ``saved_residuals(fun, *args)`` as a table (JAX's name for this report).

    >>> import functrans as ft, functrans.numpy as fnp, numpy as np
    >>> ft.print_saved_residuals(ft.checkpoint(lambda x: fnp.sin(fnp.sin(x))), np.ones(3))
    value       bytes  saved from
    float64[3]     24  argument 0
    total: 1 values, 24 bytes
    """
    print(saved_residuals(fun, *args))
