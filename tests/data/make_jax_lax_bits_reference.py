"""Regenerate jax_lax_bits_reference.npz (run once, with JAX 0.10.2 installed):

    PYTHONPATH=. python tests/data/make_jax_lax_bits_reference.py

The cases are in tests/data/jax_lax_bits_cases.py."""
import os

import jax
import numpy as np
from jax import lax

from tests.data.jax_lax_bits_cases import outputs

jax.config.update("jax_enable_x64", True)
HERE = os.path.dirname(os.path.abspath(__file__))

if __name__ == "__main__":
    np.savez(os.path.join(HERE, "jax_lax_bits_reference.npz"), **outputs(lax))
