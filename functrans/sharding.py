"""Meshes of processes and partition specs (how a global array is split over a mesh).

``Mesh(shape, axis_names)`` arranges the MPI processes in an n-d grid, in **row-major rank
order**: process ``r`` sits at coordinates ``numpy.unravel_index(r, shape)``, so on 4
processes ``Mesh((2, 2), ("data", "model"))`` puts ranks 0, 1 in data row 0 and ranks 0, 2
in model column 0. The mesh must use every process of the world (its size equals
``process_count()``): unlike JAX, no mesh over a subset (see ``_check_spans_world``).

``PartitionSpec`` (alias ``P``) has one entry per leading dimension of an array: ``None``
(the dimension is whole on every process), a mesh axis name (split in equal blocks over
that axis, block ``i`` on the processes at coordinate ``i``), or a tuple of names (split
over their product, row-major in the order given). Missing trailing entries are ``None``.

A collective over a mesh axis runs among the processes that differ only in that axis'
coordinate: one MPI sub-communicator per axis (and per tuple of axes), made on first use.
Every process of a program calls the same collectives in the same order (SPMD), so these
collective creations match up.

>>> mesh = Mesh((1,), ("i",))
>>> mesh.shape, mesh.axis_sizes, mesh.axis_names, mesh.size
(OrderedDict([('i', 1)]), (1,), ('i',), 1)
>>> P("i", None)
PartitionSpec('i', None)
"""
from __future__ import annotations

import collections
import contextlib
import enum
import threading
from typing import Any, Sequence

import numpy as np

from . import distributed

__all__ = ["Mesh", "PartitionSpec", "P", "Sharding", "NamedSharding", "SingleDeviceSharding",
           "make_mesh", "set_mesh", "get_mesh", "AxisType"]


class AxisType(enum.Enum):
    """JAX's mesh axis types (``jax.sharding.AxisType``). functrans holds global arrays
    whole on every process, so Auto and Explicit axes compute the same values (JAX's
    Explicit adds sharding-in-types checks functrans does not make).

    >>> AxisType.Auto.name
    'Auto'
    """
    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()



class PartitionSpec(tuple):
    """How each leading dimension of an array is split over mesh axes (see module doc).

    >>> PartitionSpec(("a", "b"), None)
    PartitionSpec(('a', 'b'), None)
    """

    def __new__(cls, *entries):
        for e in entries:
            names = e if isinstance(e, tuple) else (e,)
            if not all(n is None or isinstance(n, str) for n in names):
                raise TypeError(f"PartitionSpec entries are None, a mesh axis name or a tuple "
                                f"of names; got {e!r}")
        return super().__new__(cls, entries)

    def __init__(self, *entries: None | str | tuple) -> None:   # the entries: __new__'s
        super().__init__()

    def __repr__(self):
        return f"PartitionSpec{tuple.__repr__(self)}" if len(self) != 1 else \
            f"PartitionSpec({self[0]!r})"


P = PartitionSpec


