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


_QR_A = np.array([[1., 2, 0], [0.5, -1, 3], [2, 0, 4], [1, 1, 1]])
_QR_B = np.array([[1 + 1j, 2], [0.5j, -1]])
_RAW_A = ([[-2.4999999999999996, 0.14285714285714288, 0.5714285714285715, 0.28571428571428575],
           [-1.0, 2.23606797749979, 0.4677911042067747, -0.03898259201723119],
           [-4.200000000000001, -2.772724292099739, 0.8197560612767687, -0.0010040806246945377]],
          [1.4000000000000001, 1.63887656499994, 1.999997983646231])
_RAW_B = ([[-1.5 + 0j, 0.06896551724137932 + 0.1724137931034483j],
           [-1.3333333333333335 + 1j, 1.49071198499986 + 0j]],
          [1.6666666666666667 + 0.6666666666666666j, 1.940690666396463 + 0.3392654862413474j])


@pytest.mark.parametrize("a, want", [(_QR_A, _RAW_A), (_QR_B, _RAW_B)])
def test_qr_raw_is_lapacks_packed_form(a, want):
    # mode='raw' raised ValueError; jax 0.10.2 (and numpy) give geqrf's (h transposed, tau)
    for got in (fnp.linalg.qr(a, mode="raw"), ft.jit(lambda x: fnp.linalg.qr(x, "raw"))(a)):
        h, tau = got
        assert h.dtype == a.dtype and h.shape == a.shape[::-1]
        np.testing.assert_allclose(np.asarray(h), want[0], rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(np.asarray(tau), want[1], rtol=1e-14)
    stack = np.stack([a, 2 * a])        # batched and vmapped: matrix by matrix
    one = fnp.linalg.qr(2 * a, mode="raw")
    for h, tau in (fnp.linalg.qr(stack, mode="raw"),
                   ft.vmap(lambda x: fnp.linalg.qr(x, "raw"))(stack)):
        np.testing.assert_allclose(np.asarray(h)[0], want[0], rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(np.asarray(tau)[0], want[1], rtol=1e-14)
        assert np.array_equal(np.asarray(h)[1], np.asarray(one[0]))
        assert np.array_equal(np.asarray(tau)[1], np.asarray(one[1]))


def test_qr_raw_float32_and_empty_equal_numpy():
    a = (_RS.randn(2, 4, 1) @ _RS.randn(2, 1, 3)).astype(np.float32)    # rank 1
    for got, want in zip(fnp.linalg.qr(a, mode="raw"), np.linalg.qr(a, mode="raw")):
        assert got.dtype == np.float32
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=2e-6)
    h, tau = fnp.linalg.qr(np.zeros((2, 3, 0)), mode="raw")
    assert h.shape == (2, 0, 3) and tau.shape == (2, 0)
    # differentiable (JAX raises): central differences of the packed form
    w = _RS.randn(3, 4)

    def loss(x):
        h, tau = fnp.linalg.qr(x, mode="raw")
        return fnp.sum(h * w) + fnp.sum(tau)
    g = np.asarray(ft.grad(loss)(_QR_A))
    fd = np.zeros((4, 3))
    for idx in np.ndindex(4, 3):
        d = np.zeros((4, 3))
        d[idx] = 1e-6
        fd[idx] = (float(loss(_QR_A + d)) - float(loss(_QR_A - d))) / 2e-6
    np.testing.assert_allclose(g, fd, atol=1e-8)


def test_constructor_and_dtype_validation_as_jax():
    """testHelmertInvalidN, testLeslieInvalidLength, testFiedlerCompanionShortInput /
    EmptyInput, testQrInvalidDtypeCPU: jax 0.10.2's errors (types and message parts)."""
    from functrans.scipy import linalg as fsl
    for n in (0, -1):       # helmert(0) raised IndexError
        with pytest.raises(ValueError, match="n must be a positive integer"):
            fsl.helmert(n)
    with pytest.raises(ValueError, match="length of f along the last axis"):
        fsl.leslie(np.array([1.0]), np.array([]))     # was accepted: [[1.0]] (scipy raises)
    for f, s in (([1., 2., 3.], [0.5]), ([1., 2.], [])):
        with pytest.raises(ValueError, match="Incorrect lengths for f and s"):
            fsl.leslie(np.array(f), np.array(s))
    for shape in ((1,), (3, 1)):        # a constant has no roots: an empty matrix
        out = fsl.fiedler_companion(np.ones(shape))
        assert out.shape == shape[:-1] + (0, 0) and out.dtype == np.float64
    for shape in ((0,), (3, 0)):
        with pytest.raises(ValueError, match="nonzero"):
            fsl.fiedler_companion(np.ones(shape))
    half = np.eye(5, 6, dtype=np.float16)
    for fun in (fnp.linalg.qr, fnp.linalg.svd, ft.jit(fnp.linalg.qr)):
        with pytest.raises(NotImplementedError, match="Unsupported dtype float16"):
            fun(half)


@pytest.mark.parametrize("t_shape, z_shape", [((3, 4, 4), (4, 4)), ((4, 4), (3, 4, 4)),
                                              ((2, 1, 4, 4), (3, 4, 4)), ((5, 5), (5, 5))])
@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_rsf2csf_broadcasts_and_follows_lapacks_eigenvalue_order(t_shape, z_shape, dtype):
    """testRsf2csfBroadcast (raised ValueError) and testRsf2csf with a random T that is
    not quasi-triangular (the shift was a closed-form eigenvalue, not LAPACK's first:
    T and Z differed from scipy's and JAX's by O(1)). scipy per matrix decides."""
    import scipy.linalg as sl
    rs = np.random.RandomState(1)
    t, z = rs.randn(*t_shape).astype(dtype), rs.randn(*z_shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        t = t + 1j * rs.randn(*t_shape).astype(dtype)
    from functrans.scipy.linalg import rsf2csf
    batch = np.broadcast_shapes(t_shape[:-2], z_shape[:-2])
    tb = np.broadcast_to(t, batch + t_shape[-2:]).reshape((-1,) + t_shape[-2:])
    zb = np.broadcast_to(z, batch + z_shape[-2:]).reshape((-1,) + z_shape[-2:])
    want = [np.stack(w).reshape(batch + t_shape[-2:])
            for w in zip(*(sl.rsf2csf(a, b) for a, b in zip(tb, zb)))]
    tol = 1e-12 if dtype == np.float64 else 3e-5
    for got in (rsf2csf(t, z), ft.jit(rsf2csf)(t, z)):
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            np.testing.assert_allclose(np.asarray(g), w, rtol=tol, atol=tol)


def test_rsf2csf_gradient_has_no_nan_from_untouched_blocks():
    # a triangular T with a repeated diagonal: no rotation; the gradient of
    # sum(T_out * w) is w except on the zeroed subdiagonal (eigvals' derivative at the
    # repeated eigenvalue of the untouched block gave NaNs before)
    from functrans.scipy.linalg import rsf2csf
    rs = np.random.RandomState(2)
    t = np.triu(rs.randn(4, 4)) + np.tril(rs.randn(4, 4), -2)
    t[1, 1] = t[0, 0]
    w = rs.randn(4, 4)
    g = ft.grad(lambda x: fnp.real(fnp.sum(rsf2csf(x, np.eye(4))[0] * w)))(t)
    np.testing.assert_allclose(np.asarray(g), np.where(np.eye(4, k=-1) == 1, 0, w),
                               rtol=1e-13)


@pytest.mark.parametrize("shape, c_shape, mode, conjugate, cplx", [
    ((4, 3), (3, 2), "left", False, False), ((4, 4), (2, 4), "right", False, False),
    ((3, 6, 4), (2, 6), "right", True, True), ((3, 6, 4), (3, 4, 2), "left", False, False),
    ((4, 6), (4,), "left", False, True)])
def test_qr_multiply_pivoting_and_batches_as_scipy(shape, c_shape, mode, conjugate, cplx):
    """testQrMultiply pivoting=True (raised NotImplementedError) and batched a (raised
    ValueError): scipy's qr_multiply per matrix; permutations equal, products to 1e-13
    (jax 0.10.2 gives the same to 1e-15)."""
    import scipy.linalg as sl
    from functrans.scipy.linalg import qr_multiply
    rs = np.random.RandomState(5)
    a, c = rs.randn(*shape), rs.randn(*c_shape)
    if cplx:
        a, c = a + 1j * rs.randn(*shape), c + 1j * rs.randn(*c_shape)
    batch = np.broadcast_shapes(shape[:-2], c_shape[:-2] if len(c_shape) > 1 else ())
    ab = np.broadcast_to(a, batch + shape[-2:]).reshape((-1,) + shape[-2:])
    cb = [c] * len(ab) if c.ndim == 1 else np.broadcast_to(
        c, batch + c_shape[-2:]).reshape((-1,) + c_shape[-2:])
    per = [sl.qr_multiply(x, y, mode=mode, pivoting=True, conjugate=conjugate)
           for x, y in zip(ab, cb)]
    want = [np.stack(w).reshape(batch + w[0].shape) for w in zip(*per)]
    jitted = ft.jit(qr_multiply, static_argnames=("mode", "pivoting", "conjugate"))
    for f in (qr_multiply, jitted):
        cq, r, p = f(a, c, mode=mode, pivoting=True, conjugate=conjugate)
        assert p.dtype == np.int32 and np.array_equal(np.asarray(p), want[2])
        np.testing.assert_allclose(np.asarray(cq), want[0], rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(np.asarray(r), want[1], rtol=1e-13, atol=1e-13)


def _chol_inputs():
    rs = np.random.RandomState(0)
    r = rs.randn(3, 3)
    a = r @ r.T + 3 * np.eye(3) + 0.3 * rs.randn(3, 3)      # positive definite, not symmetric
    return a, rs.randn(3, 3)


def _central_differences(f, a, eps=1e-6):
    fd = np.zeros(a.shape)
    for idx in np.ndindex(*a.shape):
        d = np.zeros(a.shape)
        d[idx] = eps
        fd[idx] = (float(f(a + d)) - float(f(a - d))) / (2 * eps)
    return fd


@pytest.mark.parametrize("upper, want", [
    (False, [[-0.11947922425279185, 0.09006287630472647, 0.5349471087716418],
             [0.09006287630472647, 0.16178556999857388, -0.2264743021036219],
             [0.5349471087716418, -0.2264743021036219, 0.012630047578250897]]),
    (True, [[0.26715358480396867, -0.2074310860028792, -0.41242255275036704],
            [-0.2074310860028792, 0.1481169053096197, -0.11633776999197126],
            [-0.41242255275036704, -0.11633776999197126, 0.012630047578250897]])])
def test_cholesky_gradient_conventions(upper, want):
    """The cholesky gradient convention (session 32): each function's gradient is the
    derivative of the function as JAX documents it, checked by central differences.
    numpy.linalg.cholesky and lax.linalg.cholesky(symmetrize_input=True) factor
    (a + aᴴ)/2: the gradient is symmetric and equals jax 0.10.2's (stored, on a
    non-symmetric a). lax.linalg.cholesky(symmetrize_input=False) and scipy's cholesky
    "use only the lower (upper) triangle; the other is ignored" (JAX's docstring):
    the gradient is zero there; JAX's rule puts 1e-2-sized values into the ignored
    triangle (off its own finite differences by 1.2e-2), so functrans does not copy it;
    g + gᵀ agrees with JAX's."""
    from functrans import lax
    from functrans.scipy.linalg import cholesky
    a, w = _chol_inputs()

    def loss(x):
        return fnp.sum(fnp.linalg.cholesky(x, upper=upper) * w)
    g = np.asarray(ft.grad(loss)(a))
    np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(g, _central_differences(loss, a), atol=1e-8)
    g_sym = np.asarray(ft.grad(lambda x: fnp.sum(lax.linalg.cholesky(x) * w))(a))
    if not upper:
        np.testing.assert_allclose(g_sym, want, rtol=1e-12, atol=1e-15)

    def one_triangle(x):
        return fnp.sum(cholesky(x, lower=not upper) * w)
    g1 = np.asarray(ft.grad(one_triangle)(a))
    np.testing.assert_allclose(g1, _central_differences(one_triangle, a), atol=1e-8)
    assert not (np.triu(g1, 1) if not upper else np.tril(g1, -1)).any()
    g_lax = np.asarray(ft.grad(lambda x: fnp.sum(
        lax.linalg.cholesky(x, symmetrize_input=False) * w))(a))
    if not upper:
        np.testing.assert_allclose(g_lax, g1, rtol=1e-14, atol=1e-16)


def test_qr_full_mode_is_reduced_and_pinv_message():
    """testNumpyQrModes mode='full' (numpy's deprecated alias of 'reduced'; JAX takes it,
    functrans raised ValueError) and testPinvRcond's message."""
    for shape in ((4, 3), (3, 5)):
        a = _RS.randn(*shape)
        full, reduced = fnp.linalg.qr(a, mode="full"), fnp.linalg.qr(a, mode="reduced")
        for f, r in zip(full, reduced):
            assert np.array_equal(np.asarray(f), np.asarray(r))
        np.testing.assert_allclose(np.abs(np.asarray(full[1])),
                                   np.abs(np.linalg.qr(a)[1]), rtol=1e-13)
    with pytest.raises(ValueError, match=r"^pinv: only one of rtol and rcond may be "
                                         r"specified\.$"):
        fnp.linalg.pinv(np.eye(2), rtol=1e-3, rcond=1e-3)


def test_structured_matrix_argument_errors_as_jax():
    """linalg_test testCompanionInvalidLength, testConvolutionMatrixInvalidArgs,
    testDftInvalidDtype (dft(4, dtype=float32) was computed and cast, dropping the
    imaginary parts; JAX raises), testHadamardInvalidN, testInvpascalInvalidKind,
    testStringInfNorm: jax 0.10.2's message parts."""
    from functrans.scipy import linalg as fsl
    cases = [(lambda: fsl.companion(np.zeros(1)), "length of `a` along the last axis"),
             (lambda: fsl.convolution_matrix(np.ones(3), 0), "n must be a positive integer"),
             (lambda: fsl.convolution_matrix(np.ones(3), 3, mode="bad"), "mode must be one of"),
             (lambda: fsl.convolution_matrix(np.zeros(0), 3), r"len\(a\) must be at least 1"),
             (lambda: fsl.convolution_matrix(np.array(5.0), 3), "at least 1-dimensional"),
             (lambda: fsl.dft(4, dtype=np.float32), "dtype must be"),
             (lambda: fsl.hadamard(3), "positive power of 2"),
             (lambda: fsl.invpascal(3, kind="bad"), "Expected kind to be one of"),
             (lambda: fnp.linalg.norm(np.ones(3), ord="inf"),
              "Invalid order 'inf' for vector norm.")]
    for fun, message in cases:
        with pytest.raises(ValueError, match=message):
            fun()
    assert fsl.dft(4, dtype=np.complex64).dtype == np.complex64
