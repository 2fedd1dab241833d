"""JAX's profiler and debugging names: ``ft.profiler.trace`` (a Chrome trace of
functrans's events), the annotations, ``device_memory_profile`` (pprof bytes, decoded
here by a small protobuf reader) and ``ft.debug.breakpoint`` / the sharding views."""
from __future__ import annotations

import gc
import gzip
import io
import sys
import threading
import tracemalloc

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.profiler_trace import load_trace
from functrans.sharding import Mesh, NamedSharding, P


def _inside(inner, outer) -> bool:
    eps = 1e-3     # microseconds, float rounding of the file
    return (inner["ts"] >= outer["ts"] - eps
            and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + eps)


def test_trace_file_nests_annotations_and_has_one_event_per_compiled_call(tmp_path):
    f = ft.jit(lambda x: fnp.sin(x) * 2.0)
    f(fnp.ones(3))                                     # compiled before the trace
    g = ft.jit(lambda x: x @ x.T)
    with ft.profiler.trace(tmp_path):
        with ft.profiler.TraceAnnotation("outer"):
            for i in range(3):
                with ft.profiler.StepTraceAnnotation("train", step_num=i):
                    f(fnp.ones(3))
                    lax.cos(fnp.ones(2))
            g(fnp.ones((2, 2)))
    assert list((tmp_path / "plugins" / "profile").iterdir())[0].glob("*.trace.json.gz")
    events = load_trace(tmp_path)
    spans = [e for e in events if e["ph"] == "X"]
    by = lambda name: [e for e in spans if e["name"] == name]   # noqa: E731
    outer, steps = by("outer"), by("train")
    assert len(outer) == 1 and len(steps) == 3
    assert [s["args"]["step_num"] for s in sorted(steps, key=lambda e: e["ts"])] == ["0", "1", "2"]
    calls = [e for e in spans if e["cat"] == "compiled call"]
    assert sorted(e["name"] for e in calls) == ["jit(<lambda>)"] * 4       # 3 of f, 1 of g
    for s in steps:
        assert _inside(s, outer[0])
        assert sum(_inside(c, s) for c in calls) == 1
        assert sum(_inside(c, s) for c in by("cos")) == 1                  # eager primitive
    for ex in by("execute"):
        assert sum(_inside(ex, c) for c in calls) == 1
    compiles = [e for e in spans if e["cat"] == "compile"]
    assert len(compiles) == 1                          # g's; f was compiled already
    stages = [e for e in spans if e["cat"] == "compile stage"]
    assert {"trace", "backend"} <= {e["name"] for e in stages}
    assert all(_inside(e, compiles[0]) for e in stages)
    assert any(e["name"].startswith("simplify: ") for e in stages)
    # the top-level ranges of the thread lie within the traced wall time
    wall = max(e["ts"] + e.get("dur", 0) for e in spans) - min(e["ts"] for e in spans)
    top = [e for e in spans if not any(o is not e and _inside(e, o) for o in spans)]
    assert sum(e["dur"] for e in top) <= wall + 1e-3
    assert sum(e["dur"] for e in steps) <= outer[0]["dur"]


def test_eager_numpy_calls_are_events(tmp_path):
    x = fnp.ones(4)
    with ft.profiler.trace(tmp_path):
        fnp.sin(x)
        fnp.add(x, x)
        fnp.power(x, 2.0)
        lax.mul(x, x)               # lax's inlined eager path goes through bind meanwhile
    names = [e["name"] for e in load_trace(tmp_path) if e.get("cat") == "eager"]
    assert {"sin", "add", "power", "mul"} <= set(names)


def test_threads_get_their_own_tracks(tmp_path):
    def work():
        with ft.profiler.TraceAnnotation("in thread"):
            lax.sin(fnp.ones(2))
    with ft.profiler.trace(tmp_path):
        with ft.profiler.TraceAnnotation("main"):
            t = threading.Thread(target=work, name="worker")
            t.start()
            t.join()
    events = load_trace(tmp_path)
    names = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    tid = {e["name"]: e["tid"] for e in events if e["ph"] == "X"}
    assert tid["in thread"] != tid["main"] and names[tid["in thread"]] == "worker"
    assert tid["sin"] == tid["in thread"]


