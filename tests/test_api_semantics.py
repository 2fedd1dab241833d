"""The public API contract (shared/API.md) beyond the name list (which is in
test_api_contract.py):

1. The array methods of API.md on eager ``Array`` and on tracers alike.
2. Bad input: clear TypeError/ValueError/IndexError at trace time naming shapes/arguments.
3. numpy 2 semantics on edge inputs (empty, 0-d, negative axes, integer dtypes, nan/inf).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import functrans as ft
import functrans.numpy as fnp
from functrans import nn, random


# --------------------------------------------------------------------------- 1. array methods

_N = np.arange(6.0).reshape(2, 3)
METHODS = {
    "add_ndarray": lambda a: a + _N, "radd_ndarray": lambda a: _N + a, "rsub_int": lambda a: 2 - a,
    "rtruediv": lambda a: 1.0 / (a + 1), "rpow": lambda a: 2.0 ** a, "pow_int": lambda a: a ** 2,
    "matmul": lambda a: a @ _N.T, "rmatmul": lambda a: _N.T @ a, "rfloordiv": lambda a: 7 // (a + 1),
    "mod": lambda a: a % 4, "rmod": lambda a: 7 % (a + 1), "neg": lambda a: -a,
    "abs": lambda a: abs(-a), "pos": lambda a: +a, "lt_ndarray": lambda a: _N < a,
    "eq_float": lambda a: a == 2.0, "rne": lambda a: 2 != a, "ge": lambda a: a >= _N,
    "T": lambda a: a.T, "mT": lambda a: a.mT, "reshape_tuple": lambda a: a.reshape((3, 2)),
    "reshape_varargs": lambda a: a.reshape(3, 2), "reshape_neg": lambda a: a.reshape(-1),
    "astype_f32": lambda a: a.astype(np.float32), "astype_str": lambda a: a.astype("int32"),
    "sum": lambda a: a.sum(), "sum_axis_keepdims": lambda a: a.sum(axis=1, keepdims=True),
    "sum_positional": lambda a: a.sum(0), "mean": lambda a: a.mean(axis=-1),
    "max_keepdims": lambda a: a.max(axis=0, keepdims=True), "min": lambda a: a.min(),
    "size_ndim_shape": lambda a: a * (a.size + a.ndim + a.shape[0]), "dtype": lambda a: a.astype(a.dtype),
    "idx_int": lambda a: a[1], "idx_neg": lambda a: a[-1, -2], "idx_slice": lambda a: a[:, ::-2],
    "idx_none_ellipsis": lambda a: a[None, ..., None], "idx_ellipsis": lambda a: a[..., 1],
    "idx_int_array": lambda a: a[np.array([1, 0, 1])], "idx_list": lambda a: a[:, [2, 0]],
    "idx_two_lists": lambda a: a[[0, 1], [2, 0]], "idx_bool_mask": lambda a: a[np.array([True, False])],
    "at_set": lambda a: a.at[0, 1].set(9.0), "at_add": lambda a: a.at[:, 1].add(1.0),
    "at_multiply": lambda a: a.at[1].multiply(3.0), "at_min": lambda a: a.at[0].min(1.5),
    "at_max": lambda a: a.at[np.array([0, 0])].max(4.0), "at_get": lambda a: a.at[1, ::2].get(),
    "at_add_duplicates": lambda a: a.at[np.array([0, 0])].add(1.0), "at_neg": lambda a: a.at[-1].set(0.0),
    "iter": lambda a: sum(a), "len": lambda a: a * len(a), "prod": lambda a: a.prod(axis=0),
    "and": lambda a: (a > 1) & (a < 4), "ror": lambda a: True | (a > 1), "invert": lambda a: ~(a > 1),
    "argmax": lambda a: a.argmax(), "argmin_axis": lambda a: a.argmin(axis=1),
    "round": lambda a: (a / 3).round(2), "trace": lambda a: a.trace(), "dot_1d": lambda a: a[0].dot(a[1]),
    "take_scalar": lambda a: a.take(4), "cumsum": lambda a: a.cumsum(axis=1), "var": lambda a: a.var(),
    "rshift": lambda a: a.astype(int) >> 1, "rlshift": lambda a: 1 << a.astype(int),
}


@pytest.mark.parametrize("name", sorted(METHODS))
def test_array_method_eager_and_traced_agree(name):
    f = METHODS[name]
    x = fnp.arange(6.0).reshape(2, 3)
    eager = f(x)
    assert type(eager) is ft.Array, f"{name}: eager result is {type(eager).__name__}"
    for got in (ft.jit(f)(x), ft.vmap(f)(fnp.stack([x, x]))[1]):
        assert np.asarray(got).dtype == eager.dtype, name
        np.testing.assert_allclose(np.asarray(got), eager, rtol=1e-12, err_msg=name)


def test_eager_results_share_memory_with_numpy():
    x = fnp.arange(4.0)
    assert np.shares_memory(np.asarray(x), x) and type(np.asarray(x)) is np.ndarray
    y = fnp.sin(x)
    assert np.shares_memory(np.asarray(y), y)


def test_inplace_operators_do_not_mutate():
    base = np.zeros(3)
    x = fnp.asarray(base)
    y = x
    x += 1.0
    x *= 2
    assert base.tolist() == [0.0, 0.0, 0.0] and y.tolist() == [0.0, 0.0, 0.0]
    assert x.tolist() == [2.0, 2.0, 2.0] and type(x) is ft.Array


_FROM_NUMPY = {   # an Array made from a caller's numpy buffer, through each path that used to
    "asarray": lambda b: fnp.asarray(b),                  # alias it (JAX copies in all of them)
    "asarray_dtype": lambda b: fnp.asarray(b, dtype=np.float64),
    "array_copy_false": lambda b: fnp.array(b, copy=False),
    "reshape": lambda b: fnp.reshape(b, (2, 3)),
    "ravel": lambda b: fnp.ravel(b),
    "transpose": lambda b: fnp.transpose(b),
    "broadcast_to": lambda b: fnp.broadcast_to(b, (2, 6)),
    "slice": lambda b: fnp.asarray(b)[1:],
    "real": lambda b: fnp.real(b),
    "clip_no_bounds": lambda b: fnp.clip(b),
    "lax.convert_same_dtype": lambda b: ft.lax.convert_element_type(b, np.float64),
    "lax.pad_nothing": lambda b: ft.lax.pad(b, 0.0, [(0, 0, 0)]),
    "stop_gradient": lambda b: ft.lax.stop_gradient(b),
    "tree_map_asarray": lambda b: ft.tree_util.tree_map(fnp.asarray, [b])[0],
}


@pytest.mark.parametrize("path", sorted(_FROM_NUMPY))
def test_array_from_numpy_does_not_follow_later_writes_to_the_buffer(path):
    # a data loader refilling one batch buffer: earlier Arrays must keep their values
    buf = np.arange(6.0)
    out = _FROM_NUMPY[path](buf)
    before = np.array(out)
    buf[:] = -1.0
    assert isinstance(out, ft.Array)
    np.testing.assert_array_equal(np.asarray(out), before)


def test_arrays_from_read_only_numpy_data_share_it():
    ro = np.arange(4.0)
    ro.flags.writeable = False
    assert np.shares_memory(np.asarray(fnp.asarray(ro)), ro)   # nobody can change it: no copy


def test_weak_python_scalars_and_default_dtypes():
    f32 = fnp.ones(3, "float32")
    assert (f32 * 2.0).dtype == np.float32 and (2.0 * f32).dtype == np.float32
    assert ft.jit(lambda v: v * 2.0)(f32).dtype == np.float32
    assert ft.jit(lambda v: 2.0 - v)(f32).dtype == np.float32
    assert ft.grad(lambda v: fnp.sum(v * 2.0))(f32).dtype == np.float32
    assert fnp.asarray(1.5).dtype == np.float64 and fnp.array([1.0, 2.0]).dtype == np.float64
    assert fnp.asarray(3).dtype == np.int64 and fnp.asarray(True).dtype == np.bool_
    i32 = fnp.ones(2, "int32")
    assert (i32 + 1).dtype == np.int32 and ft.jit(lambda v: v + 1)(i32).dtype == np.int32
    assert (i32 + 1.5).dtype == np.float64 and ft.jit(lambda v: v + 1.5)(i32).dtype == np.float64
    c = fnp.asarray(np.array([1 + 2j], np.complex64))
    assert (c * 2.0).dtype == np.complex64 and ft.jit(lambda v: v * 2.0)(c).dtype == np.complex64
    assert (f32 * 1j).dtype == np.complex64 and ft.jit(lambda v: v * 1j)(f32).dtype == np.complex64



@pytest.mark.parametrize("t", [3, 2.5])
@pytest.mark.parametrize("expr", [
    lambda x, t: x * (1.0 - 0.9 ** t), lambda x, t: x * (t + 1), lambda x, t: x * (t * 0.5),
    lambda x, t: x * (t / 2), lambda x, t: x * fnp.sin(t), lambda x, t: x * (t ** 2),
    lambda x, t: x * fnp.maximum(t, 1.5), lambda x, t: x * fnp.where(t > 1, t, 2.0),
    lambda x, t: x * fnp.power(2.0, t), lambda x, t: x * fnp.exp(t),
    lambda x, t: x * (t - 0.5), lambda x, t: x * fnp.arctan2(t, 2.0)])
def test_a_traced_python_scalar_combined_with_python_scalars_stays_weak(expr, t):
    # an optimiser's step counter: JAX 0.10.2 (x64 on) gives float32 for every one of
    # these; the weak scalar argument and the literals promoted to a strong float64,
    # which turned the float32 arrays into float64
    x = np.ones(3, np.float32)
    assert ft.make_jaxpr(expr)(x, t).jaxpr.outvars[0].aval.dtype == np.float32
    out = ft.jit(expr)(x, t)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expr(x.astype(np.float64), float(t)), rtol=1e-6)
    assert ft.make_jaxpr(lambda t: t * 0.5 + 1)(t).jaxpr.outvars[0].aval.weak_type


_DTYPES = ["float64", "float32", "int64", "int32", "uint64", "uint32", "bool"]


@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow",
                                "lshift", "rshift", "and_", "lt"])
def test_operator_dtypes_agree_eager_and_traced(op):
    import operator
    fn = getattr(operator, op)
    supported = {np.dtype(d) for d in _DTYPES + ["complex64", "complex128"]}
    for d1 in _DTYPES:
        for other in [np.array([1, 2], d) for d in _DTYPES] + [2, 2.5, True]:
            x = fnp.asarray(np.array([1, 2], d1))
            try:
                eager = fn(x, other)
            except TypeError:
                with pytest.raises(TypeError):
                    ft.jit(lambda a: fn(a, other))(x)
                continue
            traced = ft.jit(lambda a: fn(a, other))(x)
            what = f"{op}({d1}, {other!r})"
            assert type(eager) is ft.Array and eager.dtype in supported, what
            assert traced.dtype == eager.dtype, what
            if eager.dtype.kind in "fc":   # compiled math may differ from numpy's by ≤ 4 ulp
                np.testing.assert_array_max_ulp(np.asarray(traced), np.asarray(eager), 4)
            else:
                np.testing.assert_array_equal(traced, eager, err_msg=what)


@pytest.mark.parametrize("method", ["sum", "prod", "cumsum", "cumprod"])
def test_narrow_unsigned_accumulates_as_uint64_in_every_mode(method):
    for dt in (np.uint32, np.uint8):
        x = fnp.asarray(np.array([1, np.iinfo(dt).max], dt))
        want = getattr(np, method)(np.asarray(x))
        for got in (getattr(x, method)(), getattr(fnp, method)(x),
                    ft.jit(lambda v: getattr(v, method)())(x)):
            assert got.dtype == np.uint64 == want.dtype
            np.testing.assert_array_equal(got, want)
    assert fnp.asarray(np.array([1, 2 ** 31], np.uint32)).sum().item() == 1 + 2 ** 31


def test_round_of_bool_and_int_keeps_dtype():
    b = fnp.asarray([True, False])
    for f in (lambda v: v.round(), fnp.round, lambda v: fnp.round(v, 2)):
        assert f(b).dtype == np.bool_ and ft.jit(f)(b).dtype == np.bool_
    i = fnp.arange(3)
    assert fnp.round(i).dtype == np.int64 and i.round().dtype == np.int64


def test_unsupported_numpy_dtypes_map_to_supported_ones():
    assert fnp.asarray(np.ones(2, np.uint64)).dtype == np.uint64     # supported, kept
    # int16/uint16 are dtypes of their own, kept (tests/test_int16.py)
    for dt in (np.int16, np.uint16):
        assert fnp.asarray(np.ones(2, dt)).dtype == dt
    assert fnp.asarray(np.ones(2, np.longdouble)).dtype == np.float64
    assert fnp.sum(np.ones(2, np.uint64)).dtype == np.uint64


# --------------------------------------------------------------------------- 2. bad input

_A, _B = np.ones((2, 3)), np.ones((4,))
SHAPE_ERRORS = [
    ("add", lambda x, y: fnp.add(x, y), (_A, _B), ValueError, ["(2, 3)", "(4,)"]),
    ("operator_add", lambda x, y: fnp.asarray(x) + y, (_A, _B), ValueError, ["(2, 3)", "(4,)"]),
    ("operator_radd", lambda x, y: y * fnp.asarray(x), (_A, _B), ValueError, ["(2, 3)", "(4,)"]),
    ("maximum", fnp.maximum, (_A, _B), ValueError, ["(2, 3)", "(4,)"]),
    ("less", fnp.less, (_A, _B), ValueError, ["(2, 3)", "(4,)"]),
    ("logical_and", fnp.logical_and, (_A, _B), ValueError, ["(2, 3)", "(4,)"]),
    ("power", fnp.power, (_A, _B), ValueError, ["(2, 3)", "(4,)"]),
    ("floor_divide", fnp.floor_divide, (_A, _B), ValueError, ["(2, 3)", "(4,)"]),
    ("where", lambda x, y: fnp.where(x > 0, x, y), (_A, _B), ValueError, ["(2, 3)", "(4,)"]),
    ("clip", lambda x, y: fnp.clip(x, y, 5.0), (_A, _B), ValueError, ["(2, 3)", "(4,)"]),
    ("matmul", fnp.matmul, (_A, np.ones((4, 2))), ValueError, ["(2, 3)", "(4, 2)"]),
    ("operator_matmul", lambda x, y: fnp.asarray(x) @ y, (_A, np.ones((4, 2))), ValueError,
     ["(2, 3)", "(4, 2)"]),
    ("dot", fnp.dot, (_A, np.ones((4, 2))), ValueError, ["(2, 3)", "(4, 2)"]),
    ("einsum", lambda x, y: fnp.einsum("ij,jk", x, y), (_A, np.ones((4, 2))), ValueError,
     ["(2, 3)", "(4, 2)"]),
    ("concatenate", lambda x, y: fnp.concatenate([x, y]), (_A, np.ones((2, 4))), ValueError,
     ["(2, 3)", "(2, 4)"]),
    ("stack", lambda x, y: fnp.stack([x, y]), (_A, np.ones((2, 4))), ValueError,
     ["(2, 3)", "(2, 4)"]),
    ("reshape", lambda x: fnp.reshape(x, (4, 2)), (_A,), ValueError, ["(2, 3)", "(4, 2)"]),
    ("reshape_method", lambda x: fnp.asarray(x).reshape(4, 2), (_A,), ValueError,
     ["(2, 3)", "(4, 2)"]),
    ("broadcast_to", lambda x: fnp.broadcast_to(x, (3, 3)), (_A,), ValueError, ["(2, 3)", "(3, 3)"]),
    ("take_along_axis", lambda x: fnp.take_along_axis(x, np.zeros((3, 3), int), 1), (_A,),
     ValueError, ["(2, 3)", "(3, 3)"]),
    ("index", lambda x: fnp.asarray(x)[2], (_A,), IndexError, ["index 2", "size 2"]),
    ("index_negative", lambda x: fnp.asarray(x)[:, -4], (_A,), IndexError, ["-4", "size 3"]),
    ("index_int_list", lambda x: fnp.asarray(x)[[0, 5]], (_A,), IndexError, ["5"]),
    ("take_static", lambda x: fnp.take(x, 7), (_A,), IndexError, ["7", "size 6"]),
    ("linalg_solve", fnp.linalg.solve, (np.eye(3), np.ones(4)), ValueError, ["(4,)", "(3, 3)"]),
    ("dtype_name", lambda x: fnp.asarray(x, dtype="flot32"), (_A,), TypeError, ["flot32"]),
    ("zeros_dtype", lambda x: x + fnp.zeros(3, dtype="foo"), (_A,), TypeError, ["zeros", "foo"]),
    ("astype_dtype", lambda x: fnp.asarray(x).astype("foo"), (_A,), TypeError, ["astype", "foo"]),
    ("sin_str", lambda x: x + fnp.sin("abc"), (_A,), TypeError, ["sin", "str"]),
    ("sin_none", lambda x: x + fnp.sin(None), (_A,), TypeError, ["sin", "None"]),
    ("add_object", lambda x: fnp.add(x, object()), (_A,), TypeError, ["add", "object"]),
    ("operator_str", lambda x: fnp.asarray(x) + "abc", (_A,), TypeError, ["str"]),
    ("sum_none", lambda x: x + fnp.sum(None), (_A,), TypeError, ["None"]),
    ("matmul_str", lambda x: fnp.matmul(x, "abc"), (_A,), TypeError, ["str"]),
    ("axis_str", lambda x: fnp.cumsum(fnp.asarray(x) * 1.0, axis="a"), (_A,), TypeError, ["axis"]),
    ("arange_str", lambda x: fnp.arange("a"), (_A,), TypeError, ["arange", "start"]),
    ("tile_str", lambda x: fnp.tile(x, "a"), (_A,), TypeError, ["tile", "reps"]),
    ("relu_str", lambda x: nn.relu("abc"), (_A,), TypeError, ["str"]),
    ("random_key_str", lambda x: random.normal("abc", (2,)), (_A,), TypeError, ["key"]),
]


@pytest.mark.parametrize("mode", ["eager", "make_jaxpr"])
@pytest.mark.parametrize("case", SHAPE_ERRORS, ids=[c[0] for c in SHAPE_ERRORS])
def test_bad_input_raises_clear_errors(case, mode):
    name, f, args, exc, needles = case
    g = f if mode == "eager" else (lambda *a: ft.make_jaxpr(f)(*a))
    with pytest.raises(exc) as info:
        g(*args)
    msg = str(info.value)
    for n in needles:
        assert n in msg, f"{name} ({mode}): {n!r} not in {msg!r}"
    assert "operands could not be broadcast" not in msg
    assert "gufunc signature" not in msg


def test_take_out_of_range_static_raises_traced_fills():
    x = np.arange(4.0)
    with pytest.raises(IndexError):
        fnp.take(x, [0, 9])      # Python ints: static, checked (an array fills)
    got = ft.jit(lambda v, i: fnp.take(v, i))(x, np.array([1, 9, -1]))
    np.testing.assert_array_equal(got, [1.0, np.nan, 3.0])
    assert fnp.take(x, [0, 9], mode="clip").tolist() == [0.0, 3.0]
    gi = ft.jit(lambda v, i: fnp.take(v, i))(np.arange(4), np.array([7]))
    assert gi.tolist() == [np.iinfo(np.int64).min]


# --------------------------------------------------------------------------- 3. numpy semantics

@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "all", "any", "argmax", "cumsum"])
def test_zero_d_reductions_accept_axis_0_and_minus_1_like_numpy(name):
    x = np.array(2.5)
    for axis in (0, -1):
        want = getattr(np, name)(x, axis=axis)
        for f in (getattr(fnp, name), ft.jit(getattr(fnp, name), static_argnames="axis")):
            got = f(x, axis=axis)
            assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype
            np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError):
        ft.jit(lambda v: getattr(fnp, name)(v, axis=1))(x)


def test_linspace_traced_bounds_are_differentiable():
    f = lambda s: fnp.linspace(s, 2 * s, 5)  # noqa: E731
    np.testing.assert_allclose(ft.jit(f)(1.5), np.linspace(1.5, 3.0, 5), rtol=1e-15)
    g = ft.grad(lambda s: fnp.sum(f(s) ** 2))(1.0)
    np.testing.assert_allclose(g, 2 * np.sum(np.linspace(1.0, 2.0, 5) ** 2), rtol=1e-12)
    got = ft.vmap(lambda a, b: fnp.linspace(a, b, 4, endpoint=False, axis=-1))(
        np.arange(2.0), np.array([4.0, 6.0]))
    np.testing.assert_allclose(got, np.linspace(np.arange(2.0), [4.0, 6.0], 4, endpoint=False,
                                                axis=-1), rtol=1e-15)
    y, step = ft.jit(lambda a: fnp.linspace(a, 1.0, 5, retstep=True))(0.0)
    assert step.item() == 0.25 and y.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert ft.jit(lambda a: fnp.linspace(a, 7, 4, dtype=int))(0).tolist() == [0, 2, 4, 7]
    # eager Array bounds (x[0], not Python floats): numpy wrote into an Array and raised
    x = fnp.array([0.3, -1.2])
    np.testing.assert_allclose(fnp.linspace(x[0], x[1], 5), np.linspace(0.3, -1.2, 5),
                               rtol=1e-15)
    np.testing.assert_allclose(fnp.linspace(x, x[::-1], 3),
                               np.linspace([0.3, -1.2], [-1.2, 0.3], 3), rtol=1e-15)


@pytest.mark.parametrize("jit", [False, True])
def test_linspace_is_jaxs_arithmetic_not_numpys(jit):
    """jax 0.10.2's values (XLA computes start * (1 - i * r) + i * (stop * r), r = 1 / div,
    the step (stop - start) * r); numpy's start + i * step differs in these by an ulp.
    (JAX's CPU code also fuses multiply-adds, so elsewhere its last bit can differ.)"""
    run = (lambda f: ft.jit(f, backend="cpu")) if jit else (lambda f: f)
    f32 = np.float32
    got = run(lambda a, b: fnp.linspace(a, b, 7, endpoint=False))(f32(0.1), f32(0.7))
    want = [0.10000000149011612, 0.18571428954601288, 0.27142858505249023,
            0.3571428656578064, 0.44285714626312256, 0.5285714268684387, 0.6142857074737549]
    assert got.dtype == f32 and got.tolist() == want
    got = run(lambda a, b: fnp.linspace(a, b, 10, endpoint=False))(f32(0.1), f32(0.7))
    assert got[3].item() == 0.2800000011920929 and got[9].item() == 0.6399999856948853
    y, step = run(lambda a: fnp.linspace(a, 2.0, 10, retstep=True))(7.4)
    assert step.item() == -0.6 and y[-1].item() == 2.0     # numpy: -0.6000000000000001
    assert run(lambda a: fnp.linspace(a, 1, 3))(np.int32(0)).dtype == f32   # as JAX
    y, step = run(lambda a: fnp.linspace(a, a + 1, 1, retstep=True))(f32(2.0))
    assert y.tolist() == [2.0] and np.isnan(step) and step.dtype == f32
    y, step = run(lambda a: fnp.linspace(a, a + 1, 1, endpoint=False, retstep=True))(2.0)
    assert step.item() == 1.0
    y, step = run(lambda a: fnp.linspace(a, 1.0, 0, retstep=True))(0.0)
    assert y.shape == (0,) and np.isnan(step)
    assert run(lambda a: fnp.linspace(a, 7, 5, dtype=np.int32))(-6).tolist() == [-6, -3, 0, 3, 7]
    c = run(lambda a: fnp.linspace(a, 1 + 2j, 3))(np.complex64(0))
    assert c.dtype == np.complex64 and c.tolist() == [0j, (0.5 + 1j), (1 + 2j)]


_EDGE_UNARY = ["negative", "abs", "sign", "exp", "log", "sqrt", "square", "reciprocal", "sin",
               "tanh", "arctanh", "floor", "ceil", "round", "isnan", "isfinite", "logical_not"]
_EDGE_INPUTS = {
    "empty": np.zeros((0, 3)), "0d": np.array(2.5), "int32": np.array([-3, 0, 7], np.int32),
    "bool": np.array([True, False]), "uint32": np.array([0, 5, 2 ** 32 - 1], np.uint32),
    "f32_nan_inf": np.array([np.nan, np.inf, -np.inf, 0.5, -0.0], np.float32),
    "f64_nan_inf": np.array([np.nan, np.inf, -np.inf, 0.5, -0.0]),
}


@pytest.mark.parametrize("kind", sorted(_EDGE_INPUTS))
@pytest.mark.parametrize("name", _EDGE_UNARY)
def test_unary_edge_inputs_match_numpy(name, kind):
    x = _EDGE_INPUTS[kind]
    if name == "reciprocal" and kind in ("int32", "bool", "uint32"):
        x = x[x != 0]      # integer 1/0 is numpy's undefined behaviour
    try:
        with np.errstate(all="ignore"):
            want = getattr(np, name)(x)
    except TypeError:      # numpy has no loop (-bool, sign(bool)): neither have we, eagerly
        with pytest.raises(TypeError):
            getattr(fnp, name)(x)
        return
    if name == "round" and kind == "bool":
        want = x           # as under a trace (numpy's float16 is outside the dtypes)
    elif want.dtype == np.float16:
        # numpy computes bool math in float16; functrans widens to float64 (more exact)
        with np.errstate(all="ignore"):
            want = getattr(np, name)(x.astype(np.float64))
    if want.dtype in (np.int8, np.uint8):
        want = want.astype(np.int64)
    got = getattr(fnp, name)(x)
    traced = ft.jit(getattr(fnp, name))(x)
    for g in (got, traced):
        assert g.shape == want.shape and g.dtype == want.dtype, (name, kind, g.dtype, want.dtype)
        np.testing.assert_allclose(g, want, rtol=1e-6, equal_nan=True)


_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)


