"""The public autodiff transforms: jvp, linearize, vjp, grad, value_and_grad,
jacfwd, jacrev, jacobian, hessian.

Each traces the user's function into a jaxpr (tracers carry concrete values
when the inputs are concrete, so Python control flow works outside jit), then
runs an IR transform: ``jvp_eval`` for forward mode; ``linearize_jaxpr`` and
``backward_pass`` for reverse mode.

>>> import functrans as ft, functrans.numpy as fnp
>>> float(ft.grad(lambda x: fnp.sin(x) * x)(0.0))
0.0
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxpr_ir import ShapedArray, dtype_kind
from .api_util import (FLOAT0, as_array, check_callable, flatten_fun, keep_metadata,
                       key_float0, key_tangent_words, normalize_argnums, trace_flat)
from .primitives.arithmetic import weakly
from .primitives.base import UndefinedPrimal, Zero, instantiate
from .primitives.collectives import replicated_parts as _parts, replicated_sums as _summed
from .shard_map_specs import reverse_mode_plan
from .tracing import Tracer, leaked_tracer_error, get_aval, wrap
from .transforms.jvp import jvp_eval
from .transforms.partial_eval import LinearJaxpr, linearize_fun
from .transforms.transpose import backward_pass
from .traceback_util import api_boundary
from .tree_util import Partial, tree_flatten, tree_leaves, tree_map, tree_unflatten


def _out(x):
    """Results handed back to the user: eager arrays become Array; tracers stay."""
    if isinstance(x, Tracer):
        if not x._trace.alive:
            raise leaked_tracer_error(x)     # a tracer leaked from an earlier transform, returned as is
        return x
    if x is None:
        return x
    return wrap(x if isinstance(x, np.ndarray) else np.asarray(x))


def _check_tangent(i, p, t):
    pa = p if isinstance(p, ShapedArray) else get_aval(p)   # a primal or its type
    ta = get_aval(t)
    want = pa.dtype if dtype_kind(pa.dtype) in "fc" else None
    if ta.shape != pa.shape or (want is not None and ta.dtype != want):
        raise TypeError(f"jvp: tangent {i} has type {ta.str_short()} but its primal has type "
                        f"{pa.str_short()}; they must match in shape and dtype")


def jvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> tuple[Any, ...]:
    """Forward mode: ``fun(*primals)`` and its derivative along ``tangents``, in one pass.

    Args:
      fun: the function to differentiate. Its arguments and its result are arrays,
        Python scalars or pytrees of them.
      primals: a tuple or list with one entry per positional argument of ``fun``: the
        point at which to differentiate.
      tangents: a tuple or list of the same structure as ``primals``; each leaf has its
        primal's shape and dtype (integer and bool leaves are ignored: their tangent is
        zero). The directional derivative is taken along these.
      has_aux: when True, ``fun`` returns a pair ``(output, aux)``; ``aux`` is returned as
        it is, not differentiated.

    Returns:
      ``(primals_out, tangents_out)``, or ``(primals_out, tangents_out, aux)`` with
      ``has_aux``: ``tangents_out = J(primals) · tangents`` has the structure of the output.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> y, t = ft.jvp(fnp.sin, (0.0,), (2.0,))
    >>> float(y), float(t)
    (0.0, 2.0)
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples or lists, got "
                        f"{type(primals).__name__} and {type(tangents).__name__}")
    p_flat, p_tree = tree_flatten(tuple(primals))
    t_flat, t_tree = tree_flatten(tuple(key_tangent_words(tuple(primals), tuple(tangents))))
    if p_tree != t_tree:
        raise TypeError(f"jvp: primal structure {p_tree} and tangent structure {t_tree} differ")
    p_flat = [as_array(x) for x in p_flat]
    # a float0 tangent (JAX's, for integer and bool primals) is a zero of the primal's type
    t_flat = [np.zeros(np.shape(t), get_aval(p).dtype)
              if getattr(t, "dtype", None) == FLOAT0 and dtype_kind(get_aval(p).dtype) not in "fc"
              else as_array(t) for p, t in zip(p_flat, t_flat)]
    for i, (p, t) in enumerate(zip(p_flat, t_flat)):
        _check_tangent(i, p, t)
    flat_fun, out_tree, aux = _flatten_with_aux(fun, p_tree, has_aux)
    jaxpr, consts, _ = trace_flat(flat_fun, p_flat, name="jvp", detaches=True)
    ts = [t if dtype_kind(get_aval(p).dtype) in "fc" else Zero(get_aval(p))
          for p, t in zip(p_flat, t_flat)]
    outs, touts = jvp_eval(jaxpr, consts, p_flat, ts)
    n = out_tree().num_leaves
    outs = [_out(o) for o in outs]
    touts = [_out(instantiate(t)) for t in touts[:n]]
    t_out = key_float0(tree_unflatten(out_tree(), touts))        # JAX's key tangent
    res = (tree_unflatten(out_tree(), outs[:n]), t_out)
    return res + (aux(outs[n:]),) if has_aux else res


