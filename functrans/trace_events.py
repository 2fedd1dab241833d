"""The event recorder behind ``ft.profiler.trace``: while a trace is on, the compile path,
jit's compiled calls, eager primitive calls, collectives and user annotations add timed
events here; ``functrans.profiler_trace`` starts and stops it and writes the file.

The hot paths read ``ACTIVE`` (a list: empty while no trace is on, else ``[recorder]``),
so an idle profiler costs one truth test. Times are ``time.perf_counter_ns()`` (a
monotonic clock); each event carries its thread's id, so each thread gets its own track.

>>> r = start()
>>> with span("step", "annotation"):
...     pass
>>> [e[0] for e in stop().events]
['step']
"""
from __future__ import annotations

import contextlib
import threading
import time
from typing import Any, Callable, Iterator

__all__ = ["ACTIVE", "Recorder", "start", "stop", "now", "span", "add", "instant",
           "timed_call", "timed"]

now = time.perf_counter_ns
_get_ident = threading.get_ident

ACTIVE: list = []            # [Recorder] while a trace is on


class Recorder:
    """The events of one trace: ``(name, category, start_ns, end_ns, thread id, args)``;
    an instant event has ``end_ns`` None."""

    def __init__(self):
        self.events: list = []
        self.threads: dict = {}     # thread id -> name
        self.start_ns = now()
        self.end_ns = None

    def add(self, name: str, cat: str, t0: int, t1: int | None, args: dict | None = None,
            tid: int | None = None) -> None:
        if tid is None:
            tid = _get_ident()
            if tid not in self.threads:
                self.threads[tid] = threading.current_thread().name
        self.events.append((name, cat, t0, t1, tid, args))   # atomic under the GIL


def start() -> Recorder:
    """Start recording (a ``RuntimeError`` if a trace is already on)."""
    if ACTIVE:
        raise RuntimeError("Profile has already been started. Only one profile may be run "
                           "at a time.")
    r = Recorder()
    ACTIVE.append(r)
    return r


def stop() -> Recorder:
    """Stop recording; returns the recorder with its events."""
    if not ACTIVE:
        raise RuntimeError("No profile started")
    r = ACTIVE.pop()
    r.end_ns = now()
    return r


def add(name: str, cat: str, t0: int, t1: int | None = None, args: dict | None = None) -> None:
    """Record a complete event (``t1`` None: an instant) when a trace is on.

    >>> add("nothing recorded", "x", now())
    """
    if ACTIVE:
        ACTIVE[0].add(name, cat, t0, t1, args)


def instant(name: str, cat: str, args: dict | None = None) -> None:
    """Record an instant event now (when a trace is on).

    >>> instant("nothing recorded", "x")
    """
    if ACTIVE:
        ACTIVE[0].add(name, cat, now(), None, args)


@contextlib.contextmanager
def span(name: str, cat: str, args: dict | None = None) -> Iterator[None]:
    """A context that records its duration as one event (when a trace is on).

    >>> with span("nothing recorded", "x"):
    ...     pass
    """
    if not ACTIVE:
        yield
        return
    t0 = now()
    try:
        yield
    finally:
        add(name, cat, t0, now(), args)


def timed_call(name: str, t0: int, exe: Callable, args) -> Any:
    """``exe(*args)`` as a compiled call's events: ``name`` from ``t0`` (when its dispatch
    began) to the end, holding ``execute`` (the run itself).

    >>> timed_call("jit(f)", now(), lambda x: [x + 1], [1])
    [2]
    """
    t_run = now()
    outs = exe(*args)
    t_end = now()
    add("execute", "execute", t_run, t_end)
    add(name, "compiled call", t0, t_end)
    return outs


def timed(fn: Callable, *args: Any) -> Any:
    """``fn(*args)`` recorded as one eager event named after ``fn`` (eager
    ``functrans.numpy`` calls numpy's function itself: this is its event).

    >>> import numpy as np
    >>> float(timed(np.sin, 0.0))
    0.0
    """
    t0 = now()
    out = fn(*args)
    add(getattr(fn, "__name__", "numpy"), "eager", t0, now())
    return out
