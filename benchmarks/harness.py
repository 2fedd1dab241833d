"""The benchmark harness: interleaved repetitions, medians, ratios from one run.

A workload module (``benchmarks/<name>.py``) defines ``WORKLOADS``, a list of
``Workload``. Each workload's ``setup()`` returns a dict ``label -> callable``
(callables take no arguments) for the candidates to compare; one label is the
``baseline`` and every ratio is ``candidate time / baseline time`` measured in the
same run, with the candidates' repetitions interleaved so machine noise hits all
alike. Candidates needing optional packages (jax, autograd) are simply left out
of ``setup()``'s dict when the import fails.

>>> w = Workload("noop", lambda: {"a": lambda: None, "b": lambda: None}, baseline="a")
>>> r = run_workload(w, repeats=3, min_time=1e-4)
>>> sorted(r["medians"])
['a', 'b']
"""
from __future__ import annotations

import dataclasses
import gc
import os
import platform
import statistics
import time
from typing import Callable, Optional


@dataclasses.dataclass
class Workload:
    """name; setup() -> {label: fn}; baseline label; target text and check(ratios) -> bool."""
    name: str
    setup: Callable[[], dict]
    baseline: str
    target: str = ""
    check: Optional[Callable[[dict], bool]] = None
    check_medians: Optional[Callable[[dict], bool]] = None   # for absolute targets (µs above)
    unit: str = "time"
    group: str = ""


def _calls_per_batch(fn, min_time):
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_time or n >= 1 << 20:
            return n
        n *= 2 if dt == 0 else max(2, min(10, int(min_time / max(dt, 1e-9)) + 1))


def run_workload(w: Workload, repeats: int = 15, min_time: float = 0.02):
    """Time each candidate; returns {'medians': {label: seconds per call}, 'ratios': {...}}."""
    cands = w.setup()
    for fn in cands.values():  # warm up: compile caches, first-call costs
        fn()
    sizes = {k: _calls_per_batch(fn, min_time) for k, fn in cands.items()}
    samples = {k: [] for k in cands}
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            for k, fn in cands.items():
                n = sizes[k]
                t0 = time.perf_counter()
                for _ in range(n):
                    fn()
                samples[k].append((time.perf_counter() - t0) / n)
    finally:
        if gc_was:
            gc.enable()
    med = {k: statistics.median(v) for k, v in samples.items()}
    base = med.get(w.baseline)
    ratios = {k: (v / base if base else float("nan")) for k, v in med.items()}
    ok = w.check(ratios) if (w.check and base) else None
    if w.check_medians is not None:
        ok = w.check_medians(med) and (ok is not False)
    return {"medians": med, "ratios": ratios, "ok": ok}


def machine_info() -> dict:
    info = {"python": platform.python_version(), "machine": platform.machine(),
            "cores": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    import numpy as np
    info["numpy"] = np.__version__
    from importlib import metadata
    for mod in ("jax", "autograd", "numba", "llvmlite"):
        try:
            info[mod] = metadata.version(mod)
        except metadata.PackageNotFoundError:
            info[mod] = "not installed"
    try:
        from threadpoolctl import threadpool_info
        info["blas threads"] = ", ".join(f"{p['internal_api']}={p['num_threads']}"
                                         for p in threadpool_info())
    except Exception:
        info["blas threads"] = "unknown (threadpoolctl not installed)"
    return info


def fmt_time(s: float) -> str:
    if s < 1e-6:
        return f"{s * 1e9:.0f} ns"
    if s < 1e-3:
        return f"{s * 1e6:.2f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"