def _flatten_with_aux(fun, in_tree, has_aux):
    """Like ``flatten_fun``, but the aux output's array leaves are extra outputs of the
    traced function, so a transform evaluates them like any output (concrete values,
    or tracers of the enclosing trace) instead of leaking the tracing's tracers.
    ``aux(extra_outputs)`` rebuilds the aux pytree."""
    flat_fun, out_tree = flatten_fun(fun, in_tree, has_aux)
    if not has_aux:
        return flat_fun, out_tree, None
    box = {}

    def f(*xs):
        outs = flat_fun(*xs)
        leaves, box["tree"] = tree_flatten(flat_fun.aux())
        box["arr"] = [isinstance(x, (Tracer, np.ndarray, np.generic, float, int, complex))
                      and not isinstance(x, bool) for x in leaves]
        box["other"] = [None if a else x for x, a in zip(leaves, box["arr"])]
        return list(outs) + [x for x, a in zip(leaves, box["arr"]) if a]

    def aux(extra):
        it = iter(extra)
        leaves = [_out(next(it)) if a else o for a, o in zip(box["arr"], box["other"])]
        return tree_unflatten(box["tree"], leaves)

    return f, out_tree, aux


def _linearize_flat(fun, args, diff_argnums, has_aux, fname, skip_ints=False):
    """Trace and linearize ``fun`` w.r.t. the leaves of ``args[diff_argnums]``.

    With ``skip_ints`` integer and bool leaves are not differentiated (vjp, as
    in JAX: their cotangent is zero) instead of raising."""
    in_flat, in_tree = tree_flatten(tuple(args))
    # which leaves are differentiated
    mask = []
    for i, sub in enumerate(in_tree.child_defs):
        mask += [i in diff_argnums] * sub.num_leaves
    # a leaf not differentiated may be anything (a function, a string): passed through
    in_flat = [as_array(x) if m else _as_array_or_self(x) for x, m in zip(in_flat, mask)]
    if skip_ints:
        mask = [m and _kind(x) in "fc" for x, m in zip(in_flat, mask)]
    for i, (x, m) in enumerate(zip(in_flat, mask)):
        if m and _kind(x) not in "fc":
            raise TypeError(f"{fname} requires real- or complex-valued inputs (floating dtype) "
                            f"to differentiate, but input leaf {i} has dtype {get_aval(x).dtype}; "
                            "convert it with .astype(float) or exclude it with argnums")
    flat_fun, out_tree, aux = _flatten_with_aux(fun, in_tree, has_aux)
    _check_leaves([x for x, m in zip(in_flat, mask) if m])
    n_box = []

    def counted(*xs):
        outs = flat_fun(*xs)
        n_box.append(out_tree().num_leaves)
        return outs

    outs, lin = linearize_fun(counted, in_flat, mask, _FirstOutputs(n_box), name=fname)
    n = n_box[0]
    return in_flat, in_tree, mask, outs[:n], out_tree(), lin, aux(outs[n:]) if has_aux else None


def _as_array_or_self(x):
    try:
        return as_array(x)
    except TypeError:
        return x


