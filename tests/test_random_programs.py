"""Hypothesis: random small programs are traced, printed, parsed, type-checked and
interpreted, and agree with eager evaluation; their gradients agree between eager
reverse mode, jit and forward mode."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import functrans as ft
import functrans.numpy as fnp
import jaxpr_ir
from backends import interpret

UNARY = [fnp.sin, fnp.cos, fnp.tanh, lambda x: fnp.exp(-x * x), fnp.negative,
         lambda x: x * 0.5]
BINARY = [fnp.add, fnp.subtract, fnp.multiply, lambda a, b: a / (1.0 + b * b)]
REDUCE = [lambda x: fnp.sum(x, axis=-1, keepdims=True), lambda x: fnp.max(x, axis=0, keepdims=True),
          lambda x: fnp.mean(x, axis=None, keepdims=True)]


@st.composite
def programs(draw):
    """A program: a list of (kind, op index, operand indices) over a growing value list."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=0, max_size=3)))
    nin = draw(st.integers(1, 3))
    steps = []
    nvals = nin
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["u", "b", "r"] if shape else ["u", "b"]))
        if kind == "u":
            steps.append(("u", draw(st.integers(0, len(UNARY) - 1)), (draw(st.integers(0, nvals - 1)),)))
        elif kind == "b":
            steps.append(("b", draw(st.integers(0, len(BINARY) - 1)),
                          (draw(st.integers(0, nvals - 1)), draw(st.integers(0, nvals - 1)))))
        else:
            steps.append(("r", draw(st.integers(0, len(REDUCE) - 1)), (draw(st.integers(0, nvals - 1)),)))
        nvals += 1
    seed = draw(st.integers(0, 2**16))
    return shape, nin, steps, seed


def build(steps):
    def f(*xs):
        vals = list(xs)
        for kind, op, ins in steps:
            args = [vals[i] for i in ins]
            if kind == "u":
                v = UNARY[op](*args)
            elif kind == "b":
                v = BINARY[op](*args)
            else:  # reductions keep dims, then broadcast back against an input
                v = REDUCE[op](*args) + vals[0] * 0.0
            vals.append(v)
        return vals[-1]
    return f


def instance(prog):
    """A drawn program as ``(f, args, rng)``: its function, random float inputs, and the
    generator they came from (for further draws)."""
    shape, nin, steps, seed = prog
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(shape) for _ in range(nin)]
    return build(steps), args, rng


@settings(max_examples=40, deadline=None)
@given(programs())
def test_random_program_round_trips_and_interprets_like_eager(prog):
    f, args, _ = instance(prog)
    closed = ft.make_jaxpr(f)(*args)
    text = str(closed)
    jaxpr_ir.check(closed)
    parsed = jaxpr_ir.parse(text)
    assert str(parsed) == text
    jaxpr_ir.check(parsed)
    got = interpret.eval_jaxpr(parsed, closed.consts, args)[0]
    np.testing.assert_allclose(got, f(*args), rtol=1e-12, atol=1e-12)
    simplified = jaxpr_ir.simplify(closed.jaxpr)
    jaxpr_ir.check(simplified)
    got2 = interpret.eval_jaxpr(simplified, closed.consts, args)[0]
    np.testing.assert_allclose(got2, f(*args), rtol=1e-12, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(programs())
def test_random_program_gradients_agree_across_modes(prog):
    f, args, rng = instance(prog)

    def loss(*xs):
        return fnp.sum(f(*xs))

    g_rev = ft.grad(loss, argnums=0)(*args)
    g_jit = ft.jit(ft.grad(loss, argnums=0), backend="interpret")(*args)
    np.testing.assert_allclose(g_jit, g_rev, rtol=1e-10, atol=1e-12)
    t = rng.standard_normal(np.shape(args[0]))
    _, fwd = ft.jvp(lambda a: loss(a, *args[1:]), (args[0],), (t,))
    np.testing.assert_allclose(float(fwd), float(np.sum(np.asarray(g_rev) * t)), rtol=1e-9, atol=1e-9)
