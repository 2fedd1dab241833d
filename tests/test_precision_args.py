"""JAX's ``precision=`` and ``preferred_element_type=`` wherever JAX takes them: the
functions' signatures show both (as JAX's do), precision values are checked, and
``preferred_element_type`` gives the result dtype, eagerly and under jit, with the
float64 product's values."""
import inspect

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax

A = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
B = np.arange(12, dtype=np.float32).reshape(3, 4) / 5
V = np.arange(3, dtype=np.float32) / 3

CALLS = {   # name -> (function, args, float64 reference)
    "fnp.dot": (fnp.dot, (A, B), A.astype(np.float64) @ B),
    "fnp.matmul": (fnp.matmul, (A, B), A.astype(np.float64) @ B),
    "fnp.inner": (fnp.inner, (A, V), A.astype(np.float64) @ V),
    "fnp.vdot": (fnp.vdot, (V, V), V.astype(np.float64) @ V),
    "fnp.vecdot": (fnp.vecdot, (A, V), A.astype(np.float64) @ V),
    "fnp.tensordot": (lambda a, b, **kw: fnp.tensordot(a, b, 1, **kw), (A, B),
                      A.astype(np.float64) @ B),
    "fnp.einsum": (lambda a, b, **kw: fnp.einsum("ij,jk->ik", a, b, **kw), (A, B),
                   A.astype(np.float64) @ B),
    "fnp.linalg.matmul": (fnp.linalg.matmul, (A, B), A.astype(np.float64) @ B),
    "fnp.linalg.tensordot": (lambda a, b, **kw: fnp.linalg.tensordot(a, b, axes=1, **kw),
                             (A, B), A.astype(np.float64) @ B),
    "fnp.linalg.vecdot": (fnp.linalg.vecdot, (A, V), A.astype(np.float64) @ V),
    "lax.dot": (lax.dot, (A, B), A.astype(np.float64) @ B),
    "lax.dot_general": (lambda a, b, **kw: lax.dot_general(a, b, (((1,), (0,)), ((), ())), **kw),
                        (A, B), A.astype(np.float64) @ B),
    "lax.conv": (lambda a, b, **kw: lax.conv(a, b, (1,), "VALID", **kw),
                 (A[None], A[None, :, :2]),
                 np.array([[[np.sum(A[:, j:j + 2].astype(np.float64) * A[:, :2])
                             for j in range(2)]]])),
}


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("precision", [None, "highest", lax.Precision.HIGH,
                                       ("default", lax.Precision.HIGHEST)])
def test_preferred_element_type_and_precision(name, precision):
    f, args, want = CALLS[name]
    for g in (f, ft.jit(lambda *a: f(*a, precision=precision,
                                     preferred_element_type=np.float64))):
        got = g(*args, precision=precision, preferred_element_type=np.float64) \
            if g is f else g(*args)
        assert got.dtype == np.float64, name
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_bad_precision_is_refused(name):
    f, args, _ = CALLS[name]
    with pytest.raises((ValueError, TypeError), match="precision"):
        f(*args, precision="quadruple")


@pytest.mark.parametrize("fn", [fnp.dot, fnp.matmul, fnp.inner, fnp.vdot, fnp.vecdot,
                                fnp.tensordot, fnp.einsum, lax.dot, lax.dot_general, lax.conv,
                                lax.conv_general_dilated, lax.conv_transpose,
                                lax.conv_with_general_padding],
                         ids=lambda f: f.__name__)
def test_signature_shows_both_arguments(fn):
    params = inspect.signature(fn).parameters
    assert "precision" in params and "preferred_element_type" in params


def test_batch_matmul():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 2, 3)), rng.standard_normal((4, 3, 5))
    np.testing.assert_allclose(lax.batch_matmul(a, b, precision="highest"), a @ b, rtol=1e-14)
    np.testing.assert_allclose(ft.jit(lax.batch_matmul)(a, b), a @ b, rtol=1e-14)
    np.testing.assert_allclose(ft.vmap(lax.batch_matmul)(a[None], b[None])[0], a @ b,
                               rtol=1e-14)
    ct = rng.standard_normal((4, 2, 5))
    ga, gb = ft.grad(lambda x, y: fnp.sum(lax.batch_matmul(x, y) * ct), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga, ct @ b.transpose(0, 2, 1), rtol=1e-13)
    np.testing.assert_allclose(gb, a.transpose(0, 2, 1) @ ct, rtol=1e-13)
    with pytest.raises(ValueError, match="batch dimensions"):
        lax.batch_matmul(a, b[:2])
    with pytest.raises(ValueError, match="rank"):
        lax.batch_matmul(a[0, 0], b[0])


_DN = (((1,), (0,)), ((), ()))
_A = np.array([[0.7, 1.7, 2.7], [-3.7, 4.7, -5.7]])
_B = np.array([[1.5, -2.0], [0.5, 1.0], [2.0, -0.25]])