def _kind(x):
    """The dtype kind of a leaf, without building its abstract value."""
    dt = getattr(x, "dtype", None)
    return dtype_kind(dt) if dt is not None else dtype_kind(get_aval(x).dtype)


class _FirstOutputs:
    """How many outputs get tangents, known only once the function has run."""
    __slots__ = ("box",)

    def __init__(self, box):
        self.box = box

    def __index__(self):
        return self.box[0]


def _check_leaves(flat):
    for i, x in enumerate(flat):
        if not isinstance(x, (Tracer, np.ndarray, np.generic, bool, int, float, complex)):
            raise TypeError(f"argument {i} of type {type(x).__name__} is not a valid "
                            f"array: {x!r:.60}")


@api_boundary
def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False
              ) -> tuple[Any, ...]:
    """``fun(*primals)`` and a function evaluating its derivative at ``primals`` along any tangent.

    The forward pass runs once; what the derivative needs is saved, so each call of
    ``f_jvp`` evaluates only the linear part (cheaper than a new ``jvp`` per tangent).

    Args:
      fun: the function to differentiate (arrays, scalars or pytrees in and out).
      *primals: the point, one value per positional argument of ``fun``; every leaf
        must have a floating (or complex) dtype.

      has_aux: when True, ``fun`` returns a pair ``(output, aux)``; ``aux`` is returned
        as it is, not differentiated.

    Returns:
      ``(primals_out, f_jvp)``, or ``(primals_out, f_jvp, aux)`` with ``has_aux``:
      ``f_jvp(*tangents)`` takes tangents of the primals' structure, shapes and dtypes
      and returns ``J(primals) · tangents`` in the output's structure.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> y, f_jvp = ft.linearize(fnp.sin, 0.0)
    >>> float(f_jvp(3.0))
    3.0
    """
    in_flat, in_tree, mask, outs, out_tree, lin, aux = _linearize_flat(
        fun, primals, tuple(range(len(primals))), has_aux, "linearize")
    # a Partial over the residuals: a pytree (as JAX's), so jit can return and take it
    f_jvp = Partial(_JvpRule(lin.jaxpr, in_flat, in_tree, out_tree), list(lin.residuals))
    out = tree_unflatten(out_tree, [_out(o) for o in outs])
    return (out, f_jvp, aux) if has_aux else (out, f_jvp)


class _JvpRule:
    """What a linearize function keeps besides its residuals: the linear jaxpr and the
    input and output structures. Called as ``rule(residuals, *tangents)``; compared by
    identity (a jit cache key)."""

    def __init__(self, jaxpr, in_flat, in_tree, out_tree):
        self.jaxpr, self.in_tree, self.out_tree = jaxpr, in_tree, out_tree
        self.in_avals = [get_aval(x) for x in in_flat]

    def __call__(self, residuals, *tangents):
        t_flat, t_tree = tree_flatten(tuple(tangents))
        if t_tree != self.in_tree:
            raise TypeError(f"linearize: tangent structure {t_tree} differs from the "
                            f"primals' {self.in_tree}")
        t_flat = [as_array(t) for t in t_flat]
        for i, (a, t) in enumerate(zip(self.in_avals, t_flat)):
            _check_tangent(i, a, t)
        touts = LinearJaxpr(self.jaxpr, residuals)(*t_flat)
        return tree_unflatten(self.out_tree, [_out(t) for t in touts])


def _make_vjp(in_flat, in_tree, mask, outs, out_tree, lin, nargs, plan=None):
    """The vjp function: a ``tree_util.Partial`` of a static ``_VjpRule`` over the
    residuals, so it is a pytree (as JAX's) and can be returned from and passed to ``jit``."""
    rule = _VjpRule(lin, in_flat, in_tree, mask, outs, out_tree, nargs, plan)
    return Partial(rule, list(lin.residuals))


