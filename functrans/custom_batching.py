"""User-defined batching rules: ``custom_vmap`` and ``sequential_vmap`` (JAX's
``jax.custom_batching``).

Outside every transform a decorated function just runs. Inside one, it is traced and
bound as one ``custom_vmap_call`` equation (functrans/primitives/custom_vmap.py): under
``vmap`` its rule runs instead of batching the body; ``jit`` inlines the body; ``jvp``
differentiates the body, and, batched, the JVP of the rule. Reverse mode raises, as in
JAX: put a ``custom_vjp`` outside for it.

>>> import functrans as ft, functrans.numpy as fnp
>>> @custom_vmap
... def f(x):
...     return fnp.sin(x)
>>> @f.def_vmap
... def f_rule(axis_size, in_batched, xs):
...     return fnp.cos(xs), in_batched[0]
>>> ft.vmap(f)(fnp.zeros(2)).tolist()
[1.0, 1.0]
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from jaxpr_ir import ClosedJaxpr
from . import tracing
from .api_util import abstract_and_concrete, as_array, flatten_fun
from .lax_scan import map as _lax_map
from .primitives.custom import hoist_many
from .primitives.custom_vmap import custom_vmap_call_p, register_rule
from .tracing import trace_to_jaxpr
from .tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["custom_vmap", "sequential_vmap"]


def _name(f) -> str:
    return getattr(f, "__name__", "<unnamed rule>")


class _FlatRule:
    """The user's rule over flat arguments (the primitive's rule protocol): unflattens
    the arguments and their batching flags, checks the output trees as JAX does."""

    def __init__(self, rule: Callable[..., Any], in_tree: Any, out_tree: Any):
        self.rule, self.in_tree, self.out_tree = rule, in_tree, out_tree
        self.name = _name(rule)

    def __repr__(self):
        return self.name

    def __call__(self, axis_size, in_batched, *args):
        tree_args = tree_unflatten(self.in_tree, list(args))
        flags = list(tree_unflatten(self.in_tree, [bool(b) for b in in_batched]))
        out, out_batched = self.rule(axis_size, flags, *tree_args)
        outs, t1 = tree_flatten(out)
        obs, t2 = tree_flatten(out_batched)
        if t1 != t2:
            raise ValueError(
                "structure of output value and output batching specification returned by "
                f"custom vmap rule ({self.name}) do not match.\nOutput values: {t1}\n"
                f"Batching spec: {t2}")
        if t1 != self.out_tree:
            raise ValueError(
                f"structure of output returned by custom vmap rule ({self.name}) does not "
                "match that of original custom-vmapped function.\nOriginal output: "
                f"{self.out_tree}\nRule output: {t1}")
        return outs, [bool(b) for b in obs]


def _resolve(fun, name, args, kwargs) -> tuple:
    """The arguments as positional ones, with JAX's error when they cannot be."""
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):      # a builtin or the like: passed as given
        return tuple(args)
    try:
        ba = sig.bind(*args, **kwargs)
        if ba.kwargs:
            raise TypeError("The following keyword arguments could not be resolved to "
                            f"positions: {', '.join(sorted(ba.kwargs))}")
    except TypeError as e:
        raise TypeError(
            f"The input arguments to the custom_vmap-decorated function {name} could not "
            f"be resolved to positional-only arguments. Binding failed with the error:\n{e}"
        ) from None
    return tuple(ba.args)


