"""JAX's profiler API on functrans's own events: ``trace`` / ``start_trace`` /
``stop_trace`` write a Chrome trace (Perfetto opens it), ``TraceAnnotation``,
``StepTraceAnnotation`` and ``annotate_function`` name ranges of it, and
``device_memory_profile`` is a pprof profile of the live Arrays.

While a trace is on (``functrans.trace_events``) it records, each on its thread's track:
every compile (``compile jit(f)``, with ``trace``, each simplify pass and the backend's
stages inside it), every compiled call of a jitted function (``jit(f)``: dispatch and
run, with ``execute`` inside it), every eager primitive call (by primitive name), each
collective over several processes (an instant with the bytes sent and received) and the
annotations. ``stop_trace`` writes ``log_dir/plugins/profile/<run>/<host>.trace.json.gz``
(JAX's layout; ``create_perfetto_trace`` adds ``perfetto_trace.json.gz`` beside it); its
``metadata`` holds the wall time and ``communication``: the ``comm_stats`` rows of the
traced time (compiled code's own MPI calls too, which have no events of their own).

>>> import functrans as ft, functrans.numpy as fnp, tempfile
>>> with tempfile.TemporaryDirectory() as d:
...     with ft.profiler.trace(d):
...         with ft.profiler.TraceAnnotation("work"):
...             _ = ft.jit(lambda x: x * 2.0)(fnp.ones(3))
...     events = load_trace(d)
>>> sorted({e["name"] for e in events if e.get("cat") in ("annotation", "compiled call")})
['jit(<lambda>)', 'work']
"""
from __future__ import annotations

import contextlib
import datetime
import functools
import gzip
import json
import os
import socket
from typing import Any, Callable

from . import trace_events as ev
from .compiler import CompileHook, add_hook
from .distributed import comm_stats

__all__ = ["trace", "start_trace", "stop_trace", "TraceAnnotation", "StepTraceAnnotation",
           "annotate_function", "load_trace", "ProfileOptions", "start_server", "stop_server"]


class ProfileOptions:
    """JAX's trace options, accepted with its defaults: functrans records its own events
    whatever the levels say; ``session_id`` (when set) names the run's folder.

    >>> ProfileOptions().host_tracer_level
    2
    """

    def __init__(self):
        self.host_tracer_level, self.python_tracer_level = 2, 1
        self.duration_ms, self.start_timestamp_ns = 0, 0
        self.enable_hlo_proto = self.include_dataset_ops = True
        self.raise_error_on_start_failure = False
        self.repository_path = self.session_id = ""
        self.advanced_configuration: dict = {}


def start_server(port: int, requires_backend: bool = True):
    """JAX's profiler server (for TensorBoard's remote capture): functrans has none.

    >>> start_server(9999)
    Traceback (most recent call last):
    ...
    NotImplementedError: start_server: functrans has no profiler server to capture from; record a trace in the process with ft.profiler.trace(log_dir) (or start_trace/stop_trace)
    """
    raise NotImplementedError("start_server: functrans has no profiler server to capture "
                              "from; record a trace in the process with "
                              "ft.profiler.trace(log_dir) (or start_trace/stop_trace)")


def stop_server() -> None:
    """JAX's: stop the profiler server; functrans starts none, so there is none to stop.

    >>> stop_server()
    Traceback (most recent call last):
    ...
    ValueError: No active profiler server.
    """
    raise ValueError("No active profiler server.")


class _TraceHook(CompileHook):
    """Compiles as events: ``compile <name>`` holding ``trace``, each simplify pass (timed
    by the compile path itself) and ``backend`` with the backend's own stages."""
    sees_calls = False      # jit's native shortcuts stay: the trace times them as they are

    def active(self) -> bool:
        return bool(ev.ACTIVE)

    def start(self, c) -> None:
        c.notes["trace_t0"] = c.notes["trace_cursor"] = ev.now()

    def stage(self, c, pass_name, jaxpr) -> None:
        t1 = ev.now()
        dur = int(c.timings.get(f"simplify: {pass_name}", 0.0) * 1e9)
        t0 = max(c.notes.get("trace_cursor", t1), t1 - dur)
        ev.add(f"simplify: {pass_name}", "compile stage", t0, t1)
        c.notes["trace_cursor"] = t1

    def compiled(self, c, exe):
        t1 = ev.now()
        start = c.notes.get("trace_t0", t1)
        traced = int(c.timings.get("trace", 0.0) * 1e9)
        if traced:
            ev.add("trace", "compile stage", start - traced, start)
        b0 = max(c.notes.get("trace_cursor", start), t1 - int(c.seconds * 1e9))
        ev.add("backend", "compile stage", b0, t1)
        cursor = b0
        for k, v in c.timings.items():      # the backend's stages, in order, inside it
            if k.startswith("backend: ") and k != "backend: total":
                end = min(t1, cursor + int(v * 1e9))
                ev.add(k, "compile stage", cursor, end)
                cursor = end
        ev.add(f"compile {c.name}", "compile", start - traced, t1,
               {"backend": str(c.backend)})
        return exe


add_hook(_TraceHook())

_RUN: dict = {}     # the trace being recorded: log_dir and options


def start_trace(log_dir: os.PathLike | str, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False, profiler_options: Any = None) -> None:
    """Start recording functrans's events (see the module doc); ``stop_trace`` writes them
    under ``log_dir``. Only one trace at a time (``RuntimeError``).

    >>> import tempfile
    >>> d = tempfile.mkdtemp(); start_trace(d); stop_trace()
    """
    ev.start()
    _RUN.update(log_dir=os.fspath(log_dir), link=create_perfetto_link,
                perfetto=create_perfetto_trace, comm=comm_stats(),
                session=getattr(profiler_options, "session_id", ""))


