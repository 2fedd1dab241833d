"""``pmap``: one process maps the leading axis as ``vmap(axis_name=)`` does, compiled (any
mapped size: functrans is lenient where JAX would need that many devices); many processes
(``mpiexec -n 2``) map each process's local slice with the axis spanning the processes.

The JAX figures were computed with JAX 0.10.2, x64, on 4 forced host devices
(``XLA_FLAGS=--xla_force_host_platform_device_count=4``)."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.stages import ArgInfo
from jaxpr_ir import ShapedArray

from tests.test_distributed import needs_mpi, run_mpi

W = np.array([0.5, -1.0])
XS = np.arange(24.0).reshape(4, 3, 2) / 10
YS = np.arange(12.0).reshape(4, 3) / 7


def loss(w, x, y):
    return fnp.mean((fnp.tanh(x @ w) - y) ** 2)


def test_data_parallel_step_equals_jax():
    # pmap of grad with pmean: the classic data-parallel step
    step = ft.pmap(lambda w, x, y: w - 0.1 * lax.pmean(ft.grad(loss)(w, x, y), "b"), "b",
                   in_axes=(None, 0, 0))
    out = np.asarray(step(W, XS, YS))
    assert out.shape == (4, 2)
    np.testing.assert_allclose(out, [[0.6809894866397275, -0.8048336959737302]] * 4,
                               rtol=1e-13)
    # the same with replicated weights passed mapped
    np.testing.assert_allclose(ft.pmap(lambda w, x, y: lax.pmean(ft.grad(loss)(w, x, y), "b"),
                                       "b")(np.stack([W] * 4), XS, YS),
                               (W - out) / 0.1, rtol=1e-12)


def test_grad_of_pmap_with_psum_equals_jax():
    f = ft.pmap(lambda a: fnp.sin(a) * lax.psum(a, "i"), "i")
    g = ft.grad(lambda x: (f(x) ** 2).sum())(np.array([0.1, 0.2, 0.3, 0.4]))
    np.testing.assert_allclose(g, [0.7754994346940908, 0.96624844620768, 1.1414725772940648,
                                   1.2941861947985525], rtol=1e-13)


def body(a):
    perm = [(k, (k + 1) % 4) for k in range(4)]
    return (lax.psum(a, "i") * a, lax.all_gather(a, "i"), lax.ppermute(a, "i", perm),
            lax.axis_index("i"), lax.pmax(a, "i"))


def test_collectives_equal_vmap():
    x = np.random.default_rng(0).normal(size=(4, 3))
    f = ft.pmap(body, "i")
    for got, want in zip(f(x), ft.vmap(body, axis_name="i")(x)):
        np.testing.assert_array_equal(got, want)
    assert f.__wrapped__ is body and f(x)[3].tolist() == [0, 1, 2, 3]
    # a JAX program written for local_device_count() devices
    n = ft.local_device_count()
    assert ft.pmap(lambda v: lax.psum(v, "i"), "i")(np.ones((n, 2))).tolist() == [[n, n]] * n


def test_axes_static_kwargs_and_out_axes_none():
    x = np.arange(8.0).reshape(4, 2)
    np.testing.assert_array_equal(ft.pmap(lambda a: a, in_axes=1, out_axes=1)(x), x)
    np.testing.assert_array_equal(ft.pmap(lambda a: a, out_axes=1)(x), x.T)
    for in_axes in [(0, None), (0,)]:   # one entry per argument, or per non-static one
        f = ft.pmap(lambda a, n: a * n, static_broadcasted_argnums=1, in_axes=in_axes)
        np.testing.assert_array_equal(f(x, 3), 3 * x)
    np.testing.assert_array_equal(ft.pmap(lambda a, b: a * b)(x, b=x), x * x)
    s = ft.pmap(lambda a: lax.psum(a, "i"), "i", out_axes=None)(x)
    assert s.shape == (2,) and s.tolist() == [12.0, 16.0]
    a, one = ft.pmap(lambda a: (a, 1.0))(x)   # an unmapped output is broadcast
    assert one.tolist() == [1.0] * 4
    np.testing.assert_array_equal(ft.pmap(lambda a: a, devices=ft.devices())(x), x)


def test_nested_pmap_vmap_and_jvp():
    x = np.random.default_rng(1).normal(size=(2, 3, 2))
    inner = lambda a: a * lax.psum(a, "j") - lax.pmean(a, "i")   # noqa: E731
    want = ft.vmap(ft.vmap(inner, axis_name="j"), axis_name="i")(x)
    np.testing.assert_allclose(ft.pmap(ft.pmap(inner, "j"), "i")(x), want, rtol=1e-14)
    np.testing.assert_allclose(ft.pmap(ft.vmap(inner, axis_name="j"), "i")(x), want,
                               rtol=1e-14)
    np.testing.assert_allclose(ft.vmap(ft.pmap(inner, "j"), axis_name="i")(x), want,
                               rtol=1e-14)
    f = ft.pmap(lambda a: fnp.cos(a) * lax.psum(a, "i"), "i")
    t = np.ones(2)
    np.testing.assert_allclose(ft.jvp(f, (x[:, 0, 0],), (t,))[1],
                               ft.jvp(ft.vmap(lambda a: fnp.cos(a) * lax.psum(a, "i"),
                                              axis_name="i"), (x[:, 0, 0],), (t,))[1])


def test_errors():
    x = np.ones((4, 2))
    with pytest.raises(ValueError, match="at least one argument with a mapped axis"):
        ft.pmap(lambda a: a, in_axes=None)(x)
    with pytest.raises(ValueError, match="varies along the mapped axis"):
        ft.pmap(lambda a: a, out_axes=None)(x)
    with pytest.raises(ValueError, match="scalar"):
        ft.pmap(lambda a: a)(3.0)
    with pytest.raises(ValueError, match="in_axes has 3 entries"):
        ft.pmap(lambda a, b: a, in_axes=(0, 0, 0))(x, x)
    with pytest.raises(ValueError, match="devices must be this process"):
        ft.pmap(lambda a: a, devices=["tpu:0"])
    with pytest.raises(TypeError, match="callable"):
        ft.pmap(3)
    with pytest.raises(NameError, match="unbound axis name"):
        ft.pmap(lambda a: lax.psum(a, "k"), "i")(x)


def test_lower_compile_and_trace_are_jits():
    # pmap had no .lower / .trace (22 of JAX's pmap_test failures): jit's stages
    f = ft.pmap(lambda x: x - lax.pmean(x, "i"), axis_name="i")
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    want = x - x.mean(0)
    lowered = f.lower(x)
    exe = lowered.compile()
    np.testing.assert_array_equal(exe(x), want)
    np.testing.assert_array_equal(f.lower(ft.ShapeDtypeStruct((4, 4), np.float32))
                                  .compile()(x), want)
    ((aval,), kwargs) = lowered.in_avals
    assert (aval.shape, aval.dtype, kwargs) == ((4, 4), np.float32, {})
    assert lowered.out_info == ft.ShapeDtypeStruct((4, 4), np.float32)
    # JAX's ArgInfo compares by value (it printed equal but compared unequal)
    assert lowered.args_info == (((ArgInfo(ShapedArray((4, 4), np.float32), False),), {}))
    assert lowered.args_info != (((ArgInfo(ShapedArray((4, 4), np.float32), True),), {}))
    assert "reduce_sum" in lowered.as_text() and lowered.compiler_ir() is not None
    assert lowered.cost_analysis()["flops"] > 0 and exe.cost_analysis()["flops"] > 0
    assert "reduce_sum" in str(f.trace(x).jaxpr)
    mem = exe.memory_analysis()     # JAX's field names; f32[4, 4] in and out
    assert (mem.argument_size_in_bytes, mem.output_size_in_bytes) == (64, 64)
    assert mem.temp_size_in_bytes == exe.cost_analysis()["temp_bytes"]
    assert exe.runtime_executable() is exe.exe
    with pytest.raises(TypeError, match="input pytree does not match"):
        exe([x])
    with pytest.raises(TypeError, match="compiled with float32.*called with int32"):
        exe(x.astype(np.int32))
    f.clear_cache()


@needs_mpi
def test_pmap_over_two_processes():
    r = run_mpi(2, "pmap_processes.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split() == ["OK"]
