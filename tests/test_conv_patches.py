"""lax.conv_general_dilated_patches against JAX 0.10.2's values and VJPs (stored by
tests/data/make_jax_conv_patches_reference.py): strides, explicit and named padding
(negative pads crop), lhs/rhs dilation, NHWC and mixed output layouts, 1-D; eager, jit
and vmap; the patches are the input's values exactly, infinities included."""
import ast
import os

import numpy as np
import pytest

import functrans as ft
from functrans import lax

DATA = os.path.join(os.path.dirname(__file__), "data")


def _cases():
    src = open(os.path.join(DATA, "make_jax_conv_patches_reference.py")).read()
    node = next(n for n in ast.parse(src).body if isinstance(n, ast.Assign)
                and getattr(n.targets[0], "id", "") == "PATCH_CASES")
    return ast.literal_eval(node.value)


CASES = _cases()


@pytest.mark.parametrize("j", range(len(CASES)))
def test_patches_equal_jax(j):
    r = np.load(os.path.join(DATA, "jax_conv_patches_reference.npz"))
    _, f, s, p, ld, rd, dn = CASES[j]

    def patches(x):
        return lax.conv_general_dilated_patches(x, f, s, p, ld, rd, dn)
    x = r[f"x{j}"]
    np.testing.assert_array_equal(patches(x), r[f"y{j}"])
    np.testing.assert_array_equal(ft.jit(patches)(x), r[f"y{j}"])
    np.testing.assert_array_equal(ft.vmap(patches)(x[None])[0], r[f"y{j}"])
    y, vjp = ft.vjp(patches, x)
    np.testing.assert_allclose(vjp(r[f"ct{j}"])[0], r[f"g{j}"], rtol=1e-13, atol=1e-13)


def test_patches_keep_infinities_and_dtype():
    x = np.arange(8.0, dtype=np.float32).reshape(1, 2, 4)
    x[0, 0, 1] = np.inf
    p = lax.conv_general_dilated_patches(x, (2,), (1,), "VALID")
    assert p.dtype == np.float32
    assert np.isinf(p).sum() == 2 and not np.isnan(p).any()
    q = lax.conv_general_dilated_patches(x, (2,), (1,), "VALID",
                                         preferred_element_type=np.float64)
    assert q.dtype == np.float64


@pytest.mark.parametrize("j", range(len(CASES)))
def test_local_conv_equals_jax(j):
    r = np.load(os.path.join(DATA, "jax_conv_patches_reference.npz"))
    _, f, s, p, ld, rd, dn = CASES[j]

    def local(x, w):
        return lax.conv_general_dilated_local(x, w, s, p, f, ld, rd, dn)
    x, w = r[f"x{j}"], r[f"w{j}"]
    for got in (local(x, w), ft.jit(local)(x, w), ft.vmap(local, (0, None))(x[None], w)[0]):
        np.testing.assert_allclose(got, r[f"z{j}"], rtol=1e-12, atol=1e-12)
    _, vjp = ft.vjp(local, x, w)
    gx, gw = vjp(r[f"ctz{j}"])
    np.testing.assert_allclose(gx, r[f"gzx{j}"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gw, r[f"gzw{j}"], rtol=1e-12, atol=1e-12)


def test_local_conv_rejects_a_kernel_of_the_wrong_shape():
    with pytest.raises(ValueError, match="rhs of shape"):
        lax.conv_general_dilated_local(np.ones((1, 2, 4)), np.ones((3, 5, 3)), (1,), "VALID",
                                       (2,))
