"""``fft`` under jit on the CPU backend calls numpy's pocketfft loops from the generated
code (``backends/llvm/pocketfft``): the primitive's numpy implementation is replaced by
one that fails, so a host step would raise. The results equal the eager ones (numpy's
``fftn``/``ifftn``/``rfftn``/``irfftn``) bit for bit over every FFT type, complex64 and
complex128, one to three axes, batches, prime lengths, length 1, empty batches, strided
operands, loops and derivatives; a struct that does not read as numpy's ufunc layout
leaves the primitive the host step it was."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from backends.llvm import pocketfft
from functrans import lax
from functrans.primitives.fft import fft_p
from functrans.tree_util import tree_leaves

RNG = np.random.default_rng(11)
pytestmark = pytest.mark.skipif(not pocketfft.available(), reason="numpy's pocketfft loops not found")


def _no_host_step(*args, **kwargs):
    raise AssertionError("fft ran as a host step")


def _native(monkeypatch, fun, *args):
    """fun's jit result with the numpy impl disabled, and the compiled cost analysis."""
    monkeypatch.setattr(fft_p, "impl", _no_host_step)
    try:
        jitted = ft.jit(fun, backend="cpu")
        return jitted(*args), jitted.lower(*args).compile().cost_analysis()
    finally:
        monkeypatch.undo()


def _bits_equal(got, want):
    for g, w in zip(tree_leaves(got), tree_leaves(want)):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.shape, g.dtype) == (w.shape, w.dtype)
        assert g.tobytes() == w.tobytes(), f"max difference {np.max(np.abs(g - w))}"


def _operand(fft_type, shape, lengths, cdtype):
    if fft_type == "RFFT":
        return RNG.standard_normal(shape).astype(np.zeros((), cdtype).real.dtype)
    if fft_type == "IRFFT":
        shape = shape[:-1] + (lengths[-1] // 2 + 1,)
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(cdtype)


SHAPES = [((8,), 1), ((1,), 1), ((13,), 1), ((3, 5), 2), ((2, 3, 7), 3), ((4, 6, 10), 2),
          ((64, 17), 1), ((5, 1, 6), 2), ((0, 4), 1), ((16, 16, 3), 1), ((2, 0, 3, 4), 2)]


@pytest.mark.parametrize("cdtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("fft_type", ["FFT", "IFFT", "RFFT", "IRFFT"])
def test_every_type_dtype_and_shape_is_native_and_bitwise_eager(monkeypatch, fft_type, cdtype):
    for shape, k in SHAPES:
        lengths = shape[-k:]
        x = _operand(fft_type, shape, lengths, cdtype)
        f = lambda v: lax.fft(v, fft_type, lengths)
        got, cost = _native(monkeypatch, f, x)
        assert cost["host steps"] == 0 and cost["host callbacks"] == 0
        _bits_equal(got, f(x))


def test_strided_and_broadcast_operands(monkeypatch):
    x = RNG.standard_normal((6, 5, 8)) + 1j * RNG.standard_normal((6, 5, 8))
    funs = [lambda v: lax.fft(fnp.transpose(v, (2, 0, 1)), "FFT", (6, 5)),
            lambda v: lax.fft(v[::-1, :, ::-1], "IFFT", (8,)),
            lambda v: lax.fft(fnp.broadcast_to(v[0], (4, 5, 8)), "FFT", (5, 8)),
            lambda v: lax.fft(v[:, 1:4, ::2], "IRFFT", (3, 6)),
            lambda v: lax.fft(fnp.transpose(v.real, (1, 2, 0)).astype(np.float32), "RFFT", (8, 6)),
            lambda v: lax.fft(fnp.broadcast_to(v[0, 0, 0], (4, 3)), "FFT", (4, 3))]
    for f in funs:
        got, cost = _native(monkeypatch, f, x)
        assert cost["host steps"] == 0
        _bits_equal(got, f(x))


def test_numpy_fft_functions_and_norms(monkeypatch):
    z = RNG.standard_normal((4, 6)) + 1j * RNG.standard_normal((4, 6))
    funs = [lambda v: fnp.fft.fftn(v, norm="ortho"), lambda v: fnp.fft.ifft2(v, s=(5, 7)),
            lambda v: fnp.fft.irfft(v, axis=0, norm="forward"),
            lambda v: fnp.fft.rfftn(v.real.astype(np.float32)),
            lambda v: fnp.fft.hfft(v.astype(np.complex64))]
    for f in funs:
        got, _ = _native(monkeypatch, f, z)
        _bits_equal(got, f(z))


def test_inside_fori_loop_and_scan_no_host_callback(monkeypatch):
    x = RNG.standard_normal((3, 8)) + 1j * RNG.standard_normal((3, 8))

    def loop(v):
        return lax.fori_loop(0, 20, lambda i, c: fnp.fft.ifft(fnp.fft.fft(c[..., ::-1]) + c), v)

    def scan(v):
        def body(c, row):
            return c + fnp.fft.irfft(row, n=14)[3], fnp.fft.rfft(row.real)
        return lax.scan(body, 0.0, v)

    for f in (loop, scan):
        got, cost = _native(monkeypatch, f, x)
        assert (cost["host steps"], cost["host callbacks"], cost["native segments"]) == (0, 0, 1)
        _bits_equal(got, f(x))


def test_grad_vjp_and_vmap_under_jit(monkeypatch):
    x = RNG.standard_normal((3, 4, 6))

    def loss(v):
        return fnp.sum(fnp.abs(fnp.fft.rfftn(v, axes=(0, 2))) ** 2 * fnp.arange(4.0)[:, None])
    got, _ = _native(monkeypatch, ft.grad(loss), x)
    _bits_equal(got, ft.grad(loss)(x))
    z = x + 1j * x[::-1]
    vjp = lambda v, ct: ft.vjp(lambda u: fnp.fft.ifftn(u, axes=(1, 2)), v)[1](ct)
    got, _ = _native(monkeypatch, vjp, z, z * 0.5)
    _bits_equal(got, vjp(z, z * 0.5))
    vm = ft.vmap(fnp.fft.fft2, in_axes=2)
    got, _ = _native(monkeypatch, vm, z)
    _bits_equal(got, vm(z))


def test_layout_check_refuses_what_is_not_pocketfft():
    from numpy.fft import _pocketfft_umath as pfu
    read = pocketfft._read(pfu.fft)
    assert read is not None and set(read) == {"d", "f"}
    assert pocketfft._read(np.add) is None           # the layout reads, the library differs
    assert pocketfft._read(np.linalg._umath_linalg.det) is None


def test_without_the_loops_fft_is_a_host_step_with_the_same_numbers(monkeypatch):
    x = RNG.standard_normal((3, 9)) + 1j * RNG.standard_normal((3, 9))
    f = lambda v: lax.fft(v * 2.0, "IFFT", (3, 9))
    monkeypatch.setattr(pocketfft, "_library", lambda: None)
    jitted = ft.jit(f, backend="cpu")
    assert jitted.lower(x).compile().cost_analysis()["host steps"] == 1
    _bits_equal(jitted(x), f(x))


def test_zero_length_transforms_are_refused():
    for t, x, n in [("FFT", np.zeros((3, 0), complex), (0,)), ("RFFT", np.zeros((3, 0)), (0,)),
                    ("IRFFT", np.zeros((3, 1), complex), (0,))]:
        for fun in (lambda v: lax.fft(v, t, n), ft.jit(lambda v: lax.fft(v, t, n))):
            with pytest.raises(ValueError, match="at least 1"):
                fun(x)
