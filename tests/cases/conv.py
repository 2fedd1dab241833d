"""Table rows for ``lax.conv_general_dilated`` and its front ends: strides, explicit and
named padding (negative pads crop), lhs and rhs dilation, feature and batch groups,
string dimension numbers (NHWC/HWIO, odd orders), 1-D/2-D/3-D, float32 and integers.

The reference is a direct loop over output positions and kernel taps (no im2col), so it
shares no code with the primitive's implementation."""
import numpy as np

from functrans import lax
from tests.cases import OpCase, gen, ints, randn


def _dilate_pad(x, padding, lhs_dilation):
    """x canonical (N, C, spatial...)."""
    shape = x.shape[:2] + tuple((n - 1) * d + 1 if n else 0
                                for n, d in zip(x.shape[2:], lhs_dilation))
    xd = np.zeros(shape, x.dtype)
    xd[(slice(None),) * 2 + tuple(slice(None, None, d) for d in lhs_dilation)] = x
    for j, (lo, hi) in enumerate(padding):
        ax = 2 + j
        if lo >= 0:
            xd = np.concatenate([np.zeros(xd.shape[:ax] + (lo,) + xd.shape[ax + 1:], x.dtype),
                                 xd], axis=ax)
        else:
            xd = np.take(xd, range(-lo, xd.shape[ax]), axis=ax)
        if hi >= 0:
            xd = np.concatenate([xd, np.zeros(xd.shape[:ax] + (hi,) + xd.shape[ax + 1:],
                                              x.dtype)], axis=ax)
        else:
            xd = np.take(xd, range(0, xd.shape[ax] + hi), axis=ax)
    return xd