class Mesh:
    """An n-d grid of all MPI processes, axes named, in row-major rank order. The first
    argument is the grid's shape, or (JAX's form) an array of devices in that shape: every
    process's device in rank order, as ``mesh_utils.create_device_mesh`` gives them.
    As JAX's: ``shape`` maps each axis name to its size (in axis order), ``axis_sizes`` and
    ``devices.shape`` are the sizes as a tuple, ``shape_tuple`` the (name, size) pairs.

    >>> m = Mesh((1, 1), ("data", "model"))
    >>> m.axis_size("model"), m.coords, m.shape["model"]
    (1, (0, 0), 1)
    >>> Mesh(np.array([host_device()]), "i").axis_sizes
    (1,)
    """

    def __init__(self, shape, axis_names):
        if _holds_devices(shape):        # JAX's Mesh(devices, axis_names)
            shape = _devices_shape(shape)
        shape = tuple(int(s) for s in ((shape,) if np.ndim(shape) == 0 else shape))
        axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if len(shape) != len(axis_names):
            raise ValueError(f"Mesh: shape {shape} has {len(shape)} axes but "
                             f"{len(axis_names)} axis names {axis_names}")
        if len(set(axis_names)) != len(axis_names) or not all(
                isinstance(n, str) for n in axis_names):
            raise ValueError(f"Mesh: axis names must be distinct strings, got {axis_names}")
        if any(s < 1 for s in shape):
            raise ValueError(f"Mesh: every axis needs at least one process, got shape {shape}")
        self.axis_sizes = shape
        self.axis_names = axis_names
        self.size = int(np.prod(shape, dtype=np.int64))
        _check_spans_world(shape, axis_names, self.size)
        self.coords = tuple(int(c) for c in np.unravel_index(distributed.process_index(),
                                                             shape))
        self._comms = {}
        # the form a jaxpr carries (printable): ((name, size), ...)
        self.key = tuple(zip(axis_names, shape))
        _meshes.setdefault(self.key, self)

    @property
    def shape(self) -> collections.OrderedDict:
        """Axis name -> size, in axis order (JAX's; the sizes alone: ``axis_sizes``)."""
        return collections.OrderedDict(self.key)

    shape_tuple = property(lambda self: self.key, doc="((name, size), ...), as JAX's")

    def __repr__(self):
        return f"Mesh({dict(self.key)})"

    def __eq__(self, other):
        return (isinstance(other, Mesh) and self.axis_sizes == other.axis_sizes
                and self.axis_names == other.axis_names)

    def __hash__(self):
        return hash((self.axis_sizes, self.axis_names))

    def axis_size(self, names) -> int:
        """The number of processes along an axis, or along a tuple of axes (their product)."""
        names = names if isinstance(names, tuple) else (names,)
        return int(np.prod([self.axis_sizes[self._pos(n)] for n in names], dtype=np.int64))

    def axis_index(self, names) -> int:
        """This process's row-major index along ``names`` (an axis or a tuple of axes)."""
        names = names if isinstance(names, tuple) else (names,)
        idx = 0
        for n in names:
            k = self._pos(n)
            idx = idx * self.axis_sizes[k] + self.coords[k]
        return idx

    def _pos(self, name):
        try:
            return self.axis_names.index(name)
        except ValueError:
            raise NameError(f"{name!r} is not an axis of {self!r}") from None

    def comm(self, names):
        """The MPI communicator of the processes differing only along ``names``; its ranks
        are ``axis_index(names)``. None when that group is this process alone."""
        try:
            return self._comms[names]        # the hot path of every collective
        except KeyError:
            pass
        key = names
        names = names if isinstance(names, tuple) else (names,)
        c = None
        if self.axis_size(names) > 1:
            others = [k for k, n in enumerate(self.axis_names) if n not in names]
            color = 0
            for k in others:
                color = color * self.axis_sizes[k] + self.coords[k]
            c = distributed.world().Split(color, self.axis_index(names))
        self._comms[key] = c
        return c

    @property
    def devices(self) -> np.ndarray:
        """The mesh's devices in its shape: process ``r``'s CPU is ``CpuDevice(id=r)``."""
        return np.array([Device("cpu", r) for r in range(self.size)],
                        dtype=object).reshape(self.axis_sizes)


_meshes: dict = {}   # Mesh.key -> the first Mesh made with it (its communicators are reused)


def _check_spans_world(shape, axis_names, size):
    """A mesh holds every process of the MPI world, no more (as JAX), no fewer (unlike JAX)."""
    world = distributed.process_count()
    if size > world:
        raise ValueError(f"Mesh{shape} over axes {axis_names} needs {size} processes, but the "
                         f"MPI world has {world} (start the program with mpiexec -n {size})")
    if size < world:
        raise ValueError(
            f"Mesh{shape} over axes {axis_names} has {size} processes, but the MPI world has "
            f"{world}: a functrans mesh spans every process (JAX allows a mesh over some of "
            f"the devices; functrans does not, as every process holds each global array's "
            f"value and takes part in every collective, so a process outside the mesh would "
            f"have neither its blocks nor the result). Use a mesh of all {world} processes "
            f"(an extra axis that no spec names keeps the blocks replicated along it), or "
            f"start the program with mpiexec -n {size}")


def _holds_devices(shape) -> bool:
    return any(isinstance(d, Device) for d in np.asarray(shape, dtype=object).flat)


def _devices_shape(devices) -> tuple:
    """The shape of a device array given as ``Mesh``'s first argument (JAX's form, e.g.
    from ``mesh_utils.create_device_mesh``): process ``r`` sits at row-major position
    ``r`` of a functrans mesh, so the devices must be every process's, in that order."""
    arr = np.asarray(devices, dtype=object)
    owners = [d.process_index if isinstance(d, Device) else d for d in arr.flat]
    if owners != list(range(arr.size)):
        raise ValueError(f"Mesh: functrans puts process r at row-major position r of the "
                         f"mesh, so the devices must be ft.devices() in order (reshaped); got "
                         f"those of processes {owners}")
    return arr.shape


