"""JAX's top-level conveniences: ft.block_until_ready, devices/device_count/
local_device_count/default_backend, ft.disable_jit (jit functions really run as Python),
tree_util.register_pytree_node_class and Partial, and ``functrans.scipy`` reachable from
``import functrans``."""
import functools
import operator
import subprocess
import sys
import threading

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.tree_util import (Partial, register_pytree_node_class, tree_leaves,
                                 tree_structure)


def test_block_until_ready_and_devices():
    tree = {"a": fnp.ones(2), "b": (np.zeros(1), 3.0)}
    assert ft.block_until_ready(tree) is tree
    assert ft.devices("cpu") == ft.devices("interpret") == [fnp.ones(1).devices().pop()]
    assert ft.local_device_count("cpu") == 1 == ft.device_count("cpu")
    assert ft.default_backend() in ("cpu", "interpret", "cuda")
    assert ft.devices() == ft.devices(ft.default_backend())
    with pytest.raises(ValueError, match="unknown backend"):
        ft.devices("tpu")


def test_disable_jit_runs_the_python_function():
    calls = []

    @ft.jit
    def f(x):
        calls.append(type(x).__name__)
        return x * 2 if x > 0 else -x          # Python control flow on a value

    with ft.disable_jit():
        assert float(f(3.0)) == 6.0 and float(f(-1.0)) == 1.0
        assert float(f(2.0)) == 4.0            # no cache: the body runs each call
        assert calls == ["float"] * 3          # concrete values, not tracers
        with ft.disable_jit(False):
            with pytest.raises(ft.errors.ConcretizationError):
                f(3.0)                          # jit again: `if` on a traced value
        g = ft.grad(lambda x: f(x) ** 2)(3.0)   # transforms still trace through it
    assert float(g) == 24.0
    ok = ft.jit(lambda x: x + 1)
    assert float(ok(1.0)) == 2.0 and ok.cache_info()["misses"] == 1   # jit is back on
    seen = []
    with ft.disable_jit():                      # thread-local, as JAX's
        t = threading.Thread(target=lambda: seen.append(ok(fnp.ones(2)).sum()))
        t.start()
        t.join()
    assert ok.cache_info()["misses"] == 2 and float(seen[0]) == 4.0


def test_register_pytree_node_class():
    @register_pytree_node_class
    class Point:
        def __init__(self, x, y, name="p"):
            self.x, self.y, self.name = x, y, name

        def tree_flatten(self):
            return (self.x, self.y), self.name

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children, name=aux)

    p = Point(1.0, np.arange(2.0), "q")
    assert tree_leaves(p)[0] == 1.0
    out = ft.jit(lambda q: Point(q.x * 2, q.y + 1, q.name))(p)
    assert isinstance(out, Point) and out.name == "q" and float(out.x) == 2.0
    g = ft.grad(lambda q: q.x * fnp.sum(q.y))(p)
    assert float(g.x) == 1.0 and g.y.tolist() == [1.0, 1.0]


def test_partial_is_a_pytree():
    p = Partial(fnp.multiply, np.float64(3.0))
    assert float(ft.jit(lambda f, x: f(x))(p, 2.0)) == 6.0
    assert float(ft.grad(lambda a: Partial(fnp.multiply, a)(4.0))(2.0)) == 4.0
    out = ft.jit(lambda a: Partial(fnp.add, a))(1.0)      # returned from a jitted function
    assert isinstance(out, Partial) and float(out(1.0)) == 2.0
    np.testing.assert_array_equal(ft.vmap(lambda f: f(1.0))(Partial(fnp.add, np.arange(3.0))),
                                  [1, 2, 3])
    kw = Partial(fnp.clip, a_min=np.float64(0.0))
    assert tree_leaves(kw) == [0.0] and float(kw(-1.0)) == 0.0
    # a functools.partial stays whole: its arguments are static, not leaves (as JAX)
    inner = functools.partial(operator.add, "static")
    q = Partial(inner, "!")
    assert tree_leaves(q) == ["!"] and q() == "static!"
    assert tree_structure(q) == tree_structure(Partial(inner, "?"))


def test_import_functrans_gives_scipy():
    code = "import functrans; print(float(functrans.scipy.special.gammaln(5.0)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert abs(float(out.stdout) - np.log(24.0)) < 1e-12


def test_ensure_compile_time_eval_computes_constants_while_tracing():
    def f(x):
        with ft.ensure_compile_time_eval():
            noise = ft.random.normal(ft.random.PRNGKey(0), (3,))
            assert not isinstance(noise, ft.tracing.Tracer)     # concrete, not staged
            shift = 1.0 if float(noise.sum()) > 0 else -1.0     # Python may read it
        return x * noise + shift

    eager = ft.random.normal(ft.random.PRNGKey(0), (3,))
    want = 2.0 * np.asarray(eager) + (1.0 if float(eager.sum()) > 0 else -1.0)
    np.testing.assert_allclose(ft.jit(f)(2.0), want, rtol=0, atol=0)
    jaxpr = ft.make_jaxpr(f)(2.0)
    assert "threefry2x32" not in str(jaxpr)    # without the block, the draw is staged
    assert "threefry2x32" in str(ft.make_jaxpr(lambda x: x * ft.random.normal(
        ft.random.PRNGKey(0), (3,)))(2.0))
    # values that depend on a traced input stay traced inside the block
    def g(x):
        with ft.ensure_compile_time_eval():
            return fnp.sin(x)
    assert "sin" in str(ft.make_jaxpr(g)(1.0))
    np.testing.assert_allclose(ft.grad(ft.jit(g))(0.5), np.cos(0.5))
