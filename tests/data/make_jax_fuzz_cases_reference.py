"""Writes jax_fuzz_<family>_reference.json: JAX 0.10.2's (x64) values for the seeded cases
of tests/fuzz/<family>_cases.py (joining: the joins; statistics: quantile/median; narrow:
float16/bfloat16 arithmetic), on the
data and on the data reversed along its first axis (the second vmap lane). Run from the
repository root with a Python that has jax:
python tests/data/make_jax_fuzz_cases_reference.py joining|statistics|narrow"""
import importlib
import json
import sys
from pathlib import Path

import numpy as np
import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

SEEDS = range(60)
# family -> whether values are stored as float64 (16-bit floats are not JSON numbers);
# the joins keep their exact integers (uint64 beyond 2**53 included)
AS_FLOAT64 = {"joining": False, "statistics": True, "narrow": True}


def reference(cases, seed, as_float64):
    c = cases.case(seed)
    x = c["x"]
    outs = [np.asarray(jax.jit(lambda a: cases.call(jnp, c, a))(v)) for v in (x, x[::-1])]
    flat = [(o.astype(np.float64) if as_float64 else o).ravel().tolist() for o in outs]
    return {"seed": seed, "dtype": str(outs[0].dtype), "shape": list(outs[0].shape),
            "out": flat[0], "out_rev": flat[1]}


if __name__ == "__main__":
    family = sys.argv[1]
    cases = importlib.import_module(f"tests.fuzz.{family}_cases")
    path = Path(__file__).with_name(f"jax_fuzz_{family}_reference.json")
    path.write_text(json.dumps([reference(cases, s, AS_FLOAT64[family]) for s in SEEDS]) + "\n")
    print("wrote", path)
