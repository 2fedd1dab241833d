"""functrans.numpy.fft beyond the shared table: gradients of real losses against
finite differences for every transform family, jit on the default backend, vmap
over a non-leading axis, and the argument errors."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

RNG = np.random.default_rng(3)


def _fd(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


@pytest.mark.parametrize("name,fun,npfun", [
    ("fft", fnp.fft.fft, np.fft.fft),
    ("ifft_ortho", lambda x: fnp.fft.ifft(x, norm="ortho"), lambda x: np.fft.ifft(x, norm="ortho")),
    ("rfft_n7", lambda x: fnp.fft.rfft(x, n=7), lambda x: np.fft.rfft(x, n=7)),
    ("irfft_of_rfft", lambda x: fnp.fft.irfft(fnp.fft.rfft(x) * np.arange(1.0, 5.0)),
     lambda x: np.fft.irfft(np.fft.rfft(x) * np.arange(1.0, 5.0))),
    ("rfft2_forward", lambda x: fnp.fft.rfft2(fnp.reshape(x, (2, 3)), norm="forward"),
     lambda x: np.fft.rfft2(x.reshape(2, 3), norm="forward")),
    ("hfft", fnp.fft.hfft, np.fft.hfft),
])
def test_grad_of_real_loss_against_finite_differences(name, fun, npfun):
    x = RNG.standard_normal(6)
    w = RNG.standard_normal(np.shape(npfun(x)))

    def loss(v):     # |·|² of a complex output: a real, non-holomorphic loss
        out = fun(v)
        return fnp.sum(fnp.abs(out) ** 2 * w)

    g = ft.grad(loss)(x)
    fd = _fd(lambda v: float(np.sum(np.abs(npfun(v)) ** 2 * w)), x)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ft.jit(ft.grad(loss))(x), g, rtol=1e-10, atol=1e-12)


def test_jit_default_backend_and_vmap_non_leading_axis():
    x = RNG.standard_normal((4, 3, 8))
    got = ft.jit(lambda v: fnp.fft.rfftn(v, axes=(0, 2)))(x)
    np.testing.assert_allclose(got, np.fft.rfftn(x, axes=(0, 2)), rtol=1e-12, atol=1e-12)
    got = ft.vmap(fnp.fft.fft, in_axes=1, out_axes=1)(x)
    np.testing.assert_allclose(got, np.fft.fft(x, axis=-1), rtol=1e-12, atol=1e-12)


def test_round_trips():
    x = RNG.standard_normal((3, 5))
    np.testing.assert_allclose(fnp.fft.irfft(fnp.fft.rfft(x), n=5), x, atol=1e-12)
    np.testing.assert_allclose(fnp.fft.ifftn(fnp.fft.fftn(x)).real, x, atol=1e-12)
    np.testing.assert_allclose(fnp.fft.ihfft(fnp.fft.hfft(x[0, :3] + 0j)), x[0, :3], atol=1e-12)


def test_errors():
    with pytest.raises(ValueError, match="norm"):
        fnp.fft.fft(np.ones(3), norm="bad")
    with pytest.raises(TypeError, match="real"):
        fnp.fft.rfft(np.ones(3) + 1j)
    with pytest.raises(ValueError, match="data points"):
        fnp.fft.fft(np.ones(3), n=0)
    with pytest.raises(ValueError, match="same length"):
        fnp.fft.fftn(np.ones((2, 2)), s=(2,), axes=(0, 1))
    # lax.fft converts real input of FFT to complex, as JAX's (tests/test_jax_fft_port.py)
    with pytest.raises(ValueError, match="real input"):
        ft.lax.fft(np.ones(3) + 0j, "RFFT", (3,))


@pytest.mark.parametrize("jit", [False, True])
def test_zero_length_axes_give_empty_results_as_jax(jit):
    """jax 0.10.2: a transform over an axis of length 0 is an empty array (it was a
    trace-time ValueError); n=0 / s with a 0 and an rfft of an empty last axis raise
    ValueError in JAX and here."""
    run = (lambda f: ft.jit(f, backend="cpu")) if jit else (lambda f: f)
    f32, c64 = np.zeros((3, 0), np.float32), np.zeros((0, 4), np.complex64)
    cases = [  # (function, input, kwargs, JAX's shape and dtype)
        (fnp.fft.fft, np.zeros(0), {}, ((0,), np.complex128)),
        (fnp.fft.ifft, f32, {}, ((3, 0), np.complex64)),
        (fnp.fft.fft, c64, {"axis": 0}, ((0, 4), np.complex64)),
        (fnp.fft.irfft, np.zeros(0), {}, ((0,), np.float64)),
        (fnp.fft.irfft, np.zeros(1), {}, ((0,), np.float64)),      # n = 2 (1 - 1) = 0
        (fnp.fft.irfft, c64, {"axis": 0}, ((0, 4), np.float32)),
        (fnp.fft.hfft, np.zeros((3, 0)), {}, ((3, 0), np.float64)),
        (fnp.fft.fftn, np.zeros((0, 4)), {}, ((0, 4), np.complex128)),
        (fnp.fft.ifft2, f32, {"norm": "ortho"}, ((3, 0), np.complex64)),
        (fnp.fft.rfftn, np.zeros((0, 4), np.float32), {}, ((0, 3), np.complex64)),
        (fnp.fft.irfftn, np.zeros((0, 4)), {"norm": "forward"}, ((0, 6), np.float64)),
        (fnp.fft.irfft2, np.zeros((3, 0)), {}, ((3, 0), np.float64)),
    ]
    for f, x, kw, (shape, dtype) in cases:
        got = run(lambda v, f=f, kw=kw: f(v, **kw))(x)
        assert (got.shape, got.dtype) == (shape, dtype), (f.__name__, x.shape, kw)
    for f, x, kw in [(fnp.fft.rfft, np.zeros(0), {}), (fnp.fft.rfftn, f32, {}),
                     (fnp.fft.fft, np.ones(4), {"n": 0}),
                     (fnp.fft.irfftn, np.ones((3, 4)), {"s": (3, 0)})]:
        with pytest.raises(ValueError):
            run(lambda v, f=f, kw=kw: f(v, **kw))(x)
    assert fnp.fft.fftfreq(0).shape == (0,) and np.isnan(fnp.fft.rfftfreq(0)).all()
    assert ft.grad(lambda v: fnp.fft.fft(v).real.sum())(np.zeros(0)).shape == (0,)


def test_public_names():
    assert sorted(fnp.fft.__all__) == sorted(
        ["fft", "ifft", "rfft", "irfft", "fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2",
         "rfft2", "irfft2", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"])
    import functrans.numpy.fft as mod
    assert mod is fnp.fft


def test_out_of_range_axes_raise_instead_of_wrapping():
    # fftn(x(2, 3), axes=[2]) used to transform axis 0 (2 % 2): a wrong number, not an error
    x = np.arange(6.0).reshape(2, 3)
    for f, kw in [(fnp.fft.fftn, {"axes": [2]}), (fnp.fft.fftn, {"axes": [-3]}),
                  (fnp.fft.rfft2, {"axes": [2, 3]}), (fnp.fft.fft, {"axis": 2}),
                  (fnp.fft.irfft, {"axis": -3})]:
        with pytest.raises(ValueError, match="out of bounds"):
            f(x, **kw)
    np.testing.assert_allclose(fnp.fft.fftn(x, axes=[-2]), np.fft.fftn(x, axes=[-2]))


def test_lax_fft_takes_lower_case_kinds():
    x = np.arange(5.0) + 1j
    np.testing.assert_allclose(ft.lax.fft(x, "fft", fft_lengths=(5,)), np.fft.fft(x))
    np.testing.assert_allclose(ft.lax.fft(x, "ifft", fft_lengths=(5,)), np.fft.ifft(x))
