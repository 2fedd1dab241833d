"""Seeded random float16/bfloat16 programs (tests/fuzz/narrow_cases.py: binary arithmetic
near +-65504 with inf/NaN/-0, float32-accumulated reductions, products, saturating casts
to integers) against JAX 0.10.2's stored values (tests/data/jax_fuzz_narrow_reference.json,
made by make_jax_fuzz_cases_reference.py narrow): dtype, shape and values within one
16-bit ulp (JAX rounds some composite steps in float16, functrans computes them in
float32 and rounds once, as numpy: -60000 // 7 is -8568 in JAX, -8576 here), eagerly,
under jit on the CPU and interpreter backends, and under vmap. Round 13's fuzzing found
float16 floor_divide under jit overflowing in x - x mod y (-65504 // 597 gave -inf)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import functrans.numpy as fnp
from tests.fuzz.check import check_stored_modes, stored_array
from tests.fuzz.narrow_cases import DTYPES, call, case

DATA = Path(__file__).resolve().parents[1] / "data" / "jax_fuzz_narrow_reference.json"
RECORDS = json.loads(DATA.read_text())


def check(got, rec, key, what):
    got = stored_array(got, rec, what)
    g, w = got.astype(np.float64).ravel(), np.array(rec[key], np.float64)
    if rec["dtype"] in DTYPES:      # one ulp of the 16-bit result
        with np.errstate(over="ignore"):
            ulp = np.abs(np.spacing(w.astype(DTYPES[rec["dtype"]]))).astype(np.float64)
    else:
        ulp = np.zeros_like(w)
    with np.errstate(invalid="ignore"):
        ok = (g == w) | (np.isnan(g) & np.isnan(w)) | (np.abs(g - w) <= ulp)
    assert ok.all(), (what, g[~ok].tolist(), w[~ok].tolist())


@pytest.mark.parametrize("rec", RECORDS, ids=[f"seed{r['seed']}" for r in RECORDS])
def test_narrow_float_program_agrees_with_jax(rec):
    c = case(rec["seed"])
    check_stored_modes(lambda a: call(fnp, c, a), c["x"], rec, check)
