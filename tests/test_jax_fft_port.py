"""Regressions found by running JAX's tests/fft_test.py against functrans (driver in
/work/jt30/jtnumpy): where ``lax.fft`` / ``fnp.fft`` raised on input JAX takes."""
import numpy as np
import pytest

import functrans as ft
import functrans.lax as lax
import functrans.numpy as fnp


def test_lax_fft_converts_a_real_operand():
    """fft_test.testLaxFftErrors / testIrfftTranspose: JAX's lax.fft turns real input of
    FFT, IFFT and IRFFT into complex (float32 -> complex64); functrans raised TypeError."""
    x = np.random.default_rng(0).normal(size=(4, 6))
    got = lax.fft(x, "fft", (6,))
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, np.fft.fft(x), rtol=1e-13, atol=1e-13)
    got = ft.jit(lambda v: lax.fft(v, "IFFT", (4, 6)))(x)
    np.testing.assert_allclose(got, np.fft.ifftn(x), rtol=1e-13, atol=1e-15)
    x32 = x.astype(np.float32)
    got = lax.fft(x32, "irfft", (4, 10))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.fft.irfftn(x, s=(4, 10), axes=(0, 1)), rtol=1e-5, atol=1e-6)
    ints = np.arange(6, dtype=np.int32)
    np.testing.assert_allclose(lax.fft(ints, "rfft", (6,)), np.fft.rfft(ints.astype(float)),
                               rtol=1e-13, atol=1e-13)
    # linear in the real input: the transpose takes the real part of the cotangent
    ft.test_util.check_grads(lambda v: lax.fft(v, "fft", (6,)), (x,), order=2)


def test_lax_fft_complex_rfft_and_no_lengths():
    """RFFT of complex input is a ValueError (JAX's); no fft_lengths transforms nothing
    and returns the converted operand, as JAX's."""
    with pytest.raises(ValueError, match="RFFT needs real input"):
        lax.fft(np.ones(4, np.complex64), "rfft", (4,))
    got = lax.fft(np.arange(3.0), "fft", ())
    assert got.dtype == np.complex128 and got.tolist() == [0j, 1 + 0j, 2 + 0j]


@pytest.mark.parametrize("name", ["rfft", "ihfft", "rfftn"])
def test_real_transforms_of_float16(name):
    """fft_test.testFft (real dtypes): rfft/ihfft of float16 raised KeyError; they
    compute in float64 as fft of float16 and of bfloat16 do."""
    x = np.random.default_rng(1).normal(size=7).astype(np.float16)
    got = getattr(fnp.fft, name)(x)
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, getattr(np.fft, name)(x.astype(np.float64)),
                               rtol=1e-13, atol=1e-15)
    assert ft.jit(getattr(fnp.fft, name))(x).dtype == np.complex128
