"""User-defined derivative rules: ``custom_jvp`` and ``custom_vjp`` (the public module
``functrans.custom_derivatives`` gathers them with ``custom_gradient``,
``closure_convert`` and ``linear_call``).

Outside every transform a decorated function just runs. Inside one, the
function and its rules are traced into jaxprs and bound as one
``custom_jvp_call`` / ``custom_vjp_call`` equation (functrans/primitives/custom.py),
so the rule survives ``jit``, ``vmap`` and nesting. A custom_jvp rule is traced only
when the equation is differentiated, as in JAX (a plain jit or vmap never calls it): at
once under a trace that differentiates (jvp, grad, linearize), else deferred
(``jaxpr_ir.DeferredJaxpr``). Arguments listed in ``nondiff_argnums`` are passed to the
rules first, as Python values.

>>> import functrans as ft, functrans.numpy as fnp
>>> @ft.custom_jvp
... def f(x):
...     return fnp.sin(x)
>>> @f.defjvp
... def f_jvp(primals, tangents):
...     (x,), (t,) = primals, tangents
...     return fnp.sin(x), 2.0 * t
>>> float(ft.grad(f)(0.3))
2.0
"""
from __future__ import annotations

import functools
import inspect
import threading
from typing import Any, Callable

import numpy as np

from jaxpr_ir import ClosedJaxpr, DeferredJaxpr, Jaxpr, Var
from . import tracing
from .api_util import (FLOAT0, abstract_and_concrete, as_array, check_callable, flatten_fun,
                       key_float0, key_tangent_words)
from .primitives.base import tangent_aval
from .errors import UnexpectedTracerError
from .primitives.custom import (custom_jvp_call_p, custom_vjp_call_p, hoist_many,
                                insert_tangent_slots)
from .primitives.collectives import replicated_parts, replicated_sums
from .primitives.custom_self import custom_self_call_p
from .primitives.custom_values import (CustomVJPPrimal, SymbolicZero,  # noqa: F401
                                       bwd_cotangent_leaves, conform, custom_vjp_primal_tree_values,
                                       inexact, zero_from_primal, zero_leaf)
from .sharding import mesh_frames
from .shard_map_specs import check_replicated_cotangents, replicated_axes
from .tracing import Tracer, differentiating, get_aval, own_constants, trace_to_jaxpr
from .tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["custom_jvp", "custom_vjp", "SymbolicZero", "zero_from_primal", "CustomVJPPrimal",
           "custom_vjp_primal_tree_values"]


def _resolve_args(fun, args, kwargs):
    if not kwargs:
        return tuple(args)
    try:
        ba = inspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{getattr(fun, '__name__', 'fun')}: {e}") from None
    if ba.kwargs:
        raise TypeError(f"{getattr(fun, '__name__', 'fun')}: keyword-only arguments "
                        f"{sorted(ba.kwargs)} are not supported by custom_jvp/custom_vjp")
    return tuple(ba.args)


class _Split:
    """The arguments of one call split into static (nondiff) and differentiable ones."""

    def __init__(self, what, nondiff_argnums, args):
        n = len(args)
        for a in nondiff_argnums:
            if not -n <= a < n:
                raise TypeError(f"{what}: nondiff_argnums {a} out of range for a call with "
                                f"{n} positional argument(s)")
        self.args = args
        self.nd = sorted({a % n for a in nondiff_argnums})
        self.diff_idx = [i for i in range(n) if i not in self.nd]
        self.static = [args[i] for i in self.nd]
        flat, self.in_tree = tree_flatten(tuple(args[i] for i in self.diff_idx))
        self.flat = [as_array(x) for x in flat]
        self.arg_trees = [tree_flatten(args[i])[1] for i in self.diff_idx]

    def full(self, dargs):
        full = list(self.args)
        for i, v in zip(self.diff_idx, dargs):
            full[i] = v
        return full


# custom functions whose rules are being traced: a call of such a function from its
# own rule (``return f(x), ...`` is common) does not trace the rule again, which would
# never end. Per thread, like the trace stack: ``owners`` holds their ids, ``stack``
# (innermost last) what a self-call may be recorded as (``_self_call``).
_RULES_TRACING = threading.local()
# how many rule tracings of one function may nest through calls with other static
# arguments (each is one more order of differentiation through the rules)
_NESTED_RULES = 4