@given(st.data())
def test_hypothesis_broadcast_binary_matches_numpy(data):
    s1 = data.draw(_shapes)
    s2 = data.draw(hnp.broadcastable_shapes(s1, min_dims=0, max_dims=3, min_side=0, max_side=3))
    d1 = data.draw(st.sampled_from(_DTYPES))
    d2 = data.draw(st.sampled_from(_DTYPES + ["pyfloat", "pyint"]))
    name = data.draw(st.sampled_from(["add", "subtract", "multiply", "maximum", "less",
                                      "true_divide", "arctan2"]))
    x = data.draw(hnp.arrays(np.int64, s1, elements=st.integers(0, 5))).astype(d1)
    y = (2.5 if d2 == "pyfloat" else 3) if d2.startswith("py") else \
        data.draw(hnp.arrays(np.int64, s2, elements=st.integers(1, 5))).astype(d2)
    if name == "subtract" and (x.dtype == np.bool_ or np.asarray(y).dtype == np.bool_):
        return                  # numpy refuses bool - bool
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x, y)
        if want.dtype == np.float16:     # bool math: functrans widens to float64
            want = getattr(np, name)(x.astype(np.float64), y)
    f = getattr(fnp, name)
    for got in (f(x, y), ft.jit(f)(x, y) if not isinstance(y, (int, float)) else
                ft.jit(lambda a: f(a, y))(x)):
        assert got.shape == want.shape and got.dtype == want.dtype, (name, x.dtype, y)
        np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)


