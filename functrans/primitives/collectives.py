"""Collectives over a named axis: psum, pmean, pmax, pmin, all_gather, psum_scatter,
all_to_all, ppermute, axis_index, axis_size.

A name is bound either by ``vmap(f, axis_name=...)`` (the examples of one process) or by
``shard_map`` over a mesh with that axis (the processes of the axis): the same code runs
under both. The primitives record the name. Under a vmap the batching rule of the vmap
owning the name does the work (a reduction or reshuffle of the batch dimension); under a
shard_map the implementation calls MPI on the axis' sub-communicator
(``collectives_mesh``). A vmap binds a name in preference to a mesh. An unbound name is a
``NameError``. Values are never computed while tracing (``defer_concrete``).

Reverse mode. Each collective is linear (pmax/pmin aside) and transposes to another:
psum -> psum, all_gather -> psum_scatter, psum_scatter -> all_gather, ppermute -> the
inverse permutation, all_to_all -> all_to_all with the split and concat axes swapped. The
cotangent of a value that is the same on every member of an axis is held as per-member
parts that sum to it (so psum's transpose is psum; shard_map divides the cotangent of a
replicated output among its copies and sums the parts of a replicated input's cotangent):
see ``functrans.shard_map``.

>>> import functrans as ft, numpy as np
>>> from functrans import lax
>>> ft.vmap(lambda x: x / lax.psum(x, "i"), axis_name="i")(np.array([1.0, 3.0])).tolist()
[0.25, 0.75]
"""
from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

from jaxpr_ir import dtype_kind

from .base import Zero, aval
from .basic import broadcast_in_dim
# the primitives are re-exported for importers (tests, other modules)
from . import collectives_groups as G
from .collectives_prims import (MeshAxis, binding, check_name, into_body, axis_names,  # noqa: F401
                                psum_invariant, record_axis_index, varies, all_gather_p,
                                all_to_all_p, axis_index_p, gather_tiled, lift_invariant,
                                pmax_p, pmin_p, ppermute_p, psum_p, psum_scatter_p,
                                scatter_tiled)
from .elementwise import convert_element_type, div, mul, select_n
from .indexing import dynamic_index_in_dim, dynamic_slice_in_dim
from .structural import reshape, transpose
from ..tracing import Tracer
from ..tree_util import tree_flatten, tree_unflatten
from ..typing import Array, ArrayLike

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "all_to_all",
           "ppermute", "axis_index", "axis_size"]

# --------------------------------------------------------------------------- lax wrappers

def _over_leaves(fn):
    """``fn`` on each leaf of a pytree operand, as JAX's collectives take pytrees."""
    @functools.wraps(fn)
    def f(x, *args, **kwargs):
        leaves, tree = tree_flatten(x)
        if len(leaves) == 1 and leaves[0] is x:
            return fn(x, *args, **kwargs)
        return tree_unflatten(tree, [fn(v, *args, **kwargs) for v in leaves])
    return f



@_over_leaves
def psum(x: ArrayLike, axis_name: str | int | Sequence[str | int], *,
         axis_index_groups: Sequence[Sequence[int]] | None = None) -> Array:
    """Sum of ``x`` over the members of the axis (or axes) ``axis_name`` (a pytree: each
    leaf; booleans are counted as int32, as JAX does). ``axis_index_groups``: a partition of
    the axis' indices; each member sums over its own group (``collectives_groups``).

    >>> import functrans as ft, numpy as np
    >>> ft.vmap(lambda x: psum(x, "i"), axis_name="i")(np.arange(3.0)).tolist()
    [3.0, 3.0, 3.0]
    >>> ft.vmap(lambda t: psum(t, "i"), axis_name="i")({"a": np.ones(2)})["a"].tolist()
    [2.0, 2.0]
    """
    if aval(x).dtype == np.bool_:
        x = convert_element_type(x, np.int32)
    if axis_index_groups is not None:
        groups, rows, i = _grouped(x, axis_name, axis_index_groups, "psum")
        if not isinstance(x, Tracer):   # JAX 0.10.2: a constant times the first group's size
            G.group_size(groups, "psum of a constant")
        return G.grouped_reduce(rows, i, groups, "sum")
    for n in axis_names(axis_name, "psum"):
        frame = binding(n)
        x = (psum_p.bind(into_body(x, frame), axis_name=n) if varies(x, frame)
             else psum_invariant(x, frame.size))
    return x


