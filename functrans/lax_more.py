"""The rest of ``jax.lax``'s public functions, composed from the primitives: the ragged
products (``ragged_dot``, ``ragged_dot_general``), JAX's shape and structure helpers
(``broadcast``, ``collapse``, ``index_in_dim``, ``split``, ``stack``...), ``select``,
and a general ``reduce``.

>>> import numpy as np
>>> from functrans import lax
>>> lax.ragged_dot(np.ones((3, 2)), np.stack([np.eye(2), 2 * np.eye(2)]),
...                np.array([1, 2])).tolist()
[[1.0, 1.0], [2.0, 2.0], [2.0, 2.0]]
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

import numpy as np

from . import numpy as fnp
from .precision import DotDimensionNumbers, PrecisionLike, dot_general
from .primitives import elementwise as E
from .primitives.control_flow import scan
from .primitives import reductions as R
from .primitives.structural import checked_axis
from .primitives.reductions import reduce_max, reduce_min, reduce_prod, reduce_sum
from .primitives.indexing import dynamic_update_slice
from .primitives.slicing import slice_in_dim
from .lax_keywords import mul as lax_mul
from .primitives.structural import broadcast_in_dim, reshape
from .device import sharding_constraint
from .sharding import PartitionSpec, Sharding
from .tree_util import tree_flatten, tree_map, tree_unflatten
from .key_array import KeyArray, key_words
from .typing import Array, ArrayLike, DTypeLike, Shape

__all__ = ["RaggedDotDimensionNumbers", "ragged_dot", "ragged_dot_general", "select",
           "broadcast", "broadcast_to_rank", "broadcast_shapes", "broadcast_like", "collapse",
           "dtype", "full_like", "empty", "index_in_dim", "dynamic_update_slice_in_dim",
           "dynamic_update_index_in_dim", "index_take", "split", "stack", "unstack", "tile",
           "reduce", "reduce_and", "reduce_or", "reduce_xor", "optimization_barrier",
           "stage", "shape_as_value", "with_sharding_constraint", "composite"]


# --------------------------------------------------------------------------- ragged dot

@dataclasses.dataclass(frozen=True, init=False)
class RaggedDotDimensionNumbers:
    """The dimensions of a ragged product, as JAX's: ``dot_dimension_numbers``
    (``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``), the one lhs
    ragged dimension and the rhs group dimensions (one, or none).

    >>> RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0]).lhs_ragged_dimensions
    (0,)
    """
    dot_dimension_numbers: DotDimensionNumbers
    lhs_ragged_dimensions: tuple
    rhs_group_dimensions: tuple

    def __init__(self, dot_dimension_numbers: Any, lhs_ragged_dimensions: Sequence[int],
                 rhs_group_dimensions: Sequence[int]) -> None:
        object.__setattr__(self, "dot_dimension_numbers",
                           tuple(tuple(map(tuple, t)) for t in dot_dimension_numbers))
        object.__setattr__(self, "lhs_ragged_dimensions", tuple(lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", tuple(rhs_group_dimensions))


def _group_mask(group_sizes, size):
    """(g, size) booleans: position i lies in group j = [sum sizes[:j], sum sizes[:j+1])."""
    ends = fnp.cumsum(group_sizes)
    starts = ends - group_sizes
    pos = fnp.arange(size, dtype=ends.dtype)
    return (pos[None, :] >= starts[:, None]) & (pos[None, :] < ends[:, None])


def ragged_dot_general(lhs: ArrayLike, rhs: ArrayLike, group_sizes: ArrayLike,
                       ragged_dot_dimension_numbers: RaggedDotDimensionNumbers,
                       precision: PrecisionLike = None,
                       preferred_element_type: DTypeLike | None = None,
                       group_offset: ArrayLike | None = None) -> Array:
    """JAX's ragged product in its three modes: the lhs ragged dimension a free one
    (``[b, m, k] x [g, b, k, n] -> [b, m, n]``, the rows of group j times ``rhs[j]``,
    rows past the groups zero), a contracting one (``-> [g, b, m, n]``, one product per
    group of the contraction) or a batch one (a plain ``dot_general``). ``group_sizes``
    has shape ``(g,)``. Composed of masks and ``dot_general`` (g dense products), so
    differentiable in lhs and rhs, batched and compiled like any product.

    >>> import numpy as np
    >>> dn = RaggedDotDimensionNumbers((([1], [0]), ([], [])), [1], [])
    >>> ragged_dot_general(np.ones((1, 3)), np.ones((3, 1)), np.array([1, 2]), dn).tolist()
    [[[1.0]], [[2.0]]]
    """
    if group_offset is not None:
        raise NotImplementedError("ragged_dot_general: group_offset is not supported "
                                  "(JAX 0.10.2 rejects it on CPU too)")
    lhs, rhs, gs = fnp.asarray(lhs), fnp.asarray(rhs), fnp.asarray(group_sizes)
    if gs.dtype.kind not in "iu" or gs.ndim != 1:
        raise TypeError(f"ragged_dot_general: group_sizes must be a 1-d integer array, "
                        f"got {gs.dtype}{list(gs.shape)}")
    rdn = ragged_dot_dimension_numbers
    (lc, rc), (lb, rb) = rdn.dot_dimension_numbers
    if len(rdn.lhs_ragged_dimensions) != 1:
        raise ValueError("ragged_dot_general: exactly one lhs ragged dimension, got "
                         f"{rdn.lhs_ragged_dimensions}")
    rag = rdn.lhs_ragged_dimensions[0] % lhs.ndim
    groups = rdn.rhs_group_dimensions
    g = gs.shape[0]
    dims = (tuple(lc), tuple(rc)), (tuple(lb), tuple(rb))
    if rag in lb:
        if groups:
            raise ValueError("ragged_dot_general: a ragged batch dimension takes no rhs "
                             "group dimension")
        return dot_general(lhs, rhs, dims, precision, preferred_element_type)
    mask = _group_mask(gs, lhs.shape[rag])
    mask = reshape(mask, (g,) + tuple(lhs.shape[rag] if i == rag else 1
                                      for i in range(lhs.ndim)))
    lhs_g = fnp.where(mask, lhs[None], fnp.zeros((), lhs.dtype))      # (g,) + lhs.shape
    shift = lambda ds: tuple(d + 1 for d in ds)                          # noqa: E731
    if rag in lc:                     # one product per group of the contraction
        if groups:
            raise ValueError("ragged_dot_general: a ragged contracting dimension takes no "
                             "rhs group dimension")
        out = dot_general(lhs_g, rhs, ((shift(lc), tuple(rc)), (shift(lb), tuple(rb))),
                          precision, preferred_element_type)
        return fnp.moveaxis(out, len(lb), 0)
    if len(groups) != 1 or rhs.shape[groups[0]] != g:
        raise ValueError(f"ragged_dot_general: a ragged free dimension needs one rhs group "
                         f"dimension of size {g}, got {groups} on rhs {list(rhs.shape)}")
    out = dot_general(lhs_g, rhs, ((shift(lc), tuple(rc)),
                                   ((0,) + shift(lb), (groups[0],) + tuple(rb))),
                      precision, preferred_element_type)
    return fnp.sum(out, axis=0, dtype=out.dtype)


def ragged_dot(lhs: ArrayLike, rhs: ArrayLike, group_sizes: ArrayLike,
               precision: PrecisionLike = None, preferred_element_type: DTypeLike | None = None,
               group_offset: ArrayLike | None = None) -> Array:
    """``lhs`` (m, k) times ``rhs`` (g, k, n) by groups of rows: the first
    ``group_sizes[0]`` rows of lhs times ``rhs[0]``, the next ``group_sizes[1]`` times
    ``rhs[1]``...; rows past ``sum(group_sizes)`` give zeros (as JAX's).

    >>> import numpy as np
    >>> ragged_dot(np.ones((2, 1)), np.array([[[1.0]], [[5.0]]]), np.array([1, 1])).tolist()
    [[1.0], [5.0]]
    """
    lhs, rhs = fnp.asarray(lhs), fnp.asarray(rhs)
    if lhs.ndim != 2 or rhs.ndim != 3:
        raise TypeError(f"ragged_dot: lhs must be (m, k) and rhs (g, k, n), got "
                        f"{list(lhs.shape)} and {list(rhs.shape)}")
    dn = RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])
    return ragged_dot_general(lhs, rhs, group_sizes, dn, precision, preferred_element_type,
                              group_offset)


# --------------------------------------------------------------------------- structure

def select(pred: ArrayLike, on_true: ArrayLike, on_false: ArrayLike) -> Array:
    """``on_true`` where ``pred``, else ``on_false`` (equal shapes, or a scalar ``pred``).

    >>> import numpy as np
    >>> select(np.array([True, False]), np.ones(2), np.zeros(2)).tolist()
    [1.0, 0.0]
    """
    if isinstance(on_true, KeyArray) or isinstance(on_false, KeyArray):   # typed keys
        t, f = key_words("select", on_true), key_words("select", on_false)
        p = pred if fnp.ndim(pred) == 0 else broadcast_in_dim(pred, tuple(t.shape), tuple(
            range(fnp.ndim(pred))))
        return KeyArray(E.select_n(p, f, t))
    return E.select_n(pred, on_false, on_true)


def broadcast(operand: ArrayLike, sizes: Sequence[int]) -> Array:
    """New leading axes of ``sizes``.

    >>> import numpy as np
    >>> broadcast(np.ones(3), (2,)).shape
    (2, 3)
    """
    x = fnp.asarray(operand)
    sizes = tuple(int(s) for s in sizes)
    return broadcast_in_dim(x, sizes + x.shape, tuple(range(len(sizes), len(sizes) + x.ndim)))


def broadcast_to_rank(x: ArrayLike, rank: int) -> Array:
    """Leading axes of length 1 up to ``rank``.

    >>> import numpy as np
    >>> broadcast_to_rank(np.ones(3), 3).shape
    (1, 1, 3)
    """
    x = fnp.asarray(x)
    return broadcast(x, (1,) * max(int(rank) - x.ndim, 0))


def broadcast_shapes(*shapes: Shape) -> tuple[int, ...]:
    """numpy's broadcast of ``shapes``.

    >>> broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    return tuple(int(d) for d in np.broadcast_shapes(*[tuple(s) for s in shapes]))


def broadcast_like(arr: ArrayLike, like_arr: ArrayLike) -> Array:
    """``arr`` broadcast to the shape of ``like_arr``.

    >>> import numpy as np
    >>> broadcast_like(np.ones(3), np.zeros((2, 3))).shape
    (2, 3)
    """
    return fnp.broadcast_to(arr, fnp.shape(like_arr))


def collapse(operand: ArrayLike, start_dimension: int, stop_dimension: int | None = None
             ) -> Array:
    """Axes ``start_dimension`` to ``stop_dimension`` (exclusive; the end if None) merged.

    >>> import numpy as np
    >>> collapse(np.ones((2, 3, 4)), 1).shape
    (2, 12)
    """
    x = fnp.asarray(operand)
    lo = start_dimension % x.ndim if x.ndim else 0
    hi = x.ndim if stop_dimension is None else (
        stop_dimension % x.ndim if stop_dimension < 0 else stop_dimension)
    return reshape(x, x.shape[:lo] + (int(np.prod(x.shape[lo:hi], dtype=np.int64)),)
                   + x.shape[hi:])


def dtype(x: Any) -> np.dtype:
    """The dtype of a value or a type (functrans keeps 64-bit types).

    >>> dtype(1.0), dtype(np.float32)
    (dtype('float64'), dtype('float32'))
    """
    if isinstance(x, (type, str, np.dtype)):
        return np.dtype(x)
    return fnp.asarray(x).dtype


def full_like(x: ArrayLike, fill_value: ArrayLike, dtype: DTypeLike | None = None,
              shape: Shape | None = None, sharding: Any = None) -> Array:
    """An array of ``fill_value`` with ``x``'s shape and dtype (or the ones given).

    >>> import numpy as np
    >>> full_like(np.zeros(2, np.float32), 3).tolist()
    [3.0, 3.0]
    """
    return fnp.full_like(x, fill_value, dtype, shape)    # (weak for a weak x, as JAX's)


def empty(shape: Shape, dtype: DTypeLike, *, out_sharding: Any = None) -> Array:
    """An array of ``shape``; its values are zeros here (JAX leaves them unspecified).

    >>> empty((2,), np.float32).shape
    (2,)
    """
    return fnp.zeros(tuple(shape), dtype)


def index_in_dim(operand: ArrayLike, index: int, axis: int = 0, keepdims: bool = True
                 ) -> Array:
    """Element ``index`` (negative counts from the end) along ``axis``.

    >>> import numpy as np
    >>> index_in_dim(np.arange(6.0).reshape(2, 3), -1, 1, keepdims=False).tolist()
    [2.0, 5.0]
    """
    x = fnp.asarray(operand)
    axis = checked_axis(axis, x.ndim, "index_in_dim")
    n = x.shape[axis]
    i = int(index) + n if int(index) < 0 else int(index)
    if not 0 <= i < n:
        raise IndexError(f"index_in_dim: index {index} out of bounds for axis {axis} of "
                         f"size {n}")
    out = slice_in_dim(x, i, i + 1, 1, axis)
    return out if keepdims else fnp.squeeze(out, axis)


def dynamic_update_slice_in_dim(operand: ArrayLike, update: ArrayLike, start_index: ArrayLike,
                                axis: int, *, allow_negative_indices: bool = True) -> Array:
    """``update`` written into ``operand`` from ``start_index`` along ``axis``.

    >>> import numpy as np
    >>> dynamic_update_slice_in_dim(np.zeros(4), np.ones(2), 1, 0).tolist()
    [0.0, 1.0, 1.0, 0.0]
    """
    x = operand if isinstance(operand, KeyArray) else fnp.asarray(operand)
    axis = checked_axis(axis, x.ndim, "dynamic_update_slice_in_dim")
    start = fnp.asarray(start_index)
    starts = [fnp.zeros((), start.dtype)] * x.ndim
    starts[axis] = start
    u = update if isinstance(x, KeyArray) else fnp.asarray(update, x.dtype)   # keys: as they are
    return dynamic_update_slice(x, u, starts, allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand: ArrayLike, update: ArrayLike, index: ArrayLike,
                                axis: int, *, allow_negative_indices: bool = True) -> Array:
    """``update`` (without ``axis``, or with it of length 1) written at ``index``.

    >>> import numpy as np
    >>> dynamic_update_index_in_dim(np.zeros((2, 2)), np.ones(2), 1, 0).tolist()
    [[0.0, 0.0], [1.0, 1.0]]
    """
    x, u = fnp.asarray(operand), fnp.asarray(update)
    axis = checked_axis(axis, x.ndim, "dynamic_update_index_in_dim")
    if u.ndim == x.ndim - 1:
        u = fnp.expand_dims(u, axis)
    return dynamic_update_slice_in_dim(x, u, index, axis,
                                       allow_negative_indices=allow_negative_indices)


def index_take(src: ArrayLike, idxs: Sequence[ArrayLike], axes: Sequence[int]) -> Array:
    """``src`` at the index arrays ``idxs`` (one per axis of ``axes``): result
    ``(n,) + the other axes``. Indices are taken modulo their axis's length, as JAX's
    (-1 is the last, 5 on an axis of 4 is 1).

    >>> import numpy as np
    >>> index_take(np.arange(6.0).reshape(2, 3), [np.array([1, 0])], [0]).tolist()
    [[3.0, 4.0, 5.0], [0.0, 1.0, 2.0]]
    """
    x = fnp.asarray(src)
    axes = [a % x.ndim for a in axes]
    x = fnp.moveaxis(x, axes, list(range(len(axes))))
    return x[tuple(fnp.asarray(i) % n for i, n in zip(idxs, x.shape))]


def split(operand: ArrayLike, sizes: Sequence[int], axis: int = 0) -> list[Array]:
    """Consecutive pieces of ``sizes`` along ``axis`` (they must add up to its length).

    >>> import numpy as np
    >>> [p.tolist() for p in split(np.arange(3.0), [1, 2])]
    [[0.0], [1.0, 2.0]]
    """
    x = fnp.asarray(operand)
    axis = checked_axis(axis, x.ndim, "split")
    sizes = [int(s) for s in sizes]
    if sum(sizes) != x.shape[axis] or min(sizes, default=0) < 0:
        raise ValueError(f"split: sizes {sizes} must be non-negative and add up to "
                         f"{x.shape[axis]} (axis {axis} of {list(x.shape)})")
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    return [slice_in_dim(x, int(a), int(b), 1, axis) for a, b in zip(starts[:-1], starts[1:])]


def stack(operands: Sequence[ArrayLike], axis: int = 0) -> Array:
    """The arrays joined along a new ``axis``.

    >>> import numpy as np
    >>> stack([np.ones(2), np.zeros(2)], 1).tolist()
    [[1.0, 0.0], [1.0, 0.0]]
    """
    return fnp.stack([fnp.asarray(o) for o in operands], axis=axis)


def unstack(x: ArrayLike, axis: int = 0) -> tuple[Array, ...]:
    """The slices of ``x`` along ``axis``.

    >>> import numpy as np
    >>> [v.tolist() for v in unstack(np.arange(4.0).reshape(2, 2))]
    [[0.0, 1.0], [2.0, 3.0]]
    """
    x = fnp.asarray(x)
    return tuple(index_in_dim(x, i, axis, keepdims=False) for i in range(x.shape[axis]))


def tile(operand: ArrayLike, reps: Sequence[int]) -> Array:
    """``operand`` repeated ``reps[i]`` times along axis i.

    >>> import numpy as np
    >>> tile(np.array([1, 2]), [2]).tolist()
    [1, 2, 1, 2]
    """
    return fnp.tile(operand, tuple(int(r) for r in reps))


# --------------------------------------------------------------------------- reductions

_MONOIDS = {E.add: reduce_sum, E.mul: reduce_prod, E.max: reduce_max, E.min: reduce_min,
            lax_mul: reduce_prod}   # lax.mul (its out_dtype= front end)


def reduce(operands: Any, init_values: Any, computation: Callable[[Any, Any], Any],
           dimensions: Sequence[int]) -> Any:
    """Fold ``computation`` over ``dimensions``, starting from ``init_values`` (pytrees of
    arrays and their scalar starts, as JAX's). ``lax.add``/``mul``/``max``/``min`` on one
    array use the reduction primitives; any other computation folds the reduced axes in
    order with ``scan`` (elementwise over the kept ones).

    >>> import numpy as np
    >>> from functrans import lax
    >>> reduce(np.arange(6.0).reshape(2, 3), 1.0, lax.add, (1,)).tolist()
    [4.0, 13.0]
    """
    xs, tree = tree_flatten(operands)
    inits, init_tree = tree_flatten(init_values)
    if init_tree != tree:
        raise TypeError(f"reduce: operands {tree} and init_values {init_tree} differ")
    xs = [fnp.asarray(x) for x in xs]
    nd = xs[0].ndim
    dimensions = tuple(dimensions)
    if any(not -nd <= int(d) < nd for d in dimensions) or \
            len({int(d) % nd for d in dimensions}) != len(dimensions):
        # d % nd folded an axis out of range onto another one (lax.reduce of a vector
        # over (1,) summed axis 0)
        raise ValueError(f"reduce: dimensions {dimensions} out of range or repeated for "
                         f"operand {fnp.shape(xs[0])} (rank {nd})")
    dims = tuple(sorted(int(d) % nd for d in dimensions))
    kept = tuple(s for i, s in enumerate(xs[0].shape) if i not in dims)
    inits = [fnp.broadcast_to(fnp.asarray(v, x.dtype), kept) for v, x in zip(inits, xs)]
    if len(xs) == 1 and computation in _MONOIDS:
        return tree_unflatten(tree, [computation(_MONOIDS[computation](xs[0], dims),
                                                 inits[0])])
    n = int(np.prod([xs[0].shape[d] for d in dims], dtype=np.int64))
    rows = [fnp.moveaxis(reshape(fnp.moveaxis(x, dims, tuple(range(nd - len(dims), nd))),
                                 kept + (n,)), -1, 0) for x in xs]

    def body(carry, row):
        out, _ = tree_flatten(computation(tree_unflatten(tree, carry),
                                          tree_unflatten(tree, row)))
        return [fnp.asarray(o, c.dtype) for o, c in zip(out, carry)], None

    final, _ = scan(body, inits, rows)
    return tree_unflatten(tree, final)


def reduce_and(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Logical and of booleans, bitwise and of integers, over ``axes`` (JAX's).

    >>> import numpy as np
    >>> reduce_and(np.array([[7, 5], [2, 3]], np.int32), (1,)).tolist()
    [5, 2]
    """
    x = fnp.asarray(operand)
    if x.dtype.kind in "iu":
        return reduce(x, ~np.zeros((), x.dtype), E.bitwise_and, axes)
    return R.reduce_and(x, axes)


def reduce_or(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Logical or of booleans, bitwise or of integers, over ``axes`` (JAX's).

    >>> import numpy as np
    >>> reduce_or(np.array([[1, 4], [2, 3]], np.int32), (1,)).tolist()
    [5, 3]
    """
    x = fnp.asarray(operand)
    if x.dtype.kind in "iu":
        return reduce(x, np.zeros((), x.dtype), E.bitwise_or, axes)
    return R.reduce_or(x, axes)


def reduce_xor(operand: ArrayLike, axes: Sequence[int]) -> Array:
    """Bitwise exclusive or over ``axes`` (booleans or integers).

    >>> import numpy as np
    >>> reduce_xor(np.array([[1, 2, 4], [7, 7, 1]], np.int32), (1,)).tolist()
    [7, 1]
    """
    x = fnp.asarray(operand)
    if x.dtype.kind not in "biu":
        raise TypeError(f"reduce_xor: boolean or integer operand, got {x.dtype}")
    return reduce(x, fnp.zeros((), x.dtype), E.bitwise_xor, axes)


# --------------------------------------------------------------------------- identities

def optimization_barrier(operand: Any, /) -> Any:
    """``operand`` (a pytree) unchanged: functrans's compiler does not move work across
    calls the way XLA's does, so the barrier has nothing to stop.

    >>> optimization_barrier((1.0, 2.0))
    (1.0, 2.0)
    """
    return operand


def stage(x: ArrayLike, /) -> Array:
    """``x`` as an array (inside a trace: a traced value).

    >>> stage(2.0).tolist()
    2.0
    """
    return fnp.asarray(x)


def shape_as_value(shape: Shape) -> Array:
    """A shape as an int32 array, as JAX's.

    >>> shape_as_value((2, 3)).tolist()
    [2, 3]
    """
    return fnp.asarray([int(s) for s in shape], np.int32)


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """``x``'s values unchanged, each leaf checked against ``shardings`` (a
    ``NamedSharding``, a ``PartitionSpec`` under ``ft.set_mesh``, or a pytree prefix of
    them): rank, mesh axis names, each split dimension divisible, as JAX checks. A
    functrans process is one device and holds arrays whole, so there is nothing to move;
    outside a transform the result carries the sharding (``.sharding``).

    >>> import functrans as ft
    >>> mesh = ft.make_mesh((1,), ("i",))
    >>> with_sharding_constraint(np.ones(2), ft.NamedSharding(mesh, ft.P("i"))).tolist()
    [1.0, 1.0]
    """
    if isinstance(shardings, (Sharding, PartitionSpec)):
        return sharding_constraint(x, shardings, "with_sharding_constraint")
    return tree_map(lambda s, v: sharding_constraint(v, s, "with_sharding_constraint"),
                    shardings, x,
                    is_leaf=lambda s: s is None or isinstance(s, (Sharding, PartitionSpec)))


def composite(decomposition: Callable, name: str, version: int = 0) -> Callable:
    """``decomposition`` itself: JAX keeps the name for XLA's composite ops, whose
    meaning is the decomposition.

    >>> composite(lambda x: x + 1.0, "my.inc")(1.0)
    2.0
    """
    def call(*args: Any, **kwargs: Any) -> Any:
        return decomposition(*args, **kwargs)
    call.__name__ = str(name)
    call.__doc__ = decomposition.__doc__
    return call
