"""How the CPU (llvmlite) backend compiles and runs: fusion into few kernels with
broadcasts folded into index arithmetic, host steps, the LLVM IR text, the disk,
memory and plan caches, the dispatch fast path, buffer donation, the dot/transpose
rewrite and the thread pool. (Values against the interpreter: test_llvm_backend.py.)"""
from __future__ import annotations

import os
import re

import llvmlite.binding as llvm
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
import jaxpr_ir
from backends import llvm as cpu
from backends.llvm import cache, engine
from functrans.primitives.base import Primitive


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
    # an equation without native code (a test primitive: the library's own all have some,
    # fft included) runs through its numpy impl, between two segments
    p = Primitive("llvm_compile_test_host_step")
    p.test_only = True
    p.def_rules(abstract_eval=lambda x: x, impl=lambda x: np.cumsum(np.asarray(x)[::-1], 0))
    try:
        f = lambda a, b: fnp.exp(p.bind(a @ b)) + 1.0
        a, b = np.arange(12.0).reshape(3, 4) % 5, np.ones((4, 2))
        c = ft.jit(f, backend="cpu").lower(a, b).compile()
        assert c.cost_analysis()["host steps"] == 1
        np.testing.assert_allclose(ft.jit(f, backend="cpu")(a, b),
                                   np.exp(np.cumsum((a @ b)[::-1], 0)) + 1.0, rtol=1e-15)
    finally:
        del jaxpr_ir.primitives[p.name]


def test_as_text_shows_llvm_ir_before_and_after():
    text = ft.jit(lambda x: x + 1.0, backend="cpu").lower(np.ones(8)).compile().as_text()
    assert "define" in text and "seg1" in text and "after optimisation" in text


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


def test_plan_cache_hit_does_no_planning_or_codegen():
    f = lambda v: fnp.cos(v) * 3.0 - v
    closed = ft.make_jaxpr(f)(np.ones(6))
    cpu.compile(closed)
    built, compiles = cpu.stats["plans built"], cache.stats["compiles"]
    exe = cpu.compile(ft.make_jaxpr(f)(np.ones(6)))     # a new jaxpr object, same text
    assert cpu.stats["plans built"] == built and cache.stats["compiles"] == compiles
    np.testing.assert_allclose(exe(np.arange(6.0))[0], np.cos(np.arange(6.0)) * 3 - np.arange(6.0),
                               rtol=1e-15)


def test_plan_cache_keeps_only_the_most_recently_used_plans(monkeypatch):
    monkeypatch.setattr(cpu, "PLAN_CACHE_SIZE", 2)
    cpu.clear_plans()
    jaxprs = [ft.make_jaxpr(lambda v, k=k: v * float(k))(np.ones(3)) for k in range(3)]
    cpu.compile(jaxprs[0])
    cpu.compile(jaxprs[1])
    cpu.compile(jaxprs[0])              # a hit: jaxprs[0] is now the most recent
    cpu.compile(jaxprs[2])              # evicts jaxprs[1], the least recently used
    built = cpu.stats["plans built"]
    exe = cpu.compile(jaxprs[0])
    assert cpu.stats["plans built"] == built
    np.testing.assert_array_equal(exe(np.ones(3))[0], np.zeros(3))
    cpu.compile(jaxprs[1])
    assert cpu.stats["plans built"] == built + 1


def test_constants_are_bound_per_compile_not_baked_into_the_cached_plan():
    outs = []
    for k in (1.0, 2.0):
        c = np.full(3, k)
        outs.append(ft.jit(lambda v: v + c, backend="cpu")(np.zeros(3)))
    np.testing.assert_array_equal(outs[0], np.ones(3))
    np.testing.assert_array_equal(outs[1], np.full(3, 2.0))


