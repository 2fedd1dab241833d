"""Row kernels of the CPU backend (``backends.fusion`` with ``row_fusion=True``, lowered by
``backends.llvm.row_kernels``): dependent row-wise reductions (logsumexp, softmax, var,
layer norm) fuse into one kernel that reads each row once, and give the interpreter's
values: special values, empty and size-1 shapes, keepdims, float32 and integers, 3-D
shapes, reductions that must not fuse (axis 0, a middle axis, views reading other rows),
carried rows, threads and prefetching, loops, donation, and random row-wise programs."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import functrans as ft
import functrans.nn as nn
import functrans.numpy as fnp
from backends import fusion
from backends.llvm import threads
from backends.llvm.program import classify
from functrans.tree_util import tree_flatten


def _leaves(x):
    return [np.asarray(v) for v in tree_flatten(x)[0]]


def _close(got, want, what, rtol=None):
    """Values within a few roundings of the interpreter's (reassociated sums: relative to
    the largest magnitude); nan, inf and integers exactly."""
    assert got.shape == want.shape and got.dtype == want.dtype, what
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{what}: nan")
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite], err_msg=f"{what}: inf")
    if finite.any():
        eps = np.finfo(got.dtype).eps
        rtol = 64 * eps if rtol is None else rtol
        scale = max(1.0, float(np.max(np.abs(want[finite]))))
        err = np.abs(got[finite].astype(np.float64) - want[finite])
        assert np.all(err <= rtol * scale), f"{what}: max error {err.max()}"


def _agree(f, *args, rtol=None):
    got = _leaves(ft.jit(f, backend="cpu")(*args))
    want = _leaves(ft.jit(f, backend="interpret")(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _close(g, w, getattr(f, "__name__", "program"), rtol)
    return got


def _plan(f, *args):
    return fusion.plan(ft.make_jaxpr(f)(*args).jaxpr, classify, row_fusion=True)


def _kernels(f, *args):
    return ft.jit(f, backend="cpu").lower(*args).compile().cost_analysis()["kernels"]


def _row_kernels(f, *args):
    return [s for s in _plan(f, *args).steps if isinstance(s, fusion.Kernel) and s.phases]


def logsumexp(x):
    m = fnp.max(x, axis=1, keepdims=True)
    return fnp.log(fnp.sum(fnp.exp(x - m), axis=1)) + m[:, 0]


def softmax(x):
    e = fnp.exp(x - fnp.max(x, axis=-1, keepdims=True))
    return e / fnp.sum(e, axis=-1, keepdims=True)


def layer_norm(x):
    mu = fnp.mean(x, axis=-1, keepdims=True)
    return (x - mu) / fnp.sqrt(fnp.var(x, axis=-1, keepdims=True) + 1e-5)


def _x(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# --------------------------------------------------------------------------- fewer kernels

@pytest.mark.parametrize("f", [logsumexp, softmax, nn.softmax, nn.log_softmax, layer_norm,
                               lambda x: nn.logsumexp(x, axis=1), lambda x: fnp.var(x, axis=1)])
def test_row_wise_reduction_chains_are_one_kernel(f):
    x = _x(16, 33)
    assert _kernels(f, x) == 1
    (k,) = _row_kernels(f, x)
    assert k.outer == 1 and len(k.phases) >= 2
    _agree(f, x)


def test_logsumexp_phases_and_cost_analysis():
    x = _x(64, 48)
    (k,) = _row_kernels(logsumexp, x)
    assert [(p.kind, [e.primitive.name for e in p.eqns]) for p in k.phases] == [
        (fusion.INNER, ["reduce_max"]), (fusion.INNER, ["sub", "exp", "reduce_sum"]),
        (fusion.ROW, ["log", "add"])]
    cost = ft.jit(logsumexp).lower(x).compile().cost_analysis()
    # x read once, the result written once: nothing in between touches memory
    assert cost["bytes accessed"] == x.nbytes + 64 * 8
    assert cost["workspace bytes"] == 0


def test_the_cuda_plan_is_unchanged():
    x = _x(8, 5)
    steps = fusion.plan(ft.make_jaxpr(logsumexp)(x).jaxpr, classify).steps
    assert len(steps) == 3 and not any(s.phases for s in steps)


# --------------------------------------------------------------------------- values

def test_special_values_rows():
    inf, nan = np.inf, np.nan
    x = np.array([[nan, 1.0, 2.0, 3.0], [inf, 1.0, 2.0, 3.0], [-inf, -inf, -inf, -inf],
                  [inf, inf, 0.0, 1.0], [1e308, 1e308, -1e308, 0.0], [-inf, 0.0, 1.0, nan],
                  [0.0, -0.0, 0.0, -0.0], [5e-324, 1.0, -750.0, 710.0]])
    with np.errstate(over="ignore"):
        x32 = x.astype(np.float32)
    for f in (logsumexp, softmax, nn.softmax, nn.log_softmax, layer_norm):
        _agree(f, x)
        _agree(f, x32)
    # max propagates nan as numpy does, min too
    _agree(lambda x: x - fnp.min(x, axis=1, keepdims=True) + fnp.max(x, axis=1)[:, None], x)


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (0, 0), (1, 1), (1, 7), (7, 1), (3, 1, 4),
                                   (2, 0, 3)])
def test_empty_and_size_one_shapes(shape):
    x = _x(*shape)

    def f(x):
        s = fnp.sum(x, axis=-1, keepdims=True)
        return fnp.sum(fnp.exp(x - s), axis=-1), x * s, fnp.log1p(fnp.abs(s[..., 0]))
    _agree(f, x)
    if x.size:
        _agree(softmax, x)
        _agree(logsumexp if x.ndim == 2 else (lambda x: nn.logsumexp(x, axis=-1)), x)


def test_keepdims_row_values_and_float32():
    x = _x(20, 17, dtype=np.float32)

    def f(x):
        m = fnp.max(x, axis=1, keepdims=True)
        m = fnp.where(fnp.isfinite(m), m, 0.0)           # per row, at the keepdims shape
        s = fnp.sum(fnp.exp(x - m), axis=1, keepdims=True)
        return fnp.log(s) + m, x - fnp.log(s) - m
    assert _kernels(f, x) == 1
    got = _agree(f, x)
    assert got[0].dtype == np.float32 and got[0].shape == (20, 1)


def test_integer_and_bool_rows_are_exact():
    i = (_x(9, 13) * 100).astype(np.int32)

    def f(i):
        pos = i > 0                                         # a bool row a later phase reads
        d = i - fnp.max(i, axis=1, keepdims=True)
        return (fnp.sum(d * d, axis=1), fnp.sum(fnp.where(pos, d, 3), axis=1),
                fnp.any(pos & (d < -50), axis=1))
    assert _kernels(f, i) == 1
    (k,) = _row_kernels(f, i)
    assert [v.aval.dtype for v in k.carried] == [np.dtype(bool)]
    _agree(f, i)
    _agree(f, i.astype(np.int64))


def test_axis0_and_middle_axis_reductions_do_not_fuse_as_rows():
    x = _x(12, 10)
    f0 = lambda x: fnp.exp(x - fnp.max(x, axis=0)).sum(axis=0)           # noqa: E731
    assert not _row_kernels(f0, x)
    _agree(f0, x)
    y = _x(4, 5, 6)
    fm = lambda y: fnp.exp(y - fnp.max(y, axis=1, keepdims=True)).sum(axis=1)   # noqa: E731
    assert not _row_kernels(fm, y)
    _agree(fm, y)
    # reductions over different axes: a row kernel never holds the axis-0 one

    def fb(x):
        s1, s0 = fnp.sum(x, axis=1), fnp.sum(x, axis=0)
        return x - s1[:, None] - s0, fnp.exp(x - s0) * s1[:, None]
    for k in _row_kernels(fb, x):
        assert all(e.params["axes"] == (1,) for e in k.eqns if e.outvars[0] in k.reduced)
    _agree(fb, x)


def test_views_reading_other_rows_do_not_fuse():
    x = _x(6, 5)

    def f(x):
        m = fnp.max(x, axis=1)
        return fnp.sum(fnp.exp(x - m[::-1, None]), axis=1)      # row i reads row 5-i's max
    assert not _row_kernels(f, x)
    _agree(f, x)

    def g(x):
        m = fnp.sum(x, axis=1)
        return x - fnp.reshape(m, (1, 6)).T + m[0]             # a transposed view is the row
    _agree(g, x)


@pytest.mark.parametrize("shape,axes", [((4, 5, 6), (1, 2)), ((4, 5, 6), (2,)), ((3, 1, 4, 5), (3,)),
                                        ((2, 3, 4, 5), (2, 3))])
def test_3d_and_4d_trailing_axes(shape, axes):
    x = _x(*shape)

    def f(x):
        m = fnp.max(x, axis=axes, keepdims=True)
        e = fnp.exp(x - m)
        return e / fnp.sum(e, axis=axes, keepdims=True), fnp.log(fnp.sum(e, axis=axes))
    (k,) = _row_kernels(f, x)
    assert k.outer == len(shape) - len(axes)
    _agree(f, x)


def test_transposed_input_rows():
    x = _x(40, 30)
    _agree(lambda x: logsumexp(x.T), x)
    _agree(lambda x: softmax(x.T[:, ::-1]), x)


def test_carried_rows_over_the_scratch_limit_are_not_fused():
    x = _x(1, 20000)                       # one row of 160 kB: too big to keep per row
    assert all(not k.carried for k in _row_kernels(softmax, x))
    assert _kernels(softmax, x) >= 2
    _agree(softmax, x)
    y = _x(3, 1000)                       # 8 kB rows are kept
    (k,) = _row_kernels(softmax, y)
    assert len(k.carried) == 1
    _agree(softmax, y)


def test_row_kernels_in_loops_and_with_donation():
    x = _x(8, 9)
    body = lambda i, x: softmax(x * 3.0) + i                         # noqa: E731
    _agree(lambda x: ft.lax.fori_loop(0, 3, body, x), x)
    f = ft.jit(lambda x: (softmax(x), x - fnp.max(x, axis=1, keepdims=True)), donate_argnums=0)
    want = [softmax(x), x - x.max(axis=1, keepdims=True)]
    owned = ft.jit(lambda t: t + 0.0)(x)      # a buffer functrans owns: donated
    for g, w in zip(_leaves(f(owned)), want):
        np.testing.assert_allclose(g, w, rtol=1e-14)


def test_gradients_through_row_kernels():
    x = _x(10, 7)
    _agree(ft.grad(lambda x: logsumexp(x).sum()), x)
    _agree(ft.grad(lambda x: (softmax(x) ** 2).sum()), x)


# --------------------------------------------------------------------------- threads, prefetch

def _opt_ir(f, *args):
    return ft.jit(f, backend="cpu").lower(*args).compile().exe.as_text().split(
        "after optimisation")[1]


@pytest.mark.parametrize("f,shape", [
    (logsumexp, (300, 1000)),             # above threads.MIN_ELEMENTS; 1000 = 15 chunks + 40
    (softmax, (300, 1000)),
    (lambda x: fnp.sum(fnp.exp(x), axis=1), (300, 1000)),     # a plain reduction kernel
    (nn.log_softmax, (27001, 10)),        # short rows: blocks of rows, split unevenly
])
def test_threaded_rows_are_bitwise_the_serial_result(f, shape):
    x = _x(*shape)
    jf = ft.jit(f, backend="cpu")
    text = _opt_ir(f, x)
    if threads.num_threads() > 1:
        assert "ft_parallel_for" in text
    par = _leaves(jf(x))
    old = threads._NTHREADS.value
    threads._NTHREADS.value = 1           # the generated code reads it at every call
    try:
        ser = _leaves(jf(x))
    finally:
        threads._NTHREADS.value = old
    for a, b in zip(par, ser):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(par, _leaves(ft.jit(f, backend="interpret")(x))):
        _close(a, b, "threaded")


def test_next_row_prefetch_only_where_a_later_phase_computes():
    x = _x(64, 512)
    assert "llvm.prefetch" in _opt_ir(logsumexp, x)
    assert "llvm.prefetch" in _opt_ir(softmax, x)
    assert "llvm.prefetch" not in _opt_ir(lambda x: x - fnp.max(x, axis=1, keepdims=True), x)
    _agree(logsumexp, _x(5, 64 * 3 + 7))


# --------------------------------------------------------------------------- random programs

_FULL_UNARY = [fnp.tanh, lambda v: fnp.exp(-fnp.abs(v)), fnp.negative, lambda v: v * 0.5]
_FULL_BINARY = [fnp.add, fnp.subtract, fnp.multiply, fnp.maximum]
_ROW_UNARY = [lambda v: fnp.log1p(fnp.abs(v)), fnp.negative, lambda v: fnp.where(v > 0, v, 0.0)]
_REDUCE = [fnp.sum, fnp.max, fnp.min, fnp.mean]


@st.composite
def _row_programs(draw):
    rows = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=2)))
    inner = tuple(draw(st.lists(st.integers(1, 9), min_size=1, max_size=2)))
    steps = []
    nfull, nrow = 1, 0
    for _ in range(draw(st.integers(2, 9))):
        kinds = ["reduce", "full1", "full2"] + (["bcast", "row1"] if nrow else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "reduce":
            steps.append((kind, draw(st.integers(0, len(_REDUCE) - 1)),
                          draw(st.integers(0, nfull - 1)), draw(st.booleans())))
            nrow += 1
        elif kind == "row1":
            steps.append((kind, draw(st.integers(0, len(_ROW_UNARY) - 1)),
                          draw(st.integers(0, nrow - 1)), None))
            nrow += 1
        else:
            steps.append((kind, draw(st.integers(0, 3)), draw(st.integers(0, nfull - 1)),
                          draw(st.integers(0, max(nrow, nfull) - 1))))
            nfull += 1
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    return rows, inner, steps, dtype, draw(st.integers(0, 2**16))


def _build(rows, inner, steps):
    axes = tuple(range(len(rows), len(rows) + len(inner)))
    expand = (slice(None),) * len(rows) + (None,) * len(inner)

    def f(x):
        full, row = [x], []
        for kind, op, a, b in steps:
            if kind == "reduce":
                r = _REDUCE[op](full[a], axis=axes, keepdims=b)
                row.append(r if not b else fnp.reshape(r, rows))
            elif kind == "row1":
                row.append(_ROW_UNARY[op](row[a]))
            elif kind == "full1":
                full.append(_FULL_UNARY[op](full[a]))
            elif kind == "full2":
                full.append(_FULL_BINARY[op](full[a], full[b % len(full)]))
            else:
                full.append(_FULL_BINARY[op](full[a], row[b % len(row)][expand]))
        return full[-1], row[-1] if row else full[0]
    return f


@settings(max_examples=40, deadline=None)
@given(_row_programs())
def test_random_row_programs_match_interpreter(prog):
    rows, inner, steps, dtype, seed = prog
    x = np.random.default_rng(seed).standard_normal(rows + inner).astype(dtype)
    f = _build(rows, inner, steps)
    _agree(f, x, rtol=1e-9 if dtype == np.float64 else 1e-4)
