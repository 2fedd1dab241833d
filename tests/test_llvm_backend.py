"""The CPU (llvmlite) backend's values against the interpreter and numpy: every
jit-able row of the shared table, random fusible programs (hypothesis), numpy's special
values, the vectorised exp/log and max/min, empty and scalar shapes, native BLAS, loops
and branches, and out-of-range indices. (Fusion, introspection, the compile caches,
dispatch, donation and threads: test_llvm_compile.py.)"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.primitives import gather_scatter as gs
from functrans.primitives.elementwise import BINARY_TABLE, UNARY_TABLE
from functrans.tree_util import tree_flatten
from tests.cases import all_cases

CASES = [c for c in all_cases() if c.jit]
# the tolerance of a row: 64 ulp where its jaxpr holds an op-table primitive whose
# native code is not numpy's to the bit (``OpRow.ulp`` > 0: our polynomials, libm, vs
# numpy's own SIMD routines) or a reassociated float sum/product; 4 ulp otherwise
_NOT_BITWISE = ({r.name for r in UNARY_TABLE + BINARY_TABLE if r.ulp > 0}
                | {"reduce_sum", "reduce_prod", "dot_general"})   # cumsum/cumprod: in order, exact


def _primitives(closed, acc):
    for e in closed.jaxpr.eqns if hasattr(closed, "jaxpr") else closed.eqns:
        acc.add(e.primitive.name)
        for k in e.primitive.subjaxpr_params:
            sub = e.params[k]
            for s in (sub if isinstance(sub, (tuple, list)) else (sub,)):
                _primitives(s, acc)
    return acc


def _row_ulp(case, args):
    used = _primitives(ft.make_jaxpr(case.fun)(*args), set())
    return 64 if used & _NOT_BITWISE else 4


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
    nulp = _row_ulp(case, args)
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


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint32, np.uint64])
@pytest.mark.parametrize("name", ["floor_divide", "remainder", "maximum", "minimum", "add",
                                  "subtract", "multiply", "left_shift", "right_shift",
                                  "bitwise_xor", "less", "greater_equal"])
def test_binary_int_edge_values_bitwise(name, dtype):
    info = np.iinfo(dtype)
    vals = np.array([0, 1, 2, 3, 7, info.max, info.min, info.max - 1, info.max // 2,
                     info.max // 2 + 1], dtype=dtype)
    if info.min < 0:
        vals = np.concatenate([vals, np.array([-1, -2, -3, -7], dtype=dtype)])
    a, b = _pair_grid(vals)
    if "shift" in name:
        b = np.asarray(b % (8 * a.itemsize + 3), dtype=dtype)   # some amounts out of range
    f = getattr(fnp, name)
    _native(f, a, b)
    got, want = _both(f, a, b)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w, err_msg=name)


@pytest.mark.parametrize("name", ["negative", "abs", "sign", "square", "invert"])
def test_unary_uint64_edge_values_native(name):
    x = np.array([0, 1, 2, 7, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 1], np.uint64)
    f = getattr(fnp, name)
    _native(f, x)
    got, want = _both(f, x)
    np.testing.assert_array_equal(got[0], want[0], err_msg=name)
    assert got[0].dtype == np.uint64


def test_uint64_conversions_native_and_as_numpy():
    u = np.array([0, 1, 2**32 + 5, 2**53 + 1, 2**63 - 1, 2**63, 2**63 + 2**11 + 1, 2**64 - 1],
                 np.uint64)
    i = np.array([-1, -2**63, 5, 2**63 - 1, -7, 0, 3, 2**40], np.int64)
    f = lambda a, b: (a.astype(np.float64), a.astype(np.float32), a.astype(np.int64),
                      a.astype(np.int32), a.astype(np.uint32), a.astype(bool),
                      b.astype(np.uint64), b.astype(np.int32).astype(np.uint64),
                      b.astype(np.uint32).astype(np.uint64), (b > 0).astype(np.uint64))
    _native(f, u, i)
    got, want = _both(f, u, i)
    for g, w, n in zip(got, want, f(fnp.asarray(u), fnp.asarray(i))):
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(g, n)
        assert g.dtype == w.dtype == n.dtype


@pytest.mark.parametrize("n", [1, 5, 14, 100])
@pytest.mark.parametrize("src", [np.float64, np.float32])
def test_float_to_uint64_saturates_on_every_value(src, n):
    """JAX's (XLA's) rule at every array length: truncation toward zero, negatives and
    NaN give 0, 2**64 and above give 2**64 - 1 (numpy's x86 cast wrapped -1.0 to
    2**64 - 1 and gave 2**63 for NaN)."""
    v = np.array([np.nan, -1.0, -1.5, -0.5, 0.0, -0.0, 2.0**63, 2.0**64, 1e30, -np.inf,
                  np.inf, -2.0**63, -2.0**64, 2.0**63 - 1024, 1.8e19, -1e30, 3.7, 2.0**53])
    x = np.random.default_rng(n).choice(v, n).astype(src)
    f = lambda a: a.astype(np.uint64)
    _native(f, x)
    got, _ = _both(f, x)
    want = [0 if np.isnan(a) else min(max(0, int(a) if np.isfinite(a) else int(a > 0) << 64),
                                      2 ** 64 - 1) for a in x.astype(np.float64).tolist()]
    assert got[0].dtype == np.uint64 and got[0].tolist() == want


@pytest.mark.parametrize("src", [np.float64, np.float32])
@pytest.mark.parametrize("dst", [np.int64, np.int32, np.uint32, np.bool_, np.float32,
                                 np.float64])
def test_convert_special_values_defined(src, dst):
    x = np.concatenate([_F64_SPECIAL, [3e9, -3e9, 4.5e9, 1e19, -1e19, 0.99, -0.99]]).astype(src)
    got, want = _both(lambda v: v.astype(dst), x)
    # nan and out-of-range conversions saturate as JAX's (functrans.array.float_to_int)
    np.testing.assert_array_equal(got[0], want[0])


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


def test_empty_and_scalar_shapes():
    f = lambda x: (fnp.sum(x * 2.0), x + 1.0)
    for x in (np.zeros((0, 3)), np.float64(3.0), np.ones((2, 0, 2))):
        got, want = _both(f, x)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


# --------------------------------------------------------------------------- one entry point

def _native(f, *args):
    """Compile on the CPU backend; assert no host step; return the cost analysis."""
    cost = ft.jit(f, backend="cpu").lower(*args).compile().cost_analysis()
    assert cost["host steps"] == 0, cost
    assert cost["native segments"] == 1, cost
    return cost


def _agree(f, *args, nulp=4, floor=1.0):
    got, want = _both(f, *args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _ulp_close(g, w, nulp, "program", floor=floor)


def test_mixed_program_is_one_native_function():
    def f(a, b, i):
        c = fnp.tanh(a @ b) * 2.0
        d = lax.dynamic_slice(c, (i, 0), (2, 3))
        return fnp.concatenate([d, c[:1]], axis=0).sum(axis=1), lax.fori_loop(
            0, 3, lambda k, s: s * 0.5 + d, d)
    a, b = np.random.default_rng(0).standard_normal((2, 5, 4))[0], np.ones((4, 3))
    i = np.int32(1)
    _native(f, a, b, i)
    _agree(f, a, b, i)


# --------------------------------------------------------------------------- BLAS

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dot_general_plain_batched_and_transposed(dtype):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 40, 30)).astype(dtype)
    b = rng.standard_normal((3, 30, 20)).astype(dtype)
    m, n = rng.standard_normal((50, 60)).astype(dtype), rng.standard_normal((50, 70)).astype(dtype)
    for f, args in ((lambda x, y: x @ y, (a, b)),
                    (lambda x, y: fnp.einsum("bij,bjk->bik", x, y) + 1.0, (a, b)),
                    (lambda x, y: x.T @ y, (m, n)),                       # transposed lhs view
                    (lambda x, y: (y.T @ x).T, (m, n)),
                    (lambda x, y: fnp.einsum("bij,bkj->bki", x, x[:, :20]), (a, b)),
                    (lambda x, y: x[:2] @ y[:, :3], (a[0], b[0])),       # tiny: loops
                    (lambda x, y: x[:, :0] @ y[:0], (a[0], b[0]))):     # K = 0
        _native(f, *args)
        got, want = _both(f, *args)
        for g, w in zip(got, want):
            _ulp_close(g, w, 64, "dot", floor=1.0)


def test_integer_dot_is_exact():
    a = np.arange(24, dtype=np.int32).reshape(4, 6) - 7
    b = np.arange(18, dtype=np.int32).reshape(6, 3)
    got, want = _both(lambda x, y: x @ y, a, b)
    np.testing.assert_array_equal(got[0], want[0])


# --------------------------------------------------------------------------- control flow

def _lorenz_like(s0):
    def step(i, s):
        x, y, z = s
        return (x + 0.01 * 10 * (y - x), y + 0.01 * (x * (28 - z) - y), z + 0.01 * (x * y - 2.5 * z))
    return fnp.stack(lax.fori_loop(0, 200, step, (s0[0], s0[1], s0[2])))


def test_loops_and_branches_run_natively_and_match_the_interpreter():
    x0 = np.array([1.0, 1.1, 0.9])
    _native(_lorenz_like, x0)
    _agree(_lorenz_like, x0, nulp=4, floor=1.0)

    def wl(x):
        return lax.while_loop(lambda c: c[1] < 20.0, lambda c: (c[0] * 1.5 - 0.1, c[1] + c[0].sum()),
                              (x, 0.0))
    _native(wl, np.array([1.0, 2.0]))
    _agree(wl, np.array([1.0, 2.0]))

    def sw(i, x):
        return lax.switch(i, [lambda v: v * 2.0, lambda v: fnp.sin(v), lambda v: v[::-1] - 1.0], x)
    for i in (-3, 0, 1, 2, 7):                      # out of range: clamped, as JAX
        _native(sw, np.int32(i), np.arange(3.0))
        _agree(sw, np.int32(i), np.arange(3.0), nulp=64)

    def sc(c0, xs):
        def body(c, x):
            return (c[1], c[0] + x * c[1]), (c[0] * x, fnp.sum(x))   # a swap in the carry
        return lax.scan(body, c0, xs, reverse=True)
    c0 = (np.ones(2), np.full(2, 0.5))
    xs = np.arange(10.0).reshape(5, 2) / 7
    _native(sc, c0, xs)
    _agree(sc, c0, xs)


def test_vmapped_and_differentiated_loops_match_the_interpreter():
    x0 = np.array([1.0, 1.1, 0.9])
    jac = lambda v: ft.jacrev(_lorenz_like)(v)
    _agree(jac, x0, nulp=64, floor=1.0)
    _native(jac, x0)
    batch = np.array([[1.0, 1.1, 0.9], [0.5, 0.2, 1.0], [2.0, 1.0, 0.1]])
    _agree(ft.vmap(_lorenz_like), batch, nulp=4, floor=1.0)
    gw = ft.grad(lambda x: lax.fori_loop(0, 5, lambda i, c: fnp.sin(c) * x, x).sum())
    _agree(gw, np.array([0.3, 0.7]), nulp=64)
    _agree(ft.vmap(gw), np.array([[0.3, 0.7], [0.1, -0.2]]), nulp=64)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 3), st.integers(0, 6), st.booleans(), st.integers(0, 2**16))
def test_random_loops_match_interpreter(kind, n, rev, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(3)
    if kind == 0:
        f = lambda v: lax.fori_loop(0, n, lambda i, c: fnp.cos(c) * 0.9 + i * 0.1, v)
    elif kind == 1:
        f = lambda v: lax.scan(lambda c, t: (c * t + 1.0, c - t), v[0], v * n, reverse=rev)
    elif kind == 2:
        f = lambda v: lax.cond(v[0] > 0, lambda u: u * n, lambda u: -u, v)
    else:
        f = lambda v: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.1),
                                     (0, v))
    _agree(f, x, nulp=64)


# --------------------------------------------------------------------------- indices (safety)

_BAD = [-(2**31), -7, -1, 0, 1, 3, 4, 5, 100, 2**31 - 1]


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.uint64])
def test_out_of_range_dynamic_slices_clamp(dtype):
    x = np.arange(20.0).reshape(4, 5)
    for i in _BAD + [2**63, 2**64 - 1]:
        idx = np.asarray(i).astype(dtype)
        f = lambda v, s: (lax.dynamic_slice(v, (s, s), (2, 3)),
                          lax.dynamic_update_slice(v, -fnp.ones((3, 2)), (s, s)))
        _native(f, x, idx)
        got, want = _both(f, x, idx)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_out_of_range_gather(mode):
    x = np.arange(12.0).reshape(4, 3)
    idx = np.array([[i] for i in _BAD], dtype=np.int64)
    f = lambda v, j: gs.gather(v, j, 1, index_mode=mode)
    _native(f, x, idx)
    got, want = _both(f, x, idx)
    np.testing.assert_array_equal(got[0], want[0])
    got, want = _both(lambda v, j: v[j], x, np.array(_BAD[2:8]))    # fnp indexing
    np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_uint64_indices_of_2_63_and_more_are_out_of_range_not_negative(mode):
    x = np.arange(12.0).reshape(4, 3)
    idx = np.array([[0], [3], [4], [2**63 - 1], [2**63], [2**64 - 1]], np.uint64)
    f = lambda v, j: (gs.gather(v, j, 1, index_mode=mode),
                      gs.scatter(v, j, -fnp.ones((6, 3)), 1, "add",
                                 index_mode="clip" if mode == "clip" else "drop"))
    _native(f, x, idx)
    got, want = _both(f, x, idx)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    if mode == "clip":
        np.testing.assert_array_equal(got[0][3:], np.tile(x[3], (3, 1)))


@pytest.mark.parametrize("mode", ["set", "add", "mul", "min", "max"])
@pytest.mark.parametrize("index_mode", ["drop", "clip"])
def test_out_of_range_scatter(mode, index_mode):
    x = np.arange(12.0).reshape(4, 3)
    idx = np.array([[i] for i in _BAD + [2, 2]], dtype=np.int32)
    u = np.arange(len(_BAD) * 3 + 6, dtype=np.float64).reshape(-1, 3) - 5.0
    f = lambda v, j, w: gs.scatter(v, j, w, 1, mode, index_mode=index_mode)
    _native(f, x, idx, u)
    got, want = _both(f, x, idx, u)
    np.testing.assert_array_equal(got[0], want[0])


def test_structural_ops_native():
    x = np.arange(24.0).reshape(2, 3, 4)
    for f in (lambda v: fnp.concatenate([v, v * 2.0], axis=1),
              lambda v: lax.pad(v, 0.5, ((1, -1, 1), (0, 2, 0), (-2, 1, 2))),
              lambda v: v[:, ::-1, 1:3] + lax.iota(np.float64, 2)[:, None, None],
              lambda v: fnp.flip(v, 2)[..., ::2].reshape(4, 3)):
        _native(f, x)
        got, want = _both(f, x)
        np.testing.assert_array_equal(got[0], want[0])


# --------------------------------------------------------------------------- SIMD reductions

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("which", ["max", "min"])
def test_vectorised_max_min_reductions_keep_nan_inf_and_signed_zero(dtype, which):
    """max/min reductions run as SIMD llvm.maximum/minimum: nan still wins anywhere
    in a row, infinities and all-negative rows are right."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((7, 133)).astype(dtype)
    x[1, 5] = np.nan
    x[2, 132] = np.nan
    x[3] = -np.inf
    x[4, 17] = np.inf
    x[5] = -np.abs(x[5]) - 1
    x[6] = 0.0
    x[6, ::2] = -0.0
    red, np_red = (fnp.max, np.max) if which == "max" else (fnp.min, np.min)
    for axis in (0, 1, None):
        got = np.asarray(ft.jit(lambda v: red(v, axis=axis))(x))
        np.testing.assert_array_equal(got, np_red(x, axis=axis))
    assert "llvm.maximum" in ft.jit(lambda v: fnp.max(v, axis=1)).lower(x).compile().as_text()
