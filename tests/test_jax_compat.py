"""Small JAX-API compatibility pieces: ft.test_util.check_grads (passes on correct rules,
fails on wrong ones), Array.block_until_ready/devices/sharding, config's jax_enable_x64,
lax.Precision and the precision=/preferred_element_type= arguments."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.test_util import check_grads


def test_check_grads_passes_on_library_functions():
    x = np.array([0.3, -1.2, 2.0])
    check_grads(lambda a: fnp.sin(a) * fnp.exp(a), (x,), order=2)
    check_grads(lambda a, b: {"p": a @ b, "q": (a * b,)}, (x, x[::-1].copy()), order=2)
    check_grads(fnp.tanh, (np.asarray(0.4),), order=3, modes=["rev"])
    check_grads(lambda a: fnp.sum(a ** 2), (np.float32(1.5) * np.ones(2, np.float32),), 1)


def _wrong(kind):
    f = ft.custom_vjp(lambda x: fnp.sin(x))
    f.defvjp(lambda x: (fnp.sin(x), x), lambda x, g: (g * (fnp.cos(x) if kind == "ok" else x),))
    return f


def test_check_grads_catches_wrong_rules():
    x = np.array([0.3, 1.1])
    check_grads(_wrong("ok"), (x,), 1, modes=["rev"])
    with pytest.raises(AssertionError, match="vjp"):
        check_grads(_wrong("bad"), (x,), 1, modes=["rev"])
    g = ft.custom_jvp(lambda x: x ** 3)
    g.defjvp(lambda p, t: (p[0] ** 3, 3 * p[0] ** 2 * t[0]))
    check_grads(g, (x,), 1, modes=["fwd"])
    # a second derivative that is wrong: the first-order rule is right, its own jvp is not
    h = ft.custom_jvp(lambda x: x ** 3)
    h.defjvp(lambda p, t: (p[0] ** 3, 3 * ft.stop_gradient(p[0] ** 2) * t[0]))
    check_grads(h, (x,), 1, modes=["fwd"])
    with pytest.raises(AssertionError, match="jvp"):
        check_grads(h, (x,), 2, modes=["fwd"])


def test_check_jvp_check_vjp_take_jax_signature():
    """jax.test_util.check_jvp(f, f_jvp, args, atol, rtol, eps, err_msg) and check_vjp(f,
    f_vjp, args, ...) (JAX's lax_numpy_indexing_test calls them so): functrans's took
    (f, args, ...) and treated the jvp function as the arguments. They check the given
    jvp/vjp function (wrong tangents or outputs fail), not functrans's own."""
    from functools import partial
    from functrans.test_util import check_jvp, check_vjp
    x = (np.array([0.3, -0.7]),)
    check_jvp(fnp.sin, partial(ft.jvp, fnp.sin), x, 1e-6, 1e-6, 1e-4, "sin")
    check_vjp(fnp.sin, partial(ft.vjp, fnp.sin), x, err_msg="sin")
    scaled = lambda p, t: (fnp.sin(p[0]), 1.5 * ft.jvp(fnp.sin, p, t)[1])
    with pytest.raises(AssertionError, match="jvp"):
        check_jvp(fnp.sin, scaled, x)
    shifted = lambda v: (fnp.sin(v) + 1.0, ft.vjp(fnp.sin, v)[1])
    with pytest.raises(AssertionError, match="primal"):
        check_vjp(fnp.sin, shifted, x)
    with pytest.raises(TypeError, match="floating"):
        check_grads(lambda i: i, (np.arange(3),), 1)
    with pytest.raises(ValueError, match="mode"):
        check_grads(fnp.sin, (x,), 1, modes=["sideways"])


def test_check_grads_complex_uses_jax_conjugation():
    # JAX's vjp is the transpose (not the adjoint) of the linear map: the check conjugates
    # the cotangent in and out, so complex-linear functions pass in rev mode
    x = np.array([0.3 + 0.1j, -1.2 + 2.0j, 2.0 - 1.0j])
    check_grads(lambda v: (1 + 2j) * v, (x,), order=1, modes=["rev"])
    check_grads(lambda v: fnp.sin(v) * v, (x,), order=2)
    check_grads(lambda v: fnp.real(v * fnp.conj(v)), (x,), order=2)
    check_grads(fnp.fft.fft, (x,), order=1)
    check_grads(fnp.fft.ifft, (x,), order=2)
    check_grads(fnp.fft.irfft, (x,), order=1)
    check_grads(fnp.fft.hfft, (x,), order=1)
    check_grads(fnp.fft.rfft, (x.real.copy(),), order=1)
    # a rule that returns the adjoint (conj(c) * g) instead of the transpose is caught
    f = ft.custom_vjp(lambda v: (1 + 2j) * v)
    f.defvjp(lambda v: ((1 + 2j) * v, None), lambda _, g: ((1 - 2j) * g,))
    with pytest.raises(AssertionError, match="vjp"):
        check_grads(f, (x,), 1, modes=["rev"])
    ok = ft.custom_vjp(lambda v: (1 + 2j) * v)
    ok.defvjp(lambda v: ((1 + 2j) * v, None), lambda _, g: ((1 + 2j) * g,))
    check_grads(ok, (x,), 1, modes=["rev"])


def test_array_jax_methods():
    x = fnp.arange(3.0)
    assert x.block_until_ready() is x
    y = ft.jit(lambda v: v * 2)(x).block_until_ready()
    assert y.tolist() == [0.0, 2.0, 4.0]
    (dev,) = x.devices()
    assert dev.platform == "cpu" and dev.id == 0 and repr(dev) == "CpuDevice(id=0)"
    assert x.sharding.device_set == {dev} and x.sharding.is_fully_replicated
    assert x.sharding == y.sharding


def test_config_accepts_jax_enable_x64():
    ft.config.update("jax_enable_x64", True)
    assert ft.config.read("jax_enable_x64") is True
    assert fnp.asarray(1.0).dtype == np.float64         # what it means: already the case
    with pytest.raises(ValueError, match="cannot be turned off"):
        ft.config.update("jax_enable_x64", False)
    ft.config.update("jax_debug_nans", False)            # JAX's prefix on other options too
    ft.config.update("jax_platform_name", "cpu")           # the default backend: accepted
    with pytest.raises(AttributeError, match="unknown"):
        ft.config.update("jax_no_such_option", True)


def test_precision_arguments():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    b = a.T.copy()
    want = a.astype(np.float64) @ b.astype(np.float64)
    for p in (None, lax.Precision.HIGHEST, "high", ("default", lax.Precision.HIGH)):
        for f in (lambda u, v: fnp.matmul(u, v, precision=p, preferred_element_type=np.float64),
                  lambda u, v: fnp.dot(u, v, precision=p, preferred_element_type=np.float64),
                  lambda u, v: fnp.tensordot(u, v, 1, precision=p,
                                             preferred_element_type=np.float64),
                  lambda u, v: fnp.einsum("ij,jk->ik", u, v, precision=p,
                                          preferred_element_type=np.float64),
                  lambda u, v: lax.dot(u, v, precision=p, preferred_element_type=np.float64),
                  lambda u, v: lax.dot_general(u, v, (((1,), (0,)), ((), ())), precision=p,
                                               preferred_element_type=np.float64)):
            for g in (f, ft.jit(f)):
                out = g(a, b)
                assert out.dtype == np.float64
                np.testing.assert_allclose(np.asarray(out), want, rtol=1e-12)
    assert fnp.matmul(a, b, precision="highest").dtype == np.float32
    grads = ft.grad(lambda u: fnp.sum(fnp.matmul(u, b, precision=lax.Precision.HIGH)))(a)
    np.testing.assert_allclose(np.asarray(grads), np.broadcast_to(b.sum(1), a.shape))
    with pytest.raises(ValueError, match="precision"):
        fnp.matmul(a, b, precision="ultra")
    with pytest.raises(TypeError, match="precision"):
        lax.dot(a, b, precision=3)
    # float32 operands asked for int32: the float32 product, truncated (JAX 0.10.2's value)
    assert fnp.dot(a * 0.5, b * 0.7, preferred_element_type=np.int32).tolist() == [[1, 4], [4, 17]]
    with pytest.raises(TypeError, match="narrower"):
        fnp.dot(a.astype(np.int32), b.astype(np.int32), preferred_element_type=np.int8)


def test_array_sort_methods_return_copies_as_jax():
    # eager: ndarray's sort sorted in place and returned None; argsort was not stable
    x = fnp.asarray([3.0, 1.0, 2.0, 1.0])
    np.testing.assert_array_equal(x.sort(), [1.0, 1.0, 2.0, 3.0])
    np.testing.assert_array_equal(x, [3.0, 1.0, 2.0, 1.0])
    np.testing.assert_array_equal(x.sort(descending=True), [3.0, 2.0, 1.0, 1.0])
    ties = fnp.asarray([2, 1, 2, 1, 2, 1, 1, 1, 2, 2, 2, 1, 1, 2, 1, 2, 1, 1, 2, 2])
    np.testing.assert_array_equal(ties.argsort(), np.argsort(np.asarray(ties), kind="stable"))
    # numpy's own functions on functrans arrays keep working (they call these methods)
    np.testing.assert_array_equal(np.sort(x), [1.0, 1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.argsort(x), [1, 3, 2, 0])
    np.testing.assert_array_equal(np.nonzero(x)[0], [0, 1, 2, 3])
    assert float(x.ptp()) == 2.0
    np.testing.assert_array_equal(x.nonzero(size=5)[0], [0, 1, 2, 3, 0])


def test_traced_arrays_have_jaxs_sorting_and_search_methods():
    x = np.array([3.0, 1.0, 2.0, 1.0])
    f = ft.jit(lambda v: (v.sort(), v.argsort(), v.nonzero(size=2)[0], v.ptp(),
                          v.searchsorted(2.0), v.conjugate(), v.copy(),
                          v.compress(v > 1.5, size=2), v.itemsize, v.nbytes))
    out = [np.asarray(o) for o in f(x)]
    want = [np.sort(x), np.argsort(x, kind="stable"), [0, 1], 2.0, 2, x, x, [3.0, 2.0], 8, 32]
    for o, w in zip(out, want):
        np.testing.assert_array_equal(o, w)
    g = ft.grad(lambda v: fnp.sum(v.sort() * fnp.arange(4.0)))(x)
    np.testing.assert_array_equal(g, [3.0, 0.0, 2.0, 1.0])
    np.testing.assert_array_equal(ft.vmap(lambda v: v.argsort())(np.stack([x, -x])),
                                  [[1, 3, 2, 0], [0, 2, 1, 3]])


def test_linear_transpose_as_jax():
    x = np.arange(3.0)
    t = ft.linear_transpose(lambda a, b: {"s": a @ np.ones((3, 2)) + b}, x, np.zeros(2))
    ga, gb = t({"s": np.array([1.0, 2.0])})
    np.testing.assert_array_equal(ga, [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(gb, [1.0, 2.0])
    f = ft.linear_transpose(lambda a: 3 * a[::-1], ft.ShapeDtypeStruct((3,), np.float32))
    (r,) = f(np.arange(3, dtype=np.float32))
    assert r.dtype == np.float32 and r.tolist() == [6.0, 3.0, 0.0]
    np.testing.assert_array_equal(ft.jit(lambda c: f(c)[0])(np.ones(3, np.float32)), [3.0] * 3)
    np.testing.assert_array_equal(ft.vmap(lambda c: f(c)[0])(np.eye(3, dtype=np.float32)),
                                  3 * np.eye(3)[::-1])
    with pytest.raises(TypeError, match="transpose"):
        ft.linear_transpose(lambda a: a * a, x)
    with pytest.raises(TypeError, match="structure"):
        t(np.ones(2))


def test_tracers_count_as_arrays_under_every_transform():
    # JAX: isinstance(tracer, jax.Array) is True; code branches on it to tell arrays from
    # lists and scalars, and must take the same branch inside grad/jit/vmap as outside
    seen = []

    def f(x):
        seen.append((isinstance(x, fnp.ndarray), isinstance(x, ft.Array),
                     isinstance([1.0], fnp.ndarray), isinstance(2.0, ft.Array)))
        return fnp.sum(x * x)

    x = fnp.ones(3)
    f(x)
    ft.grad(f)(x)
    ft.jit(f)(x)
    ft.vmap(f)(fnp.ones((2, 3)))
    assert seen == [(True, True, False, False)] * 4
    assert not isinstance(np.ones(2), ft.Array)   # plain numpy arrays are not functrans's


def test_scalar_types_convert_traced_values_as_jax():
    # jnp.float32(x) is asarray(x, float32) in JAX, traced x included; numpy's np.float32
    # would need x's concrete value (inside grad/jit it has none)
    g = ft.grad(lambda x: fnp.sum(fnp.float32(x) * 2.0))(np.ones(3, np.float32))
    np.testing.assert_array_equal(g, [2.0, 2.0, 2.0])
    idx = ft.jit(lambda w: fnp.int64(w))(np.array([1.5, 2.5]))
    assert idx.dtype == np.int64 and idx.tolist() == [1, 2]
    assert fnp.float32(1.0).dtype == np.float32 and isinstance(fnp.float32(1.0), ft.Array)
    # and they still stand for numpy's types wherever a dtype is read
    assert fnp.float32 == np.float32 and np.dtype("float32") == fnp.float32
    assert {np.float32: "f"}[fnp.float32] == "f"
    assert fnp.zeros(2, fnp.int32).dtype == np.int32 and fnp.dtype(fnp.uint8) == np.uint8
    assert fnp.issubdtype(fnp.float16, fnp.floating) and isinstance(np.float32(1), fnp.float32)
    assert fnp.finfo(fnp.float32).bits == 32 and fnp.iinfo(fnp.int8).max == 127


def test_top_k_along_any_axis_with_gradients():
    # JAX's lax.top_k(operand, k, axis=...) (testTopKGrad runs axis 0 and -1)
    x = np.random.default_rng(0).permutation(24).reshape(2, 3, 4).astype(np.float64)
    for axis in (0, 1, -1):
        v, i = lax.top_k(x, 2, axis=axis)
        m = np.moveaxis(x, axis, -1)
        order = np.argsort(-m, axis=-1, kind="stable")[..., :2]
        np.testing.assert_array_equal(np.asarray(i), np.moveaxis(order, -1, axis))
        np.testing.assert_array_equal(np.asarray(v),
                                      np.moveaxis(np.take_along_axis(m, order, -1), -1, axis))
        check_grads(lambda a, axis=axis: lax.top_k(a, 2, axis=axis)[0], (x,), order=2)
    with pytest.raises(ValueError, match="axis=3"):
        lax.top_k(x, 1, axis=3)


def test_lax_full_of_a_traced_scalar_and_default_dtype():
    # jax.lax.full(shape, fill_value, dtype=None): a traced fill value (a custom_vjp bwd
    # rule's cotangent, JAX's testGatherTransposeCotangentDtype) raised
    # TracerArrayConversionError
    f = lambda g: fnp.sum(lax.full((2, 3), g * 2.0, np.float32) * np.arange(6.).reshape(2, 3))  # noqa: E731
    assert float(ft.grad(f)(1.0)) == 30.0
    np.testing.assert_array_equal(np.asarray(ft.vmap(lambda g: lax.full((2,), g))(np.arange(3.))),
                                  [[0., 0.], [1., 1.], [2., 2.]])
    y = ft.jit(lambda g: lax.full((2,), g, np.int32))(3.7)
    assert y.dtype == np.int32 and y.tolist() == [3, 3]
    assert lax.full((2,), 3.5).dtype == np.float64
    with pytest.raises(TypeError, match="scalar"):
        ft.jit(lambda g: lax.full((2,), g))(np.ones(2))
