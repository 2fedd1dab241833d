"""Regressions found by running JAX 0.10.2's tests/debug_nans_test.py against functrans
(session 32). Each test names the JAX test it comes from; earlier ports of that file's
cases live in tests/test_tools.py (debug_nans section)."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import config


@pytest.fixture(autouse=True)
def _options_off():
    yield
    config.update("debug_nans", False)
    config.update("debug_infs", False)


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_nan_literal_output_is_blamed_on_the_literal(backend):
    # testDebugNansDoesntReturnDeoptimizedResult: a jitted f returning jnp.nan raised
    # "re-running it ... produced none (the backend differs from the interpreter here;
    # please report it)": a false backend-bug report. The NaN is a literal output.
    f = ft.jit(lambda x: (fnp.nan, x + 2), backend=backend)
    nan, y = f(3)
    assert np.isnan(nan) and int(y) == 5                    # option off: returned as is
    config.update("debug_nans", True)
    with pytest.raises(FloatingPointError, match=r"no equation computed: it is a constant "
                       r"of the function \(output 0 is the literal nan\)") as info:
        f(3)
    assert "backend differs" not in str(info.value)


def test_nan_read_from_a_literal_operand_names_the_equation():
    f = ft.jit(lambda x: fnp.sin(x) + np.nan)
    config.update("debug_nans", True)
    with pytest.raises(FloatingPointError, match=r"equation 1 \('add'\) reads a literal"):
        f(1.0)


def test_nan_in_a_captured_array_names_the_constant():
    c = np.array([1.0, np.nan, 3.0])
    f = ft.jit(lambda x: x * c)
    assert np.isnan(np.asarray(f(2.0))).tolist() == [False, True, False]
    config.update("debug_nans", True)
    with pytest.raises(FloatingPointError, match=r"captured constant 0 \(float64\[3\]\)"):
        f(2.0)


def test_inf_literal_output_under_debug_infs():
    # DebugInfsTest counterpart: the same blame for an inf literal
    f = ft.jit(lambda x: (x * 2.0, fnp.inf))
    config.update("debug_infs", True)
    with pytest.raises(FloatingPointError, match=r"debug_infs: .* an inf that no equation "
                       r"computed: .*output 1 is the literal inf"):
        f(1.0)
    config.update("debug_infs", False)
    assert float(f(1.0)[0]) == 2.0 and np.isinf(f(1.0)[1])


def test_computed_nan_is_still_blamed_on_its_equation():
    # a literal NaN elsewhere must not hide an equation that made a NaN first
    f = ft.jit(lambda x: (fnp.log(x), np.nan))
    config.update("debug_nans", True)
    with pytest.raises(FloatingPointError, match=r"equation 0 \(primitive 'log'"):
        f(-1.0)
