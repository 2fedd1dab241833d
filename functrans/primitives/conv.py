"""``conv_general_dilated``: the one convolution primitive (issue 14.5).

Parameters (all canonical, as the lax functions in ``conv_api`` produce them):
``window_strides``, ``padding`` (a ``(lo, hi)`` pair per spatial dim, negative crops),
``lhs_dilation``, ``rhs_dilation`` (one int per spatial dim), ``dimension_numbers``
(three int tuples ``lhs_spec = (N, C, spatial...)``, ``rhs_spec = (O, I, spatial...)``,
``out_spec = (N, C, spatial...)``: the positions of those dims in each array),
``feature_group_count``, ``batch_group_count`` and ``preferred_element_type``.

Meaning, in canonical layout, one spatial dim: the lhs is dilated (``lhs_dilation - 1``
zeros between elements) and padded to ``xt``; then
``out[n, o, y] = sum_{c, k} xt[n, c, y*stride + k*rhs_dilation] * w[o, c, k]``.
Feature groups split C and O into G blocks, block g of O seeing block g of C; batch
groups split N into B blocks (group-major) and O into B blocks, block b of O seeing
block b of N; the output batch is N / B.

The numpy implementation (the interpreter's; the CPU backend's host step only for integer,
complex or mixed-precision convolutions: ``backends/llvm/conv.py`` lowers float32/float64
ones to shifted BLAS GEMMs on a padded grid) runs a stride-1, ungrouped
convolution with an undilated lhs (a ResNet 3x3 and both of its gradients) as one GEMM
on the flattened padded grid (``_conv_shifted``); any other builds the dilated, padded
lhs, takes every window with ``sliding_window_view`` (im2col) and contracts it with the
kernel by one GEMM per group.
The primitive is bilinear: its JVP is two convolutions; the transposes (cotangent
of the lhs: a convolution of the cotangent with the flipped kernel, stride and
lhs dilation swapped; of the rhs: a convolution of the lhs with the cotangent as
the kernel) are convolutions too, built in canonical layout (``conv_rules``).

>>> import numpy as np
>>> conv_general_dilated(np.ones((1, 1, 4)), np.ones((1, 1, 3)), window_strides=(1,),
...                      padding=((0, 0),), lhs_dilation=(1,), rhs_dilation=(1,),
...                      dimension_numbers=((0, 1, 2), (0, 1, 2), (0, 1, 2))).tolist()
[[[3.0, 3.0]]]
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import ShapedArray, bfloat16, dtype_kind
from ..tracing import Tracer, get_aval
from .base import Primitive

__all__ = ["conv_general_dilated_p", "conv_out_spatial", "conv_general_dilated"]

conv_general_dilated_p = Primitive("conv_general_dilated")


def _dilate_dim(size, d):
    return 0 if size == 0 else (size - 1) * d + 1


def conv_out_spatial(in_sizes, k_sizes, window_strides, padding, lhs_dilation, rhs_dilation):
    """Spatial output sizes of a convolution (0 where the kernel does not fit).

    >>> conv_out_spatial((5,), (3,), (2,), ((1, 1),), (1,), (1,))
    (3,)
    """
    out = []
    for n, k, s, (lo, hi), ld, rd in zip(in_sizes, k_sizes, window_strides, padding,
                                         lhs_dilation, rhs_dilation):
        span = _dilate_dim(n, ld) + lo + hi - _dilate_dim(k, rd)
        out.append(0 if span < 0 or k == 0 else span // s + 1)
    return tuple(out)


def _check_params(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                  dimension_numbers, feature_group_count, batch_group_count):
    def fail(why):
        raise TypeError(f"conv_general_dilated: {why} (lhs {lhs.str_short()}, rhs "
                        f"{rhs.str_short()}, dimension_numbers {dimension_numbers})")
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        fail("lhs and rhs need the same rank, at least 2")
    nsp = lhs.ndim - 2
    for name, spec in zip(("lhs", "rhs", "out"), dimension_numbers):
        if sorted(spec) != list(range(lhs.ndim)):
            fail(f"the {name} spec is not a permutation of the {lhs.ndim} dimensions")
    for name, v in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                    ("rhs_dilation", rhs_dilation)):
        if len(v) != nsp or any(int(d) < 1 for d in v):
            fail(f"{name} {v} needs {nsp} positive entries")
    if len(padding) != nsp or any(len(p) != 2 for p in padding):
        fail(f"padding {padding} needs one (lo, hi) pair per spatial dimension")
    G, B = feature_group_count, batch_group_count
    if G < 1 or B < 1 or (G > 1 and B > 1):
        fail(f"feature_group_count {G} and batch_group_count {B} must be >= 1, not both > 1")
    ls, rs = dimension_numbers[0], dimension_numbers[1]
    n, c = lhs.shape[ls[0]], lhs.shape[ls[1]]
    o, i = rhs.shape[rs[0]], rhs.shape[rs[1]]
    if c != i * G:
        fail(f"lhs features {c} must equal rhs input features {i} times "
             f"feature_group_count {G}")
    if o % G or o % B:
        fail(f"rhs output features {o} must be divisible by the group counts ({G}, {B})")
    if n % B:
        fail(f"lhs batch {n} must be divisible by batch_group_count {B}")
    if lhs.dtype != rhs.dtype:
        fail(f"operand dtypes differ ({lhs.dtype} and {rhs.dtype}); promote them first")
    if dtype_kind(lhs.dtype) not in "fciu":
        fail(f"dtype {lhs.dtype} is not supported")


_PREFERRED_KINDS = {"i": "iuf", "u": "iuf", "f": "f", "c": "c"}


def _check_preferred(dtype, preferred):
    """JAX's rule for a convolution's ``preferred_element_type``: (integer, integer or
    float), (float, float) or (complex, complex), never narrower than the operands (a
    float32 result of complex64 operands would drop their imaginary parts; float64
    operands asked for float32 raise in JAX too)."""
    if preferred is None or np.dtype(dtype).kind == "b":
        return
    k, pk = dtype_kind(dtype), dtype_kind(preferred)
    if pk not in _PREFERRED_KINDS.get(k, ""):
        raise TypeError(f"conv_general_dilated: preferred_element_type {np.dtype(preferred)} "
                        f"is incompatible with {np.dtype(dtype)} operands (integer -> integer "
                        f"or floating, floating -> floating, complex -> complex)")
    if np.dtype(preferred).itemsize < np.dtype(dtype).itemsize:
        raise TypeError(f"conv_general_dilated: preferred_element_type "
                        f"{np.dtype(preferred)} must not be narrower than the operands' type "
                        f"{np.dtype(dtype)}")


def _conv_aval(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count,
               preferred_element_type=None):
    _check_params(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                  dimension_numbers, feature_group_count, batch_group_count)
    _check_preferred(lhs.dtype, preferred_element_type)
    ls, rs, os_ = dimension_numbers
    sp = conv_out_spatial([lhs.shape[d] for d in ls[2:]], [rhs.shape[d] for d in rs[2:]],
                          window_strides, padding, lhs_dilation, rhs_dilation)
    canon = (lhs.shape[ls[0]] // batch_group_count, rhs.shape[rs[0]]) + sp
    shape = [0] * lhs.ndim
    for pos, size in zip(os_, canon):
        shape[pos] = size
    dtype = np.dtype(preferred_element_type) if preferred_element_type is not None \
        else lhs.dtype
    weak = lhs.weak_type and rhs.weak_type and preferred_element_type is None
    return ShapedArray(tuple(shape), dtype, weak)


def _dilate_and_pad(x, padding, lhs_dilation):
    """x in canonical layout (N, C, spatial...): dilate, then pad (negative pads crop)."""
    nsp = x.ndim - 2
    shape = x.shape[:2] + tuple(_dilate_dim(n, d) for n, d in zip(x.shape[2:], lhs_dilation))
    xd = np.zeros(shape, x.dtype)
    xd[(slice(None),) * 2 + tuple(slice(None, None, d) for d in lhs_dilation)] = x
    pads = [(0, 0)] * 2 + [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    xp = np.pad(xd, pads)
    crop = tuple(slice(max(-lo, 0), xp.shape[2 + j] - max(-hi, 0))
                 for j, (lo, hi) in enumerate(padding))
    assert len(crop) == nsp
    return xp[(slice(None),) * 2 + crop]


def _conv_impl(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count,
               preferred_element_type=None):
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    out_aval = _conv_aval(get_aval(lhs), get_aval(rhs), window_strides=window_strides,
                          padding=padding, lhs_dilation=lhs_dilation,
                          rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers,
                          feature_group_count=feature_group_count,
                          batch_group_count=batch_group_count,
                          preferred_element_type=preferred_element_type)
    dtype = out_aval.dtype
    work = np.dtype(np.float32) if dtype == bfloat16 else dtype   # rounded once at the end
    ls, rs, os_ = dimension_numbers
    x = np.transpose(lhs, ls).astype(work, copy=False)
    w = np.transpose(rhs, rs).astype(work, copy=False)
    nsp = x.ndim - 2
    out_canon_shape = tuple(out_aval.shape[d] for d in os_)
    if 0 in out_canon_shape or 0 in w.shape[1:2] or 0 in x.shape[:1]:
        out = np.zeros(out_canon_shape, dtype)
        return np.transpose(out, np.argsort(os_))
    G, B = feature_group_count, batch_group_count
    if (G == B == 1 and work.kind in "fc" and all(s == 1 for s in window_strides)
            and all(d == 1 for d in lhs_dilation)):
        out = _conv_shifted(x, w, padding, rhs_dilation, out_canon_shape[2:]).astype(dtype)
        return np.ascontiguousarray(np.transpose(out, np.argsort(os_)))
    xt = _dilate_and_pad(x, padding, lhs_dilation)
    keff = tuple(_dilate_dim(k, d) for k, d in zip(w.shape[2:], rhs_dilation))
    win = np.lib.stride_tricks.sliding_window_view(xt, keff, axis=tuple(range(2, 2 + nsp)))
    sel = ((slice(None),) * 2
           + tuple(slice(None, (o - 1) * s + 1, s)
                   for o, s in zip(out_canon_shape[2:], window_strides))
           + tuple(slice(None, None, d) for d in rhs_dilation))
    win = win[sel]                    # (N, C, out spatial..., kernel spatial...)
    n, c = x.shape[:2]
    o, i = w.shape[:2]
    osp = out_canon_shape[2:]
    p, kt = int(np.prod(osp)), int(np.prod(w.shape[2:]))
    # im2col as (groups, I*K, N/B * P): each group is then one large GEMM of its kernel
    # block (O/groups, I*K) with its patches (one of B, G is 1)
    q = B * G
    win = win.reshape((B, n // B, G, c // G) + win.shape[2:])
    sp_ax, k_ax = tuple(range(4, 4 + nsp)), tuple(range(4 + nsp, 4 + 2 * nsp))
    wq = w.reshape(q, o // q, i * kt)
    if kt > p:
        # big windows (a kernel cotangent): copy each window whole, rows of the GEMM
        cols = np.ascontiguousarray(np.transpose(win, (0, 2, 1) + sp_ax + (3,) + k_ax))
        res = np.matmul(cols.reshape(q, (n // B) * p, i * kt), wq.transpose(0, 2, 1))
        res = res.reshape(q, n // B, p, o // q).transpose(1, 0, 3, 2)
    else:
        cols = np.ascontiguousarray(np.transpose(win, (0, 2, 3) + k_ax + (1,) + sp_ax))
        res = np.matmul(wq, cols.reshape(q, i * kt, (n // B) * p))   # (Q, O/Q, N/B * P)
        res = res.reshape(q, o // q, n // B, p).transpose(2, 0, 1, 3)
    # res: (N/B, Q, O/Q, P)
    out = res.reshape(out_canon_shape).astype(dtype, copy=False)
    return np.ascontiguousarray(np.transpose(out, np.argsort(os_)))


def _padded_flat(x, padding, lead):
    """x canonical (N, C, X...) zero-padded (negative pads crop) into a new array
    (A, B, S) with S the padded grid's size, (A, B) = (N, C), or (C, N) when ``lead``
    is 1 (channels first); also the grid's shape."""
    xsz = x.shape[2:]
    psz = tuple(n + lo + hi for n, (lo, hi) in zip(xsz, padding))
    out = np.zeros((x.shape[lead], x.shape[1 - lead]) + psz, x.dtype)
    src = tuple(slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi) in zip(xsz, padding))
    dst = tuple(slice(max(lo, 0), max(lo, 0) + max(0, s.stop - s.start))
                for s, (lo, _) in zip(src, padding))
    if all(s.stop > s.start for s in src):
        xs = x[(slice(None),) * 2 + src]
        out[(slice(None),) * 2 + dst] = xs.transpose((1, 0) + tuple(range(2, x.ndim))) \
            if lead else xs
    return out.reshape(out.shape[:2] + (-1,)), psz


