"""The JAX-style convolution functions of ``functrans.lax``: ``conv_general_dilated``,
``conv``, ``conv_with_general_padding``, ``conv_transpose``, ``conv_dimension_numbers``
and ``ConvDimensionNumbers``, all binding the one ``conv_general_dilated`` primitive.

Dimension numbers are ``None`` (NCHW / OIHW / NCHW), three strings such as
``('NHWC', 'HWIO', 'NHWC')`` (the spatial letters ordered as in the kernel's string),
or a ``ConvDimensionNumbers`` of int tuples. Padding is ``'VALID'``, ``'SAME'``,
``'SAME_LOWER'`` or one ``(lo, hi)`` pair per spatial dim. ``precision`` is checked and
ignored (full precision always, see ``functrans.precision``).

>>> import numpy as np
>>> conv(np.ones((1, 1, 4, 4)), np.ones((2, 1, 3, 3)), (1, 1), "SAME").shape
(1, 2, 4, 4)
"""
from __future__ import annotations

from typing import NamedTuple, Optional, Sequence, Union

import numpy as np

from ..precision import PrecisionLike, check_precision
from ..transforms.ad_util import aval
from . import conv_rules  # noqa: F401  (attaches the JVP, transpose and batching rules)
from .conv import conv_general_dilated as _bind_conv, conv_out_spatial
from .slicing import concatenate, pad, rev, slice as _slice
from .structural import reshape
from .elementwise import convert_element_type
from .dot import dot_general
from .basic import transpose
from ..typing import Array, ArrayLike, DTypeLike, Shape

__all__ = ["ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_dilated",
           "conv", "conv_with_general_padding", "conv_transpose", "padtype_to_pads",
           "conv_general_dilated_patches", "conv_general_dilated_local"]


class ConvDimensionNumbers(NamedTuple):
    """Positions of (batch, feature, spatial...) in lhs and output, and of
    (out feature, in feature, spatial...) in the kernel.

    >>> ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2)).rhs_spec
    (0, 1, 2)
    """
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


# what ``dimension_numbers=`` may be: None, three spec strings, or ConvDimensionNumbers
ConvDimensionsLike = Union[None, ConvDimensionNumbers, Sequence[str]]


def _spec_perm(spec, pair, rhs_spec):
    for ch in pair:
        if spec.count(ch) != 1:
            raise TypeError(f"convolution dimension_numbers {spec!r} must contain {ch!r} "
                            f"exactly once")
    if len(set(spec)) != len(spec):
        raise TypeError(f"convolution dimension_numbers {spec!r} repeat a character")
    spatial = [i for i, c in enumerate(spec) if c not in pair]
    if spec is not rhs_spec:
        spatial.sort(key=lambda i: rhs_spec.index(spec[i]))
    return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: ConvDimensionsLike) -> ConvDimensionNumbers:
    """Canonical ``ConvDimensionNumbers`` from None, three spec strings or the tuple itself.

    >>> conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC"))
    ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
    """
    nd = len(lhs_shape)
    if len(rhs_shape) != nd:
        raise TypeError(f"convolution: lhs rank {nd} and rhs rank {len(rhs_shape)} differ")
    if dimension_numbers is None:
        return ConvDimensionNumbers(*((tuple(range(nd)),) * 3))
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(dimension_numbers) != 3:
        raise TypeError(f"convolution dimension_numbers must have 3 entries, got "
                        f"{dimension_numbers!r}")
    if all(isinstance(s, str) for s in dimension_numbers):
        lhs, rhs, out = dimension_numbers
        if any(len(s) != nd for s in dimension_numbers):
            raise TypeError(f"convolution dimension_numbers {dimension_numbers!r} do not "
                            f"match rank {nd}")
        if not set(lhs) - set("NC") == set(rhs) - set("OI") == set(out) - set("NC"):
            raise TypeError(f"convolution dimension_numbers {dimension_numbers!r} must "
                            f"share the same spatial characters")
        return ConvDimensionNumbers(_spec_perm(lhs, "NC", rhs), _spec_perm(rhs, "OI", rhs),
                                    _spec_perm(out, "NC", rhs))
    return ConvDimensionNumbers(*(tuple(int(d) for d in s) for s in dimension_numbers))