def axis_size(axis_name: str | int | Sequence[str | int]) -> int:
    """The number of members of the axis (or the product over a tuple of axes).

    >>> import functrans as ft, numpy as np
    >>> ft.vmap(lambda x: x * axis_size("i"), axis_name="i")(np.ones(3)).tolist()
    [3.0, 3.0, 3.0]
    """
    n = 1
    for name in axis_names(axis_name, "axis_size"):
        n *= binding(name).size
    return n


@_over_leaves
def pmean(x: ArrayLike, axis_name: str | int | Sequence[str | int], *,
          axis_index_groups: Sequence[Sequence[int]] | None = None) -> Array:
    """Mean of ``x`` over the axis (or axes) ``axis_name`` (or this member's group of
    ``axis_index_groups``); integers give float64.

    >>> import functrans as ft, numpy as np
    >>> ft.vmap(lambda x: pmean(x, "i"), axis_name="i")(np.arange(3.0)).tolist()
    [1.0, 1.0, 1.0]
    """
    names = axis_names(axis_name, "pmean")
    n = axis_size(names)
    if dtype_kind(aval(x).dtype) not in "fc":
        x = convert_element_type(x, np.float64)
    if axis_index_groups is not None:
        groups, rows, i = _grouped(x, names, axis_index_groups, "pmean")
        k = G.group_size(groups, "pmean (JAX 0.10.2 divides every group's sum by the size "
                                 "of the first group)")
        s = G.grouped_reduce(rows, i, groups, "sum")
        return div(s, np.full(aval(s).shape, k, aval(s).dtype))
    s = psum(x, names)
    return div(s, np.full(aval(s).shape, n, aval(s).dtype))


def _chooser(prim, what, result):
    """``pmax``/``pmin``: ``prim`` over each named axis ``x`` varies along."""
    def f(x, axis_name, *, axis_index_groups=None):
        if axis_index_groups is not None:
            groups, rows, i = _grouped(x, axis_name, axis_index_groups, prim.name)
            return G.grouped_reduce(rows, i, groups, prim.name[1:])
        for n in axis_names(axis_name, prim.name):
            frame = binding(n)
            if varies(x, frame):
                x = prim.bind(into_body(x, frame), axis_name=n)
        return x
    f.__name__ = prim.name
    f.__annotations__ = {"x": "ArrayLike", "axis_name": "str | int | Sequence[str | int]",
                         "axis_index_groups": "Sequence[Sequence[int]] | None",
                         "return": "Array"}
    f.__doc__ = f"""{what} of ``x`` over the axis ``axis_name`` (or this member's group of
    ``axis_index_groups``).

    >>> import functrans as ft, numpy as np
    >>> ft.vmap(lambda x: {prim.name}(x, "i"), axis_name="i")(np.array([1.0, 5.0])).tolist()
    {result}
    """
    return f


pmax = _over_leaves(_chooser(pmax_p, "Maximum", [5.0, 5.0]))
pmin = _over_leaves(_chooser(pmin_p, "Minimum", [1.0, 1.0]))


def _norm_axis(axis, nd, what):
    if not -nd <= axis < nd:
        raise ValueError(f"{what}: axis {axis} out of range for an operand of rank {nd}")
    return axis % nd


