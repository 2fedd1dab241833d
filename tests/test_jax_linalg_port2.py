"""From JAX 0.10.2's tests/linalg_test.py, session 32 (helper linalg12): cases that
raised or differed, run against functrans through a fake-``jax`` shim. Expected values
are jax 0.10.2's (x64 on) or numpy/scipy's for the same calls, stored here; no test
imports jax."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

_RS = np.random.RandomState(0)
_SCALED = _RS.randn(3, 4, 3) * np.array([1, 0.1, 0.01])  # s ~ [3, .1, .02] per matrix


def test_matrix_rank_tol_is_an_absolute_cutoff_per_matrix():
    # tol (absolute) of shape (3,) was compared with each matrix's singular values
    # elementwise instead of one per matrix: [1, 1, 1]; numpy and jax 0.10.2: [1, 0, 2]
    tol = np.array([0.5, 100, 0.05])
    assert fnp.linalg.matrix_rank(_SCALED, tol=tol).tolist() == [1, 0, 2]
    jitted = ft.jit(lambda x, t: fnp.linalg.matrix_rank(x, tol=t))(_SCALED, tol)
    assert np.asarray(jitted).tolist() == [1, 0, 2]
    assert fnp.linalg.matrix_rank(_SCALED, tol=0.05).tolist() == [2, 2, 2]
    with pytest.raises(ValueError, match="matrix_rank: only one of tol or rtol may be "
                                         "specified."):
        fnp.linalg.matrix_rank(np.ones((3, 3)), rtol=1e-2, tol=1e-2)
