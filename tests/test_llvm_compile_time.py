"""What keeps the CPU backend's compile time linear and visible: the per-stage timings
of a compile, math routines shared by a module instead of inlined at every use, very
large fused kernels split, and fusion planning that does not rescan a kernel per
equation. (Times are measured in benchmarks/compile.py; nothing here is timed.)"""
from __future__ import annotations

import multiprocessing as mp
import re

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import random
from backends.llvm import engine, program, vmath

# the attribute compute-bound kernels carry on hosts with full-clock 512-bit vectors
WIDE = f"(?: {re.escape(engine.WIDE_ATTRIBUTE)})?"


def _sin_chain(n):
    def f(y, c):
        for _ in range(n):
            y = fnp.sin(y) * 0.5 + y * c
        return fnp.sum(y)
    return f


def _reference_sin_chain_grad(n, y, c):
    g = np.ones_like(y)
    ys = []
    for _ in range(n):
        ys.append(y)
        y = np.sin(y) * 0.5 + y * c
    for y_k in reversed(ys):
        g = g * (np.cos(y_k) * 0.5 + c)
    return g


def test_compile_timings_name_every_stage_and_sum_to_at_most_the_total():
    from backends import llvm as cpu
    x = np.linspace(0.0, 1.0, 32)
    lowered = ft.jit(lambda a: fnp.sin(a) * 2.0 + 1.0, backend="cpu").lower(x)
    cpu.clear_plans()
    t = lowered.compile().exe.compile_timings
    assert {"plan cache lookup", "fusion plan", "IR build", "total"} <= set(t)
    assert "llvm optimise" in t or "llvm load" in t or "disk cache read" in t
    assert all(v >= 0.0 for v in t.values())
    assert sum(v for k, v in t.items() if k != "total") <= t["total"] + 1e-6
    again = lowered.compile().exe.compile_timings      # a plan-cache hit builds nothing
    assert "fusion plan" not in again and "total" in again


def test_compile_timings_appear_in_cost_analysis():
    from backends import llvm as cpu
    from jaxpr_ir import ClosedJaxpr
    closed = ft.jit(lambda a: fnp.cos(a) + 3.0).lower(np.ones(7)).jaxpr
    cpu.clear_plans()
    exe = cpu.compile(ClosedJaxpr(closed.jaxpr, closed.consts))
    cost = exe.cost_analysis()
    assert cost["compile seconds: total"] == exe.compile_timings["total"]
    assert "compile seconds: fusion plan" in cost and "compile seconds: IR build" in cost


def test_many_uses_of_a_routine_call_one_shared_copy_with_the_same_values():
    n = vmath.INLINE_USES + 6
    # more elements than vmath.LIBRARY_MAX_ELEMENTS (the routines are in the module), and
    # not a multiple of any vector width
    y = np.linspace(-3.0, 3.0, vmath.LIBRARY_MAX_ELEMENTS + 7)
    jf = ft.jit(ft.grad(_sin_chain(n)), backend="cpu")
    text = jf.lower(y, 0.3).compile().as_text()
    assert "ft_sin_f64_shared" in text and "ft_cos_f64_shared" in text
    np.testing.assert_allclose(jf(y, 0.3), _reference_sin_chain_grad(n, y, 0.3), rtol=1e-12)


def test_few_uses_of_a_routine_stay_inlined():
    text = ft.jit(ft.grad(_sin_chain(2)), backend="cpu").lower(np.ones(8), 0.3).compile().as_text()
    assert "_shared" not in text


def test_shared_float32_routines_match_the_inlined_ones():
    x = np.linspace(-20.0, 20.0, vmath.LIBRARY_MAX_ELEMENTS + 5).astype(np.float32)

    def f(x):
        return sum(fnp.exp(fnp.sin(x * (1.0 + k / 64))) for k in range(vmath.INLINE_USES + 4))
    shared = ft.jit(f, backend="cpu")(x)
    want = sum(np.exp(np.sin(x * np.float32(1.0 + k / 64)))
               for k in range(vmath.INLINE_USES + 4))
    np.testing.assert_allclose(shared, want, rtol=2e-5)


