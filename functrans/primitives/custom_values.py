"""The values custom derivative rules meet and return (``jax.custom_derivatives``'
names): ``SymbolicZero`` (a zero tangent or cotangent) and ``CustomVJPPrimal`` (a fwd
argument under ``symbolic_zeros=True``), with their helpers, and the checks of what a
rule returns (``conform``, ``bwd_cotangent_leaves``). ``functrans.custom_rules`` uses them.

>>> zero_from_primal((1.0, 2.0))[1].tolist()
0.0
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..api_util import as_array, key_tangent_words
from ..tracing import Tracer, get_aval
from ..tree_util import tree_flatten, tree_leaves, tree_map, tree_unflatten
from .base import tangent_aval
from .basic import convert_element_type_p

__all__ = ["SymbolicZero", "zero_from_primal", "CustomVJPPrimal",
           "custom_vjp_primal_tree_values", "zero_leaf", "conform", "inexact",
           "bwd_cotangent_leaves"]


class SymbolicZero:
    """A zero tangent or cotangent standing for an unperturbed value, as JAX's
    ``jax.custom_derivatives.SymbolicZero``: it has the tangent's ``aval``, ``shape`` and
    ``dtype``. functrans traces a rule once for every zero pattern, so with
    ``symbolic_zeros=True`` rules are given arrays (zeros where JAX would give this
    object: the same numbers); a rule may still return one for a zero output.

    >>> import numpy as np
    >>> SymbolicZero.from_primal_value(np.ones(2, np.float32)).shape
    (2,)
    """

    def __init__(self, aval: Any) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return "SymbolicZero"

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))

    @staticmethod
    def from_primal_value(val: Any) -> "SymbolicZero":
        """The symbolic zero tangent of primal ``val``."""
        return SymbolicZero(tangent_aval(get_aval(val)))


def zero_from_primal(val: Any, symbolic_zeros: bool = False) -> Any:
    """Zero tangents for the pytree ``val``: SymbolicZero leaves with ``symbolic_zeros``,
    else zero arrays of the tangent dtype.

    >>> zero_from_primal({"a": 1.0})["a"].tolist()
    0.0
    """
    def f(x):
        z = SymbolicZero.from_primal_value(x)
        return z if symbolic_zeros else np.zeros(z.shape, z.dtype)
    return tree_map(f, val)


class CustomVJPPrimal:
    """A primal leaf given to a ``custom_vjp`` fwd rule defined with
    ``symbolic_zeros=True``: ``value`` and ``perturbed``. functrans does not track
    which inputs are perturbed, so ``perturbed`` is always True (the conservative
    answer: the rule computes every cotangent, with the same numbers).

    >>> CustomVJPPrimal(1.0, True).value
    1.0
    """

    def __init__(self, value: Any, perturbed: bool) -> None:
        self.value, self.perturbed = value, perturbed

    def __repr__(self) -> str:
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


def custom_vjp_primal_tree_values(tree: Any) -> Any:
    """The values of a tree of CustomVJPPrimal leaves (a symbolic-zeros fwd's arguments).

    >>> custom_vjp_primal_tree_values((CustomVJPPrimal(2.0, True),))
    (2.0,)
    """
    def value(leaf):
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value
    return tree_map(value, tree, is_leaf=lambda x: type(x) is CustomVJPPrimal)


def zero_leaf(x) -> bool:
    return x is None or isinstance(x, SymbolicZero)


def conform(kind, name, what, x, want):
    """Check a rule's output leaf against the type it must have; cast concrete dtypes."""
    a = get_aval(x)
    if a.shape != want.shape:
        raise TypeError(f"{kind} rule of '{name}': {what} has shape {a.shape} but must have "
                        f"shape {want.shape} (type {want.str_short()})")
    if a.dtype != want.dtype:
        # a concrete value is cast, but never across kinds that lose it (complex to real
        # dropped the imaginary part, float to int truncated)
        if isinstance(x, Tracer) or not np.can_cast(a.dtype, want.dtype, "same_kind"):
            raise TypeError(f"{kind} rule of '{name}': {what} has dtype {a.dtype} but must "
                            f"have dtype {want.dtype}")
        x = np.asarray(x, dtype=want.dtype)
    return x


def inexact(aval) -> bool:
    return np.dtype(aval.dtype).kind in "fc" or str(aval.dtype) == "bfloat16"


def bwd_cotangent_leaves(name, s, avals, cts):
    """The flat cotangents of the differentiable arguments from bwd's tuple ``cts``, as
    JAX takes them: None (a whole argument or a leaf) is zero; an integer, bool or key
    argument's cotangent is zero whatever bwd gives (float0, None, a value); an inexact
    one must have the argument's shape (else JAX's ValueError, naming the argument) and
    is cast to its dtype from another float (bfloat16 primal, float32 cotangent) or an
    integer, never from complex to real (the imaginary part would be dropped)."""
    leaves, it = [], iter(avals)
    for k, (c, tree) in enumerate(zip(cts, s.arg_trees)):
        want = [next(it) for _ in range(tree.num_leaves)]
        arg = f"argument {s.diff_idx[k]} of '{name}'"
        if c is None:
            leaves += [np.zeros(a.shape, a.dtype) for a in want]
            continue
        c = key_tangent_words(s.args[s.diff_idx[k]], c)   # a key's float0: its words'
        cl = _leaves_up_to(c, tree)
        if cl is None:
            raise TypeError(
                "Custom VJP bwd rule must produce an output with the same container (pytree) "
                f"structure as the args tuple of the primal function: the cotangent for {arg} "
                f"has structure {tree_flatten(c, is_leaf=zero_leaf)[1]} but the argument has "
                f"structure {tree}")
        for j, (x, a) in enumerate(zip(cl, want)):
            got = x.aval if isinstance(x, SymbolicZero) else None if x is None else \
                get_aval(as_array(x)) if inexact(a) else None
            if got is not None and got.shape != a.shape or isinstance(x, SymbolicZero) and (
                    np.dtype(got.dtype) != np.dtype(tangent_aval(a).dtype)):
                raise ValueError(
                    "Custom VJP bwd rule must produce an output with the same type as the "
                    f"args tuple of the primal function, but for {arg} (leaf {j}) the bwd "
                    f"rule produced {'a SymbolicZero of ' * isinstance(x, SymbolicZero)}type "
                    f"{got.str_short()} where the input has type {a.str_short()}")
            if zero_leaf(x) or not inexact(a):
                leaves.append(np.zeros(a.shape, a.dtype))
                continue
            x = as_array(x)
            if got.dtype != a.dtype and (inexact(got) or np.dtype(got.dtype).kind in "biu") \
                    and not (np.dtype(got.dtype).kind == "c" and np.dtype(a.dtype).kind != "c"):
                x = convert_element_type_p.bind(x, new_dtype=np.dtype(a.dtype))
            leaves.append(conform("custom_vjp bwd", name, f"cotangent for {arg} (leaf {j})",
                                   x, tangent_aval(a)))
    return leaves


def _leaves_up_to(c, tree):
    """The cotangent of each leaf of an argument of structure ``tree`` from bwd's ``c``,
    whose structure is ``tree``'s with None anywhere for a zero subtree (JAX's prefix
    rule: ``(ct, (None, None))`` for ``(x, (y, None))``); None if it does not fit."""
    out = [None] * tree.num_leaves

    def put(x, where):
        for i in tree_leaves(where):
            out[i] = x
        return x
    try:
        tree_map(put, c, tree_unflatten(tree, list(range(tree.num_leaves))),
                 is_leaf=lambda x: x is None)
    except (TypeError, ValueError):
        return None
    return out