@given(st.data())
def test_hypothesis_reductions_match_numpy(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3))
    dt = data.draw(st.sampled_from(["float64", "float32", "int32", "int64", "bool"]))
    x = data.draw(hnp.arrays(np.int64, shape, elements=st.integers(0, 4))).astype(dt)
    name = data.draw(st.sampled_from(["sum", "prod", "mean", "max", "min", "any", "all", "var"]))
    nd = len(shape)
    axis = data.draw(st.one_of(st.none(), st.integers(-nd, nd - 1),
                               st.lists(st.integers(0, nd - 1), unique=True, min_size=1)
                               .map(tuple)))
    keepdims = data.draw(st.booleans())
    want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    f = lambda v: getattr(fnp, name)(v, axis=axis, keepdims=keepdims)  # noqa: E731
    for got in (f(x), ft.jit(f)(x)):
        assert got.shape == want.shape and got.dtype == want.dtype, (name, dt, axis)
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_jax_dtypes_module_and_float0_tangents():
    """functrans.dtypes as jax.dtypes (a ported program raised AttributeError): float0
    tangents for integer primals in jvp (zeros), canonicalize_dtype, scalar_type_of."""
    import functrans.dtypes as dtypes
    out, t = ft.jvp(lambda v, i: v * i, (2.0, 3), (1.0, np.zeros((), dtypes.float0)))
    assert (out.item(), t.item()) == (6.0, 3.0)
    assert dtypes.canonicalize_dtype(float) == np.float64 and dtypes.itemsize_bits(dtypes.float0) == 0
    assert dtypes.scalar_type_of(np.int8(1)) is int and not dtypes.issubdtype(np.uint32, dtypes.prng_key)