_LIBRARY_ROUTINES = ["exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sin", "cos",
                     "tan", "arctan", "arcsin", "arccos", "tanh", "sinh", "cosh", "arcsinh",
                     "arccosh", "arctanh"]


def test_small_kernels_call_the_library_vectorised_and_hold_no_routine():
    x = np.linspace(-3.0, 3.0, 1000)
    text = ft.jit(lambda x: fnp.sin(x) + fnp.cos(x), backend="cpu").lower(x).compile().as_text()
    optimised = text.split("after optimisation")[1]
    assert "ft_lib_sin_f64" in optimised and "ft_lib_cos_f64" in optimised
    assert re.search(r"call [^\n]*<\d+ x double> @\"?ft_lib_sin_f64_", optimised), \
        "the library's vector variant is not called"
    assert "define internal double @ft_sin_f64" not in text     # no copy of the routine


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", _LIBRARY_ROUTINES)
def test_the_library_gives_the_inlined_routines_bits(name, dtype):
    # one input, computed by a small kernel (library calls) and, tiled, by a large one
    # (the routine inlined); special values included
    f = getattr(fnp, name)
    x = np.concatenate([np.linspace(-30, 30, 997), [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310,
                                                    -1e-310, 0.5, -0.5, 1.0, -1.0]]).astype(dtype)
    if name in ("arcsin", "arccos", "arctanh"):
        x = x / np.asarray(30.0, dtype)
    small = np.asarray(ft.jit(f, backend="cpu")(x))
    reps = vmath.LIBRARY_MAX_ELEMENTS // len(x) + 2
    large = np.asarray(ft.jit(f, backend="cpu")(np.tile(x, reps)))[:len(x)]
    np.testing.assert_array_equal(small, large)


def test_a_long_chain_is_split_into_kernels_of_bounded_size():
    n = 2 * program.MAX_KERNEL_EQNS + 10

    def f(x):
        y = x
        for _ in range(n):
            y = y + x
        return y
    x = np.arange(5.0)
    cost = ft.jit(f, backend="cpu").lower(x).compile().cost_analysis()
    assert cost["kernels"] == 3 and cost["host steps"] == 0
    np.testing.assert_array_equal(ft.jit(f, backend="cpu")(x), x * (n + 1))


def test_planning_records_each_kernels_reduction_axes():
    closed = ft.make_jaxpr(lambda a: fnp.exp(a - fnp.max(a, axis=1, keepdims=True)))(np.ones((3, 4)))
    steps = program.plan_jaxpr(closed.jaxpr).steps
    kernels = [s for s in steps if hasattr(s, "reduce_axes")]
    assert kernels and all(k.reduce_axes in ({(1,)}, set()) for k in kernels)
    assert any(k.reduce_axes == {(1,)} for k in kernels)


# --------------------------------------------------------------------------- workspace

def _with_workspace(a):
    return fnp.sum(fnp.sin(a)) * fnp.cos(a) + fnp.max(fnp.exp(a) * a)


def test_temp_bytes_is_what_a_call_allocates_beyond_its_outputs():
    import tracemalloc
    from backends.llvm import runtime
    x = np.linspace(0.0, 1.0, 20000)
    exe = ft.jit(_with_workspace, backend="cpu").lower(x).compile().exe
    assert exe.temp_bytes > runtime.HELD_WORKSPACE
    assert exe.cost_analysis()["temp bytes"] == exe.temp_bytes
    for run in (exe, exe.fast_runner()):       # the general and the dispatch path
        run(x)
        runtime.POOL.clear()
        tracemalloc.start()
        try:
            outs = run(x)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        temps = peak - sum(o.nbytes for o in outs)
        # the workspace, plus the few hundred bytes of Python objects of the call itself
        assert exe.temp_bytes <= temps <= exe.temp_bytes + 2048, (temps, exe.temp_bytes)


def test_executables_for_many_shapes_share_a_bounded_workspace_pool():
    from backends.llvm import runtime
    jf = ft.jit(_with_workspace, backend="cpu")
    sizes = [10000 + 1000 * k for k in range(8)]
    runtime.POOL.clear()
    most = 0
    for n in sizes:
        x = np.linspace(0.0, 1.0, n)
        np.testing.assert_allclose(jf(x), _with_workspace(x), rtol=1e-12)
        exe = jf.lower(x).compile().exe
        assert exe._program._held is None      # the executable keeps no workspace
        most = max(most, exe.temp_bytes)
    for n in sizes:                            # every shape once more, from the pool
        x = np.linspace(0.0, 1.0, n)
        np.testing.assert_allclose(jf(x), _with_workspace(x), rtol=1e-12)
    assert 0 < runtime.POOL.held_bytes() <= 2 * most


