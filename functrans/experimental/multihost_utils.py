"""Helpers for programs run by many processes (JAX's ``jax.experimental.multihost_utils``):
``process_allgather``, ``broadcast_one_to_all``, ``sync_global_devices``, ``assert_equal``,
``host_local_array_to_global_array`` and ``global_array_to_host_local_array``.

They communicate through functrans's MPI layer, as the collectives of ``shard_map`` do:
over a mesh of every process, ``Mesh((process_count(),), ("processes",))``, an all-gather or
an all-reduce on its communicator, counted by ``ft.distributed.comm_stats`` (``all_gather``,
``psum``, ``pmax``). Before each, the processes compare the shapes and dtypes of what they
pass (one small extra message) and all raise if they differ, as a mismatch would otherwise
read garbage. With one process nothing is communicated (as in JAX). Every process must call
them in the same order (SPMD). They work on concrete values (numpy or functrans arrays),
not inside ``jit``; ``global_array_to_host_local_array`` also works on traced values.

Global arrays here are held whole by every process (see ``functrans.global_array``), so a
global array (one whose sharding spans more than one process) needs no gathering: its
value is already everywhere.

>>> import numpy as np
>>> process_allgather({"a": np.arange(3)})["a"].tolist()      # one process: stacked
[[0, 1, 2]]
"""
from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from .. import distributed
from ..global_array import make_array_from_process_local_data
from ..primitives.collectives_mesh import mesh_all_gather, mesh_pmax, mesh_psum
from ..sharding import Mesh, NamedSharding, PartitionSpec, bound_mesh, mesh_for
from ..tracing import Tracer, wrap
from ..tree_util import tree_broadcast, tree_flatten, tree_leaves, tree_map, tree_unflatten

__all__ = ["process_allgather", "broadcast_one_to_all", "sync_global_devices", "assert_equal",
           "host_local_array_to_global_array", "global_array_to_host_local_array"]

_AXIS = "processes"


def _all_processes() -> Mesh:
    """The mesh of every process along one axis (its communicator is made once)."""
    return mesh_for(((_AXIS, distributed.process_count()),))


def _is_global(x: Any) -> bool:
    """An Array whose NamedSharding spans several processes (held whole everywhere)."""
    s = getattr(x, "__dict__", {}).get("_sharding")
    return isinstance(s, NamedSharding) and s.mesh.size > 1


def _host(x: Any, what: str) -> np.ndarray:
    if isinstance(x, Tracer):
        raise TypeError(f"{what} needs concrete values (it communicates between processes); "
                        "call it outside jit, grad and vmap")
    a = np.asarray(x)
    if a.dtype == object or a.dtype.kind not in "biufc":
        raise TypeError(f"{what}: cannot communicate a {type(x).__name__} (dtype {a.dtype}); "
                        "pass numbers or arrays")
    return a


def _check_same_everywhere(tree: Any, arrays: list, what: str) -> None:
    """Every process must pass the same pytree structure, shapes and dtypes."""
    mine = (str(tree), tuple((a.shape, a.dtype.str) for a in arrays))
    every = distributed.world().allgather(mine)
    for rank, theirs in enumerate(every):
        if theirs != every[0]:
            raise ValueError(f"{what}: the processes pass different values: process 0 "
                             f"{every[0][0]} with (shape, dtype) {list(every[0][1])}, process "
                             f"{rank} {theirs[0]} with {list(theirs[1])}")


def _gather(a: np.ndarray) -> np.ndarray:
    """Every process's ``a`` stacked along a new leading axis (bytes, so every dtype)."""
    n = distributed.process_count()
    raw = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
    with bound_mesh(_all_processes()):
        out = mesh_all_gather(raw, _AXIS, 0)
    return np.ascontiguousarray(out).view(a.dtype).reshape((n,) + a.shape)


def process_allgather(in_tree: Any, tiled: bool = False) -> Any:
    """Every process's values of the pytree ``in_tree`` (same shapes and dtypes on every
    process), as numpy arrays: stacked along a new leading axis (``tiled=False``) or
    concatenated along axis 0 (``tiled=True``; a scalar is stacked on many processes and
    stays a scalar on one, as in JAX). A global array (sharded over several processes) is
    returned whole, and needs ``tiled=True`` (JAX's rule).

    >>> import numpy as np
    >>> process_allgather(np.arange(3), tiled=True).tolist()
    [0, 1, 2]
    """
    leaves, tree = tree_flatten(in_tree)
    what = "process_allgather"
    if any(_is_global(x) for x in leaves) and not tiled:
        raise ValueError("process_allgather: gathering global arrays (sharded over several "
                         "processes) only supports tiled=True")
    arrays = [_host(x, what) for x in leaves]
    n = distributed.process_count()
    if n == 1:
        return tree_unflatten(tree, [a.copy() if tiled else a[None].copy() for a in arrays])
    _check_same_everywhere(tree, arrays, what)
    out = []
    for x, a in zip(leaves, arrays):
        if _is_global(x):
            out.append(a.copy())
            continue
        a = a[None] if a.ndim == 0 or not tiled else a
        out.append(_gather(a).reshape((n * a.shape[0],) + a.shape[1:]))
    return tree_unflatten(tree, out)


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """The values of the pytree ``in_tree`` on the source process (process 0 unless
    ``is_source`` says), on every process, as numpy arrays (same shapes and dtypes on
    every process). As in JAX it is a sum over processes of the sources' values (the
    others contribute zeros; a boolean is or-ed): with several sources, their sum.

    >>> import numpy as np
    >>> broadcast_one_to_all({"w": np.ones(2)})["w"].tolist()
    [1.0, 1.0]
    """
    leaves, tree = tree_flatten(in_tree)
    what = "broadcast_one_to_all"
    arrays = [_host(x, what) for x in leaves]
    if distributed.process_count() == 1:
        return tree_unflatten(tree, [a.copy() for a in arrays])
    _check_same_everywhere(tree, arrays, what)
    if is_source is None:
        is_source = distributed.process_index() == 0
    out = []
    with bound_mesh(_all_processes()):
        for a in arrays:
            mine = a if is_source else np.zeros_like(a)
            out.append(mesh_pmax(mine, _AXIS) if a.dtype == np.bool_ else
                       mesh_psum(mine, _AXIS))
    return tree_unflatten(tree, out)