def test_disk_cache_is_on_by_default_under_the_user_cache_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("FUNCTRANS_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.cache_dir() == str(tmp_path / "functrans")
    monkeypatch.setenv("FUNCTRANS_CACHE_DIR", "off")
    assert cache.cache_dir() is None


# --------------------------------------------------------------------------- dispatch

def test_fast_path_handles_non_contiguous_and_new_signatures():
    jf = ft.jit(lambda v: v * 2.0 + 1.0, backend="cpu")
    x = np.arange(16.0)
    np.testing.assert_array_equal(jf(x), x * 2 + 1)
    assert jf._fast                                     # the fast runner was registered
    np.testing.assert_array_equal(jf(x), x * 2 + 1)     # through it
    y = np.arange(32.0)[::2]                            # same shape and dtype, strided
    np.testing.assert_array_equal(jf(y), y * 2 + 1)
    z = np.arange(16, dtype=np.float32)
    got = jf(z)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, z * 2 + 1)
    assert isinstance(jf(x), ft.Array) if hasattr(ft, "Array") else True
    assert jf.cache_info()["hits"] >= 2


def test_fast_path_multiple_outputs_and_pytrees():
    jf = ft.jit(lambda a, b: {"s": a + b, "p": (a * b, a - b)}, backend="cpu")
    a, b = np.arange(4.0), np.ones(4)
    for _ in range(2):
        out = jf(a, b)
        np.testing.assert_array_equal(out["s"], a + b)
        np.testing.assert_array_equal(out["p"][1], a - b)


# --------------------------------------------------------------------------- donation

def test_donated_buffer_is_reused_and_results_are_right():
    f = ft.jit(lambda x, y: (x * 2.0 + fnp.sin(y), fnp.sum(x)), donate_argnums=0, backend="cpu")
    # only a buffer functrans owns is donated (a compiled result), never a numpy array
    x, y = ft.jit(lambda x: x + 0.0)(np.arange(5.0)), np.ones(5)
    where = x.__array_interface__["data"][0]
    want = (np.arange(5.0) * 2 + np.sin(y), 10.0)
    out, s = f(x, y)
    assert out.__array_interface__["data"][0] == where
    np.testing.assert_allclose(out, want[0], rtol=1e-15)
    assert float(s) == want[1]
    # the donated input is read after the output is written: no sharing, still right
    g = ft.jit(lambda x: (fnp.exp(x), fnp.cumsum(x)), donate_argnums=0, backend="cpu")
    x = np.arange(4.0)
    e, c = g(x)
    np.testing.assert_allclose(e, np.exp(np.arange(4.0)), rtol=1e-15)
    np.testing.assert_array_equal(c, np.cumsum(np.arange(4.0)))
    # a read-only array is never written over
    ro = np.arange(5.0)
    ro.flags.writeable = False
    out, _ = f(ro, y)
    assert not np.shares_memory(out, ro)
    np.testing.assert_array_equal(ro, np.arange(5.0))


# --------------------------------------------------------------------------- rewrites

def test_transposed_products_are_computed_in_place_of_the_transpose():
    """transpose(dot_general(a, b)) becomes dot_general(b, a): no transpose is left,
    and values (plain, batched, shared dot) match numpy."""
    from backends.llvm.rewrite import fold_dot_transposes
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((5, 7)), rng.standard_normal((7, 3))
    f = lambda a, b: fnp.transpose(a @ b)
    jp = ft.make_jaxpr(f)(a, b)
    names = [e.primitive.name for e in fold_dot_transposes(jp.jaxpr).eqns]
    assert names == ["dot_general"]
    np.testing.assert_allclose(np.asarray(ft.jit(f)(a, b)), (a @ b).T, rtol=1e-13)
    ba, bb = rng.standard_normal((4, 5, 7)), rng.standard_normal((4, 7, 3))
    g = lambda a, b: fnp.swapaxes(fnp.matmul(a, b), 1, 2)
    np.testing.assert_allclose(np.asarray(ft.jit(g)(ba, bb)),
                               np.swapaxes(ba @ bb, 1, 2), rtol=1e-13)
    h = lambda a, b: (a @ b, fnp.transpose(a @ b) * 2.0)     # the dot has two uses
    r1, r2 = ft.jit(h)(a, b)
    np.testing.assert_allclose(np.asarray(r2), 2 * (a @ b).T, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(r1), a @ b, rtol=1e-13)
    gw = ft.jit(ft.grad(lambda w, x: fnp.sum(fnp.tanh(x @ w))))(b, a)
    np.testing.assert_allclose(np.asarray(gw), a.T @ (1 - np.tanh(a @ b) ** 2), rtol=1e-12)