# --------------------------------------------------------------------------- progress

def test_progress_reports_kernels_as_they_are_built_then_each_llvm_stage_then_done():
    from backends import llvm as cpu
    from backends.llvm import cache
    from jaxpr_ir import ClosedJaxpr
    n = program.MAX_KERNEL_EQNS + 5

    def f(x):
        y = x
        for _ in range(n):
            y = y + x
        return y
    closed = ft.jit(f).lower(np.ones(3)).jaxpr
    cache.clear_memory()
    calls = []
    old = cache.cache_dir
    cache.cache_dir = lambda: None            # compile, so that every stage runs
    try:
        cpu.compile(ClosedJaxpr(closed.jaxpr, closed.consts),
                    progress=lambda *a: calls.append(a))
    finally:
        cache.cache_dir = old
    stages = [c[0] for c in calls]
    assert stages == ["IR build", "IR build", "llvm optimise", "llvm emit object", "done"]
    assert [c[1:3] for c in calls[:2]] == [(1, 2), (2, 2)]
    assert all(c[3] == len(closed.jaxpr.eqns) for c in calls)


def test_progress_line_is_silent_for_fast_compiles_and_one_line_per_stage_in_a_log():
    import io
    from backends.llvm.progress import ProgressLine
    quiet = io.StringIO()
    line = ProgressLine("f", stream=quiet, after=3600.0)
    line("IR build", 1, 2, 10)
    line("done", 2, 2, 10)
    assert quiet.getvalue() == ""
    log = io.StringIO()
    line = ProgressLine("f", stream=log, after=0.0)
    for k in (1, 2):
        line("IR build", k, 2, 10)
    line("llvm optimise", 2, 2, 10)
    line("done", 2, 2, 10)
    assert log.getvalue().splitlines() == ["compiling f: IR build, 1/2 kernels, 10 equations",
                                           "compiling f: llvm optimise, 2/2 kernels, 10 equations"]


def test_progress_line_rewrites_one_terminal_line_in_place():
    import io
    from backends.llvm.progress import ProgressLine

    class Tty(io.StringIO):
        def isatty(self):
            return True
    tty = Tty()
    line = ProgressLine("g", stream=tty, after=0.0)
    line("IR build", 1, 1, 4)
    line("llvm optimise", 1, 1, 4)
    line("done", 1, 1, 4)
    text = tty.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n") and text.count("\r") == 2


def test_progress_line_shows_a_long_stage_while_it_runs_and_nothing_after_done():
    import io
    import time
    from backends.llvm.progress import ProgressLine
    log = io.StringIO()
    line = ProgressLine("h", stream=log, after=0.05)
    line("llvm optimise", 3, 3, 500)        # one long stage: no further call until done
    assert log.getvalue() == ""
    deadline = time.monotonic() + 10.0
    while not log.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert log.getvalue() == "compiling h: llvm optimise, 3/3 kernels, 500 equations\n"
    line("done", 3, 3, 500)
    line("done", 0, 0, 0)                   # the caller's second "done": ignored
    quick = io.StringIO()
    line = ProgressLine("q", stream=quick, after=0.05)
    line("IR build", 1, 2, 10)
    line("done", 2, 2, 10)                  # finished before the timer: never shown
    time.sleep(0.2)
    assert quick.getvalue() == "" and log.getvalue().count("\n") == 1


# --------------------------------------------------------------------------- no host-step cliffs