def _chrome_events(rec) -> list:
    """The recorder's events in Chrome's trace format (microseconds since its start)."""
    pid = os.getpid()
    base = rec.start_ns
    out = [{"ph": "M", "name": "process_name", "pid": pid, "args": {"name": f"functrans {pid}"}}]
    tids = {}
    for tid, name in rec.threads.items():
        tids[tid] = len(tids) + 1
        out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tids[tid],
                    "args": {"name": name}})
    for name, cat, t0, t1, tid, args in rec.events:
        e = {"name": name, "cat": cat, "pid": pid, "tid": tids.setdefault(tid, len(tids) + 1),
             "ts": (t0 - base) / 1e3}
        if t1 is None:
            e.update(ph="i", s="t")
        else:
            e.update(ph="X", dur=(t1 - t0) / 1e3)
        if args:
            e["args"] = args
        out.append(e)
    return out


def _comm_since(before: dict) -> dict:
    """``comm_stats()`` now minus ``before``: what the trace's time communicated, the
    collectives compiled code runs through MPI itself included."""
    out = {}
    for kind, row in comm_stats().items():
        old = before.get(kind, {})
        d = {k: v - old.get(k, 0) for k, v in row.items()}
        if d["calls"] > 0:
            out[kind] = d
    return out


def stop_trace() -> None:
    """Stop the trace and write ``<log_dir>/plugins/profile/<run>/<host>.trace.json.gz``
    (``RuntimeError`` when no trace is on).

    >>> import tempfile
    >>> d = tempfile.mkdtemp(); start_trace(d); stop_trace()
    """
    rec = ev.stop()
    run = _RUN.get("session") or datetime.datetime.now().strftime("%Y_%m_%d_%H_%M_%S_%f")
    folder = os.path.join(_RUN["log_dir"], "plugins", "profile", run)
    os.makedirs(folder, exist_ok=True)
    doc = {"displayTimeUnit": "ns", "traceEvents": _chrome_events(rec),
           "metadata": {"wall_ns": rec.end_ns - rec.start_ns,
                        "communication": _comm_since(_RUN.get("comm", {}))}}
    data = gzip.compress(json.dumps(doc).encode())
    path = os.path.join(folder, f"{socket.gethostname()}.trace.json.gz")
    with open(path, "wb") as f:
        f.write(data)
    if _RUN.get("perfetto") or _RUN.get("link"):
        with open(os.path.join(folder, "perfetto_trace.json.gz"), "wb") as f:
            f.write(data)
    if _RUN.get("link"):   # no local server here: say where the file is
        print(f"Open {os.path.join(folder, 'perfetto_trace.json.gz')} in https://ui.perfetto.dev")


@contextlib.contextmanager
def trace(log_dir: os.PathLike | str, create_perfetto_link: bool = False,
          create_perfetto_trace: bool = False, profiler_options: Any = None):
    """``start_trace`` on entry, ``stop_trace`` on exit (an exception too).

    >>> import tempfile
    >>> with trace(tempfile.mkdtemp()):
    ...     pass
    """
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


def load_trace(log_dir: os.PathLike | str, metadata: bool = False) -> list | dict:
    """The events of the newest trace written under ``log_dir`` (for tests and scripts);
    ``metadata``: its metadata instead.

    >>> import tempfile
    >>> d = tempfile.mkdtemp(); start_trace(d); stop_trace(); load_trace(d)[0]["name"]
    'process_name'
    """
    root = os.path.join(os.fspath(log_dir), "plugins", "profile")
    run = max(os.listdir(root))
    name = next(n for n in os.listdir(os.path.join(root, run)) if n.endswith(".trace.json.gz")
                and not n.startswith("perfetto"))
    with gzip.open(os.path.join(root, run, name)) as f:
        doc = json.load(f)
    return doc["metadata"] if metadata else doc["traceEvents"]


class TraceAnnotation:
    """A named range on this thread's track while a trace is on (a context manager); costs
    one check when none is.

    >>> with TraceAnnotation("load", batch=3):
    ...     pass
    """

    def __init__(self, name: str, **kwargs: Any):
        self.name, self.kwargs = name, kwargs
        self._t0 = 0

    def __enter__(self):
        if ev.ACTIVE:
            self._t0 = ev.now()
        return self

    def __exit__(self, *exc):
        if self._t0 and ev.ACTIVE:
            ev.add(self.name, "annotation", self._t0, ev.now(),
                   {k: str(v) for k, v in self.kwargs.items()} or None)
        self._t0 = 0


class StepTraceAnnotation(TraceAnnotation):
    """A training step's range (``StepTraceAnnotation("train", step_num=i)``).

    >>> with StepTraceAnnotation("train", step_num=0):
    ...     pass
    """

    def __init__(self, name: str, **kwargs: Any):
        super().__init__(name, **kwargs)


def annotate_function(func: Callable, name: str | None = None, **decorator_kwargs: Any):
    """``func`` with each call a ``TraceAnnotation`` (named ``name`` or its qualified name).

    >>> f = annotate_function(lambda x: x + 1, name="inc"); f(1)
    2
    """
    name = name or getattr(func, "__qualname__", None) or getattr(func, "__name__", "function")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)
    return wrapper