def test_flatten_util_ravel_pytree_as_jax():
    """jax.flatten_util.ravel_pytree (a ported DP-SGD program raised ModuleNotFoundError):
    tree_flatten order, promoted dtype, casts back on unravel, empty tree float32, equal
    unravel functions (a jit static argument), and flat vectors under grad / vmap / jit."""
    from functrans.flatten_util import ravel_pytree
    tree = {"w": np.arange(6.).reshape(2, 3), "b": (np.ones(2, np.int32), 3.0)}
    flat, unravel = ravel_pytree(tree)
    assert flat.dtype == np.float64 and flat.tolist() == [1., 1., 3., 0., 1., 2., 3., 4., 5.]
    back = unravel(flat + 0.5)
    assert back["b"][0].dtype == np.int32 and back["b"][0].tolist() == [1, 1]
    assert back["w"].shape == (2, 3) and back["w"][1, 2] == 5.5
    with pytest.raises(TypeError, match="dtype"):
        unravel(flat.astype(np.float32))
    empty, un0 = ravel_pytree({})
    assert empty.shape == (0,) and empty.dtype == np.float32 and un0(empty) == {}
    assert ravel_pytree(tree)[1] == unravel and hash(ravel_pytree(tree)[1]) == hash(unravel)
    p = {"a": np.array([1., 2.]), "c": np.array(3.)}
    f, un = ravel_pytree(p)
    loss = lambda v: fnp.sum(un(v)["a"] ** 2) * un(v)["c"]  # noqa: E731
    np.testing.assert_allclose(ft.jit(ft.grad(loss))(f), [6., 12., 5.])
    per = ft.vmap(lambda t: ravel_pytree(t)[0])({"a": np.ones((4, 2)), "c": np.arange(4.)})
    assert per.shape == (4, 3) and per[:, 2].tolist() == [0., 1., 2., 3.]


