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

from ..distributed import count_collective, traffic
from ..sharding import find_mesh_frame, mesh_for

__all__ = ["mesh_of", "mesh_psum", "mesh_pmax", "mesh_pmin", "mesh_all_gather",
           "mesh_psum_scatter", "mesh_all_to_all", "mesh_ppermute", "mesh_axis_index",
           "gather_blocks", "plan_traffic"]


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
    vol = traffic("p" + kind, x.nbytes, comm.Get_size())
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
    vol = traffic("all_gather", x.nbytes, comm.Get_size())
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
    vol = traffic("psum_scatter", xs.nbytes, n)
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
    vol = traffic("all_to_all", send.nbytes, n)
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
    if dst or src:      # a process neither sending nor receiving makes no MPI call
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
    vol = traffic("shard_map_output", x.nbytes, comm.Get_size())
    count_collective("shard_map_output", vol, vol)
    return np.concatenate(list(out), axis=dim)


# --------------------------------------------------------------------------- the plan's traffic

_COLLECTIVES = ("psum", "pmax", "pmin", "all_gather", "psum_scatter", "all_to_all", "ppermute")


def _nbytes(aval) -> int:
    return int(np.prod(aval.shape, dtype=np.int64)) * np.dtype(aval.dtype).itemsize


class _Tally:
    """kind -> [calls, bytes sent, bytes received]; notes on what the count cannot know."""

    def __init__(self):
        self.rows, self.notes = {}, []

    def add(self, kind, times, sent, received):
        row = self.rows.setdefault(kind, [0, 0.0, 0.0])
        row[0] += times
        row[1] += times * sent
        row[2] += times * received

    def total(self):
        return sum(r[1] + r[2] for r in self.rows.values())

    def merge(self, other):
        for k, (c, sent, received) in other.rows.items():
            row = self.rows.setdefault(k, [0, 0.0, 0.0])
            row[0] += c
            row[1] += sent
            row[2] += received
        self.notes += [n for n in other.notes if n not in self.notes]


def _subjaxprs(v):
    if hasattr(v, "eqns"):
        yield v
    elif hasattr(v, "jaxpr") and hasattr(v.jaxpr, "eqns"):
        yield v.jaxpr
    elif isinstance(v, (tuple, list)):
        for x in v:
            yield from _subjaxprs(x)


def _collective_eqn(eqn, mesh, times, tally):
    name = eqn.params["axis_name"]
    if mesh is None or name not in mesh.axis_names:
        f = find_mesh_frame(name)
        if f is None:
            tally.notes.append(f"a {eqn.primitive.name} over {name!r} outside any mesh "
                               f"is not counted")
            return
        mesh = f.mesh
    n = mesh.axis_size(name)
    if n == 1:
        return                  # one process: no MPI call, as at run time
    kind, size = eqn.primitive.name, _nbytes(eqn.inputs[0].aval)
    if kind == "ppermute":
        me = mesh.axis_index(name)
        sends = any(s == me for s, _ in eqn.params["perm"])
        receives = any(d == me for _, d in eqn.params["perm"])
        if sends or receives:
            tally.add(kind, times, size if sends else 0, size if receives else 0)
    else:
        vol = traffic(kind, size, n)
        tally.add(kind, times, vol, vol)


def _shard_map_eqn(eqn, times, tally):
    mesh = mesh_for(eqn.params["mesh"])
    body = eqn.params["jaxpr"]
    _walk(body.jaxpr, mesh, times, tally)
    for a, spec in zip(body.out_avals, eqn.params["out_specs"]):
        size = _nbytes(a)           # the output block, gathered dimension by dimension
        for names in spec:
            if names:
                k = mesh.axis_size(names)
                if k > 1:
                    vol = traffic("shard_map_output", size, k)
                    tally.add("shard_map_output", times, vol, vol)
                size *= k


def _walk(jaxpr, mesh, times, tally):
    for eqn in jaxpr.eqns:
        prim = eqn.primitive.name
        if prim in _COLLECTIVES:
            _collective_eqn(eqn, mesh, times, tally)
        elif prim == "shard_map":
            _shard_map_eqn(eqn, times, tally)
        elif prim == "cond":          # one branch runs: the one that communicates most
            tallies = []
            for b in _subjaxprs(eqn.params["branches"]):
                tallies.append(_Tally())
                _walk(b, mesh, times, tallies[-1])
            if len({tuple(sorted(t.rows.items())) for t in tallies}) > 1:
                tally.notes.append("a cond's branches communicate differently: the branch "
                                   "with the most bytes is counted")
            if tallies:
                tally.merge(max(tallies, key=_Tally.total))
        else:
            k = times * int(eqn.params.get("length", 1)) if prim == "scan" else times
            subs = [j for v in eqn.params.values() for j in _subjaxprs(v)]
            if prim == "while" and subs:
                before = tally.total()
                for j in subs:
                    _walk(j, mesh, k, tally)
                if tally.total() != before:
                    tally.notes.append("collectives in a while loop are counted once "
                                       "(the trip count is not known before it runs)")
                continue
            for j in subs:
                _walk(j, mesh, k, tally)


def plan_traffic(closed) -> dict:
    """What one call of ``closed`` (a ClosedJaxpr) makes this process communicate, from its
    equations: per collective kind ``calls``, ``bytes_sent`` and ``bytes_received``, by the
    formulas of ``distributed.comm_stats`` (``distributed.traffic``) on the operands' shapes
    and dtypes; the mesh of each ``shard_map`` equation (or the mesh bound now) gives the
    axis sizes; ``bytes sent`` and ``bytes received``, the totals. ``collective notes`` lists
    what a static count cannot know (a while loop's trip count, which branch of a cond
    runs). A scan's collectives count ``length`` times. ``cost_analysis()`` reports this.

    >>> import functrans as ft, numpy as np
    >>> from functrans.sharding import Mesh, P
    >>> f = ft.shard_map(lambda x: ft.lax.psum(x, "i"), Mesh((1,), ("i",)), P("i"), P())
    >>> plan_traffic(ft.make_jaxpr(f)(np.ones(4)))["collectives"]   # one process: no MPI
    {}
    """
    tally = _Tally()
    _walk(closed.jaxpr, None, 1, tally)
    rows = {k: {"calls": c, "bytes_sent": int(round(s)), "bytes_received": int(round(r))}
            for k, (c, s, r) in sorted(tally.rows.items())}
    return {"collectives": rows,
            "bytes sent": float(sum(r["bytes_sent"] for r in rows.values())),
            "bytes received": float(sum(r["bytes_received"] for r in rows.values())),
            "collective notes": tally.notes}