def _accumulating(f, *args):
    from backends.llvm.rewrite import fold_dot_transposes, fold_dot_updates
    jp = ft.make_jaxpr(f)(*args).jaxpr
    eqns = fold_dot_updates(fold_dot_transposes(jp)).eqns
    return [e.params.get("accumulate") for e in eqns if e.primitive.name == "dot_general"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_updates_by_a_product_are_one_accumulating_gemm(dtype):
    """``c - s * (a @ b)`` (and ``c + a @ b``, ``c - a.T @ b * s``, batched) is one BLAS call with alpha = -s, beta = 1: values match numpy; NaN in ``c``
    propagates; nothing is folded where the product has another use, the scale is 0 or
    traced, ``c`` is a broadcast (a bias: free in the next kernel) or the product is an
    integer one."""
    rng = np.random.default_rng(5)
    w, x, g = (rng.standard_normal(s).astype(dtype) for s in ((40, 24), (30, 40), (30, 24)))
    tol = dict(rtol=2e-5, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    sgd = lambda w, x, g: w - dtype(0.01) * (x.T @ g)
    assert _accumulating(sgd, w, x, g) == [-0.01 if dtype == np.float64 else float(dtype(-0.01))]
    want = w - dtype(0.01) * (x.T @ g)
    np.testing.assert_allclose(np.asarray(ft.jit(sgd)(w, x, g)), want, **tol)
    np.testing.assert_allclose(np.asarray(ft.jit(sgd, backend="interpret")(w, x, g)), want, **tol)
    cases = {
        "c + a@b": (lambda c, a, b: c + a @ b, [1.0]),
        "a@b + c": (lambda c, a, b: a @ b + c, [1.0]),
        "c - a@b*s": (lambda c, a, b: c - (a @ b) * dtype(2.5), [-2.5]),
        "bias + a@b": (lambda c, a, b: c[0] + a @ b, [None]),
        "view + a@b": (lambda c, a, b: c.T.T + a @ b, [1.0]),
        "twice": (lambda c, a, b: (lambda p: (c - p, p))(a @ b), [None]),
        "zero scale": (lambda c, a, b: c - dtype(0.0) * (a @ b), [None]),
    }
    c, a, b = (rng.standard_normal(s).astype(dtype) for s in ((30, 24), (30, 40), (40, 24)))
    a[3, 5] = np.inf                          # 0 * inf must stay NaN: no BLAS alpha = 0
    for name, (f, acc) in cases.items():
        assert _accumulating(f, c, a, b) == acc, name
        with np.errstate(invalid="ignore"):
            want = f(c, a, b)
        got = ft.jit(f)(c, a, b)
        for gv, wv in zip(ft.tree_util.tree_leaves(got), ft.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(gv), wv, **tol, err_msg=name)
    c[2, 3] = np.nan
    a[3, 5] = 1.0
    out = np.asarray(ft.jit(lambda c, a, b: c - a @ b)(c, a, b))
    assert np.isnan(out[2, 3]) and np.isfinite(np.delete(out.ravel(), 2 * 24 + 3)).all()
    traced = lambda c, a, b, s: c - s * (a @ b)
    assert _accumulating(traced, c, a, b, dtype(0.5)) == [None]
    bc, ba, bb = (rng.standard_normal(s).astype(dtype) for s in ((3, 20, 24), (3, 20, 40), (3, 40, 24)))
    batched = lambda c, a, b: c - dtype(0.5) * fnp.matmul(a, b)
    assert _accumulating(batched, bc, ba, bb) == [-0.5]
    np.testing.assert_allclose(np.asarray(ft.jit(batched)(bc, ba, bb)), bc - 0.5 * ba @ bb, **tol)
    ic, ia, ib = (rng.integers(-5, 5, s) for s in ((30, 24), (30, 40), (40, 24)))
    assert _accumulating(lambda c, a, b: c - a @ b, ic, ia, ib) == [None]


def test_accumulating_update_keeps_donation_and_cost():
    """A donated weight updated by ``w - lr * x.T @ g`` comes back right (the product
    never writes over its own operands), and ``cost_analysis`` counts the product's
    2MNK flops plus the scale and the add."""
    rng = np.random.default_rng(6)
    w, x, g = rng.standard_normal((64, 48)), rng.standard_normal((32, 64)), rng.standard_normal((32, 48))
    step = ft.jit(lambda w, x, g: w - 0.1 * (x.T @ g), donate_argnums=0)
    want = w - 0.1 * (x.T @ g)
    cost = step.lower(w, x, g).compile().cost_analysis()
    assert cost["flops"] == 2 * 64 * 48 * 32 + 2 * 64 * 48
    np.testing.assert_allclose(np.asarray(step(ft.device_put(w), x, g)), want, rtol=1e-12)


def test_accumulating_update_in_loop_bodies_updates_carries_right():
    """In a fori_loop / scan body the update ``w - lr * x.T @ g(w)`` is one gemm written
    straight into the carry; a factor that is the carry itself (``w - lr * w.T @ g``),
    or the old carry read later, keeps the copy. Values match a numpy loop."""
    rng = np.random.default_rng(7)
    w0, x = rng.standard_normal((64, 64)) * 0.1, rng.standard_normal((32, 64))

    def step(w):
        g = fnp.tanh(x @ w)
        return w - 0.05 * (x.T @ g)

    def np_step(w):
        return w - 0.05 * (x.T @ np.tanh(x @ w))
    want = w0
    for _ in range(5):
        want = np_step(want)
    got = ft.jit(lambda w: ft.lax.fori_loop(0, 5, lambda i, w: step(w), w))(w0)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-13)
    both = ft.jit(lambda w: ft.lax.scan(lambda w, _: (step(w), w), w, None, length=5))(w0)
    np.testing.assert_allclose(np.asarray(both[0]), want, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.asarray(both[1][-1]), np_step(np_step(np_step(np_step(w0)))),
                               rtol=1e-12, atol=1e-13)

    def self_factor(w):
        return w - 0.05 * (w.T @ fnp.tanh(w))
    want = w0
    for _ in range(3):
        want = want - 0.05 * (want.T @ np.tanh(want))
    got = ft.jit(lambda w: ft.lax.fori_loop(0, 3, lambda i, w: self_factor(w), w))(w0)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-13)


