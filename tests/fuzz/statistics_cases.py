"""Seeded random quantile / percentile / median calls (and their nan* forms) over data
holding infinities, NaNs, signed zeros, ties and near-overflow values, with random
methods, q shapes, axis tuples and keepdims. Each case is a plain dict, so the same
case runs under functrans (test_fuzz_statistics.py) and, to make reference values,
under JAX (tests/data/make_jax_fuzz_cases_reference.py statistics).

>>> case(3)["op"] in OPS
True
"""
from __future__ import annotations

import numpy as np

OPS = ["quantile", "percentile", "nanquantile", "nanpercentile", "median", "nanmedian"]
# "nearest" is left out: at a half position numpy (and functrans) round to the even
# index, JAX to the lower one
METHODS = ["linear", "lower", "higher", "midpoint"]


def _data(rng, shape, dtype, nan_ok):
    big = 1e308 if dtype == "float64" else 3e38
    pool = [np.inf, -np.inf, big, -big, 0.0, -0.0, 1.0, 1.0, -2.5]
    if nan_ok:
        pool.append(np.nan)
    x = np.round(rng.standard_normal(shape) * 4, 1)
    special = rng.random(shape) < 0.4
    return np.where(special, rng.choice(pool, size=shape), x).astype(dtype)


def case(seed: int) -> dict:
    """The case drawn from ``seed``: op, method, q, axis, keepdims, dtype and data."""
    rng = np.random.default_rng(seed)
    op = OPS[int(rng.integers(len(OPS)))]
    dtype = ["float64", "float32"][int(rng.integers(2))]
    nd = int(rng.integers(1, 4))
    shape = tuple(int(rng.integers(1, 5)) for _ in range(nd))
    axis = [None, 0, -1, tuple(range(nd))[-2:], (0, nd - 1) if nd > 1 else 0][int(rng.integers(5))]
    q = [0.0, 0.25, 0.5, 0.7, 1.0, [0.1, 0.5, 0.9], [0.3, 1.0]][int(rng.integers(7))]
    if "percentile" in op:
        q = (np.asarray(q) * 100).tolist()
    return {"seed": seed, "op": op, "method": METHODS[int(rng.integers(len(METHODS)))],
            "q": q, "axis": axis, "keepdims": bool(rng.random() < 0.4), "dtype": dtype,
            "x": _data(rng, shape, dtype, nan_ok=op.startswith("nan") or rng.random() < 0.3)}


def call(m, c: dict, x):
    """``c``'s call on ``x`` with the numpy-like module ``m`` (functrans.numpy or jnp)."""
    if c["op"] in ("median", "nanmedian"):
        return getattr(m, c["op"])(x, axis=c["axis"], keepdims=c["keepdims"])
    return getattr(m, c["op"])(x, np.asarray(c["q"], x.dtype), axis=c["axis"],
                               method=c["method"], keepdims=c["keepdims"])