def padtype_to_pads(in_shape: Shape, window_shape: Shape, window_strides: Sequence[int],
                    padding: str) -> list:
    """(lo, hi) pairs for ``'VALID'``, ``'SAME'`` (extra pad high) or ``'SAME_LOWER'``.

    >>> padtype_to_pads((5,), (3,), (2,), "SAME")
    [(1, 1)]
    """
    p = padding.upper()
    if p == "VALID":
        return [(0, 0)] * len(in_shape)
    if p not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"padding: unknown name {padding!r}; use 'VALID', 'SAME', "
                         f"'SAME_LOWER' or (lo, hi) pairs")
    pads = []
    for n, k, s in zip(in_shape, window_shape, window_strides):
        out = -(-n // s)
        total = max((out - 1) * s + k - n, 0)
        lo = total // 2 if p == "SAME" else total - total // 2
        pads.append((lo, total - lo))
    return pads


def conv_general_dilated(lhs: ArrayLike, rhs: ArrayLike, window_strides: Sequence[int],
                         padding: Union[str, Sequence[tuple]],
                         lhs_dilation: Optional[Sequence[int]] = None,
                         rhs_dilation: Optional[Sequence[int]] = None,
                         dimension_numbers: ConvDimensionsLike = None,
                         feature_group_count: int = 1, batch_group_count: int = 1,
                         precision: PrecisionLike = None,
                         preferred_element_type: DTypeLike | None = None) -> Array:
    """General dilated, strided, padded, grouped N-d convolution (JAX's signature).

    >>> import numpy as np
    >>> x, w = np.ones((2, 5, 5, 3)), np.ones((3, 3, 3, 4))
    >>> conv_general_dilated(x, w, (1, 1), "VALID",
    ...                      dimension_numbers=("NHWC", "HWIO", "NHWC")).shape
    (2, 3, 3, 4)
    """
    check_precision(precision)
    la, ra = aval(lhs), aval(rhs)
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    nsp = la.ndim - 2
    lhs_dilation = (1,) * nsp if lhs_dilation is None else tuple(lhs_dilation)
    rhs_dilation = (1,) * nsp if rhs_dilation is None else tuple(rhs_dilation)
    window_strides = tuple(window_strides)
    if len(window_strides) != nsp:
        raise TypeError(f"conv_general_dilated: window_strides {window_strides} needs "
                        f"{nsp} entries")
    for name, v in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                    ("rhs_dilation", rhs_dilation)):
        if any(int(s) < 1 for s in v):   # a zero stride raised ZeroDivisionError
            raise ValueError(f"conv_general_dilated: {name} {v} must all be >= 1 (lhs "
                             f"{la.str_short()}, rhs {ra.str_short()})")
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ValueError("conv_general_dilated: string padding with lhs_dilation is "
                             "ambiguous; give (lo, hi) pairs or use conv_transpose")
        ksz = [(ra.shape[d] - 1) * r + 1 for d, r in zip(dn.rhs_spec[2:], rhs_dilation)]
        padding = padtype_to_pads([la.shape[d] for d in dn.lhs_spec[2:]], ksz,
                                  window_strides, padding)
    return _bind_conv(lhs, rhs, window_strides=window_strides, padding=padding,
                      lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
                      dimension_numbers=tuple(dn), feature_group_count=feature_group_count,
                      batch_group_count=batch_group_count,
                      preferred_element_type=preferred_element_type)


def conv(lhs: ArrayLike, rhs: ArrayLike, window_strides: Sequence[int],
         padding: str | Sequence[tuple[int, int]], precision: PrecisionLike = None,
         preferred_element_type: DTypeLike | None = None) -> Array:
    """NCHW / OIHW convolution without dilation.

    >>> import numpy as np
    >>> conv(np.ones((1, 1, 3)), np.ones((1, 1, 2)), (1,), "VALID").tolist()
    [[[2.0, 2.0]]]
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: ArrayLike, rhs: ArrayLike, window_strides: Sequence[int],
                              padding: str | Sequence[tuple[int, int]],
                              lhs_dilation: Sequence[int], rhs_dilation: Sequence[int],
                              precision: PrecisionLike = None,
                              preferred_element_type: DTypeLike | None = None) -> Array:
    """NCHW / OIHW convolution with explicit padding and dilations.

    >>> import numpy as np
    >>> conv_with_general_padding(np.ones((1, 1, 3)), np.ones((1, 1, 2)), (1,), [(1, 1)],
    ...                           (2,), (1,)).shape
    (1, 1, 6)
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation,
                                rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _transpose_padding(k, s, padding):
    if padding == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        lo = k - 1
    else:
        raise ValueError(f"conv_transpose: unknown padding {padding!r}")
    return lo, total - lo


