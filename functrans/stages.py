"""Shapes without data and the stages of a jitted function: ``ShapeDtypeStruct``,
``eval_shape``, ``Traced`` (what ``jit(f).trace(*args)`` returns), ``Lowered``
(``jit(f).lower(*args)``) and ``Compiled`` (``.compile()``), as JAX's ``jax.stages``.

>>> import functrans as ft
>>> t = ft.jit(lambda x: x.sum(0)).trace(ft.numpy.ones((3, 4)))
>>> t.out_info
ShapeDtypeStruct(shape=(4,), dtype=float64)
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxpr_ir import ClosedJaxpr, ShapedArray
from jaxpr_ir.passes import simplify
from .api_util import as_array, flatten_fun
from .compiler import compile_closed, temp_bytes
from .cost import jaxpr_cost
from .device import SingleDeviceSharding, host_device
from .primitives.collectives_mesh import plan_traffic
from .tracing import Tracer, get_aval, trace_to_jaxpr, wrap
from .key_array import KeyArray, KeyDtype, is_key
from .tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["ShapeDtypeStruct", "eval_shape", "Traced", "Lowered", "Compiled", "ArgInfo"]


class ShapeDtypeStruct:
    """Shape and dtype of an array, without data (what ``eval_shape`` returns, and what
    it accepts in place of an argument).

    >>> import functrans as ft
    >>> s = ft.ShapeDtypeStruct((2, 3), "float32")
    >>> s, s.ndim, s.size
    (ShapeDtypeStruct(shape=(2, 3), dtype=float32), 2, 6)
    """
    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape: Sequence[int], dtype: Any, weak_type: bool = False, *,
                 sharding: Any = None) -> None:
        if dtype is None:    # np.dtype(None) would be float64 silently; JAX raises too
            raise ValueError("ShapeDtypeStruct: dtype must be specified")
        self.shape = tuple(shape)
        self.dtype = dtype if isinstance(dtype, KeyDtype) else np.dtype(dtype)
        self.weak_type = weak_type
        self.sharding = sharding   # JAX's layout record (a process here is one device)

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
        if isinstance(x, KeyArray):
            return cls(x.shape, x.dtype)
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
    def keys_in(x):     # a struct of typed keys: keys over a struct of their uint32 words
        if isinstance(getattr(x, "dtype", None), KeyDtype) and not isinstance(x, KeyArray):
            return KeyArray(ShapeDtypeStruct(tuple(x.shape) + (2,), np.uint32))
        return x
    args, kwargs = tree_map(keys_in, (args, kwargs))
    flat, in_tree = tree_flatten((args, kwargs))
    avals = [abstractify(x) for x in flat]
    flat_fun, out_tree = flatten_fun(lambda a, k: fun(*a, **k), in_tree)
    jaxpr, _, _ = trace_to_jaxpr(flat_fun, avals, None, name="eval_shape")
    out = tree_unflatten(out_tree(), [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type)
                                      for a in jaxpr.out_avals])
    return tree_map(lambda x: ShapeDtypeStruct(x.shape, x.dtype) if is_key(x) else x, out,
                    is_leaf=is_key)


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
        self.in_avals, self.args_info = lowered.in_avals, lowered.args_info

    def lower(self) -> Any:
        return self._lowered


class ArgInfo:
    """One argument leaf of a lowered function (JAX's ``jax.stages.ArgInfo``): its
    ``shape``, ``dtype`` and whether it is ``donated``; equal when those are."""

    def __init__(self, aval, donated: bool) -> None:
        self.shape, self.dtype, self.donated = aval.shape, aval.dtype, bool(donated)
        self._aval = aval

    def __repr__(self):
        return f"ArgInfo(shape={self.shape}, dtype={self.dtype}, donated={self.donated})"

    def __eq__(self, other):
        return isinstance(other, ArgInfo) and (self.shape, self.dtype, self.donated) == (
            other.shape, other.dtype, other.donated)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.donated))


class Lowered:
    """The result of ``jit(f).lower(*args)``: the optimised jaxpr, ready to compile.

    ``in_tree`` / ``in_avals``: the structure and types of the dynamic arguments
    (``(args, kwargs)``, static ones left out), ``args_info`` / ``out_info`` their
    ``ArgInfo`` / ``ShapeDtypeStruct`` pytrees, ``donate_argnums``.

    >>> import functrans as ft
    >>> lo = ft.jit(lambda x, y: x @ y, donate_argnums=1).lower(ft.numpy.ones((2, 3)),
    ...                                                        ft.numpy.ones((3, 4)))
    >>> lo.out_info, lo.args_info[0][1].donated, lo.donate_argnums
    (ShapeDtypeStruct(shape=(2, 4), dtype=float64), True, (1,))
    """

    def __init__(self, traced: ClosedJaxpr, backend, out_tree, name="fun", in_tree=None,
                 in_avals=(), donated=()):
        self.traced = traced
        self.jaxpr = simplify(traced)
        self.backend = backend
        self.out_tree = out_tree
        self.name = name
        self.in_tree, self._in_avals = in_tree, tuple(in_avals)
        self._donated = tuple(donated) or (False,) * len(self._in_avals)

    @property
    def in_avals(self):
        """The dynamic arguments' types as ``(args, kwargs)``, as JAX's."""
        return tree_unflatten(self.in_tree, list(self._in_avals))

    @property
    def args_info(self):
        return tree_unflatten(self.in_tree, [ArgInfo(a, d) for a, d in
                                             zip(self._in_avals, self._donated)])

    @property
    def donate_argnums(self) -> tuple:
        args = tree_unflatten(self.in_tree, list(self._donated))[0]
        return tuple(i for i, a in enumerate(args) if any(tree_flatten(a)[0]))

    @property
    def out_info(self):
        return tree_unflatten(self.out_tree, [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type)
                                              for a in self.traced.jaxpr.out_avals])

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The optimised jaxpr's text (functrans has no HLO: every ``dialect`` gives it)."""
        return str(self.jaxpr)

    def compiler_ir(self, dialect: str | None = None) -> ClosedJaxpr:
        """The optimised jaxpr, functrans's compiler input (JAX gives an MLIR module)."""
        return self.jaxpr

    def cost_analysis(self) -> dict:
        """The cost model (``functrans.cost``) on the optimised jaxpr, before a backend
        plans it (``compile().cost_analysis()`` sees the plan)."""
        return interpreter_cost(self.jaxpr)

    def compile(self, compiler_options=None):
        # the traced jaxpr goes down the one compile path, so the tools see this compile
        exe = compile_closed(self.traced, self.backend, name=self.name)
        return Compiled(exe, self.jaxpr, self.out_tree, self)


class Compiled:
    """A compiled executable. Call it with the dynamic arguments it was lowered for (static
    ones left out): another pytree structure, shape or array dtype raises ``TypeError``,
    as JAX's; a Python scalar takes the compiled dtype."""

    def __init__(self, exe, closed, out_tree, lowered=None):
        self.exe = exe
        self.jaxpr = closed
        self.out_tree = out_tree
        self._lowered = lowered
        for k in ("in_tree", "_in_avals", "in_avals", "args_info", "out_info",
                  "donate_argnums"):
            setattr(self, k, getattr(lowered, k, None))

    def __call__(self, *args, **kwargs):
        flat, in_tree = tree_flatten((args, kwargs))
        if self.in_tree is not None:
            flat = _checked_arguments(flat, in_tree, self.in_tree, self._in_avals)
        outs = self.exe(*[np.asarray(x) for x in flat])
        return tree_unflatten(self.out_tree, [wrap(o) for o in outs])

    @property
    def input_shardings(self):
        one = SingleDeviceSharding(host_device())
        return tree_unflatten(self.in_tree, [one] * len(self._in_avals))

    @property
    def output_shardings(self):
        return tree_unflatten(self.out_tree, [SingleDeviceSharding(host_device())] *
                              len(self.jaxpr.jaxpr.out_avals))

    def as_text(self) -> str:
        as_text = getattr(self.exe, "as_text", None)
        return as_text() if as_text else str(self.jaxpr)

    def runtime_executable(self) -> Any:
        """The backend's executable this stage calls (JAX gives XLA's)."""
        return self.exe

    def memory_analysis(self) -> "CompiledMemoryStats":
        """The bytes one call reads, writes and allocates, as JAX's ``memory_analysis()``:
        ``argument_size_in_bytes`` / ``output_size_in_bytes`` (the dynamic arguments and
        the outputs) and ``temp_size_in_bytes`` (``cost_analysis()["temp_bytes"]``).

        >>> import functrans as ft, numpy as np
        >>> m = ft.jit(lambda x: (x * 2).sum()).lower(np.ones(4)).compile().memory_analysis()
        >>> m.argument_size_in_bytes, m.output_size_in_bytes
        (32, 8)
        """
        return CompiledMemoryStats(sum(_nbytes(a) for a in self._in_avals),
                                   sum(_nbytes(a) for a in self.jaxpr.jaxpr.out_avals),
                                   temp_bytes(self.exe, self.jaxpr))

    def cost_analysis(self) -> dict:
        """flops, transcendentals and bytes accessed (the one cost model,
        ``functrans.cost``: on the backend's plan where it has one, else on the
        optimised jaxpr), kernels and, where the backend knows it, ``temp bytes``: the
        peak temporary memory one call uses beyond its arguments and outputs.
        Communication: ``collectives`` (per kind: calls, bytes sent and received by
        this process in one call), their totals and notes (``plan_traffic``)."""
        ca = getattr(self.exe, "cost_analysis", None)
        out = dict(ca()) if ca else interpreter_cost(self.jaxpr)
        # the peak of live temporaries the buffer plan allocates (see compiler.temp_bytes)
        out["temp_bytes"] = temp_bytes(self.exe, self.jaxpr)
        out.update(plan_traffic(self.jaxpr))
        return out


class CompiledMemoryStats:
    """``Compiled.memory_analysis()``: the sizes functrans knows (the fields JAX's of the
    same names hold; no generated-code or host sizes)."""

    def __init__(self, argument_size_in_bytes: int, output_size_in_bytes: int,
                 temp_size_in_bytes: int) -> None:
        self.argument_size_in_bytes = int(argument_size_in_bytes)
        self.output_size_in_bytes = int(output_size_in_bytes)
        self.temp_size_in_bytes = int(temp_size_in_bytes)

    def __repr__(self):
        return (f"CompiledMemoryStats(argument_size_in_bytes={self.argument_size_in_bytes}, "
                f"output_size_in_bytes={self.output_size_in_bytes}, "
                f"temp_size_in_bytes={self.temp_size_in_bytes})")


def _nbytes(aval) -> int:
    return int(np.prod(aval.shape, dtype=np.int64)) * np.dtype(aval.dtype).itemsize


def _checked_arguments(flat, in_tree, want_tree, avals) -> list:
    """``flat`` checked against what a ``Compiled`` was lowered for (JAX's messages)."""
    if in_tree != want_tree:
        raise TypeError(f"Function compiled with input pytree does not match the input pytree "
                        f"it was called with: compiled for {want_tree}, called with {in_tree}")
    out, bad = [], []
    for i, (x, a) in enumerate(zip(flat, avals)):
        if isinstance(x, (bool, int, float, complex)) and a.shape == ():
            x = np.asarray(x, a.dtype)       # a Python scalar takes the compiled type
        got = get_aval(as_array(x))
        if got.shape != a.shape or got.dtype != a.dtype:
            bad.append(f"argument {i} compiled with {_type_name(a)} and called with "
                       f"{_type_name(got)}")
        out.append(x)
    if bad:
        raise TypeError("Argument types differ from the types for which this computation "
                        "was compiled. The mismatches are:\n" + "\n".join(bad))
    return out


def _type_name(a) -> str:
    return f"{np.dtype(a.dtype).name}[{','.join(map(str, a.shape))}]"   # float32[8,8]


def interpreter_cost(closed) -> dict:
    """The interpreter runs the optimised jaxpr equation by equation: the cost model
    (``functrans.cost``) on it, one kernel per equation."""
    return {**jaxpr_cost(closed), "kernels": len(closed.jaxpr.eqns)}
