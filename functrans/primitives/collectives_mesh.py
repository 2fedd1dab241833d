"""The collectives' values over a mesh axis: MPI calls among the processes of that axis.

Each function takes this process's operand (a numpy array) and returns its result, calling
one MPI collective on the axis' sub-communicator (``Mesh.comm``) with numpy buffers. Over
an axis of one process no MPI is needed (and none is imported). Which mesh binds a name is
looked up in the per-thread mesh context that ``shard_map`` sets while it runs its body.

>>> from functrans.sharding import Mesh, bound_mesh
>>> import numpy as np
>>> with bound_mesh(Mesh((1,), ("i",))):
...     mesh_psum(np.array([1.0, 2.0]), "i").tolist()
[1.0, 2.0]
"""
from __future__ import annotations

import numpy as np

from ..distributed import count_collective
from ..sharding import find_mesh_frame

__all__ = ["mesh_of", "mesh_psum", "mesh_pmax", "mesh_pmin", "mesh_all_gather",
           "mesh_psum_scatter", "mesh_all_to_all", "mesh_ppermute", "mesh_axis_index",
           "gather_blocks"]


def unbound(name):
    return NameError(f"unbound axis name: {name!r} (collectives work inside "
                     f"vmap(..., axis_name={name!r}) or shard_map over a mesh with an axis "
                     f"{name!r})")


def mesh_of(name):
    """The mesh binding axis ``name`` in this thread, or NameError."""
    f = find_mesh_frame(name)
    if f is None:
        raise unbound(name)
    return f.mesh


_OPS: dict = {}


def _op(kind):
    if not _OPS:      # mpi4py is loaded by now: a communicator of more than one process exists
        from mpi4py import MPI
        _OPS.update(sum=MPI.SUM, max=MPI.MAX, min=MPI.MIN)
    return _OPS[kind]


def _contiguous(x):
    # (np.ascontiguousarray would make a 0-d array 1-d)
    return np.asarray(x, order="C")


def _allreduce(x, name, kind):
    comm = mesh_of(name).comm(name)
    x = _contiguous(x)
    if comm is None:
        return x.copy()
    if x.dtype == np.bool_:     # MPI has no MAX/MIN on C_BOOL: the same order as uint8
        return _allreduce(x.view(np.uint8), name, kind).view(np.bool_)
    out = np.empty_like(x)
    comm.Allreduce(x, out, op=_op(kind))
    n = comm.Get_size()
    vol = 2.0 * (n - 1) / n * x.nbytes
    count_collective("p" + kind, vol, vol)
    return out


def mesh_psum(x, name):
    return _allreduce(x, name, "sum")


def mesh_pmax(x, name):
    return _allreduce(x, name, "max")


def mesh_pmin(x, name):
    return _allreduce(x, name, "min")


def mesh_all_gather(x, name, axis):
    """Every member's ``x`` stacked along a new axis ``axis``, in axis-index order."""
    comm = mesh_of(name).comm(name)
    x = _contiguous(x)
    if comm is None:
        return np.expand_dims(x, axis).copy()
    out = np.empty((comm.Get_size(),) + x.shape, x.dtype)
    comm.Allgather(x, out)
    vol = (comm.Get_size() - 1) * x.nbytes
    count_collective("all_gather", vol, vol)
    return np.moveaxis(out, 0, axis)


def mesh_psum_scatter(x, name, dim):
    """Block ``i`` (of n along ``dim``, whose size n*k) of the sum over members, to member i;
    the block keeps its dimension (size k)."""
    comm = mesh_of(name).comm(name)
    if comm is None:
        return _contiguous(x).copy()
    n = comm.Get_size()
    xs = _contiguous(np.moveaxis(x, dim, 0))
    block = (xs.shape[0] // n,) + xs.shape[1:]
    out = np.empty(block, x.dtype)
    comm.Reduce_scatter_block(xs, out, op=_op("sum"))
    vol = (n - 1) / n * xs.nbytes
    count_collective("psum_scatter", vol, vol)
    return np.moveaxis(out, 0, dim)


def mesh_all_to_all(x, name, split_axis, concat_axis):
    """Chunk j (of n along ``split_axis``) to member j; the chunks received, in member
    order, concatenated along ``concat_axis``."""
    comm = mesh_of(name).comm(name)
    if comm is None:
        return _contiguous(x).copy()
    n = comm.Get_size()
    xs = np.moveaxis(x, split_axis, 0)
    k = xs.shape[0] // n
    send = _contiguous(xs.reshape((n, k) + xs.shape[1:]))
    recv = np.empty_like(send)
    comm.Alltoall(send, recv)
    vol = (n - 1) / n * send.nbytes
    count_collective("all_to_all", vol, vol)
    pieces = [np.moveaxis(recv[j], 0, split_axis) for j in range(n)]
    return np.concatenate(pieces, axis=concat_axis)


def mesh_ppermute(x, name, perm):
    """``x`` of member ``src`` goes to member ``dst`` for each (src, dst) in ``perm``;
    members no one sends to get zeros."""
    mesh = mesh_of(name)
    comm = mesh.comm(name)
    x = _contiguous(x)
    if comm is None:
        return x.copy() if (0, 0) in perm else np.zeros_like(x)
    me = comm.Get_rank()
    dst = [d for s, d in perm if s == me]
    src = [s for s, d in perm if d == me]
    out = np.zeros_like(x)
    from mpi4py import MPI
    if dst and src:
        comm.Sendrecv(x, dest=dst[0], sendtag=7, recvbuf=out, source=src[0], recvtag=7)
    elif dst:
        comm.Send(x, dest=dst[0], tag=7)
    elif src:
        comm.Recv(out, source=src[0], tag=7, status=MPI.Status())
    count_collective("ppermute", x.nbytes if dst else 0, x.nbytes if src else 0)
    return out


def mesh_axis_index(name):
    return np.int32(mesh_of(name).axis_index(name))


def gather_blocks(mesh, names, x, dim):
    """The blocks of every process along mesh axes ``names`` (a tuple), concatenated along
    ``dim`` in row-major axis-index order: how shard_map assembles a split output."""
    comm = mesh.comm(names)
    x = _contiguous(x)
    if comm is None:
        return x
    out = np.empty((comm.Get_size(),) + x.shape, x.dtype)
    comm.Allgather(x, out)
    vol = (comm.Get_size() - 1) * x.nbytes
    count_collective("shard_map_output", vol, vol)
    return np.concatenate(list(out), axis=dim)