def _in_rule() -> set:
    s = getattr(_RULES_TRACING, "owners", None)
    if s is None:
        s = _RULES_TRACING.owners = set()
    return s


def _rule_stack() -> list:
    s = getattr(_RULES_TRACING, "stack", None)
    if s is None:
        s = _RULES_TRACING.stack = []
    return s


def _trace(fun, avals, vals, name, owner=None, split=None, sources=None):
    """Trace ``fun``; with ``owner`` it is one of that custom function's rules, and with
    ``split`` (the _Split and avals of the call the rule is for) the owner's calls from
    it with the same static arguments and types are recorded as ``custom_self_call``
    (custom_vjp's fwd and bwd and custom_jvp's rule: their self-calls are rebound as the
    custom equation when it is differentiated, and when bwd runs in the backward pass);
    otherwise they run the body inline. ``sources``: see ``tracing.Trace.sources``."""
    if owner is not None:
        _in_rule().add(id(owner))
        _rule_stack().append((id(owner), split))
    try:
        j, c, out_vals = trace_to_jaxpr(fun, avals, vals, name=name, in_sources=sources)
    finally:
        if owner is not None:
            _rule_stack().pop()
            if not any(o == id(owner) for o, _ in _rule_stack()):
                _in_rule().discard(id(owner))
    return ClosedJaxpr(j, c), out_vals


def _same_static(a, b):
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is y:
            continue
        try:
            if type(x) is not type(y) or not bool(x == y):
                return False
        except Exception:           # arrays and the like: only the same object
            return False
    return True


# attributes are underscored: jit's functools.update_wrapper copies a wrapped
# object's __dict__, and a plain ``fun`` would replace jit's own
class _CustomFunction:
    """What custom_jvp and custom_vjp share: wrapping ``fun``, binding as a method, and
    a call: outside every transform (or from the function's own rule) ``fun`` runs;
    inside one, ``fun`` is traced and ``_bind_traced`` records the custom equation."""

    _kind = ""          # "custom_jvp" or "custom_vjp"
    _no_rule = ""       # the AttributeError message while no rule is set, for format(name=)

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: tuple[int, ...] = (),
                 nondiff_argnames: tuple[str, ...] = ()) -> None:
        check_callable(fun, self._kind)
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._nondiff = tuple(nondiff_argnums) + _argnames_to_nums(fun, nondiff_argnames)
        self._rules = None
        self._symbolic_zeros = False

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def __getattr__(self, name: str) -> Any:
        # JAX's forward_attr: attributes of the wrapped function (``f.def_vmap`` on a
        # custom_vjp of a custom_batching.custom_vmap)
        if name.startswith("__") or name in ("_fun", "_nondiff", "_rules", "_symbolic_zeros"):
            raise AttributeError(name)
        return getattr(self._fun, name)

    def __repr__(self):
        # as jit's: the kind and the wrapped function's name
        return f"<{self._kind}({getattr(self._fun, '__name__', 'fun')})>"

    def __call__(self, *args, **kwargs):
        name = getattr(self._fun, "__name__", "fun")
        if self._rules is None:
            raise AttributeError(self._no_rule.format(name=name))
        args = _resolve_args(self._fun, args, kwargs)
        if not tracing.trace_depth():
            return self._fun(*args)       # no transform active
        if id(self) in _in_rule():
            return self._self_call(name, args)
        return self._custom_call(name, args)

    def _custom_call(self, name, args):
        """Trace ``fun`` and bind the custom equation (its rules traced too)."""
        s = _Split(self._kind, self._nondiff, args)
        flat_fun, out_tree = flatten_fun(lambda *d: self._fun(*s.full(d)), s.in_tree)
        avals, vals = abstract_and_concrete(s.flat)
        call, _ = _trace(flat_fun, avals, vals, f"{self._kind}({name})")
        otree = out_tree()
        return tree_unflatten(otree, self._bind_traced(name, s, call, otree, avals, vals))

    def _self_call(self, name, args):
        """A call from one of this function's own rules: a ``custom_self_call`` of the
        body where the innermost rule being traced is this function's fwd, bwd or JVP
        rule for a call with the same static arguments and types, else the body inline."""
        stack = _rule_stack()
        owner, outer = stack[-1] if stack else (None, None)
        if owner != id(self) or outer is None:
            return self._other_call(name, args)
        s0, avals0 = outer
        s = _Split(self._kind, self._nondiff, args)
        if s.in_tree != s0.in_tree or s.nd != s0.nd or not _same_static(s.static, s0.static):
            return self._other_call(name, args)
        avals, vals = abstract_and_concrete(s.flat)
        if [(a.shape, a.dtype) for a in avals] != [(a.shape, a.dtype) for a in avals0]:
            return self._other_call(name, args)
        flat_fun, out_tree = flatten_fun(lambda *d: self._fun(*s.full(d)), s.in_tree)
        call, _ = _trace(flat_fun, avals, vals, f"{self._kind}({name}) self-call")
        (cj,), consts = hoist_many([call])
        outs = custom_self_call_p.bind(*consts, *s.flat, call_jaxpr=cj,
                                       num_consts=len(consts), name=name)
        return tree_unflatten(out_tree(), outs)

    def _other_call(self, name, args):
        """A call from one of this function's rules with other static arguments or types
        (the implicit-function fixed point's bwd calls it on ``partial(rev_iter, f)``): a
        custom equation of its own, as in JAX, so that differentiating the rule uses its
        rules and not the body (a while_loop there has no reverse mode). Rules are traced
        when bound, not when transposed as JAX does, so each such call traces one more
        level; past _NESTED_RULES levels of this function the body runs inline."""
        if sum(o == id(self) for o, _ in _rule_stack()) >= _NESTED_RULES:
            return self._fun(*args)
        return self._custom_call(name, args)

    def _bind_traced(self, name, s, call, otree, avals, vals):
        """Trace the rules for the split arguments ``s`` and bind the call: flat outputs."""
        raise NotImplementedError


