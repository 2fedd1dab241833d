"""Jacobians and Hessians: ``jacfwd``, ``jacrev``, ``jacobian``, ``hessian``.

``jacfwd`` pushes the standard basis of each input leaf through ``jvp`` under
one ``vmap`` (one batched forward pass per input leaf, no loop over basis
vectors); ``jacrev`` pulls the basis of each output leaf back through one
``vjp`` under ``vmap``. Results are laid out like JAX's: for an output leaf of
shape ``O`` and an input leaf of shape ``I`` the block has shape ``O + I``; the
result has the output's structure, each leaf holding the differentiated
arguments' structure (a tuple of them when ``argnums`` is a tuple).

``jacobian`` chooses the mode by size: forward mode when the differentiated
inputs have fewer elements in total than the outputs, reverse mode otherwise
(one pass per input element vs one per output element).

>>> import functrans as ft, functrans.numpy as fnp, numpy as np
>>> A = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
>>> ft.jacfwd(lambda x: fnp.dot(A, x))(np.ones(2)).tolist()
[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxpr_ir import dtype_kind

from .autodiff import check_argnums, jvp, vjp
from .batching import vmap
from .jit import jit
from .primitives.structural import reshape, transpose
from .api_util import (as_array, check_callable, flatten_fun, keep_metadata, normalize_argnums,
                       trace_flat)
from .traceback_util import api_boundary
from .tracing import Tracer, get_aval, wrap
from .tree_util import Partial, tree_flatten, tree_structure, tree_unflatten
from .primitives.base import UndefinedPrimal, instantiate
from .transforms.transpose import backward_pass

__all__ = ["jacfwd", "jacrev", "jacobian", "hessian", "linear_transpose", "fwd_and_bwd"]


def _prepare(fun, args, argnums, fname, holomorphic=False, complex_ok=False):
    single, nums = normalize_argnums(argnums, len(args), fname)
    dyn = tuple(args[i] for i in nums)
    flat, in_tree = tree_flatten(dyn)
    flat = [as_array(x) for x in flat]
    for i, x in enumerate(flat):
        a = get_aval(x)
        if holomorphic and dtype_kind(a.dtype) != "c":
            raise TypeError(f"{fname} with holomorphic=True requires complex inputs, but "
                            f"input leaf {i} has dtype {a.dtype}")
        if not holomorphic and dtype_kind(a.dtype) not in ("fc" if complex_ok else "f"):
            raise TypeError(f"{fname} requires real floating inputs to differentiate, but "
                            f"input leaf {i} has dtype {a.dtype}; convert it with "
                            ".astype(float) or exclude it with argnums")

    def f_flat(*leaves):
        full = list(args)
        for i, v in zip(nums, tree_unflatten(in_tree, leaves)):
            full[i] = v
        return fun(*full)
    return single, nums, dyn, flat, in_tree, f_flat


def _basis(aval):
    """The standard basis of a leaf: shape (size, *shape)."""
    n = aval.size
    return np.eye(n, dtype=aval.dtype).reshape((n,) + aval.shape)


def _in_structure(single, in_tree, blocks):
    """Blocks for one output leaf (one per input leaf) in the arguments' structure."""
    t = tree_unflatten(in_tree, blocks)
    return t[0] if single else tuple(t)


def _move_front_to_back(x, k):
    """(k-dim front, rest...) -> (rest..., front): the basis axes go last."""
    nd = get_aval(x).ndim
    if k == 0 or k == nd:
        return x
    perm = tuple(range(k, nd)) + tuple(range(k))
    return transpose(x, perm)


def _reshape(x, shape):
    if get_aval(x).shape == tuple(shape):
        return x
    return reshape(x, tuple(shape))