# --------------------------------------------------------------------------- threads

def _fork_child_runs(f, x, want, q):
    q.put(bool(np.allclose(np.asarray(f(x)), want, rtol=1e-12)))


def test_large_kernels_split_over_threads_match_numpy_and_survive_fork():
    """Big elementwise kernels and row reductions run on the thread pool (when there
    is more than one thread); values match numpy, column and full reductions stay
    serial, and a forked child (no pool threads there) still computes serially."""
    from backends.llvm import threads
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1024, 600))
    row = ft.jit(lambda v: fnp.log(fnp.sum(fnp.exp(v - fnp.max(v, axis=1, keepdims=True)), axis=1)))
    want = np.log(np.exp(x - x.max(1, keepdims=True)).sum(1))
    np.testing.assert_allclose(np.asarray(row(x)), want, rtol=1e-12)
    text = row.lower(x).compile().as_text()
    assert ("ft_parallel_for" in text) == (threads.num_threads() > 1)
    col = ft.jit(lambda v: (fnp.sum(fnp.sin(v), axis=0), fnp.sum(v * v), fnp.tanh(v) * 2.0))
    a, b, c = col(x)
    np.testing.assert_allclose(np.asarray(a), np.sin(x).sum(0), rtol=1e-11)
    np.testing.assert_allclose(float(b), (x * x).sum(), rtol=1e-11)
    np.testing.assert_allclose(np.asarray(c), np.tanh(x) * 2.0, rtol=1e-14, atol=1e-15)
    small = ft.jit(lambda v: fnp.exp(v) + 1.0)
    assert "ft_parallel_for" not in small.lower(x[:4]).compile().as_text()
    import multiprocessing as mp
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_fork_child_runs, args=(row, x, want, q))
    p.start()
    p.join(60)
    assert p.exitcode == 0 and q.get(timeout=5)


