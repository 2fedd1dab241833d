"""Writes jax_fuzz_joining_reference.json: JAX 0.10.2's (x64) values for the seeded joins
of tests/fuzz/joining_cases.py, on the data and on the data reversed along its first axis
(the second vmap lane). Run from the repository root with a Python that has jax:
python tests/data/make_jax_fuzz_joining_reference.py"""
import json
import sys
from pathlib import Path

import numpy as np
import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.fuzz.joining_cases import call, case  # noqa: E402

SEEDS = range(60)


def reference(seed):
    c = case(seed)
    x = c["x"]
    out = np.asarray(jax.jit(lambda a: call(jnp, c, a))(x))
    out2 = np.asarray(jax.jit(lambda a: call(jnp, c, a))(x[::-1]))
    return {"seed": seed, "dtype": str(out.dtype), "shape": list(out.shape),
            "out": out.ravel().tolist(), "out_rev": out2.ravel().tolist()}


if __name__ == "__main__":
    path = Path(__file__).with_name("jax_fuzz_joining_reference.json")
    path.write_text(json.dumps([reference(s) for s in SEEDS]) + "\n")
    print("wrote", path)