def jacfwd(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
           has_aux: bool = False, holomorphic: bool = False) -> Callable[..., Any]:
    """Jacobian by forward mode: one batched ``jvp`` per input leaf.

    Cheaper than ``jacrev`` when the inputs have fewer elements than the outputs.

    Args:
      fun: the function to differentiate; arguments and outputs are arrays, scalars or
        pytrees of them, and the differentiated inputs must be real floating.
      argnums: which positional argument(s) to differentiate with respect to: an int
        (default 0) or a tuple of ints; each block of the result then holds a tuple of
        Jacobians, one per argument in that order. Negative numbers count from the end.
      has_aux: when True, ``fun`` returns a pair ``(output, aux)``; only ``output`` is
        differentiated and the new function returns ``(jacobian, aux)``.
      holomorphic: when True, the inputs (and for ``jacrev`` the outputs) are complex
        and ``fun`` is taken as holomorphic: the blocks are ``df/dz``.

    Returns:
      A function of ``fun``'s arguments returning the Jacobian: for an output leaf of
      shape ``O`` and an input leaf of shape ``I`` a block of shape ``O + I``; blocks
      are arranged in the output's structure, each holding the differentiated
      arguments' structure. It keeps ``fun``'s ``__name__`` and ``__doc__``.

    >>> import functrans as ft, functrans.numpy as fnp, numpy as np
    >>> ft.jacfwd(fnp.sin)(np.zeros(2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    check_callable(fun, "jacfwd")
    check_argnums(argnums, "jacfwd")

    @api_boundary
    def jacfun(*args):
        single, nums, dyn, flat, in_tree, f_flat = _prepare(fun, args, argnums, "jacfwd",
                                                                  holomorphic)
        zeros = [np.zeros(get_aval(x).shape, get_aval(x).dtype) for x in flat]
        per_in = []            # per input leaf: flat output blocks
        out = aux = None
        for k, x in enumerate(flat):
            def push(t, k=k):
                ts = list(zeros)
                ts[k] = t
                res = jvp(f_flat, tuple(flat), tuple(ts), has_aux=has_aux)
                y, ty = res[0], res[1]
                y_leaves, y_tree = tree_flatten(y)
                ty_leaves = tree_flatten(ty)[0]
                box["tree"] = y_tree
                return (y_leaves, ty_leaves) + ((res[2],) if has_aux else ())
            box = {}
            a = get_aval(x)
            res = vmap(push, in_axes=0, out_axes=(None, 0) + ((None,) if has_aux else ()))(
                _basis(a))
            out = res[0]
            if has_aux:
                aux = res[2]
            blocks = []
            for ty, o in zip(res[1], out):
                oshape = get_aval(o).shape
                b = _move_front_to_back(ty, 1)                  # (*O, n)
                blocks.append(_reshape(b, oshape + a.shape))
            per_in.append(blocks)
            out_tree = box["tree"]
        if not flat:
            raise TypeError("jacfwd: no floating inputs to differentiate")
        jac = [_in_structure(single, in_tree, [per_in[k][j] for k in range(len(flat))])
               for j in range(len(out))]
        jac = tree_unflatten(out_tree, jac)
        return (jac, aux) if has_aux else jac

    return keep_metadata(jacfun, fun)


def jacrev(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
           has_aux: bool = False, holomorphic: bool = False) -> Callable[..., Any]:
    """Jacobian by reverse mode: one ``vjp``, pulled back with one batched call per output leaf.

    Cheaper than ``jacfwd`` when the outputs have fewer elements than the inputs.

    Args:
      fun: the function to differentiate; arguments and outputs are arrays, scalars or
        pytrees of them; the outputs must be real floating, the differentiated inputs
        real or complex (a complex input's block is what ``grad`` gives, as in JAX).
      argnums: which positional argument(s) to differentiate with respect to: an int
        (default 0) or a tuple of ints; each block of the result then holds a tuple of
        Jacobians, one per argument in that order. Negative numbers count from the end.
      has_aux: when True, ``fun`` returns a pair ``(output, aux)``; only ``output`` is
        differentiated and the new function returns ``(jacobian, aux)``.
      holomorphic: when True, the inputs (and for ``jacrev`` the outputs) are complex
        and ``fun`` is taken as holomorphic: the blocks are ``df/dz``.

    Returns:
      A function of ``fun``'s arguments returning the Jacobian: for an output leaf of
      shape ``O`` and an input leaf of shape ``I`` a block of shape ``O + I``; blocks
      are arranged in the output's structure, each holding the differentiated
      arguments' structure. It keeps ``fun``'s ``__name__`` and ``__doc__``.

    >>> import functrans as ft, functrans.numpy as fnp, numpy as np
    >>> ft.jacrev(lambda x: x * 2.0)(np.ones(2)).tolist()
    [[2.0, 0.0], [0.0, 2.0]]
    """
    check_callable(fun, "jacrev")
    check_argnums(argnums, "jacrev")

    @api_boundary
    def jacfun(*args):
        # as JAX's: complex inputs of a real-valued function differentiate as in grad
        single, nums, dyn, flat, in_tree, f_flat = _prepare(fun, args, argnums, "jacrev",
                                                                  holomorphic, complex_ok=True)
        res = vjp(f_flat, *flat, has_aux=has_aux)
        y, vjp_fn = res[0], res[1]
        y_leaves, y_tree = tree_flatten(y)
        for i, o in enumerate(y_leaves):
            if dtype_kind(get_aval(o).dtype) != ("c" if holomorphic else "f"):
                raise TypeError(f"jacrev requires {'complex' if holomorphic else 'real floating'}"
                                f" outputs{' with holomorphic=True' if holomorphic else ''}, "
                                f"but output leaf {i} has dtype {get_aval(o).dtype}")
        zeros = [np.zeros(get_aval(o).shape, get_aval(o).dtype) for o in y_leaves]
        jac = []
        for j, o in enumerate(y_leaves):
            oa = get_aval(o)

            def pull(ct, j=j):
                cts = list(zeros)
                cts[j] = ct
                return list(vjp_fn(tree_unflatten(y_tree, cts)))

            g = vmap(pull)(_basis(oa))                           # per input leaf: (m, *I)
            blocks = [_reshape(b, oa.shape + get_aval(x).shape) for b, x in zip(g, flat)]
            jac.append(_in_structure(single, in_tree, blocks))
        jac = tree_unflatten(y_tree, jac)
        return (jac, res[2]) if has_aux else jac

    return keep_metadata(jacfun, fun)


def _total_size(avals):
    return sum(int(a.size) for a in avals)


def jacobian(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
             has_aux: bool = False, holomorphic: bool = False) -> Callable[..., Any]:
    """Jacobian choosing the mode: ``jacfwd`` when the differentiated inputs have
    fewer elements than the outputs, ``jacrev`` otherwise (ties go to reverse).

    Args:
      fun: the function to differentiate; arguments and outputs are arrays, scalars or
        pytrees of them; the differentiated inputs (and in reverse mode the outputs) must
        be real floating, except complex inputs, which take reverse mode (as ``jacrev``).
      argnums: which positional argument(s) to differentiate with respect to: an int
        (default 0) or a tuple of ints; each block of the result then holds a tuple of
        Jacobians, one per argument in that order. Negative numbers count from the end.
      has_aux: when True, ``fun`` returns a pair ``(output, aux)``; only ``output`` is
        differentiated and the new function returns ``(jacobian, aux)``.
      holomorphic: when True, the inputs (and for ``jacrev`` the outputs) are complex
        and ``fun`` is taken as holomorphic: the blocks are ``df/dz``.

    Returns:
      A function of ``fun``'s arguments returning the Jacobian: for an output leaf of
      shape ``O`` and an input leaf of shape ``I`` a block of shape ``O + I``; blocks
      are arranged in the output's structure, each holding the differentiated
      arguments' structure. It keeps ``fun``'s ``__name__`` and ``__doc__``.

    >>> import functrans as ft, functrans.numpy as fnp, numpy as np
    >>> ft.jacobian(lambda x: fnp.sum(x * x))(np.ones(3)).tolist()
    [2.0, 2.0, 2.0]
    """
    @api_boundary
    def jacfun(*args):
        mode = jacobian_mode(fun, argnums, has_aux, *args)
        f = jacfwd if mode == "fwd" else jacrev
        return f(fun, argnums, has_aux, holomorphic)(*args)

    return keep_metadata(jacfun, fun)


def jacobian_mode(fun: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool,
                  *args: Any) -> str:
    """'fwd' or 'rev': the mode ``jacobian`` uses for these arguments.

    >>> import numpy as np
    >>> jacobian_mode(lambda x: x.sum(), 0, False, np.ones(3))
    'rev'
    """
    single, nums, dyn, flat, in_tree, f_flat = _prepare(fun, args, argnums, "jacobian",
                                                        complex_ok=True)
    if any(dtype_kind(get_aval(x).dtype) == "c" for x in flat):
        return "rev"        # JAX's jacobian is jacrev, which alone takes complex inputs
    flat_fun, _ = flatten_fun(f_flat, tree_flatten(tuple(flat))[1], has_aux)
    jaxpr, _, _ = trace_flat(flat_fun, flat, name="jacobian (output sizes)")
    n_in = _total_size([get_aval(x) for x in flat])
    n_out = _total_size(jaxpr.out_avals)
    return "fwd" if n_in < n_out else "rev"


def hessian(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
            has_aux: bool = False, holomorphic: bool = False) -> Callable[..., Any]:
    """``jacfwd(jacrev(fun))``: the matrix of second derivatives of a scalar function.

    Args:
      fun: a function with a real floating scalar output; arguments are arrays,
        scalars or pytrees of them.
      argnums: which positional argument(s) to differentiate with respect to: an int
        (default 0) or a tuple of ints (the result is then nested tuples: block
        ``[i][j]`` is d²fun / d arg_i d arg_j). Negative numbers count from the end.
      has_aux: when True, ``fun`` returns ``(output, aux)`` and the new function
        returns ``(hessian, aux)``.
      holomorphic: when True, the inputs and the output are complex and ``fun`` is
        taken as holomorphic: the blocks are ``d²f/dz²``.

    Returns:
      A function of ``fun``'s arguments returning the Hessian: for an input leaf of
      shape ``I`` a block of shape ``I + I``. It keeps ``fun``'s ``__name__`` and
      ``__doc__``.

    >>> import functrans as ft, functrans.numpy as fnp, numpy as np
    >>> ft.hessian(lambda x: fnp.sum(x ** 3))(np.array([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    return keep_metadata(jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux,
                                holomorphic), fun)


@api_boundary
def linear_transpose(fun: Callable[..., Any], *primals: Any,
                     reduce_axes: Sequence[Any] = ()) -> Callable[[Any], tuple]:
    """The transpose of a linear ``fun`` (JAX's ``jax.linear_transpose``): a function
    from an output cotangent to the tuple of input cotangents. ``primals`` only give the
    input shapes and dtypes (arrays or ``ShapeDtypeStruct``); ``fun`` is traced once at
    zeros and transposed equation by equation, so a non-linear ``fun`` raises.

    >>> import numpy as np, functrans as ft
    >>> t = ft.linear_transpose(lambda a: 2 * a + a[::-1], np.zeros(3))
    >>> t(np.arange(3.0))[0].tolist()
    [2.0, 3.0, 4.0]
    """
    del reduce_axes            # JAX's deprecated argument, ignored there too
    flat, in_tree = tree_flatten(primals)
    zeros = [np.zeros(np.shape(x), x.dtype if hasattr(x, "dtype") else np.result_type(x))
             for x in flat]
    flat_fun, out_tree = flatten_fun(fun, in_tree)
    jaxpr, consts, _ = trace_flat(flat_fun, zeros, concrete=False, name="linear_transpose")
    kinds = {dtype_kind(z.dtype) in "fc" for z in zeros} | {dtype_kind(v.aval.dtype) in "fc"
                                                      for v in jaxpr.outvars}
    if len(kinds) > 1:      # as JAX: an integer cotangent of a float has no meaning
        raise TypeError("linear_transpose only supports [float or complex] -> [float or "
                        "complex], and integer -> integer functions, but got "
                        f"{[z.dtype for z in zeros]} -> {[v.aval.dtype for v in jaxpr.outvars]}")
    # transposed once here, with zero cotangents: a non-linear fun raises now, as JAX's
    backward_pass(jaxpr, consts, [UndefinedPrimal(v.aval) for v in jaxpr.invars],
                  [np.zeros(v.aval.shape, v.aval.dtype) for v in jaxpr.outvars])
    # for a linear fun the VJP at any point is its transpose; vjp also takes traced
    # cotangents (inside jit or vmap)
    if kinds == {False}:    # integer -> integer: vjp would not differentiate integers
        return Partial(_IntTransposeRule(jaxpr, in_tree, out_tree()), list(consts))
    f_vjp = vjp(lambda *a: fun(*a), *tree_unflatten(in_tree, zeros))[1]
    # a Partial over the vjp function (itself a pytree of residuals): jit can return it
    return Partial(_TransposeRule(out_tree()), f_vjp)


class _TransposeRule:
    """``linear_transpose``'s function less its vjp: the output structure it checks.
    Called as ``rule(f_vjp, out_cotangent)``; compared by identity (a jit cache key)."""

    def __init__(self, out_tree):
        self.out_tree = out_tree

    def __call__(self, f_vjp, out_cotangent):
        ct_tree = tree_structure(out_cotangent)
        if ct_tree != self.out_tree:
            raise TypeError(f"linear_transpose: cotangent structure {ct_tree} differs from "
                            f"the output structure {self.out_tree}")
        return tuple(f_vjp(out_cotangent))


class _IntTransposeRule(_TransposeRule):
    """``linear_transpose`` of an integer -> integer function: its jaxpr transposed
    directly. Called as ``rule(consts, out_cotangent)``."""

    def __init__(self, jaxpr, in_tree, out_tree):
        super().__init__(out_tree)
        self.jaxpr, self.in_tree = jaxpr, in_tree

    def __call__(self, consts, out_cotangent):
        ct_flat, ct_tree = tree_flatten(out_cotangent)
        if ct_tree != self.out_tree:
            raise TypeError(f"linear_transpose: cotangent structure {ct_tree} differs from "
                            f"the output structure {self.out_tree}")
        ct_flat = [as_array(c) for c in ct_flat]
        for i, (c, v) in enumerate(zip(ct_flat, self.jaxpr.outvars)):
            if np.shape(c) != v.aval.shape:
                raise TypeError(f"linear_transpose: cotangent {i} has shape {np.shape(c)} "
                                f"but the output has type {v.aval.str_short()}")
        cts = backward_pass(self.jaxpr, list(consts),
                            [UndefinedPrimal(v.aval) for v in self.jaxpr.invars], ct_flat)
        leaves = [instantiate(c) if c is not None else np.zeros(v.aval.shape, v.aval.dtype)
                  for c, v in zip(cts, self.jaxpr.invars)]
        return tuple(tree_unflatten(self.in_tree, [x if isinstance(x, Tracer) else
                                                    wrap(np.asarray(x)) for x in leaves]))


def fwd_and_bwd(fun: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool = False,
                jitted: bool = True) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The forward and backward passes of ``fun`` as two functions (JAX's
    ``jax.fwd_and_bwd``): ``fwd(*args)`` is ``vjp`` of ``fun`` in the ``argnums``
    arguments, ``(out, residuals)`` (``(out, residuals, aux)`` with ``has_aux``), and
    ``bwd(residuals, cotangent)`` the cotangents of those arguments (one, for an int
    ``argnums``). With ``jitted`` both are jitted, so ``bwd`` compiles once for every
    ``residuals`` of the same types (they are the pytree vjp returns).

    >>> import functrans as ft, functrans.numpy as fnp
    >>> fwd, bwd = fwd_and_bwd(lambda x, w: fnp.sum(x * w), argnums=1)
    >>> y, res = fwd(fnp.arange(3.0), fnp.ones(3))
    >>> bwd(res, 1.0).tolist()
    [0.0, 1.0, 2.0]
    """
    check_argnums(argnums, "fwd_and_bwd")
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def fwd(*args):
        def at(*dyn):
            full = list(args)
            for i, v in zip(nums, dyn):
                full[i] = v
            return fun(*full)
        return vjp(at, *[args[i] for i in nums], has_aux=has_aux)

    def bwd(f_vjp, outgrad):
        g = f_vjp(outgrad)
        return g[0] if isinstance(argnums, int) else g

    return (jit(fwd), jit(bwd)) if jitted else (fwd, bwd)
