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

from .tracing import Tracer, wrap
from .tree_util import tree_map

__all__ = ["device_put", "device_get", "Device", "SingleDeviceSharding", "host_device"]

_DEVICES = ("cpu", "cuda")


def device_put(x: Any, device: Any = None) -> Any:
    """``x`` (an array, a number or a pytree of them) on ``device``: ``"cuda"`` or
    ``"cpu"``/None (host), or a ``Device`` / ``SingleDeviceSharding`` as ``ft.devices()``
    and ``Array.sharding`` give them (JAX's ``device_put(x, jax.devices()[0])``).

    On ``"cuda"`` a leaf becomes a ``DeviceArray`` that ``jit(..., backend="cuda")``
    functions take without copying; on the host an ``Array`` (a copy of the leaf).

    >>> import functrans as ft
    >>> y = ft.device_put(np.array([1.0, 2.0]))
    >>> type(y).__name__, y.tolist()
    ('Array', [1.0, 2.0])
    >>> ft.device_put({"w": np.ones(2), "b": None}, ft.devices()[0])["w"].tolist()
    [1.0, 1.0]
    """
    platform = _platform(device)
    return tree_map(lambda v: _put_leaf(v, platform), x)


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
    if a.dtype == object or a.dtype.kind not in "biufc":
        raise TypeError(f"device_put: cannot place a {type(x).__name__} (dtype {a.dtype}) "
                        "on a device; pass numbers or arrays")
    return wrap(np.array(a))


class Device:
    """The device an eager ``Array`` lives on (always the host CPU), as JAX's
    ``Array.devices()`` reports it.

    >>> host_device()
    CpuDevice(id=0)
    """
    __slots__ = ("id", "platform")

    def __init__(self, platform="cpu", id=0):  # noqa: A002 (JAX's name)
        self.platform = platform
        self.id = id

    @property
    def device_kind(self):
        return self.platform

    def __repr__(self):
        return f"{self.platform.capitalize()}Device(id={self.id})"

    def __eq__(self, other):
        return isinstance(other, Device) and (other.platform, other.id) == (self.platform,
                                                                          self.id)

    def __hash__(self):
        return hash((self.platform, self.id))


_HOST = Device()


def host_device() -> Device:
    """The host CPU device."""
    return _HOST


class SingleDeviceSharding:
    """JAX's sharding of an array that lives whole on one device.

    >>> SingleDeviceSharding(host_device()).device_set == {host_device()}
    True
    """
    __slots__ = ("_device",)

    def __init__(self, device):
        self._device = device

    @property
    def device_set(self):
        return {self._device}

    @property
    def is_fully_replicated(self):
        return True

    @property
    def is_fully_addressable(self):
        return True

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r})"

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and other._device == self._device

    def __hash__(self):
        return hash(("SingleDeviceSharding", self._device))