def conv_reference(x, w, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                   dimension_numbers=None, feature_group_count=1, batch_group_count=1):
    """Direct-loop convolution with explicit (lo, hi) padding."""
    dn = lax.conv_dimension_numbers(x.shape, w.shape, dimension_numbers)
    x, w = np.transpose(x, dn.lhs_spec), np.transpose(w, dn.rhs_spec)
    nsp = x.ndim - 2
    lhs_dilation = lhs_dilation or (1,) * nsp
    rhs_dilation = rhs_dilation or (1,) * nsp
    xt = _dilate_pad(x, padding, lhs_dilation)
    G, B = feature_group_count, batch_group_count
    n, c = x.shape[:2]
    o, i = w.shape[:2]
    ksz = w.shape[2:]
    osz = tuple(max(0, (xt.shape[2 + j] - ((ksz[j] - 1) * rhs_dilation[j] + 1))
                    // window_strides[j] + 1) for j in range(nsp))
    out = np.zeros((n // B, o) + osz, np.result_type(x, w))
    og = o // max(G, B)
    for pos in np.ndindex(*osz):
        for kpos in np.ndindex(*ksz):
            idx = tuple(p * s + k * d for p, s, k, d in
                        zip(pos, window_strides, kpos, rhs_dilation))
            patch = xt[(slice(None), slice(None)) + idx]          # (N, C)
            tap = w[(slice(None), slice(None)) + kpos]            # (O, I)
            for oo in range(o):
                grp = oo // og
                if B > 1:
                    xs = patch[grp * (n // B):(grp + 1) * (n // B)]
                    out[(slice(None), oo) + pos] += xs @ tap[oo]
                else:
                    out[(slice(None), oo) + pos] += patch[:, grp * i:(grp + 1) * i] @ tap[oo]
    return np.transpose(out, np.argsort(dn.out_spec))


def _case(name, xs, ws, strides, padding, dtype=np.float64, ref_padding=None, **kw):
    def fun(x, w):
        return lax.conv_general_dilated(x, w, strides, padding, **kw)

    def ref(x, w):
        pads = ref_padding if ref_padding is not None else padding
        return conv_reference(x, w, strides, pads, **kw)
    if dtype.kind == "f" if isinstance(dtype, np.dtype) else np.dtype(dtype).kind == "f":
        args = gen(randn(*xs, dtype=dtype), randn(*ws, dtype=dtype))
        extra = {} if np.dtype(dtype) == np.float64 else dict(rtol=1e-5, atol=1e-5, diff=False)
    else:
        args = gen(ints(*xs, dtype=dtype), ints(*ws, dtype=dtype))
        extra = dict(diff=False)
    return OpCase(name, fun, args, ref, **extra)


CASES = [
    _case("conv_1d_valid", (2, 3, 7), (4, 3, 3), (1,), [(0, 0)]),
    _case("conv_2d_strided_padded", (2, 3, 6, 5), (4, 3, 3, 2), (2, 1), [(1, 2), (0, 1)]),
    _case("conv_2d_same", (1, 2, 5, 6), (3, 2, 3, 3), (1, 2), "SAME",
          ref_padding=[(1, 1), (0, 1)]),
    _case("conv_2d_negative_pad", (1, 2, 6, 6), (2, 2, 2, 2), (1, 1), [(-1, 1), (2, -2)]),
    _case("conv_2d_lhs_dilation", (2, 2, 4, 3), (3, 2, 3, 2), (1, 2), [(2, 2), (1, 0)],
          lhs_dilation=(2, 3)),
    _case("conv_2d_rhs_dilation", (1, 2, 8, 7), (2, 2, 3, 2), (2, 1), [(0, 1), (1, 1)],
          rhs_dilation=(2, 3)),
    _case("conv_2d_feature_groups", (2, 6, 5, 5), (9, 2, 2, 3), (1, 1), [(1, 0), (0, 1)],
          feature_group_count=3),
    _case("conv_2d_depthwise", (1, 4, 5, 5), (4, 1, 3, 3), (1, 1), [(1, 1), (1, 1)],
          feature_group_count=4),
    _case("conv_2d_batch_groups", (4, 3, 5, 4), (6, 3, 2, 2), (1, 1), [(0, 1), (1, 0)],
          batch_group_count=2),
    _case("conv_2d_nhwc_hwio", (2, 5, 4, 3), (3, 2, 3, 4), (1, 1), [(1, 1), (0, 0)],
          dimension_numbers=("NHWC", "HWIO", "NHWC")),
    _case("conv_2d_odd_layout", (5, 2, 4, 3), (2, 3, 4, 3), (2, 1), [(0, 0), (1, 1)],
          dimension_numbers=("HNWC", "WOHI", "CWHN")),
    _case("conv_3d", (1, 2, 4, 3, 4), (2, 2, 2, 2, 2), (1, 2, 1), [(0, 1), (0, 0), (1, 0)],
          rhs_dilation=(1, 1, 2)),
    _case("conv_2d_f32", (2, 3, 6, 6), (4, 3, 3, 3), (1, 1), [(1, 1), (1, 1)],
          dtype=np.float32),
    _case("conv_2d_int32", (1, 2, 4, 4), (2, 2, 2, 2), (1, 1), [(0, 0), (0, 0)],
          dtype=np.int32),
    OpCase("conv_transpose_same", lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME"),
           gen(randn(1, 3, 3, 2), randn(3, 3, 2, 2)),
           lambda x, w: conv_reference(x, w, (1, 1), [(2, 1), (2, 1)], lhs_dilation=(2, 2),
                                       dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    OpCase("conv_preferred_f64_precision",
           lambda x, w: lax.conv(x, w, (1, 1), "SAME", precision=lax.Precision.HIGHEST,
                                 preferred_element_type=np.float64),
           gen(randn(1, 2, 4, 4, dtype=np.float32), randn(3, 2, 3, 3, dtype=np.float32)),
           lambda x, w: conv_reference(x.astype(np.float64), w.astype(np.float64), (1, 1),
                                       [(1, 1), (1, 1)]), rtol=1e-6, atol=1e-6, diff=False),
    OpCase("lax_conv_valid", lambda x, w: lax.conv(x, w, (1, 1), "VALID"),
           gen(randn(2, 2, 4, 4), randn(3, 2, 2, 2)),
           lambda x, w: conv_reference(x, w, (1, 1), [(0, 0), (0, 0)])),
]
