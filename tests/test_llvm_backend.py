"""The CPU (llvmlite) backend against the interpreter: every jit-able row of the shared
table, random fusible programs (hypothesis), numpy's special values, the vectorised
exp/log, fusion into few kernels, introspection, and the compile caches."""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import functrans as ft
import functrans.numpy as fnp
from backends import llvm as cpu
from backends.llvm import cache
from functrans.tree_util import tree_flatten
from tests.cases import all_cases

CASES = [c for c in all_cases() if c.jit]
# rows whose value goes through transcendental math (libm or our polynomials, vs numpy's
# own SIMD routines): compared at 64 ulp instead of 4
_TRANSCENDENTAL = ("sin", "cos", "tan", "exp", "log", "tanh", "sigmoid", "logistic", "pow",
                   "expm1", "log1p", "sinh", "cosh", "atan", "asin", "acos", "softplus",
                   "erf", "power", "cbrt", "norm", "std", "var", "logsumexp", "softmax")


def _leaves(x):
    return [np.asarray(v) for v in tree_flatten(x)[0]]


def _ulp_close(got, want, nulp, what, floor=0.0):
    """|got - want| <= nulp ulp of want, relative to the largest |want| for sums
    (reassociated reductions); nan where nan; exact for ints and bools."""
    assert got.shape == want.shape, f"{what}: shape {got.shape} vs {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} vs {want.dtype}"
    if got.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    eps = np.finfo(got.dtype).eps
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{what}: nan")
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite], err_msg=f"{what}: inf")
    if finite.any():
        scale = max(floor, np.max(np.abs(want[finite])))
        tol = nulp * eps * np.abs(want[finite]) + max(1e-13 if got.dtype == np.float64 else 0,
                                                      nulp * eps) * scale
        err = np.abs(got[finite] - want[finite])
        assert np.all(err <= tol), f"{what}: max error {err.max()} (tolerance {tol.max()})"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_table_row_on_cpu_matches_interpreter(case):
    args = case.make_args()
    want = _leaves(ft.jit(case.fun, backend="interpret")(*args))
    got = _leaves(ft.jit(case.fun, backend="cpu")(*args))
    assert len(got) == len(want)
    nulp = 64 if any(t in case.name for t in _TRANSCENDENTAL) else 4
    for g, w in zip(got, want):
        _ulp_close(g, w, nulp, case.name)


# --------------------------------------------------------------------------- hypothesis

_UNARY = [fnp.sin, fnp.exp, lambda x: fnp.log(fnp.abs(x) + 0.5), fnp.negative, fnp.abs,
          lambda x: x * 0.5, fnp.sqrt, fnp.floor, fnp.tanh, lambda x: fnp.maximum(x, 0.0)]
_BINARY = [fnp.add, fnp.subtract, fnp.multiply, fnp.maximum, fnp.minimum,
           lambda a, b: fnp.where(a > b, a, b * 2.0), lambda a, b: a / (1.0 + b * b)]
_REDUCE = [lambda x: fnp.sum(x, axis=-1, keepdims=True),
           lambda x: fnp.max(x, axis=0, keepdims=True),
           lambda x: fnp.min(x, axis=None, keepdims=True),
           lambda x: fnp.sum(x, axis=0, keepdims=True)]


@st.composite
def _programs(draw):
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=0, max_size=3)))
    nin = draw(st.integers(1, 3))
    # each input broadcasts from a random sub-shape (size-1 dims)
    in_shapes = [tuple(d if draw(st.booleans()) else 1 for d in shape) for _ in range(nin)]
    steps, nvals = [], nin
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["u", "b", "r"] if shape else ["u", "b"]))
        n = {"u": len(_UNARY), "b": len(_BINARY), "r": len(_REDUCE)}[kind]
        ar = 2 if kind == "b" else 1
        steps.append((kind, draw(st.integers(0, n - 1)),
                      tuple(draw(st.integers(0, nvals - 1)) for _ in range(ar))))
        nvals += 1
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    return shape, in_shapes, steps, dtype, draw(st.integers(0, 2**16))


def _build(shape, steps):
    def f(*xs):
        vals = [fnp.broadcast_to(x, shape) for x in xs]
        for kind, op, ins in steps:
            args = [vals[i] for i in ins]
            v = {"u": _UNARY, "b": _BINARY, "r": _REDUCE}[kind][op](*args)
            vals.append(fnp.broadcast_to(v, shape))
        return vals[len(xs):]
    return f