def mesh_for(key) -> Mesh:
    """The Mesh of a ``Mesh.key`` (as a shard_map equation records it).

    >>> mesh_for(Mesh((1,), ("i",)).key)
    Mesh({'i': 1})
    """
    if isinstance(key, Mesh):
        return key
    m = _meshes.get(key)
    if m is None:
        names, shape = zip(*key) if key else ((), ())
        m = Mesh(shape, names)
    return m


# --------------------------------------------------------------------------- devices, shardings

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

    @property
    def process_index(self):
        """The process that owns the device: one CPU per process, so a CPU's id is its
        process's rank; a GPU belongs to the process that uses it."""
        return self.id if self.platform == "cpu" else distributed.process_index()

    def __repr__(self):
        return f"{self.platform.capitalize()}Device(id={self.id})"

    def __eq__(self, other):
        return isinstance(other, Device) and (other.platform, other.id) == (self.platform,
                                                                          self.id)

    def __hash__(self):
        return hash((self.platform, self.id))


_HOSTS: dict = {}     # process rank -> its CPU Device


def host_device() -> Device:
    """This process's CPU device: ``CpuDevice(id=r)`` in process ``r`` (JAX numbers the
    devices of all processes together; each process has one CPU here).

    >>> host_device()
    CpuDevice(id=0)
    """
    rank = distributed.process_index()
    device = _HOSTS.get(rank)
    if device is None:
        device = _HOSTS[rank] = Device("cpu", rank)
    return device


class Sharding:
    """The base of the shardings (JAX's ``jax.sharding.Sharding``): how an array is laid
    out over devices.

    >>> isinstance(SingleDeviceSharding(host_device()), Sharding)
    True
    """
    __slots__ = ()


class SingleDeviceSharding(Sharding):
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

    num_devices = 1

    @property
    def addressable_devices(self) -> set:
        return {self._device}

    def devices_indices_map(self, global_shape) -> dict:
        """``{device: index}``: the one device holds the whole array."""
        return {self._device: (slice(None),) * len(global_shape)}

    addressable_devices_indices_map = devices_indices_map

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r})"

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and other._device == self._device

    def __hash__(self):
        return hash(("SingleDeviceSharding", self._device))


