"""functrans.scipy.linalg's special matrices against scipy's: values and dtypes' kinds,
batched arguments against a loop, gradients of those built from arrays, and jit."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

import functrans as ft
from functrans.scipy import linalg as fla
from functrans.test_util import check_grads

_RNG = np.random.default_rng(11)
_C, _R = _RNG.normal(size=4), _RNG.normal(size=3)

_CASES = [("toeplitz", (_C, _R), {}), ("toeplitz", (_C,), {}),
          ("toeplitz", (_C + 1j * _C[::-1],), {}), ("hankel", (_C, _R), {}),
          ("hankel", (_C,), {}), ("circulant", (_C,), {}), ("companion", (_C,), {}),
          ("companion", ([2.0, 3.0],), {}), ("fiedler", (_C,), {}), ("leslie", (_C, _R), {}),
          ("hilbert", (5,), {}), ("hadamard", (8,), {}), ("hadamard", (4,), {"dtype": float})]
_CASES += [("fiedler_companion", (_RNG.normal(size=k),), {}) for k in range(2, 9)]
_CASES += [("convolution_matrix", (a, n, mode), {}) for a in (_C, _C[:2], _C[:1])
           for n in (1, 2, 3, 6) for mode in ("full", "same", "valid")]
_CASES += [("dft", (n,), {"scale": s}) for n in (1, 2, 5, 8) for s in (None, "sqrtn", "n")]
_CASES += [("helmert", (n,), {"full": f}) for n in (1, 2, 5) for f in (False, True)]
_CASES += [("invhilbert", (n,), {}) for n in (1, 3, 8, 12)]
_CASES += [(name, (n, k), {}) for name in ("pascal", "invpascal") for n in (0, 1, 4, 12)
           for k in ("symmetric", "lower", "upper")]


@pytest.mark.parametrize("name, args, kw", _CASES,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(_CASES)])
def test_special_matrices_against_scipy(name, args, kw):
    got = np.asarray(getattr(fla, name)(*args, **kw))
    want = getattr(sl, name)(*args, **kw)
    assert got.shape == want.shape
    assert got.dtype.kind == np.asarray(want).dtype.kind or name in ("pascal", "invpascal")
    np.testing.assert_allclose(got, want.astype(got.dtype), rtol=1e-14, atol=1e-14)


def test_pascal_entries_are_exact_beyond_float64_integers():
    big = np.asarray(fla.pascal(40))
    assert big[-1, -1] == float(sl.pascal(40, exact=True)[-1, -1])


@pytest.mark.parametrize("name, nargs", [("toeplitz", 2), ("hankel", 2), ("circulant", 1),
                                         ("companion", 1), ("fiedler", 1),
                                         ("fiedler_companion", 1), ("leslie", 2)])
def test_batched_gradients_and_jit(name, nargs):
    fun = getattr(fla, name)
    args = [_RNG.normal(size=(3, 5)), _RNG.normal(size=(3, 4 if name == "leslie" else 5))][:nargs]
    got = np.asarray(fun(*args))
    want = np.stack([getattr(sl, name)(*(a[i] for a in args)) for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(np.asarray(ft.jit(fun)(*args)), want, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(np.asarray(ft.vmap(fun)(*args)), want, rtol=1e-14, atol=1e-14)
    if name != "fiedler":       # |a_i - a_j| has kinks on its diagonal
        check_grads(lambda *a: fun(*a), tuple(a[0] for a in args), order=2, modes=("fwd", "rev"))


def test_convolution_matrix_multiplies_as_convolve():
    a, v = _RNG.normal(size=5), _RNG.normal(size=7)
    for mode in ("full", "same", "valid"):
        np.testing.assert_allclose(np.asarray(fla.convolution_matrix(a, 7, mode)) @ v,
                                   np.convolve(a, v, mode), rtol=1e-13, atol=1e-13)


def test_errors():
    with pytest.raises(ValueError):
        fla.hadamard(6)
    with pytest.raises(ValueError):
        fla.convolution_matrix([1.0], 0)
    with pytest.raises(ValueError):
        fla.leslie([1.0, 2.0], [1.0, 2.0])
    with pytest.raises(ValueError):
        fla.pascal(3, kind="middle")
