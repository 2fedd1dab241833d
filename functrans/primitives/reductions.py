"""Reduction primitives over a tuple of axes.

>>> import numpy as np
>>> float(reduce_sum(np.ones((2, 3)), (0, 1)))
6.0
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import ShapedArray
from .base import Primitive, Zero, aval, deflinear

__all__ = ["reduce_sum"]


def _check_axes(name, x, axes):
    if len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ValueError(f"{name}: axes {tuple(axes)} out of range or repeated for operand "
                         f"{x.str_short()}")


def _reduce_aval(name, kinds="fciub", out_dtype=None):
    def rule(x, *, axes, **params):
        _check_axes(name, x, axes)
        if x.dtype.kind not in kinds:
            raise TypeError(f"{name}: dtype {x.dtype} is not supported")
        shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
        return ShapedArray(shape, out_dtype or x.dtype, x.weak_type)
    return rule


def batch_reduce(prim):
    """Reductions over ``axes``: shift axes past the batch dim, which stays in place."""
    def rule(args, dims, *, axes, **params):
        (x,), (d,) = args, dims
        new_axes = tuple(a + (a >= d) for a in axes)
        out_d = d - sum(a < d for a in new_axes)
        return prim.bind(x, axes=new_axes, **params), out_d
    prim.batch = rule
    return rule


reduce_sum_p = Primitive("reduce_sum")


def _reduce_sum_impl(x, *, axes):
    x = np.asarray(x)
    return np.asarray(np.sum(x, axis=tuple(axes), dtype=x.dtype))


def _reduce_sum_transpose(ct, x, *, axes):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    from .structural import broadcast_in_dim
    shape = x.aval.shape
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return [broadcast_in_dim(ct, shape, kept)]


reduce_sum_p.def_rules(abstract_eval=_reduce_aval("reduce_sum"), impl=_reduce_sum_impl)
deflinear(reduce_sum_p, _reduce_sum_transpose)
batch_reduce(reduce_sum_p)


def reduce_sum(x, axes):
    """Sum over ``axes`` (a tuple); a no-op for an empty tuple."""
    axes = tuple(sorted(int(a) for a in axes))
    if not axes:
        return x
    return reduce_sum_p.bind(x, axes=axes)
