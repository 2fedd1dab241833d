"""Shape-changing structural primitives: they move, copy or reshape elements without
arithmetic, and the helpers every primitive module builds constants with.

broadcast_in_dim, reshape, transpose and squeeze are linear, so each has a
transpose rule and a JVP that applies the op to the tangent; iota (no operands)
is integer-like and not differentiated. The primitives that pick, reverse, join
or pad ranges of elements (slice, rev, concatenate, pad) are in ``slicing.py``.

- ``full``/``broadcast_constant`` record a broadcast scalar or small constant
  rather than a materialised array; ``checked_bind`` runs the shape rule eagerly
  too, so a bad eager lax call gets the rule's message.

>>> import numpy as np
>>> broadcast_in_dim(np.arange(3.0), (2, 3), (1,)).shape
(2, 3)
>>> squeeze(np.zeros((1, 3)), (0,)).shape
(3,)
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from jaxpr_ir import ShapedArray, dtype_kind
from .. import tracing as _tracing
from ..tracing import Tracer
from .base import Primitive, Zero, aval, deflinear, tangent_aval
from .basic import (broadcast_constant, broadcast_in_dim, broadcast_in_dim_p,  # noqa: F401
                    full, transpose, transpose_p)
from ..typing import Array, ArrayLike, DTypeLike, Shape

__all__ = ["broadcast_in_dim", "reshape", "transpose", "squeeze", "expand_dims", "iota",
           "broadcasted_iota", "full", "zeros_like_aval"]


# --------------------------------------------------------------------------- broadcast_in_dim

def _broadcast_in_dim_batch(args, dims, *, shape, broadcast_dimensions):
    (x,), (d,) = args, dims
    size = aval(x).shape[d]
    x = transpose(x, (d,) + tuple(i for i in range(aval(x).ndim) if i != d)) if d != 0 else x
    new_shape = (size,) + tuple(shape)
    new_dims = (0,) + tuple(b + 1 for b in broadcast_dimensions)
    return broadcast_in_dim_p.bind(x, shape=new_shape, broadcast_dimensions=new_dims), 0


# its transpose (a reduce_sum) is attached by ``reductions``
broadcast_in_dim_p.def_rules(batch=_broadcast_in_dim_batch)


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


def reshape(operand: ArrayLike, new_sizes: Shape,
            dimensions: Sequence[int] | None = None) -> Array:
    """Row-major reshape; a no-op (no equation) when the shape already matches.
    ``dimensions`` (JAX's) transposes ``operand`` to that axis order first.

    >>> import numpy as np
    >>> reshape(np.arange(6), (2, 3)).tolist()
    [[0, 1, 2], [3, 4, 5]]
    >>> reshape(np.arange(6).reshape(2, 3), (6,), dimensions=(1, 0)).tolist()
    [0, 3, 1, 4, 2, 5]
    """
    if dimensions is not None:
        dimensions = tuple(int(d) for d in dimensions)
        if sorted(dimensions) != list(range(aval(operand).ndim)):
            raise ValueError(f"reshape: dimensions {dimensions} must be a permutation of the "
                             f"axes of {aval(operand).str_short()}")
        if dimensions != tuple(range(len(dimensions))):
            operand = transpose(operand, dimensions)
    new_sizes = tuple(int(s) for s in new_sizes)
    if aval(operand).shape == new_sizes:
        return operand
    return reshape_p.bind(operand, new_sizes=new_sizes)


# --------------------------------------------------------------------------- transpose

def _transpose_batch(args, dims, *, permutation):
    (x,), (d,) = args, dims
    # keep the batch axis where it is; permute the others around it
    rest = [i for i in range(aval(x).ndim) if i != d]
    perm = [d] + [rest[p] for p in permutation]
    return transpose_p.bind(x, permutation=tuple(perm)), 0


transpose_p.def_rules(batch=_transpose_batch)
deflinear(transpose_p, lambda ct, x, *, permutation: [
    Zero(x.aval) if type(ct) is Zero else transpose(ct, tuple(np.argsort(permutation)))])


# --------------------------------------------------------------------------- helpers

def zeros_like_aval(a: ShapedArray) -> Array:
    """Zeros of the type ``a`` (used by transpose rules for the cotangent of a structure).

    >>> from jaxpr_ir import ShapedArray
    >>> zeros_like_aval(ShapedArray((2,), "float32")).tolist()
    [0.0, 0.0]
    """
    return full(a.shape, 0, a.dtype)


def checked_bind(prim, *args, **params):
    """``prim.bind`` that also runs the shape rule when nothing is traced, so an eager
    lax call with bad operands gets the rule's message rather than numpy's."""
    if not any(isinstance(a, Tracer) for a in args):
        prim.abstract_eval(*[aval(a) for a in args], **params)
    return prim.bind(*args, **params)


def shift_dims(dims, d):
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
    new = shift_dims(dimensions, d)
    return squeeze_p.bind(x, dimensions=new), d - sum(i < d for i in new)


squeeze_p.def_rules(
    abstract_eval=_squeeze_aval,
    impl=lambda x, *, dimensions: np.reshape(
        x, tuple(s for i, s in enumerate(np.shape(x)) if i not in dimensions)),
    batch=_squeeze_batch)
deflinear(squeeze_p, lambda ct, x, *, dimensions: [
    Zero(x.aval) if type(ct) is Zero else reshape(ct, x.aval.shape)])


def squeeze(array: ArrayLike, dimensions: Sequence[int]) -> Array:
    """Remove the size-1 axes ``dimensions``.

    >>> squeeze(np.zeros((1, 3, 1)), (0, 2)).shape
    (3,)
    """
    nd = aval(array).ndim
    dimensions = tuple(sorted(int(d) + nd if int(d) < 0 else int(d) for d in dimensions))
    if not dimensions:
        return array
    return checked_bind(squeeze_p, array, dimensions=dimensions)


def checked_axis(axis: int, ndim: int, fname: str) -> int:
    """``axis`` in ``[-ndim, ndim)`` as a non-negative axis, else ValueError naming
    ``fname`` (``axis % ndim`` alone folds an out-of-range axis onto another one).

    >>> checked_axis(-1, 3, "split")
    2
    """
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{fname}: axis {axis} is out of range for an operand of rank {ndim}")
    return axis % ndim


def expand_dims(array: ArrayLike, dimensions: Sequence[int]) -> Array:
    """Insert size-1 axes at ``dimensions`` (positions in the result), as a reshape.

    >>> expand_dims(np.zeros(3), (0, 2)).shape
    (1, 3, 1)
    """
    shape = list(aval(array).shape)
    dimensions = tuple(int(d) for d in dimensions)
    nd = len(shape) + len(dimensions)
    if any(not -nd <= d < nd for d in dimensions) or \
            len({d % nd for d in dimensions}) != len(dimensions):   # % nd folded them
        raise ValueError(f"expand_dims: dimensions {dimensions} out of range or repeated for "
                         f"a result of rank {nd} (operand shape {tuple(shape)})")
    for d in sorted(d % nd for d in dimensions):
        shape.insert(d, 1)
    return reshape(array, tuple(shape))


# --------------------------------------------------------------------------- iota

iota_p = Primitive("iota")


def _iota_aval(*, dtype, shape, dimension):
    if not 0 <= dimension < len(shape) or any(s < 0 for s in shape):
        raise ValueError(f"iota: dimension {dimension} out of range for shape {shape}")
    if dtype_kind(dtype) not in "iuf":
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
    return _tracing.bind_outermost(prim, (), params)


def broadcasted_iota(dtype: DTypeLike, shape: Shape, dimension: int) -> Array:
    """Values ``0..shape[dimension]-1`` along ``dimension``, broadcast to ``shape``.

    >>> broadcasted_iota(np.int32, (2, 3), 1).tolist()
    [[0, 1, 2], [0, 1, 2]]
    """
    shape, dimension = tuple(int(s) for s in shape), int(dimension)
    if shape:    # the rule's check eagerly too: % len(shape) folded dimension 5 onto 1
        _iota_aval(dtype=np.dtype(dtype), shape=shape, dimension=dimension + len(shape)
                   if -len(shape) <= dimension < 0 else dimension)
    return _bind_nullary(iota_p, dtype=np.dtype(dtype), shape=shape,
                         dimension=dimension % max(len(shape), 1))


def iota(dtype: DTypeLike, size: int) -> Array:
    """``0, 1, ..., size-1`` as a 1-d array of ``dtype``.

    >>> iota(np.int64, 3).tolist()
    [0, 1, 2]
    """
    return broadcasted_iota(dtype, (int(size),), 0)


# --------------------------------------------------------------------------- stop_gradient
# (the primitive sits here, in the first family, so that control flow can use it: vmap of
# a cond with a batched index; ``custom.stop_gradient`` is the public function)

stop_gradient_p = Primitive("stop_gradient")


def _stop_gradient_jvp(primals, tangents):
    (x,) = primals
    out = stop_gradient_p.bind(x)
    return out, Zero(tangent_aval(aval(out)))


stop_gradient_p.def_rules(abstract_eval=lambda a: a, impl=lambda x: x, jvp=_stop_gradient_jvp,
                          batch=lambda args, dims: (stop_gradient_p.bind(args[0]), dims[0]))
