"""Seeded random joins of integer and float32 arrays with Python scalars and arrays
(tests/fuzz/joining_cases.py: diff with n/axis/prepend/append, append, concatenate, pad,
insert) against JAX 0.10.2's stored values (tests/data/jax_fuzz_joining_reference.json,
made by make_jax_fuzz_cases_reference.py joining): dtype, shape and exact values eagerly, under
jit on the CPU and interpreter backends, and under vmap. Round 12's fuzzing found eager
joins of a uint8 array with a Python int raising TypeError and diff(n=0) joining
prepend/append."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import functrans.numpy as fnp
from tests.fuzz.check import check_stored_modes, stored_array
from tests.fuzz.joining_cases import call, case

DATA = Path(__file__).resolve().parents[1] / "data" / "jax_fuzz_joining_reference.json"
RECORDS = json.loads(DATA.read_text())


def check(got, rec, key, what):
    got = stored_array(got, rec, what)
    assert got.ravel().tolist() == rec[key], what


@pytest.mark.parametrize("rec", RECORDS, ids=[f"seed{r['seed']}" for r in RECORDS])
def test_join_agrees_with_jax(rec):
    c = case(rec["seed"])
    x = c["x"]
    f = lambda a: call(fnp, c, a)                                           # noqa: E731
    check_stored_modes(f, x, rec, check)
