"""``custom_linear_solve``: a linear solve whose derivatives come from the linear map,
not from the solver (implicit differentiation, as ``jax.lax.custom_linear_solve``).

``custom_linear_solve *consts *b`` with params ``matvec``, ``vecmat``, ``solve``,
``transpose_solve`` (const-free ClosedJaxprs, ``vecmat``/``transpose_solve`` None when
no transpose solve was given) and ``num_consts``. Every body takes the same operands,
``(*consts, *v)``, reading only its own slot of the consts, so the transpose rule just
swaps ``matvec``/``vecmat`` and ``solve``/``transpose_solve``; ``solve`` is the call
body (jit inlines it), returning ``x`` and then any aux outputs.

Rules: ``A x = b``  =>  ``A dx = db - dA x`` (the JVP is one more linear solve, whose
``dA x`` is the JVP of ``matvec`` in its consts); the solve is linear in ``b``, and
its transpose is the solve of ``Aᵀ`` (``transpose_solve`` with ``vecmat``); batching
batches every body with ``b`` and the outputs batched.

>>> import numpy as np
>>> a = np.array([[2.0, 0.0], [0.0, 4.0]])
>>> x = custom_linear_solve(lambda v: a @ v, np.array([2.0, 2.0]),
...                         lambda mv, b: b / np.diag(a), symmetric=True)
>>> np.asarray(x).tolist()
[1.0, 0.5]
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from jaxpr_ir import dtype_kind

from ..tracing import checked, eval_jaxpr, get_aval
from ..transforms.jvp import jvp_eval
from ..tree_util import tree_flatten, tree_unflatten
from .base import (Primitive, Zero, aval, instantiate, is_undefined, move_batch_axis,
                   not_mapped_size, tangent_aval)
from .control_flow_common import (check_operands, check_types, hoist, no_consts, relist,
                                  trace_closed, transpose_closed, vmap_closed)
from .elementwise import neg, sub
from .linalg_common import bind_checked

__all__ = ["custom_linear_solve"]

linear_solve_p = Primitive("custom_linear_solve", multiple_results=True)
linear_solve_p.subjaxpr_params = ("matvec", "vecmat", "solve", "transpose_solve")
linear_solve_p.call_param = "solve"          # jit inlines the solver

_BODIES = ("matvec", "vecmat", "solve", "transpose_solve")


def _n_b(matvec):
    return len(matvec.out_avals)


def _linear_solve_aval(*avals, matvec, vecmat, solve, transpose_solve, num_consts):
    bodies = dict(zip(_BODIES, (matvec, vecmat, solve, transpose_solve)))
    for name, body in bodies.items():
        if body is not None:
            no_consts(f"custom_linear_solve: {name}", body)
            check_operands(f"custom_linear_solve ({name})", avals, body)
    b = avals[num_consts:]
    for name, body in (("matvec", matvec), ("vecmat", vecmat)):
        if body is not None:
            check_types(body.out_avals, b, lambda i, a, w, n=name: (
                f"custom_linear_solve: {n} output {i} has type {a} but b's leaf {i} is {w}"))
    n = len(b)
    check_types(solve.out_avals[:n], b, lambda i, a, w: (
        f"custom_linear_solve: solve output {i} has type {a} but b's leaf {i} is {w}"))
    return list(solve.out_avals)


def _linear_solve_impl(*args, solve, **_):
    return [np.asarray(o) for o in eval_jaxpr(solve.jaxpr, [], list(args))]


def _linear_solve_jvp(primals, tangents, **params):
    # A x = b  =>  A dx = db - dA x, with dA x the JVP of matvec in its consts at x
    nc, matvec = params["num_consts"], params["matvec"]
    n = _n_b(matvec)
    outs = linear_solve_p.bind(*primals, **params)
    x = outs[:n]
    consts, c_dots, b_dots = primals[:nc], tangents[:nc], list(tangents[nc:])
    rhs = b_dots
    if not all(type(t) is Zero for t in c_dots):
        zeros = [Zero(tangent_aval(aval(v))) for v in x]
        _, mv_dots = jvp_eval(matvec.jaxpr, [], list(consts) + list(x), list(c_dots) + zeros)
        rhs = [d if type(m) is Zero else (neg(m) if type(d) is Zero else sub(d, m))
               for d, m in zip(b_dots, mv_dots)]
    aux_zeros = [Zero(tangent_aval(aval(o))) for o in outs[n:]]
    if all(type(t) is Zero for t in rhs):
        return outs, [Zero(tangent_aval(aval(v))) for v in x] + aux_zeros
    x_dot = linear_solve_p.bind(*consts, *[instantiate(t) for t in rhs], **params)[:n]
    return outs, list(x_dot) + aux_zeros


def _linear_solve_transpose(cts, *args, matvec, vecmat, solve, transpose_solve, num_consts):
    if transpose_solve is None:
        raise TypeError("custom_linear_solve: reverse-mode differentiation needs "
                        "transpose_solve (or symmetric=True)")
    consts = args[:num_consts]
    if any(is_undefined(c) for c in consts):
        raise TypeError("custom_linear_solve: cannot transpose with respect to the "
                        "linear map's constants (they are not linear inputs)")
    n = _n_b(matvec)
    ct_x = cts[:n]
    if all(type(c) is Zero for c in ct_x):
        return [None] * num_consts + [Zero(a.aval) for a in args[num_consts:]]
    # x = A⁻¹ b  =>  b̄ = A⁻ᵀ x̄: the same primitive with the roles swapped
    ct_b = linear_solve_p.bind(*consts, *[instantiate(c) for c in ct_x], matvec=vecmat,
                               vecmat=matvec, solve=transpose_solve, transpose_solve=solve,
                               num_consts=num_consts)[:n]
    return [None] * num_consts + list(ct_b)


def _join(closeds):
    """Bodies with consts (None allowed, repeats shared) -> const-free bodies that all
    take (consts of each distinct body in turn, own inputs), and those consts."""
    uniq = []
    for c in closeds:
        if c is not None and all(c is not u for u in uniq):
            uniq.append(c)
    consts, bodies = [], {}
    for u in uniq:
        consts += list(u.consts)
    for k, u in enumerate(uniq):
        ins = []
        for m, other in enumerate(uniq):
            ins += list(u.jaxpr.constvars) if m == k else [v.aval for v in other.jaxpr.constvars]
        bodies[id(u)] = checked(relist(u.jaxpr, ins + list(u.jaxpr.invars)),
                                "custom_linear_solve (joining consts)")
    return [None if c is None else bodies[id(c)] for c in closeds], consts


def _linear_solve_batch(args, dims, *, num_consts, **bodies):
    # x is batched whenever anything is: batch b (at 0) and every body, outputs at 0
    size = not_mapped_size(args, dims)
    b = [move_batch_axis(v, d, 0, size) for v, d in zip(args[num_consts:], dims[num_consts:])]
    in_dims = list(dims[:num_consts]) + [0] * len(b)
    done = {}
    for name in _BODIES:
        body = bodies[name]
        if body is not None and id(body) not in done:
            done[id(body)] = vmap_closed(body, in_dims, size, [0] * len(body.out_avals))[0]
    new, consts = _join([None if bodies[k] is None else done[id(bodies[k])] for k in _BODIES])
    params = dict(zip(_BODIES, new))
    outs = linear_solve_p.bind(*consts, *args[:num_consts], *b,
                               num_consts=len(consts) + num_consts, **params)
    return outs, [0] * len(outs)


linear_solve_p.def_rules(abstract_eval=_linear_solve_aval, impl=_linear_solve_impl,
                         jvp=_linear_solve_jvp, transpose=_linear_solve_transpose,
                         batch=_linear_solve_batch)


# --------------------------------------------------------------------------- the API

def _leaves_of(v, tree, what):
    leaves, t = tree_flatten(v)
    if t != tree:
        raise TypeError(f"custom_linear_solve: {what} returns structure {t}, but b has "
                        f"structure {tree}")
    return leaves


def _trace_map(fun, tree, b_avals, what):
    """``fun`` (a pytree like b -> one like b) traced over b's leaves (consts kept)."""
    def flat(*leaves):
        return _leaves_of(fun(tree_unflatten(tree, list(leaves))), tree, what)
    return trace_closed(flat, b_avals, name=f"custom_linear_solve {what}")


