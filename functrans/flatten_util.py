"""``jax.flatten_util``: ``ravel_pytree``, a pytree of arrays as one 1-d vector and the
function that rebuilds the tree from such a vector (flat optimisers, per-example gradient
norms, Hessians over all parameters).

As JAX's: the leaves are raveled in ``tree_flatten`` order and concatenated in their
promoted dtype (functrans promotes as numpy 2 does: README, "Differences from JAX"); an
empty tree gives an empty float32 vector. When every leaf has the same dtype the unravel
function keeps the dtype of the vector it is given (so a float tangent of float leaves
stays as it is); otherwise it needs the promoted dtype and casts each piece back to its
leaf's dtype. Unravel functions of equal trees compare (and hash) equal, so one can be a
static argument of ``jit`` without a recompile.

>>> import functrans.numpy as fnp
>>> flat, unravel = ravel_pytree({"b": fnp.ones(2), "a": fnp.zeros((1, 2))})
>>> flat.tolist()
[0.0, 0.0, 1.0, 1.0]
>>> unravel(flat * 2)["b"].tolist()
[2.0, 2.0]
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import numpy as fnp
from .tree_util import tree_flatten, tree_unflatten
from .typing import Array

__all__ = ["ravel_pytree"]


class _Unravel:
    """Rebuilds a pytree from a 1-d vector (equal and hashable by tree, sizes, dtypes)."""

    def __init__(self, treedef, shapes, from_dtypes, to_dtype):
        self._key = (treedef, tuple(shapes), from_dtypes, to_dtype)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Unravel) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __call__(self, flat: Array) -> Any:
        treedef, shapes, from_dtypes, to_dtype = self._key
        flat = fnp.asarray(flat)
        sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
        if flat.shape != (sum(sizes),):
            raise ValueError(f"unravel: expected a 1-d array of {sum(sizes)} elements, "
                             f"got shape {flat.shape}")
        if from_dtypes is not None and flat.dtype != to_dtype:
            raise TypeError(f"unravel function given array of dtype {flat.dtype}, but "
                            f"expected dtype {to_dtype}")
        ends = np.cumsum([0] + sizes)
        leaves = []
        for i, shape in enumerate(shapes):
            piece = fnp.reshape(flat[int(ends[i]):int(ends[i + 1])], shape)
            leaves.append(piece if from_dtypes is None else piece.astype(from_dtypes[i]))
        return tree_unflatten(treedef, leaves)


def ravel_pytree(pytree: Any) -> tuple[Array, Callable[[Array], Any]]:
    """Ravel a pytree of arrays and scalars into one 1-d array; return it and the function
    that unravels such an array back into the tree (JAX's ``jax.flatten_util.ravel_pytree``).

    Args:
        pytree: a pytree whose leaves are arrays or scalars.

    Returns:
        ``(flat, unravel)``: the leaves raveled and concatenated in their promoted dtype
        (an empty float32 array for a tree without leaves), and ``unravel(flat) -> tree``.

    >>> import functrans.numpy as fnp
    >>> flat, unravel = ravel_pytree((fnp.arange(2), 3.5))
    >>> flat.tolist(), flat.dtype.name
    ([0.0, 1.0, 3.5], 'float64')
    >>> [x.dtype.name for x in unravel(flat)]
    ['int64', 'float64']
    """
    leaves, treedef = tree_flatten(pytree)
    if not leaves:
        return fnp.zeros((0,), np.float32), _Unravel(treedef, (), None, None)
    leaves = [fnp.asarray(x) for x in leaves]
    from_dtypes = tuple(np.dtype(x.dtype) for x in leaves)
    to_dtype = np.dtype(fnp.result_type(*from_dtypes))
    shapes = [tuple(x.shape) for x in leaves]
    flat = fnp.concatenate([fnp.ravel(x).astype(to_dtype) for x in leaves])
    same = all(d == to_dtype for d in from_dtypes)
    return flat, _Unravel(treedef, shapes, None if same else from_dtypes, to_dtype)