def _argnames_to_nums(fun, names) -> tuple[int, ...]:
    """``nondiff_argnames`` as positions in ``fun``'s signature (as JAX)."""
    names = (names,) if isinstance(names, str) else tuple(names)
    if not names:
        return ()
    params = list(inspect.signature(fun).parameters)
    missing = [n for n in names if n not in params]
    if missing:
        raise TypeError(f"nondiff_argnames {missing} are not parameters of "
                        f"{getattr(fun, '__name__', 'fun')}{inspect.signature(fun)}")
    return tuple(params.index(n) for n in names)


class custom_jvp(_CustomFunction):
    """A function with a user-defined JVP rule (``@f.defjvp``).

    Use it where the automatic derivative is wrong, unstable or slow (a numerically
    safe formula, a derivative at a removable singularity). Outside every transform
    the function just runs; inside one, the rule gives its derivative (forward mode
    calls it; reverse mode transposes its tangent part, so the rule must be linear in
    the tangents).

    Args:
      fun: the function; positional arguments are arrays, scalars or pytrees of them
        (keyword arguments are bound to their positions; keyword-only ones are not
        supported). It keeps ``fun``'s ``__name__``, ``__doc__`` and ``__wrapped__``.
      nondiff_argnums: positions of arguments that are not differentiated and are
        passed to the rule first, as Python values (for example a function or a
        tolerance): a tuple of ints.
      nondiff_argnames: the same given by parameter names (added to nondiff_argnums).

    Define the rule with ``f.defjvp(rule)`` (usable as a decorator): it is called as
    ``rule(*nondiff_args, primals, tangents)``, ``primals`` and ``tangents`` being
    tuples with one entry per differentiable argument, and returns
    ``(primal_out, tangent_out)`` of the output's structure, shapes and dtypes.
    ``f.defjvps(*rules)`` instead gives one rule per argument,
    ``rule_i(tangent_i, primal_out, *primals)`` (None: that argument has no effect),
    whose terms are summed.

    >>> import functrans as ft
    >>> @ft.custom_jvp
    ... def double(x):
    ...     return 2.0 * x
    >>> double.defjvp(lambda p, t: (2.0 * p[0], 2.0 * t[0]))  # doctest: +ELLIPSIS
    <function ...>
    >>> float(ft.grad(double)(1.0))
    2.0
    """

    _kind = "custom_jvp"
    _no_rule = ("no JVP rule defined for custom_jvp function '{name}'; define one with "
                "@{name}.defjvp")

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Callable[..., Any]:
        """Set the rule ``jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)``;
        returns it, so it can be used as a decorator. ``symbolic_zeros`` is accepted
        for JAX's API: the rule is given arrays (see SymbolicZero) and may return
        SymbolicZero leaves for zero tangent outputs.

        >>> import functrans as ft, functrans.numpy as fnp
        >>> @ft.custom_jvp
        ... def relu(x):
        ...     return fnp.maximum(x, 0.0)
        >>> @relu.defjvp
        ... def relu_jvp(primals, tangents):
        ...     (x,), (t,) = primals, tangents
        ...     return relu(x), fnp.where(x > 0, t, 0.0)
        >>> float(ft.grad(relu)(2.0)), float(ft.grad(relu)(0.0))
        (1.0, 0.0)
        """
        self._rules = jvp
        return jvp

    def defjvps(self, *jvps: Callable[..., Any] | None) -> None:
        """One rule per argument: ``jvp_i(tangent_i, primal_out, *primals)`` gives
        argument i's contribution to the output tangent (None: zero); the contributions
        are summed. Not available with ``nondiff_argnums``.

        >>> import functrans as ft
        >>> @ft.custom_jvp
        ... def mul(x, y):
        ...     return x * y
        >>> mul.defjvps(lambda tx, out, x, y: tx * y, lambda ty, out, x, y: ty * x)
        >>> float(ft.grad(mul, argnums=1)(3.0, 4.0))
        3.0
        """
        if self._nondiff:
            raise TypeError("defjvps does not support nondiff_argnums; use defjvp")

        def rule(primals, tangents):
            out = self._fun(*primals)
            acc = None
            for fn, t, p in zip(jvps, tangents, primals):
                if fn is None:
                    continue
                term = fn(t, out, *primals)
                acc = term if acc is None else tree_map(lambda a, b: a + b, acc, term)
            if acc is None:
                acc = tree_map(lambda o: np.zeros(np.shape(o), get_aval(o).dtype), out)
            return out, acc
        self.defjvp(rule)

    def _bind_traced(self, name, s, call, otree, avals, vals):
        out_avals = call.out_avals
        n = len(s.flat)
        rule = self._rules

        def jvp_flat(*xs):
            ps = tree_unflatten(s.in_tree, xs[:n])
            ts = key_float0(tree_unflatten(s.in_tree, xs[n:]))    # a key's: float0, as JAX
            res = rule(*s.static, tuple(ps), tuple(ts))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(f"custom_jvp rule of '{name}' must return a pair "
                                f"(primal_out, tangent_out), got {type(res).__name__}")
            po, po_tree = tree_flatten(res[0])
            to, to_tree = tree_flatten(key_tangent_words(res[0], res[1]))
            for what, tree in (("primal output", po_tree), ("tangent output", to_tree)):
                if tree != otree:
                    raise TypeError(f"custom_jvp rule of '{name}': its {what} has structure "
                                    f"{tree} but the function returns {otree}")
            po = [conform("custom_jvp", name, f"primal output {i}", as_array(x), a)
                  for i, (x, a) in enumerate(zip(po, out_avals))]
            to = [np.zeros(tangent_aval(a).shape, tangent_aval(a).dtype) if zero_leaf(x) else
                  conform("custom_jvp", name, f"tangent output {i}", as_array(x),
                           tangent_aval(a)) for i, (x, a) in enumerate(zip(to, out_avals))]
            return po + to

        t_avals = [tangent_aval(a) for a in avals]
        label = f"custom_jvp rule({name})"
        if not differentiating():
            # as JAX, the rule is traced only when the equation is differentiated (a
            # plain jit or vmap never calls it)
            (cj,), consts = hoist_many([call])
            jj = _deferred_rule(jvp_flat, avals + t_avals, [get_aval(c) for c in consts],
                                label, self, (s, avals))
            return custom_jvp_call_p.bind(*consts, *s.flat, call_jaxpr=cj, jvp_jaxpr=jj,
                                          num_consts=len(consts), name=name)
        # a trace that differentiates: the rule is traced now, while the values it may
        # close over (tracers of this trace) are alive; they become operands
        jvp_c, _ = _trace(jvp_flat, avals + t_avals, vals + [None] * n, label,
                          owner=self, split=(s, avals))
        (cj, jj), consts = hoist_many([call, jvp_c])
        jj = insert_tangent_slots(jj, len(consts) + n,
                                   [tangent_aval(get_aval(c)) for c in consts])
        return custom_jvp_call_p.bind(*consts, *s.flat, call_jaxpr=cj, jvp_jaxpr=jj,
                                      num_consts=len(consts), name=name)


