"""Eager operations give JAX's IEEE results (inf, nan) without numpy's RuntimeWarnings
(issue 13): robustly, inside ``warnings.catch_warnings()`` blocks (pytest wraps one around
every test) where the library's warnings filter is not in force, and with warnings made
errors. The user's own numpy calls keep numpy's behaviour."""
import warnings

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

inf, nan = np.inf, np.nan


def _zeros(*shape):
    return fnp.zeros(shape or (2,))


# expression -> JAX's value (computed with jax 0.10, x64, which gives no warning)
CASES = {
    "log(0)": (lambda: fnp.log(_zeros()), [-inf, -inf]),
    "log(-1)": (lambda: fnp.log(-fnp.ones(2)), [nan, nan]),
    "sqrt(-1)": (lambda: fnp.sqrt(-fnp.ones(1)), [nan]),
    "exp overflow": (lambda: fnp.exp(fnp.array([1000.0])), [inf]),
    "float32 overflow": (lambda: fnp.array([3e38], "float32") * 10, [inf]),
    "x / 0 operator": (lambda: fnp.array([1.0, 0.0]) / 0.0, [inf, nan]),
    "1 / x reflected": (lambda: 1.0 / _zeros(), [inf, inf]),
    "divide": (lambda: fnp.divide(1.0, _zeros()), [inf, inf]),
    "x % 0.0": (lambda: fnp.array([1.0]) % 0.0, [nan]),
    "remainder": (lambda: fnp.remainder(fnp.array([1.0]), 0.0), [nan]),
    "float // 0": (lambda: fnp.array([1.0]) // 0.0, [inf]),
    "power(0, -1)": (lambda: fnp.power(_zeros(1), -1.0), [inf]),
    "0 ** -1": (lambda: _zeros(1) ** -1.0, [inf]),
    "reciprocal(0)": (lambda: fnp.reciprocal(_zeros(1)), [inf]),
    "arctanh(1)": (lambda: fnp.arctanh(fnp.ones(1)), [inf]),
    "inf - inf": (lambda: fnp.array([inf]) - inf, [nan]),
    "0 * inf": (lambda: _zeros(1) * inf, [nan]),
    "sum overflow": (lambda: fnp.sum(fnp.array([1e308, 1e308])), inf),
    "Array.sum overflow": (lambda: fnp.array([1e308, 1e308]).sum(), inf),
    "prod 0 * inf": (lambda: fnp.prod(fnp.array([0.0, inf])), nan),
    "Array.prod 0 * inf": (lambda: fnp.array([0.0, inf]).prod(), nan),
    "cumsum overflow": (lambda: fnp.cumsum(fnp.array([1e308, 1e308])), [1e308, inf]),
    "Array.cumsum overflow": (lambda: fnp.array([1e308, 1e308]).cumsum(), [1e308, inf]),
    "nansum overflow": (lambda: fnp.nansum(fnp.array([1e308, 1e308, nan])), inf),
    "mean of empty": (lambda: fnp.mean(_zeros(0)), nan),
    "Array.mean of empty": (lambda: _zeros(0).mean(), nan),
    "mean of empty slices": (lambda: fnp.mean(_zeros(2, 0), axis=1), [nan, nan]),
    "Array.mean of empty slices": (lambda: _zeros(2, 0).mean(axis=1), [nan, nan]),
    "mean of no slices": (lambda: fnp.mean(_zeros(0, 2), axis=1), np.zeros(0)),
    "var, no dof": (lambda: fnp.var(fnp.ones(1), ddof=1), nan),
    "Array.var of empty": (lambda: _zeros(0).var(), nan),
    "Array.std of empty": (lambda: _zeros(0).std(), nan),
    "std of inf": (lambda: fnp.std(fnp.array([inf, 1.0])), nan),
    "dot 0 * inf": (lambda: fnp.dot(fnp.array([0.0, 1.0]), fnp.array([inf, 1.0])), nan),
    "matmul overflow": (lambda: fnp.ones((1, 2)) * 1e308 @ fnp.ones((2, 1)) * 1e308, [[inf]]),
    "astype overflow": (lambda: fnp.array([1e300]).astype("float32"), [inf]),
    "asarray overflow": (lambda: fnp.asarray(fnp.array([1e300]), dtype="float32"), [inf]),
    # under the transforms
    "grad of log at 0": (lambda: ft.grad(lambda x: fnp.sum(fnp.log(x)))(_zeros()), [inf, inf]),
    "grad of prod with inf": (lambda: ft.grad(fnp.prod)(np.array([1.0, inf, 2.0, 3.0])),
                              [inf, 6.0, inf, inf]),
    "grad of sqrt at 0": (lambda: ft.grad(fnp.sqrt)(0.0), inf),
    "grad of mean of empty": (lambda: ft.grad(fnp.mean)(_zeros(0)), np.zeros(0)),
    "jvp of log at 0": (lambda: ft.jvp(fnp.log, (_zeros(),), (fnp.ones(2),)),
                        ([-inf, -inf], [inf, inf])),
    "vjp of exp overflow": (lambda: ft.vjp(fnp.exp, fnp.array([1000.0]))[1](fnp.ones(1)),
                            ([inf],)),
    "vmap of log": (lambda: ft.vmap(fnp.log)(_zeros()), [-inf, -inf]),
    "vmap of Array.mean of empty": (lambda: ft.vmap(lambda x: x.mean())(_zeros(2, 0)),
                                    [nan, nan]),
    "vmap in_axes=1 of 1 / x": (lambda: ft.vmap(lambda x: 1.0 / x, in_axes=1)(_zeros(1, 2)),
                                [[inf], [inf]]),
    "jacfwd of log": (lambda: ft.jacfwd(fnp.log)(_zeros(1)), [[inf]]),
    "hessian of log": (lambda: ft.hessian(fnp.log)(_zeros(1)), [[[-inf]]]),
    "jit (cpu)": (lambda: ft.jit(lambda x: fnp.log(x) / x)(_zeros()), [-inf, -inf]),
    "jit (interpret)": (lambda: ft.jit(lambda x: fnp.log(x) / x, backend="interpret")(
        _zeros()), [-inf, -inf]),
    "grad of jit": (lambda: ft.grad(ft.jit(lambda x: fnp.sum(fnp.log(x))))(_zeros()),
                    [inf, inf]),
}


def _assert_same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _assert_same(g, w)
        return
    want = np.asarray(want, dtype=np.asarray(got).dtype)
    assert np.shape(got) == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)    # nan == nan here


@pytest.mark.parametrize("case", CASES)
def test_no_numpy_warning_even_when_warnings_are_errors(case):
    fn, want = CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # no library filter can be in force here
        got = fn()
    _assert_same(got, want)


def test_the_users_numpy_calls_still_warn_after_library_calls():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fnp.log(_zeros())
        ft.grad(fnp.sqrt)(0.0)
        with pytest.raises(ValueError):     # an eager operation that raises, mid-way
            fnp.add(fnp.ones(2), fnp.ones(3))
        with pytest.raises(RuntimeWarning, match="divide by zero"):
            np.log(np.zeros(1))
        with pytest.raises(RuntimeWarning, match="Mean of empty slice"):
            np.zeros(0).mean()
    with np.errstate(all="raise"):          # and a state the user set stays theirs
        assert fnp.log(_zeros()).tolist() == [-inf, -inf]
        with pytest.raises(FloatingPointError):
            np.log(np.zeros(1))
