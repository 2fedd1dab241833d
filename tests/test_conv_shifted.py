"""The stride-1 convolution path of ``conv_general_dilated``'s impl (one GEMM on the
flattened padded grid: few taps, or few outputs as in a kernel gradient) against the
direct-loop reference of the op table, over random shapes, paddings (negative ones crop),
kernel dilations, 1-D to 3-D, real and complex, and both branches."""
import numpy as np
import pytest

from functrans import lax
from functrans.primitives import conv as cv
from tests.cases.conv import conv_reference


def _cases(seed, count):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        nsp = int(rng.integers(1, 4))
        n, c, o = (int(v) for v in rng.integers(1, 4, 3))
        xs = tuple(int(v) for v in rng.integers(1, 7, nsp))
        ks = tuple(int(v) for v in rng.integers(1, 6, nsp))
        rd = tuple(int(v) for v in rng.integers(1, 3, nsp))
        pad = tuple((int(lo), int(hi)) for lo, hi in rng.integers(-2, 4, (nsp, 2)))
        if any(s - max(-lo, 0) - max(-hi, 0) < 0 for s, (lo, hi) in zip(xs, pad)):
            continue    # the reference crops before padding there; XLA's pad does not
        osp = cv.conv_out_spatial(xs, ks, (1,) * nsp, pad, (1,) * nsp, rd)
        if 0 in osp:
            continue
        out.append(((n, c) + xs, (o, c) + ks, pad, rd))
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("xs,ws,pad,rd", _cases(0, 40))
def test_stride_one_path_matches_direct_loop(xs, ws, pad, rd, dtype):
    rng = np.random.default_rng(abs(hash((xs, ws))) % 2**32)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    if np.dtype(dtype).kind == "c":
        x, w = x + 1j * rng.standard_normal(xs), w + 1j * rng.standard_normal(ws)
    x, w = x.astype(dtype), w.astype(dtype)
    nsp = len(xs) - 2
    got = lax.conv_general_dilated(x, w, (1,) * nsp, pad, rhs_dilation=rd)
    ref = conv_reference(x, w, (1,) * nsp, pad, None, rd)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    assert got.dtype == dtype
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


def test_both_branches_are_taken():
    """Few taps (a forward 3x3) and few outputs (its kernel gradient) both occur."""
    taken = []
    for xs, ws, pad, rd in _cases(0, 40):
        osp = cv.conv_out_spatial(xs[2:], ws[2:], (1,) * (len(xs) - 2), pad,
                                  (1,) * (len(xs) - 2), rd)
        taken.append(np.prod(ws[2:]) <= np.prod(osp))
    assert any(taken) and not all(taken)


def test_kernel_gradient_layout_nchw():
    """The kernel cotangent of a 'SAME' 3x3 convolution (the benchmark's shape, smaller):
    lhs and cotangent with swapped N/C specs, a 6x6 'kernel' and 3x3 outputs."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3, 6, 6)).astype(np.float32)
    ct = rng.standard_normal((4, 5, 6, 6)).astype(np.float32)
    sw = ((1, 0, 2, 3),) * 3
    got = cv.conv_general_dilated(x, ct, window_strides=(1, 1), padding=((1, 1), (1, 1)),
                                  lhs_dilation=(1, 1), rhs_dilation=(1, 1),
                                  dimension_numbers=sw)
    want = np.zeros((5, 3, 3, 3))
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    for i in range(3):
        for j in range(3):
            want[:, :, i, j] = np.einsum("nohw,nchw->oc", ct, xp[:, :, i:i + 6, j:j + 6])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