class _VjpRule:
    """What a vjp function keeps besides its residuals: the linear jaxpr and the
    structures, shapes and dtypes of the inputs and outputs. Called as
    ``rule(residuals, cotangent)``; compared by identity (a jit cache key)."""

    def __init__(self, lin, in_flat, in_tree, mask, outs, out_tree, nargs, plan=None):
        self.jaxpr, self.all_linear, self.plan = lin.jaxpr, lin.all_linear, plan
        self.in_tree, self.mask, self.out_tree, self.nargs = in_tree, mask, out_tree, nargs
        self.out_avals = [get_aval(o) for o in outs]
        self.lin_avals = [get_aval(x) for x, m in zip(in_flat, mask) if m]
        self.zeros = [None if m else (get_aval(x), isinstance(x, Tracer))
                      for x, m in zip(in_flat, mask)]

    def __call__(self, residuals, cotangent):
        ct_flat, ct_tree = tree_flatten(cotangent)
        if ct_tree != self.out_tree:
            raise TypeError(f"vjp: cotangent structure {ct_tree} does not match the output "
                            f"structure {self.out_tree}")
        # an integer or bool output's cotangent may be JAX's float0 zeros
        ct_flat = [np.zeros(a.shape, a.dtype) if dtype_kind(a.dtype) not in "fc"
                   and getattr(c, "dtype", None) == FLOAT0 and np.shape(c) == a.shape
                   else as_array(c) for c, a in zip(ct_flat, self.out_avals)]
        for i, (c, a) in enumerate(zip(ct_flat, self.out_avals)):
            ca = get_aval(c)
            if ca.shape != a.shape or (dtype_kind(a.dtype) in "fc" and ca.dtype != a.dtype):
                raise TypeError(f"vjp: cotangent {i} has type {ca.str_short()} but the primal "
                                f"output has type {a.str_short()}; they must match")
        args = [UndefinedPrimal(a) for a in self.lin_avals]
        ct_flat = _parts(self.plan, ct_flat)
        cts = _summed(self.plan, backward_pass(self.jaxpr, list(residuals), args, ct_flat,
                                               self.all_linear))
        it = iter(cts)
        leaves = [_out(instantiate(next(it))) if z is None else
                  np.zeros(z[0].shape, z[0].dtype) if z[1] else
                  _out(np.zeros(z[0].shape, z[0].dtype)) for z in self.zeros]
        return tuple(tree_unflatten(self.in_tree, leaves))[:self.nargs]


def _zeros_like(x):
    a = get_aval(x)
    return np.zeros(a.shape, a.dtype)


@api_boundary
def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """Reverse mode: ``fun(*primals)`` and a function pulling cotangents back to the inputs.

    Args:
      fun: the function to differentiate (arrays, scalars or pytrees in and out).
      *primals: the point, one value per positional argument of ``fun``. Integer and
        bool leaves are not differentiated: their cotangent is zero.
      has_aux: when True, ``fun`` returns a pair ``(output, aux)``; ``aux`` is returned
        as it is, not differentiated.

    Returns:
      ``(primals_out, vjp_fn)``, or ``(primals_out, vjp_fn, aux)`` with ``has_aux``.
      ``vjp_fn(cotangent)`` takes a cotangent of the output's structure, shapes and
      dtypes and returns a tuple with one cotangent per primal, ``cotangent · J(primals)``.
      It can be called many times; the forward pass is not repeated.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> y, f_vjp = ft.vjp(lambda x: x * 3.0, 1.0)
    >>> float(f_vjp(1.0)[0])
    3.0
    """
    in_flat, in_tree, mask, outs, out_tree, lin, aux = _linearize_flat(
        fun, primals, tuple(range(len(primals))), has_aux, "vjp", skip_ints=True)
    plan = reverse_mode_plan([x for x, m in zip(in_flat, mask) if m], outs, "vjp")
    vjp_fn = _make_vjp(in_flat, in_tree, mask, outs, out_tree, lin, len(primals), plan)
    out = tree_unflatten(out_tree, [_out(o) for o in outs])
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def check_argnums(argnums, fname):
    """At decoration time: ``argnums`` must be an int or a tuple/list of ints.

    >>> check_argnums(1.5, "grad")
    Traceback (most recent call last):
    ...
    TypeError: grad: argnums must be an int or a tuple of ints, got float 1.5
    """
    def is_int(a):
        return isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))
    if is_int(argnums) or (isinstance(argnums, (tuple, list)) and all(map(is_int, argnums))):
        return
    raise TypeError(f"{fname}: argnums must be an int or a tuple of ints, got "
                    f"{type(argnums).__name__} {argnums!r:.60}")


