"""``sparsify``: run a function written for dense arrays on BCOO arguments, with the
semantics of ``jax.experimental.sparse.sparsify``.

The function is traced with dense stand-ins of the BCOO arguments; its jaxpr is then
evaluated with each equation that touches a sparse value replaced by its sparse rule
(``_RULES``); equations on dense values only are bound as they are, so ``sparsify``
composes with ``jit``, ``grad`` and ``vmap`` around it. A primitive without a sparse rule
raises JAX's ``NotImplementedError`` naming it.

>>> import functrans.numpy as fnp
>>> from functrans.experimental.sparse import BCOO
>>> M = BCOO.fromdense(fnp.asarray([[0.0, 1.0], [2.0, 0.0]]))
>>> sparsify(lambda m, v: (2.0 * m) @ v)(M, fnp.ones(2)).tolist()
[2.0, 4.0]
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from jaxpr_ir import Literal

from ...jit import make_jaxpr
from ...stages import ShapeDtypeStruct
from ...tracing import bind
from ...tree_util import tree_flatten, tree_structure, tree_unflatten
from .bcoo import (BCOO, bcoo_add, bcoo_dot_general, bcoo_multiply_dense,
                   bcoo_multiply_sparse, bcoo_reduce_sum, bcoo_reshape, bcoo_sum_duplicates,
                   bcoo_transpose)

__all__ = ["sparsify"]

# f(0) == 0: applied to the stored values only (JAX's list)
_ZERO_PRESERVING = {"abs", "asin", "asinh", "atan", "atanh", "bessel_i1e", "conj", "copy",
                    "convert_element_type", "expm1", "imag", "log1p", "neg", "real", "sign",
                    "sin", "sinh", "sqrt", "tan", "tanh"}
# f(0) != 0: a sparse result would be dense (JAX's list)
_DENSIFYING = {"acos", "acosh", "bessel_i0e", "cos", "cosh", "eq", "exp", "ge", "gt", "le",
               "lt", "log", "ne", "xor"}
_LINEAR = {"neg", "real", "imag", "conj", "copy", "convert_element_type"}
_CALLS = {"pjit", "closed_call", "core_call"}


def _unimplemented(name: str) -> NotImplementedError:
    if name in _DENSIFYING:
        return NotImplementedError(
            f"sparse rule for {name} is not implemented because it would result in dense "
            "output. If this is your intent, use sparse.todense() to convert your arguments "
            "to dense matrices.")
    return NotImplementedError(f"sparse rule for {name} is not implemented.")


def _add(params, x, y):
    if isinstance(x, BCOO) and isinstance(y, BCOO):
        return bcoo_add(x, y)
    return x + y if isinstance(x, BCOO) else y + x       # BCOO.__add__: JAX's checks


def _sub(params, x, y):
    if not (isinstance(x, BCOO) and isinstance(y, BCOO)):
        raise NotImplementedError("Subtraction between sparse and dense array.")
    return bcoo_add(x, -y)


def _mul(params, x, y):
    if isinstance(x, BCOO) and isinstance(y, BCOO):
        return bcoo_multiply_sparse(x, y)
    x, y = (x, y) if isinstance(x, BCOO) else (y, x)
    return x._with_data(bcoo_multiply_dense(x, y))


def _div(params, x, y):
    if isinstance(y, BCOO):
        raise NotImplementedError(
            "Division by a sparse array is not implemented because it would result in dense "
            "output. If this is your intent, use sparse.todense() to convert your arguments "
            "to a dense array.")
    return x._with_data(bcoo_multiply_dense(x, 1 / y))


def _dot_general(params, x, y):
    return bcoo_dot_general(x, y, dimension_numbers=params["dimension_numbers"],
                            preferred_element_type=params.get("preferred_element_type"))


def _reshape(params, x):
    if params.get("dimensions") is not None:
        raise _unimplemented("reshape with dimensions")
    return bcoo_reshape(x, new_sizes=params["new_sizes"])


_RULES: dict[str, Callable] = {
    "add": _add, "add_any": _add, "sub": _sub, "mul": _mul, "div": _div,
    "dot_general": _dot_general, "reshape": _reshape,
    "reduce_sum": lambda params, x: bcoo_reduce_sum(x, axes=params["axes"]),
    "transpose": lambda params, x: bcoo_transpose(x, permutation=params["permutation"]),
}


def _eval_eqn(eqn: Any, ins: list) -> list:
    name = eqn.primitive.name
    if not any(isinstance(x, BCOO) for x in ins):
        out = bind(eqn.primitive, *ins, **eqn.params)
        return list(out) if eqn.primitive.multiple_results else [out]
    if name in _CALLS:
        body = eqn.params.get("jaxpr", eqn.params.get("call_jaxpr"))
        return _eval_sparse(getattr(body, "jaxpr", body), list(getattr(body, "consts", [])),
                            ins)
    if (name in _ZERO_PRESERVING or name == "integer_pow") and len(ins) == 1:
        if name == "integer_pow" and eqn.params["y"] <= 0:
            raise NotImplementedError(
                f"sparse rule for integer_pow with non-positive exponent {eqn.params['y']} is "
                "not implemented because it would result in dense output. If this is your "
                "intent, use sparse.todense() to convert your argument to a dense array.")
        x = ins[0]
        if name not in _LINEAR and not x.unique_indices:   # f(a) + f(b) != f(a + b)
            x = bcoo_sum_duplicates(x, nse=x.nse)
        return [x._with_data(bind(eqn.primitive, x.data, **eqn.params))]
    if name not in _RULES:
        raise _unimplemented(name)
    return [_RULES[name](eqn.params, *ins)]


def _eval_sparse(jaxpr: Any, consts: list, args: list) -> list:
    env: dict = {}

    def read(v):
        return v.val if isinstance(v, Literal) else env[v]
    env.update(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for eqn in jaxpr.eqns:
        env.update(zip(eqn.outvars, _eval_eqn(eqn, [read(v) for v in eqn.inputs])))
    return [read(v) for v in jaxpr.outvars]


def sparsify(f: Callable, use_tracer: bool = False) -> Callable:
    """``f`` made to accept BCOO arguments: its matmuls, sums, transposes, elementwise
    products and sums, negation and other zero-preserving operations on them run
    sparse (``jax.experimental.sparse.sparsify``); the result is a BCOO where a sparse
    value comes out. ``use_tracer`` is accepted for JAX's signature and ignored.

    >>> import functrans.numpy as fnp
    >>> from functrans.experimental.sparse import BCOO
    >>> M = BCOO.fromdense(fnp.asarray([[0.0, 1.0], [2.0, 0.0]]))
    >>> sparsify(lambda m: -m.T)(M).todense().tolist()
    [[0.0, -2.0], [-1.0, 0.0]]
    """
    @functools.wraps(f)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        leaves, in_tree = tree_flatten((args, kwargs), is_leaf=lambda x: isinstance(x, BCOO))
        stand_ins = [ShapeDtypeStruct(x.shape, x.dtype) if isinstance(x, BCOO) else x
                     for x in leaves]

        def dense_f(*flat):
            a, k = tree_unflatten(in_tree, list(flat))
            return f(*a, **k)
        closed, out_shape = make_jaxpr(dense_f, return_shape=True)(*stand_ins)
        outs = _eval_sparse(closed.jaxpr, list(closed.consts), leaves)
        return tree_unflatten(tree_structure(out_shape), outs)
    return wrapped