class custom_vmap:
    """Give a function its own ``vmap`` rule (JAX's ``jax.custom_batching.custom_vmap``).

    The rule, set with ``def_vmap``, is called as ``rule(axis_size, in_batched, *args)``
    when the function is batched: ``in_batched`` is a list with one pytree of bools per
    argument, batched arguments have the batch axis first; it returns
    ``(out, out_batched)`` with ``out_batched`` a pytree of bools of ``out``'s structure.
    Unbatched, the function itself runs (also under ``jit``); ``jvp`` differentiates the
    function and, batched, the rule; reverse mode raises ``ValueError`` (wrap it in a
    ``custom_vjp`` for that).

    >>> import functrans as ft, functrans.numpy as fnp
    >>> @custom_vmap
    ... def add(x, y):
    ...     return x + y
    >>> @add.def_vmap
    ... def add_rule(axis_size, in_batched, xs, ys):
    ...     return xs * ys, True        # batched: multiply instead (to show the rule ran)
    >>> float(add(2.0, 3.0)), ft.vmap(add)(fnp.arange(3.0), fnp.arange(3.0)).tolist()
    (5.0, [0.0, 1.0, 4.0])
    """

    # the state is underscored (read through properties, JAX's names): jit's
    # functools.update_wrapper copies a wrapped object's __dict__, and a plain ``fun``
    # would replace jit's own
    def __init__(self, fun: Callable[..., Any]) -> None:
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._vmap_rule = None

    fun = property(lambda self: self._fun, doc="The function, undecorated.")
    vmap_rule = property(lambda self: self._vmap_rule, doc="The rule set by ``def_vmap``.")

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def __getattr__(self, name: str) -> Any:
        # JAX's forward_attr: attributes of the wrapped function (a custom_vjp's defvjp
        # on a custom_vjp wrapped in custom_vmap)
        if name.startswith("__") or name in ("_fun", "_vmap_rule"):
            raise AttributeError(name)
        return getattr(self._fun, name)

    def __repr__(self):
        return f"<custom_vmap({_name(self._fun)})>"

    def def_vmap(self, vmap_rule: Callable[..., tuple[Any, Any]]) -> Callable[..., tuple[Any, Any]]:
        """Set the vmap rule ``vmap_rule(axis_size, in_batched, *args) -> (out,
        out_batched)``; returns it unchanged (so it can decorate).

        >>> f = custom_vmap(lambda x: x)
        >>> rule = f.def_vmap(lambda n, b, xs: (xs, b[0]))
        >>> f.vmap_rule is rule
        True
        """
        self._vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = _name(self._fun)
        args = _resolve(self._fun, name, args, kwargs)
        if self._vmap_rule is None:
            raise AttributeError(
                f"No batching rule defined for custom_vmap function {name} using def_vmap.")
        if not tracing.trace_depth():
            return self._fun(*args)           # no transform active: nothing to batch
        flat, in_tree = tree_flatten(tuple(args))
        flat = [as_array(x) for x in flat]
        flat_fun, out_tree = flatten_fun(self._fun, in_tree)
        avals, vals = abstract_and_concrete(flat)
        j, consts, _ = trace_to_jaxpr(flat_fun, avals, vals, name=f"custom_vmap({name})")
        (body,), consts = hoist_many([ClosedJaxpr(j, consts)])
        otree = out_tree()
        outs = custom_vmap_call_p.bind(*consts, *flat, call_jaxpr=body,
                                       num_consts=len(consts),
                                       rule=register_rule(_FlatRule(self._vmap_rule, in_tree, otree),
                                                          (self._vmap_rule, in_tree, otree)),
                                       name=name)
        return tree_unflatten(otree, outs)


def sequential_vmap(f: Callable[..., Any]) -> custom_vmap:
    """``f`` as a ``custom_vmap`` whose rule loops: batched, it runs ``f`` once per
    example with ``lax.map`` (for functions with no batched form, such as host code),
    unbatched arguments passed to every step as they are (JAX's
    ``jax.custom_batching.sequential_vmap``).

    >>> import functrans as ft, functrans.numpy as fnp
    >>> g = sequential_vmap(lambda x, y: fnp.sum(x) * y)
    >>> ft.vmap(g, in_axes=(0, None))(fnp.ones((3, 2)), 2.0).tolist()
    [4.0, 4.0, 4.0]
    """
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        mapped = tree_map(lambda b, x: x if b else None, in_batched, list(args))
        fixed = tree_map(lambda b, x: None if b else x, in_batched, list(args))

        def step(xs):
            return f(*tree_map(lambda b, m, c: m if b else c, in_batched, xs, fixed))

        out = _lax_map(step, mapped)
        return out, tree_map(lambda _: True, out)

    return f

