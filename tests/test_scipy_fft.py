"""functrans.scipy.fft (dct, idct, dctn, idctn) against scipy.fft over shapes, lengths,
axes and norms; derivatives against finite differences; jit equals eager; vmap
equals a loop; the types and norms JAX leaves out raise clearly."""
import numpy as np
import pytest
import scipy.fft as sf

import functrans as ft
import functrans.numpy as fnp
from functrans.scipy import fft as ff
from functrans.test_util import check_grads

RNG = np.random.default_rng(0)
SHAPES = [(1,), (2,), (7,), (8,), (3, 5), (4, 6, 5)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("norm", [None, "backward", "ortho"])
@pytest.mark.parametrize("name", ["dct", "idct"])
def test_1d_matches_scipy(shape, norm, name):
    x = RNG.normal(size=shape)
    for n in (None, 1, 3, 9):
        for axis in range(-len(shape), len(shape)):
            got = getattr(ff, name)(x, n=n, axis=axis, norm=norm)
            want = getattr(sf, name)(x, n=n, axis=axis, norm=norm)
            assert got.shape == want.shape
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(3, 5), (4, 6, 5), (2, 3, 2, 3)], ids=str)
@pytest.mark.parametrize("norm", [None, "ortho"])
@pytest.mark.parametrize("name", ["dctn", "idctn"])
def test_nd_matches_scipy(shape, norm, name):
    x = RNG.normal(size=shape)
    for s, axes in [(None, None), (None, (0,)), (None, (-1, 0)), ((4, 2), None),
                    ((3,), (1,)), (None, 1)]:
        got = getattr(ff, name)(x, s=s, axes=axes, norm=norm)
        want = getattr(sf, name)(x, s=s, axes=axes, norm=norm)
        assert got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


def test_round_trip_and_dtypes():
    x = RNG.normal(size=(5, 4))
    for norm in (None, "ortho"):
        np.testing.assert_allclose(np.asarray(ff.idct(ff.dct(x, norm=norm), norm=norm)), x,
                                   atol=1e-13)
        np.testing.assert_allclose(np.asarray(ff.idctn(ff.dctn(x, norm=norm), norm=norm)), x,
                                   atol=1e-13)
    x32 = x.astype(np.float32)
    assert ff.dct(x32).dtype == np.float32 and ff.idctn(x32).dtype == np.float32
    np.testing.assert_allclose(np.asarray(ff.dct(x32)), sf.dct(x), rtol=1e-5, atol=1e-5)
    assert ff.dct(np.arange(4)).dtype == np.float64
    np.testing.assert_allclose(np.asarray(ff.dct(np.arange(4))), sf.dct(np.arange(4.0)))
    z = x + 1j * RNG.normal(size=x.shape)
    np.testing.assert_allclose(np.asarray(ff.dct(z)), sf.dct(z), atol=1e-12)
    np.testing.assert_allclose(np.asarray(ff.idctn(z, norm="ortho")),
                               sf.idctn(z, norm="ortho"), atol=1e-12)


@pytest.mark.parametrize("name", ["dct", "idct", "dctn", "idctn"])
def test_derivatives(name):
    fn = getattr(ff, name)
    x = fnp.asarray(RNG.normal(size=(3, 4)))
    check_grads(lambda v: fn(v, norm="ortho"), (x,), order=1)
    check_grads(lambda v: fn(v), (x,), order=1)


@pytest.mark.parametrize("name", ["dct", "idct", "dctn", "idctn"])
def test_jit_and_vmap(name):
    fn = getattr(ff, name)
    x = RNG.normal(size=(3, 6))
    np.testing.assert_allclose(np.asarray(ft.jit(fn)(x)), np.asarray(fn(x)), atol=1e-12)
    batched = ft.vmap(lambda v: fn(v, norm="ortho"))(x)
    looped = np.stack([np.asarray(fn(v, norm="ortho")) for v in x])
    np.testing.assert_allclose(np.asarray(batched), looped, atol=1e-12)


def test_unsupported_raises_clearly():
    x = np.ones(4)
    for name in ("dct", "idct", "dctn", "idctn"):
        with pytest.raises(ValueError, match="only DCT type 2"):
            getattr(ff, name)(x, type=3)
        with pytest.raises(ValueError, match="norm='forward'"):
            getattr(ff, name)(x, norm="forward")
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        ff.dct(x, axis=2)
    with pytest.raises(ValueError, match="n must be a positive length"):
        ff.dct(x, n=0)
    with pytest.raises(ValueError, match="s must have at most"):
        ff.dctn(x, s=(2, 2))
    with pytest.raises(ValueError, match="length 0"):
        ff.dct(np.ones((0,)))
    with pytest.raises(TypeError, match="numeric"):
        ff.dct(np.array(["a", "b"]))


def test_dct_takes_booleans_as_scipy():
    # JAX 0.10.2's scipy_fft_test.testDct / testDctn / testiDct / testiDctn run bool inputs
    # (jtu.dtypes.boolean); functrans raised "x must be numeric"
    x = np.array([[True, False, True, True, False], [False, False, True, False, True]])
    for name in ("dct", "idct", "dctn", "idctn"):
        got = getattr(ff, name)(x, norm="ortho")
        np.testing.assert_allclose(got, getattr(sf, name)(x, norm="ortho"), rtol=1e-12,
                                   atol=1e-12)
        assert got.dtype == np.float64
