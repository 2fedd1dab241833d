"""Placing arrays on a device: ``device_put``.

``device_put(x, "cuda")`` copies ``x`` into GPU memory once (on Numba's CUDA simulator
when ``NUMBA_ENABLE_CUDASIM=1``) and returns a ``DeviceArray``: functions jitted with
``backend="cuda"`` take it without copying and return DeviceArrays, so chains of
jitted calls keep their data on the device; ``np.asarray(y)`` copies back.
``device_put(x, "cpu")`` (or ``None``) gives a host ``Array``.

>>> import numpy as np
>>> device_put(np.arange(3), "cpu").tolist()
[0, 1, 2]
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxpr_ir import dtype_kind

from .sharding import (Device, NamedSharding, PartitionSpec, SingleDeviceSharding, as_sharding,
                       host_device, mesh_frames)
from .tracing import Tracer, wrap
from .tree_util import tree_leaves, tree_map
from . import eager_values

__all__ = ["device_put", "device_get", "Device", "SingleDeviceSharding", "host_device",
           "sharding_constraint"]

_DEVICES = ("cpu", "cuda")


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: Any = False,
               may_alias: bool | None = None) -> Any:
    """``x`` (an array, a number or a pytree of them) on ``device``: ``"cuda"`` or
    ``"cpu"``/None (host), or a ``Device`` / ``SingleDeviceSharding`` as ``ft.devices()``
    and ``Array.sharding`` give them (JAX's ``device_put(x, jax.devices()[0])``), or a
    ``NamedSharding`` (a bare ``PartitionSpec`` under ``ft.set_mesh``): each leaf is
    checked against it (rank, each split dimension divisible, as JAX does) and keeps its
    whole (global) value on the host, with ``.sharding`` the NamedSharding (every process
    holds global arrays whole; ``shard_map`` cuts the blocks). Inside a transform a leaf
    is checked and returned as it is.

    On ``"cuda"`` a leaf becomes a ``DeviceArray`` that ``jit(..., backend="cuda")``
    functions take without copying; on the host an ``Array`` (a copy of the leaf).

    >>> import functrans as ft
    >>> y = ft.device_put(np.array([1.0, 2.0]))
    >>> type(y).__name__, y.tolist()
    ('Array', [1.0, 2.0])
    >>> ft.device_put({"w": np.ones(2), "b": None}, ft.devices()[0])["w"].tolist()
    [1.0, 1.0]
    >>> s = ft.NamedSharding(ft.make_mesh((1,), ("i",)), ft.P("i"))
    >>> ft.device_put(np.ones(4), s).sharding == s
    True
    """
    if isinstance(device, (NamedSharding, PartitionSpec)):
        out = sharding_constraint(x, as_sharding(device, "device_put"), "device_put")
    else:
        platform = _platform(device)
        out = tree_map(lambda v: _put_leaf(v, platform), x)
    if donate is not False:      # JAX's donate=: the donated Arrays are deleted (a copy is out)
        donated = [x] if donate is True else [v for v, d in zip(x, donate) if d]
        for v in tree_leaves(donated):
            if isinstance(v, np.ndarray) and hasattr(v, "delete"):   # an Array, not numpy's
                v.delete()
    return out


def sharding_constraint(x: Any, sharding: Any, what: str) -> Any:
    """Each leaf of ``x`` checked against ``sharding`` (a NamedSharding, or a
    PartitionSpec on the current mesh) and, outside a transform, a host ``Array`` that
    carries it; tracers come back as they are (a functrans process is one device).

    >>> s = sharding_constraint(np.ones(2), SingleDeviceSharding(host_device()), "x").sharding
    >>> s == SingleDeviceSharding(host_device())
    True
    """
    sharding = as_sharding(sharding, what)
    if isinstance(sharding, SingleDeviceSharding):
        return tree_map(lambda v: v if isinstance(v, Tracer) else _put_leaf(v, None), x)
    if not isinstance(sharding, NamedSharding):
        raise TypeError(f"{what}: expected a NamedSharding, a PartitionSpec or a "
                        f"SingleDeviceSharding, got {sharding!r}")

    def leaf(v):
        try:
            sharding.shard_shape(np.shape(v))
        except ValueError as e:
            raise ValueError(f"{what}: {e}") from None
        if isinstance(v, Tracer):
            return v
        out = _put_leaf(v, None)
        out.__dict__["_sharding"] = sharding
        return out
    return tree_map(leaf, x)


def device_get(x: Any) -> Any:
    """``x`` (a pytree) with its arrays as host numpy arrays, as JAX's ``device_get``:
    an ``Array`` becomes a read-only ``np.ndarray`` view (no copy), a GPU
    ``DeviceArray`` is copied back; numpy arrays and Python values stay as they are.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> out = ft.device_get({"loss": fnp.ones(()), "step": 3})
    >>> type(out["loss"]).__name__, out["step"]
    ('ndarray', 3)
    """
    return tree_map(_get_leaf, x)


def _get_leaf(x: Any) -> Any:
    if isinstance(x, Tracer):
        return x
    if isinstance(x, np.ndarray) and type(x) is not np.ndarray:
        view = x.view(np.ndarray)
        view.flags.writeable = False     # an Array's memory is immutable
        return view
    if getattr(x, "__device_array__", False):
        return np.asarray(x)
    return x


def _platform(device: Any) -> str | None:
    """``"cpu"``, ``"cuda"`` or None from a name, a ``Device`` or a sharding of one."""
    if isinstance(device, SingleDeviceSharding):
        device = device._device
    if isinstance(device, Device):
        # inside a shard_map body every process runs the same code: another process's
        # device is taken as this one's there (as JAX under jit; raising on some processes
        # only would leave the others waiting in the body's collectives)
        if device.platform == "cpu" and device != host_device() and not mesh_frames():
            raise ValueError(f"device_put: {device} belongs to process {device.id}; this is "
                             f"process {host_device().id} (its devices: ft.local_devices())")
        device = device.platform
    if device is not None and device not in _DEVICES:
        raise ValueError(f"device_put: unknown device {device!r}; choose one of {_DEVICES}, "
                         "or a Device from ft.devices()")
    return device


def _put_leaf(x: Any, device: str | None) -> Any:
    if isinstance(x, Tracer):
        return x           # inside a transform placement is the backend's business
    if device == "cuda":
        from backends.cuda import device_put as put   # loads Numba: only for GPU placement
        return put(x)
    if isinstance(x, np.ma.MaskedArray):    # its mask would be dropped silently
        raise ValueError("device_put: numpy masked arrays are not supported; use x.filled()")
    a = np.asarray(x)
    if a.dtype == object or dtype_kind(a.dtype) not in "biufc":    # bfloat16 reads as "f"
        raise TypeError(f"device_put: cannot place a {type(x).__name__} (dtype {a.dtype}) "
                        "on a device; pass numbers or arrays")
    if type(x) in eager_values.WEAK_NUMBERS or type(x) is eager_values.WEAK_ARRAY:
        return np.array(a).view(eager_values.WEAK_ARRAY)   # weakly typed stays weak (JAX)
    return wrap(np.array(a))
