"""``axis_index_groups`` of the collectives: each member reduces, gathers or exchanges with
the members of its own group only (JAX's ``pmap`` collectives).

A grouped collective is computed from ``rows``, every member's operand stacked along a new
leading axis (one ``all_gather`` over the axis), and ``i``, this member's index along it
(``axis_index``): each member keeps what its group gives it. Exact (a masked-out member is
selected away, never multiplied by zero, so an inf elsewhere makes no NaN here) and
differentiable and batchable through all_gather's rules, at the traffic of an all_gather.

JAX 0.10.2 computes these under ``pmap`` (and ``shard_map(check_vma=False)``), and refuses
them under ``vmap`` and ``shard_map(check_vma=True)`` (NotImplementedError). A functrans
``pmap`` over one process is a ``vmap``, so functrans computes them under ``vmap`` too.

>>> import functrans as ft, numpy as np
>>> ft.vmap(lambda x: ft.lax.psum(x, "i", axis_index_groups=[[0, 2], [1, 3]]),
...         axis_name="i")(np.arange(4.0)).tolist()
[2.0, 4.0, 2.0, 4.0]
"""
from __future__ import annotations

import operator

import numpy as np

from jaxpr_ir import dtype_kind
from .base import aval
from .elementwise import select_n
from .indexing import dynamic_index_in_dim, dynamic_slice_in_dim
from .reductions import reduce_max, reduce_min, reduce_sum
from .slicing import concatenate
from .structural import broadcast_in_dim, reshape

__all__ = ["check_groups", "grouped_reduce", "grouped_gather", "group_position",
           "group_size", "take_block"]


def check_groups(groups, size: int, names: tuple, what: str) -> tuple:
    """``axis_index_groups`` as a tuple of tuples of ints, checked against the axis size:
    every index in exactly one group (JAX's ValueError), one axis name."""
    if len(names) != 1:
        raise ValueError(f"{what}: axis_index_groups needs a single axis name, got {names}")
    try:
        out = tuple(tuple(operator.index(j) for j in g) for g in groups)
    except TypeError:
        raise TypeError(f"{what}: axis_index_groups must be a sequence of sequences of "
                        f"ints, got {groups!r}") from None
    flat = sorted(j for g in out for j in g)
    if flat != list(range(size)):
        raise ValueError("axis_index_groups must cover all indices exactly once")
    return out


def _same_group(groups, size):
    m = np.zeros((size, size), bool)
    for g in groups:
        for a in g:
            m[a, list(g)] = True
    return m


def _pick(table, i):
    return dynamic_index_in_dim(table, i, 0, False)


def _fill(kind, dtype):
    dt = np.dtype(dtype)
    if dtype_kind(dt) == "b":
        return kind == "min"
    if dtype_kind(dt) in "iu":
        info = np.iinfo(dt)
        return info.min if kind == "max" else info.max
    return -np.inf if kind == "max" else np.inf


def grouped_reduce(rows, i, groups, kind: str):
    """psum (``kind="sum"``), pmax or pmin over this member's group."""
    size, shape = aval(rows).shape[0], aval(rows).shape
    dt = aval(rows).dtype
    mine = broadcast_in_dim(_pick(_same_group(groups, size), i), shape, (0,))
    if kind == "sum":
        other = np.zeros(shape, dt)
    else:
        other = np.full(shape, _fill(kind, dt), dt)
    kept = select_n(mine, other, rows)
    axes = (0,)
    if kind == "sum":
        return reduce_sum(kept, axes)
    return (reduce_max if kind == "max" else reduce_min)(kept, axes)


def group_size(groups, what: str) -> int:
    """The common size of the groups (a gather or scatter needs one)."""
    sizes = {len(g) for g in groups}
    if len(sizes) != 1:
        raise ValueError(f"{what}: axis_index_groups of different sizes "
                         f"{[len(g) for g in groups]}; the groups must be the same size")
    return sizes.pop()


def group_position(groups, size, i):
    """This member's position in its group (int32)."""
    pos = np.zeros(size, np.int32)
    for g in groups:
        for k, a in enumerate(g):
            pos[a] = k
    return _pick(pos, i)


def grouped_gather(rows, i, groups):
    """The operands of this member's group, stacked along a new leading axis in group
    order."""
    size = aval(rows).shape[0]
    k = group_size(groups, "all_gather")
    members = np.zeros((size, k), np.int32)
    for g in groups:
        for a in g:
            members[a] = g
    mine = _pick(members, i)
    picked = [dynamic_slice_in_dim(rows, _pick(mine, np.int32(q)), 1, 0) for q in range(k)]
    return picked[0] if k == 1 else concatenate(picked, 0)


def take_block(x, pos, k: int, dim: int, keep: bool):
    """Block ``pos`` of ``k`` along ``dim`` (kept as a dimension of the block's size if
    ``keep``, else removed: blocks of size 1)."""
    n = aval(x).shape[dim] // k
    out = dynamic_slice_in_dim(x, pos * np.int32(n), n, dim)
    if keep:
        return out
    s = aval(out).shape
    return reshape(out, s[:dim] + s[dim + 1:])
