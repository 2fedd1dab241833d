"""Structural primitives that pick, reverse, join or pad ranges of elements:
slice, rev, concatenate and pad (the shape-changing ones are in ``structural.py``).

All four are linear, so each has a transpose rule and a JVP that applies the op
to the tangent; their transposes are built from one another, which is why they
live together.

- ``slice`` takes static start/limit/stride (stride >= 1); negative steps are
  ``rev`` followed by a slice (``functrans.numpy`` does that).
- ``pad`` takes ``(lo, hi, interior)`` per axis; negative lo/hi crop. Its
  transpose undoes the edges with a pad of ``(-lo, -hi, 0)`` and drops the
  interior padding with a strided slice.

>>> import numpy as np
>>> pad(np.arange(3.0), 0.0, ((1, -1, 1),)).tolist()
[0.0, 0.0, 0.0, 1.0, 0.0]
>>> concatenate([np.zeros(1), rev(np.arange(2.0), (0,))], 0).tolist()
[0.0, 1.0, 0.0]
"""
from __future__ import annotations

import builtins
from typing import Sequence

import numpy as np

from jaxpr_ir import ShapedArray, dtype_kind
from ..key_array import KeyArray
from ..tracing import unchanged
from .base import (Primitive, UndefinedPrimal, Zero, aval, deflinear, move_batch_axis,
                   not_mapped_size)
from .structural import (shift_dims, broadcast_in_dim, checked_axis, checked_bind, reshape,
                         transpose)
from .reductions import cumprod, cumprod_p, reduce_prod_p, reduce_sum
from . import elementwise as E
from .elementwise import select_n, sub
from ..typing import Array, ArrayLike

__all__ = ["slice", "slice_in_dim", "rev", "concatenate", "pad"]


# --------------------------------------------------------------------------- slice

slice_p = Primitive("slice")


