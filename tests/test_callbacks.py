"""pure_callback, io_callback and debug.callback (JAX's external-callbacks guide): values
eager, under jit (a host step, also inside a compiled loop), under vmap for each
vmap_method, and the errors JAX raises (JVP, unset vmap_method, ordered vmap, bad results)."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.experimental import io_callback


def _sin_cb(x):
    return ft.pure_callback(np.sin, ft.ShapeDtypeStruct.like(x), x, vmap_method="sequential")


def test_pure_callback_eager_jit_scan_and_grad_error():
    x = np.linspace(0.0, 1.0, 4)
    np.testing.assert_array_equal(_sin_cb(x), np.sin(x))
    np.testing.assert_array_equal(ft.jit(_sin_cb)(x), np.sin(x))
    loop = ft.jit(lambda x: lax.fori_loop(0, 3, lambda i, c: _sin_cb(c), x))
    np.testing.assert_allclose(loop(x), np.sin(np.sin(np.sin(x))), rtol=1e-15)
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
        ft.grad(lambda x: _sin_cb(x).sum())(x)
    assert "pure_callback" in str(ft.make_jaxpr(_sin_cb)(x))


def test_pure_callback_vmap_methods():
    calls = []

    def f(x, y):
        calls.append((x.shape, y.shape))
        return x * y

    def g(method):
        return ft.vmap(lambda x, y: ft.pure_callback(f, ft.ShapeDtypeStruct((), x.dtype), x, y,
                                                     vmap_method=method), in_axes=(0, None))

    xs = np.arange(3.0)
    for method, shapes in [("sequential", [((), ())] * 3), ("expand_dims", [((3,), (1,))]),
                           ("broadcast_all", [((3,), (3,))])]:
        calls.clear()
        np.testing.assert_array_equal(g(method)(xs, 2.0), 2 * xs)
        assert calls == shapes, method
    with pytest.raises(NotImplementedError, match="vmap_method"):
        g(None)(xs, 2.0)


def test_pure_callback_result_checks_and_pytrees():
    spec = {"a": ft.ShapeDtypeStruct((2,), np.float64), "b": ft.ShapeDtypeStruct((), np.int64)}
    out = ft.jit(lambda x: ft.pure_callback(lambda v: {"a": v * 2, "b": np.int64(7)}, spec, x))(
        np.ones(2))
    np.testing.assert_array_equal(out["a"], [2.0, 2.0])
    assert int(out["b"]) == 7
    with pytest.raises(ValueError, match="shape"):
        ft.pure_callback(lambda v: v[:1], ft.ShapeDtypeStruct((2,), np.float64), np.ones(2))
    with pytest.raises(TypeError, match="dtype"):
        ft.pure_callback(lambda v: v.astype(np.float32), ft.ShapeDtypeStruct((2,), np.float64),
                         np.ones(2))


def test_io_callback_kept_in_order_and_per_lane():
    seen = []

    def log(x):
        seen.append(np.asarray(x).tolist())
        return np.float64(len(seen))

    def f(x):
        io_callback(log, ft.ShapeDtypeStruct((), np.float64), x)   # result unused: kept
        return io_callback(log, ft.ShapeDtypeStruct((), np.float64), x + 1)

    assert float(ft.jit(f)(1.0)) == 2.0 and seen == [1.0, 2.0]
    seen.clear()
    ft.vmap(f)(np.array([5.0, 6.0]))
    assert sorted(seen) == [5.0, 6.0, 6.0, 7.0]
    with pytest.raises(ValueError, match="ordered"):
        ft.vmap(lambda x: io_callback(log, ft.ShapeDtypeStruct((), np.float64), x,
                                      ordered=True))(np.ones(2))
    with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
        ft.grad(lambda x: io_callback(log, ft.ShapeDtypeStruct((), np.float64), x))(1.0)


def test_debug_callback_primal_once_per_lane_and_in_loops():
    seen = []

    def f(x):
        ft.debug.callback(lambda v: seen.append(np.asarray(v).tolist()), x)
        return x * x

    assert float(ft.grad(f)(3.0)) == 6.0 and seen == [3.0]
    seen.clear()
    ft.jit(ft.vmap(f))(np.array([1.0, 2.0]))
    assert seen == [1.0, 2.0]
    seen.clear()
    ft.jit(lambda x: lax.scan(lambda c, _: (f(c), None), x, None, length=3)[0])(2.0)
    assert seen == [2.0, 4.0, 16.0]
    ft.effects_barrier()


def test_typeof_and_shape_dtype_struct_like():
    assert ft.typeof(np.ones((2, 3), np.float32)).str_short() == "f32[2,3]"
    shapes = []
    ft.vmap(lambda x: shapes.append(ft.typeof(x).shape) or x)(np.ones((4, 2)))
    assert shapes == [(2,)]
    s = ft.ShapeDtypeStruct.like(np.zeros(3, np.int32))
    assert (s.shape, s.dtype) == ((3,), np.dtype(np.int32))


def test_effects_without_traced_arguments_run_with_their_body(capsys):
    # debug.print("step") / a no-argument io_callback inside a traced body ran once at
    # trace time (scan: once, not per step; cond: both branches; a cached jit: never
    # again); JAX stages them (debugging_primitives_test, custom_linear_solve ordered
    # effects). Under grad they still run once, with the primal computation.
    p = lambda s: ft.debug.print(s)  # noqa: E731
    lax.scan(lambda c, x: (p("step"), (c + x, None))[1], 0.0, fnp.arange(3.0))
    assert capsys.readouterr().out == "step\n" * 3
    lax.cond(True, lambda x: (p("T"), x)[1], lambda x: (p("F"), x)[1], 1.0)
    assert capsys.readouterr().out == "T\n"
    f = ft.jit(lambda x: (p("hi"), x * 2)[1])
    f(1.0), f(2.0)
    assert capsys.readouterr().out == "hi\nhi\n"
    ft.grad(lambda x: (p("g"), ft.debug.print("x {}", x), x * x)[2])(3.0)
    assert capsys.readouterr().out == "g\nx 3.0\n"
    ft.jit(ft.grad(lambda x: (p("jg"), x * x)[1]))(3.0)
    assert capsys.readouterr().out == "jg\n"
    b = np.arange(3.0)
    x = lax.custom_linear_solve(lambda v: (ft.debug.callback(lambda: print("mv")), v)[1], b,
                                lambda mv, r: mv(r))
    np.testing.assert_array_equal(np.asarray(x), b)
    assert capsys.readouterr().out == "mv\n"
    calls = []
    g = ft.jit(lambda: io_callback(lambda: calls.append(1) or np.int32(len(calls)),
                                   ft.ShapeDtypeStruct((), np.int32)))
    assert [int(g()), int(g())] == [1, 2]


def test_debug_print_unused_arguments_raise_as_jax():
    # debugging_primitives_test: test_format_string_errors_with_unused_args and
    # test_accidental_fstring (ft printed the f-string's tracer repr)
    f = ft.jit(lambda x: ft.debug.print("hello: {x}", x=x, y=x))
    with pytest.raises(ValueError, match="Unused keyword arguments"):
        f(np.arange(2))
    with pytest.raises(ValueError, match="Unused positional arguments"):
        ft.jit(lambda x: ft.debug.print("hello", x))(np.arange(2))
    with pytest.raises(ValueError, match="f-string"):
        ft.jit(lambda x: ft.debug.print(f"hello: {x}", x=x))(np.arange(2))


def test_effects_on_closed_over_values_stay_in_their_loop_body():
    # python_callback_test batching_with_side_effects_while_loop: an io_callback of a value
    # closed over from outside a while body was recorded in the outer trace (hoisted out
    # of the loop): jit ran it once for a two-iteration loop
    seen = []

    def f(x):
        def body(i):
            io_callback(lambda v: seen.append(float(v)), None, x, ordered=False)
            ft.debug.callback(lambda v: seen.append(-float(v)), x)
            return i + 1
        return lax.while_loop(lambda i: i < 2, body, 0)
    ft.jit(f)(1.0)
    assert seen == [1.0, -1.0, 1.0, -1.0]
    seen.clear()
    ft.vmap(ft.jit(f))(fnp.arange(2.0))
    assert sorted(seen) == [-1.0, -1.0, -0.0, -0.0, 0.0, 0.0, 1.0, 1.0]


def test_debug_print_takes_jax_options_not_as_format_arguments(capsys):
    ft.jit(lambda x: ft.debug.print("x: {x}", x=x, ordered=True))(2)
    ft.debug.print("y: {}", 3, ordered=False, partitioned=False)
    assert capsys.readouterr().out == "x: 2\ny: 3\n"


def test_debug_print_missing_fields_raise_format_errors_first():
    with pytest.raises(KeyError):
        ft.jit(lambda x: ft.debug.print("hello: {x}", x))(np.arange(2))
    with pytest.raises(IndexError):
        ft.jit(lambda x: ft.debug.print("hello: {}", x=x))(np.arange(2))