def test_small_loops_in_a_loop_body_stay_vector_loops():
    # LoopUnroll's options (engine.LLVM_OPTIONS): O3 fully unrolled 8-element kernels
    # before the vectorisers ran, leaving scalar runs stitched by lane moves (the RK45
    # solve ran 2x slower); the loop vectoriser now takes them whole
    A = np.eye(8) * 0.9

    def f(y0):
        def step(i, y):
            k1 = A @ y
            k2 = A @ (y + 0.05 * k1)
            return y + 0.1 * (k1 + k2) * fnp.tanh(y)
        return ft.lax.fori_loop(0, 100, step, y0)

    y0 = np.linspace(0.0, 1.0, 8)
    text = ft.jit(f, backend="cpu").lower(y0).compile().as_text()
    optimised = text.split("; ---- LLVM IR after optimisation")[1]
    assert optimised.count("extractelement") <= 16, optimised.count("extractelement")
    assert len(optimised.splitlines()) < 450
    np.testing.assert_allclose(np.asarray(ft.jit(f)(y0)), np.asarray(f(y0)), rtol=1e-13)
    assert "unroll-full-max-count=4" in engine.host_key()     # object code is keyed by them


def test_512_bit_vectors_only_on_cpus_that_run_them_at_full_clock():
    """``engine.wide_vectors``: AVX-512 hosts of Sapphire Rapids' generation (avx512fp16)
    and AMD's Zen 4/5 get 512-bit loops (LLVM's tuning prefers 256 bits for every AVX-512
    CPU); older Xeons and CPUs without AVX-512 keep LLVM's choice. Only compute-bound
    loops (a vmath routine: sin) ask for them, and a kernel inlined into its segment
    passes the request on; a memory-bound multiply keeps LLVM's width."""
    wide = engine.wide_vectors
    assert wide("rocketlake", {"avx512f": True, "avx512fp16": True})
    assert wide("sapphirerapids", {"avx512f": True, "avx512fp16": True})
    assert wide("znver4", {"avx512f": True}) and wide("znver5", {"avx512f": True})
    assert not wide("skylake-avx512", {"avx512f": True, "avx512bw": True})
    assert not wide("icelake-server", {"avx512f": True, "avx512fp16": False})
    assert not wide("znver3", {"avx2": True})
    assert not wide("znver4", {"avx512f": False})
    host = wide(llvm.get_host_cpu_name(), llvm.get_host_cpu_features())
    x = np.linspace(0.0, 1.0, 4096, dtype=np.float32)

    def ir_before(f):
        text = ft.jit(f, backend="cpu").lower(x).compile().as_text()
        return text.split("after optimisation")[0]
    sin_ir, mul_ir = ir_before(fnp.sin), ir_before(lambda v: v * 3.0)
    assert (engine.WIDE_ATTRIBUTE in sin_ir) == host
    segment = re.search(r"define [^\n]*@\"?seg1\"?\([^\n]*", sin_ir).group(0)
    assert (engine.WIDE_ATTRIBUTE in segment) == host
    assert engine.WIDE_ATTRIBUTE not in mul_ir