def _slice_out_len(start, limit, stride):
    return max(0, -(-(limit - start) // stride))


def _slice_aval(x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * x.ndim
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        raise TypeError(f"slice: start_indices {start_indices}, limit_indices {limit_indices} "
                        f"and strides {strides} must each have one entry per axis of "
                        f"{x.str_short()}")
    for s, l, st, d in zip(start_indices, limit_indices, strides, x.shape):
        if not (0 <= s <= l <= d) or st < 1:
            raise ValueError(f"slice: start_indices {start_indices}, limit_indices "
                             f"{limit_indices}, strides {strides} do not fit operand shape "
                             f"{x.shape} (need 0 <= start <= limit <= size, stride >= 1)")
    shape = tuple(_slice_out_len(s, l, st) for s, l, st in zip(start_indices, limit_indices, strides))
    return ShapedArray(shape, x.dtype, x.weak_type)


def _slice_impl(x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * len(start_indices)
    return np.asarray(x)[tuple(builtins.slice(s, l, st)
                               for s, l, st in zip(start_indices, limit_indices, strides))]


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    strides = strides or (1,) * len(start_indices)
    config = []
    for s, n, st, d in zip(start_indices, aval(ct).shape, strides, x.aval.shape):
        if n == 0:
            config.append((s, d - s, 0))
        else:
            config.append((s, d - (s + (n - 1) * st + 1), st - 1))
    return [pad(ct, np.zeros((), x.aval.dtype), tuple(config))]


def _slice_batch(args, dims, *, start_indices, limit_indices, strides):
    (x,), (d,) = args, dims
    n = aval(x).shape[d]
    ins = lambda t, v: t[:d] + (v,) + t[d:]  # noqa: E731
    strides = strides and ins(strides, 1)
    return slice_p.bind(x, start_indices=ins(start_indices, 0),
                        limit_indices=ins(limit_indices, n), strides=strides), d


slice_p.def_rules(abstract_eval=_slice_aval, impl=_slice_impl, batch=_slice_batch)
deflinear(slice_p, _slice_transpose)


def slice(operand: ArrayLike, start_indices: Sequence[int], limit_indices: Sequence[int],
          strides: Sequence[int] | None = None) -> Array:  # noqa: A001 (lax name)
    """``x[start:limit:stride]`` per axis, with static bounds.

    >>> slice(np.arange(10.0), (1,), (8,), (3,)).tolist()
    [1.0, 4.0, 7.0]
    """
    if isinstance(operand, KeyArray):              # typed keys: slice their words
        return KeyArray(slice(operand._base, tuple(start_indices) + (0,),
                              tuple(limit_indices) + (2,),
                              None if strides is None else tuple(strides) + (1,)))
    start_indices = tuple(int(i) for i in start_indices)
    limit_indices = tuple(int(i) for i in limit_indices)
    strides = None if strides is None or all(int(s) == 1 for s in strides) else \
        tuple(int(s) for s in strides)
    if strides is None and start_indices == (0,) * len(start_indices) and \
            limit_indices == aval(operand).shape:
        return operand
    return checked_bind(slice_p, operand, start_indices=start_indices, limit_indices=limit_indices,
                        strides=strides)


def slice_in_dim(operand: ArrayLike, start_index: int | None, limit_index: int | None,
                 stride: int = 1, axis: int = 0) -> Array:
    """``slice`` along one axis only; as JAX's, a ``None`` bound is that end of the axis
    and a negative one counts from the end.

    >>> import numpy as np
    >>> slice_in_dim(np.arange(12).reshape(2, 6), 1, 6, stride=2, axis=1).tolist()
    [[1, 3, 5], [7, 9, 11]]
    >>> slice_in_dim(np.arange(6), -3, None).tolist()
    [3, 4, 5]
    """
    shape = operand.shape if isinstance(operand, KeyArray) else aval(operand).shape
    axis = checked_axis(axis, len(shape), "slice_in_dim")
    n = shape[axis]
    start = 0 if start_index is None else int(start_index)
    limit = n if limit_index is None else int(limit_index)
    start, limit = (start + n if start < 0 else start), (limit + n if limit < 0 else limit)
    starts = [0] * len(shape)
    limits = list(shape)
    strides = [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
    return slice(operand, starts, limits, strides)


# --------------------------------------------------------------------------- rev

rev_p = Primitive("rev")


def _rev_aval(x, *, dimensions):
    if len(set(dimensions)) != len(dimensions) or any(not 0 <= d < x.ndim for d in dimensions):
        raise ValueError(f"rev: dimensions {dimensions} out of range or repeated for operand "
                         f"{x.str_short()}")
    return x


def _rev_batch(args, dims, *, dimensions):
    (x,), (d,) = args, dims
    return rev_p.bind(x, dimensions=shift_dims(dimensions, d)), d


rev_p.def_rules(abstract_eval=_rev_aval,
                impl=lambda x, *, dimensions: np.flip(np.asarray(x), dimensions),
                batch=_rev_batch)
deflinear(rev_p, lambda ct, x, *, dimensions: [
    Zero(x.aval) if type(ct) is Zero else rev(ct, dimensions)])


def rev(operand: ArrayLike, dimensions: Sequence[int]) -> Array:
    """Reverse the order of elements along ``dimensions``.

    >>> rev(np.arange(3.0), (0,)).tolist()
    [2.0, 1.0, 0.0]
    """
    dimensions = tuple(sorted(int(d) for d in dimensions))
    if not dimensions:
        return operand
    return checked_bind(rev_p, operand, dimensions=dimensions)


# --------------------------------------------------------------------------- concatenate

concatenate_p = Primitive("concatenate")


def _concatenate_aval(*xs, dimension):
    if not xs:
        raise ValueError("concatenate: needs at least one operand")
    x0 = xs[0]
    if x0.ndim == 0 or not 0 <= dimension < x0.ndim:
        raise ValueError(f"concatenate: dimension {dimension} out of range for operand "
                         f"{x0.str_short()} (operands must have rank >= 1)")
    for i, x in enumerate(xs[1:], 1):
        if x.dtype != x0.dtype:
            raise TypeError(f"concatenate: operands must share a dtype, got {x0.str_short()} "
                            f"(operand 0) and {x.str_short()} (operand {i})")
        if x.ndim != x0.ndim or any(a != b for j, (a, b) in enumerate(zip(x.shape, x0.shape))
                                    if j != dimension):
            raise TypeError(f"concatenate: operand shapes {x0.shape} (operand 0) and {x.shape} "
                            f"(operand {i}) must match except along dimension {dimension}")
    shape = list(x0.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, x0.dtype, all(x.weak_type for x in xs))


def _concatenate_transpose(ct, *xs, dimension):
    out, start = [], 0
    for x in xs:
        n = aval(x).shape[dimension]
        if not isinstance(x, UndefinedPrimal):
            out.append(None)
        elif type(ct) is Zero:
            out.append(Zero(x.aval))
        else:
            out.append(slice_in_dim(ct, start, start + n, 1, dimension))
        start += n
    return out


def _concatenate_batch(args, dims, *, dimension):
    size = not_mapped_size(args, dims)
    xs = [move_batch_axis(x, d, 0, size) for x, d in zip(args, dims)]
    return concatenate_p.bind(*xs, dimension=dimension + 1), 0


concatenate_p.def_rules(abstract_eval=_concatenate_aval,
                        impl=lambda *xs, dimension: np.concatenate(xs, axis=dimension),
                        batch=_concatenate_batch)
deflinear(concatenate_p, _concatenate_transpose)


def concatenate(operands: Sequence[ArrayLike], dimension: int) -> Array:
    """Join arrays of one dtype along ``dimension``.

    >>> concatenate([np.zeros(2), np.ones(1)], 0).tolist()
    [0.0, 0.0, 1.0]
    """
    operands = list(operands)
    if len(operands) == 1:
        return operands[0]
    return checked_bind(concatenate_p, *operands, dimension=int(dimension))


# --------------------------------------------------------------------------- pad

pad_p = Primitive("pad")


def _pad_len(d, lo, hi, interior):
    return lo + hi + d + max(d - 1, 0) * interior


def _pad_aval(x, pv, *, padding_config):
    if pv.shape != () or pv.dtype != x.dtype:
        raise TypeError(f"pad: padding value must be a scalar of the operand's dtype, got "
                        f"{pv.str_short()} for operand {x.str_short()}")
    if len(padding_config) != x.ndim or any(len(c) != 3 for c in padding_config):
        raise TypeError(f"pad: padding_config {padding_config} needs one (lo, hi, interior) "
                        f"per axis of {x.str_short()}")
    shape = []
    for d, (lo, hi, it) in zip(x.shape, padding_config):
        n = _pad_len(d, lo, hi, it)
        if it < 0 or n < 0:
            raise ValueError(f"pad: padding_config {padding_config} is invalid for operand "
                             f"shape {x.shape} (interior must be >= 0 and sizes >= 0)")
        shape.append(n)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _pad_impl(x, pv, *, padding_config):
    x = np.asarray(x)
    # interior and the positive edges into a filled array, then crop the negative edges
    full_shape, place, crop = [], [], []
    for d, (lo, hi, it) in zip(x.shape, padding_config):
        plo, phi = max(lo, 0), max(hi, 0)
        n = _pad_len(d, plo, phi, it)
        full_shape.append(n)
        place.append(builtins.slice(plo, plo + max(d - 1, 0) * (it + 1) + (d > 0), it + 1))
        crop.append(builtins.slice(-min(lo, 0), n + min(hi, 0)))
    out = np.full(full_shape, pv, dtype=x.dtype)
    out[tuple(place)] = x
    return out[tuple(crop)]


def _pad_transpose(ct, x, pv, *, padding_config):
    res = [None, None]
    if type(ct) is Zero:
        return [Zero(a.aval) if isinstance(a, UndefinedPrimal) else None for a in (x, pv)]
    unpadded = pad(ct, np.zeros((), aval(ct).dtype),
                   tuple((-lo, -hi, 0) for lo, hi, _ in padding_config))
    ct_x = slice(unpadded, (0,) * aval(ct).ndim, aval(unpadded).shape,
                 tuple(it + 1 for _, _, it in padding_config))
    if isinstance(x, UndefinedPrimal):
        res[0] = ct_x
    if isinstance(pv, UndefinedPrimal):
        axes = tuple(range(aval(ct).ndim))
        res[1] = sub(reduce_sum(ct, axes), reduce_sum(ct_x, axes))
    return res


def _pad_batch(args, dims, *, padding_config):
    (x, pv), (dx, dpv) = args, dims
    if dpv is None:
        cfg = padding_config[:dx] + ((0, 0, 0),) + padding_config[dx:]
        return pad_p.bind(x, pv, padding_config=cfg), dx
    # a batched padding value: pad with zeros, then select the pad positions
    size = aval(pv).shape[dpv]
    x = move_batch_axis(x, dx, 0, size)
    cfg = ((0, 0, 0),) + padding_config
    padded = pad_p.bind(x, np.zeros((), aval(x).dtype), padding_config=cfg)
    shape = aval(padded).shape
    mask = _pad_impl(np.zeros(aval(x).shape, bool), np.ones((), bool), padding_config=cfg)
    pvb = broadcast_in_dim(move_batch_axis(pv, dpv, 0), shape, (0,))
    return select_n(mask, padded, pvb), 0


pad_p.def_rules(abstract_eval=_pad_aval, impl=_pad_impl, batch=_pad_batch)
deflinear(pad_p, _pad_transpose)


def pad(operand: ArrayLike, padding_value: ArrayLike,
        padding_config: Sequence[tuple[int, int, int]]) -> Array:
    """Pad with ``padding_value``: ``(lo, hi, interior)`` per axis; negative lo/hi crop.

    >>> pad(np.ones(2), 0.0, ((1, 0, 2),)).tolist()
    [0.0, 1.0, 0.0, 0.0, 1.0]
    """
    padding_config = tuple((int(lo), int(hi), int(it)) for lo, hi, it in padding_config)
    if all(c == (0, 0, 0) for c in padding_config):
        return unchanged(operand)
    if isinstance(padding_value, (bool, int, float, complex)):
        padding_value = np.asarray(padding_value, aval(operand).dtype)
    return checked_bind(pad_p, operand, padding_value, padding_config=padding_config)


# --------------------------------------------------------------------------- reduce_prod's JVP
# (reductions defines its other rules; the JVP shifts with pad, so it is attached here)

def _reduce_prod_jvp(primals, tangents, *, axes):
    """d prod = sum_i t_i * (product of the entries other than i), the products taken from
    both sides with exclusive running products: no division, so exact with zeros and
    infinities (grad(prod)([inf, 2, 3]) is [6, inf, inf], as in JAX, not NaN)."""
    (x,), (t,) = primals, tangents
    out = reduce_prod_p.bind(x, axes=axes)
    if type(t) is Zero or dtype_kind(aval(x).dtype) not in "fc":
        return out, Zero(aval(out))
    a = aval(x)
    kept = tuple(i for i in range(a.ndim) if i not in axes)
    rows = tuple(a.shape[i] for i in kept)
    n = int(np.prod([a.shape[i] for i in axes], dtype=np.int64))

    def as_rows(v):      # the reduced axes last, as one axis of n entries
        return reshape(transpose(v, kept + tuple(axes)), rows + (n,))
    xr, last = as_rows(x), len(rows)
    keep = ((0, 0, 0),) * last
    before = cumprod(pad(xr, 1, keep + ((1, -1, 0),)), last, False)   # x_0 ... x_{i-1}
    after = cumprod(pad(xr, 1, keep + ((-1, 1, 0),)), last, True)     # x_{i+1} ... x_n-1
    return out, reduce_sum(E.mul(as_rows(t), E.mul(before, after)), (last,))


reduce_prod_p.def_rules(jvp=_reduce_prod_jvp)


def _pair_scan(a, d, axis):
    """Running ``(a, da) * (b, db) = (ab, da b + a db)`` along ``axis`` by the odd-even
    recursion (JAX's associative_scan): pairs of neighbours, the scan of those, then the
    even entries from it. Each output's tangent is reused by the later ones, so a reverse
    pass never meets 0 * inf from an output nobody reads (grad of cumprod([inf, v, 2])[2]
    in v is inf, not NaN, as JAX 0.10.2); the first entry keeps its own tangent."""
    n = aval(a).shape[axis]
    if n < 2:
        return a, d

    def part(v, start, limit=n):
        return slice_in_dim(v, start, limit, 2, axis)

    def comb(x, y):      # (x then y), x earlier in the scan
        (ax, dx), (ay, dy) = x, y
        return E.mul(ax, ay), E.add(E.mul(dx, ay), E.mul(ax, dy))
    odd = _pair_scan(*comb((part(a, 0, n - 1), part(d, 0, n - 1)), (part(a, 1), part(d, 1))),
                     axis)
    prev = tuple(slice_in_dim(v, 0, (n - 1) // 2, 1, axis) for v in odd)
    even = comb(prev, (part(a, 2), part(d, 2)))
    even = tuple(concatenate([slice_in_dim(v, 0, 1, 1, axis), e], axis)
                 for v, e in zip((a, d), even))

    def interleave(e, o):    # e at 0, 2, 4 ..., o at 1, 3, ...
        nd = aval(e).ndim
        ce = [(0, 0, 0)] * nd
        co = [(0, 0, 0)] * nd
        ce[axis] = (0, n - 2 * aval(e).shape[axis] + 1, 1)
        co[axis] = (1, n - 2 * aval(o).shape[axis], 1)
        return E.add(pad(e, 0, ce), pad(o, 0, co))
    return tuple(interleave(e, o) for e, o in zip(even, odd))


def _cumprod_jvp(primals, tangents, *, axis, reverse):
    """The running product's tangent by a scan of ``(a, da) * (b, db) = (ab, da b + a db)``
    (``_pair_scan``): no division, so exact with zeros, infinities and NaNs (grad of
    sum(cumprod([inf, 1, 2]) * [1, 2, 3]) is [9, inf, inf], as in JAX)."""
    (x,), (t,) = primals, tangents
    out = cumprod(x, axis, reverse)
    if type(t) is Zero or dtype_kind(aval(x).dtype) not in "fc":
        return out, Zero(aval(out))
    if reverse:
        return out, rev(_pair_scan(rev(x, (axis,)), rev(t, (axis,)), axis)[1], (axis,))
    return out, _pair_scan(x, t, axis)[1]


cumprod_p.def_rules(jvp=_cumprod_jvp)
