"""Structural primitives: they move, copy or reshape elements without arithmetic.

broadcast_in_dim, reshape, transpose, squeeze, slice, rev, concatenate and pad
are linear, so each has a transpose rule and a JVP that applies the op to the
tangent; iota (no operands) is integer-like and not differentiated.

- ``slice`` takes static start/limit/stride (stride >= 1); negative steps are
  ``rev`` followed by a slice (``functrans.numpy`` does that).
- ``pad`` takes ``(lo, hi, interior)`` per axis; negative lo/hi crop. Its
  transpose undoes the edges with a pad of ``(-lo, -hi, 0)`` and drops the
  interior padding with a strided slice.

>>> import numpy as np
>>> broadcast_in_dim(np.arange(3.0), (2, 3), (1,)).shape
(2, 3)
>>> pad(np.arange(3.0), 0.0, ((1, -1, 1),)).tolist()
[0.0, 0.0, 0.0, 1.0, 0.0]
"""
from __future__ import annotations

import builtins

import numpy as np

from jaxpr_ir import ShapedArray
from .. import tracing as _tracing
from ..tracing import Tracer
from .base import (Primitive, UndefinedPrimal, Zero, aval, deflinear, move_batch_axis,
                   not_mapped_size)

__all__ = ["broadcast_in_dim", "reshape", "transpose", "squeeze", "expand_dims", "slice",
           "slice_in_dim", "rev", "concatenate", "pad", "iota", "broadcasted_iota",
           "full", "zeros_like_aval"]


# --------------------------------------------------------------------------- broadcast_in_dim

broadcast_in_dim_p = Primitive("broadcast_in_dim")


def _broadcast_in_dim_aval(x, *, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != x.ndim:
        raise TypeError(f"broadcast_in_dim: operand {x.str_short()} needs {x.ndim} "
                        f"broadcast_dimensions, got {broadcast_dimensions}")
    prev = -1
    for i, d in enumerate(broadcast_dimensions):
        if not (0 <= d < len(shape)) or d <= prev:
            raise TypeError(f"broadcast_in_dim: broadcast_dimensions {broadcast_dimensions} must "
                            f"be strictly increasing and within rank {len(shape)}")
        if x.shape[i] not in (1, shape[d]):
            raise TypeError(f"broadcast_in_dim: cannot broadcast operand shape {x.shape} to "
                            f"{tuple(shape)} (dimension {i} of size {x.shape[i]} vs {shape[d]})")
        prev = d
    return ShapedArray(shape, x.dtype, x.weak_type)


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    x = np.asarray(x)
    if not broadcast_dimensions and x.ndim == 0:
        # a scalar: a read-only stride-0 view of it, as np.broadcast_to makes, but built
        # directly (broadcast_to's checks cost several times more on small arrays)
        out = np.ndarray(shape, x.dtype, x, 0, (0,) * len(shape))
        out.flags.writeable = False
        return out
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return np.broadcast_to(x.reshape(expanded), shape)


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    from .reductions import reduce_sum
    in_shape = x.aval.shape
    new_axes = tuple(d for d in range(len(shape)) if d not in broadcast_dimensions)
    # dims of size 1 in the operand that were stretched are summed and kept
    stretched = tuple(d for i, d in enumerate(broadcast_dimensions)
                      if in_shape[i] == 1 and shape[d] != 1)
    out = reduce_sum(ct, new_axes + stretched) if (new_axes or stretched) else ct
    return [reshape(out, in_shape) if stretched else out]


def _broadcast_in_dim_batch(args, dims, *, shape, broadcast_dimensions):
    (x,), (d,) = args, dims
    size = aval(x).shape[d]
    x = transpose(x, (d,) + tuple(i for i in range(aval(x).ndim) if i != d)) if d != 0 else x
    new_shape = (size,) + tuple(shape)
    new_dims = (0,) + tuple(b + 1 for b in broadcast_dimensions)
    return broadcast_in_dim_p.bind(x, shape=new_shape, broadcast_dimensions=new_dims), 0


broadcast_in_dim_p.def_rules(abstract_eval=_broadcast_in_dim_aval, impl=_broadcast_in_dim_impl,
                             batch=_broadcast_in_dim_batch)
deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)


