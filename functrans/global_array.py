"""Global arrays from each process's data, with JAX's names and signatures:
``make_array_from_callback``, ``make_array_from_process_local_data`` and
``make_array_from_single_device_arrays``.

The model. A functrans process is one device (its CPU: ``ft.devices()`` lists every
process's, ``CpuDevice(id=r)`` is process ``r``'s), and **every process holds a global array
whole**: that is the value ``shard_map`` takes, and ``ft.device_put(x, NamedSharding)`` only
checks the sharding and records it. So these functions start from what JAX would put on
this process's device, the block the sharding assigns to it: ``NamedSharding(mesh, spec)``
gives the process at ``mesh.coords`` block ``i`` of each dimension split over mesh axes
(``i`` its row-major index along them; JAX's ``jax.sharding`` index of that device) and the
whole of every other dimension. The blocks are all-gathered over the split axes (MPI,
counted as ``shard_map_output`` by ``ft.distributed.comm_stats``), so every process returns
the same global ``Array``, carrying the sharding (``.sharding``). Processes that share a
block (they differ only along axes the spec does not name) must supply the same data; each
keeps its own, not compared (as in JAX). With one process nothing is communicated.

Shardings: a ``NamedSharding`` (a bare ``PartitionSpec`` under ``ft.set_mesh``), or the
``SingleDeviceSharding`` of this process's CPU (the data is this process's whole array;
nothing is gathered). Another process's device, a GPU, or any other sharding is an error:
functrans cannot place an array there. The data is copied (an ``Array`` never shares memory
a caller could still change), and these functions run on concrete values only (they
communicate), not inside ``jit``/``grad``/``vmap``.

>>> import numpy as np, functrans as ft
>>> s = ft.NamedSharding(ft.make_mesh((1,), ("i",)), ft.P("i"))
>>> x = make_array_from_callback((2, 3), s, lambda idx: np.ones((2, 3))[idx])
>>> x.shape, x.sharding == s
((2, 3), True)
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxpr_ir import canonical_dtype
from . import distributed
from .primitives.collectives_mesh import gather_blocks
from .sharding import NamedSharding, PartitionSpec, SingleDeviceSharding, as_sharding, \
    host_device
from .tracing import Tracer, wrap
from .tree_util import tree_broadcast, tree_flatten, tree_leaves, tree_unflatten

__all__ = ["make_array_from_callback", "make_array_from_process_local_data",
           "make_array_from_single_device_arrays"]


def _layout(sharding: Any, what: str) -> NamedSharding | None:
    """``sharding`` as a NamedSharding, or None for this process's SingleDeviceSharding."""
    if isinstance(sharding, PartitionSpec):
        sharding = as_sharding(sharding, what)
    if isinstance(sharding, NamedSharding):
        return sharding
    if isinstance(sharding, SingleDeviceSharding):
        device, = sharding.device_set
        if device != host_device():
            raise ValueError(f"{what}: {sharding!r} places the array on {device}, but a "
                             f"functrans array made here lives on this process's CPU "
                             f"({host_device()}); use ft.local_devices()[0] or a "
                             "NamedSharding")
        return None
    raise TypeError(f"{what}: expected a NamedSharding (or a PartitionSpec under "
                    f"ft.set_mesh, or SingleDeviceSharding(ft.local_devices()[0])), got "
                    f"{sharding!r}" + ("; JAX's argument order is (sharding, local_data, "
                                       "global_shape): pass NamedSharding(mesh, spec)"
                                       if type(sharding).__name__ == "Mesh" else ""))


def _dims(layout: NamedSharding | None, shape: tuple, what: str,
          divisible: bool = True) -> list:
    """Per dimension of an array of ``shape``, the mesh axes that split it (checked as
    ``NamedSharding.shard_shape`` checks: the rank, and each split dimension divisible)."""
    if layout is None:
        return [()] * len(shape)
    if len(layout.spec) > len(shape):
        raise ValueError(f"{what}: {layout!r} names {len(layout.spec)} dimensions, but the "
                         f"array has rank {len(shape)} (shape {shape})")
    if divisible:
        try:
            layout.shard_shape(shape)
        except ValueError as e:
            raise ValueError(f"{what}: {e}") from None
    spec = tuple(layout.spec) + (None,) * (len(shape) - len(layout.spec))
    return [() if e is None else e if isinstance(e, tuple) else (e,) for e in spec]


