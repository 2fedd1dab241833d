"""``lax.custom_root``: a root found by any solver, differentiated implicitly (as
``jax.lax.custom_root``), composed as a ``custom_jvp`` whose rule never looks inside
the solver.

If ``f(m, x*(m)) = 0`` then ``∂ₘf + ∂ₓf ∂x* = 0``, so ``dx* = -(∂ₓf)⁻¹ ∂ₘf[dm]``:
the JVP takes the JVP of ``f`` in what it closes over (``m``) at the root and hands
it to ``tangent_solve(g, y)``, which solves the linear ``g(t) = y`` for ``g = ∂ₓf``
(``f``'s own closure, its tangent zero there). Reverse mode transposes that
tangent computation, so ``tangent_solve`` must be transposable: an expression
linear in ``y`` (``y / g(1.0)`` for a scalar) or a ``lax.custom_linear_solve``.

The closed-over values of ``f``, ``solve`` and the tangent solve are traced out of
the three functions and passed to the ``custom_jvp`` function as arguments, so
derivatives reach them (a custom_jvp's rule covers only its explicit arguments).

>>> import numpy as np
>>> from functrans import grad
>>> def newton(f, x):
...     for _ in range(30):
...         x = x - f(x) / grad(f)(x)
...     return x
>>> def sqrt(a):
...     return custom_root(lambda x: x * x - a, 1.0, newton, lambda g, y: y / g(1.0))
>>> round(float(grad(sqrt)(4.0)), 12)
0.25
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from jaxpr_ir import dtype_kind

from .custom_derivatives import custom_jvp
from .primitives.base import Zero, instantiate, tangent_aval
from .primitives.control_flow_common import hoist, trace_closed
from .primitives.elementwise import convert_element_type, neg
from .tracing import Tracer, eval_jaxpr, get_aval
from .transforms.jvp import jvp_eval
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["custom_root"]


class _RootSpec:
    """The traced pieces of one ``custom_root`` call (a static argument: compared by
    identity). ``f``, ``solve`` and ``l_and_s`` are const-free bodies taking their
    consts first; ``counts`` the numbers of those consts; ``n`` the solution's leaves."""

    def __init__(self, f, solve, l_and_s, counts, n):
        self.f, self.solve, self.l_and_s, self.counts, self.n = f, solve, l_and_s, counts, n


def _parts(spec, args):
    nf, ns, nl = spec.counts
    return (list(args[:nf]), list(args[nf:nf + ns]), list(args[nf + ns:nf + ns + nl]),
            list(args[nf + ns + nl:]))


def _root_call(spec: _RootSpec, *args: Any) -> tuple:
    _, s_consts, _, guess = _parts(spec, args)
    return tuple(eval_jaxpr(spec.solve.jaxpr, [], s_consts + guess))


_root = custom_jvp(_root_call, nondiff_argnums=(0,))


def _root_jvp(spec, primals, tangents):
    # dx* = -(∂ₓf)⁻¹ [∂ₘf dm] at the root; aux outputs have no derivative
    f_consts, _, l_consts, _ = _parts(spec, primals)
    f_dots = _parts(spec, tangents)[0]
    outs = _root(spec, *primals)
    x = list(outs[:spec.n])
    zeros = [Zero(tangent_aval(get_aval(v))) for v in x]
    _, rhs = jvp_eval(spec.f.jaxpr, [], f_consts + x, list(f_dots) + zeros)
    rhs = [instantiate(r) for r in rhs]
    x_dot = eval_jaxpr(spec.l_and_s.jaxpr, [], l_consts + x + rhs)
    aux_dot = [np.zeros(np.shape(o), get_aval(o).dtype) for o in outs[spec.n:]]
    return outs, tuple([neg(t) for t in x_dot] + aux_dot)


_root.defjvp(_root_jvp)


def _leaves_like(v, tree, avals, what):
    leaves, t = tree_flatten(v)
    if t != tree:
        raise TypeError(f"custom_root: {what} returns structure {t}, but initial_guess has "
                        f"structure {tree}")
    out = []
    for i, (x, a) in enumerate(zip(leaves, avals)):
        xa = get_aval(x)
        if xa.shape != a.shape:
            raise TypeError(f"custom_root: {what} leaf {i} has shape {xa.shape} but "
                            f"initial_guess's is {a.shape}")
        out.append(x if xa.dtype == a.dtype else convert_element_type(x, a.dtype))
    return out