def value_and_grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
                   has_aux: bool = False, holomorphic: bool = False,
                   allow_int: bool = False) -> Callable[..., Any]:
    """A function returning both ``fun(*args)`` and its gradient, from one forward and one
    backward pass.

    Args:
      fun: a function whose output is a real or complex scalar (shape ``()``). Its
        arguments may be arrays, Python scalars or pytrees of them; keyword arguments
        are passed through and not differentiated.
      argnums: which positional argument(s) to differentiate with respect to: an int,
        or a tuple of ints (the gradient is then a tuple, in that order). Negative
        numbers count from the end. The differentiated leaves must be floating.
      has_aux: when True, ``fun`` returns a pair ``(output, aux)``; only ``output`` is
        differentiated and ``aux`` is returned with it.
      holomorphic: as in ``grad``.
      allow_int: as in ``grad``.

    Returns:
      A function with ``fun``'s arguments returning ``(value, gradient)``, or
      ``((value, aux), gradient)`` with ``has_aux``. The gradient has the structure,
      shapes and dtypes of the differentiated argument(s). It keeps ``fun``'s
      ``__name__`` and ``__doc__``.

    >>> import functrans as ft
    >>> v, g = ft.value_and_grad(lambda x: x * x)(3.0)
    >>> float(v), float(g)
    (9.0, 6.0)
    """
    # keep_metadata sets __wrapped__: inspect.signature (vmap's argument names) sees fun's
    return keep_metadata(api_boundary(_value_and_grad(fun, argnums, has_aux, holomorphic,
                                                      allow_int)), fun)


def _check_grad_output(oa, holomorphic):
    """JAX's rule: a real output, or with ``holomorphic=True`` a complex one."""
    if holomorphic:
        if dtype_kind(oa.dtype) != "c":
            raise TypeError(f"grad with holomorphic=True requires a complex output, got "
                            f"dtype {oa.dtype}")
    elif dtype_kind(oa.dtype) != "f":
        hint = (" (for holomorphic differentiation pass holomorphic=True; for a real "
                "function take fnp.real or fnp.abs first)" if dtype_kind(oa.dtype) == "c" else "")
        raise TypeError(f"grad requires a real floating output, got dtype {oa.dtype}{hint}")


def _check_holomorphic_inputs(leaves):
    for x in leaves:
        dt = get_aval(x).dtype
        if dtype_kind(dt) != "c":
            raise TypeError(f"grad with holomorphic=True requires complex inputs, got dtype "
                            f"{dt}")


