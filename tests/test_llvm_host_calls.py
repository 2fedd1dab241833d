"""Host steps inside native control flow (``backends/llvm/host_calls``): an equation
without native code inside a loop body or a branch is called back into Python from the
compiled loop, which stays native (one segment, no top-level host step); the results,
the printed output and the order of the calls are the interpreter's, and an exception
raised by the callback comes out of the compiled call as itself."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
import jaxpr_ir
from functrans import lax
from functrans.primitives.base import Primitive


def _costs(f, *args):
    c = ft.jit(f).lower(*args).compile().cost_analysis()
    return c["host steps"], c["host callbacks"], c["native segments"]


def test_host_step_inside_fori_loop_is_called_back(counting):
    p, _ = counting

    def f(x):
        return lax.fori_loop(0, 50, lambda i, c: p.bind(c[::-1]) * 0.25 + c, x)
    x = np.linspace(-1.0, 1.0, 6)
    assert _costs(f, x) == (0, 1, 1)
    got, want = np.asarray(ft.jit(f)(x)), np.asarray(f(x))
    assert got.tobytes() == want.tobytes()


def test_debug_print_inside_scan_prints_as_the_interpreter(capsys):
    def f(x):
        def body(c, xi):
            ft.debug.print("c={c} xi={xi}", c=c, xi=xi)
            return c * 2.0 + xi, c
        return lax.scan(body, 1.0, x)
    x = np.arange(4.0)
    want = [np.asarray(v) for v in f(x)]
    printed = capsys.readouterr().out
    assert printed.count("c=") == 4
    assert _costs(f, x) == (0, 1, 1)
    got = [np.asarray(v) for v in ft.jit(f)(x)]
    assert capsys.readouterr().out == printed
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.fixture
def counting():
    """A test primitive with no native code: y = x + 1 (+ the other operands, summed),
    recording each call's first input."""
    p = Primitive("host_calls_test_count")
    p.test_only = True
    seen = []

    def impl(x, *more):
        x = np.asarray(x)
        if np.any(x > 1e6):
            raise ValueError(f"host_calls_test_count: input too large ({x.max()})")
        seen.append(x.copy())
        return x + 1 + sum(np.sum(m) for m in more)
    p.def_rules(abstract_eval=lambda x, *more: x, impl=impl)
    yield p, seen
    del jaxpr_ir.primitives[p.name]


def test_nested_loops_and_branches_call_back_in_order(counting):
    p, seen = counting

    def f(x):
        def outer(c, xi):
            c = lax.while_loop(lambda v: v[0] < xi, lambda v: p.bind(v), c)
            c = lax.cond(xi > 2.0, lambda v: p.bind(v * 2.0), lambda v: v - 1.0, c)
            return c, c.sum()
        return lax.scan(outer, x, fnp.arange(5.0))
    x = np.array([0.5, -1.0, 3.0])
    want = [np.asarray(v) for v in f(x)]
    want_seen = [s.tolist() for s in seen]
    seen.clear()
    hs, cb, segs = _costs(f, x)
    assert (hs, segs) == (0, 1) and cb == 2
    got = [np.asarray(v) for v in ft.jit(f)(x)]
    assert [s.tolist() for s in seen] == want_seen      # the calls, in order
    for g, w in zip(got, want):
        assert g.tobytes() == w.tobytes()


def test_an_exception_in_a_callback_is_raised_by_the_call(counting):
    p, seen = counting

    def f(x, s):
        return lax.fori_loop(0, 10, lambda i, c: p.bind(c * s), x)
    jf, x = ft.jit(f), np.ones(3)
    np.testing.assert_array_equal(np.asarray(jf(x, 0.5)), np.asarray(f(x, 0.5)))
    seen.clear()
    with pytest.raises(ValueError, match="input too large") as info:
        jf(x, 10.0)                        # inputs 10, 110, ... 1111110: the 6th fails
    assert any("host step 'host_calls_test_count'" in n for n in info.value.__notes__)
    assert len(seen) == 5                  # stopped at the failing iteration
    for _ in range(3):                     # the program is still usable, nothing stale
        np.testing.assert_array_equal(np.asarray(jf(x, 0.5)), np.asarray(f(x, 0.5)))
    with pytest.raises(ValueError, match="input too large"):
        ft.jit(f).lower(x, 10.0).compile()(x, 10.0)   # the general call path too


def test_literal_and_strided_operands_reach_the_callback(counting):
    p, _ = counting

    def f(x):
        def body(i, c):
            return c + p.bind(c[:, ::2].T, 2.0, c[1, 1:3]).T.sum()
        return lax.fori_loop(0, 3, body, x)
    x = np.arange(12.0).reshape(3, 4)
    jaxpr = ft.make_jaxpr(f)(x).jaxpr
    body = jaxpr.eqns[-1].params["jaxpr"].jaxpr          # fori_loop: a scan
    call = [e for e in body.eqns if e.primitive is p][0]
    assert any(isinstance(v, jaxpr_ir.Literal) for v in call.inputs)
    assert _costs(f, x)[:2] == (0, 1)
    np.testing.assert_array_equal(np.asarray(ft.jit(f)(x)), np.asarray(f(x)))