def _as_fun(closed, tree):
    """A Python function evaluating a traced body (its consts included) on a pytree."""
    def fun(v):
        leaves, _ = tree_flatten(v)
        return tree_unflatten(tree, eval_jaxpr(closed.jaxpr, list(closed.consts), leaves))
    return fun


def _trace_solver(solve, matvec_fn, tree, b_avals, has_aux, what):
    """``solve(matvec_fn, b)`` traced: (body returning x's leaves then aux's, aux tree)."""
    box = []

    def flat(*leaves):
        out = solve(matvec_fn, tree_unflatten(tree, list(leaves)))
        if has_aux and not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"custom_linear_solve: with has_aux=True, {what} must return "
                            f"a pair (x, aux), got {type(out).__name__}")
        x, aux = out if has_aux else (out, None)
        aux_leaves, aux_tree = tree_flatten(aux)
        box.append(aux_tree)
        return _leaves_of(x, tree, what) + aux_leaves
    closed = trace_closed(flat, b_avals, name=f"custom_linear_solve {what}")
    return closed, box[0]


def _transposed_map(mv, tree, b_avals):
    """vecmat: the transpose of the traced linear ``matvec`` body."""
    hoisted, consts = hoist(mv)
    nc = len(consts)
    tj = transpose_closed(hoisted, [False] * nc + [True] * len(b_avals))

    def flat(*cts):
        return eval_jaxpr(tj.jaxpr, list(tj.consts), list(consts) + list(cts))
    return trace_closed(flat, b_avals, name="custom_linear_solve vecmat")


