"""vmap: in_axes/out_axes (ints, negative, None, pytree prefixes), axis_size,
axis_name with the collectives, nested vmap, composition with autodiff and jit,
eager Python control flow, the bad-input errors, no per-example loop in the
batched jaxpr, and random in_axes (hypothesis) against a Python loop."""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.errors import ConcretizationError


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def loop(f, *args, in_axes=0):
    """Stack ``f`` over examples, the reference for vmap (outputs: one array)."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    n = next(np.shape(a)[d] for a, d in zip(args, axes) if d is not None)
    outs = []
    for k in range(n):
        ex = [a if d is None else np.take(np.asarray(a), k, axis=d) for a, d in zip(args, axes)]
        outs.append(np.asarray(f(*ex)))
    return np.stack(outs)


X = np.random.default_rng(0).standard_normal((4, 3))
Y = np.random.default_rng(1).standard_normal((3, 4))


# --------------------------------------------------------------------------- in_axes / out_axes

def test_in_axes_ints_negative_and_none():
    f = lambda a, b: fnp.sin(a) * b  # noqa: E731
    close(ft.vmap(f, in_axes=(0, 1))(X, Y), loop(f, X, Y, in_axes=(0, 1)))
    close(ft.vmap(f, in_axes=(-2, -1))(X, Y), loop(f, X, Y, in_axes=(0, 1)))
    close(ft.vmap(f, in_axes=(1, None))(X, X[:, 0]), loop(f, X, X[:, 0], in_axes=(1, None)))
    close(ft.vmap(f, in_axes=[0, None])(X, X[0]), X * 0 + np.sin(X) * X[0])


def test_out_axes_and_unbatched_output_broadcast():
    out = ft.vmap(lambda a: fnp.sin(a), out_axes=1)(X)
    close(out, np.sin(X).T)
    out = ft.vmap(lambda a: fnp.sin(a), out_axes=-1)(X)
    close(out, np.sin(X).T)
    # an output not depending on the mapped input is broadcast, as in JAX
    c = np.arange(3.0)
    out = ft.vmap(lambda a, b: b * 2.0, in_axes=(0, None))(X, c)
    assert out.shape == (4, 3)
    close(out, np.broadcast_to(c * 2, (4, 3)))
    out = ft.vmap(lambda a, b: b * 2.0, in_axes=(0, None), out_axes=1)(X, c)
    close(out, np.broadcast_to(c * 2, (4, 3)).T)
    # out_axes=None keeps an unmapped output as it is
    out = ft.vmap(lambda a, b: (a, b), in_axes=(0, None), out_axes=(0, None))(X, c)
    close(out[0], X)
    close(out[1], c)
    # a constant output
    assert ft.vmap(lambda a: 1.0)(X).shape == (4,)


def test_pytree_prefixes_on_both_sides():
    args = ({"w": X, "b": Y}, [X[0], (X.T, 2.0)])

    def f(d, l):
        return {"s": d["w"] * l[0], "t": (d["b"], l[1][0] + l[1][1])}

    got = ft.vmap(f, in_axes=({"w": 0, "b": 1}, [None, (1, None)]),
                  out_axes={"s": 0, "t": (1, 0)})(*args)
    close(got["s"], X * X[0])
    close(got["t"][0], Y)          # b mapped at 1, placed back at 1
    close(got["t"][1], X + 2.0)
    # a prefix entry covering a whole subtree
    got = ft.vmap(f, in_axes=({"w": 0, "b": 1}, [None, None]))(*args)
    close(got["t"][1], np.broadcast_to(X.T + 2.0, (4, 3, 4)))


def test_namedtuple_and_nested_args():
    from collections import namedtuple
    P = namedtuple("P", "a b")
    got = ft.vmap(lambda p: p.a * p.b, in_axes=(P(0, None),))(P(X, X[0]))
    close(got, X * X[0])


def test_keyword_arguments_are_mapped_over_axis_0():
    got = ft.vmap(lambda a, b=None: a * b)(X, b=X)
    close(got, X * X)


def test_axis_size_without_mapped_arguments():
    out = ft.vmap(lambda a: a * 2.0, in_axes=None, axis_size=5)(X[0])
    close(out, np.broadcast_to(X[0] * 2, (5, 3)))


def test_nested_vmap_is_an_outer_product():
    a, b = np.arange(3.0), np.arange(4.0)
    out = ft.vmap(lambda x: ft.vmap(lambda y: x * y)(b))(a)
    close(out, np.outer(a, b))
    out = ft.vmap(ft.vmap(lambda x, y: x * y, in_axes=(None, 0)), in_axes=(0, None))(a, b)
    close(out, np.outer(a, b))


# --------------------------------------------------------------------------- bad input

def test_inconsistent_sizes_name_each_argument_and_size():
    with pytest.raises(ValueError) as e:
        ft.vmap(lambda x, y: x + y)(np.ones(3), np.ones(4))
    msg = str(e.value)
    assert "inconsistent sizes" in msg
    assert "argument x has size 3" in msg and "argument y has size 4" in msg
    with pytest.raises(ValueError, match=r"argument p\['b'\] has size 5"):
        ft.vmap(lambda p: p["a"] + p["b"])({"a": np.ones(3), "b": np.ones(5)})
    with pytest.raises(ValueError, match="axis_size=7"):
        ft.vmap(lambda x: x, axis_size=7)(np.ones(3))


def test_in_axes_tree_mismatch_names_the_argument():
    with pytest.raises(ValueError, match="argument p "):
        ft.vmap(lambda x, p: x, in_axes=(0, (0, 0)))(np.ones(3), {"a": np.ones(3)})
    with pytest.raises(ValueError, match=r"argument p .*\['b'\]"):
        ft.vmap(lambda p: p["a"], in_axes=({"a": 0, "b": 0},))({"a": np.ones(3), "c": np.ones(3)})
    with pytest.raises(ValueError, match="3 entries .* 2 positional"):
        ft.vmap(lambda x, y: x, in_axes=(0, 0, 0))(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="in_axes must be"):
        ft.vmap(lambda x: x, in_axes={"a": 0})
    with pytest.raises(ValueError, match="argument x must be an int, None"):
        ft.vmap(lambda x: x, in_axes=("zero",))(np.ones(3))


def test_axis_out_of_range_names_the_argument():
    with pytest.raises(ValueError, match=r"in_axes 2 is out of range for argument y of shape \(3, 4\)"):
        ft.vmap(lambda x, y: y, in_axes=(0, 2))(np.ones(3), np.ones((3, 4)))
    with pytest.raises(ValueError, match=r"in_axes -3 .* argument x "):
        ft.vmap(lambda x: x, in_axes=-3)(np.ones((3, 4)))
    with pytest.raises(ValueError, match="scalar"):
        ft.vmap(lambda x: x)(2.0)
    with pytest.raises(ValueError, match="out_axes 3 out of range"):
        ft.vmap(lambda x: x, out_axes=3)(np.ones((3, 4)))


def test_other_bad_input():
    with pytest.raises(ValueError, match="out_axes is None .* varies"):
        ft.vmap(lambda x: x, out_axes=None)(np.ones(3))
    with pytest.raises(ValueError, match="axis_size"):
        ft.vmap(lambda x: x, in_axes=None)(np.ones(3))
    with pytest.raises(TypeError, match="callable"):
        ft.vmap(3)


# --------------------------------------------------------------------------- control flow

def test_python_control_flow_on_unbatched_values():
    def f(x, n):
        for _ in range(int(n)):
            x = x * 2.0
        if n > 2:
            x = x + 1.0
        return x
    close(ft.vmap(f, in_axes=(0, None))(X, 3), X * 8 + 1)
    close(ft.vmap(f, in_axes=(0, None))(X, 1), X * 2)


def test_branching_on_a_batched_value_is_a_concretization_error():
    def f(x):
        if fnp.sum(x) > 0:
            return x
        return -x
    with pytest.raises(ConcretizationError, match="vmap"):
        ft.vmap(f)(X)


# --------------------------------------------------------------------------- composition

def _loss(w, x, y):
    return fnp.log(1.0 + fnp.exp(-y * fnp.sum(w * x)))


def _loss_np_grad(w, x, y):
    z = -y * (x @ w)
    return (1 / (1 + np.exp(-z)) * -y)[:, None] * x


def test_vmap_of_grad_is_per_example_gradients():
    rng = np.random.default_rng(3)
    w, x, y = rng.standard_normal(5), rng.standard_normal((7, 5)), np.sign(rng.standard_normal(7))
    got = ft.vmap(ft.grad(_loss), in_axes=(None, 0, 0))(w, x, y)
    close(got, _loss_np_grad(w, x, y))
    close(got, loop(ft.grad(_loss), w, x, y, in_axes=(None, 0, 0)))


def test_grad_of_vmap():
    rng = np.random.default_rng(4)
    w, x, y = rng.standard_normal(5), rng.standard_normal((7, 5)), np.sign(rng.standard_normal(7))
    total = lambda w: fnp.sum(ft.vmap(_loss, in_axes=(None, 0, 0))(w, x, y))  # noqa: E731
    close(ft.grad(total)(w), _loss_np_grad(w, x, y).sum(0))


def test_vmap_of_jvp_and_vjp_and_jvp_of_vmap():
    f = lambda x: fnp.sin(x) * x  # noqa: E731
    t = np.ones_like(X) * 0.5
    out, tout = ft.vmap(lambda x, t: ft.jvp(f, (x,), (t,)))(X, t)
    close(out, np.sin(X) * X)
    close(tout, (np.cos(X) * X + np.sin(X)) * 0.5)
    _, tout2 = ft.jvp(ft.vmap(f), (X,), (t,))
    close(tout2, tout)

    def vjp1(x, ct):
        return ft.vjp(f, x)[1](ct)[0]
    close(ft.vmap(vjp1)(X, t), (np.cos(X) * X + np.sin(X)) * 0.5)


def _jacfwd(f):
    """Forward-mode Jacobian by vmapping jvp over basis vectors (x: a vector)."""
    def jac(x):
        basis = np.eye(np.shape(x)[0])
        return ft.vmap(lambda t: ft.jvp(f, (x,), (t,))[1], out_axes=-1)(basis)
    return jac


def _jacrev(f):
    """Reverse-mode Jacobian by vmapping vjp over basis cotangents."""
    def jac(x):
        y, vjp_fn = ft.vjp(f, x)
        return ft.vmap(lambda c: vjp_fn(c)[0])(np.eye(np.shape(y)[0]))
    return jac


def test_jacobians_and_batched_hessian_via_vmap():
    f = lambda x: fnp.sin(x) * fnp.sum(x * x)  # noqa: E731
    x = np.array([0.3, -0.5, 0.9])
    want = np.diag(np.cos(x)) * np.sum(x * x) + np.outer(np.sin(x), 2 * x)
    close(_jacfwd(f)(x), want)
    close(_jacrev(f)(x), want)
    g = lambda x: fnp.sum(fnp.sin(x)) * fnp.sum(x * x)  # noqa: E731

    def hess_np(x):
        s, q = np.sin(x).sum(), (x * x).sum()
        return np.diag(-np.sin(x)) * q + 2 * np.outer(np.cos(x), x) + 2 * np.outer(x, np.cos(x)) \
            + 2 * s * np.eye(len(x))
    xs = np.random.default_rng(5).standard_normal((4, 3))
    got = ft.vmap(_jacfwd(ft.grad(g)))(xs)
    close(got, np.stack([hess_np(v) for v in xs]), 1e-9)
    # the public ones, from autodiff
    close(ft.vmap(ft.hessian(g))(xs), got, 1e-9)
    close(ft.vmap(ft.jacfwd(f))(xs), ft.vmap(ft.jacrev(f))(xs), 1e-9)


def test_vmap_of_jit_and_jit_of_vmap():
    f = lambda a, b: fnp.sin(a) * b  # noqa: E731
    want = loop(f, X, Y, in_axes=(0, 1))
    close(ft.vmap(ft.jit(f, backend="interpret"), in_axes=(0, 1))(X, Y), want)
    close(ft.jit(ft.vmap(f, in_axes=(0, 1)), backend="interpret")(X, Y), want)
    close(ft.grad(lambda x: fnp.sum(ft.vmap(ft.jit(fnp.sin, backend="interpret"))(x)))(X),
          np.cos(X))


def test_vmap_closing_over_an_outer_tracer():
    # grad's tracer enters the vmapped function through a closure
    def f(s):
        return fnp.sum(ft.vmap(lambda x: fnp.sin(x * s))(X))
    close(ft.grad(f)(0.7), np.sum(np.cos(X * 0.7) * X))


# --------------------------------------------------------------------------- collectives

def test_collectives_values():
    v = ft.vmap
    close(v(lambda x: lax.psum(x, "i"), axis_name="i")(X), np.broadcast_to(X.sum(0), X.shape))
    close(v(lambda x: lax.pmean(x, "i"), axis_name="i")(X), np.broadcast_to(X.mean(0), X.shape))
    close(v(lambda x: lax.pmax(x, "i"), axis_name="i")(X), np.broadcast_to(X.max(0), X.shape))
    close(v(lambda x: lax.pmin(x, "i"), axis_name="i")(X), np.broadcast_to(X.min(0), X.shape))
    close(v(lambda x: lax.all_gather(x, "i"), axis_name="i")(X), np.broadcast_to(X, (4, 4, 3)))
    close(v(lambda x: lax.all_gather(x, "i", axis=1), axis_name="i")(X),
          np.broadcast_to(X.T, (4, 3, 4)))
    close(v(lambda x: lax.all_gather(x, "i", tiled=True), axis_name="i")(X),
          np.broadcast_to(X.reshape(-1), (4, 12)))
    idx = v(lambda x: lax.axis_index("i"), axis_name="i")(X)
    assert idx.dtype == np.int32 and idx.tolist() == [0, 1, 2, 3]
    # mapped over axis 1 of the input
    close(v(lambda x: x / lax.psum(x, "i"), in_axes=1, axis_name="i")(Y), (Y / Y.sum(1)[:, None]).T)
    # integer psum stays integer; pmean of ints is float
    ints = np.arange(6).reshape(3, 2)
    got = v(lambda x: lax.psum(x, "i"), axis_name="i")(ints)
    assert got.dtype == ints.dtype and got.tolist() == [[6, 9]] * 3
    assert v(lambda x: lax.pmean(x, "i"), axis_name="i")(ints).dtype == np.float64


def test_collective_on_unbatched_and_constant_values():
    c = np.arange(3.0)
    out = ft.vmap(lambda x, c: x + lax.psum(c, "i"), in_axes=(0, None), axis_name="i")(X, c)
    close(out, X + 4 * c)
    out = ft.vmap(lambda x: x * lax.psum(1.0, "i"), axis_name="i")(X)
    close(out, X * 4)
    out = ft.vmap(lambda x, c: lax.pmax(c, "i") + fnp.sum(lax.all_gather(c, "i"), axis=0) / 4 + x,
                  in_axes=(0, None), axis_name="i")(X, c)
    close(out, X + 2 * c)


def test_nested_vmaps_with_different_names():
    def f(x):
        return lax.psum(x, "rows") * 10.0 + lax.psum(x, "cols") + lax.axis_index("rows") \
            + 100.0 * lax.axis_index("cols")
    got = ft.vmap(ft.vmap(f, axis_name="cols"), axis_name="rows")(X)
    want = X.sum(0)[None, :] * 10 + X.sum(1)[:, None] + np.arange(4)[:, None] \
        + 100.0 * np.arange(3)[None, :]
    close(got, want)
    # a tuple of names: the sum over both axes
    got = ft.vmap(ft.vmap(lambda x: lax.psum(x, ("rows", "cols")), axis_name="cols"),
                  axis_name="rows")(X)
    close(got, np.full(X.shape, X.sum()))
    got = ft.vmap(ft.vmap(lambda x: lax.pmean(x, ("rows", "cols")), axis_name="cols"),
                  axis_name="rows")(X)
    close(got, np.full(X.shape, X.mean()))
    # the inner function sees an outer-axis collective of a value only the inner maps over
    got = ft.vmap(lambda a: ft.vmap(lambda y: lax.psum(y, "rows") + a, axis_name="cols")(Y[0]),
                  axis_name="rows")(X[:, 0])
    close(got, 4 * Y[0][None, :] + X[:, 0][:, None])


def test_collectives_outside_vmap_are_unbound():
    with pytest.raises(NameError, match="unbound axis name"):
        lax.psum(np.ones(3), "i")
    with pytest.raises(NameError, match="unbound axis name"):
        lax.axis_index("i")
    with pytest.raises(NameError, match="unbound axis name"):
        ft.vmap(lambda x: lax.psum(x, "j"), axis_name="i")(X)
    from functrans.primitives.collectives import psum_p
    with pytest.raises(NameError, match="unbound axis name"):
        psum_p.impl(np.ones(3), axis_name="i")


def test_collectives_under_jit_and_grad():
    f = lambda x: x * lax.psum(x, "i")  # noqa: E731
    want = X * X.sum(0)
    close(ft.vmap(ft.jit(f, backend="interpret"), axis_name="i")(X), want)
    close(ft.jit(ft.vmap(f, axis_name="i"), backend="interpret")(X), want)
    # grad of the whole batched function
    close(ft.grad(lambda x: fnp.sum(ft.vmap(f, axis_name="i")(x)))(X),
          np.broadcast_to(2 * X.sum(0), X.shape))


def test_collectives_inside_jit_and_control_flow_bodies():
    c = np.ones(3)
    # a jitted body whose only operand is unmapped still sees the axis
    f = lambda x, c: x + ft.jit(lambda c: lax.psum(c, "i"), backend="interpret")(c)  # noqa: E731
    close(ft.vmap(f, in_axes=(0, None), axis_name="i")(X, c), X + 4.0)
    g = lambda x: lax.cond(fnp.sum(x) > 0, lambda y: lax.psum(y, "i"), lambda y: -y, x)  # noqa: E731
    want = np.where((X.sum(1) > 0)[:, None], X.sum(0), -X)
    close(ft.vmap(g, axis_name="i")(X), want)
    h = lambda x: lax.fori_loop(0, 3, lambda i, acc: acc + lax.pmean(x, "i"), x)  # noqa: E731
    close(ft.vmap(h, axis_name="i")(X), X + 3 * X.mean(0))


def test_vmap_of_grad_through_collectives():
    # psum's transpose is psum: per-example grads of sum_b L_b, as in JAX
    g = ft.vmap(ft.grad(lambda x: fnp.sum(x * lax.psum(x, "i"))), axis_name="i")(X)
    close(g, np.broadcast_to(2 * X.sum(0), X.shape))
    g = ft.vmap(ft.grad(lambda x: fnp.sum(lax.pmean(x, "i") ** 2)), axis_name="i")(X)
    close(g, np.broadcast_to(2 * X.mean(0), X.shape))
    # pmax: the tangent flows to the example holding the max (grad of sum_b L_b = 4 max)
    g = ft.vmap(ft.grad(lambda x: fnp.sum(lax.pmax(x, "i"))), axis_name="i")(X)
    close(g, 4 * (X == X.max(0)).astype(float))
    # all_gather: row b of every example's gathered cotangent flows back to example b
    w = np.arange(12.0).reshape(4, 3)
    g = ft.vmap(ft.grad(lambda x, w: fnp.sum(lax.all_gather(x, "i") * w)), in_axes=(0, None),
                axis_name="i")(X, w)
    close(g, 4 * w)
    # vmap(jvp) through psum
    _, t = ft.vmap(lambda x: ft.jvp(lambda y: lax.psum(y * y, "i"), (x,), (x,)), axis_name="i")(X)
    close(t, np.broadcast_to((2 * X * X).sum(0), X.shape))


def test_jax_positional_order_and_spmd_axis_name():
    # JAX's vmap(fun, in_axes, out_axes, axis_name, axis_size, spmd_axis_name): axis_name is
    # the 4th positional (was axis_size, so vmap(f, 0, 0, "b") failed); spmd_axis_name only
    # shards the batch in JAX: JAX 0.10.2's values with it (4 CPU devices, mesh axis "x")
    x = np.arange(16.0).reshape(4, 4)
    f = lambda r: r * lax.psum(r, "b")   # noqa: E731
    want = [[0.0, 28.0, 64.0, 108.0], [96.0, 140.0, 192.0, 252.0],
            [192.0, 252.0, 320.0, 396.0], [288.0, 364.0, 448.0, 540.0]]
    assert ft.jit(ft.vmap(f, axis_name="b", spmd_axis_name="x"))(x).tolist() == want
    assert ft.vmap(f, 0, 0, "b", None, ("x", "y"))(x).tolist() == want
    assert ft.vmap(lambda: 1.0, (), 0, None, 3)().tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(TypeError, match="spmd_axis_name must be a mesh axis name"):
        ft.vmap(f, spmd_axis_name=3)


def test_collective_is_not_computed_while_tracing():
    # the per-example value of psum is unknown during the trace: branching on it is an error
    def f(x, c):
        if lax.psum(c, "i") > 0:
            return x
        return -x
    with pytest.raises(ConcretizationError):
        ft.vmap(f, in_axes=(0, None), axis_name="i")(X, 1.0)


# --------------------------------------------------------------------------- no per-example loop

@pytest.mark.parametrize("fun,in_axes,make", [
    (lambda a, b: fnp.sum(fnp.sin(a) * b, axis=0), (0, None),
     lambda n: (np.ones((n, 3)), np.ones(3))),
    (lambda a, b: fnp.transpose(a) * fnp.exp(b), (2, 1),
     lambda n: (np.ones((2, 3, n)), np.ones((3, n, 2)))),
    (ft.grad(_loss), (None, 0, 0), lambda n: (np.ones(5), np.ones((n, 5)), np.ones(n))),
    (lambda x: x * lax.psum(x, "i"), 0, lambda n: (np.ones((n, 2)),)),
], ids=["sum_sin", "transpose_exp", "grad_logistic", "psum"])
def test_batched_jaxpr_has_no_per_example_loop(fun, in_axes, make):
    texts = []
    for n in (2, 37):
        closed = ft.make_jaxpr(ft.vmap(fun, in_axes=in_axes, axis_name="i"))(*make(n))
        texts.append(str(closed))
    # the same program for 2 and 37 examples, up to the batch size in the types
    assert texts[0].count("\n") == texts[1].count("\n"), texts
    strip = [re.sub(r"\b(2|37)\b", "N", t) for t in texts]
    assert strip[0] == strip[1], "the batched program depends on the batch size:\n" + "\n".join(texts)


# --------------------------------------------------------------------------- random in_axes

FUNS = [
    # (function, per-example shapes of its arguments)
    (lambda a, b, c: fnp.sin(a) * b + c, [(3, 4), (4,), ()]),
    (lambda a, b, c: fnp.sum(a * b, axis=1) * fnp.exp(c), [(2, 3), (2, 3), (2,)]),
    (lambda a, b, c: fnp.reshape(fnp.transpose(a), (6,)) * c + fnp.sum(b), [(2, 3), (3,), ()]),
    (lambda a, b, c: (fnp.cos(a) + b, fnp.sum(c * c)), [(3,), (3,), (2, 2)]),
]


@st.composite
def _vmap_problem(draw):
    fi = draw(st.integers(0, len(FUNS) - 1))
    fun, shapes = FUNS[fi]
    n = draw(st.integers(1, 4))
    axes = []
    for s in shapes:
        r = len(s) + 1
        axes.append(draw(st.one_of(st.none(), st.integers(-r, r - 1))))
    if all(a is None for a in axes):
        axes[0] = 0
    out_axis = draw(st.integers(-1, 0))
    seed = draw(st.integers(0, 2 ** 16))
    return fun, shapes, n, tuple(axes), out_axis, seed


@given(_vmap_problem())
def test_random_in_axes_against_loop(problem):
    fun, shapes, n, axes, out_axis, seed = problem
    rng = np.random.default_rng(seed)
    examples = [[rng.standard_normal(s) for s in shapes] for _ in range(n)]
    args = []
    for i, d in enumerate(axes):
        if d is None:
            args.append(examples[0][i])
        else:
            args.append(np.stack([ex[i] for ex in examples], axis=d % (len(shapes[i]) + 1)))
    fixed = [[ex[i] if axes[i] is not None else examples[0][i] for i in range(len(shapes))]
             for ex in examples]
    outs = [fun(*ex) for ex in fixed]
    got = ft.vmap(fun, in_axes=axes, out_axes=out_axis)(*args)
    from functrans.tree_util import tree_flatten
    got_l = tree_flatten(got)[0]
    for j, g in enumerate(got_l):
        want = np.stack([np.asarray(tree_flatten(o)[0][j]) for o in outs], axis=0)
        close(g, np.moveaxis(want, 0, out_axis), 1e-9)
    # and per-example gradients w.r.t. the first argument
    scalar = lambda *xs: sum(fnp.sum(l) for l in tree_flatten(fun(*xs))[0])  # noqa: E731,E741
    gr = ft.vmap(ft.grad(scalar), in_axes=axes)(*args)
    want = np.stack([np.asarray(ft.grad(scalar)(*ex)) for ex in fixed])
    close(gr, want, 1e-9)