def _trace(fun, avals, what):
    return hoist(trace_closed(fun, avals, name=f"custom_root {what}"))


def custom_root(f: Callable[[Any], Any], initial_guess: Any,
                solve: Callable[[Callable, Any], Any],
                tangent_solve: Callable[[Callable, Any], Any], has_aux: bool = False) -> Any:
    """The root ``x`` of ``f(x) = 0`` that ``solve(f, initial_guess)`` finds, with the
    derivative of the implicit function (as ``jax.lax.custom_root``).

    f: the function whose root is sought (a pytree like ``initial_guess`` to one like
    it); its closed-over values are what the root is differentiated with respect to.
    initial_guess: the starting point, passed to ``solve`` (no derivative flows from it).
    solve: ``solve(f, initial_guess) -> x`` (``(x, aux)`` with ``has_aux``), any Python
    or lax code; it is never differentiated.
    tangent_solve: ``tangent_solve(g, y) -> t`` solving the linear ``g(t) = y`` (``g``
    is ``f``'s derivative at the root); for reverse mode it must be linear in ``y``:
    ``lambda g, y: y / g(1.0)`` for a scalar, or a ``lax.custom_linear_solve``.
    has_aux: ``solve`` returns ``(x, aux)``; so does this function, aux without
    derivative.

    >>> import numpy as np
    >>> x = custom_root(lambda x: x ** 3 - 8.0, 1.0,
    ...                 lambda f, x: 2.0, lambda g, y: y / g(1.0))
    >>> float(x)
    2.0
    """
    g_leaves, tree = tree_flatten(initial_guess)
    avals = [get_aval(v) for v in g_leaves]
    for i, a in enumerate(avals):
        if dtype_kind(a.dtype) not in "fc":
            raise TypeError(f"custom_root: initial_guess must hold floating or complex "
                            f"arrays, leaf {i} is {a.str_short()}")
    n = len(avals)

    def f_flat(*xs):
        return _leaves_like(f(tree_unflatten(tree, list(xs))), tree, avals, "f")
    f_body, f_consts = _trace(f_flat, avals, "f")
    aux_box = []

    def solve_flat(*xs):
        out = solve(f, tree_unflatten(tree, list(xs)))
        if has_aux and not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError("custom_root: with has_aux=True, solve must return a pair "
                            f"(x, aux), got {type(out).__name__}")
        x, aux = out if has_aux else (out, None)
        aux_leaves, aux_tree = tree_flatten(aux)
        aux_box.append(aux_tree)
        return _leaves_like(x, tree, avals, "solve") + aux_leaves
    s_body, s_consts = _trace(solve_flat, avals, "solve")

    def l_and_s(*xs):
        # tangent_solve(∂ₓf at x, y). f's closure enters ∂ₓf as it is (no
        # stop_gradient): it becomes l_and_s's consts, arguments of the custom_jvp
        # function, so a second derivative sees how ∂ₓf moves with it (as JAX's
        # linearize_and_solve); only its tangent here is zero
        x, y = list(xs[:n]), tree_unflatten(tree, list(xs[n:]))
        fixed = list(f_consts)
        zeros = [Zero(tangent_aval(get_aval(c))) for c in f_consts]

        def g(t):
            ts = [v if isinstance(v, Tracer) and get_aval(v).dtype == a.dtype
                  else convert_element_type(v, a.dtype)
                  for v, a in zip(_leaves_like(t, tree, avals, "g's argument"), avals)]
            _, out = jvp_eval(f_body.jaxpr, [], fixed + x, zeros + ts)
            return tree_unflatten(tree, [instantiate(o) for o in out])
        return _leaves_like(tangent_solve(g, y), tree, avals, "tangent_solve")
    l_body, l_consts = _trace(l_and_s, avals + [tangent_aval(a) for a in avals],
                              "tangent_solve")
    spec = _RootSpec(f_body, s_body, l_body, (len(f_consts), len(s_consts), len(l_consts)), n)
    outs = _root(spec, *f_consts, *s_consts, *l_consts, *g_leaves)
    x = tree_unflatten(tree, list(outs[:n]))
    return (x, tree_unflatten(aux_box[0], list(outs[n:]))) if has_aux else x
