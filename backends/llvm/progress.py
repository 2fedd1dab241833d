"""One progress line for slow compiles: a callable to pass as ``compile(...,
progress=...)``. Nothing is printed until the compile has run ``after`` seconds; then a
terminal gets one line rewritten in place (``\\r``) and closed at the end, any other
stream one line per stage. Whether to print at all (stderr a terminal, or
``log_compiles`` on) is the caller's choice; this only formats and throttles.

>>> import io
>>> out = io.StringIO()
>>> line = ProgressLine("f", stream=out, after=0.0)
>>> line("llvm optimise", 3, 3, 120); line("done", 3, 3, 120)
>>> out.getvalue()
'compiling f: llvm optimise, 3/3 kernels, 120 equations\\n'
"""
from __future__ import annotations

import sys
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

    def __call__(self, stage: str, done: int, total: int, equations: int) -> None:
        if stage == "done":
            if self.shown and self.tty:
                self.stream.write("\n")
                self.stream.flush()
            return
        if time.perf_counter() - self.start < self.after:
            return
        if not self.tty and stage == self.last_stage:
            return                 # a log gets one line per stage, not one per kernel
        text = (f"compiling {self.name}: {stage}, {done}/{total} kernels, "
                f"{equations} equations")
        self.stream.write(("\r" + text + "\x1b[K") if self.tty else text + "\n")
        self.stream.flush()
        self.shown = True
        self.last_stage = stage
