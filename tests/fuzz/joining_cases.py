"""Seeded random joins of an array with Python scalars and arrays: diff with n, axis,
prepend and append; append with and without axis; concatenate; pad with constant values;
insert. Integer (uint8, int8, uint32, int64) and float32 arrays meet Python ints that a
narrow unsigned type wraps (-1 in uint8 is 255, as JAX's weak scalars). Each case is a
dict, so it runs under functrans (test_fuzz_joining.py) and, for reference values, JAX
(tests/data/make_jax_fuzz_cases_reference.py joining).

>>> case(0)["op"] in OPS
True
"""
from __future__ import annotations

import numpy as np

OPS = ["diff", "append", "append_axis", "concatenate", "pad", "insert"]
DTYPES = ["uint8", "int8", "uint32", "int64", "float32"]


def case(seed: int) -> dict:
    """The case drawn from ``seed``: op, dtype, data and the op's static arguments."""
    rng = np.random.default_rng(seed)
    op = OPS[int(rng.integers(len(OPS)))]
    dtype = DTYPES[int(rng.integers(len(DTYPES)))]
    shape = tuple(int(rng.integers(1, 4)) for _ in range(int(rng.integers(1, 3))))
    x = rng.integers(0, 100, shape).astype(dtype)
    nd = len(shape)
    scalar = [int(v) for v in rng.choice([-1, 0, 2, 7, 99], 2)]
    return {"seed": seed, "op": op, "dtype": dtype, "x": x, "scalar": scalar,
            "n": int(rng.integers(0, 3)), "axis": int(rng.integers(-nd, nd)),
            "use_pre": bool(rng.random() < 0.7), "use_app": bool(rng.random() < 0.5),
            "pos": int(rng.integers(0, shape[0] + 1)), "width": int(rng.integers(0, 3))}


def call(m, c: dict, x):
    """``c``'s call on ``x`` with the numpy-like module ``m`` (functrans.numpy or jnp)."""
    s0, s1 = c["scalar"]
    if c["op"] == "diff":
        return m.diff(x, n=c["n"], axis=c["axis"], prepend=s0 if c["use_pre"] else None,
                      append=s1 if c["use_app"] else None)
    if c["op"] == "append":
        return m.append(x, s0)
    if c["op"] == "append_axis":
        return m.append(x, m.flip(x, c["axis"]), axis=c["axis"])
    if c["op"] == "concatenate":
        return m.concatenate([m.ravel(x), m.full((2,), abs(s0), x.dtype), m.ravel(x)[:1]])
    if c["op"] == "pad":   # non-negative constants: numpy 2 refuses -1 into uint8 here
        return m.pad(x, c["width"], constant_values=abs(s0))
    return m.insert(x, c["pos"], abs(s1), axis=0)
