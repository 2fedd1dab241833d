"""Shapes without data and the traced stage of a jitted function: ``ShapeDtypeStruct``,
``eval_shape`` and ``Traced`` (what ``jit(f).trace(*args)`` returns, as JAX's
``jax.stages.Traced``).

>>> import functrans as ft
>>> t = ft.jit(lambda x: x.sum(0)).trace(ft.numpy.ones((3, 4)))
>>> t.out_info
ShapeDtypeStruct(shape=(4,), dtype=float64)
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxpr_ir import ShapedArray
from .api_util import as_array, flatten_fun
from .tracing import Tracer, get_aval, trace_to_jaxpr
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["ShapeDtypeStruct", "eval_shape", "Traced"]


class ShapeDtypeStruct:
    """Shape and dtype of an array, without data (what ``eval_shape`` returns, and what
    it accepts in place of an argument).

    >>> import functrans as ft
    >>> s = ft.ShapeDtypeStruct((2, 3), "float32")
    >>> s, s.ndim, s.size
    (ShapeDtypeStruct(shape=(2, 3), dtype=float32), 2, 6)
    """
    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape: Sequence[int], dtype: Any, weak_type: bool = False) -> None:
        if dtype is None:    # np.dtype(None) would be float64 silently; JAX raises too
            raise ValueError("ShapeDtypeStruct: dtype must be specified")
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape))

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def __repr__(self):
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype})"

    @classmethod
    def like(cls, x: Any) -> "ShapeDtypeStruct":
        """The shape and dtype of ``x`` (an array, a scalar, a tracer), as JAX's
        ``ShapeDtypeStruct.like``.

        >>> import functrans as ft, numpy as np
        >>> ft.ShapeDtypeStruct.like(np.zeros((2, 1), np.float32))
        ShapeDtypeStruct(shape=(2, 1), dtype=float32)
        """
        a = get_aval(x if isinstance(x, Tracer) else as_array(x))
        return cls(a.shape, a.dtype, a.weak_type)


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Output shapes and dtypes of ``fun(*args)``, computed without running it.

    ``args``, ``kwargs``: ``fun``'s positional and keyword arguments: arrays, scalars,
    anything with ``.shape`` and ``.dtype`` (a ``ShapeDtypeStruct``), or pytrees of them.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> ft.eval_shape(lambda x: x.sum(0), ft.ShapeDtypeStruct((3, 4), "float32"))
    ShapeDtypeStruct(shape=(4,), dtype=float32)
    """
    flat, in_tree = tree_flatten((args, kwargs))
    avals = [abstractify(x) for x in flat]
    flat_fun, out_tree = flatten_fun(lambda a, k: fun(*a, **k), in_tree)
    jaxpr, _, _ = trace_to_jaxpr(flat_fun, avals, None, name="eval_shape")
    return tree_unflatten(out_tree(), [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type)
                                       for a in jaxpr.out_avals])


def abstractify(x: Any) -> ShapedArray:
    """The type of an argument leaf: of anything with ``.shape`` and ``.dtype`` that is
    not an array (a ``ShapeDtypeStruct``, JAX's duck typing), else of the array it makes.

    >>> abstractify(ShapeDtypeStruct((2,), "float32"))
    ShapedArray(f32[2])
    """
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (np.ndarray, Tracer)):
        return ShapedArray(tuple(x.shape), np.dtype(x.dtype), getattr(x, "weak_type", False))
    return get_aval(as_array(x))


class Traced:
    """The traced stage of ``jit(f)`` for some arguments: ``jaxpr`` (the jaxpr as
    traced, before optimisation), ``out_info`` (the outputs' ``ShapeDtypeStruct``
    pytree), ``fun_name`` and ``lower()`` (the ``Lowered`` stage, ``.compile()``-able)."""

    def __init__(self, lowered: Any, fun_name: str) -> None:
        self._lowered = lowered
        self.jaxpr = lowered.traced
        self.fun_name = fun_name
        self.out_tree = lowered.out_tree
        self.out_avals = list(self.jaxpr.out_avals)
        self.out_info = tree_unflatten(self.out_tree, [
            ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in self.out_avals])

    def lower(self) -> Any:
        return self._lowered
