"""Structural primitives: they move, copy or reshape elements without arithmetic.

All are linear, so each has a transpose rule and a JVP that applies the op to
the tangent.

>>> import numpy as np
>>> broadcast_in_dim(np.arange(3.0), (2, 3), (1,)).shape
(2, 3)
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import ShapedArray
from .base import Primitive, Zero, aval, deflinear

__all__ = ["broadcast_in_dim", "reshape", "transpose"]


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