def _block_index(layout: NamedSharding | None, shape: tuple) -> tuple:
    """This process's index into the global array (JAX's ``devices_indices_map``)."""
    return layout.block(layout.mesh.coords, shape) if layout else (slice(None),) * len(shape)


def _concrete(x: Any, what: str) -> np.ndarray:
    if isinstance(x, Tracer):
        raise TypeError(f"{what} needs concrete data (it communicates between processes); "
                        "call it outside jit, grad and vmap")
    a = np.asarray(x)
    try:
        canonical_dtype(a.dtype)
    except TypeError as e:
        raise TypeError(f"{what}: cannot make an array of {type(x).__name__}: {e}") from None
    return a


def _assemble(block: np.ndarray, layout, dims: list, shape: tuple, what: str) -> Any:
    """The global Array from this process's ``block``: gathered over the split axes."""
    if any(dims) and layout.mesh.size > 1:
        _check_same_everywhere(block, what)
    out = block
    for dim, names in enumerate(dims):
        if names:
            out = gather_blocks(layout.mesh, names, out, dim)
    if out.shape != shape:       # a process's block does not fit: checked before, so a bug
        raise AssertionError(f"{what}: assembled {out.shape}, expected {shape}")
    out = wrap(np.array(out, copy=True) if np.may_share_memory(out, block) else out)
    if layout is not None:
        out.__dict__["_sharding"] = layout
    return out


def _check_same_everywhere(block: np.ndarray, what: str) -> None:
    """Every process's block must have the same shape and dtype (the all-gather's messages
    must match): compared first, so a mismatch raises on every process."""
    mine = (block.shape, block.dtype.str)
    every = distributed.world().allgather(mine)
    for rank, theirs in enumerate(every):
        if theirs != every[0]:
            raise ValueError(f"{what}: the processes' blocks differ: process 0 has (shape, "
                             f"dtype) {every[0]}, process {rank} {theirs}")


def _check_block(data: np.ndarray, want: tuple, what: str) -> None:
    if data.shape != want:
        raise ValueError(f"{what}: this process's block has shape {data.shape}, but the "
                         f"sharding's block of the global array is {want}")


def make_array_from_callback(shape: Sequence[int], sharding: Any,
                             data_callback: Callable[[tuple], Any], dtype: Any = None) -> Any:
    """The global array of ``shape`` whose block on this process (see the module doc) is
    ``data_callback(index)``, ``index`` a tuple of slices into the global array (JAX's
    ``jax.make_array_from_callback``; called once, for this process's one device).

    >>> import numpy as np, functrans as ft
    >>> s = ft.NamedSharding(ft.make_mesh((1,), ("i",)), ft.P("i"))
    >>> make_array_from_callback((3,), s, lambda idx: np.arange(3.0)[idx]).tolist()
    [0.0, 1.0, 2.0]
    """
    what = "make_array_from_callback"
    shape = tuple(int(d) for d in shape)
    layout = _layout(sharding, what)
    dims = _dims(layout, shape, what)
    index = _block_index(layout, shape)
    data = _concrete(data_callback(index), f"{what}'s callback result")
    if dtype is not None:
        data = data.astype(dtype, copy=False)
    _check_block(data, np.empty(shape, np.int8)[index].shape if shape else (), what)
    return _assemble(data, layout, dims, shape, what)


