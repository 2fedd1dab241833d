"""The ``enable_checks`` switch: every jaxpr a trace or transform builds is type-checked,
and a failure names the pass that built the jaxpr (the suite runs with it on)."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import jaxpr_ir
from functrans.primitives.base import Primitive, defjvp
from jaxpr_ir import ShapedArray


def _flaky_primitive():
    """A primitive whose shape rule answers differently after its first call: a stand-in
    for a rule or pass that builds an ill-typed program."""
    p = Primitive("checks_test_flaky")
    p.test_only = True
    calls = []

    def aval(x):
        calls.append(1)
        return x if len(calls) == 1 else ShapedArray((7,), x.dtype)

    p.def_rules(abstract_eval=aval, impl=lambda x: x,
                batch=lambda args, dims: (p.bind(*args), dims[0]))
    defjvp(p, lambda t, x, out: t)
    return p, calls


@pytest.fixture
def flaky():
    p, calls = _flaky_primitive()
    yield p, calls
    del jaxpr_ir.primitives[p.name]


def test_enable_checks_is_on_in_the_suite():
    assert ft.config.read("enable_checks") is True


@pytest.mark.parametrize("transform, name", [(ft.make_jaxpr, "make_jaxpr"), (ft.vmap, "vmap")])
def test_an_ill_typed_trace_is_reported_with_its_pass(flaky, transform, name):
    p, calls = flaky
    with pytest.raises(jaxpr_ir.TypeCheckError, match=f"built by {name} is ill-typed"):
        transform(lambda x: p.bind(x) * 2.0)(np.ones(3))


def test_checks_off_do_not_check(flaky):
    p, calls = flaky
    ft.config.update("enable_checks", False)
    try:
        ft.make_jaxpr(lambda x: p.bind(x) * 2.0)(np.ones(3))
    finally:
        ft.config.update("enable_checks", True)
    assert len(calls) == 1          # traced once, never re-derived by the checker


def test_control_flow_bodies_built_by_jvp_are_checked():
    # the JVP of cond builds new branches by surgery; they are checked as they are made
    def f(c, x):
        return ft.lax.cond(c > 0, lambda y: ft.numpy.sin(y) * y, lambda y: ft.numpy.cos(y), x)
    g = ft.jit(ft.grad(f, argnums=1))
    np.testing.assert_allclose(g(1.0, 0.3), np.cos(0.3) * 0.3 + np.sin(0.3))
