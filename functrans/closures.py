"""Wrapping functions as JAX's API does: ``closure_convert`` (closed-over values made
explicit arguments, for ``custom_vjp`` rules), ``custom_gradient`` (a function returning
its value and its VJP rule), ``linear_call`` (a linear function with its own transpose),
``named_call`` and ``named_scope`` (names for profiles).

>>> import functrans as ft, functrans.numpy as fnp
>>> @ft.custom_gradient
... def f(x):
...     return fnp.sin(x), lambda g: (g * 10.0,)
>>> float(ft.grad(f)(0.0))
10.0
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

import numpy as np

from jaxpr_ir import ClosedJaxpr, dtype_kind
from .api_util import flatten_fun, keep_metadata
from .custom_rules import custom_vjp
from .primitives.custom import hoist_many
from .primitives.linear_call import linear_call_p
from .stages import abstractify
from .tracing import eval_jaxpr, trace_to_jaxpr
from .tree_util import Partial, tree_flatten, tree_unflatten

__all__ = ["closure_convert", "custom_gradient", "linear_call", "named_call", "named_scope"]


def closure_convert(fun: Callable[..., Any], *example_args: Any) -> tuple[Callable[..., Any], list]:
    """``(converted, consts)``: ``converted(*args, *consts)`` is ``fun(*args)``, with the
    floating values ``fun`` closes over (traced ones included) made the trailing
    arguments, as JAX's ``jax.closure_convert``; ``example_args`` give the shapes and
    dtypes ``fun`` is traced at once.

    >>> import functrans as ft
    >>> def outer(y):
    ...     conv, consts = ft.closure_convert(lambda x: x * y, 1.0)
    ...     return conv(2.0, *consts)
    >>> float(ft.grad(outer)(3.0))
    2.0
    """
    flat, in_tree = tree_flatten((example_args, {}))
    flat_fun, out_tree = flatten_fun(lambda a, k: fun(*a, **k), in_tree)
    jaxpr, consts, _ = trace_to_jaxpr(flat_fun, [abstractify(x) for x in flat], None,
                                      name="closure_convert")
    hoist = [dtype_kind(abstractify(c).dtype) in "fc" for c in consts]
    kept = [c for c, h in zip(consts, hoist) if not h]
    hoisted = [c for c, h in zip(consts, hoist) if h]
    tree = out_tree()
    n = len(flat)

    def converted(*args_and_consts: Any) -> Any:
        args, extra = args_and_consts[:len(example_args)], list(args_and_consts[len(example_args):])
        leaves, tree_in = tree_flatten((tuple(args), {}))
        if tree_in != in_tree or len(extra) != len(hoisted):
            raise TypeError(f"closure_convert: expected arguments of structure {in_tree} "
                            f"and {len(hoisted)} constants, got {tree_in} and {len(extra)}")
        it_k, it_h = iter(kept), iter(extra)
        all_consts = [next(it_h) if h else next(it_k) for h in hoist]
        return tree_unflatten(tree, eval_jaxpr(jaxpr, all_consts, leaves[:n]))
    return converted, hoisted


def custom_gradient(fun: Callable[..., Any]) -> Callable[..., Any]:
    """A function with its own VJP, as JAX's: ``fun(*args)`` returns ``(value, rule)``
    and ``rule(cotangent)`` returns one cotangent per positional argument.

    >>> import functrans as ft
    >>> f = ft.custom_gradient(lambda x: (x ** 2, lambda g: (g * 3.0,)))
    >>> float(f(2.0)), float(ft.grad(f)(2.0))
    (4.0, 3.0)
    """
    @custom_vjp
    def wrapped(*args):
        return fun(*args)[0]

    def fwd(*args):
        ans, rule = fun(*args)
        conv, consts = closure_convert(rule, ans)
        return ans, Partial(conv, *consts)   # the rule as a pytree of its residuals

    def bwd(rule, g):
        cts = rule.func(g, *rule.args)     # converted(cotangent, *consts)
        return tuple(cts) if isinstance(cts, (tuple, list)) else (cts,)

    wrapped.defvjp(fwd, bwd)
    return keep_metadata(wrapped, fun)


def _trace_flat(fun, args, name):
    """``fun(*args)`` traced at the arguments' types: (closed jaxpr, in tree, out tree)."""
    flat, in_tree = tree_flatten((args, {}))
    flat_fun, out_tree = flatten_fun(lambda a, k: fun(*a, **k), in_tree)
    jaxpr, consts, _ = trace_to_jaxpr(flat_fun, [abstractify(x) for x in flat], None, name=name)
    return ClosedJaxpr(jaxpr, consts), in_tree, out_tree()