def _grid_strides(grid):
    """C-order element strides of the grid's dims."""
    return tuple(int(g) for g in np.cumprod((1,) + tuple(grid[:0:-1]))[::-1])


def _shifted_windows(flat, sizes, steps, grid, length):
    """Copy of the windows ``flat[r, off + q]`` (q < ``length``) for every row r and
    every flat grid offset ``off`` of an index < ``sizes`` scaled by ``steps``:
    shape (rows, prod(sizes), length)."""
    it = flat.itemsize
    view = np.lib.stride_tricks.as_strided(
        flat, (flat.shape[0],) + tuple(sizes) + (length,),
        (flat.strides[0],) + tuple(st * g * it for st, g in zip(steps, _grid_strides(grid)))
        + (it,), writeable=False)
    return np.ascontiguousarray(view).reshape(flat.shape[0], -1, length)


def _conv_shifted(x, w, padding, rhs_dilation, osp):
    """Stride-1, undilated-lhs, ungrouped convolution in canonical layout as ONE GEMM on
    the flattened padded grid, where an output position and a kernel tap are flat
    offsets and ``out[p] = sum_k x[p + koff[k]] . w[k]`` (valid outputs never read past
    their own image). Few taps: the lhs rows (channels first) shifted by each tap
    against the kernel, the output computed on the whole grid then cropped. Few outputs
    (a kernel gradient): the lhs rows shifted by each output position against the
    kernel embedded in the grid, contracting channels and grid at once. One BLAS call:
    on a loaded machine each call of a threaded BLAS can wait a whole time slice."""
    n, c = x.shape[:2]
    o = w.shape[0]
    ksz = w.shape[2:]
    kt, yt = int(np.prod(ksz)), int(np.prod(osp))
    if o == c == 1 and len(osp) == 1 and kt <= yt:
        # one 1-d signal per image (numpy's convolve): numpy's correlate of each, no
        # im2col copy of every window (1e4 by 101 taps: 1.8 ms -> 0.3)
        xp, _ = _padded_flat(x, padding, 0)                      # (N, 1, S)
        wd = np.zeros(((ksz[0] - 1) * rhs_dilation[0] + 1,), x.dtype)
        wd[::rhs_dilation[0]] = w[0, 0]
        rows = [np.correlate(r, np.conj(wd), "valid")[:osp[0]] for r in xp[:, 0]]
        return np.stack(rows)[:, None].astype(x.dtype, copy=False)
    if kt <= yt:
        xp, grid = _padded_flat(x, padding, 1)                   # (C, N, S)
        S = xp.shape[2]
        m = n * S - sum((k - 1) * d * g for k, d, g in zip(ksz, rhs_dilation,
                                                            _grid_strides(grid)))
        cols = _shifted_windows(xp.reshape(c, n * S), ksz, rhs_dilation, grid, m)
        acc = np.empty((o, n * S), x.dtype)
        np.matmul(w.reshape(o, c * kt), cols.reshape(c * kt, m), out=acc[:, :m])
        full = acc.reshape((o, n) + grid)
        crop = full[(slice(None),) * 2 + tuple(slice(0, s) for s in osp)]
        return crop.transpose((1, 0) + tuple(range(2, x.ndim)))
    xp, grid = _padded_flat(x, padding, 0)                       # (N, C, S)
    S = xp.shape[2]
    we = np.zeros((o, c) + grid, x.dtype)
    we[(slice(None),) * 2 + tuple(slice(0, (k - 1) * d + 1, d)
                                  for k, d in zip(ksz, rhs_dilation))] = w
    m = c * S - sum((y - 1) * g for y, g in zip(osp, _grid_strides(grid)))
    cols = _shifted_windows(xp.reshape(n, c * S), osp, (1,) * len(osp), grid, m)
    res = np.matmul(cols.reshape(n * yt, m), we.reshape(o, c * S)[:, :m].T)   # (N*Y, O)
    return np.moveaxis(res.reshape((n,) + tuple(osp) + (o,)), -1, 1)


