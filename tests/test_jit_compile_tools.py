"""jit's compile-time tools (issue 15, the functrans side): where a compile's time goes
(compile log and stage dump), clearing and bounding the caches, the progress line of a
slow compile, the fast dispatch path for scalar arguments, and the peak temporary
memory a compiled call reports. Nothing here is timed."""
from __future__ import annotations

import logging
import os
import pty
import subprocess
import sys

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import config
from functrans.jit import Jitted

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def option():
    saved = config.options()
    yield config.update
    for name, value in saved.items():
        config.update(name, value)


def test_compile_log_line_names_the_time_of_each_stage(option, caplog):
    option("log_compiles", True)
    option("show_progress", False)
    f = ft.jit(lambda x: fnp.sin(x) * 2.0, backend="cpu")
    with caplog.at_level(logging.WARNING, logger="functrans"):
        f(np.linspace(0.0, 1.0, 7))
    line = next(r.getMessage() for r in caplog.records if "compiled jit(<lambda>)" in r.getMessage())
    assert "[time: trace " in line
    for stage in ("simplify: inline_calls", "simplify: fold_constants", "simplify: cse",
                  "simplify: dce", "backend: total"):
        assert f"{stage} " in line, line


def test_stage_dump_writes_the_timings(option, tmp_path):
    option("dump_dir", str(tmp_path))
    ft.jit(lambda x: fnp.exp(x) + 1.0, backend="cpu")(np.ones(5))
    (sub,) = os.listdir(tmp_path)
    (name,) = [n for n in os.listdir(tmp_path / sub) if n.endswith("_timings.txt")]
    lines = (tmp_path / sub / name).read_text().splitlines()
    stages = [ln.rsplit(" ", 2)[0] for ln in lines]
    assert stages[0] == "trace" and "simplify: dce" in stages and "backend: total" in stages
    assert all(float(ln.rsplit(" ", 2)[1]) >= 0.0 for ln in lines)


def test_clear_cache_compiles_again():
    f = ft.jit(lambda x: x * 3.0)
    x = np.ones(3)
    f(x), f(x)
    assert f.cache_info() == {"hits": 1, "misses": 1, "entries": 1}
    f.clear_cache()
    assert f.cache_info()["entries"] == 0
    np.testing.assert_allclose(f(x), 3.0)
    assert f.cache_info()["misses"] == 2


def test_clear_caches_reaches_every_jit_the_nested_calls_and_the_backend():
    from backends import llvm as cpu
    from backends.llvm import runtime
    f = ft.jit(lambda x: fnp.tanh(x) * 2.0, backend="cpu")
    g = ft.jit(lambda x: fnp.sum(f(x) ** 2), backend="cpu")
    dg = ft.grad(g)
    x = np.linspace(-1.0, 1.0, 4096)
    expected = 2.0 * (2.0 * np.tanh(x)) * 2.0 * (1.0 - np.tanh(x) ** 2)
    np.testing.assert_allclose(dg(x), expected, rtol=1e-12)
    built = cpu.stats["plans built"]
    ft.clear_caches()
    assert f.cache_info()["entries"] == 0 and g.cache_info()["entries"] == 0
    assert runtime.POOL.held_bytes() == 0
    np.testing.assert_allclose(dg(x), expected, rtol=1e-12)   # nested bodies rebuilt
    assert cpu.stats["plans built"] > built


def _rss_bytes():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_caches_stay_bounded_over_200_distinct_compiles(option):
    option("compile_cache_size", 32)
    f = ft.jit(lambda x: fnp.sin(x) * 2.0 + x, backend="cpu")
    rss = []
    for n in range(1, 201):
        x = np.full(n, 0.5)
        np.testing.assert_allclose(f(x), np.sin(x) * 2.0 + x)
        assert f.cache_info()["entries"] <= 32
        if n in (50, 200):
            rss.append(_rss_bytes())
    assert f.cache_info()["misses"] == 200
    # 150 more compiles after the first 50: what they keep is bounded by the caches
    assert rss[1] - rss[0] < 64 * 2 ** 20, rss


def test_nested_call_cache_stays_bounded(option):
    from functrans.compiler import cache_entries
    option("compile_cache_size", 32)
    inner = ft.jit(lambda x: fnp.sin(x) * x, backend="cpu")
    dg = ft.grad(lambda x: fnp.sum(inner(x)))
    for n in range(1, 41):      # each shape compiles new bodies for the nested call
        x = np.full(n, 0.25)
        np.testing.assert_allclose(dg(x), np.cos(x) * x + np.sin(x), rtol=1e-12)
        assert max(cache_entries()) <= 32


