"""``jax.lax``'s shape helpers for convolutions and windows (by abstract evaluation of
the operations themselves, so always their shapes) and its collectives built on
``ppermute``, ``all_to_all`` and ``psum``.

>>> conv_shape_tuple((2, 3, 9), (4, 3, 3), (2,), [(1, 1)])
(2, 4, 5)
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import numpy as fnp
from .jit import eval_shape
from .lax_window import reduce_window
from .primitives import elementwise as E
from .primitives.collectives import all_to_all, axis_index, ppermute, psum
from .primitives.conv_api import conv_general_dilated, conv_transpose
from .tree_util import tree_map
from .typing import Array, ArrayLike, Shape

__all__ = ["conv_general_permutations", "conv_general_shape_tuple", "conv_shape_tuple",
           "conv_transpose_shape_tuple", "reduce_window_shape_tuple", "pshuffle", "pswapaxes",
           "pbroadcast", "pcast"]


# --------------------------------------------------------------------------- shapes

def conv_general_permutations(dimension_numbers: Sequence[str]) -> tuple[tuple, tuple, tuple]:
    """The permutations (N, C, spatial... / O, I, spatial...) of the three layout
    strings, spatial axes in the kernel's order, as JAX's.

    >>> conv_general_permutations(("NHWC", "HWIO", "NHWC"))
    ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    """
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for spec, (a, b) in zip(dimension_numbers, pairs):
        if not spec.count(a) == spec.count(b) == 1 or len(spec) != len(set(spec)):
            raise TypeError(f"conv_general_permutations: {spec!r} must name {a} and {b} "
                            f"once each, and no axis twice")
    if not set(lhs_spec) - {"N", "C"} == set(rhs_spec) - {"O", "I"} == \
            set(out_spec) - {"N", "C"}:
        raise TypeError(f"conv_general_permutations: the spatial axes of {dimension_numbers} "
                        f"differ")

    def perm(spec, pair):
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs_spec:
            spatial = sorted(spatial, key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)

    return tuple(perm(s, p) for s, p in zip(dimension_numbers, pairs))


def _shape_of(fun, *shapes):
    return tuple(eval_shape(fun, *[np.zeros(tuple(s)) for s in shapes]).shape)


def conv_general_shape_tuple(lhs_shape: Shape, rhs_shape: Shape, window_strides: Sequence[int],
                             padding: Any, dimension_numbers: Any) -> tuple[int, ...]:
    """The shape ``conv_general_dilated`` gives these operands.

    >>> conv_general_shape_tuple((1, 3, 8, 8), (4, 3, 3, 3), (2, 2), "SAME", None)
    (1, 4, 4, 4)
    """
    return _shape_of(lambda x, w: conv_general_dilated(
        x, w, window_strides, padding, dimension_numbers=dimension_numbers),
        lhs_shape, rhs_shape)


def conv_transpose_shape_tuple(lhs_shape: Shape, rhs_shape: Shape,
                               window_strides: Sequence[int], padding: Any,
                               dimension_numbers: Any) -> tuple[int, ...]:
    """The shape ``conv_transpose`` gives these operands.

    >>> conv_transpose_shape_tuple((1, 4, 4, 3), (3, 3, 3, 5), (2, 2), "SAME",
    ...                            ("NHWC", "HWIO", "NHWC"))
    (1, 8, 8, 5)
    """
    return _shape_of(lambda x, w: conv_transpose(
        x, w, window_strides, padding, dimension_numbers=dimension_numbers),
        lhs_shape, rhs_shape)


def conv_shape_tuple(lhs_shape: Shape, rhs_shape: Shape, strides: Sequence[int],
                     pads: Sequence[tuple[int, int]], batch_group_count: int = 1
                     ) -> tuple[int, ...]:
    """The output shape of a convolution in the canonical layout (NC..., OI...).

    >>> conv_shape_tuple((2, 3, 9), (4, 3, 3), (2,), [(1, 1)])
    (2, 4, 5)
    """
    return _shape_of(lambda x, w: conv_general_dilated(
        x, w, strides, [tuple(p) for p in pads], batch_group_count=batch_group_count),
        lhs_shape, rhs_shape)


def reduce_window_shape_tuple(operand_shape: Shape, window_dimensions: Sequence[int],
                              window_strides: Sequence[int], padding: Sequence[tuple],
                              base_dilation: Sequence[int] | None = None,
                              window_dilation: Sequence[int] | None = None
                              ) -> tuple[int, ...]:
    """The shape ``reduce_window`` gives an operand of ``operand_shape``.

    >>> reduce_window_shape_tuple((6, 5), (2, 2), (2, 1), ((0, 0), (1, 0)))
    (3, 5)
    """
    return _shape_of(lambda x: reduce_window(
        x, 0.0, E.add, window_dimensions, window_strides, [tuple(p) for p in padding],
        base_dilation, window_dilation), operand_shape)


# --------------------------------------------------------------------------- collectives

def pshuffle(x: ArrayLike, axis_name: Any, perm: Sequence[int]) -> Array:
    """``ppermute`` with the permutation given as sources: lane i receives lane
    ``perm[i]``'s value.

    >>> import functrans as ft, numpy as np
    >>> ft.vmap(lambda v: pshuffle(v, "i", [1, 0]), axis_name="i")(np.array([1.0, 2.0])).tolist()
    [2.0, 1.0]
    """
    perm = [int(p) for p in perm]
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"pshuffle: perm does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def pswapaxes(x: ArrayLike, axis_name: Any, axis: int, *, axis_index_groups: Any = None
              ) -> Array:
    """Swap the mapped axis ``axis_name`` with the array axis ``axis`` (``all_to_all``
    splitting and concatenating along ``axis``); with ``axis_index_groups`` within each
    group of members (``axis`` has the group size).

    >>> import functrans as ft, numpy as np
    >>> ft.vmap(lambda v: pswapaxes(v, "i", 0), axis_name="i")(np.arange(4.0).reshape(2, 2)
    ...                                                    ).tolist()
    [[0.0, 2.0], [1.0, 3.0]]
    """
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def pbroadcast(x: Any, axis_name: Any, source: int) -> Any:
    """Every lane of ``axis_name`` gets lane ``source``'s value (a pytree).

    >>> import functrans as ft, numpy as np
    >>> ft.vmap(lambda v: pbroadcast(v, "i", 1), axis_name="i")(np.array([1.0, 2.0])).tolist()
    [2.0, 2.0]
    """
    mine = axis_index(axis_name) == int(source)

    def one(v):
        v = fnp.asarray(v)
        return psum(fnp.where(mine, v, fnp.zeros((), v.dtype)), axis_name)
    return tree_map(one, x)


def pcast(x: Any, axis_name: Any, *, to: str) -> Any:
    """JAX 0.10's cast of a value's mesh-axis typing (a pytree): ``to="varying"`` types
    ``x`` as varying along ``axis_name`` (JAX's ``pvary``). The values are unchanged; inside
    a shard_map body with ``check_rep=True`` a gradient w.r.t. the cast value is then each
    process's own, while one w.r.t. the replicated ``x`` behind it is summed over the axes
    (as JAX's pvary transposes to psum). JAX's "reduced" / "unreduced" casts type Explicit
    shardings, which functrans does not model (an error).

    >>> import functrans as ft, numpy as np
    >>> ft.vmap(lambda v: pcast(v, "i", to="varying"), axis_name="i")(np.ones(2)).tolist()
    [1.0, 1.0]
    """
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"pcast: axis_name must be a str or a tuple, got {axis_name!r}")
    if to != "varying":
        raise ValueError(f"pcast: to={to!r} is not supported: functrans types values only as "
                         "varying or not along mesh axes; 'reduced' / 'unreduced' are JAX's "
                         "Explicit-sharding types, which it does not model")
    if not axis_name:
        return x
    # a select on the members' indices: the same value, typed varying along the axes
    member = axis_index(axis_name) >= 0
    return tree_map(lambda v: fnp.where(member, v, v), x)
