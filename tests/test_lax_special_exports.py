"""functrans.lax's special functions under JAX's lax names (lgamma, digamma, igamma,
igammac, bessel_i0e, bessel_i1e; the functrans.scipy.special implementations reused):
values against scipy.special, gradients against central differences; and lax's
``__all__``."""
import numpy as np
import pytest
import scipy.special as sps

import functrans as ft
from functrans import lax

X = np.array([0.3, 1.0, 2.5, 7.0, 12.0])
A = np.array([0.5, 1.5, 3.0, 4.0, 10.0])
UNARY = [("lgamma", sps.gammaln), ("digamma", sps.digamma), ("bessel_i0e", sps.i0e),
         ("bessel_i1e", sps.i1e)]
BINARY = [("igamma", sps.gammainc), ("igammac", sps.gammaincc)]


def _central(f, x, eps=1e-6):
    return (np.asarray(f(x + eps)) - np.asarray(f(x - eps))) / (2 * eps)


@pytest.mark.parametrize("name,ref", UNARY, ids=[n for n, _ in UNARY])
def test_unary_special_values_and_grads(name, ref):
    f = getattr(lax, name)
    xs = np.concatenate([X, -X]) if name.startswith("bessel") else X
    np.testing.assert_allclose(f(xs), ref(xs), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ft.jit(f)(xs), ref(xs), rtol=1e-12, atol=1e-14)
    assert f(xs.astype(np.float32)).dtype == np.float32
    g = ft.vmap(ft.grad(f))(xs)
    np.testing.assert_allclose(g, _central(ref, xs), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name,ref", BINARY, ids=[n for n, _ in BINARY])
def test_incomplete_gamma_values_and_grads(name, ref):
    f = getattr(lax, name)
    np.testing.assert_allclose(f(A, X), ref(A, X), rtol=1e-10, atol=1e-14)
    ga, gx = ft.vmap(ft.grad(f, argnums=(0, 1)))(A, X)
    np.testing.assert_allclose(ga, _central(lambda a: ref(a, X), A), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(gx, _central(lambda x: ref(A, x), X), rtol=1e-5, atol=1e-8)


def test_lax_has_an_all():
    assert {"lgamma", "digamma", "igamma", "igammac", "bessel_i0e", "bessel_i1e", "cos",
            "while_loop", "conv_general_dilated", "erf_inv"} <= set(lax.__all__)
    assert all(not n.startswith("_") and hasattr(lax, n) for n in lax.__all__)
    namespace = {}
    exec("from functrans.lax import *", namespace)  # noqa: S102
    assert set(lax.__all__) <= set(namespace)
