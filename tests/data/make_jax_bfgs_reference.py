"""Regenerate tests/data/jax_bfgs_reference.json: jax.scipy.optimize.minimize (BFGS, x64)
on the cases of tests/test_scipy_optimize.py, so the suite compares against JAX's results
without JAX installed.

    python tests/data/make_jax_bfgs_reference.py
"""
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.optimize import minimize

jax.config.update("jax_enable_x64", True)

from tests.test_scipy_optimize import CASES, OPTIONS, _rosen   # noqa: E402

FIELDS = ("x", "fun", "jac", "hess_inv", "status", "nit", "nfev", "njev", "success")


def _record(r):
    return {k: np.asarray(getattr(r, k)).tolist() for k in FIELDS}


def main():
    out = {}
    for name, f, x0, args in CASES:
        out[name] = _record(minimize(f(jnp), jnp.asarray(x0),
                                     tuple(jnp.asarray(a) for a in args), method="BFGS"))
    out["options"] = _record(minimize(_rosen(jnp), jnp.zeros(3), method="BFGS",
                                      options=OPTIONS))
    path = os.path.join(os.path.dirname(__file__), "jax_bfgs_reference.json")
    with open(path, "w") as fh:
        json.dump({"jax": jax.__version__, "results": out}, fh, indent=1)


if __name__ == "__main__":
    main()
