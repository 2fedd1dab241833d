"""Regenerate jax_random_reference.npz from JAX (run only where JAX is installed; JAX is
not a dependency of functrans):  python tests/data/make_jax_random_reference.py

Runs JAX in its default PRNG configuration (threefry2x32, partitionable) with float64
enabled, so float64 draws are JAX's float64 draws; float32 cases ask for float32.
"""
import os
import sys

import numpy as np
import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import jax.random as jr  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jax_random_cases import CASES, ERF_INV_GRID, resolve  # noqa: E402


def draw(fn, seed, args, kwargs):
    key = jr.PRNGKey(seed)
    if fn == "key_data":
        return key
    args = resolve(args, jnp.asarray)
    kwargs = {k: (jnp.asarray(v) if k == "p" else v) for k, v in kwargs.items()}
    return getattr(jr, fn)(key, *args, **kwargs)


def main():
    assert jax.config.jax_threefry_partitionable, "expected JAX's default PRNG mode"
    out = {name: np.asarray(draw(*spec)) for name, spec in CASES.items()}
    for name, dtype in (("erf_inv_f32", np.float32), ("erf_inv_f64", np.float64)):
        grid = np.asarray(ERF_INV_GRID, dtype)
        out[name] = np.stack([grid, np.asarray(jax.lax.erf_inv(jnp.asarray(grid)))])
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax_random_reference.npz")
    np.savez(path, jax_version=np.asarray(jax.__version__), **out)
    print(f"wrote {len(out)} draws to {path}")


if __name__ == "__main__":
    main()
