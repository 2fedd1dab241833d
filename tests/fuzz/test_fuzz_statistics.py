"""Seeded random quantile/percentile/median calls (tests/fuzz/statistics_cases.py) on data
with infinities, NaNs, signed zeros, ties and near-overflow values, against JAX 0.10.2's
stored values (tests/data/jax_fuzz_statistics_reference.json, made by
make_jax_fuzz_cases_reference.py statistics): eagerly, under jit on the CPU and interpreter
backends, and under vmap. Round 12's fuzzing found the linear rule NaN next to -inf and
overflowing between +-1e308."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import functrans.numpy as fnp
from tests.fuzz.check import check_stored_modes, stored_array
from tests.fuzz.statistics_cases import call, case

DATA = Path(__file__).resolve().parents[1] / "data" / "jax_fuzz_statistics_reference.json"
RECORDS = json.loads(DATA.read_text())
RTOL = {"float64": 1e-12, "float32": 1e-6}


def check(got, rec, key, what):
    got = stored_array(got, rec, what)
    want = np.asarray(rec[key], np.float64)
    np.testing.assert_allclose(got.astype(np.float64).ravel(), want, rtol=RTOL[rec["dtype"]],
                               atol=0, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("rec", RECORDS, ids=[f"seed{r['seed']}" for r in RECORDS])
def test_statistics_case_agrees_with_jax(rec):
    c = case(rec["seed"])
    x = c["x"]
    f = lambda a: call(fnp, c, a)                                           # noqa: E731
    check_stored_modes(f, x, rec, check)
