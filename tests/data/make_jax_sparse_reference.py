"""Regenerate jax_sparse_reference.npz from JAX (run only where JAX is installed; JAX is not
a dependency of functrans):  python tests/data/make_jax_sparse_reference.py

Runs the cases of jax_sparse_cases.py with jax.numpy and jax.experimental.sparse
(x64 enabled)."""
import os
import sys

import numpy as np
import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
from jax.experimental import sparse  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jax_sparse_cases import cases  # noqa: E402


def main():
    out = cases(jnp, sparse, jax.grad)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax_sparse_reference.npz")
    np.savez(path, jax_version=np.asarray(jax.__version__), **out)
    print(f"wrote {len(out)} results to {path}")


if __name__ == "__main__":
    main()