_TRANSPOSE_DEFAULT_DN = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                         4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs: ArrayLike, rhs: ArrayLike, strides: Sequence[int],
                   padding: str | Sequence[tuple[int, int]],
                   rhs_dilation: Sequence[int] | None = None,
                   dimension_numbers: ConvDimensionsLike = None,
                   transpose_kernel: bool = False, precision: PrecisionLike = None,
                   preferred_element_type: DTypeLike | None = None,
                   use_consistent_padding: bool = False) -> Array:
    """Fractionally strided convolution (JAX's ``conv_transpose``: 'SAME'/'VALID' name the
    forward convolution's padding, explicit pairs pad the transposed one; with
    ``use_consistent_padding`` (JAX 0.10's) pairs too are the forward convolution's
    ``(lo, hi)``, the transposed one padding ``k - 1 - lo`` and ``k - 1 - hi`` for the
    dilated kernel size ``k``, so it is the gradient of that convolution, as PyTorch's).

    >>> import numpy as np
    >>> conv_transpose(np.ones((1, 4, 4, 2)), np.ones((3, 3, 2, 5)), (2, 2), "SAME").shape
    (1, 8, 8, 5)
    >>> conv_transpose(np.ones((1, 4, 2)), np.ones((3, 2, 5)), (2,), [(1, 1)],
    ...                use_consistent_padding=True).shape
    (1, 7, 5)
    """
    la, ra = aval(lhs), aval(rhs)
    if dimension_numbers is None:
        if la.ndim not in _TRANSPOSE_DEFAULT_DN:
            raise ValueError(f"conv_transpose: no default dimension numbers for rank {la.ndim}")
        dimension_numbers = _TRANSPOSE_DEFAULT_DN[la.ndim]
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    nsp = la.ndim - 2
    rhs_dilation = (1,) * nsp if rhs_dilation is None else tuple(rhs_dilation)
    ksz = [ra.shape[d] for d in dn.rhs_spec[2:]]
    if isinstance(padding, str):
        pads = [_transpose_padding((k - 1) * r + 1, s, padding.upper())
                for k, r, s in zip(ksz, rhs_dilation, strides)]
    elif use_consistent_padding:
        pads = [(k_eff - 1 - int(lo), k_eff - 1 - int(hi)) for k_eff, (lo, hi) in
                zip(((k - 1) * r + 1 for k, r in zip(ksz, rhs_dilation)), padding)]
    else:
        pads = [tuple(p) for p in padding]
    if transpose_kernel:
        rhs = rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(ra.ndim))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        rhs = transpose(rhs, tuple(perm))
    return conv_general_dilated(lhs, rhs, (1,) * nsp, pads, tuple(strides), rhs_dilation, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_patches(lhs: ArrayLike, filter_shape: Sequence[int],
                                 window_strides: Sequence[int],
                                 padding: str | Sequence[tuple[int, int]],
                                 lhs_dilation: Sequence[int] | None = None,
                                 rhs_dilation: Sequence[int] | None = None,
                                 dimension_numbers: ConvDimensionsLike = None,
                                 precision: PrecisionLike = None,
                                 preferred_element_type: DTypeLike | None = None) -> Array:
    """The patches a ``conv_general_dilated`` with kernel size ``filter_shape`` would
    contract (im2col): feature ``c * prod(filter_shape) + k`` of output position ``y``
    is lhs feature c at kernel tap k (C order) of y's window, in the output layout of
    ``dimension_numbers``. Gathered by slices of the dilated, padded lhs, so the values
    are the lhs's exactly (JAX contracts with an identity kernel).

    >>> import numpy as np
    >>> p = conv_general_dilated_patches(np.arange(8.0).reshape(1, 2, 4), (2,), (2,), "VALID")
    >>> p.shape, p[0, :, 0].tolist()
    ((1, 4, 2), [0.0, 1.0, 4.0, 5.0])
    """
    check_precision(precision)
    la = aval(lhs)
    filter_shape = tuple(int(f) for f in filter_shape)
    dn = conv_dimension_numbers(la.shape, (1, 1) + filter_shape, dimension_numbers)
    nsp = la.ndim - 2
    ld = (1,) * nsp if lhs_dilation is None else tuple(int(d) for d in lhs_dilation)
    rd = (1,) * nsp if rhs_dilation is None else tuple(int(d) for d in rhs_dilation)
    strides = tuple(int(s) for s in window_strides)
    x = transpose(lhs, dn.lhs_spec)                                   # (N, C, X...)
    if preferred_element_type is not None:
        x = convert_element_type(x, np.dtype(preferred_element_type))
    xsz = tuple(la.shape[d] for d in dn.lhs_spec[2:])
    if isinstance(padding, str):
        if any(d != 1 for d in ld):
            raise ValueError("conv_general_dilated_patches: string padding with "
                             "lhs_dilation is ambiguous; give (lo, hi) pairs")
        padding = padtype_to_pads(xsz, [(k - 1) * r + 1 for k, r in zip(filter_shape, rd)],
                                  strides, padding)
    padding = tuple((int(lo), int(hi)) for lo, hi in padding)
    ysz = conv_out_spatial(xsz, filter_shape, strides, padding, ld, rd)
    xp = pad(x, np.zeros((), aval(x).dtype),
             ((0, 0, 0), (0, 0, 0)) + tuple((lo, hi, d - 1) for (lo, hi), d in zip(padding, ld)))
    n, c = aval(x).shape[:2]
    taps = []
    for kpos in np.ndindex(*filter_shape):
        start = tuple(k * r for k, r in zip(kpos, rd))
        limit = tuple(st + (y - 1) * s + 1 if y else st for st, y, s in zip(start, ysz, strides))
        taps.append(reshape(_slice(xp, (0, 0) + start, (n, c) + limit, (1, 1) + strides),
                            (n, c, 1) + ysz))
    k = int(np.prod(filter_shape))
    out = reshape(concatenate(taps, 2), (n, c * k) + ysz)             # (N, C*K, Y...)
    return transpose(out, tuple(int(a) for a in np.argsort(dn.out_spec)))


def conv_general_dilated_local(lhs: ArrayLike, rhs: ArrayLike, window_strides: Sequence[int],
                               padding: str | Sequence[tuple[int, int]],
                               filter_shape: Sequence[int],
                               lhs_dilation: Sequence[int] | None = None,
                               rhs_dilation: Sequence[int] | None = None,
                               dimension_numbers: ConvDimensionsLike = None,
                               precision: PrecisionLike = None) -> Array:
    """Unshared (locally connected) convolution: a separate kernel at each output
    position. ``rhs``'s spatial dims are the output positions and its I dim holds the
    lhs features times the window taps (``c * prod(filter_shape) + k``, the order of
    ``conv_general_dilated_patches``), as JAX lays it out.

    >>> import numpy as np
    >>> y = conv_general_dilated_local(np.ones((1, 2, 4)), np.ones((3, 4, 3)), (1,),
    ...                                "VALID", (2,))
    >>> y.shape, float(y[0, 0, 0])
    ((1, 3, 3), 4.0)
    """
    check_precision(precision)
    la, ra = aval(lhs), aval(rhs)
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                           lhs_dilation, rhs_dilation, dn)
    p = transpose(patches, dn.out_spec)                     # (N, C*K, Y...)
    r = transpose(rhs, dn.rhs_spec)                         # (O, C*K, Y...)
    if tuple(aval(p).shape[1:]) != tuple(aval(r).shape[1:]):
        raise ValueError(f"conv_general_dilated_local: rhs of shape {tuple(ra.shape)} needs "
                         f"(I, spatial) = {tuple(aval(p).shape[1:])} (features x taps, "
                         f"output positions) in its layout")
    nsp = la.ndim - 2
    sp = tuple(range(2, 2 + nsp))
    out = dot_general(p, r, (((1,), (1,)), (sp, sp)))       # (Y..., N, O)
    out = transpose(out, (nsp, nsp + 1) + tuple(range(nsp)))
    return transpose(out, tuple(int(a) for a in np.argsort(dn.out_spec)))