@_over_leaves
def all_gather(x: ArrayLike, axis_name: str | int | Sequence[str | int], *,
               axis_index_groups: Sequence[Sequence[int]] | None = None, axis: int = 0,
               tiled: bool = False) -> Array:
    """Every member's ``x``, stacked along a new axis ``axis`` (concatenated if ``tiled``).
    Over a tuple of axes the members are ordered row-major. ``axis_index_groups`` (groups
    of one size): the members of this member's group, in group order.

    >>> import functrans as ft, numpy as np
    >>> ft.vmap(lambda x: all_gather(x, "i"), axis_name="i")(np.arange(2.0)).tolist()
    [[0.0, 1.0], [0.0, 1.0]]
    """
    names = axis_names(axis_name, "all_gather")
    nd = aval(x).ndim
    if tiled and nd == 0:
        raise ValueError("all_gather(tiled=True): the operand must have at least one axis")
    axis = _norm_axis(axis, nd if tiled else nd + 1, "all_gather")
    if axis_index_groups is not None:
        groups, rows, i = _grouped(x, names, axis_index_groups, "all_gather")
        g = G.grouped_gather(rows, i, groups)
        rest = list(range(1, nd + 1))
        g = transpose(g, rest[:axis] + [0] + rest[axis:])
        if tiled:   # the group axis merged with the operand's dimension after it
            gs = aval(g).shape
            g = reshape(g, gs[:axis] + (gs[axis] * gs[axis + 1],) + gs[axis + 2:])
        return g
    # the last name varies fastest: gather it first, then concatenate the earlier ones
    for i, n in enumerate(reversed(names)):
        x = gather_tiled(x, n, axis, binding(n), tiled=tiled or i > 0)
    return x


@_over_leaves
def psum_scatter(x: ArrayLike, axis_name: str | int | Sequence[str | int], *,
                 scatter_dimension: int = 0,
                 axis_index_groups: Sequence[Sequence[int]] | None = None,
                 tiled: bool = False) -> Array:
    """The sum over the axis of ``x``, of which member ``i`` keeps block ``i`` along
    ``scatter_dimension`` (that dimension's size must be the axis size, and is removed,
    unless ``tiled``, where it must divide by it and keeps one block).

    >>> import functrans as ft, numpy as np
    >>> ft.vmap(lambda x: psum_scatter(x, "i"), axis_name="i")(np.ones((2, 2))).tolist()
    [2.0, 2.0]
    """
    names = axis_names(axis_name, "psum_scatter")
    nd = aval(x).ndim
    dim = _norm_axis(scatter_dimension, nd, "psum_scatter")
    n_all = axis_size(names)
    if axis_index_groups is not None:
        return _grouped_scatter(x, names, axis_index_groups, dim, tiled)
    if not tiled and aval(x).shape[dim] != n_all:
        raise ValueError(f"psum_scatter: dimension {dim} of the operand {aval(x).shape} must "
                         f"equal the axis size {n_all} (or use tiled=True)")
    for n in names:               # the first name varies slowest
        x = scatter_tiled(x, n, dim, binding(n))
    if not tiled:
        s = aval(x).shape
        x = reshape(x, s[:dim] + s[dim + 1:])
    return x


@_over_leaves
def ppermute(x: ArrayLike, axis_name: str | int | Sequence[str | int],
             perm: Sequence[tuple[int, int]]) -> Array:
    """Send ``x`` from member ``src`` to member ``dst`` for each pair in ``perm``; members
    no one sends to receive zeros.

    >>> import functrans as ft, numpy as np
    >>> ft.vmap(lambda x: ppermute(x, "i", [(0, 1), (1, 0)]), axis_name="i")(
    ...     np.array([1.0, 2.0])).tolist()
    [2.0, 1.0]
    """
    names = axis_names(axis_name, "ppermute")
    size = axis_size(names)
    perm = tuple((int(s), int(d)) for s, d in perm)
    srcs, dsts = [s for s, _ in perm], [d for _, d in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts) or not all(
            0 <= i < size for i in srcs + dsts):
        raise ValueError(f"ppermute: perm {perm} must pair distinct sources with distinct "
                         f"destinations in range({size})")
    if len(names) > 1:
        return _ppermute_tuple(x, names, perm, size)
    axis_name = names[0]
    frame = binding(axis_name)
    return ppermute_p.bind(into_body(lift_invariant(x, frame), frame), axis_name=axis_name,
                           perm=perm, axis_size=frame.size)