def assert_equal(in_tree: Any, fail_message: str = "") -> None:
    """Raise ``AssertionError`` (on every process) unless every process passes the same
    values of the pytree ``in_tree``.

    >>> assert_equal({"step": 3})
    """
    n = distributed.process_count()

    def replicated(x):       # what process_allgather(tiled=True) gives if all are equal
        a = np.asarray(x)
        if _is_global(x) or (n == 1 and a.ndim == 0):
            return a
        return np.concatenate([a.reshape((-1,) + a.shape[1:])] * n)

    out = process_allgather(in_tree, tiled=True)
    expected = tree_map(replicated, in_tree)
    same = [np.array_equal(e, o) for e, o in zip(tree_leaves(expected), tree_leaves(out))]
    if not all(same):
        raise AssertionError(f"{fail_message}. Expected: {out}; got: {in_tree}.")


def sync_global_devices(name: str) -> None:
    """A barrier over every process; every process must pass the same ``name`` (else
    ``AssertionError`` on every process).

    >>> sync_global_devices("after init")
    """
    assert_equal(np.uint32(zlib.crc32(name.encode())),
                 f"sync_global_devices name mismatch ('{name}')")


def _specs(pspecs: Any, tree: Any, what: str) -> list:
    """One PartitionSpec per leaf of ``tree`` (``pspecs`` a pytree prefix of it)."""
    is_spec = lambda s: s is None or isinstance(s, PartitionSpec)   # noqa: E731
    specs = tree_leaves(tree_broadcast(pspecs, tree, is_leaf=is_spec), is_leaf=is_spec)
    if any(s is None for s in specs):
        raise ValueError(f"{what}: `None` is not a valid input to the pspecs argument. Please "
                         "use PartitionSpec() if you wanted to replicate your input.")
    return specs


def host_local_array_to_global_array(local_inputs: Any, global_mesh: Mesh,
                                     pspecs: Any) -> Any:
    """The global arrays whose blocks (as each PartitionSpec of ``pspecs``, a pytree prefix
    of ``local_inputs``, splits them over ``global_mesh``) are each process's
    ``local_inputs``: ``make_array_from_process_local_data`` leaf by leaf (an all-gather
    over the split axes). A process is one device, so its local array is its block;
    processes that share a block must pass the same values. A global array (sharded over
    several processes) comes back as it is, as in JAX.

    >>> import numpy as np, functrans as ft
    >>> m = ft.make_mesh((1,), ("x",))
    >>> host_local_array_to_global_array(np.arange(4), m, ft.P("x")).tolist()
    [0, 1, 2, 3]
    """
    what = "host_local_array_to_global_array"
    specs = _specs(pspecs, local_inputs, what)
    leaves, tree = tree_flatten(local_inputs)
    return tree_unflatten(tree, [x if _is_global(x) else make_array_from_process_local_data(
        NamedSharding(global_mesh, s), x) for x, s in zip(leaves, specs)])


def global_array_to_host_local_array(global_inputs: Any, global_mesh: Mesh,
                                     pspecs: Any) -> Any:
    """This process's blocks of the global arrays ``global_inputs``, as each PartitionSpec
    of ``pspecs`` splits them over ``global_mesh`` (no communication: every process holds
    global arrays whole). Works on traced values too (a slice).

    >>> import numpy as np, functrans as ft
    >>> m = ft.make_mesh((1,), ("x",))
    >>> global_array_to_host_local_array(np.arange(4), m, ft.P("x")).tolist()
    [0, 1, 2, 3]
    """
    what = "global_array_to_host_local_array"
    specs = _specs(pspecs, global_inputs, what)
    leaves, tree = tree_flatten(global_inputs)
    return tree_unflatten(tree, [_local_block(x, global_mesh, s, what)
                                 for x, s in zip(leaves, specs)])


def _local_block(x: Any, mesh: Mesh, spec: PartitionSpec, what: str) -> Any:
    sharding = NamedSharding(mesh, spec)
    shape = np.shape(x)
    try:
        sharding.shard_shape(shape)
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None
    index = []
    for size, e in zip(shape, tuple(spec) + (None,) * (len(shape) - len(spec))):
        names = () if e is None else e if isinstance(e, tuple) else (e,)
        k = mesh.axis_size(names) if names else 1
        i = mesh.axis_index(names) if names else 0
        index.append(slice(i * (size // k), (i + 1) * (size // k)))
    if isinstance(x, Tracer):
        return x[tuple(index)]
    return wrap(np.array(np.asarray(x)[tuple(index)]))