def test_threefry_runs_natively_with_the_impls_bits():
    from functrans.primitives.random import threefry2x32
    rng = np.random.default_rng(0)
    jf = ft.jit(threefry2x32, backend="cpu")
    for shape in [(), (7,), (3, 5), (0,)]:
        a = [rng.integers(0, 2 ** 32, shape, dtype=np.uint64).astype(np.uint32) for _ in range(4)]
        assert jf.lower(*a).compile().cost_analysis()["host steps"] == 0
        for got, want in zip(jf(*a), threefry2x32(*a)):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_random_draws_in_a_jitted_loop_stay_native():
    from functrans import lax, random

    def draws(key):
        def body(i, carry):
            k, acc = carry
            k, sub = random.split(k)
            return k, acc + random.normal(sub, (4,))
        return lax.fori_loop(0, 50, body, (key, fnp.zeros(4)))[1]
    key = random.PRNGKey(3)
    jf = ft.jit(draws, backend="cpu")
    assert jf.lower(key).compile().cost_analysis()["host steps"] == 0
    # the bits are the same (above); the normal transform's math may differ by an ulp
    np.testing.assert_allclose(np.asarray(jf(key)),
                               np.asarray(ft.jit(draws, backend="interpret")(key)), rtol=1e-13)


# --------------------------------------------------------------------------- threads

def test_thread_counts_follow_the_cores_other_processes_leave_free(monkeypatch):
    from backends.llvm import threads
    for var in threads._LIMIT_VARS:
        monkeypatch.delenv(var, raising=False)
    seen = []
    monkeypatch.setattr(threads, "BLAS_SETTERS", [seen.append])
    monkeypatch.setattr(threads, "usable_cores", lambda: 4)
    monkeypatch.setattr(threads, "_STATE", {"checked": -1e9, "in use": None})
    monkeypatch.setattr(threads, "_own_runnable", lambda: None)    # our count: ``ours``
    monkeypatch.setattr(threads, "_runnable_now", lambda: 4 + 2)   # us (4) + 2 others
    assert threads.balance(now=0.0) == 2 and seen == [2]
    monkeypatch.setattr(threads, "_runnable_now", lambda: 1)       # only the reader
    assert threads.balance(now=0.1) == 2                           # not re-checked yet
    assert threads.balance(now=1.0) == 4 and seen == [2, 4]
    monkeypatch.setattr(threads, "_runnable_now", lambda: 4 + 9)   # a crowded machine
    assert threads.balance(now=2.0) == 4 and seen[-1] == 4         # seen once: not yet
    assert threads.balance(now=2.01) == 4                          # confirmed 20 ms on
    assert threads.balance(now=2.0 + threads.DROP_CONFIRM_SECONDS) == 1 and seen[-1] == 1
    threads._NTHREADS.value = threads._LAUNCHED[0]                 # leave the pool as found