def test_grad_allow_int_gives_float0_zeros():
    """grad/value_and_grad(allow_int=True) as JAX's (a ported optimiser-state program
    raised on the keyword): integer leaves get float0 zero gradients, float leaves theirs;
    without it an integer leaf is still a TypeError."""
    import functrans.dtypes as dtypes
    f = lambda s: fnp.sum(s["m"] ** 2) + fnp.sum(s["count"]) * 0.0  # noqa: E731
    state = {"count": np.arange(3, dtype=np.int32), "m": np.array([1., 2.])}
    g = ft.grad(f, allow_int=True)(state)
    assert g["count"].dtype == dtypes.float0 and g["count"].shape == (3,)
    assert g["m"].tolist() == [2., 4.]
    (v, g2) = ft.value_and_grad(f, allow_int=True)(state)
    assert v == 5.0 and g2["m"].tolist() == [2., 4.]
    inner = ft.jit(lambda s: ft.grad(f, allow_int=True)(s)["m"])
    assert inner(state).tolist() == [2., 4.]
    with pytest.raises(TypeError, match="floating"):
        ft.grad(f)(state)


def test_vmap_of_grad_allow_int_batches_float0_zeros():
    """vmap(grad(..., allow_int=True)) raised TypeError "unsupported dtype float0" (the
    float0 output was traced as a constant); JAX 0.10.2 shapes: float0 (3, 2) and the
    float grad (3, 2); with out_axes=(1, 0): float0 (2, 3), float64 (3, 2)."""
    import functrans.dtypes as dtypes
    g = ft.grad(lambda v, w: fnp.sum(v * w * w), argnums=(0, 1), allow_int=True)
    n, w = np.arange(6, dtype=np.int32).reshape(3, 2), np.arange(6.0).reshape(3, 2)
    for run in (ft.vmap(g), ft.jit(ft.vmap(g))):
        d0, d1 = run(n, w)
        assert d0.dtype == dtypes.float0 and d0.shape == (3, 2)
        assert d1.tolist() == (2 * n * w).tolist()
    d0, d1 = ft.vmap(g, out_axes=(1, 0))(n, w)     # the float grad keeps its own axis
    assert d0.shape == (2, 3) and d1.tolist() == (2 * n * w).tolist()
    d0, d1 = ft.vmap(g, in_axes=1, out_axes=-1)(n, w)
    assert d0.shape == (3, 2) and d1.tolist() == (2 * n * w).tolist()
    d0, d1 = ft.vmap(ft.vmap(g))(n, w)
    assert d0.dtype == dtypes.float0 and d0.shape == (3, 2)