def test_start_stop_and_annotations_without_a_trace(tmp_path):
    with pytest.raises(RuntimeError):
        ft.profiler.stop_trace()
    ft.profiler.start_trace(str(tmp_path), create_perfetto_trace=True)
    with pytest.raises(RuntimeError):
        ft.profiler.start_trace(str(tmp_path))
    ft.profiler.stop_trace()
    run = next((tmp_path / "plugins" / "profile").iterdir())
    assert (run / "perfetto_trace.json.gz").exists()
    opts = ft.profiler.ProfileOptions()
    opts.session_id = "named_run"
    with ft.profiler.trace(tmp_path / "b", profiler_options=opts):
        pass
    assert (tmp_path / "b" / "plugins" / "profile" / "named_run").is_dir()
    with pytest.raises(NotImplementedError, match="no profiler server"):
        ft.profiler.start_server(9999)

    @ft.profiler.annotate_function
    def double(x):
        """doc"""
        return 2 * x
    assert double(3) == 6 and double.__name__ == "double" and double.__doc__ == "doc"
    with ft.profiler.TraceAnnotation("idle"), ft.profiler.StepTraceAnnotation("s", step_num=1):
        pass


def test_a_trace_with_an_exception_is_still_written(tmp_path):
    with pytest.raises(ZeroDivisionError):
        with ft.profiler.trace(tmp_path):
            with ft.profiler.TraceAnnotation("failing"):
                1 / 0
    assert "failing" in {e["name"] for e in load_trace(tmp_path)}
    ft.profiler.start_trace(tmp_path)     # the failed one was stopped
    ft.profiler.stop_trace()


# ------------------------------------------------------------------ pprof

def _fields(buf: bytes) -> list:
    """(field number, value) of a protobuf message: ints for varints, bytes otherwise."""
    out, i = [], 0

    def varint():
        nonlocal i
        n = shift = 0
        while True:
            b = buf[i]
            i += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return n
    while i < len(buf):
        key = varint()
        if key & 7 == 0:
            out.append((key >> 3, varint()))
        elif key & 7 == 2:
            n = varint()
            out.append((key >> 3, buf[i:i + n]))
            i += n
        else:
            raise AssertionError(f"unexpected wire type {key & 7}")
    return out


def _varints(b: bytes) -> list:
    out, n, shift = [], 0, 0
    for x in b:
        n |= (x & 0x7F) << shift
        shift += 7
        if x < 0x80:
            out.append(n)
            n = shift = 0
    return out


def _decode(data: bytes) -> dict:
    top = _fields(gzip.decompress(data))
    strings = [v.decode() for k, v in top if k == 6]
    types = [[strings[v] for _, v in _fields(m)] for k, m in top if k == 1]
    funcs = {}
    for k, m in top:
        if k == 5:
            d = dict(_fields(m))
            funcs[d[1]] = strings[d[2]]
    locs = {}
    for k, m in top:
        if k == 4:
            d = _fields(m)
            lid = dict(d)[1]
            locs[lid] = [funcs[dict(_fields(v))[1]] for f, v in d if f == 4]
    samples = []
    for k, m in top:
        if k == 2:
            d = _fields(m)
            loc = _varints(next(v for f, v in d if f == 1))
            values = _varints(next(v for f, v in d if f == 2))
            labels = {strings[dict(_fields(v))[1]]: strings[dict(_fields(v))[2]]
                      for f, v in d if f == 3}
            samples.append(dict(values=values, labels=labels,
                                stack=[n for lid in loc for n in locs[lid]]))
    return dict(strings=strings, types=types, samples=samples)