def _value_and_grad(fun, argnums, has_aux, holomorphic=False, allow_int=False):
    """value_and_grad's function without the api boundary (grad puts its own around it)."""
    check_callable(fun, "grad")
    check_argnums(argnums, "grad")
    simple = not has_aux and type(argnums) is int and argnums in (0, -1)

    def vg(*args, **kwargs):
        # the common call, one float array (or tracer) and no options: no pytree work
        if simple and not kwargs and len(args) == 1:
            x = args[0]
            if isinstance(x, (np.ndarray, Tracer)) and dtype_kind(x.dtype) in "fc" \
                    and not isinstance(x, np.ma.MaskedArray):   # as_array raises on that
                if holomorphic:
                    _check_holomorphic_inputs([x])
                return _value_and_grad_single(fun, x, holomorphic)
        if kwargs:
            f = lambda *a: fun(*a, **kwargs)  # noqa: E731
        else:
            f = fun
        single, nums = normalize_argnums(argnums, len(args), "grad")
        if holomorphic:
            _check_holomorphic_inputs(tree_flatten([args[i] for i in nums])[0])
        in_flat, in_tree, mask, outs, out_tree, lin, aux = _linearize_flat(
            f, args, nums, has_aux, "grad", skip_ints=allow_int)
        if len(outs) != 1 or out_tree.child_defs is not None:
            raise TypeError(f"grad requires a function returning a scalar, but it returned a "
                            f"pytree {out_tree}" + ("" if has_aux else
                                                    " (to return auxiliary data use has_aux=True)"))
        oa = get_aval(outs[0])
        if oa.shape != ():
            raise TypeError(f"grad requires a scalar output, got shape {oa.shape}; "
                            "use jacrev/vjp for non-scalar outputs")
        _check_grad_output(oa, holomorphic)
        plan = reverse_mode_plan([x for x, m in zip(in_flat, mask) if m], outs, "grad")
        cts = _summed(plan, backward_pass(lin.jaxpr, lin.residuals,
                                          [UndefinedPrimal(v.aval) for v in lin.jaxpr.invars],
                                          _parts(plan, [np.ones((), oa.dtype)]),
                                          lin.all_linear))
        it, at = iter(cts), 0
        per_arg = {}
        for i, sub in enumerate(in_tree.child_defs):
            if i in nums:   # an integer leaf (allow_int): JAX's float0 zeros
                per_arg[i] = tree_unflatten(sub, [   # typed as the primal: weak if it is
                    weakly(_out(instantiate(next(it))), get_aval(in_flat[at + j]).weak_type)
                    if mask[at + j]
                    else np.zeros(get_aval(in_flat[at + j]).shape, FLOAT0)
                    for j in range(sub.num_leaves)])
            at += sub.num_leaves
        g = per_arg[nums[0]] if single else tuple(per_arg[i] for i in nums)
        value = _out(outs[0])
        return ((value, aux), g) if has_aux else (value, g)

    return vg


def _value_and_grad_single(fun, x, holomorphic=False):
    """``value_and_grad(fun)(x)`` for one array argument: what ``vg`` does, without
    flattening trees around a single leaf."""
    tree = []

    def flat(v):
        out = fun(v)
        if isinstance(out, (Tracer, np.ndarray)):     # a leaf: the usual result
            return [out]
        leaves, t = tree_flatten(out)
        tree.append(t)
        return leaves

    outs, lin = linearize_fun(flat, [x], [True], name="grad", prune=False)
    if tree and (len(outs) != 1 or tree[0].child_defs is not None):
        raise TypeError(f"grad requires a function returning a scalar, but it returned a "
                        f"pytree {tree[0]} (to return auxiliary data use has_aux=True)")
    out = outs[0]
    oa = out.aval if isinstance(out, Tracer) else get_aval(out)
    if oa.shape != ():
        raise TypeError(f"grad requires a scalar output, got shape {oa.shape}; "
                        "use jacrev/vjp for non-scalar outputs")
    _check_grad_output(oa, holomorphic)
    plan = reverse_mode_plan([x], outs, "grad")
    jaxpr = lin.jaxpr
    ct, = _summed(plan, backward_pass(jaxpr, lin.residuals,
                                      [UndefinedPrimal(jaxpr.invars[0].aval)],
                                      _parts(plan, [np.array(1, oa.dtype)]), lin.all_linear))
    return _out(out), weakly(_out(instantiate(ct)), jaxpr.invars[0].aval.weak_type)


def grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
         has_aux: bool = False, holomorphic: bool = False,
         allow_int: bool = False) -> Callable[..., Any]:
    """The gradient of a scalar-valued function, as a new function (reverse mode).

    Args:
      fun: a function whose output is a real or complex scalar (shape ``()``). Its
        arguments may be arrays, Python scalars or pytrees of them; keyword arguments
        are passed through and not differentiated. Python control flow on argument
        values works outside ``jit``.
      argnums: which positional argument(s) to differentiate with respect to: an int
        (the default, 0: the first argument), or a tuple of ints (the result is then a
        tuple of gradients, in that order). Negative numbers count from the end. The
        differentiated leaves must be floating; convert integers with ``.astype(float)``.
      has_aux: when True, ``fun`` returns a pair ``(output, aux)``; only ``output`` is
        differentiated, and the new function returns ``(gradient, aux)``.
      holomorphic: as in JAX. False requires a real output; for complex inputs the
        gradient is JAX's ``df/dx - i df/dy`` (z = x + iy). True requires complex inputs
        and a complex output, and returns ``df/dz`` of a holomorphic ``fun``.
      allow_int: as in JAX: integer and bool leaves among the differentiated arguments
        are allowed and get zero gradients of dtype ``float0`` (``functrans.dtypes``),
        instead of raising TypeError.

    Returns:
      A function taking ``fun``'s arguments and returning the gradient of ``fun`` with
      respect to the ``argnums`` argument(s): the same structure, shapes and dtypes as
      those arguments. It keeps ``fun``'s ``__name__``, ``__qualname__``, ``__doc__``
      and ``__module__``, and ``__wrapped__`` is ``fun``.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> float(ft.grad(lambda x: x ** 2)(3.0))
    6.0
    >>> dx, dy = ft.grad(lambda x, y: x * y, argnums=(0, 1))(2.0, 5.0)
    >>> float(dx), float(dy)
    (5.0, 2.0)
    >>> g, aux = ft.grad(lambda x: (x ** 3, "note"), has_aux=True)(1.0)
    >>> float(g), aux
    (3.0, 'note')
    """
    vg = _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)  # g: the boundary

    def g(*args, **kwargs):
        (v, g_) = vg(*args, **kwargs)
        return (g_, v[1]) if has_aux else g_

    return keep_metadata(api_boundary(g), fun)


class ResidualReport:
    """What reverse mode keeps from the forward pass for the backward pass.

    ``count``, ``bytes``, and ``entries``: one ``(shape, dtype, source)`` per
    residual, where ``source`` is ``"argument i"`` when the residual is an
    input leaf itself (no extra memory) and ``"intermediate"`` otherwise.
    """

    def __init__(self, entries):
        self.entries = entries
        self.count = len(entries)
        self.bytes = sum(int(np.prod(s, dtype=np.int64)) * np.dtype(d).itemsize
                         for s, d, _ in entries)
        self.intermediate_bytes = sum(int(np.prod(s, dtype=np.int64)) * np.dtype(d).itemsize
                                      for s, d, src in entries if src == "intermediate")

    def __repr__(self):
        return f"ResidualReport(count={self.count}, bytes={self.bytes})"

    def __str__(self):
        lines = [f"{self.count} residuals, {self.bytes} bytes "
                 f"({self.intermediate_bytes} bytes of intermediates)"]
        for s, d, src in self.entries:
            lines.append(f"  {np.dtype(d).name}{list(s)}  {src}")
        return "\n".join(lines)


def residuals(fun: Callable[..., Any], *args: Any, argnums: int | Sequence[int] | None = None,
              has_aux: bool = False) -> ResidualReport:
    """Report the residuals reverse mode saves for ``fun`` at ``args`` (after dead-code
    elimination): their count, bytes, shapes and dtypes. ``argnums`` defaults to every
    argument with a floating dtype; ``has_aux``: ``fun`` returns ``(output, aux)``.

    >>> import functrans as ft, functrans.numpy as fnp, numpy as np
    >>> r = ft.residuals(lambda x: fnp.sin(x) * x, np.ones(3))
    >>> r.count, r.bytes
    (3, 72)
    """
    if argnums is None:
        nums = tuple(i for i, a in enumerate(args)
                     if all(dtype_kind(get_aval(as_array(x)).dtype) in "fc"
                            for x in tree_flatten(a)[0]))
    else:
        nums = normalize_argnums(argnums, len(args), "residuals")[1]
    in_flat, _, mask, _, _, lin, _ = _linearize_flat(fun, args, nums, has_aux, "residuals")
    entries = []
    for r in lin.residuals:
        a = get_aval(r)
        src = next((f"argument leaf {i}" for i, x in enumerate(in_flat) if x is r),
                   "intermediate")
        entries.append((a.shape, a.dtype, src))
    return ResidualReport(entries)
