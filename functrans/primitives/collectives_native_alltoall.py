"""all_to_all and all_gather called from native code with at most one copy of the
buffer: one ``MPI_Alltoall`` (``MPI_Allgather``) whose receive datatype places the chunks
(the members' blocks) where they belong.

Chunk ``j`` of the operand (of ``n`` along the split axis) goes to member ``j``; the chunk
from member ``j`` lands in block ``j`` of the output along the concat axis. Seen as bytes,
either side is ``outer`` runs of ``block`` bytes, ``stride`` bytes apart (``outer``: the
product of the sizes before the axis; ``block``: a chunk's share of one run), chunk ``j``
starting ``j * block`` bytes in. A side whose ``outer`` is 1 (the axis is the first, or
only unit axes precede it) is contiguous: it moves as ``block`` plain units, read or
written in place.

- Receive side not contiguous: an ``MPI_Type_vector(outer, block, stride)`` resized to an
  extent of ``block``, so ``MPI_Alltoall`` with a count of 1 writes chunk ``j`` at
  ``j * extent`` of the output: MPI places the data, no copy of ours.
- Send side not contiguous: the operand is packed member-major once (``pack_axis``: the
  split axis; the emitter copies the strided view of the operand straight into a
  workspace buffer, which then moves as plain units). A send datatype was measured
  slower: MPICH's fast intra-node alltoall (single-copy reads of the peers' buffers)
  needs contiguous send buffers, and a derived send type falls back to packing through
  shared-memory cells (8 MiB float32, split 1, 2 processes, loaded machine, fastest of 40
  to 60 alternating runs: derived send type 3.9-5.4 ms, pack + contiguous 1.9-4.0 ms,
  contiguous alone 0.75-2.6 ms; split 1 concat 1: both derived 4.9-7.8 ms, pack + derived
  receive 4.1 ms; a derived receive type 1.1-3.0 ms against 1.6-3.8 ms for receiving
  contiguously and unpacking).

Both sides count in the same unsigned integer unit (8, 4, 2 or 1 bytes: the largest
dividing every block and stride), so the type signatures match and every dtype moves bit
for bit (bool, float16, complex too).

The receive datatypes are built and committed once per layout (``alltoall_plan``) and
kept for the life of the process (MPI frees them at finalize): a compiled program holds
their handles in its handle array, so they are never freed under it. The cache is keyed
by the layout ``(outer, block, stride, unit)``, not by the shape, so it holds at most one
entry per distinct all_to_all layout a process compiles.

all_gather (``mpi_allgather``, ``allgather_plan``) is the same receive side: member
``j``'s operand (``outer`` runs of ``run`` bytes) lands at ``j * run`` of each run of the
output (``shape[:axis] + (n,) + shape[axis:]``), runs ``n * run`` bytes apart, so its
receive type is that vector resized to ``run``. The emitter uses it for a strided
operand (made contiguous once, no copy after the call). A dense operand is read in place
and, when ``outer`` > 1, gathered member-major into a workspace and copied into place
once (``outer x n`` memcpys): MPICH's allgather with the derived receive type measured
slower than that copy (its ring forwards each block from the strided receive buffer, a
pack on top of the unpack; 8 MiB float32 axis 1, 2 processes, load ~6, medians of 100
alternating calls: derived 6.5 ms, contiguous + copy 5.1 ms, contiguous alone 3.6 ms).
At most one copy either way.

>>> mpi_alltoall_p.name, mpi_allgather_p.name
('mpi_alltoall', 'mpi_allgather')
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import ShapedArray
from ..distributed import count_collective
from .base import Primitive, aval, move_batch_axis
from .slicing import concatenate, slice_in_dim
from .structural import reshape

__all__ = ["mpi_alltoall_p", "mpi_allgather_p", "alltoall_plan", "allgather_plan",
           "alltoall_shape", "packed_order"]

_TYPES: dict = {}        # (outer, block, stride, unit) -> a committed MPI datatype
_UNIT_TYPES = {8: "UINT64_T", 4: "UINT32_T", 2: "UINT16_T", 1: "BYTE"}


def alltoall_shape(shape, split_axis: int, concat_axis: int, n: int) -> tuple:
    """The result shape of a tiled all_to_all of ``shape`` over ``n`` members.

    >>> alltoall_shape((4, 6), 0, 1, 2)
    (2, 12)
    """
    out = list(shape)
    out[split_axis] //= n
    out[concat_axis] *= n
    return tuple(out)


def _side(shape, itemsize, axis, n):
    """(outer, block, stride) in bytes of chunk 0 of ``shape`` split ``n`` ways on ``axis``."""
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64)) * itemsize
    return outer, shape[axis] // n * inner, shape[axis] * inner


def _datatype(MPI, outer, block, stride, unit):
    key = (outer, block, stride, unit)
    t = _TYPES.get(key)
    if t is None:
        base = getattr(MPI, _UNIT_TYPES[unit])
        vec = base.Create_vector(outer, block // unit, stride // unit)
        t = vec.Create_resized(0, block)
        t.Commit()
        vec.Free()
        _TYPES[key] = t
    return t


def alltoall_plan(MPI, shape, dtype, split_axis: int, concat_axis: int, n: int):
    """(pack axis, (send count, receive count), (send datatype, receive datatype)) of the
    ``MPI_Alltoall`` doing a tiled all_to_all of a ``dtype`` array of ``shape`` over ``n``
    members (see the module doc): the pack axis is the split axis when the send side must
    be packed member-major first, else None. None for an empty array.

    >>> alltoall_plan(None, (0, 2), "float32", 0, 1, 2) is None
    True
    """
    itemsize = np.dtype(dtype).itemsize
    total = int(np.prod(shape, dtype=np.int64)) * itemsize
    if total == 0:
        return None
    outer = _side(shape, itemsize, split_axis, n)[0]
    recv = _side(alltoall_shape(shape, split_axis, concat_axis, n), itemsize, concat_axis, n)
    unit = next(u for u in (8, 4, 2, 1)
                if total // n % u == 0 and recv[1] % u == 0 and recv[2] % u == 0)
    base = getattr(MPI, _UNIT_TYPES[unit])
    counts = (total // n // unit, 1 if recv[0] > 1 else total // n // unit)
    rtype = _datatype(MPI, *recv, unit) if recv[0] > 1 else base
    return (split_axis if outer > 1 else None), counts, (base, rtype)


def packed_order(shape, split_axis: int, n: int):
    """(split shape, permutation): ``x.reshape(split shape).transpose(permutation)`` is
    ``x`` member-major (chunk j of the split axis first), the send side's packing.

    >>> packed_order((3, 4), 1, 2)
    ((3, 2, 2), (1, 0, 2))
    """
    s = split_axis
    split = tuple(shape[:s]) + (n, shape[s] // n) + tuple(shape[s + 1:])
    return split, (s,) + tuple(d for d in range(len(split)) if d != s)


def _comm_of(MPI, handle):
    return MPI.Comm.fromhandle(int(handle) & ((1 << 8 * MPI._sizeof(MPI.Comm)) - 1))


def _type_of(MPI, handle):
    return MPI.Datatype.fromhandle(int(handle) & ((1 << 8 * MPI._sizeof(MPI.Datatype)) - 1))


def _aval(x, handles, *, n, shape, pack_axis, counts, count):
    return ShapedArray(shape, x.dtype)


def _impl(x, handles, *, n, shape, pack_axis, counts, count):
    """The same MPI call on numpy buffers (a backend without native code, eagerly)."""
    from mpi4py import MPI    # lazily: only a multi-process run has these equations
    x = np.asarray(x)
    out = np.empty(shape, x.dtype)
    if x.size:
        if pack_axis is not None:
            split, perm = packed_order(x.shape, pack_axis, n)
            x = x.reshape(split).transpose(perm)
        x = np.ascontiguousarray(x)
        h = np.asarray(handles)
        send, recv = (_type_of(MPI, h[k]) for k in (1, 2))
        _comm_of(MPI, h[0]).Alltoall([x.view(np.uint8), counts[0], send],
                                     [out.view(np.uint8), counts[1], recv])
    if count:
        count_collective(*count)
    return out


def _per_example(prim, args, dims, params):
    """The datatypes describe one example's layout: one call per example (each process
    runs the same calls in the same order), the results stacked on axis 0."""
    (x, h), (dx, dh) = args, dims
    if dh is not None:
        raise NotImplementedError(f"{prim.name}: batched MPI handles")
    if dx is None:
        return prim.bind(x, h, **params), None
    x = move_batch_axis(x, dx, 0)
    size = aval(x).shape
    ys = [prim.bind(reshape(slice_in_dim(x, i, i + 1, axis=0), size[1:]), h, **params)
          for i in range(size[0])]
    return concatenate([reshape(y, (1,) + tuple(aval(y).shape)) for y in ys], 0), 0


def _batch(args, dims, *, n, shape, pack_axis, counts, count):
    params = dict(n=n, shape=shape, pack_axis=pack_axis, counts=counts, count=count)
    return _per_example(mpi_alltoall_p, args, dims, params)


mpi_alltoall_p = Primitive("mpi_alltoall")
mpi_alltoall_p.not_differentiable = True      # made only in compiled bodies, after autodiff
mpi_alltoall_p.def_rules(abstract_eval=_aval, impl=_impl, batch=_batch)


# --------------------------------------------------------------------------- all_gather

def allgather_plan(MPI, shape, dtype, axis: int, n: int):
    """((send count, receive count), (send datatype, receive datatype)) of the
    ``MPI_Allgather`` stacking every member's ``dtype`` array of ``shape`` along a new
    axis ``axis`` of the output (see the module doc): plain units when ``outer`` is 1, else
    a derived receive type. None for an empty array.

    >>> allgather_plan(None, (0, 2), "float32", 1, 2) is None
    True
    """
    itemsize = np.dtype(dtype).itemsize
    total = int(np.prod(shape, dtype=np.int64)) * itemsize
    if total == 0:
        return None
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    run = total // outer
    unit = next(u for u in (8, 4, 2, 1) if run % u == 0)
    base = getattr(MPI, _UNIT_TYPES[unit])
    if outer == 1:
        return (total // unit, total // unit), (base, base)
    return (total // unit, 1), (base, _datatype(MPI, outer, run, n * run, unit))


def _gather_aval(x, handles, *, n, axis, counts, count):
    return ShapedArray(x.shape[:axis] + (n,) + x.shape[axis:], x.dtype)


def _gather_impl(x, handles, *, n, axis, counts, count):
    """The same MPI call on numpy buffers (a backend without native code, eagerly)."""
    from mpi4py import MPI    # lazily: only a multi-process run has these equations
    x = np.asarray(x, order="C")
    out = np.empty(_gather_aval(x, None, n=n, axis=axis, counts=None, count=None).shape,
                   x.dtype)
    if x.size:
        h = np.asarray(handles)
        send, recv = (_type_of(MPI, h[k]) for k in (1, 2))
        _comm_of(MPI, h[0]).Allgather([x.reshape(-1).view(np.uint8), counts[0], send],
                                      [out.view(np.uint8), counts[1], recv])
    if count:
        count_collective(*count)
    return out


def _gather_batch(args, dims, *, n, axis, counts, count):
    params = dict(n=n, axis=axis, counts=counts, count=count)
    return _per_example(mpi_allgather_p, args, dims, params)


mpi_allgather_p = Primitive("mpi_allgather")
mpi_allgather_p.not_differentiable = True     # made only in compiled bodies, after autodiff
mpi_allgather_p.def_rules(abstract_eval=_gather_aval, impl=_gather_impl, batch=_gather_batch)
