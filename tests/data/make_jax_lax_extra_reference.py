"""Regenerate jax_conv_reference.npz and jax_reduce_window_reference.npz (run once, with
JAX installed; functrans does not depend on it):

    PYTHONPATH=. python tests/data/make_jax_lax_extra_reference.py

The cases are in tests/data/jax_lax_extra_cases.py; the
cumulative-reduction gradients there were printed by the same kind of loop."""
import os

import jax
import numpy as np
from jax import lax

from tests.data.jax_lax_extra_cases import CONV_CASES, WINDOW_CASES

jax.config.update("jax_enable_x64", True)
HERE = os.path.dirname(os.path.abspath(__file__))


def conv_reference():
    out = {}
    for j, c in enumerate(CONV_CASES):
        rng = np.random.default_rng(j)
        x, w = rng.standard_normal(c["xs"]), rng.standard_normal(c["ws"])
        y, vjp = jax.vjp(lambda x, w: lax.conv_general_dilated(x, w, **c["kw"]), x, w)
        ct = rng.standard_normal(y.shape)
        gx, gw = vjp(ct)
        out.update({f"x{j}": x, f"w{j}": w, f"y{j}": np.asarray(y), f"ct{j}": ct,
                    f"gx{j}": np.asarray(gx), f"gw{j}": np.asarray(gw)})
    np.savez(os.path.join(HERE, "jax_conv_reference.npz"), **out)


def window_reference():
    out = {}
    for j, (op, shape, w, s, p, bd, wd, init) in enumerate(WINDOW_CASES):
        rng = np.random.default_rng(j)
        x = rng.standard_normal(shape)

        def f(x):
            return lax.reduce_window(x, init, getattr(lax, op), w, s, p, bd, wd)
        y = f(x)
        ct = rng.standard_normal(np.shape(y))
        out[f"y{j}"] = np.asarray(y)
        try:                      # JAX cannot differentiate every case
            out[f"g{j}"] = np.asarray(jax.vjp(f, x)[1](ct)[0])
        except (ValueError, TypeError, NotImplementedError):
            pass
    np.savez(os.path.join(HERE, "jax_reduce_window_reference.npz"), **out)


if __name__ == "__main__":
    conv_reference()
    window_reference()