def custom_linear_solve(matvec: Callable[[Any], Any], b: Any,
                        solve: Callable[[Callable, Any], Any],
                        transpose_solve: Optional[Callable[[Callable, Any], Any]] = None,
                        symmetric: bool = False, has_aux: bool = False) -> Any:
    """Solve ``matvec(x) = b`` with ``solve(matvec, b)``, differentiated implicitly.

    As ``jax.lax.custom_linear_solve``: the derivatives never go through ``solve``.
    The JVP solves ``A dx = db - dA x`` with ``solve`` again (``dA x`` being the JVP
    of ``matvec`` in what it closes over); reverse mode needs the transpose solve,
    ``transpose_solve(vecmat, b)`` with ``vecmat`` the transpose of ``matvec`` (found
    by transposing it), or ``symmetric=True`` (``solve`` is then its own transpose and
    ``matvec`` its own ``vecmat``). ``b`` may be a pytree of floating arrays, ``x``
    has its structure and types; ``has_aux``: ``solve`` returns ``(x, aux)`` and so
    does this function (aux gets no derivative). Works under grad, jvp, vjp, vmap, jit.

    >>> import numpy as np
    >>> from functrans import grad
    >>> a = np.array([[3.0, 1.0], [1.0, 2.0]])
    >>> def f(b):
    ...     x = custom_linear_solve(lambda v: a @ v, b, lambda mv, r: np.linalg.solve(a, r),
    ...                             symmetric=True)
    ...     return x.sum()
    >>> np.round(np.asarray(grad(f)(np.ones(2))), 6).tolist()
    [0.2, 0.4]
    """
    b_leaves, tree = tree_flatten(b)
    b_avals = [get_aval(x) for x in b_leaves]
    if not b_avals:
        raise TypeError("custom_linear_solve: b has no array leaves")
    for i, a in enumerate(b_avals):
        if dtype_kind(a.dtype) not in "fc":
            raise TypeError(f"custom_linear_solve: b must hold floating or complex arrays, "
                            f"leaf {i} is {a.str_short()}")
    if symmetric and transpose_solve is None:
        transpose_solve = solve
    mv = _trace_map(matvec, tree, b_avals, "matvec")
    check_types(mv.out_avals, b_avals, lambda i, a, w: (
        f"custom_linear_solve: matvec output {i} has type {a} but b's leaf {i} is {w}"))
    sv, aux_tree = _trace_solver(solve, matvec, tree, b_avals, has_aux, "solve")
    vm = tr = None
    if transpose_solve is not None:
        vm = mv if symmetric else _transposed_map(mv, tree, b_avals)
        tr = sv if transpose_solve is solve and symmetric else _trace_solver(
            transpose_solve, _as_fun(vm, tree), tree, b_avals, has_aux, "transpose_solve")[0]
    (mv, vm, sv, tr), consts = _join([mv, vm, sv, tr])
    outs = bind_checked(linear_solve_p, *consts, *b_leaves, matvec=mv, vecmat=vm, solve=sv,
                        transpose_solve=tr, num_consts=len(consts))
    n = len(b_leaves)
    x = tree_unflatten(tree, list(outs[:n]))
    return (x, tree_unflatten(aux_tree, list(outs[n:]))) if has_aux else x