def _deferred_rule(jvp_flat, in_avals, const_avals, label, owner, split):
    """The custom_jvp rule ``jvp_flat`` (on primals and tangents) as a DeferredJaxpr taking
    (consts, primals, tangents of the consts, tangents): unread slots for the call's
    ``const_avals``. What the rule closes over stays its own constants."""
    n = len(in_avals) // 2

    def make():
        try:
            with own_constants():
                closed, _ = _trace(jvp_flat, in_avals, None, label, owner=owner, split=split)
        except UnexpectedTracerError as e:
            raise UnexpectedTracerError(
                f"{label} closes over a value of a trace that has ended: as in JAX the "
                "rule is traced only when its function is differentiated, here after the "
                "trace that called the function (a jit, make_jaxpr) had ended. Pass that "
                f"value to the function as an argument. ({e})") from None
        j = closed.jaxpr
        cs = [Var(a) for a in const_avals]
        ts = [Var(tangent_aval(a)) for a in const_avals]
        rule = ClosedJaxpr(Jaxpr(j.constvars, cs + j.invars[:n] + ts + j.invars[n:], j.eqns,
                                 j.outvars), closed.consts)
        return rule, not any(isinstance(c, Tracer) for c in closed.consts)
    return DeferredJaxpr(make, label)


class custom_vjp(_CustomFunction):
    """A function with a user-defined VJP: ``f.defvjp(fwd, bwd)``.

    Use it to choose what reverse mode saves and how it pulls cotangents back (a
    gradient clip, an implicit-function derivative, a cheaper backward pass). Outside
    every transform the function just runs. Forward mode (``jvp``, ``jacfwd``) applies
    the transpose of ``bwd``, which exists only when ``bwd`` is linear in the cotangent
    (an error says so otherwise).

    Args:
      fun: the function; positional arguments are arrays, scalars or pytrees of them
        (keyword arguments are bound to their positions; keyword-only ones are not
        supported). It keeps ``fun``'s ``__name__``, ``__doc__`` and ``__wrapped__``.
      nondiff_argnums: positions of arguments that are not differentiated and are
        passed to ``bwd`` first, as Python values: a tuple of ints.
      nondiff_argnames: the same given by parameter names (added to nondiff_argnums).

    Define the rule with ``f.defvjp(fwd, bwd)``: ``fwd`` takes ``fun``'s arguments and
    returns ``(output, residuals)`` (``residuals`` any pytree of arrays, saved for the
    backward pass); ``bwd(*nondiff_args, residuals, cotangent)`` returns a tuple with
    one cotangent per differentiable argument, each of its argument's structure (None
    for a zero cotangent, for a whole argument or a leaf).

    >>> import functrans as ft
    >>> @ft.custom_vjp
    ... def f(x):
    ...     return x * x
    >>> f.defvjp(lambda x: (x * x, x), lambda x, ct: (10.0 * ct,))
    >>> float(ft.grad(f)(3.0))
    10.0
    """

    _kind = "custom_vjp"
    _no_rule = ("no VJP defined for custom_vjp function '{name}'; define one with "
                "{name}.defvjp(fwd, bwd)")

    def defvjp(self, fwd: Callable[..., Any] | None, bwd: Callable[..., Any] | None,
               symbolic_zeros: bool = False) -> None:
        """Set the forward function ``fwd(*args) -> (output, residuals)`` and the backward
        function ``bwd(*nondiff_args, residuals, cotangent) -> tuple of cotangents``.
        With ``symbolic_zeros`` (JAX's API) fwd's differentiable argument leaves are
        CustomVJPPrimal records (``perturbed`` always True), bwd is given array
        cotangents and may return SymbolicZero leaves.

        >>> import functrans as ft, functrans.numpy as fnp
        >>> @ft.custom_vjp
        ... def clip_gradient(x):
        ...     return x
        >>> clip_gradient.defvjp(lambda x: (x, None), lambda _, ct: (fnp.clip(ct, -1.0, 1.0),))
        >>> float(ft.grad(lambda x: 5.0 * clip_gradient(x))(2.0))
        1.0
        """
        self._rules = None if fwd is None else (fwd, bwd)
        self._symbolic_zeros = bool(symbolic_zeros)

    def _bind_traced(self, name, s, call, otree, avals, vals):
        out_avals = call.out_avals
        fwd, bwd = self._rules
        box = {}

        wrap = self._symbolic_zeros

        def fwd_flat(*leaves):
            if wrap:
                leaves = [CustomVJPPrimal(x, True) for x in leaves]
            res = fwd(*s.full(tree_unflatten(s.in_tree, leaves)))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(f"custom_vjp fwd of '{name}' must return a pair "
                                f"(output, residuals), got {type(res).__name__}")
            out, out_t = tree_flatten(res[0])
            if out_t != otree:
                raise TypeError(f"custom_vjp fwd of '{name}' returned an output of structure "
                                f"{out_t}, but the function returns {otree}")
            out = [conform("custom_vjp fwd", name, f"output {i}", as_array(x), a)
                   for i, (x, a) in enumerate(zip(out, out_avals))]
            r, box["res_tree"] = tree_flatten(res[1])
            box["outs"] = out + [as_array(x) for x in r]   # what bwd's inputs stand for
            return box["outs"]

        fwd_c, fwd_vals = _trace(fwd_flat, avals, vals, f"custom_vjp fwd({name})",
                                    owner=self, split=(s, avals), sources=list(s.flat))
        n_out = len(out_avals)
        res_avals = fwd_c.out_avals[n_out:]
        res_vals = list(fwd_vals[n_out:])
        res_tree = box["res_tree"]
        nres = len(res_avals)
        ndiff = len(s.diff_idx)
        arg_avals = [avals]

        def bwd_flat(*xs):
            res = tree_unflatten(res_tree, xs[:nres])
            # an integer or key output's cotangent is float0 zeros, as JAX gives bwd
            ct = key_float0(tree_unflatten(otree, [
                x if inexact(a) else np.zeros(a.shape, FLOAT0)
                for x, a in zip(xs[nres:], out_avals)]))
            cts = bwd(*s.static, res, ct)
            if isinstance(cts, list) and len(cts) == ndiff:
                cts = tuple(cts)
            if not isinstance(cts, tuple) or len(cts) != ndiff:
                got = (f"a {type(cts).__name__} of length {len(cts)}"
                       if isinstance(cts, (tuple, list)) else f"a {type(cts).__name__}")
                raise TypeError(
                    "Custom VJP bwd rule must produce an output with the same container "
                    f"(pytree) structure as the args tuple of the primal function: bwd of "
                    f"'{name}' must return a tuple with one cotangent per differentiable "
                    f"argument ({ndiff}), got {got}")
            return bwd_cotangent_leaves(name, s, arg_avals[0], cts)

        ct_avals = [tangent_aval(a) for a in out_avals]
        outs = box["outs"]      # a cotangent is typed as its output, a residual as itself
        bwd_flat = _jax_typed_bwd(bwd_flat, list(s.flat), outs[:n_out], nres, name)
        bwd_c, _ = _trace(bwd_flat, list(res_avals) + ct_avals, res_vals + [None] * n_out,
                          f"custom_vjp bwd({name})", owner=self, split=(s, avals),
                          sources=outs[n_out:] + outs[:n_out])
        (cj, fj, bj), consts = hoist_many([call, fwd_c, bwd_c])
        return custom_vjp_call_p.bind(*consts, *s.flat, call_jaxpr=cj, fwd_jaxpr=fj,
                                      bwd_jaxpr=bj, num_consts=len(consts), name=name)


def _jax_typed_bwd(bwd_flat, args, outs, nres, name):
    """check_rep=True body: bwd gets the sum of a replicated cotangent's parts, returns parts."""
    rep_out = replicated_axes(outs, f"custom_vjp '{name}'")
    if rep_out is None:
        return bwd_flat
    size = mesh_frames()[-1].mesh.axis_size
    rep_in = replicated_axes(args, name)
    div = [int(np.prod([size(a) for a in ax])) for ax in rep_in]
    return lambda *xs: replicated_parts((div, None), check_replicated_cotangents(rep_in, bwd_flat(
        *xs[:nres], *replicated_sums((None, rep_out), list(xs[nres:]))), name))
