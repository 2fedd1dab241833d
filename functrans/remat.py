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
from typing import Any, Callable, Sequence

from jaxpr_ir import ClosedJaxpr
from . import tracing
from .api_util import abstract_and_concrete, as_array, flatten_fun
from .primitives.custom import CHECKPOINT_POLICIES, checkpoint_p, hoist_many
from .tracing import trace_to_jaxpr
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["checkpoint", "remat", "checkpoint_policies"]


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


checkpoint_policies = types.SimpleNamespace(
    nothing_saveable=nothing_saveable,
    everything_saveable=everything_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
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
      prevent_cse: accepted for compatibility with JAX and ignored (it never changes
        values or derivatives).
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
        jaxpr, consts, _ = trace_to_jaxpr(flat_fun, avals, vals, name=f"checkpoint({name})")
        (body,), hc = hoist_many([ClosedJaxpr(jaxpr, consts)])
        outs = checkpoint_p.bind(*hc, *flat, jaxpr=body, policy=pname, name=name)
        return tree_unflatten(out_tree(), outs)

    return wrapped


remat = checkpoint
