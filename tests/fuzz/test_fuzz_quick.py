"""The CI slice of the differential fuzzer: a fixed sample of seeded programs, with the
features of ``KNOWN_ISSUES`` left out, must agree in every mode (≤ 60 s). The long
campaign is ``python -m tests.fuzz --n 10000``."""
from __future__ import annotations

import signal

import numpy as np

from tests.fuzz import KNOWN_ISSUES
from tests.fuzz.campaign import repro_text, run_campaign
from tests.fuzz.check import MODES, check_program, mismatch
from tests.fuzz.generator import DTYPES, Program, Step, generate
from tests.fuzz.ops import OPS

QUICK_SEEDS = range(45)
PER_PROGRAM_SECONDS = 30
FEATURES = ({op.feature for op in OPS} | set(DTYPES) | set(MODES)
            | {"empty", "scalar0d", "special", "broadcast", "warnings"})


class ProgramTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise ProgramTimeout(f"program ran over {PER_PROGRAM_SECONDS} s")


def test_known_issues_name_real_features():
    assert set(KNOWN_ISSUES) <= FEATURES, set(KNOWN_ISSUES) - FEATURES
    assert all(isinstance(v, str) and v for v in KNOWN_ISSUES.values())


def test_generator_honours_exclude_and_is_deterministic():
    exclude = {"at", "sort", "cond", "uint8", "empty"}
    for seed in range(30):
        p = generate(seed, exclude)
        assert not p.features() & exclude, (seed, p.features() & exclude)
        assert generate(seed, exclude).source() == p.source()


def test_comparison_catches_what_it_must():
    nan, inf = np.nan, np.inf
    assert mismatch(np.array([1.0, nan, inf]), np.array([1.0, nan, inf])) is None
    assert mismatch(np.array([nan]), np.array([0.0])) is not None
    assert mismatch(np.array([inf]), np.array([-inf])) is not None
    assert mismatch(np.array([1.0 + 1e-6]), np.array([1.0])) is not None        # f64 is tight
    assert mismatch(np.float32([1.00001]), np.float32([1.0])) is None           # f32 is not
    assert mismatch(np.array([3], np.int32), np.array([3], np.int64)) is not None
    assert mismatch(np.array([256 + 1]), np.array([1])) is not None             # exact ints
    assert mismatch(np.zeros((0, 2)), np.zeros((2, 0))) is not None


def test_campaign_reports_a_hang_and_goes_on():
    # a timeout far below a worker's start-up: every program is a hang, none a stall
    summary = run_campaign(2, seed=0, timeout=0.01)
    assert (summary.programs, summary.hangs, len(summary.distinct)) == (2, 2, 2)
    assert all("hang" in repro for _, repro in summary.distinct.values())


def test_quick_slice_agrees_in_every_mode():
    exclude = frozenset(KNOWN_ISSUES)
    previous = signal.signal(signal.SIGALRM, _alarm)
    failures, comparisons = [], 0
    try:
        for seed in QUICK_SEEDS:
            program = generate(seed, exclude)
            signal.alarm(PER_PROGRAM_SECONDS)
            try:
                outcome = check_program(program, exclude)
            except ProgramTimeout as e:
                failures.append(f"seed {seed}: hang: {e}\n{program.source()}")
                continue
            finally:
                signal.alarm(0)
            comparisons += outcome.comparisons
            if outcome.failures:
                failures.append(f"seed {seed}:\n{repro_text(program, outcome.failures)}")
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert not failures, "\n\n".join(failures)
    assert comparisons > 5 * len(QUICK_SEEDS), comparisons


def test_float32_derivatives_are_compared_within_their_own_rounding():
    """Campaign seed 9351: cos of a float32 intermediate of 2.5e15. The compiled expm1
    is 1 ulp (2.7e8) from numpy's there, both within 1 ulp of the true value, which
    turns -sin(v) from -0.99 into 0.30: jit∘grad and jit∘jvp are compared within the
    spread the program's own rounding shows (its derivative in float64), not failed."""
    x0 = np.array([[0.5070325, 5.955445766448975]], np.float32)
    steps = [Step("v1", "mul", ("x0", "x0")), Step("v2", "expm1", ("v1",)),
             Step("v3", "cos", ("v2",))]
    outcome = check_program(Program({"x0": x0}, steps, seed=9351))
    assert outcome.comparisons > 10 and not outcome.failures, outcome.failures