class NamedSharding(Sharding):
    """An array laid out over ``mesh`` as ``spec`` says (JAX's
    ``jax.sharding.NamedSharding``): each dimension whole, or split over the named axes.

    In functrans every process holds a global array whole (``shard_map``'s convention),
    so the sharding is a checked record: ``ft.device_put(x, sharding)`` checks that the
    spec fits ``x`` (rank, axis names, each split dimension divisible) and returns ``x``'s
    value carrying the sharding (``.sharding``); ``shard_map`` is what cuts blocks.

    >>> s = NamedSharding(Mesh((1,), ("i",)), P("i"))
    >>> s.shard_shape((4, 3)), s.is_fully_replicated, s.num_devices
    ((4, 3), True, 1)
    """
    __slots__ = ("mesh", "spec", "memory_kind")

    def __init__(self, mesh: Mesh, spec: PartitionSpec, *,
                 memory_kind: str | None = None) -> None:
        if not isinstance(mesh, Mesh):
            raise TypeError(f"NamedSharding: mesh must be a functrans.sharding.Mesh "
                            f"(ft.make_mesh), got {mesh!r}")
        if not isinstance(spec, PartitionSpec):
            raise TypeError(f"NamedSharding: spec must be a PartitionSpec (P), got {spec!r}")
        seen = set()
        for e in spec:
            for n in (() if e is None else e if isinstance(e, tuple) else (e,)):
                if n not in mesh.axis_names or n in seen:
                    raise ValueError(f"NamedSharding: the spec {spec!r} names {n!r}, which "
                                     f"is {'used twice' if n in seen else 'not an axis'} "
                                     f"of {mesh!r}")
                seen.add(n)
        if memory_kind not in (None, "device"):
            raise ValueError(f"NamedSharding: memory_kind {memory_kind!r} is not supported "
                             "(one memory: 'device' or None)")
        self.mesh, self.spec, self.memory_kind = mesh, spec, memory_kind

    def _splits(self):
        return [1 if e is None else self.mesh.axis_size(e) for e in self.spec]

    def shard_shape(self, global_shape) -> tuple:
        """The shape of one device's block of an array of ``global_shape``."""
        shape = tuple(int(d) for d in global_shape)
        if len(self.spec) > len(shape):
            raise ValueError(f"{self!r} names {len(self.spec)} dimensions, but the array has "
                             f"rank {len(shape)} (shape {shape})")
        for dim, k in enumerate(self._splits()):
            if shape[dim] % k:
                raise ValueError(f"{self!r} implies that dimension {dim} of an array of shape "
                                 f"{shape} is split {k} ways, but {shape[dim]} is not "
                                 f"divisible by {k}")
        return tuple(d // k for d, k in zip(shape, self._splits() + [1] * len(shape)))

    def block(self, coords, global_shape) -> tuple:
        """The index of the block of an array of ``global_shape`` that the process at mesh
        ``coords`` holds under JAX's layout: ``slice(None)`` for a whole dimension,
        ``slice(start, stop)`` for one split over mesh axes (block ``i``, ``i`` the
        row-major index of ``coords`` along those axes)."""
        idx = []
        for dim, size in enumerate(self.shard_shape(global_shape)):
            e = self.spec[dim] if dim < len(self.spec) else None
            names = () if e is None else e if isinstance(e, tuple) else (e,)
            i = 0
            for n in names:
                k = self.mesh._pos(n)
                i = i * self.mesh.axis_sizes[k] + coords[k]
            idx.append(slice(int(i * size), int((i + 1) * size)) if size != global_shape[dim]
                       else slice(None))     # Python ints, as JAX's (coords may be numpy's)
        return tuple(idx)

    def replica_id(self, coords) -> int:
        """Which copy of its block the process at ``coords`` holds: its row-major index
        along the mesh axes the spec does not name (0 for every process when all are)."""
        used = {n for e in self.spec if e is not None
                for n in (e if isinstance(e, tuple) else (e,))}
        r = 0
        for k, n in enumerate(self.mesh.axis_names):
            if n not in used:
                r = r * self.mesh.axis_sizes[k] + coords[k]
        return int(r)

    def devices_indices_map(self, global_shape) -> dict:
        """``{device: index}`` for every process's device (JAX's method of that name).

        >>> NamedSharding(Mesh((1,), ("i",)), P("i")).devices_indices_map((4, 2))
        {CpuDevice(id=0): (slice(None, None, None), slice(None, None, None))}
        """
        return {d: self.block(np.unravel_index(r, self.mesh.axis_sizes), global_shape)
                for r, d in enumerate(self.mesh.devices.flat)}

    def addressable_devices_indices_map(self, global_shape) -> dict:
        """``{this process's device: its index}``."""
        return {host_device(): self.block(self.mesh.coords, global_shape)}

    @property
    def num_devices(self) -> int:
        return self.mesh.size

    @property
    def device_set(self) -> set:
        return set(self.mesh.devices.flat) if self.mesh.size > 1 else {host_device()}

    @property
    def addressable_devices(self) -> set:
        return {host_device()}

    @property
    def is_fully_replicated(self) -> bool:
        return all(k == 1 for k in self._splits())

    @property
    def is_fully_addressable(self) -> bool:
        return self.mesh.size == 1

    def with_spec(self, spec: PartitionSpec) -> "NamedSharding":
        return NamedSharding(self.mesh, spec, memory_kind=self.memory_kind)

    def __repr__(self):
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"

    def __eq__(self, other):
        return (isinstance(other, NamedSharding) and other.mesh == self.mesh
                and tuple(other.spec) == tuple(self.spec))

    def __hash__(self):
        return hash(("NamedSharding", self.mesh, tuple(self.spec)))


def make_mesh(axis_shapes: Sequence[int], axis_names: Sequence[str],
              axis_types: Any = None, *, devices: Sequence[Device] | None = None) -> Mesh:
    """A ``Mesh`` of every process with these axis sizes and names (JAX's
    ``jax.make_mesh``; a process is one device, so the product of ``axis_shapes`` must be
    ``process_count()``). ``axis_types``: None, or one ``AxisType.Auto`` / ``Explicit`` per
    axis (the same values either way, see ``AxisType``; ``Manual`` axes exist only inside
    ``shard_map``). ``devices`` other than None, ``ft.devices()`` or the mesh's devices in
    process order are not supported (an error).

    >>> make_mesh((1,), ("data",), axis_types=(AxisType.Explicit,))
    Mesh({'data': 1})
    """
    if axis_types is not None:
        types = axis_types if isinstance(axis_types, (tuple, list)) else (axis_types,)
        if len(types) != len(axis_names) or not all(
                t in (AxisType.Auto, AxisType.Explicit) for t in types):
            raise ValueError(f"make_mesh: axis_types must be None or one AxisType.Auto or "
                             f"AxisType.Explicit per axis ({len(axis_names)}), got "
                             f"{axis_types!r} (Manual axes exist only inside shard_map)")
    mesh = Mesh(axis_shapes, axis_names)
    if devices is not None and list(devices) not in (list(mesh.devices.flat), [host_device()]):
        raise ValueError(f"make_mesh: devices must be None, ft.devices() or the mesh's devices "
                         f"in process order ({list(mesh.devices.flat)}), got {list(devices)!r}")
    return mesh


_context = {"mesh": None}


class _MeshSetting:
    """What ``set_mesh`` returns: a ``with`` block around it restores the previous mesh."""

    def __init__(self, previous):
        self.previous = previous

    def __enter__(self):
        return _context["mesh"]

    def __exit__(self, *exc):
        _context["mesh"] = self.previous


def set_mesh(mesh: Mesh | None) -> contextlib.AbstractContextManager:
    """Make ``mesh`` the current mesh (JAX's ``jax.set_mesh``): called, it stays set; in a
    ``with`` block, the previous one comes back at the end. A bare ``PartitionSpec`` given
    to ``ft.device_put`` or ``lax.with_sharding_constraint`` means a ``NamedSharding`` on
    it. (functrans's ``shard_map`` and ``pmap`` do not read it: ``shard_map`` takes its
    mesh explicitly.)

    >>> with set_mesh(make_mesh((1,), ("i",))):
    ...     get_mesh()
    Mesh({'i': 1})
    >>> get_mesh() is None
    True
    """
    if mesh is not None and not isinstance(mesh, Mesh):
        raise TypeError(f"set_mesh: expected a functrans Mesh or None, got {mesh!r}")
    previous = _context["mesh"]
    _context["mesh"] = mesh
    return _MeshSetting(previous)


def get_mesh() -> Mesh | None:
    """The mesh ``set_mesh`` made current, or None.

    >>> get_mesh() is None
    True
    """
    return _context["mesh"]


def as_sharding(sharding, what: str) -> Sharding:
    """``sharding`` itself, or a PartitionSpec as a NamedSharding on the current mesh."""
    if isinstance(sharding, PartitionSpec):
        if _context["mesh"] is None:
            raise ValueError(f"{what}: a bare PartitionSpec {sharding!r} needs a mesh: use "
                             "NamedSharding(mesh, spec) or `with ft.set_mesh(mesh):`")
        return NamedSharding(_context["mesh"], sharding)
    return sharding


# --------------------------------------------------------------------------- mesh context

class MeshFrame:
    """A mesh whose axis names are bound: while shard_map traces its body (``tracing``;
    the body's trace will have level ``level``) or runs it on this process's blocks.
    ``vmap_depth``: how many vmap axis frames were bound outside it (a vmap inside the body
    shadows a mesh axis of the same name; one outside does not). ``ad_vary``: while a
    user's body is traced with ``check_rep=True``, (its manual axes, the mesh axes each
    input of the body's trace varies along), which reverse mode inside the body checks
    against; else None."""
    __slots__ = ("mesh", "tracing", "level", "vmap_depth", "ad_vary")

    def __init__(self, mesh, tracing, level, vmap_depth, ad_vary=None):
        self.mesh, self.tracing, self.level = mesh, tracing, level
        self.vmap_depth, self.ad_vary = vmap_depth, ad_vary


class _MeshStack(threading.local):
    def __init__(self):
        self.frames = []


_mesh_stack = _MeshStack()


class bound_mesh:
    """Context manager: bind ``mesh``'s axis names for collectives in this thread."""

    def __init__(self, mesh, tracing=False, level=0, vmap_depth=0, ad_vary=None):
        self.frame = MeshFrame(mesh, tracing, level, vmap_depth, ad_vary)

    def __enter__(self):
        _mesh_stack.frames.append(self.frame)
        return self.frame

    def __exit__(self, *exc):
        _mesh_stack.frames.pop()


def mesh_frames() -> tuple:
    """The bound meshes of this thread, innermost last."""
    return tuple(_mesh_stack.frames)


def find_mesh_frame(name):
    """The innermost bound mesh with an axis ``name``, or None."""
    for f in reversed(_mesh_stack.frames):
        if name in f.mesh.axis_names:
            return f
    return None
