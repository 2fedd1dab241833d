"""Seeded random float16/bfloat16 programs near the edges of their range: binary
arithmetic (floor_divide, remainder, divmod, fmod, power, arctan2, hypot, logaddexp ...),
float32-accumulated reductions and scans, products, and saturating conversions to
integers, on data mixing normal values with +-65504, 3e4, subnormals, -0, inf and NaN.
Each case is a dict, so it runs under functrans (test_fuzz_narrow.py) and, for
reference values, JAX (tests/data/make_jax_fuzz_cases_reference.py narrow).

>>> case(0)["op"] in OPS
True
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

BINARY = ["floor_divide", "remainder", "divmod", "fmod", "true_divide", "add", "subtract",
          "multiply", "power", "arctan2", "hypot", "logaddexp", "maximum", "fmin", "copysign"]
OPS = BINARY + ["sum", "mean", "var", "cumsum", "matmul", "to_int8", "to_uint8", "to_int32"]
DTYPES = {"float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16)}
SPECIAL = [65504.0, -65504.0, 30000.0, -597.0, 0.5, -0.0, 6e-8, 300.7, -129.5, 255.5,
           np.inf, -np.inf, np.nan]


def case(seed: int) -> dict:
    """The case drawn from ``seed``: op, dtype and data."""
    rng = np.random.default_rng(seed)
    op = OPS[int(rng.integers(len(OPS)))]
    dtype = list(DTYPES)[int(rng.integers(len(DTYPES)))]
    shape = (int(rng.integers(2, 5)), int(rng.integers(1, 5)))
    x = rng.standard_normal(shape) * float(rng.choice([1.0, 30.0, 3000.0]))
    special = rng.random(shape) < (0.15 if op in OPS[len(BINARY):len(BINARY) + 5] else 0.35)
    x = np.where(special, rng.choice(SPECIAL, size=shape), x).astype(DTYPES[dtype])
    return {"seed": seed, "op": op, "dtype": dtype, "x": x}


def call(m, c: dict, x):
    """``c``'s call on ``x`` with the numpy-like module ``m`` (functrans.numpy or jnp):
    binary ops take ``x`` and ``x`` reversed along its rows."""
    op, y = c["op"], m.flip(x, 0)
    if op == "divmod":
        return m.stack(m.divmod(x, y))
    if op in BINARY:
        return getattr(m, op)(x, y)
    if op in ("sum", "mean", "var", "cumsum"):
        return getattr(m, op)(x, axis=0)
    if op == "matmul":
        return x.T @ y
    return m.astype(x, op[3:])