def linear_call(fun: Callable[..., Any], fun_transpose: Callable[..., Any],
                residual_args: Any, linear_args: Any) -> Any:
    """``fun(residual_args, linear_args)``, declared linear in ``linear_args`` with
    ``fun_transpose(residual_args, cotangents)`` as its transpose, as JAX's
    ``jax.custom_derivatives.linear_call``: reverse mode and ``linear_transpose`` use
    ``fun_transpose`` (whose own transpose is ``fun``), forward mode calls ``fun`` on the
    tangents; the residuals are not differentiated (an error, as in JAX).

    >>> import functrans as ft
    >>> def custom_id(x):
    ...     return linear_call(lambda _, x: x, lambda _, t: 7.0, (), x)
    >>> float(custom_id(1.0)), float(ft.grad(custom_id)(1.0))
    (1.0, 7.0)
    """
    res_flat, res_tree = tree_flatten(residual_args)
    lin_flat, lin_tree = tree_flatten(linear_args)
    f, _, out_tree = _trace_flat(fun, (residual_args, linear_args), "linear_call fun")
    cts_example = tree_unflatten(out_tree, [np.zeros(a.shape, a.dtype) for a in f.out_avals])
    t, _, t_out = _trace_flat(fun_transpose, (residual_args, cts_example),
                              "linear_call fun_transpose")
    if t_out != lin_tree:
        raise TypeError(f"linear_call: transpose output pytree structure must match that of "
                        f"linear inputs, got output structure {t_out} and input structure "
                        f"{lin_tree}.")
    for got, want in zip(t.out_avals, f.in_avals[len(res_flat):]):
        if got.shape != want.shape or got.dtype != want.dtype:
            raise TypeError(f"linear_call: fun_transpose returns {got.str_short()} for a "
                            f"linear input of type {want.str_short()}")
    (fj, tj), consts = hoist_many([f, t])
    out = linear_call_p.bind(*consts, *res_flat, *lin_flat, callee=fj, transpose=tj,
                             num_consts=len(consts), num_res=len(res_flat))
    return tree_unflatten(out_tree, out)


def named_call(fun: Callable[..., Any], *, name: str | None = None) -> Callable[..., Any]:
    """``fun`` under a name, as JAX's ``named_call`` (which names the call in profiles);
    here the name is the wrapper's ``__name__`` and the values are ``fun``'s.

    >>> import functrans as ft
    >>> ft.named_call(lambda x: x + 1, name="inc").__name__
    'inc'
    """
    def named(*args: Any, **kwargs: Any) -> Any:
        return fun(*args, **kwargs)
    named = keep_metadata(named, fun)
    if name is not None:
        named.__name__ = named.__qualname__ = name
    return named


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """A context naming the operations inside it, as JAX's ``named_scope`` (a profiling
    annotation); here it checks the name and changes no value.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> with ft.named_scope("layer1"):
    ...     y = fnp.ones(2) * 2
    >>> y.tolist()
    [2.0, 2.0]
    """
    if not isinstance(name, str):
        raise TypeError(f"named_scope: the name must be a str, got {type(name).__name__}")
    yield
