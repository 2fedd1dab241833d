"""Meshes of processes and partition specs (how a global array is split over a mesh).

``Mesh(shape, axis_names)`` arranges the MPI processes in an n-d grid, in **row-major rank
order**: process ``r`` sits at coordinates ``numpy.unravel_index(r, shape)``, so on 4
processes ``Mesh((2, 2), ("data", "model"))`` puts ranks 0, 1 in data row 0 and ranks 0, 2
in model column 0. The mesh must use every process of the world (its size equals
``process_count()``).

``PartitionSpec`` (alias ``P``) has one entry per leading dimension of an array: ``None``
(the dimension is whole on every process), a mesh axis name (split in equal blocks over
that axis, block ``i`` on the processes at coordinate ``i``), or a tuple of names (split
over their product, row-major in the order given). Missing trailing entries are ``None``.

A collective over a mesh axis runs among the processes that differ only in that axis'
coordinate: one MPI sub-communicator per axis (and per tuple of axes), made on first use.
Every process of a program calls the same collectives in the same order (SPMD), so these
collective creations match up.

>>> mesh = Mesh((1,), ("i",))
>>> mesh.shape, mesh.axis_names, mesh.size
((1,), ('i',), 1)
>>> P("i", None)
PartitionSpec('i', None)
"""
from __future__ import annotations

import threading

import numpy as np

from . import distributed

__all__ = ["Mesh", "PartitionSpec", "P"]


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

    def __repr__(self):
        return f"PartitionSpec{tuple.__repr__(self)}" if len(self) != 1 else \
            f"PartitionSpec({self[0]!r})"


P = PartitionSpec


class Mesh:
    """An n-d grid of all MPI processes, axes named, in row-major rank order.

    >>> m = Mesh((1, 1), ("data", "model"))
    >>> m.axis_size("model"), m.coords
    (1, (0, 0))
    """

    def __init__(self, shape, axis_names):
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
        self.shape = shape
        self.axis_names = axis_names
        self.size = int(np.prod(shape, dtype=np.int64))
        world = distributed.process_count()
        if self.size != world:
            raise ValueError(
                f"Mesh{shape} over axes {axis_names} needs {self.size} processes, but the MPI "
                f"world has {world} (start the program with mpiexec -n {self.size})")
        self.coords = tuple(int(c) for c in np.unravel_index(distributed.process_index(),
                                                             shape))
        self._comms = {}
        # the form a jaxpr carries (printable): ((name, size), ...)
        self.key = tuple(zip(axis_names, shape))
        _meshes.setdefault(self.key, self)

    def __repr__(self):
        return f"Mesh({dict(zip(self.axis_names, self.shape))})"

    def __eq__(self, other):
        return (isinstance(other, Mesh) and self.shape == other.shape
                and self.axis_names == other.axis_names)

    def __hash__(self):
        return hash((self.shape, self.axis_names))

    def axis_size(self, names) -> int:
        """The number of processes along an axis, or along a tuple of axes (their product)."""
        names = names if isinstance(names, tuple) else (names,)
        return int(np.prod([self.shape[self._pos(n)] for n in names], dtype=np.int64))

    def axis_index(self, names) -> int:
        """This process's row-major index along ``names`` (an axis or a tuple of axes)."""
        names = names if isinstance(names, tuple) else (names,)
        idx = 0
        for n in names:
            k = self._pos(n)
            idx = idx * self.shape[k] + self.coords[k]
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
                color = color * self.shape[k] + self.coords[k]
            c = distributed.world().Split(color, self.axis_index(names))
        self._comms[key] = c
        return c


_meshes: dict = {}   # Mesh.key -> the first Mesh made with it (its communicators are reused)


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


# --------------------------------------------------------------------------- mesh context

class MeshFrame:
    """A mesh whose axis names are bound: while shard_map traces its body (``tracing``;
    the body's trace will have level ``level``) or runs it on this process's blocks.
    ``vmap_depth``: how many vmap axis frames were bound outside it (a vmap inside the body
    shadows a mesh axis of the same name; one outside does not)."""
    __slots__ = ("mesh", "tracing", "level", "vmap_depth")

    def __init__(self, mesh, tracing, level, vmap_depth):
        self.mesh, self.tracing, self.level = mesh, tracing, level
        self.vmap_depth = vmap_depth


class _MeshStack(threading.local):
    def __init__(self):
        self.frames = []


_mesh_stack = _MeshStack()


class bound_mesh:
    """Context manager: bind ``mesh``'s axis names for collectives in this thread."""

    def __init__(self, mesh, tracing=False, level=0, vmap_depth=0):
        self.frame = MeshFrame(mesh, tracing, level, vmap_depth)

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