def make_array_from_single_device_arrays(shape: Sequence[int], sharding: Any,
                                         arrays: Sequence[Any], *, dtype: Any = None) -> Any:
    """The global array of ``shape`` from the arrays of this process's devices (JAX's
    ``jax.make_array_from_single_device_arrays``): a process has one device, so ``arrays``
    is ``[this process's block]``.

    >>> import numpy as np, functrans as ft
    >>> s = ft.NamedSharding(ft.make_mesh((1,), ("i",)), ft.P("i"))
    >>> make_array_from_single_device_arrays((2,), s, [np.ones(2)]).tolist()
    [1.0, 1.0]
    """
    what = "make_array_from_single_device_arrays"
    if not isinstance(arrays, (list, tuple)) or len(arrays) != 1:
        raise ValueError(f"{what}: a functrans process has one device, so arrays must be a "
                         f"list of one array (this process's block); got "
                         f"{len(arrays) if isinstance(arrays, (list, tuple)) else arrays!r}")
    shape = tuple(int(d) for d in shape)
    layout = _layout(sharding, what)
    dims = _dims(layout, shape, what)
    data = _concrete(arrays[0], what)
    if dtype is not None and np.dtype(dtype) != data.dtype:
        raise ValueError(f"{what}: dtype {np.dtype(dtype)} differs from the array's "
                         f"{data.dtype}")
    _check_block(data, np.empty(shape, np.int8)[_block_index(layout, shape)].shape,
                 what)
    return _assemble(data, layout, dims, shape, what)


def make_array_from_process_local_data(sharding: Any, local_data: Any,
                                       global_shape: Any = None) -> Any:
    """The global array (a pytree of them) from this process's data (JAX's
    ``jax.make_array_from_process_local_data``). In each dimension ``local_data`` is either
    this process's block (a dimension split ``k`` ways: ``global = k * local``, what is
    inferred when ``global_shape`` is None) or the whole dimension (``global_shape`` says
    so; the block is cut here). ``sharding`` and ``global_shape`` may be pytree prefixes.

    >>> import numpy as np, functrans as ft
    >>> s = ft.NamedSharding(ft.make_mesh((1,), ("i",)), ft.P("i"))
    >>> make_array_from_process_local_data(s, np.ones(2)).tolist()
    [1.0, 1.0]
    """
    is_sharding = lambda x: isinstance(x, (NamedSharding, SingleDeviceSharding,  # noqa: E731
                                           PartitionSpec)) or type(x).__name__ == "Mesh"
    shardings = tree_leaves(tree_broadcast(sharding, local_data, is_leaf=is_sharding),
                            is_leaf=is_sharding)
    is_shape = lambda x: x is None or isinstance(x, tuple)   # noqa: E731
    shapes = tree_leaves(tree_broadcast(global_shape, local_data, is_leaf=is_shape),
                         is_leaf=is_shape)
    leaves, tree = tree_flatten(local_data)
    return tree_unflatten(tree, [_from_local(x, s, g) for x, s, g in
                                 zip(leaves, shardings, shapes)])


def _from_local(local: Any, sharding: Any, global_shape: tuple | None) -> Any:
    what = "make_array_from_process_local_data"
    layout = _layout(sharding, what)
    x = _concrete(local, what)
    dims = _dims(layout, x.shape, what, divisible=False)
    ks = [layout.mesh.axis_size(n) if n else 1 for n in dims] if layout else [1] * x.ndim
    if global_shape is None:
        global_shape = tuple(n * k for n, k in zip(x.shape, ks))
    global_shape = tuple(int(d) for d in global_shape)
    if len(global_shape) != x.ndim:
        raise ValueError(f"{what}: global_shape {global_shape} has rank {len(global_shape)}, "
                         f"the local data (shape {x.shape}) rank {x.ndim}")
    _dims(layout, global_shape, what)          # the global shape divides into the blocks
    index = _block_index(layout, global_shape)
    cut = []
    for d, (n, k, g) in enumerate(zip(x.shape, ks, global_shape)):
        if n == g:                             # the whole dimension: cut this process's block
            cut.append(index[d] if layout else slice(None))
        elif n * k == g:                       # already this process's block
            cut.append(slice(None))
        else:
            raise ValueError(f"{what}: in dimension {d} the local data has {n} elements; it "
                             f"must be the whole dimension ({g}, global_shape={global_shape}) "
                             f"or this process's block of it ({g // k})")
    return _assemble(x[tuple(cut)], layout, dims, global_shape, what)