@settings(max_examples=40, deadline=None)
@given(_programs())
def test_random_fusible_programs_match_interpreter(prog):
    shape, in_shapes, steps, dtype, seed = prog
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(s).astype(dtype) for s in in_shapes]
    f = _build(shape, steps)
    want = _leaves(ft.jit(f, backend="interpret")(*args))
    got = _leaves(ft.jit(f, backend="cpu")(*args))
    for g, w in zip(got, want):
        _ulp_close(g, w, 64, "random program", floor=1.0)   # O(1) inputs; cancellation


# --------------------------------------------------------------------------- special values

_F64_SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324,
                         2.2250738585072014e-308, 1e-300, 1e300, -1e300, 709.78, 710.0,
                         -745.0, -746.0, 0.5, 2.5, -2.5, 3.0, 1.7976931348623157e308])


def _pair_grid(vals):
    a, b = np.meshgrid(vals, vals)
    return a.ravel(), b.ravel()


def _both(f, *args):
    return (_leaves(ft.jit(f, backend="cpu")(*args)),
            _leaves(ft.jit(f, backend="interpret")(*args)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "true_divide", "maximum",
                                  "minimum", "remainder", "less", "not_equal", "greater_equal"])
def test_binary_float_special_values_bitwise(name, dtype):
    a, b = _pair_grid(_F64_SPECIAL.astype(dtype))
    got, want = _both(getattr(fnp, name), a, b)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8), err_msg=name)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint32])
@pytest.mark.parametrize("name", ["floor_divide", "remainder", "maximum", "add", "multiply",
                                  "left_shift", "right_shift", "bitwise_xor", "less"])
def test_binary_int_edge_values_bitwise(name, dtype):
    info = np.iinfo(dtype)
    vals = np.array([0, 1, 2, 3, 7, info.max, info.min, info.max - 1], dtype=dtype)
    if info.min < 0:
        vals = np.concatenate([vals, np.array([-1, -2, -3, -7], dtype=dtype)])
    a, b = _pair_grid(vals)
    if "shift" in name:
        b = np.asarray(b % (8 * a.itemsize + 3), dtype=dtype)   # some amounts out of range
    got, want = _both(getattr(fnp, name), a, b)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w, err_msg=name)


@pytest.mark.parametrize("src", [np.float64, np.float32])
@pytest.mark.parametrize("dst", [np.int64, np.int32, np.uint32, np.bool_, np.float32,
                                 np.float64])
def test_convert_special_values_defined(src, dst):
    x = np.concatenate([_F64_SPECIAL, [3e9, -3e9, 4.5e9, 1e19, -1e19, 0.99, -0.99]]).astype(src)
    got, want = _both(lambda v: v.astype(dst), x)
    # nan and out-of-range conversions to int64/int32 give INT_MIN, as numpy on x86; to
    # uint32 numpy itself varies with the array length (SIMD paths), so only in-range
    # values are compared there (the others are merely defined: no poison)
    keep = (x > -1) & (x < 2.0 ** 32) if dst == np.uint32 else np.ones(x.shape, bool)
    np.testing.assert_array_equal(got[0][keep], want[0][keep])


def _ulps(got, want):
    def key(a):
        i = a.view(np.int64 if a.dtype == np.float64 else np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFFFFFFFFFF), i)
    return np.abs(key(got) - key(want))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["exp", "log"])
def test_vectorised_exp_log_within_4_ulp(name, dtype):
    rng = np.random.default_rng(1)
    if name == "exp":
        lim = (-746.0, 710.0) if dtype == np.float64 else (-104.0, 89.0)
        x = np.concatenate([rng.uniform(*lim, 200_000), rng.uniform(-1, 1, 20_000),
                            _F64_SPECIAL])
    else:
        x = np.concatenate([np.exp(rng.uniform(-740, 709, 200_000)), rng.uniform(0.5, 2, 20_000),
                            10.0 ** rng.uniform(-323, -308, 2000), np.abs(_F64_SPECIAL),
                            -_F64_SPECIAL])
    x = x.astype(dtype)
    got = np.asarray(ft.jit(getattr(fnp, name), backend="cpu")(x))
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    assert _ulps(got[ok], want[ok]).max() <= 4
    # it is SIMD code, not a libm call
    text = ft.jit(getattr(fnp, name), backend="cpu").lower(x).compile().as_text()
    after = text.split("after optimisation")[1]
    assert "x double>" in after or "x float>" in after


# --------------------------------------------------------------------------- fusion, introspection