@pytest.mark.parametrize("var", ["FUNCTRANS_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                 "OMP_NUM_THREADS"])
def test_the_users_thread_limit_caps_the_blas(monkeypatch, var):
    from backends.llvm import threads
    for v in threads._LIMIT_VARS:
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv(var, "1")
    seen = []
    monkeypatch.setattr(threads, "BLAS_SETTERS", [seen.append])
    monkeypatch.setattr(threads, "usable_cores", lambda: 4)
    monkeypatch.setattr(threads, "_STATE", {"checked": -1e9, "in use": None})
    monkeypatch.setattr(threads, "_runnable_now", lambda: 1)       # an idle machine
    monkeypatch.setattr(threads, "_own_runnable", lambda: 1)
    assert threads.balance(now=0.0) == 1 and seen == [1]
    monkeypatch.setenv(var, "3")
    assert threads.balance(now=1.0) == 3 and seen == [1, 3]
    threads._NTHREADS.value = threads._LAUNCHED[0]


def test_this_processs_own_threads_are_not_competitors(monkeypatch):
    from backends.llvm import threads
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    # 5 runnable on the machine, all 5 ours (say XLA's spinning pool in this process)
    monkeypatch.setattr(threads, "_runnable_now", lambda: 5)
    monkeypatch.setattr(threads, "_own_runnable", lambda: 5)
    assert threads.free_cores(1) == 2
    monkeypatch.setattr(threads, "_own_runnable", lambda: 2)      # 3 of another process's
    assert threads.free_cores(1) == 1
    monkeypatch.undo()
    real = threads._own_runnable()
    assert real is None or real >= 1          # the thread asking is running


def test_programs_with_blas_balance_threads_and_others_do_not():
    from backends import llvm as cpu
    a = np.ones((64, 64))
    assert ft.jit(lambda x: x @ x, backend="cpu").lower(a).compile().exe.compiled.threaded
    assert not ft.jit(lambda x: x + 1.0, backend="cpu").lower(a).compile().exe.compiled.threaded
    np.testing.assert_allclose(ft.jit(lambda x: x @ x, backend="cpu")(a), a @ a)
    assert cpu.runtime is not None


def test_long_large_kernels_are_called_functions_with_the_inlined_kernels_values(monkeypatch):
    from backends.llvm import cache, kernels, split

    def f(x, c):
        y = x
        for _ in range(30):
            y = fnp.sin(y) * 0.5 + y * c
        s = fnp.sum(y * y, axis=1, keepdims=True)
        return y[:, 1:] * 2.0 - s, fnp.sum(y)

    x = np.linspace(-2.0, 2.0, 24 * 40).reshape(24, 40)
    v = np.linspace(-1.0, 1.0, 300)

    def run(fun, *args):
        cache.clear_memory()
        exe = ft.jit(fun).lower(*args).compile().exe
        out = ft.jit(fun)(*args)
        return exe.as_text(), [np.asarray(o) for o in ft.tree_util.tree_leaves(out)]

    own_text, own = run(f, x, 0.3)
    grad_text, own_grad = run(ft.grad(_sin_chain(120)), v, 0.3)
    with monkeypatch.context() as m:
        m.setattr(kernels, "OWN_FUNCTION_EQNS", 10 ** 9)
        m.setattr(split, "MIN_SPLIT_WEIGHT", 10 ** 9)    # a large module's kernels: never inlined
        inl_text, inl = run(f, x, 0.3)
        _, inl_grad = run(ft.grad(_sin_chain(120)), v, 0.3)
    assert re.search(r'define (internal )?void @"k\d+"\([^)]*\)' + WIDE + ' noinline', own_text)
    assert re.search(r'define (internal )?void @"k\d+"\([^)]*\)' + WIDE + ' noinline', grad_text)
    assert not re.search(r'define (internal )?void @"k\d+"\([^)]*\)' + WIDE + ' noinline', inl_text)
    np.testing.assert_array_equal(own[0], inl[0])
    np.testing.assert_allclose(own[1], inl[1], rtol=1e-13)
    np.testing.assert_array_equal(own_grad[0], inl_grad[0])
    np.testing.assert_allclose(own_grad[0], _reference_sin_chain_grad(120, v, 0.3),
                               rtol=1e-12)


# --------------------------------------------------------------------------- parts, rolled loops

def _small_transformer_step(backend="cpu"):
    from benchmarks.compile import transformer_inputs, transformer_loss
    p, x = transformer_inputs(batch=2, seq=24, d=16)
    return ft.jit(ft.value_and_grad(transformer_loss(fnp, d=16)), backend=backend), p, x


def test_a_large_module_compiles_in_parts_with_the_same_values_on_any_core_count(monkeypatch):
    import backends.llvm as cpu
    from backends.llvm import cache, engine
    parts = []
    real = cpu.split_module
    monkeypatch.setattr(cpu, "split_module", lambda m, n: _record(real, parts, m, n))
    f, p, x = _small_transformer_step()
    results = {}
    for n in (1, 2, 3):
        monkeypatch.setattr(engine, "workers", lambda n=n: n)
        cache.clear_memory()
        exe = f.lower(p, x).compile().exe
        t = exe.compile_timings
        assert sum(v for k, v in t.items() if k != "total") <= t["total"] + 1e-6
        v, g = f(p, x)
        results[n] = [np.asarray(v)] + [np.asarray(g[k]) for k in sorted(g)]
    assert [len(ps) for ps in parts] == [1, 2, 3]
    kernels = set(re.findall(r'^define void @"(k\d+)"', parts[0][0], re.M))
    for texts in parts[1:]:          # each kernel is defined in exactly one part
        defined = [set(re.findall(r'^define void @"(k\d+)"', t, re.M)) for t in texts]
        assert sum(map(len, defined)) == len(kernels) == len(set().union(*defined)) > 4
        assert re.search(r'^define ptr @"seg1"', texts[0], re.M) and all(defined[1:])
    for n in (2, 3):                 # kernels are never inlined: the same code, bit for bit
        for a, b in zip(results[1], results[n]):
            np.testing.assert_array_equal(a, b)
    ref, _, _ = _small_transformer_step("interpret")      # and the values are right
    v, g = ref({k: a.astype(np.float64) for k, a in p.items()}, x.astype(np.float64))
    for a, b in zip(results[1], [np.asarray(v)] + [np.asarray(g[k]) for k in sorted(g)]):
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=1e-6)


def _record(real, parts, m, n):
    whole, texts = real(m, n)
    parts.append(texts)
    return whole, texts


def test_small_modules_stay_whole_and_a_failing_part_raises(monkeypatch):
    from backends.llvm import engine, split
    import llvmlite.ir as ir
    m = ir.Module()
    assert split.split_module(m, 4)[1] == [str(m)]
    ok = f'target triple = "{engine.triple()}"\ndefine void @"ft_part_ok"() {{\n  ret void\n}}\n'
    with pytest.raises(RuntimeError):
        engine.compile_objects([ok, "this is not IR"])
    objs = engine.compile_objects([ok, ok.replace("ft_part_ok", "ft_part_ok2")])
    loaded = engine.Loaded(objs)
    assert loaded.address("ft_part_ok") and loaded.address("ft_part_ok2")


def test_loops_over_a_blocks_rows_stay_rolled_and_loops_along_a_row_do_not():
    from backends.llvm import row_kernels

    def loops(c):                    # (trip count or None when not a constant, rolled)
        return [(int(n) if n.isdigit() else None, bool(md)) for n, md in re.findall(
            r'icmp ult i64 %"[^"]+", (\d+|%"[^"]+")\n\s+br i1 [^\n]*?(, !llvm.loop !\d+)?\n',
            c.exe.compiled.ir_text)]
    softmax = lambda x: ft.nn.softmax(x, axis=-1)     # noqa: E731
    for shape in ((8, 64), (8, 4), (40, 100)):
        found = loops(ft.jit(softmax).lower(np.ones(shape)).compile())
        assert all(rolled == (n is None) for n, rolled in found), shape
        assert {n for n, _ in found} >= {None, shape[1]}, shape
    # long rows (one per block) keep LLVM's unrolling: their loops prefetch in chunks
    assert row_kernels._BLOCK_ROWS_BELOW <= 2048
    assert not any(rolled for _, rolled in
                   loops(ft.jit(softmax).lower(np.ones((4, 2048))).compile()))


def test_kernels_inside_a_loop_stay_inlinable_when_a_module_is_split(monkeypatch):
    from functrans import lax
    from backends.llvm import cache, engine, split
    monkeypatch.setattr(split, "MIN_SPLIT_WEIGHT", 0)
    monkeypatch.setattr(engine, "workers", lambda: 2)

    def f(x, y):
        z = fnp.tanh(x * y) + fnp.sin(y)                           # outside the loop: moves
        body = lambda i, s: (fnp.tanh(s[0] * 0.9 + s[1]) * 0.5, s[1] * 0.99 + s[0] * 0.01)
        return lax.fori_loop(0, 3, body, (z, y))

    x = np.linspace(0.0, 1.0, 300)
    cache.clear_memory()
    text = ft.jit(f).lower(x, x[::-1].copy()).compile().exe.compiled.ir_text
    assert len(re.findall(r'^define void @"k\d+"\([^)]*\)' + WIDE + ' noinline', text, re.M)) == 1
    assert re.search(r'^define internal void @"k\d+"', text, re.M)       # the loop's kernel
    want = ft.jit(f, backend="interpret")(x, x[::-1].copy())
    got = ft.jit(f)(x, x[::-1].copy())
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-13)