def broadcast_in_dim(x, shape, broadcast_dimensions):
    """Broadcast ``x`` to ``shape``; operand axis i becomes output axis broadcast_dimensions[i]."""
    shape, broadcast_dimensions = tuple(int(s) for s in shape), tuple(int(d) for d in broadcast_dimensions)
    if aval(x).shape == shape and broadcast_dimensions == tuple(range(len(shape))):
        return x
    if not isinstance(x, Tracer) and _tracing._trace_stack:
        return broadcast_constant(x, shape, broadcast_dimensions)
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=broadcast_dimensions)


# --------------------------------------------------------------------------- reshape

reshape_p = Primitive("reshape")


def _reshape_aval(x, *, new_sizes):
    n = 1
    for s in new_sizes:
        n *= s
    if n != x.size or any(s < 0 for s in new_sizes):
        raise ValueError(f"reshape: cannot reshape {x.str_short()} (size {x.size}) "
                         f"into shape {tuple(new_sizes)}")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


def _reshape_batch(args, dims, *, new_sizes):
    (x,), (d,) = args, dims
    if d != 0:
        x = transpose(x, (d,) + tuple(i for i in range(aval(x).ndim) if i != d))
    return reshape_p.bind(x, new_sizes=(aval(x).shape[0],) + tuple(new_sizes)), 0


reshape_p.def_rules(abstract_eval=_reshape_aval,
                    impl=lambda x, *, new_sizes: np.reshape(x, new_sizes),
                    batch=_reshape_batch)
deflinear(reshape_p, lambda ct, x, *, new_sizes: [
    Zero(x.aval) if type(ct) is Zero else reshape(ct, x.aval.shape)])


def reshape(x, new_sizes):
    """Row-major reshape; a no-op (no equation) when the shape already matches."""
    new_sizes = tuple(int(s) for s in new_sizes)
    if aval(x).shape == new_sizes:
        return x
    return reshape_p.bind(x, new_sizes=new_sizes)


# --------------------------------------------------------------------------- transpose

transpose_p = Primitive("transpose")


def _transpose_aval(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise ValueError(f"transpose: permutation {permutation} is not a permutation of "
                         f"the axes of {x.str_short()}")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


def _transpose_batch(args, dims, *, permutation):
    (x,), (d,) = args, dims
    # keep the batch axis where it is; permute the others around it
    rest = [i for i in range(aval(x).ndim) if i != d]
    perm = [d] + [rest[p] for p in permutation]
    return transpose_p.bind(x, permutation=tuple(perm)), 0


transpose_p.def_rules(abstract_eval=_transpose_aval,
                      impl=lambda x, *, permutation: np.transpose(x, permutation),
                      batch=_transpose_batch)
deflinear(transpose_p, lambda ct, x, *, permutation: [
    Zero(x.aval) if type(ct) is Zero else transpose(ct, tuple(np.argsort(permutation)))])


def transpose(x, permutation):
    """Permute axes: output axis i is input axis permutation[i]."""
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(len(permutation))):
        return x
    return transpose_p.bind(x, permutation=permutation)


# --------------------------------------------------------------------------- helpers

def full(shape, value, dtype):
    """A constant of ``shape`` filled with ``value``: a broadcast scalar, no per-element memory.

    Under a trace it is recorded (a literal broadcast in the outermost trace, see
    ``_bind_nullary``) rather than baked into the jaxpr as an array constant.
    """
    from ..tracing import _trace_stack
    shape = tuple(int(s) for s in shape)
    scalar = np.asarray(value, dtype=dtype)
    if not shape:
        return scalar
    if _trace_stack:
        return _trace_stack[0].process(broadcast_in_dim_p, (scalar,),
                                       dict(shape=shape, broadcast_dimensions=()))
    return broadcast_in_dim(scalar, shape, ())


def broadcast_constant(x, shape, broadcast_dimensions):
    """``broadcast_in_dim`` of a constant (not a tracer) recorded like ``full``: under a
    trace the IR keeps the small constant and one broadcast equation, so a backend fuses
    it instead of reading a materialised array."""
    from ..tracing import _trace_stack
    shape = tuple(int(s) for s in shape)
    dims = tuple(int(d) for d in broadcast_dimensions)
    x = np.asarray(x)
    if x.shape == shape:
        return x
    if _trace_stack:
        return _trace_stack[0].process(broadcast_in_dim_p, (x,),
                                       dict(shape=shape, broadcast_dimensions=dims))
    return broadcast_in_dim(x, shape, dims)


def zeros_like_aval(a):
    """Zeros of the type ``a`` (used by transpose rules for the cotangent of a structure)."""
    return full(a.shape, 0, a.dtype)