@_over_leaves
def all_to_all(x: ArrayLike, axis_name: str | int | Sequence[str | int], split_axis: int,
               concat_axis: int, *, axis_index_groups: Sequence[Sequence[int]] | None = None,
               tiled: bool = False) -> Array:
    """Split ``x`` along ``split_axis`` into one chunk per member, send chunk ``j`` to
    member ``j``, and concatenate the chunks received along ``concat_axis`` (in member
    order). Untiled, the split axis' size must be the axis size: it is removed, and a new
    axis of that size is inserted at ``concat_axis``.

    >>> import functrans as ft, numpy as np
    >>> ft.vmap(lambda x: all_to_all(x, "i", 0, 0), axis_name="i")(
    ...     np.arange(4.0).reshape(2, 2)).tolist()
    [[0.0, 2.0], [1.0, 3.0]]
    """
    names = axis_names(axis_name, "all_to_all")
    if len(names) > 1 or axis_index_groups is not None:
        return _all_to_all_tuple(x, names, split_axis, concat_axis, tiled, axis_index_groups)
    axis_name = names[0]
    frame = binding(axis_name)
    n, nd = frame.size, aval(x).ndim
    x = into_body(lift_invariant(x, frame), frame)
    if tiled:
        s, c = _norm_axis(split_axis, nd, "all_to_all"), _norm_axis(concat_axis, nd, "all_to_all")
        if aval(x).shape[s] % n:
            raise ValueError(f"all_to_all: split axis {s} of {aval(x).shape} does not divide "
                             f"into {n} chunks")
        return all_to_all_p.bind(x, axis_name=axis_name, split_axis=s, concat_axis=c,
                                 axis_size=n)
    s, c = _norm_axis(split_axis, nd, "all_to_all"), _norm_axis(concat_axis, nd, "all_to_all")
    if aval(x).shape[s] != n:
        raise ValueError(f"all_to_all: split axis {s} of {aval(x).shape} must equal the axis "
                         f"size {n} (or use tiled=True)")
    # a unit axis that becomes the concat axis; the split axis shrinks to 1 and goes
    p = c if c <= s else c + 1
    s2 = s + 1 if s >= p else s
    shape = aval(x).shape
    # broadcast_in_dim, not reshape: a view of a strided operand too (no copy before the
    # collective's own; a reshape of a strided value is a copy)
    x = broadcast_in_dim(x, shape[:p] + (1,) + shape[p:],
                         tuple(d if d < p else d + 1 for d in range(len(shape))))
    y = all_to_all_p.bind(x, axis_name=axis_name, split_axis=s2, concat_axis=p, axis_size=n)
    ys = aval(y).shape
    return reshape(y, ys[:s2] + ys[s2 + 1:])


# Over a tuple of axes (members ordered row-major, the last name fastest) ppermute and
# all_to_all gather every member's operand and keep what this member receives: exact, and
# differentiable through all_gather's rules, at n times the traffic of a one-axis call.

def _ppermute_tuple(x, names, perm, size):
    src = np.zeros(size, np.int32)
    has = np.zeros(size, bool)
    for s, d in perm:
        src[d], has[d] = s, True
    i = axis_index(names)
    row = dynamic_index_in_dim(all_gather(x, names), dynamic_index_in_dim(src, i, 0, False),
                               0, False)
    keep = broadcast_in_dim(dynamic_index_in_dim(has, i, 0, False), aval(row).shape, ())
    return select_n(keep, np.zeros(aval(row).shape, aval(row).dtype), row)