def test_a_segment_that_only_calls_kernels_of_their_own_is_compiled_unoptimised():
    from backends.llvm import cache
    y = np.linspace(0.0, 1.0, 1000)
    cache.clear_memory()
    lone = ft.jit(ft.grad(_sin_chain(10))).lower(y, 0.3).compile()
    text = lone.exe.compiled.ir_text
    # the segment: no loop, calls one noinline kernel; the kernel keeps O3
    assert re.search(r'define ptr @"seg\d+"\([^)]*\)' + WIDE + ' noinline nounwind optnone', text)
    # (internal, or external when compiled beside the segment: split._beside_dispatch)
    assert re.search(r'define (internal )?void @"k\d+"\([^)]*\)' + WIDE + r' noinline nounwind\n',
                     text)
    np.testing.assert_allclose(lone(y, 0.3), _reference_sin_chain_grad(10, y, 0.3), rtol=1e-12)
    # a segment holding an inlinable kernel's loop is optimised
    small = ft.jit(lambda a: fnp.sin(a) * 2.0 + 1.0).lower(y).compile()
    assert "optnone" not in small.exe.compiled.ir_text


@pytest.mark.parametrize("workers", [1, 2])
def test_a_small_kernel_beside_unoptimised_dispatch_compiles_in_a_part_of_its_own(
        monkeypatch, workers):
    """Below MIN_SPLIT_WEIGHT a module stays whole, unless all that stays in part 0 is
    unoptimised dispatch: the kernel then goes to a second part (with two workers)."""
    from backends.llvm import cache, engine, split
    import backends.llvm as llvm_backend
    monkeypatch.setattr(engine, "workers", lambda: workers)
    seen = []

    def spy(module, n):
        whole, parts = split.split_module(module, n)
        seen.append(parts)
        return whole, parts
    monkeypatch.setattr(llvm_backend, "split_module", spy)
    y = np.linspace(0.0, 1.0, 1000)
    cache.clear_memory()
    monkeypatch.setattr(cache, "cache_dir", lambda: None)
    got = ft.jit(ft.grad(_sin_chain(10)))(y, 0.3)
    np.testing.assert_allclose(got, _reference_sin_chain_grad(10, y, 0.3), rtol=1e-12)
    assert len(seen) == 1 and len(seen[0]) == workers
    if workers == 2:
        assert "optnone" in seen[0][0] and '@"k' in seen[0][1] and "optnone" not in seen[0][1]
    # a module whose segment is optimised (an inlinable kernel) stays whole
    seen.clear()
    ft.jit(lambda a: fnp.sin(a) * 2.0 + 1.0)(y)
    assert len(seen) == 1 and len(seen[0]) == 1