@pytest.mark.parametrize("src, pet, want", [
    (np.float32, np.int32, [[7, 0], [-14, 13]]),
    (np.float32, np.uint8, [[7, 0], [0, 13]]),     # the float product saturates
    (fnp.bfloat16, np.int32, [[7, 0], [-14, 13]]),
    (np.float64, np.int8, [[7, 0], [-14, 13]]),
])
def test_preferred_integer_type_of_float_operands_truncates_the_product(src, pet, want):
    """Fuzz round 10: dot_general converted float operands to an integer
    preferred_element_type before multiplying ([[5, 0], [-12, 10]] here); XLA upcasts
    operands only to a higher-precision type, so JAX 0.10.2 forms the float product and
    converts it (values stored from JAX, eager and jit equal)."""
    a, b = _A.astype(src), _B.astype(src)
    dot = lambda x, y: lax.dot_general(x, y, _DN, preferred_element_type=pet)  # noqa: E731
    for f in (dot, ft.jit(dot)):
        out = f(a, b)
        assert out.dtype == np.dtype(pet) and np.asarray(out).tolist() == want, (f, out)


def test_preferred_real_type_of_complex_operands_keeps_the_real_part():
    """complex64 products asked for float32/float64/int32 are the complex product's real
    part (JAX 0.10.2: 2.0); the real parts' product was taken before (0.5)."""
    c = np.array([[1 + 2j, -0.5 + 1j]], np.complex64)
    d = np.array([[2 - 1j], [3 + 0.5j]], np.complex64)
    for pet, want in ((np.float32, 2.0), (np.float64, 2.0), (np.int32, 2)):
        dot = lambda x, y: lax.dot_general(x, y, _DN, preferred_element_type=pet)  # noqa: E731
        for f in (dot, ft.jit(dot)):
            out = f(c, d)
            assert out.dtype == np.dtype(pet) and np.asarray(out).tolist() == [[want]]


def test_preferred_narrower_float_rounds_once_at_the_end():
    """float64 operands with a float32 result: the product in float64, rounded once, as
    JAX 0.10.2 (bits 905969668 = 1.9073495e-06; rounding the operands first gave
    1.9073486e-06); its gradient is float64 (JAX: [[-0.5, 1.5, 1.75]] * 2)."""
    e, f = np.array([[1 + 2 ** -20, 1.0]]), np.array([[1 + 2 ** -20], [-1.0]])
    out = lax.dot_general(e, f, _DN, preferred_element_type=np.float32)
    assert out.dtype == np.float32 and np.asarray(out).view(np.uint32).tolist() == [[905969668]]
    g = ft.grad(lambda x: lax.dot_general(x, _B, _DN, preferred_element_type=np.float32).sum())(_A)
    assert g.dtype == np.float64 and np.asarray(g).tolist() == [[-0.5, 1.5, 1.75]] * 2


@pytest.mark.parametrize("src, pet", [(np.int32, np.uint8), (np.int32, np.bool_),
                                      (np.int64, np.float32), (np.complex128, np.float32),
                                      (np.int8, np.bool_)])
def test_preferred_type_narrower_than_integer_or_complex_operands_is_refused(src, pet):
    """As JAX's check (a complex type counts its component's width): int32 asked for
    uint8 gave a wrapped product here, JAX raises TypeError."""
    a = np.ones((1, 2), src)
    with pytest.raises(TypeError, match="narrower"):
        lax.dot_general(a, a.T, _DN, preferred_element_type=pet)


def test_preferred_type_narrower_than_either_integer_operand_is_refused():
    """int64 x int32 asked for int32: JAX raises (the result type int64 is wider); the
    check read only the left operand, so either order wrapped the int64 product
    (2**40 + 3 gave 3)."""
    big, one = np.array([[2 ** 40 + 3]], np.int64), np.array([[1]], np.int32)
    for lhs, rhs in ((big, one), (one, big)):
        with pytest.raises(TypeError, match="narrower"):
            lax.dot_general(lhs, rhs, _DN, preferred_element_type=np.int32)
    out = lax.dot_general(one, one, _DN, preferred_element_type=np.int64)
    assert out.dtype == np.int64 and np.asarray(out).tolist() == [[1]]


@pytest.mark.parametrize("src, pet, why", [
    (np.complex64, np.float32, "incompatible"), (np.float32, np.int32, "incompatible"),
    (np.float64, np.float32, "narrower"), (np.int32, np.float16, "narrower"),
    (np.int64, np.int32, "narrower"), (np.float32, np.complex64, "incompatible")])
def test_conv_preferred_type_follows_jax_s_rule(src, pet, why):
    """Fuzz round 10: conv_general_dilated took any preferred_element_type and converted
    the operands to it (complex64 operands asked for float32 lost their imaginary parts:
    [0.871, 2.019, ...] here); JAX 0.10.2 raises TypeError for these pairs, and keeps
    (int8, int32), (int32, float64), (float16, float32), (complex64, complex128)."""
    a = np.ones((1, 1, 3), src)
    with pytest.raises(TypeError, match=why):
        lax.conv_general_dilated(a, a, (1,), "VALID", preferred_element_type=pet)
    for s, p in ((np.int8, np.int32), (np.int32, np.float64), (np.float16, np.float32),
                 (np.complex64, np.complex128)):
        x = np.arange(3, dtype=s).reshape(1, 1, 3)
        out = lax.conv_general_dilated(x, x, (1,), "VALID", preferred_element_type=p)
        assert out.dtype == np.dtype(p) and np.asarray(out).tolist() == [[[5]]]
