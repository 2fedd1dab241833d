"""A fuzzing campaign: programs are checked in a worker process with a per-program
timeout (a hang is a failure, and the worker is replaced), failing programs are cut
down to a minimal repro, and failures are grouped by a signature so that each distinct
one is reported once."""
from __future__ import annotations

import multiprocessing as mp
import time
import warnings
from dataclasses import dataclass, field

from tests.fuzz.check import Failure, check_program, numpy_values
from tests.fuzz.generator import Program, generate, sliced
from tests.fuzz.ops import OP_BY_NAME

CALLS = {
    "eager": "f({args})",
    "jit_cpu": "ft.jit(f, backend='cpu')({args})",
    "jit_interpret": "ft.jit(f, backend='interpret')({args})",
    "vmap": "ft.vmap(f)(*(np.stack([a, a]) for a in ({args},)))",
    "jit_cpu∘vmap": "ft.jit(ft.vmap(f))(*(np.stack([a, a]) for a in ({args},)))",
}


def reproduces(program: Program, failure: Failure, exclude) -> list:
    """The failures of ``program`` of the same kind and mode as ``failure`` (same
    exception type for a crash)."""
    try:
        found = check_program(program, exclude).failures
    except Exception:
        return []
    head = failure.detail.split(":")[0]
    return [f for f in found if f.kind == failure.kind and f.mode == failure.mode
            and (f.kind != "crash" or f.detail.split(":")[0] == head)]


def minimize(program: Program, failure: Failure, exclude) -> Program:
    """The shortest prefix of ``program`` (cut to what its result uses) that still
    fails the same way, then with each remaining step skipped where possible."""
    for step in program.steps:
        cand = sliced(program, step.out)
        if reproduces(cand, failure, exclude):
            program = cand
            break
    changed = True
    while changed and len(program.steps) > 1:
        changed = False
        for i in range(len(program.steps) - 1):
            cand = _without_step(program, i)
            if cand is not None and reproduces(cand, failure, exclude):
                program, changed = cand, True
                break
    return program


def _without_step(program: Program, i: int) -> Program | None:
    """``program`` with step ``i`` replaced by its first operand where later steps used
    it (only when numpy gives the same shape and dtype, so later steps still fit)."""
    vals = numpy_values(program)
    s = program.steps[i]
    src = s.operands[0]
    if vals[src].shape != vals[s.out].shape or vals[src].dtype != vals[s.out].dtype:
        return None
    steps = [type(t)(t.out, t.op, tuple(src if o == s.out else o for o in t.operands), t.params)
             for t in program.steps if t is not s]
    return sliced(Program(program.inputs, steps, program.seed), steps[-1].out)


def repro_text(program: Program, failures: list) -> str:
    """A standalone script for a failing program, with what each mode reported."""
    args = ", ".join(program.inputs)
    lines = ["import numpy as np", "import functrans as ft", "import functrans.numpy as fnp",
             "from functrans import lax", "", program.inputs_source(), "", program.source("ft")]
    for f in failures:
        lines.append(f"# {f.kind} in {f.mode}: {f.detail}")
        if f.mode in CALLS:
            lines.append("print(" + CALLS[f.mode].format(args=args) + ")")
    lines += ["# numpy reference (tests.fuzz.reference provides the helpers):"]
    lines += ["# " + line for line in program.source("np").splitlines()]
    return "\n".join(lines)


def signature(program: Program, failure: Failure) -> tuple:
    """What makes two failures the same bug, as far as the fuzzer can tell."""
    if failure.kind == "warning":
        return failure.kind, failure.mode
    if failure.detail.startswith("dtype"):
        return failure.kind, failure.mode, failure.detail
    last = program.steps[-1].op if program.steps else "-"
    if failure.kind == "crash":   # one exception from one feature: one bug
        feature = OP_BY_NAME[last].feature if program.steps else last
        return failure.kind, failure.mode, failure.detail.split(":")[0], feature
    dtypes = tuple(sorted({v.dtype.name for v in program.inputs.values()}))
    return failure.kind, failure.mode, last, dtypes


