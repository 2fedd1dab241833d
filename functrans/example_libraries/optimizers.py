"""First-order optimizers over pytrees, with jax.example_libraries.optimizers' API.

An optimizer is a triple ``(init_fn, update_fn, params_fn)``: ``init_fn(params)`` gives
an ``OptimizerState`` (a pytree, so it passes through ``jit``), ``update_fn(step, grads,
state)`` the next state and ``params_fn(state)`` the parameters. Step sizes may be numbers
or schedules ``step -> size``.

>>> import functrans as ft, functrans.numpy as fnp
>>> init, update, get_params = sgd(0.5)
>>> state = init({"w": fnp.asarray(2.0)})
>>> state = update(0, {"w": fnp.asarray(1.0)}, state)
>>> get_params(state)["w"].item()
1.5
"""
from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

import numpy as np

from .. import numpy as fnp
from ..tree_util import register_pytree_node, tree_flatten, tree_leaves, tree_map, tree_unflatten
from ..typing import Array, ArrayLike

__all__ = ["Optimizer", "OptimizerState", "optimizer", "sgd", "momentum", "nesterov",
           "adagrad", "rmsprop", "rmsprop_momentum", "adam", "adamax", "sm3",
           "constant", "exponential_decay", "inverse_time_decay", "polynomial_decay",
           "piecewise_constant", "make_schedule", "l2_norm", "clip_grads", "JoinPoint",
           "pack_optimizer_state", "unpack_optimizer_state", "Step", "Params", "Updates",
           "State", "InitFn", "UpdateFn", "ParamsFn"]


class OptimizerState(NamedTuple):
    """Flattened per-leaf optimizer states, the parameters' treedef and each state's
    treedef (registered as a pytree whose leaves are the state arrays)."""
    packed_state: Any
    tree_def: Any
    subtree_defs: Any


register_pytree_node(OptimizerState,
                     lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
                     lambda aux, children: OptimizerState(children[0], *aux))


class Optimizer(NamedTuple):
    init_fn: Callable
    update_fn: Callable
    params_fn: Callable


# JAX's type names of the optimizer triple's parts
Step = int
Params = Any
Updates = Any
State = Any
InitFn = Callable[[Params], OptimizerState]
UpdateFn = Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn = Callable[[OptimizerState], Params]

# JAX's names: a schedule maps the step number to a step size; what a function under
# ``@optimizer`` returns: (init(x0), update(i, g, state), get_params(state)) for one array
Schedule = Callable[[int], Any]
Triple = tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]


def optimizer(opt_maker: Callable[..., Any]) -> Callable[..., Optimizer]:
    """Lift a maker of per-array ``(init, update, get_params)`` to pytrees of arrays.

    >>> opt = sgd(1.0)
    >>> isinstance(opt, Optimizer)
    True
    """
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        def tree_init(x0_tree):
            x0_flat, tree = tree_flatten(x0_tree)
            flat_states = [tree_flatten(init(x0)) for x0 in x0_flat]
            return OptimizerState([s for s, _ in flat_states], tree,
                                  tuple(d for _, d in flat_states))

        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = opt_state
            grad_flat, grad_tree_def = tree_flatten(grad_tree)
            if grad_tree_def != tree:
                raise TypeError(f"optimizer update: the gradient's structure {grad_tree_def} "
                                f"differs from the parameters' {tree}")
            states = [tree_unflatten(d, s) for d, s in zip(subtrees, states_flat)]
            new = [tree_flatten(update(i, g, s)) for g, s in zip(grad_flat, states)]
            for (_, d), d_old in zip(new, subtrees):
                if d != d_old:
                    raise TypeError(f"optimizer update changed a state's structure: "
                                    f"{d_old} became {d}")
            return OptimizerState([s for s, _ in new], tree, subtrees)

        def tree_get_params(opt_state):
            states_flat, tree, subtrees = opt_state
            states = [tree_unflatten(d, s) for d, s in zip(subtrees, states_flat)]
            return tree_unflatten(tree, [get_params(s) for s in states])
        return Optimizer(tree_init, tree_update, tree_get_params)
    # the maker's parameters, but an Optimizer out (wraps copied the maker's annotations)
    tree_opt_maker.__annotations__ = {**opt_maker.__annotations__, "return": "Optimizer"}
    return tree_opt_maker


