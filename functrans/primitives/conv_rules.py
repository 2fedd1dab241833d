"""JVP, transpose and batching rules of ``conv_general_dilated`` (see ``conv``).

All three are convolutions again, built in canonical layout (N, C, spatial...) /
(O, I, spatial...). One spatial dim, with ``xt`` the dilated (``ld``) and padded
(``lo``, ``hi``) lhs, stride ``s``, kernel dilation ``rd``, kernel size K, lhs size X,
output size Y:

    out[n, o, y] = sum_{c, k} xt[n, c, y*s + k*rd] * w[o, c, k]

*lhs cotangent*: ``ct_x[n, c, i]`` collects ``ct[n, o, y] * w[o, c, k]`` over
``y*s + k*rd = i*ld + lo``. With the cotangent dilated by ``s`` and the kernel
flipped (``k -> K-1-k``) this is a convolution with stride ``ld``, kernel dilation
``rd``, low padding ``(K-1)*rd - lo`` and the high padding that makes X outputs; the
kernel's O and I swap roles (per feature group; batch groups become feature groups
whose output blocks are the lhs batch blocks).

*rhs cotangent*: ``ct_w[o, c, k] = sum_{n, y} xt[n, c, k*rd + y*s] * ct[n, o, y]``: a
convolution of the lhs (C as its batch, N as its features) with the cotangent as the
kernel, stride ``rd``, kernel dilation ``s``, the same lhs dilation and low padding,
and the high padding that makes K outputs. Feature groups become batch groups and
batch groups feature groups.

>>> import functrans as ft, numpy as np
>>> from functrans import lax
>>> f = lambda x: lax.conv(x, np.ones((1, 1, 2)), (1,), "VALID").sum()
>>> ft.grad(f)(np.ones((1, 1, 3))).tolist()
[[[1.0, 2.0, 1.0]]]
"""
from __future__ import annotations

import numpy as np

from .base import Zero, add_tangents, aval, is_undefined, move_batch_axis, zeros_array
from .basic import transpose
from .conv import conv_general_dilated_p
from .elementwise import convert_element_type
from .slicing import rev
from .structural import reshape

__all__: list = []


def _dil(size, d):
    return 0 if size == 0 else (size - 1) * d + 1


def _canon(nd):
    return tuple(range(nd))


def _to_spec(y, spec, lead=0):
    """y canonical (after ``lead`` leading axes) -> the layout ``spec`` describes."""
    order = np.argsort(spec)
    return transpose(y, tuple(range(lead)) + tuple(lead + int(a) for a in order))


def _conv_jvp(primals, tangents, **params):
    (x, w), (tx, tw) = primals, tangents
    out = conv_general_dilated_p.bind(x, w, **params)
    t = Zero(aval(out))
    if type(tx) is not Zero:
        t = add_tangents(t, conv_general_dilated_p.bind(tx, w, **params))
    if type(tw) is not Zero:
        t = add_tangents(t, conv_general_dilated_p.bind(x, tw, **params))
    return out, t


