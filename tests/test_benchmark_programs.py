"""benchmarks/programs.py's programs on functrans alone (JAX is not in the test venv; the
benchmark itself asserts agreement with JAX): float32 results, and the jitted program
equal to the same function run eagerly (``disable_jit``)."""
import numpy as np

import functrans as ft
from benchmarks import programs as P


def _both(name):
    build, inputs, _ = P.PROGRAMS[name]
    L = P._lib("functrans")
    f, args = build(L), inputs(L)
    out = f(*args)
    with ft.disable_jit():
        ref = f(*args)
    return P._leaves(out), P._leaves(ref)


def test_draws_and_logprob_programs_are_float32_and_match_eager():
    for name in ("draws", "logprob"):
        out, ref = _both(name)
        for a, b in zip(out, ref):
            assert a.dtype == np.float32, (name, a.dtype)
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_check_agree_rejects_a_dtype_or_value_mismatch():
    x = np.ones(3, np.float32)
    P.check_agree("ok", (x,), (x * (1 + 1e-7),), 1e-5)
    for bad in ((x.astype(np.float64),), (x * 1.1,)):
        try:
            P.check_agree("bad", bad, (x,), 1e-5)
        except AssertionError:
            continue
        raise AssertionError(f"check_agree accepted {bad}")