# ---- schedules

def constant(step_size: float) -> Schedule:
    """The schedule that is always ``step_size``.

    >>> constant(0.1)(7)
    0.1
    """
    def schedule(i):
        return step_size
    return schedule


def exponential_decay(step_size: float, decay_steps: int,
                      decay_rate: float) -> Schedule:
    """``step_size * decay_rate ** (i / decay_steps)``.

    >>> float(exponential_decay(1.0, 10, 0.5)(20))
    0.25
    """
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size: float, decay_steps: int, decay_rate: float,
                       staircase: bool = False) -> Schedule:
    """``step_size / (1 + decay_rate * i / decay_steps)`` (floored ratio if staircase).

    >>> float(inverse_time_decay(1.0, 10, 1.0, staircase=True)(15))
    0.5
    """
    def schedule(i):
        ratio = fnp.floor(i / decay_steps) if staircase else i / decay_steps
        return step_size / (1 + decay_rate * ratio)
    return schedule


def polynomial_decay(step_size: float, decay_steps: int, final_step_size: float,
                     power: float = 1.0) -> Schedule:
    """From ``step_size`` to ``final_step_size`` over ``decay_steps`` as
    ``(1 - i / decay_steps) ** power``, then constant.

    >>> float(polynomial_decay(1.0, 10, 0.0)(5)), float(polynomial_decay(1.0, 10, 0.0)(50))
    (0.5, 0.0)
    """
    def schedule(step_num):
        step_num = fnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries: ArrayLike, values: ArrayLike) -> Schedule:
    """``values[k]`` where ``k`` counts the boundaries strictly below the step.

    >>> s = piecewise_constant([10, 20], [1.0, 0.5, 0.1])
    >>> [float(s(i)) for i in (0, 10, 11, 25)]
    [1.0, 1.0, 0.5, 0.1]
    """
    boundaries = np.asarray(boundaries)
    values = fnp.asarray(values)
    if boundaries.ndim != 1 or values.ndim != 1:
        raise ValueError("piecewise_constant: boundaries and values must be sequences")
    if boundaries.shape[0] != values.shape[0] - 1:
        raise ValueError("piecewise_constant: need one more value than boundaries")

    def schedule(i):
        return values[fnp.sum(fnp.asarray(i) > boundaries)]
    return schedule


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A schedule from a number (constant) or a callable (returned as is).

    >>> make_schedule(0.3)(5)
    0.3
    """
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if np.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(f"make_schedule: expected a number or a callable, got "
                    f"{type(scalar_or_schedule).__name__}")


# ---- optimizers (each works on one array; `optimizer` maps it over pytrees)

@optimizer
def sgd(step_size: float | Schedule) -> Triple:
    """Plain stochastic gradient descent: ``x - step_size(i) * g``.

    >>> import numpy as np
    >>> opt = sgd(0.1)
    >>> state = opt.update_fn(0, 2.0, opt.init_fn(1.0))
    >>> round(float(np.ravel(opt.params_fn(state))[0]), 6)
    0.8
    """
    step_size = make_schedule(step_size)
    return (lambda x0: x0,
            lambda i, g, x: x - step_size(i) * g,
            lambda x: x)


@optimizer
def momentum(step_size: float | Schedule,
             mass: float) -> Triple:
    """Heavy-ball momentum: ``v = mass * v + g``; ``x - step * v``.

    >>> import numpy as np
    >>> opt = momentum(0.1, 0.9)
    >>> state = opt.update_fn(0, 2.0, opt.init_fn(1.0))
    >>> round(float(np.ravel(opt.params_fn(state))[0]), 6)
    0.8
    """
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity
    return (lambda x0: (x0, fnp.zeros_like(x0)), update, lambda state: state[0])


@optimizer
def nesterov(step_size: float | Schedule,
             mass: float) -> Triple:
    """Nesterov momentum: ``v = mass * v + g``; ``x - step * (mass * v + g)``.

    >>> import numpy as np
    >>> opt = nesterov(0.1, 0.9)
    >>> state = opt.update_fn(0, 2.0, opt.init_fn(1.0))
    >>> round(float(np.ravel(opt.params_fn(state))[0]), 6)
    0.62
    """
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity
    return (lambda x0: (x0, fnp.zeros_like(x0)), update, lambda state: state[0])


@optimizer
def adagrad(step_size: float | Schedule,
            momentum: float = 0.9) -> Triple:
    """Adagrad with momentum on the normalised gradient ``g / sqrt(sum g^2)``.

    >>> import numpy as np
    >>> opt = adagrad(0.1)
    >>> state = opt.update_fn(0, 2.0, opt.init_fn(1.0))
    >>> round(float(np.ravel(opt.params_fn(state))[0]), 6)
    0.99
    """
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + g * g
        inv_sqrt = fnp.where(g_sq > 0, 1.0 / fnp.sqrt(fnp.where(g_sq > 0, g_sq, 1.0)), 0.0)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m
    return (lambda x0: (x0, fnp.zeros_like(x0), fnp.zeros_like(x0)), update,
            lambda state: state[0])


@optimizer
def rmsprop(step_size: float | Schedule, gamma: float = 0.9,
            eps: float = 1e-8) -> Triple:
    """RMSProp: ``a = gamma a + (1 - gamma) g^2``; ``x - step * g / sqrt(a + eps)``.

    >>> import numpy as np
    >>> opt = rmsprop(0.1)
    >>> state = opt.update_fn(0, 2.0, opt.init_fn(1.0))
    >>> round(float(np.ravel(opt.params_fn(state))[0]), 6)
    0.683772
    """
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + g * g * (1.0 - gamma)
        return x - step_size(i) * g / fnp.sqrt(avg_sq_grad + eps), avg_sq_grad
    return (lambda x0: (x0, fnp.zeros_like(x0)), update, lambda state: state[0])


@optimizer
def rmsprop_momentum(step_size: float | Schedule, gamma: float = 0.9,
                     eps: float = 1e-8,
                     momentum: float = 0.9) -> Triple:
    """RMSProp whose scaled step feeds a momentum buffer.

    >>> import numpy as np
    >>> opt = rmsprop_momentum(0.1)
    >>> state = opt.update_fn(0, 2.0, opt.init_fn(1.0))
    >>> round(float(np.ravel(opt.params_fn(state))[0]), 6)
    0.683772
    """
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + g * g * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / fnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom
    return (lambda x0: (x0, fnp.zeros_like(x0), fnp.zeros_like(x0)), update,
            lambda state: state[0])


@optimizer
def adam(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999,
         eps: float = 1e-8) -> Triple:
    """Adam (Kingma & Ba) with bias-corrected first and second moments.

    >>> import numpy as np
    >>> opt = adam(0.1)
    >>> state = opt.update_fn(0, 2.0, opt.init_fn(1.0))
    >>> round(float(np.ravel(opt.params_fn(state))[0]), 6)
    0.9
    """
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * (g * g) + b2 * v
        m_hat = m / (1 - fnp.asarray(b1, fnp.asarray(m).dtype) ** (i + 1))
        v_hat = v / (1 - fnp.asarray(b2, fnp.asarray(v).dtype) ** (i + 1))
        return x - step_size(i) * m_hat / (fnp.sqrt(v_hat) + eps), m, v
    return (lambda x0: (x0, fnp.zeros_like(x0), fnp.zeros_like(x0)), update,
            lambda state: state[0])


@optimizer
def adamax(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999,
           eps: float = 1e-8) -> Triple:
    """AdaMax: Adam with the infinity norm, ``u = max(b2 u, |g|)``.

    >>> import numpy as np
    >>> opt = adamax(0.1)
    >>> state = opt.update_fn(0, 2.0, opt.init_fn(1.0))
    >>> round(float(np.ravel(opt.params_fn(state))[0]), 6)
    0.9
    """
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = fnp.maximum(b2 * u, fnp.abs(g))
        corrected = step_size(i) / (1 - fnp.asarray(b1, fnp.asarray(m).dtype) ** (i + 1))
        return x - corrected * m / (u + eps), m, u
    return (lambda x0: (x0, fnp.zeros_like(x0), fnp.zeros_like(x0)), update,
            lambda state: state[0])


@optimizer
def sm3(step_size: float | Schedule,
        momentum: float = 0.9) -> Triple:
    """SM3 (Anil et al.): one accumulator per axis; the second-moment estimate of an
    entry is the minimum over its axes' accumulators.

    >>> import numpy as np
    >>> opt = sm3(0.1)
    >>> state = opt.update_fn(0, 2.0, opt.init_fn(1.0))
    >>> round(float(np.ravel(opt.params_fn(state))[0]), 6)
    0.99
    """
    step_size = make_schedule(step_size)

    def along(v, axis, ndim):
        return fnp.reshape(v, tuple(v.shape[0] if j == axis else 1 for j in range(ndim)))

    # x and m keep the parameter's own shape (a 0-d one came back as shape (1,); JAX's
    # get_params restores it); the update works on their 1-d-at-least views
    def init(x0):
        x0 = fnp.asarray(x0)
        return x0, fnp.zeros_like(x0), [fnp.zeros(n, x0.dtype)
                                        for n in fnp.atleast_1d(x0).shape]

    def update(i, g, state):
        x, m, vs = state
        shape = x.shape
        x, m = fnp.atleast_1d(x), fnp.atleast_1d(m)
        g = fnp.reshape(g, x.shape)
        accum = functools.reduce(fnp.minimum, [along(v, j, x.ndim) for j, v in enumerate(vs)])
        accum = accum + g * g
        inv_sqrt = fnp.where(accum > 0, 1.0 / fnp.sqrt(fnp.where(accum > 0, accum, 1.0)), 0.0)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        vs = [fnp.max(accum, axis=tuple(k for k in range(x.ndim) if k != j))
              for j in range(x.ndim)]
        return fnp.reshape(x, shape), fnp.reshape(m, shape), vs
    return init, update, lambda state: state[0]


# ---- utilities

def l2_norm(tree: Any) -> Array:
    """The l2 norm of all leaves together.

    >>> import functrans.numpy as fnp
    >>> float(l2_norm({"a": fnp.asarray([3.0]), "b": fnp.asarray(4.0)}))
    5.0
    """
    leaves = tree_leaves(tree)
    return fnp.sqrt(sum(fnp.sum(fnp.asarray(x) ** 2) for x in leaves))


def clip_grads(grad_tree: Any, max_norm: float) -> Any:
    """The gradients scaled down so that their l2 norm is at most ``max_norm``.

    >>> import functrans.numpy as fnp
    >>> clip_grads([fnp.asarray([3.0, 4.0])], 1.0)[0].round(6).tolist()
    [0.6, 0.8]
    """
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: fnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
    """Marks where a parameter's optimizer-state subtree hangs in an unpacked state."""
    def __init__(self, subtree: Any) -> None:
        self.subtree = subtree

    def __iter__(self):
        return iter((self.subtree,))


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """An ``OptimizerState`` as a plain pytree (the parameters' structure with a
    ``JoinPoint`` per leaf), e.g. for pickling.

    >>> import functrans.numpy as fnp
    >>> s = momentum(0.1, 0.9).init_fn({"w": fnp.ones(2)})
    >>> isinstance(unpack_optimizer_state(s)["w"], JoinPoint)
    True
    """
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = [tree_unflatten(d, s) for d, s in zip(subtree_defs, states_flat)]
    return tree_unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """Inverse of ``unpack_optimizer_state``.

    >>> import functrans.numpy as fnp
    >>> s = adam(0.1).init_fn([fnp.ones(2)])
    >>> pack_optimizer_state(unpack_optimizer_state(s)).tree_def == s.tree_def
    True
    """
    sentinels, tree_def = tree_flatten(marked_pytree, is_leaf=lambda x: isinstance(x, JoinPoint))
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise TypeError("pack_optimizer_state: every leaf must be a JoinPoint")
    flat = [tree_flatten(s.subtree) for s in sentinels]
    return OptimizerState([s for s, _ in flat], tree_def, tuple(d for _, d in flat))