def run_one(seed: int, exclude) -> dict:
    """Check one generated program; minimise its first failure. Picklable result."""
    program = generate(seed, exclude)
    outcome = check_program(program, exclude)
    result = {"seed": seed, "comparisons": outcome.comparisons,
              "failures": [(f.kind, f.mode, f.detail) for f in outcome.failures]}
    if outcome.failures:
        first = outcome.failures[0]
        small = minimize(program, first, exclude)
        small_failures = (reproduces(small, first, exclude)
                          and check_program(small, exclude).failures)
        if not small_failures:
            small, small_failures = program, outcome.failures
        result["signature"] = signature(small, first)
        result["repro"] = repro_text(small, small_failures)
    return result


def _worker(conn) -> None:
    warnings.simplefilter("ignore")   # the checks record the warnings they look for
    while True:
        job = conn.recv()
        if job is None:
            return
        try:
            conn.send(run_one(*job))
        except Exception as e:   # the harness itself failed on this program
            conn.send({"seed": job[0], "comparisons": 0,
                       "failures": [("crash", "harness", f"{type(e).__name__}: {e}")],
                       "signature": ("crash", "harness", type(e).__name__), "repro": repr(e)})


@dataclass
class Summary:
    programs: int = 0
    comparisons: int = 0
    mismatches: int = 0
    crashes: int = 0
    warnings: int = 0
    hangs: int = 0
    distinct: dict = field(default_factory=dict)   # signature -> (count, repro)

    def add(self, result: dict) -> None:
        self.programs += 1
        self.comparisons += result["comparisons"]
        kinds = [k for k, _, _ in result["failures"]]
        self.mismatches += kinds.count("mismatch")
        self.crashes += kinds.count("crash")
        self.warnings += kinds.count("warning")
        self.hangs += kinds.count("hang")
        if "signature" in result:
            count, repro = self.distinct.get(result["signature"], (0, result["repro"]))
            self.distinct[result["signature"]] = (count + 1, repro)


class Campaign:
    """Runs seeds in a worker process; a seed over ``timeout`` seconds is a hang."""

    def __init__(self, exclude=frozenset(), timeout: float = 60.0):
        self.exclude, self.timeout = frozenset(exclude), timeout
        self.ctx = mp.get_context("spawn")
        self.proc = self.conn = None

    def _start(self) -> None:
        self.conn, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker, args=(child,), daemon=True)
        self.proc.start()

    def run(self, seeds, summary: Summary, progress=None) -> Summary:
        for seed in seeds:
            if self.proc is None or not self.proc.is_alive():
                self._start()
            self.conn.send((seed, self.exclude))
            if self.conn.poll(self.timeout):
                try:
                    result = self.conn.recv()
                except EOFError:   # the worker died (a segfault): a crash
                    result = self._dead(seed, "crash", "worker process died")
            else:
                result = self._dead(seed, "hang", f"no result in {self.timeout:.0f} s")
            summary.add(result)
            if progress:
                progress(summary, result)
        self.close()
        return summary

    def _dead(self, seed: int, kind: str, detail: str) -> dict:
        self.proc.kill()
        self.proc.join()
        self.proc = None
        program = generate(seed, self.exclude)
        return {"seed": seed, "comparisons": 0, "failures": [(kind, "worker", detail)],
                "signature": (kind, "worker", seed),
                "repro": repro_text(program, [Failure(kind, "worker", detail)])}

    def close(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            self.conn.send(None)
            self.proc.join(5)
        self.proc = None


def run_campaign(n: int, seed: int = 0, exclude=frozenset(), timeout: float = 60.0,
                 progress=None) -> Summary:
    """Check ``n`` programs drawn from seeds ``seed, seed+1, …``."""
    start = time.time()
    summary = Campaign(exclude, timeout).run(range(seed, seed + n), Summary(), progress)
    summary.seconds = time.time() - start
    return summary