def _all_to_all_tuple(x, names, split_axis, concat_axis, tiled, groups=None):
    n, shape = axis_size(names), aval(x).shape
    nd = len(shape)
    if groups is not None:
        groups, rows, i = _grouped(x, names, groups, "all_to_all")
        n = G.group_size(groups, "all_to_all")
    s, c = _norm_axis(split_axis, nd, "all_to_all"), _norm_axis(concat_axis, nd, "all_to_all")
    if (shape[s] % n) if tiled else (shape[s] != n):
        raise ValueError(f"all_to_all: split axis {s} of {shape} must "
                         f"{'divide into' if tiled else 'equal'} the axis size {n}"
                         f"{'' if tiled else ' (or use tiled=True)'}")
    k = shape[s] // n
    if groups is None:
        i, rows = axis_index(names), all_gather(x, names)
    else:   # over this member's group: its members' operands, its position in the group
        rows = G.grouped_gather(rows, i, groups)
        i = G.group_position(groups, axis_size(names), i)
    # g[j]: member j's chunk for this member; chunk dims as x's with the split axis of size k
    g = dynamic_slice_in_dim(rows, i * np.int32(k), k, s + 1)
    rest = list(range(1, nd + 1))
    if not tiled:      # the split axis (now 1) goes; the member axis lands at concat_axis
        g = reshape(g, aval(g).shape[:s + 1] + aval(g).shape[s + 2:])
        rest = list(range(1, nd))
        return transpose(g, rest[:c] + [0] + rest[c:])
    g = transpose(g, rest[:c] + [0] + rest[c:])
    gs = aval(g).shape
    return reshape(g, gs[:c] + (gs[c] * gs[c + 1],) + gs[c + 2:])


def axis_index(axis_name: str | int | Sequence[str | int]) -> Array:
    """The position (int32) of this member along the axis (row-major over a tuple).

    >>> import functrans as ft, numpy as np
    >>> ft.vmap(lambda x: x + axis_index("i"), axis_name="i")(np.zeros(3)).tolist()
    [0.0, 1.0, 2.0]
    """
    names = axis_names(axis_name, "axis_index")
    out = None
    for n in names:
        frame = binding(n)
        i = record_axis_index(frame, n)
        out = i if out is None else out * np.int32(frame.size) + i
    return out


# --------------------------------------------------------------------------- axis_index_groups

def _grouped(x, axis_name, groups, what):
    """(checked groups, every member's ``x`` stacked, this member's index): what the
    grouped collectives of ``collectives_groups`` are computed from."""
    names = axis_names(axis_name, what)
    frame = binding(names[0]) if len(names) == 1 else None
    groups = G.check_groups(groups, axis_size(names), names, what)
    if type(frame) is MeshAxis and frame.frame.ad_vary is not None:
        raise NotImplementedError(
            f"{what}: axis_index_groups inside a shard_map body with check_vma=True (as "
            "JAX 0.10.2); pass check_vma=False (check_rep=False)")
    return groups, all_gather(x, names), axis_index(names)


def _grouped_scatter(x, names, groups, dim, tiled):
    groups, rows, i = _grouped(x, names, groups, "psum_scatter")
    k = G.group_size(groups, "psum_scatter")
    shape = aval(x).shape
    if (shape[dim] % k) if tiled else (shape[dim] != k):
        raise ValueError(f"psum_scatter: dimension {dim} of the operand {shape} must "
                         f"{'divide by' if tiled else 'equal'} the group size {k}")
    s = G.grouped_reduce(rows, i, groups, "sum")
    return G.take_block(s, G.group_position(groups, axis_size(names), i), k, dim, tiled)


# --------------------------------------------------------------------------- shard_map reverse mode

def replicated_parts(plan, cts):
    """Inside a shard_map body (``shard_map_specs.reverse_mode_plan``): each process's part
    of the cotangent of an output replicated along mesh axes (it divided by their sizes)."""
    if plan is None:
        return cts
    return [c if d == 1 or type(c) is Zero else
            mul(c, np.full(np.shape(c), 1.0 / d, aval(c).dtype)) for c, d in zip(cts, plan[0])]


def replicated_sums(plan, cts):
    """Inside a shard_map body: a replicated input's cotangent, its parts summed (psum)."""
    if plan is None:
        return cts
    return [c if not axes or type(c) is Zero else psum(c, axes)
            for c, axes in zip(cts, plan[1])]
