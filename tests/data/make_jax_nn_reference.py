"""Regenerate jax_nn_reference.npz from JAX (run only where JAX is installed; JAX is not
a dependency of functrans):  python tests/data/make_jax_nn_reference.py

Draws of every jax.nn.initializers factory for PRNGKey(3), float64 (x64 enabled) and
float32, in JAX's default PRNG mode; the cases are INIT_CASES below, shared with
tests/test_nn_jax_names.py."""
import os

import numpy as np
import jax

jax.config.update("jax_enable_x64", True)
import jax.nn.initializers as ji  # noqa: E402
import jax.random as jr  # noqa: E402

INIT_CASES = {   # name -> (factory, factory args, shape)
    "constant": ("constant", (0.3,), (4, 5)),
    "uniform": ("uniform", (), (4, 5)),
    "normal": ("normal", (0.5,), (4, 5)),
    "truncated_normal": ("truncated_normal", (), (4, 5)),
    "glorot_uniform": ("glorot_uniform", (), (4, 5)),
    "glorot_normal": ("glorot_normal", (), (3, 3, 4, 5)),
    "lecun_uniform": ("lecun_uniform", (), (4, 5)),
    "lecun_normal": ("lecun_normal", (), (4, 5)),
    "he_uniform": ("he_uniform", (), (4, 5)),
    "he_normal": ("he_normal", (), (4, 5)),
    "orthogonal": ("orthogonal", (), (4, 5)),
    "orthogonal_tall": ("orthogonal", (2.0,), (6, 3)),
    "delta_orthogonal": ("delta_orthogonal", (), (3, 3, 4, 5)),
    "variance_scaling_geo": ("variance_scaling", (2.0, "fan_geo_avg", "normal"), (4, 5)),
    "variance_scaling_trunc": ("variance_scaling", (1.0, "fan_avg", "truncated_normal"),
                               (4, 5)),
}


def main():
    out = {}
    for name, (fac, args, shape) in INIT_CASES.items():
        for dt in ("float64", "float32"):
            init = getattr(ji, fac)(*args, dtype=np.dtype(dt))
            out[f"{name}_{dt}"] = np.asarray(init(jr.PRNGKey(3), shape))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax_nn_reference.npz")
    np.savez(path, jax_version=np.asarray(jax.__version__), **out)
    print(f"wrote {len(out)} draws to {path}")


if __name__ == "__main__":
    main()