def checked_bind(prim, *args, **params):
    """``prim.bind`` that also runs the shape rule when nothing is traced, so an eager
    lax call with bad operands gets the rule's message rather than numpy's."""
    if not any(isinstance(a, Tracer) for a in args):
        prim.abstract_eval(*[aval(a) for a in args], **params)
    return prim.bind(*args, **params)


def _shift_dims(dims, d):
    """Operand axes ``dims`` seen in an operand with a batch axis inserted at ``d``."""
    return tuple(i + (i >= d) for i in dims)


# --------------------------------------------------------------------------- squeeze

squeeze_p = Primitive("squeeze")


def _squeeze_aval(x, *, dimensions):
    if len(set(dimensions)) != len(dimensions) or any(not 0 <= d < x.ndim for d in dimensions):
        raise ValueError(f"squeeze: dimensions {dimensions} out of range or repeated for "
                         f"operand {x.str_short()}")
    bad = [d for d in dimensions if x.shape[d] != 1]
    if bad:
        raise ValueError(f"squeeze: cannot squeeze dimensions {tuple(bad)} of operand shape "
                         f"{x.shape}: their size is not 1")
    return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in dimensions),
                       x.dtype, x.weak_type)


def _squeeze_batch(args, dims, *, dimensions):
    (x,), (d,) = args, dims
    new = _shift_dims(dimensions, d)
    return squeeze_p.bind(x, dimensions=new), d - sum(i < d for i in new)


squeeze_p.def_rules(
    abstract_eval=_squeeze_aval,
    impl=lambda x, *, dimensions: np.reshape(
        x, tuple(s for i, s in enumerate(np.shape(x)) if i not in dimensions)),
    batch=_squeeze_batch)
deflinear(squeeze_p, lambda ct, x, *, dimensions: [
    Zero(x.aval) if type(ct) is Zero else reshape(ct, x.aval.shape)])


def squeeze(x, dimensions):
    """Remove the size-1 axes ``dimensions``.

    >>> squeeze(np.zeros((1, 3, 1)), (0, 2)).shape
    (3,)
    """
    nd = aval(x).ndim
    dimensions = tuple(sorted(int(d) + nd if int(d) < 0 else int(d) for d in dimensions))
    if not dimensions:
        return x
    return checked_bind(squeeze_p, x, dimensions=dimensions)


def expand_dims(x, dimensions):
    """Insert size-1 axes at ``dimensions`` (positions in the result), as a reshape.

    >>> expand_dims(np.zeros(3), (0, 2)).shape
    (1, 3, 1)
    """
    shape = list(aval(x).shape)
    nd = len(shape) + len(dimensions)
    for d in sorted(int(d) % nd for d in dimensions):
        shape.insert(d, 1)
    return reshape(x, tuple(shape))


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


def slice(x, start_indices, limit_indices, strides=None):  # noqa: A001 (lax name)
    """``x[start:limit:stride]`` per axis, with static bounds.

    >>> slice(np.arange(10.0), (1,), (8,), (3,)).tolist()
    [1.0, 4.0, 7.0]
    """
    start_indices = tuple(int(i) for i in start_indices)
    limit_indices = tuple(int(i) for i in limit_indices)
    strides = None if strides is None or all(int(s) == 1 for s in strides) else \
        tuple(int(s) for s in strides)
    if strides is None and start_indices == (0,) * len(start_indices) and \
            limit_indices == aval(x).shape:
        return x
    return checked_bind(slice_p, x, start_indices=start_indices, limit_indices=limit_indices,
                        strides=strides)