def test_fusible_chain_is_fewer_kernels_than_equations():
    f = lambda x, y: fnp.sum(fnp.sin(x) * fnp.cos(y) + fnp.exp(-x * x) * 0.5 + fnp.tanh(y))
    x, y = np.linspace(-1, 1, 64), np.linspace(0, 2, 64)
    lowered = ft.jit(f, backend="cpu").lower(x, y)
    n_eqns = len(lowered.jaxpr.jaxpr.eqns)
    cost = lowered.compile().cost_analysis()
    assert cost["kernels"] == 1 < n_eqns
    assert cost["flops"] > 0 and cost["bytes accessed"] >= 2 * 64 * 8
    np.testing.assert_allclose(ft.jit(f, backend="cpu")(x, y), f(x, y), rtol=1e-13)


def test_broadcasts_and_transposes_fold_into_index_arithmetic():
    f = lambda a, b: (a[:, None] * b[None, :]).T + 1.0
    a, b = np.arange(3.0), np.arange(4.0)
    c = ft.jit(f, backend="cpu").lower(a, b).compile()
    assert c.cost_analysis()["host steps"] == 0
    np.testing.assert_array_equal(ft.jit(f, backend="cpu")(a, b), (a[:, None] * b[None, :]).T + 1)


def test_unsupported_equations_run_as_host_steps():
    f = lambda a, b: fnp.exp(a @ b) + 1.0
    a, b = np.ones((3, 4)), np.ones((4, 2))
    c = ft.jit(f, backend="cpu").lower(a, b).compile()
    assert c.cost_analysis()["host steps"] >= 1
    np.testing.assert_allclose(ft.jit(f, backend="cpu")(a, b), np.exp(a @ b) + 1.0, rtol=1e-15)


def test_as_text_shows_llvm_ir_before_and_after():
    text = ft.jit(lambda x: x + 1.0, backend="cpu").lower(np.ones(8)).compile().as_text()
    assert "define void" in text and "after optimisation" in text


def test_empty_and_scalar_shapes():
    f = lambda x: (fnp.sum(x * 2.0), x + 1.0)
    for x in (np.zeros((0, 3)), np.float64(3.0), np.ones((2, 0, 2))):
        got, want = _both(f, x)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


# --------------------------------------------------------------------------- caches

def _compile_fresh(x):
    cache.clear_memory()
    return ft.jit(lambda v: fnp.exp(v) * 3.0 + 0.25, backend="cpu")(x)


@pytest.mark.parametrize("damage", ["truncate", "garbage", "flip"])
def test_disk_cache_rejects_damaged_files_and_rebuilds(tmp_path, monkeypatch, damage):
    monkeypatch.setenv("FUNCTRANS_CACHE_DIR", str(tmp_path))
    x = np.linspace(-2, 2, 17)
    want = np.exp(x) * 3.0 + 0.25
    before = dict(cache.stats)
    np.testing.assert_allclose(_compile_fresh(x), want, rtol=1e-15)
    files = [p for p in os.listdir(tmp_path) if p.endswith(".ftobj")]
    assert len(files) == 1
    path = tmp_path / files[0]
    good = path.read_bytes()
    # an intact file is used
    np.testing.assert_allclose(_compile_fresh(x), want, rtol=1e-15)
    assert cache.stats["disk hits"] == before["disk hits"] + 1
    if damage == "truncate":
        path.write_bytes(good[: len(good) // 2])
    elif damage == "garbage":
        path.write_bytes(os.urandom(len(good)))
    else:
        path.write_bytes(good[:-10] + bytes(b ^ 0xFF for b in good[-10:]))
    compiles = cache.stats["compiles"]
    np.testing.assert_allclose(_compile_fresh(x), want, rtol=1e-15)
    assert cache.stats["compiles"] == compiles + 1
    assert cache.stats["rejected files"] >= before["rejected files"] + 1
    assert path.read_bytes() == good      # rebuilt and rewritten


def test_memory_cache_reuses_machine_code():
    x = np.ones(5)
    f = lambda v: v * 7.0 - 1.0
    ft.jit(f, backend="cpu")(x)
    compiles = cache.stats["compiles"]
    ft.jit(f, backend="cpu")(x)          # a new Jitted: retraced, same IR, no LLVM work
    assert cache.stats["compiles"] == compiles


def test_backend_compile_direct():
    closed = ft.make_jaxpr(lambda a: fnp.sum(a * a))(np.arange(4.0))
    out = cpu.compile(closed)(np.arange(4.0))
    assert out[0] == 14.0