def test_backend_object_cache_stays_bounded(monkeypatch):
    from backends import llvm as cpu
    from backends.llvm import cache
    monkeypatch.setattr(cache, "MEM_CACHE_SIZE", 4)
    monkeypatch.setattr(cache, "cache_dir", lambda: None)
    # seven bodies (a kernel's object code serves every element count: bodies, not shapes)
    lowered = [ft.jit(lambda x, c=float(c): fnp.cos(x) + c, backend="cpu").lower(np.ones(3))
               for c in range(3, 10)]
    for lw in lowered:
        cpu.clear_plans()
        lw.compile()
    compiles = cache.stats["compiles"]
    cpu.clear_plans()
    lowered[-1].compile()              # recently used: still in memory
    assert cache.stats["compiles"] == compiles
    cpu.clear_plans()
    lowered[0].compile()               # dropped: compiled again
    assert cache.stats["compiles"] == compiles + 1
    np.testing.assert_allclose(lowered[0].compile()(np.ones(3)), np.cos(1.0) + 3.0)


def test_backend_caches_follow_the_backend_cache_size_option(option):
    import gc
    from backends import llvm as cpu
    from backends.llvm import cache
    from functrans.compiler import cache_entries
    option("compile_cache_size", 32)
    option("backend_cache_size", 32)
    assert cpu.PLAN_CACHE_SIZE == cache.MEM_CACHE_SIZE == 32    # trimmed to 32 now
    assert max(cpu.cache_entries().values()) <= 32
    # 200 distinct bodies (the static k is a literal in each)
    f = ft.jit(lambda x, k: fnp.sin(x) * k + 1.0, static_argnums=1, backend="cpu")
    x = np.linspace(0.0, 1.0, 13 * 7, dtype=np.float32).reshape(13, 7)
    for k in range(200):
        np.testing.assert_allclose(f(x, float(k)), np.sin(x) * k + 1.0, rtol=1e-5)
        assert max(cpu.cache_entries().values()) <= 32, (k, cpu.cache_entries())
        assert f.cache_info()["entries"] <= 32 and max(cache_entries()) <= 32
    assert f.cache_info()["misses"] == 200
    gc.collect()      # what stays alive: the plans the backend and jit's cache keep
    live = [o for o in gc.get_objects() if issubclass(type(o), cpu.CompiledPlan)
            and [a.shape for a in o.in_avals] == [(13, 7)]]
    assert len(live) <= 64, len(live)
    option("backend_cache_size", 512)
    assert cpu.PLAN_CACHE_SIZE == cache.MEM_CACHE_SIZE == 512


def test_backend_cache_size_from_the_environment():
    out = _run_child("f = ft.jit(lambda x: x + 1.0, backend='cpu'); f(np.ones(3))\n"
                     "from backends import llvm as cpu\n"
                     "from backends.llvm import cache\n"
                     "import sys; print('sizes', cpu.PLAN_CACHE_SIZE, cache.MEM_CACHE_SIZE,"
                     " file=sys.stderr)\n",
                     {"FUNCTRANS_BACKEND_CACHE_SIZE": "7"}, stderr_tty=False)
    assert "sizes 7 7" in out, out


def _run_child(code, env_extra, stderr_tty):
    env = dict(os.environ, PYTHONPATH=ROOT, FUNCTRANS_LOG_COMPILES="0", **env_extra)
    script = "import numpy as np, functrans as ft, functrans.numpy as fnp\n" + code
    if not stderr_tty:
        p = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        return p.stderr
    master, slave = pty.openpty()
    try:
        p = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, env=env,
                             stdout=subprocess.DEVNULL, stderr=slave)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:       # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        assert p.wait(timeout=300) == 0, b"".join(chunks)
    finally:
        os.close(master)
    return b"".join(chunks).decode(errors="replace")


_SLOW = ("f = ft.jit(lambda x: fnp.sum(fnp.sin(x) @ fnp.cos(x).T), backend='cpu')\n"
         "print(float(f(np.ones((6, 6)))))\n")


def test_progress_line_on_a_terminal_for_a_slow_compile():
    out = _run_child(_SLOW, {"FUNCTRANS_PROGRESS_AFTER": "0"}, stderr_tty=True)
    assert "compiling jit(<lambda>): " in out and "kernels" in out, out


def test_progress_line_silent_off_a_terminal_or_when_turned_off():
    assert "compiling" not in _run_child(_SLOW, {"FUNCTRANS_PROGRESS_AFTER": "0"},
                                         stderr_tty=False)
    assert "compiling" not in _run_child(_SLOW, {"FUNCTRANS_PROGRESS_AFTER": "0",
                                                 "FUNCTRANS_SHOW_PROGRESS": "0"},
                                         stderr_tty=True)


