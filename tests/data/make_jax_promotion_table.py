"""Write jax_promotion_table.json: JAX's result dtype for every pair of functrans dtypes
and for each dtype with a weak Python scalar (bool, int, float, complex), with x64.

Run with a Python that has JAX (0.10.2 was used):
    JAX_ENABLE_X64=1 python tests/data/make_jax_promotion_table.py
"""
import json
import os

import jax
import jax.numpy as jnp
import numpy as np

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
WEAK = {"bool": True, "int": 2, "float": 2.5, "complex": 1j}


def main():
    assert jax.config.jax_enable_x64, "run with JAX_ENABLE_X64=1"
    pairs = {f"{a},{b}": str(jnp.promote_types(a, b)) for a in DTYPES for b in DTYPES}
    weak = {f"{a},{w}": str((jnp.ones(2, a) + v).dtype) for a in DTYPES for w, v in WEAK.items()}
    out = {"jax": jax.__version__, "pairs": pairs, "weak": weak}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax_promotion_table.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