def _live_bytes() -> tuple:
    """An independent count: the distinct memory blocks live Arrays hold, each at the
    bytes of the array that owns it (numpy's OWNDATA flag)."""
    gc.collect()
    owners = {}
    for o in gc.get_objects():
        if issubclass(type(o), ft.Array):      # by type: a dead weakref.proxy raises
            a = o
            while not a.flags.owndata and isinstance(a.base, np.ndarray):
                a = a.base
            owners[id(a)] = a.nbytes
    return len(owners), sum(owners.values())


def _totals(p) -> tuple:
    return (sum(s["values"][0] for s in p["samples"]), sum(s["values"][1] for s in p["samples"]))


def test_device_memory_profile_counts_the_live_buffers(tmp_path):
    # each profile and each independent count walks every object after a full garbage
    # collection (seconds late in the suite): three walks, the second profile saved
    p0 = _decode(ft.profiler.device_memory_profile())
    assert p0["types"] == [["allocations", "count"], ["space", "bytes"]]
    assert p0["strings"][0] == ""
    big = fnp.zeros((256, 512), dtype=fnp.float32)       # 512 KiB
    view = big[::2]
    path = tmp_path / "memory.prof"
    ft.profiler.save_device_memory_profile(str(path))
    p1 = _decode(path.read_bytes())
    assert p1["types"] == p0["types"]
    assert _totals(p1) == _live_bytes()
    c0, b0 = _totals(p0)
    c1, b1 = _totals(p1)
    assert (c1 - c0, b1 - b0) == (1, 256 * 512 * 4)       # the view adds no buffer
    mine = [s for s in p1["samples"] if s["labels"].get("shape") == "(256, 512)"]
    assert mine and mine[0]["labels"]["dtype"] == "float32"
    del view


def _allocate_here():
    return fnp.ones((123, 7))


def test_device_memory_profile_names_the_allocating_site_under_tracemalloc():
    tracemalloc.start(10)
    try:
        x = _allocate_here()
        p = _decode(ft.profiler.device_memory_profile())
    finally:
        tracemalloc.stop()
    mine = [s for s in p["samples"] if s["labels"]["shape"] == "(123, 7)"]
    assert mine and any("test_profiler_trace.py" in n for n in mine[0]["stack"])
    del x


# ------------------------------------------------------------------ debug

def _run_with_stdin(monkeypatch, capsys, commands, fn, *args):
    monkeypatch.setattr(sys, "stdin", io.StringIO(commands))
    out = fn(*args)
    return out, capsys.readouterr().out


def test_breakpoint_under_jit_stops_at_each_run_with_the_values(monkeypatch, capsys):
    def f(x, scale=3):
        y = x * 2.0
        pair = (y, y + 1.0)
        ft.debug.breakpoint()
        return y * scale
    jf = ft.jit(f)
    out, text = _run_with_stdin(monkeypatch, capsys, "p y.sum()\np pair[1]\np scale\nc\n",
                                jf, fnp.arange(3.0))
    np.testing.assert_allclose(out, [0.0, 6.0, 12.0])
    assert "6.0" in text and "array([1., 3., 5.])" in text and "\n3\n" in text.replace(
        "(functrans pdb) ", "\n")
    assert "test_profiler_trace.py" in text                  # the caller's file and line
    _, text = _run_with_stdin(monkeypatch, capsys, "p y.sum()\nc\n", jf, fnp.ones(3))
    assert "6.0" in text                                      # the second call's values
    _, text = _run_with_stdin(monkeypatch, capsys, "p y\nc\n", f, fnp.ones(2))   # eager
    assert "array([2., 2.])" in text


def test_sharding_views():
    x = fnp.ones((4, 6))
    seen = []
    ft.debug.inspect_array_sharding({"a": x, "b": [x]}, callback=seen.append)
    assert len(seen) == 2 and all(s == x.sharding for s in seen)
    traced = []
    ft.jit(lambda v: ft.debug.inspect_array_sharding(v, callback=traced.append) or v)(x)
    assert len(traced) == 1
    mesh = Mesh((1, 1), ("a", "b"))
    x2 = ft.device_put(x, NamedSharding(mesh, P("a", "b")))
    buf = io.StringIO()
    sys_out, sys.stdout = sys.stdout, buf
    try:
        ft.debug.visualize_array_sharding(x2)
        ft.debug.visualize_sharding((8,), NamedSharding(Mesh((1,), ("i",)), P("i")))
    finally:
        sys.stdout = sys_out
    assert buf.getvalue().count("CPU 0") == 2
    with pytest.raises(ValueError, match="1-d and 2-d"):
        ft.debug.visualize_sharding((2, 2, 2), x.sharding)