def test_scalar_arguments_take_the_fast_path(monkeypatch):
    f = ft.jit(lambda x, t: x * (1.0 - 0.9 ** t), backend="cpu")
    x = np.linspace(0.0, 1.0, 5)
    for t in (3, np.int64(4), 2.5, True, np.float32(1.5), np.asarray(7)):
        want = f(x, t)                      # compiles (or hits the cache) on the slow path
        with monkeypatch.context() as m:
            m.setattr(Jitted, "_call_slow", lambda *a: pytest.fail(f"slow path for {t!r}"))
            got = f(x, t)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_allclose(got, x * (1.0 - 0.9 ** float(t)), rtol=1e-6)
    # a Python int's type is its key: another value of it reuses the executable
    with monkeypatch.context() as m:
        m.setattr(Jitted, "_call_slow", lambda *a: pytest.fail("slow path for 11"))
        np.testing.assert_allclose(f(x, 11), x * (1.0 - 0.9 ** 11))
    assert f.cache_info()["misses"] == 5     # 0-d int64 array shares np.int64's compile


def test_python_int_beyond_int64_leaves_the_fast_path_like_the_slow_path():
    f = ft.jit(lambda t: t + 1, backend="cpu")
    assert int(f(3)) == 4 and int(f(5)) == 6
    big = 2 ** 70
    with pytest.raises(Exception) as fast_err:
        f(big)
    g = ft.jit(lambda t: t + 1, backend="cpu")
    with pytest.raises(Exception) as slow_err:
        g(big)
    assert type(fast_err.value) is type(slow_err.value)


def test_cost_analysis_reports_the_workspace_a_call_takes():
    from backends import llvm as cpu
    from backends.llvm import runtime
    a = np.ones((200, 200))
    comp = ft.jit(lambda a, b, c: fnp.tanh(a @ b) @ c, backend="cpu").lower(a, a, a).compile()
    temp = comp.cost_analysis()["temp bytes"]
    assert temp == comp.exe.temp_bytes >= 200 * 200 * 8     # tanh(a @ b) at least
    cpu.clear_caches()
    assert runtime.POOL.held_bytes() == 0
    comp(a, a * 0.01, a)
    assert runtime.POOL.held_bytes() == temp    # what the call allocated for temporaries


def test_profiler_reports_the_compiled_calls_peak_temporaries(capsys):
    a = np.ones((64, 64))

    def f(a, b):
        return fnp.tanh(a @ b) @ b

    r = ft.profile(f, a, a * 0.01, repeats=1)
    assert "peak temporaries (compiled call)" in capsys.readouterr().out
    exe = ft.jit(f, backend="cpu").lower(a, a).compile().exe
    assert r["compiled"]["peak_temp_bytes"] == exe.temp_bytes >= 64 * 64 * 8


def test_the_garbage_collector_pauses_during_a_compile_only():
    import gc
    from functrans import compiler
    seen = []

    class Watch(compiler.CompileHook):
        def active(self):
            return True

        def start(self, c):
            seen.append(gc.isenabled())
            if len(seen) == 3:
                raise RuntimeError("a compile that fails")
    hook = Watch()
    compiler.add_hook(hook)
    try:
        assert gc.isenabled()
        ft.jit(lambda x: fnp.sin(x) + 1.5)(np.ones(3))
        assert seen == [False] and gc.isenabled()
        gc.disable()                        # the user's choice is kept
        ft.jit(lambda x: fnp.sin(x) + 2.5)(np.ones(3))
        assert not gc.isenabled()
        gc.enable()
        with pytest.raises(RuntimeError, match="a compile that fails"):
            ft.jit(lambda x: fnp.sin(x) + 3.5)(np.ones(3))
        assert seen == [False, False, False] and gc.isenabled()
    finally:
        gc.enable()
        compiler.remove_hook(hook)


def test_trace_stage_gives_the_jaxpr_out_info_and_lowers():
    # JAX's newer guides print jaxprs with jax.jit(f).trace(x).jaxpr
    f = ft.jit(lambda x, n: fnp.sin(x)[:n] * 2.0, static_argnums=1)
    t = f.trace(np.ones(4), 2)
    assert str(t.jaxpr).startswith("{ lambda ; a:f64[4]. let")
    assert "sin" in str(t.jaxpr)
    assert (t.out_info.shape, t.out_info.dtype) == ((2,), np.dtype(np.float64))
    np.testing.assert_allclose(t.lower().compile()(np.ones(4)), 2 * np.sin(np.ones(2)))