def _lhs_cotangent(ct, w, x_aval, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count):
    ls, rs, os_ = dimension_numbers
    nd = x_aval.ndim
    G, B = feature_group_count, batch_group_count
    Q = max(G, B)
    ct = transpose(ct, os_)                                # (N', O, Y...)
    w = transpose(convert_element_type(w, aval(ct).dtype), rs)     # (O, I, K...)
    o, i = aval(w).shape[:2]
    ksz = aval(w).shape[2:]
    w = rev(w, tuple(range(2, nd)))
    w = reshape(w, (Q, o // Q, i) + ksz)
    w = transpose(w, (0, 2, 1) + tuple(range(3, nd + 1)))
    w = reshape(w, (Q * i, o // Q) + ksz)
    xsz = tuple(x_aval.shape[d] for d in ls[2:])
    ysz = aval(ct).shape[2:]
    pads = []
    for k, rd, lo, xn, ld, yn, s in zip(ksz, rhs_dilation, [p[0] for p in padding], xsz,
                                        lhs_dilation, ysz, window_strides):
        lo2 = (k - 1) * rd - lo
        pads.append((lo2, (xn - 1) * ld + _dil(k, rd) - _dil(yn, s) - lo2))
    r = conv_general_dilated_p.bind(
        ct, w, window_strides=tuple(lhs_dilation), padding=tuple(pads),
        lhs_dilation=tuple(window_strides), rhs_dilation=tuple(rhs_dilation),
        dimension_numbers=(_canon(nd),) * 3, feature_group_count=Q, batch_group_count=1,
        preferred_element_type=None)                      # (N', Q*I, X...)
    if B > 1:
        n2 = aval(r).shape[0]
        r = reshape(r, (n2, B, i) + xsz)
        r = transpose(r, (1, 0) + tuple(range(2, nd + 1)))
        r = reshape(r, (B * n2, i) + xsz)
    return convert_element_type(_to_spec(r, ls), x_aval.dtype)


def _rhs_cotangent(ct, x, w_aval, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count):
    ls, rs, os_ = dimension_numbers
    nd = w_aval.ndim
    ct = transpose(ct, os_)                                # (N', O, Y...)
    x = transpose(convert_element_type(x, aval(ct).dtype), ls)     # (N, C, X...)
    ksz = tuple(w_aval.shape[d] for d in rs[2:])
    xsz, ysz = aval(x).shape[2:], aval(ct).shape[2:]
    pads = []
    for k, rd, (lo, _), xn, ld, yn, s in zip(ksz, rhs_dilation, padding, xsz, lhs_dilation,
                                             ysz, window_strides):
        pads.append((lo, (k - 1) * rd + _dil(yn, s) - _dil(xn, ld) - lo))
    swap = (1, 0) + tuple(range(2, nd))
    r = conv_general_dilated_p.bind(
        x, ct, window_strides=tuple(rhs_dilation), padding=tuple(pads),
        lhs_dilation=tuple(lhs_dilation), rhs_dilation=tuple(window_strides),
        dimension_numbers=(swap, swap, swap), feature_group_count=batch_group_count,
        batch_group_count=feature_group_count, preferred_element_type=None)  # (O, I, K...)
    return convert_element_type(_to_spec(r, rs), w_aval.dtype)


def _conv_transpose(ct, x, w, *, preferred_element_type=None, **params):
    if is_undefined(x) and is_undefined(w):
        raise TypeError("conv_general_dilated: cannot transpose a product of two linear values")
    if is_undefined(x):
        xa = aval(x)
        if type(ct) is Zero or 0 in xa.shape or 0 in aval(ct).shape:
            return [Zero(xa) if type(ct) is Zero else zeros_array(xa), None]
        return [_lhs_cotangent(ct, w, xa, **params), None]
    wa = aval(w)
    if type(ct) is Zero or 0 in wa.shape or 0 in aval(ct).shape:
        return [None, Zero(wa) if type(ct) is Zero else zeros_array(wa)]
    return [None, _rhs_cotangent(ct, x, wa, **params)]


def _lead_canon(v, d, spec):
    """Move the batch axis of v to 0 and the rest into canonical order."""
    v = move_batch_axis(v, d, 0)
    return transpose(v, (0,) + tuple(1 + s for s in spec))


def _conv_batch(args, dims, *, dimension_numbers, feature_group_count, batch_group_count,
                **params):
    (x, w), (dx, dw) = args, dims
    ls, rs, os_ = dimension_numbers
    nd = len(ls)
    G, B = feature_group_count, batch_group_count
    rest = tuple(range(3, nd + 1))

    def conv(a, b, g, bg):
        return conv_general_dilated_p.bind(a, b, dimension_numbers=(_canon(nd),) * 3,
                                           feature_group_count=g, batch_group_count=bg,
                                           **params)
    x = _lead_canon(x, dx, ls) if dx is not None else transpose(x, ls)
    w = _lead_canon(w, dw, rs) if dw is not None else transpose(w, rs)
    if dx is not None:
        bv, n, c = aval(x).shape[:3]
        xsz = aval(x).shape[3:]
    if dw is not None:
        bv, o, i = aval(w).shape[:3]
        ksz = aval(w).shape[3:]
    if dx is not None and dw is None:
        # fold the vmapped axis into each batch group of N
        x = reshape(x, (bv, B, n // B, c) + xsz)
        x = transpose(x, (1, 0, 2, 3) + tuple(range(4, nd + 2)))
        out = conv(reshape(x, (bv * n, c) + xsz), w, G, B)
        n2 = aval(out).shape[0] // bv
        out = reshape(out, (bv, n2) + aval(out).shape[1:])
    elif dw is not None and dx is None:
        # fold the vmapped axis into each group's block of output features
        q = max(G, B)
        w = reshape(w, (bv, q, o // q, i) + ksz)
        w = transpose(w, (1, 0, 2, 3) + tuple(range(4, nd + 2)))
        out = conv(x, reshape(w, (bv * o, i) + ksz), G, B)
        n2, ysz = aval(out).shape[0], aval(out).shape[2:]
        out = reshape(out, (n2, q, bv, o // q) + ysz)
        out = transpose(out, (2, 0, 1, 3) + tuple(range(4, nd + 2)))
        out = reshape(out, (bv, n2, o) + ysz)
    else:
        # both: the vmapped axis becomes more groups (feature groups, or batch groups
        # when the convolution already has some)
        w = reshape(w, (bv * o, i) + ksz)
        if B == 1:
            x = transpose(x, (1, 0, 2) + rest)
            out = conv(reshape(x, (n, bv * c) + xsz), w, G * bv, 1)
        else:
            out = conv(reshape(x, (bv * n, c) + xsz), w, 1, B * bv)
        n2, ysz = aval(out).shape[0], aval(out).shape[2:]
        out = reshape(out, (n2, bv, o) + ysz)
        out = transpose(out, (1, 0, 2) + rest)
    return _to_spec(out, os_, lead=1), 0


conv_general_dilated_p.def_rules(jvp=_conv_jvp, transpose=_conv_transpose, batch=_conv_batch)