def test_vjp_takes_float0_cotangents_for_integer_outputs():
    """JAX's vjp takes float0 zeros as the cotangent of an integer or bool output (JAX
    0.10.2: (3., 3., 3.) below); functrans raised TypeError "not a valid array"."""
    import functrans.dtypes as dtypes
    _, f = ft.vjp(lambda v: ((v * 2).astype(np.int32), v * 3, v > 1), np.array([1., 2., 3.]))
    f0 = np.zeros(3, dtypes.float0)
    (g,) = f((f0, np.ones(3), f0))
    assert g.tolist() == [3.0, 3.0, 3.0]
    with pytest.raises(TypeError):          # a float0 of another shape is still refused
        f((np.zeros(2, dtypes.float0), np.ones(3), f0))


def test_filled_arrays_under_jit_are_broadcast_scalars_not_baked_constants():
    # jnp.zeros((n, n)) under jit is one broadcast of a literal in JAX; as a constant
    # array the compiled program read it from memory (and its first call took 0.5 s
    # longer at 2000 x 2000); eagerly, under grad and jvp it stays a concrete array
    fills = [lambda x: fnp.zeros((40, 40)), lambda x: fnp.ones((40, 40), "float32"),
             lambda x: fnp.full((40, 40), 2.5), lambda x: fnp.empty((40, 40)),
             lambda x: fnp.zeros_like(x), lambda x: fnp.ones_like(x),
             lambda x: fnp.full_like(x, -0.0)]
    x = np.ones((40, 40))
    for make in fills:
        lowered = ft.jit(lambda x: x + make(x)).lower(x)
        assert not lowered.jaxpr.jaxpr.constvars, lowered.as_text()
        np.testing.assert_array_equal(ft.jit(lambda x: x + make(x))(x), x + make(x))

    def under_grad(x):
        z = fnp.zeros(3)
        assert np.asarray(z).tolist() == [0.0, 0.0, 0.0]      # concrete: numpy reads it
        return (x * fnp.ones(3)).sum()
    np.testing.assert_array_equal(ft.grad(under_grad)(np.arange(3.0)), [1.0, 1.0, 1.0])
    assert np.asarray(ft.jvp(lambda x: x + fnp.full(3, 2.0), (np.zeros(3),),
                             (np.ones(3),))[0]).tolist() == [2.0, 2.0, 2.0]


