"""One progress line for slow compiles: a callable to pass as ``compile(...,
progress=...)``. Nothing is printed until the compile has run ``after`` seconds; then a
terminal gets one line rewritten in place (``\\r``) and closed at the end, any other
stream one line per stage. A stage still running when ``after`` seconds have passed (one
long LLVM stage) is shown then, by a timer, not when the next stage starts. Whether to
print at all (stderr a terminal, or ``log_compiles`` on) is the caller's choice; this
only formats and throttles. Calls after ``"done"`` are ignored (a caller may say "done"
again when a compile fails).

>>> import io
>>> out = io.StringIO()
>>> line = ProgressLine("f", stream=out, after=0.0)
>>> line("llvm optimise", 3, 3, 120); line("done", 3, 3, 120)
>>> out.getvalue()
'compiling f: llvm optimise, 3/3 kernels, 120 equations\\n'
"""
from __future__ import annotations

import sys
import threading
import time

__all__ = ["ProgressLine", "SLOW_COMPILE_SECONDS"]

SLOW_COMPILE_SECONDS = 2.0


class ProgressLine:
    """``progress(stage, done, total, equations)`` printing ``compiling <name>: ...``."""

    def __init__(self, name: str, stream=None, after: float = SLOW_COMPILE_SECONDS):
        self.name = name
        self.stream = stream if stream is not None else sys.stderr
        self.after = after
        self.start = time.perf_counter()
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty and isatty())
        self.shown = False
        self.last_stage = None
        self.latest = None          # the last (stage, done, total, equations) reported
        self.finished = False
        self.timer = None
        self.lock = threading.Lock()

    def __call__(self, stage: str, done: int, total: int, equations: int) -> None:
        with self.lock:
            if self.finished:
                return
            if stage == "done":
                self.finished = True
                if self.timer is not None:
                    self.timer.cancel()
                if self.shown and self.tty:
                    self.stream.write("\n")
                    self.stream.flush()
                return
            self.latest = (stage, done, total, equations)
            waited = time.perf_counter() - self.start
            if waited >= self.after:
                self._show(*self.latest)
            elif self.timer is None:   # show the stage then if it is still running
                self.timer = threading.Timer(self.after - waited, self._overdue)
                self.timer.daemon = True
                self.timer.start()

    def _overdue(self) -> None:
        with self.lock:
            if not self.finished and self.latest is not None:
                self._show(*self.latest)

    def _show(self, stage, done, total, equations) -> None:
        if not self.tty and stage == self.last_stage:
            return                 # a log gets one line per stage, not one per kernel
        text = (f"compiling {self.name}: {stage}, {done}/{total} kernels, "
                f"{equations} equations")
        self.stream.write(("\r" + text + "\x1b[K") if self.tty else text + "\n")
        self.stream.flush()
        self.shown = True
        self.last_stage = stage
