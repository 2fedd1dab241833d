"""Table rows for the ``fft`` primitive and ``functrans.numpy.fft``. Complex inputs
are built inside the function from real and imaginary parts (``lax.complex``) and
complex outputs are returned as their parts, so the finite-difference JVP, the VJP
identity and vmap(grad) check every transpose rule (RFFT and IRFFT included)."""
import numpy as np

import functrans.numpy as fnp
from functrans import lax
from tests.cases import OpCase, gen, randn

CASES = []


def row(name, fun, args, ref, **kw):
    CASES.append(OpCase(name, fun, args, ref, **kw))


def _parts(z):
    return (fnp.real(z), fnp.imag(z)) if z.dtype.kind == "c" else z


def _np_parts(z):
    return (z.real, z.imag) if np.iscomplexobj(z) else z


def complex_row(name, fn, npfn, shape, **kw):
    """A row for a transform of complex input given as (re, im) parts."""
    row(name, lambda re, im: _parts(fn(lax.complex(re, im))), gen(randn(*shape), randn(*shape)),
        lambda re, im: _np_parts(npfn(re + 1j * im)), **kw)


def real_row(name, fn, npfn, shape, **kw):
    row(name, lambda x: _parts(fn(x)), gen(randn(*shape)), lambda x: _np_parts(npfn(x)), **kw)


F, N = fnp.fft, np.fft
for _norm in (None, "ortho", "forward"):
    _t = str(_norm)
    complex_row(f"fft_fft_{_t}", lambda z, o=_norm: F.fft(z, norm=o),
                lambda z, o=_norm: N.fft(z, norm=o), (2, 5))
    complex_row(f"fft_ifft_{_t}", lambda z, o=_norm: F.ifft(z, norm=o),
                lambda z, o=_norm: N.ifft(z, norm=o), (5,))
    real_row(f"fft_rfft_{_t}", lambda x, o=_norm: F.rfft(x, norm=o),
             lambda x, o=_norm: N.rfft(x, norm=o), (2, 6))
    complex_row(f"fft_irfft_{_t}", lambda z, o=_norm: F.irfft(z, norm=o),
                lambda z, o=_norm: N.irfft(z, norm=o), (2, 4))
    complex_row(f"fft_hfft_{_t}", lambda z, o=_norm: F.hfft(z, norm=o),
                lambda z, o=_norm: N.hfft(z, norm=o), (4,))
    real_row(f"fft_ihfft_{_t}", lambda x, o=_norm: F.ihfft(x, norm=o),
             lambda x, o=_norm: N.ihfft(x, norm=o), (5,))
    complex_row(f"fft_fftn_{_t}", lambda z, o=_norm: F.fftn(z, norm=o),
                lambda z, o=_norm: N.fftn(z, norm=o), (2, 3, 4))
    real_row(f"fft_rfftn_{_t}", lambda x, o=_norm: F.rfftn(x, norm=o),
             lambda x, o=_norm: N.rfftn(x, norm=o), (3, 4))
    complex_row(f"fft_irfftn_{_t}", lambda z, o=_norm: F.irfftn(z, norm=o),
                lambda z, o=_norm: N.irfftn(z, norm=o), (3, 3))

# lengths: crop / pad, odd / even, other axes
complex_row("fft_fft_n_pad_axis0", lambda z: F.fft(z, n=6, axis=0),
            lambda z: N.fft(z, n=6, axis=0), (4, 2))
complex_row("fft_fft_n_crop", lambda z: F.fft(z, n=3), lambda z: N.fft(z, n=3), (2, 5))
complex_row("fft_ifft_n_pad", lambda z: F.ifft(z, n=7), lambda z: N.ifft(z, n=7), (4,))
real_row("fft_rfft_odd_n", lambda x: F.rfft(x, n=7), lambda x: N.rfft(x, n=7), (5,))
real_row("fft_rfft_axis0", lambda x: F.rfft(x, axis=0), lambda x: N.rfft(x, axis=0), (5, 3))
complex_row("fft_irfft_odd_n", lambda z: F.irfft(z, n=7), lambda z: N.irfft(z, n=7), (4,))
complex_row("fft_irfft_crop", lambda z: F.irfft(z, n=4), lambda z: N.irfft(z, n=4), (2, 5))
complex_row("fft_irfft_axis0", lambda z: F.irfft(z, axis=0), lambda z: N.irfft(z, axis=0),
            (4, 3))
complex_row("fft_hfft_n", lambda z: F.hfft(z, n=5), lambda z: N.hfft(z, n=5), (3,))
real_row("fft_ihfft_n", lambda x: F.ihfft(x, n=4), lambda x: N.ihfft(x, n=4), (6,))
complex_row("fft_fftn_s_axes", lambda z: F.fftn(z, s=(3, 5), axes=(0, 2)),
            lambda z: N.fftn(z, s=(3, 5), axes=(0, 2)), (2, 3, 4))
complex_row("fft_ifftn_s", lambda z: F.ifftn(z, s=(2, 3)),
            lambda z: N.ifftn(z, s=(2, 3), axes=(1, 2)),
            (2, 3, 4))
real_row("fft_rfftn_s_axes", lambda x: F.rfftn(x, s=(4, 5), axes=(2, 0)),
         lambda x: N.rfftn(x, s=(4, 5), axes=(2, 0)), (3, 2, 4))
complex_row("fft_irfftn_s", lambda z: F.irfftn(z, s=(2, 5)),
            lambda z: N.irfftn(z, s=(2, 5), axes=(1, 2)), (3, 2, 3))
complex_row("fft_fft2", F.fft2, N.fft2, (2, 3, 4))
complex_row("fft_ifft2", F.ifft2, N.ifft2, (3, 4))
real_row("fft_rfft2", F.rfft2, N.rfft2, (2, 3, 4))
complex_row("fft_irfft2", F.irfft2, N.irfft2, (3, 4))
real_row("fft_fft_of_real", F.fft, N.fft, (2, 5))
row("fft_fft_f32", lambda x: _parts(F.fft(x)), gen(randn(6, dtype=np.float32)),
    lambda x: _np_parts(N.fft(x).astype(np.complex64)), rtol=1e-5, atol=1e-5, fd_tol=1e-3)
row("fft_irfft_f32", lambda x: F.irfft(x), gen(randn(6, dtype=np.float32)),
    lambda x: N.irfft(x).astype(np.float32), rtol=1e-5, atol=1e-5, fd_tol=1e-3)
row("fft_fftfreq", lambda d: F.fftfreq(7, d), [np.float64(0.5)], lambda d: N.fftfreq(7, d),
    batch=False)
row("fft_rfftfreq", lambda d: F.rfftfreq(8, d), [np.float64(0.1)], lambda d: N.rfftfreq(8, d),
    batch=False)
real_row("fft_fftshift", F.fftshift, N.fftshift, (4, 5))
real_row("fft_ifftshift_axis", lambda x: F.ifftshift(x, axes=1),
         lambda x: N.ifftshift(x, axes=1), (4, 5))
row("lax_fft_irfft", lambda re, im: lax.fft(lax.complex(re, im), "IRFFT", (3, 6)),
    gen(randn(2, 3, 4), randn(2, 3, 4)), lambda re, im: N.irfftn(re + 1j * im, s=(3, 6),
                                                                   axes=(1, 2)))
row("lax_fft_rfft", lambda x: _parts(lax.fft(x, "RFFT", (3, 5))), gen(randn(3, 5)),
    lambda x: _np_parts(N.rfftn(x)))