def test_numpy_functions_on_arrays_compute_as_on_numpy_arrays():
    """numpy's Python code sorts the arrays it derives in place (ar.sort()); an Array's
    JAX sort returns a copy, so np.unique(Array) returned unsorted, repeated values:
    unique([1, -1, 1, 1]) gave ([1, -1, 1], counts [1, 1, 2]). numpy's functions now see
    plain views (as JAX arrays convert), no copy."""
    x = fnp.asarray(np.array([1, -1, 1, 1]))
    vals, counts = np.unique(x, return_counts=True)
    assert vals.tolist() == [-1, 1] and counts.tolist() == [1, 3]
    assert np.unique(fnp.asarray([3.0, 1.0, 2.0, 1.0])).tolist() == [1.0, 2.0, 3.0]
    a, b = fnp.asarray([3, 1, 2, 7]), fnp.asarray([2, 3, 9])
    assert np.intersect1d(a, b).tolist() == [2, 3]
    assert np.union1d(a, b).tolist() == [1, 2, 3, 7, 9]
    assert np.setdiff1d(a, b).tolist() == [1, 7]
    assert np.isin(a, b).tolist() == [True, False, True, False]
    assert float(np.median(fnp.asarray([5.0, 1.0, 3.0, 2.0]))) == 2.5
    assert np.percentile(fnp.asarray([5.0, 1.0, 3.0]), 50) == 3.0
    big = fnp.asarray(np.arange(12.0).reshape(3, 4))
    assert np.may_share_memory(np.squeeze(big), big)     # numpy's view of the Array's data
    assert x.sort().tolist() == [-1, 1, 1, 1] and x.tolist() == [1, -1, 1, 1]   # JAX's method
