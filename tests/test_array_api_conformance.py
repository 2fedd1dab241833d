"""Regressions found by running the data-apis array-api-tests suite (the Array API
standard, 2024.12, that jax.numpy follows) against functrans.numpy; each test names the
case the outside suite generated and JAX 0.10.2's answer (x64 on)."""
import numpy as np

import functrans.numpy as fnp


def test_arange_with_only_start_and_step_counts_from_zero():
    # arange(n, step=s) is range(0, n, s): the step was taken for the stop, so
    # arange(0, step=134443008) built 134M float32s (JAX: an empty array)
    assert fnp.arange(0, step=3).tolist() == []
    assert fnp.arange(5, step=2).tolist() == [0, 2, 4]
    assert fnp.arange(5.0, step=2).tolist() == [0.0, 2.0, 4.0]
    assert fnp.arange(5, step=-1).tolist() == []
    assert fnp.arange(1, 7, 2).tolist() == [1, 3, 5]
    assert fnp.arange(3, dtype="float32").dtype == np.float32
