"""Device meshes (JAX's ``jax.experimental.mesh_utils``): ``create_device_mesh`` and
``create_hybrid_device_mesh``, numpy object arrays of ``Device`` for ``Mesh(devices,
axis_names)``.

A functrans process is one device and a ``Mesh`` puts process ``r`` at row-major position
``r``, so a mesh is ``ft.devices()`` reshaped (what JAX does for CPU devices); the options
JAX uses to fit a TPU's physical torus change nothing here.

>>> import functrans as ft
>>> create_device_mesh((1, 1))
array([[CpuDevice(id=0)]], dtype=object)
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..device import Device
from ..sharding import host_device
from .. import distributed

__all__ = ["create_device_mesh", "create_hybrid_device_mesh"]


def _every_device() -> list:
    """Every process's CPU in rank order (``ft.devices("cpu")``)."""
    return [Device("cpu", r) for r in range(distributed.process_count())] \
        if distributed.process_count() > 1 else [host_device()]


def _shape(mesh_shape: Sequence[int], what: str) -> tuple:
    try:
        return tuple(int(d) for d in mesh_shape)
    except (TypeError, ValueError):
        raise ValueError(f"`mesh_shape` passed to `{what}` should be a sequence of ints. "
                         f"Got {mesh_shape}") from None


def create_device_mesh(mesh_shape: Sequence[int], devices: Sequence[Any] | None = None, *,
                       contiguous_submeshes: bool = False,
                       allow_split_physical_axes: bool = False) -> np.ndarray:
    """``devices`` (default: every process's, ``ft.devices()``) as an object array of
    ``mesh_shape``, whose product must be their number (JAX's
    ``jax.experimental.mesh_utils.create_device_mesh``).

    >>> import functrans as ft
    >>> ft.sharding.Mesh(create_device_mesh((ft.process_count(),)), ("data",))
    Mesh({'data': 1})
    """
    del contiguous_submeshes, allow_split_physical_axes     # a torus layout: none here
    shape = _shape(mesh_shape, "create_device_mesh")
    devices = _every_device() if devices is None else list(devices)
    if int(np.prod(shape, dtype=np.int64)) != len(devices):
        raise ValueError(f"Number of devices {len(devices)} must equal the product of "
                         f"mesh_shape {shape}")
    out = np.empty(len(devices), dtype=object)
    out[:] = devices
    return out.reshape(shape)


def create_hybrid_device_mesh(mesh_shape: Sequence[int], dcn_mesh_shape: Sequence[int],
                              devices: Sequence[Any] | None = None, *,
                              process_is_granule: bool = False,
                              should_sort_granules_by_key: bool = True,
                              allow_split_physical_axes: bool = False) -> np.ndarray:
    """A mesh of ``mesh_shape * dcn_mesh_shape`` (elementwise): a ``mesh_shape`` block of
    each granule's devices, the granules laid out as ``dcn_mesh_shape`` (JAX's
    ``create_hybrid_device_mesh``). The granules are processes (``process_is_granule=True``;
    functrans devices have no TPU slices), each with one device, so ``mesh_shape``'s
    product is 1 and ``dcn_mesh_shape``'s the number of processes.

    >>> create_hybrid_device_mesh((1,), (1,), process_is_granule=True).shape
    (1,)
    """
    del allow_split_physical_axes
    if not process_is_granule:
        raise ValueError("create_hybrid_device_mesh: functrans devices have no "
                         "slice_index (no TPU slices); pass process_is_granule=True")
    shape = _shape(mesh_shape, "create_hybrid_device_mesh")
    dcn = _shape(dcn_mesh_shape, "create_hybrid_device_mesh")
    if len(shape) != len(dcn):
        raise ValueError(f"create_hybrid_device_mesh: mesh_shape {shape} and dcn_mesh_shape "
                         f"{dcn} must have the same length")
    devices = _every_device() if devices is None else list(devices)
    granules: dict = {}
    for d in devices:
        granules.setdefault(d.process_index, []).append(d)
    keys = sorted(granules) if should_sort_granules_by_key else list(granules)
    if int(np.prod(dcn, dtype=np.int64)) != len(keys):
        raise ValueError(f"Number of slices {len(keys)} must equal the product of "
                         f"dcn_mesh_shape {dcn}")
    blocks = [create_device_mesh(shape, granules[k]) for k in keys]
    grid = np.empty(len(keys), dtype=object)
    grid[:] = blocks
    return np.block(grid.reshape(dcn).tolist())
