"""polyder/polyint keep a float polynomial's dtype, as JAX's: an int64 arange made float16
and float32 coefficients float64 (different numbers: float16 rounding is JAX's).

Expected values: JAX 0.10.2 (JAX_ENABLE_X64=1, CPU), stored. Integer coefficients follow
numpy's int -> float rule here (polyder int64, polyint float64; JAX float32): see
README "Promotion follows numpy 2"."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

CASES = {
    "polyder f16": (lambda: fnp.polyder(np.array([1.1, 2.3, 3.7, 0.3], np.float16)),
                    ("float16", [3.298828125, 4.6015625, 3.69921875])),
    "polyder f32 m=2": (lambda: fnp.polyder(np.array([1.1, 2.3, 3.7], np.float32), 2),
                        ("float32", [2.200000047683716])),
    "polyint f16": (lambda: fnp.polyint(np.array([3.3, 2.1, 0.7], np.float16)),
                    ("float16", [1.1005859375, 1.0498046875, 0.7001953125, 0.0])),
    "polyint f32 m=2": (lambda: fnp.polyint(np.array([3.3, 2.1], np.float32), 2),
                        ("float32", [0.550000011920929, 1.0499999523162842, 0.0, 0.0])),
    "polyder f64": (lambda: fnp.polyder(np.array([1.5, 2.0, 3.0])), ("float64", [3.0, 2.0])),
}


@pytest.mark.parametrize("name", list(CASES))
def test_polyder_polyint_keep_float_dtype(name):
    fn, (dtype, values) = CASES[name]
    for got in (fn(), ft.jit(fn)()):
        assert str(got.dtype) == dtype
        assert np.asarray(got).tolist() == values
