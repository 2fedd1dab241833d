"""Tracing, jaxpr printing, eval_shape, jit caching and the tracing errors."""
from __future__ import annotations

import collections

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
import jaxpr_ir
from functrans.errors import ConcretizationError, UnexpectedTracerError
from functrans.primitives.elementwise import mul, sin


def test_make_jaxpr_prints_like_jax():
    text = str(ft.make_jaxpr(lambda a, b: fnp.sin(a * b))(np.ones(3), np.ones(3)))
    assert text == ("{ lambda ; a:f64[3] b:f64[3]. let\n"
                    "    c:f64[3] = mul a b\n"
                    "    d:f64[3] = sin c\n"
                    "  in (d,) }")


def test_weak_scalar_keeps_array_dtype_in_the_ir():
    closed = ft.make_jaxpr(lambda x: x * 2.0)(np.ones(2, np.float32))
    assert closed.out_avals[0].dtype == np.float32
    jaxpr_ir.check(closed)


def test_closure_over_outer_tracer_becomes_constvar():
    seen = {}

    def outer(x):
        inner = ft.make_jaxpr(lambda y: y * x)(1.0)
        seen["inner"] = inner
        return x

    ft.make_jaxpr(outer)(2.0)
    inner = seen["inner"]
    assert len(inner.jaxpr.constvars) == 1
    assert str(inner).startswith("{ lambda a:f64[]{weak}; b:f64[]{weak}. let")


def test_eval_jaxpr_and_eval_shape():
    closed = ft.make_jaxpr(lambda x: fnp.sin(x) * x)(np.arange(3.0))
    out, = ft.eval_jaxpr(closed.jaxpr, closed.consts, [np.arange(3.0)])
    np.testing.assert_allclose(out, np.sin(np.arange(3.0)) * np.arange(3.0))
    s = ft.eval_shape(lambda x, y: {"s": x * y}, ft.ShapeDtypeStruct((2, 3), np.float32),
                      np.ones((2, 3), np.float32))
    assert s["s"].shape == (2, 3) and s["s"].dtype == np.float32


def test_concretization_error_names_user_line_and_suggests_fixes():
    def f(x):
        if x > 0:  # the line the message must name
            return x
        return -x

    with pytest.raises(ConcretizationError) as e:
        ft.jit(f)(1.0)
    msg = str(e.value)
    assert "test_tracing.py" in msg and "lax.cond" in msg and "static_argnums" in msg
    assert "fnp.where" in msg


def test_python_control_flow_works_under_grad_outside_jit():
    def f(x):
        if x > 0:
            return x * x
        return -x

    assert float(ft.grad(f)(3.0)) == 6.0
    assert float(ft.grad(f)(-3.0)) == -1.0


def test_float_of_tracer_for_logging_under_grad():
    # float(x) of a differentiated value would detach it (a derivative silently zero when
    # the number is computed with), so it raises; stop_gradient says no derivative is meant
    logged = []

    def f(x):
        logged.append(float(ft.lax.stop_gradient(x)))
        return sin(x)

    ft.grad(f)(0.5)
    assert logged == [0.5]
    with pytest.raises(ft.errors.ConcretizationError, match="detached"):
        ft.grad(lambda x: float(x) * x)(0.5)


def test_leaked_tracer_raises_unexpected_tracer_error():
    box = []

    def f(x):
        box.append(x)
        return x

    ft.jit(f)(1.0)
    with pytest.raises(UnexpectedTracerError, match="escaped"):
        mul(box[0], 2.0)
    with pytest.raises(UnexpectedTracerError):
        bool(box[0])


def test_jit_cache_keyed_on_shape_dtype_weak_and_static():
    calls = []

    def f(x, n):
        calls.append(1)
        return x * n

    jf = ft.jit(f, static_argnums=1)
    jf(np.ones(3), 2)
    jf(np.ones(3), 2)
    assert jf.cache_info() == {"hits": 1, "misses": 1, "entries": 1}
    jf(np.ones(4), 2)
    jf(np.ones(3, np.float32), 2)
    jf(np.ones(3), 3)
    assert jf.cache_info()["misses"] == 4 and len(calls) == 4


def test_unhashable_static_argument_is_named():
    jf = ft.jit(lambda x, opts: x, static_argnums=1)
    with pytest.raises(ValueError, match="non-hashable static argument 1"):
        jf(1.0, [1, 2])


def test_non_array_argument_gives_clear_error():
    with pytest.raises(TypeError, match="str"):
        ft.jit(lambda x: x)("hello")
    with pytest.raises(TypeError, match="not a valid array"):
        ft.grad(lambda x: x)(object())


def test_pytree_arguments_and_outputs_through_jit():
    Point = collections.namedtuple("Point", ["x", "y"])

    def f(p, d):
        return {"sum": p.x + p.y * d["scale"], "pair": (p.x, None)}

    out = ft.jit(f)(Point(np.ones(2), np.ones(2)), {"scale": 3.0})
    np.testing.assert_allclose(out["sum"], 4.0)
    assert out["pair"][1] is None


def test_eager_results_are_arrays_viewable_by_numpy_without_copy():
    x = fnp.sin(np.ones(3))
    assert isinstance(x, ft.Array)
    assert np.shares_memory(np.asarray(x), x)


def test_tracer_to_numpy_inside_jit_is_a_concretization_error():
    with pytest.raises(ConcretizationError):
        ft.jit(lambda x: np.asarray(x))(np.ones(2))


def test_backend_errors_are_clear():
    with pytest.raises(ValueError, match="unknown backend"):
        ft.jit(lambda x: x, backend="tpu")(1.0)