def test_a_parallel_body_shared_by_an_identical_kernel_in_another_part_links():
    """Two identical parallel kernels share one body (``k29.par`` called from ``k29`` and
    ``k45``); when the module was split, the body stayed internal in its kernel's part
    and the other part declared it internal: an LLVM parse error for this multinomial
    draw (``split._export_called_across``). Each row of counts sums to n."""
    p = np.array([0.2, 0.3, 0.5], np.float32)
    r = np.asarray(random.multinomial(random.key(0), 2, p, shape=(262144, 3),
                                      dtype=np.float32))
    assert r.shape == (262144, 3) and r.dtype == np.float32
    np.testing.assert_array_equal(r.sum(axis=1), 2.0)
    np.testing.assert_allclose(r.mean(axis=0), 2 * p, atol=0.01)


def test_a_forked_child_compiles_module_parts_on_threads_of_its_own(monkeypatch):
    """The parent's kept part-compiling threads do not exist in a forked child: the child
    compiles a two-part module on a pool of its own (it hung waiting for a dead thread)."""
    from backends.llvm import cache, engine
    monkeypatch.setattr(engine, "workers", lambda: 2)
    monkeypatch.setattr(cache, "cache_dir", lambda: None)
    y = np.linspace(0.0, 1.0, 1000)
    cache.clear_memory()
    ft.jit(ft.grad(_sin_chain(10)))(y, 0.3)          # compiled in two parts: the pool exists
    assert engine._POOL
    ctx = mp.get_context("fork")
    child = ctx.Process(target=_compile_in_child)
    child.start()
    child.join(120)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive and child.exitcode == 0


def _compile_in_child():
    from backends.llvm import cache
    cache.clear_memory()
    y = np.linspace(0.0, 1.0, 1000)
    got = ft.jit(ft.grad(_sin_chain(11)))(y, 0.3)
    np.testing.assert_allclose(got, _reference_sin_chain_grad(11, y, 0.3), rtol=1e-12)