def slice_in_dim(x, start, limit, stride=1, axis=0):
    """``slice`` along one axis only."""
    shape = aval(x).shape
    axis = int(axis) % len(shape)
    starts = [0] * len(shape)
    limits = list(shape)
    strides = [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = int(start), int(limit), int(stride)
    return slice(x, starts, limits, strides)


# --------------------------------------------------------------------------- rev

rev_p = Primitive("rev")


def _rev_aval(x, *, dimensions):
    if len(set(dimensions)) != len(dimensions) or any(not 0 <= d < x.ndim for d in dimensions):
        raise ValueError(f"rev: dimensions {dimensions} out of range or repeated for operand "
                         f"{x.str_short()}")
    return x


def _rev_batch(args, dims, *, dimensions):
    (x,), (d,) = args, dims
    return rev_p.bind(x, dimensions=_shift_dims(dimensions, d)), d


rev_p.def_rules(abstract_eval=_rev_aval,
                impl=lambda x, *, dimensions: np.flip(np.asarray(x), dimensions),
                batch=_rev_batch)
deflinear(rev_p, lambda ct, x, *, dimensions: [
    Zero(x.aval) if type(ct) is Zero else rev(ct, dimensions)])


def rev(x, dimensions):
    """Reverse the order of elements along ``dimensions``.

    >>> rev(np.arange(3.0), (0,)).tolist()
    [2.0, 1.0, 0.0]
    """
    dimensions = tuple(sorted(int(d) for d in dimensions))
    if not dimensions:
        return x
    return checked_bind(rev_p, x, dimensions=dimensions)


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


def concatenate(operands, dimension):
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
        from .reductions import reduce_sum
        from .elementwise import sub
        axes = tuple(range(aval(ct).ndim))
        res[1] = sub(reduce_sum(ct, axes), reduce_sum(ct_x, axes))
    return res


def _pad_batch(args, dims, *, padding_config):
    (x, pv), (dx, dpv) = args, dims
    if dpv is None:
        cfg = padding_config[:dx] + ((0, 0, 0),) + padding_config[dx:]
        return pad_p.bind(x, pv, padding_config=cfg), dx
    # a batched padding value: pad with zeros, then select the pad positions
    from .elementwise import select_n
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


def pad(x, padding_value, padding_config):
    """Pad with ``padding_value``: ``(lo, hi, interior)`` per axis; negative lo/hi crop.

    >>> pad(np.ones(2), 0.0, ((1, 0, 2),)).tolist()
    [0.0, 1.0, 0.0, 0.0, 1.0]
    """
    padding_config = tuple((int(lo), int(hi), int(it)) for lo, hi, it in padding_config)
    if all(c == (0, 0, 0) for c in padding_config):
        return x
    if isinstance(padding_value, (bool, int, float, complex)):
        padding_value = np.asarray(padding_value, aval(x).dtype)
    return checked_bind(pad_p, x, padding_value, padding_config=padding_config)


# --------------------------------------------------------------------------- iota

iota_p = Primitive("iota")


def _iota_aval(*, dtype, shape, dimension):
    if not 0 <= dimension < len(shape) or any(s < 0 for s in shape):
        raise ValueError(f"iota: dimension {dimension} out of range for shape {shape}")
    if np.dtype(dtype).kind not in "iuf":
        raise TypeError(f"iota: dtype {dtype} must be an integer or floating dtype")
    return ShapedArray(shape, dtype)


def _iota_impl(*, dtype, shape, dimension):
    r = np.arange(shape[dimension], dtype=dtype)
    return np.broadcast_to(r.reshape([-1 if i == dimension else 1 for i in range(len(shape))]),
                           shape)


iota_p.def_rules(abstract_eval=_iota_aval, impl=_iota_impl, not_differentiable=True,
                 # no operands, so never batched: vmap binds it unchanged
                 batch=lambda args, dims, **params: (iota_p.bind(**params), None))


def _bind_nullary(prim, **params):
    """Record an operand-free primitive in the OUTERMOST active trace (eager when none).

    It depends on nothing, so every inner trace must see it as a known outer value
    (like a closure constant): partial evaluation and linearize rely on equations
    living in the innermost trace that owns one of their inputs. Recording it in
    the outermost trace keeps it in a jit's jaxpr instead of a baked-in constant.
    """
    from ..tracing import _trace_stack
    if _trace_stack:
        return _trace_stack[0].process(prim, (), params)
    return prim.bind(**params)


def broadcasted_iota(dtype, shape, dimension):
    """Values ``0..shape[dimension]-1`` along ``dimension``, broadcast to ``shape``.

    >>> broadcasted_iota(np.int32, (2, 3), 1).tolist()
    [[0, 1, 2], [0, 1, 2]]
    """
    shape = tuple(int(s) for s in shape)
    return _bind_nullary(iota_p, dtype=np.dtype(dtype), shape=shape,
                         dimension=int(dimension) % max(len(shape), 1))


def iota(dtype, size):
    """``0, 1, ..., size-1`` as a 1-d array of ``dtype``.

    >>> iota(np.int64, 3).tolist()
    [0, 1, 2]
    """
    return broadcasted_iota(dtype, (int(size),), 0)