def test_log_goes_to_the_logger_with_the_callers_line(caplog):
    def f(x):
        ft.debug.log("x={x} tag={t}", x=x, t="static")
        ft.debug.log(ordered=True)("twice {}", x * 2)
        return x
    with caplog.at_level("INFO", logger="functrans.debug"):
        ft.jit(f)(fnp.arange(2.0))
        ft.jit(f)(fnp.arange(2.0))          # at each run, not at trace time only
    msgs = [r.getMessage() for r in caplog.records if r.name == "functrans.debug"]
    assert msgs == ["x=[0. 1.] tag=static", "twice [0. 2.]"] * 2
    assert all(r.filename == "test_profiler_trace.py" and r.levelname == "INFO"
               for r in caplog.records if r.name == "functrans.debug")
    with pytest.raises(KeyError):
        ft.debug.log("{missing}", x=1.0)


def _drawn(fn, *args) -> list:
    buf = io.StringIO()
    old, sys.stdout = sys.stdout, buf
    try:
        fn(*args)
    finally:
        sys.stdout = old
    return [line.strip("|").split("|") for line in buf.getvalue().splitlines()
            if line.startswith("|")]


def test_visualize_sharding_places_the_devices_of_a_2x2_mesh(monkeypatch):
    monkeypatch.setattr(ft.distributed, "process_count", lambda: 4)   # a drawing only
    mesh = Mesh((2, 2), ("vz_rows", "vz_cols"))
    cells = lambda spec, shape: [[c.strip() for c in row] for row in _drawn(   # noqa: E731
        ft.debug.visualize_sharding, shape, NamedSharding(mesh, spec))]
    assert cells(P("vz_rows", "vz_cols"), (4, 4)) == [["CPU 0", "CPU 1"], ["CPU 2", "CPU 3"]]
    assert cells(P("vz_cols", "vz_rows"), (4, 4)) == [["CPU 0", "CPU 2"], ["CPU 1", "CPU 3"]]
    assert cells(P("vz_rows"), (4, 4)) == [["CPU 0,1"], ["CPU 2,3"]]
    assert cells(P(None, "vz_cols"), (4, 4)) == [["CPU 0,2", "CPU 1,3"]]
    assert cells(P(("vz_rows", "vz_cols")), (8,)) == [["CPU 0", "CPU 1", "CPU 2", "CPU 3"]]
    assert cells(P(), (8,)) == [["CPU 0,1,2,3"]]


def test_collectives_are_instants_with_their_bytes(tmp_path):
    with ft.profiler.trace(tmp_path):
        ft.distributed.count_collective("psum", 64.0, 64.0)
    ft.distributed.reset_comm_stats()
    assert load_trace(tmp_path, metadata=True)["communication"] == {
        "psum": {"calls": 1, "bytes_sent": 64, "bytes_received": 64}}
    (e,) = [e for e in load_trace(tmp_path) if e.get("cat") == "collective"]
    assert e["name"] == "psum" and e["ph"] == "i"
    assert e["args"] == {"bytes sent": 64.0, "bytes received": 64.0}


def test_breakpoint_shows_a_mixed_local_with_its_values(monkeypatch, capsys):
    def f(x):
        mixed = {"value": x * 3.0, "label": "run"}
        ft.debug.breakpoint()
        return x
    _, text = _run_with_stdin(monkeypatch, capsys, "p mixed\nc\n", ft.jit(f), fnp.ones(2))
    assert "{'label': 'run', 'value': array([3., 3.])}" in text