conv_general_dilated_p.def_rules(abstract_eval=_conv_aval, impl=_conv_impl)


def conv_general_dilated(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                         dimension_numbers, feature_group_count=1, batch_group_count=1,
                         preferred_element_type=None):
    """Bind the primitive with canonical parameters (see ``lax.conv_general_dilated`` for
    the JAX-style front end that accepts strings and defaults).

    >>> import numpy as np
    >>> dn = ((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))
    >>> conv_general_dilated(np.ones((1, 2, 3, 3)), np.ones((4, 2, 2, 2)),
    ...     window_strides=(1, 1), padding=((0, 0), (0, 0)), lhs_dilation=(1, 1),
    ...     rhs_dilation=(1, 1), dimension_numbers=dn).shape
    (1, 4, 2, 2)
    """
    params = dict(
        window_strides=tuple(int(s) for s in window_strides),
        padding=tuple((int(lo), int(hi)) for lo, hi in padding),
        lhs_dilation=tuple(int(d) for d in lhs_dilation),
        rhs_dilation=tuple(int(d) for d in rhs_dilation),
        dimension_numbers=tuple(tuple(int(d) for d in spec) for spec in dimension_numbers),
        feature_group_count=int(feature_group_count), batch_group_count=int(batch_group_count),
        preferred_element_type=(None if preferred_element_type is None
                                else np.dtype(preferred_element_type)))
    if not (isinstance(lhs, Tracer) or isinstance(rhs, Tracer)):
        # eager binds skip the shape rule; run it so bad shapes get its message
        _conv_aval(get_aval(lhs), get_aval(rhs), **params)
    return conv_general_dilated_p.bind(lhs, rhs, **params)
