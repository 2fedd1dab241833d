"""Collectives called from native code: MPI inside a compiled shard_map body.

A collective in compiled code is otherwise a host step (Python: buffer views, mpi4py, a
fresh result). Before shard_map compiles its body for the CPU backend, ``native_body``
rewrites each top-level collective over axes of the shard_map's own mesh (a group of more
than one process, payloads under 2 GiB) into a primitive the LLVM backend runs natively,
calling the MPI library's own C symbol (the library mpi4py loaded) on the operand's
buffer (made contiguous if it is a strided view) into the output buffer:

- ``psum``/``pmax``/``pmin`` -> ``mpi_allreduce`` (MPI_Allreduce with the datatype the
  host step's mpi4py call uses: every int, uint, float, complex (sum only) dtype; bool as
  uint8, as the host step);
- ``all_gather`` -> ``mpi_allgather`` (``collectives_native_alltoall``): one
  MPI_Allgather, at most one copy: a dense operand read in place (its member-major
  result copied into place once unless the member axis leads), a strided one made
  contiguous once and placed by a receive datatype (built once per layout);
- ``psum_scatter`` (not bool: its host step sums C_BOOL) -> ``mpi_collective`` kind
  ``reduce_scatter`` (MPI_Reduce_scatter_block) straight into the result, the operand
  packed member-major once by the emitter (the scatter dimension split into (n, block),
  n moved first) unless only unit axes precede that dimension;
- ``all_to_all`` -> ``mpi_alltoall`` (``collectives_native_alltoall``): one MPI_Alltoall
  whose receive datatype (built once per layout) places the chunks where they belong; the
  operand is read in place, or packed member-major once when its chunks are strided (at
  most one copy for any split and concat axis);
- ``ppermute`` -> ``sendrecv`` (MPI_Sendrecv of bytes with this process's peers, fixed
  when the body is rewritten; zeros where no one sends here).

Collectives inside ``scan`` / ``while`` / ``cond`` are rewritten the same way when every
process is sure to run them alike (``collectives_native_flow``). These are the host
steps' own MPI calls on the same buffers (``collectives_mesh``), so the
values are bit for bit the same. The MPI handles (communicator, datatype, op, peers; an
int64 array per collective, from mpi4py's ``MPI._handleof``) are extra arguments of the
body, passed at every call, not constants in the code, so a compiled plan shared by two
meshes (the backend caches plans by the jaxpr's structure) uses each call's own
communicator. Elsewhere (another backend, the interpreter) the new primitives' impls call
mpi4py on the same communicator.

Accounting: the native calls bypass the MPI layer that ``comm_stats`` counts, so each
rewritten collective carries its volume (``count``: kind, bytes sent and received, the
formulas of ``distributed.traffic`` on its payload) and its last handle is the address of
the kind's ``distributed.native_counter``, to which the compiled code adds it after the
call: no Python per call. ``native_collectives(False)`` turns the rewrite off (every
collective a host step again), e.g. to watch each MPI call from Python.

>>> native_collectives()
True
"""
from __future__ import annotations

import ctypes

import numpy as np

from jaxpr_ir import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray, Var
from jaxpr_ir.passes import cse, dce, inline_calls
from ..distributed import count_collective, native_counter, traffic
from ..sharding import mesh_for
from . import collectives_native_flow as flow
from .base import Primitive, move_batch_axis
from .basic import broadcast_in_dim_p
from .slicing import slice_p
from .structural import reshape_p
from .collectives_native_alltoall import (allgather_plan, alltoall_plan, mpi_allgather_p,
                                          mpi_alltoall_p, packed_order)

__all__ = ["mpi_allreduce_p", "mpi_collective_p", "native_body", "inline_shard_map",
           "native_collectives", "stats"]

_KINDS = {"psum": "sum", "pmax": "max", "pmin": "min"}
_state = {"on": True, "registered": False}
_COMMS: dict = {}        # communicator handle -> the mpi4py communicator (for the impls)
_LIMIT = 2 ** 31         # MPI's counts are C ints: payloads (in bytes) below this
_TAG = 7                 # ppermute's tag, as mesh_ppermute sends
stats = {"bodies rewritten": 0, "all-reduces rewritten": 0, "collectives rewritten": 0,
         "shard_maps inlined": 0}


def native_collectives(on: bool | None = None) -> bool:
    """Whether shard_map bodies call MPI natively; ``on`` sets it. Returns the setting
    before the call.

    >>> before = native_collectives(False); native_collectives(before)
    False
    """
    before = _state["on"]
    if on is not None:
        _state["on"] = bool(on)
    return before


def _mpi_dtype(MPI, dtype, kind="sum"):
    """The MPI datatype the host step's mpi4py call uses for ``dtype`` (its own buffer
    type map: the same call, so the same bits), bool as uint8 as the host step views it
    (``collectives_mesh._allreduce``); None where MPI has no such reduction (max/min of
    complex) or no such type."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c" and kind != "sum" or dtype.kind not in "biufc":
        return None
    return MPI._typedict.get("B" if dtype == np.bool_ else dtype.char)


def _mpi_op(MPI, kind):
    return {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}[kind]


# --------------------------------------------------------------------------- primitives

def _allreduce_impl(x, handles, *, kind, count):
    from mpi4py import MPI    # lazily: only a multi-process run has these equations
    comm = _COMMS[int(handles[0])]
    x = np.asarray(x, order="C")
    out = np.empty_like(x)
    # bool as uint8, as the host step (MPI has no MAX/MIN on C_BOOL)
    view = (lambda a: a.view(np.uint8)) if x.dtype == np.bool_ else (lambda a: a)
    comm.Allreduce(view(x), view(out), op=_mpi_op(MPI, kind))
    count_collective(*count)
    return out


def _allreduce_aval(x, handles, *, kind, count):
    return ShapedArray(x.shape, x.dtype)


def _allreduce_batch(args, dims, *, kind, count):
    """An all-reduce is elementwise across processes: a batched operand is reduced whole
    (the handles are never batched: they name one communicator)."""
    (x, h), (dx, dh) = args, dims
    if dh is not None:
        raise NotImplementedError("mpi_allreduce: batched MPI handles")
    return mpi_allreduce_p.bind(x, h, kind=kind, count=count), dx


mpi_allreduce_p = Primitive("mpi_allreduce")
mpi_allreduce_p.not_differentiable = True     # made only in compiled bodies, after autodiff
mpi_allreduce_p.def_rules(abstract_eval=_allreduce_aval, impl=_allreduce_impl,
                          batch=_allreduce_batch)


def _collective_aval(x, handles, *, kind, n, axis, sends, receives, count):
    if kind == "reduce_scatter":      # axis: the scatter dimension
        return ShapedArray(x.shape[:axis] + (x.shape[axis] // n,) + x.shape[axis + 1:],
                           x.dtype)
    return ShapedArray(x.shape, x.dtype)       # sendrecv


def _collective_impl(x, handles, *, kind, n, axis, sends, receives, count):
    from mpi4py import MPI    # lazily: only a multi-process run has these equations
    comm = _COMMS[int(handles[0])]
    x = np.asarray(x)
    out = np.zeros(_collective_aval(x, None, kind=kind, n=n, axis=axis, sends=sends,
                                    receives=receives, count=count).shape, x.dtype)
    if kind == "reduce_scatter":      # member-major: member i's block contiguous
        split, perm = packed_order(x.shape, axis, n)
        comm.Reduce_scatter_block(np.ascontiguousarray(x.reshape(split).transpose(perm)),
                                  out, op=MPI.SUM)
    elif sends or receives:
        x = np.ascontiguousarray(x)
        comm.Sendrecv(x, dest=int(handles[2]), sendtag=_TAG, recvbuf=out,
                      source=int(handles[3]), recvtag=_TAG)
    if count:
        count_collective(*count)
    return out


def _collective_batch(args, dims, *, kind, n, axis, sends, receives, count):
    """Each example moves as the whole operand does: ``reduce_scatter``'s batch dim goes
    first, the scatter dimension one further (member i's block then holds every
    example's block)."""
    (x, h), (dx, dh) = args, dims
    if dh is not None:
        raise NotImplementedError("mpi_collective: batched MPI handles")
    params = dict(kind=kind, n=n, axis=axis, sends=sends, receives=receives, count=count)
    if dx is None:
        return mpi_collective_p.bind(x, h, **params), None
    if kind == "reduce_scatter":
        x, dx, params["axis"] = move_batch_axis(x, dx, 0), 0, axis + 1
    return mpi_collective_p.bind(x, h, **params), dx


mpi_collective_p = Primitive("mpi_collective")
mpi_collective_p.not_differentiable = True    # made only in compiled bodies, after autodiff
mpi_collective_p.def_rules(abstract_eval=_collective_aval, impl=_collective_impl,
                           batch=_collective_batch)


# --------------------------------------------------------------------------- the rewrite

def _handles(MPI, comm, *values):
    """An int64 array of ``comm``'s handle and ``values`` (MPI objects as their handles'
    bits: an int in MPICH, where mpi4py may give it as an unsigned number; a pointer in
    Open MPI; plain ints as they are). The code truncates each to the library's width."""
    raw = [MPI._handleof(comm)] + [v if isinstance(v, int) else MPI._handleof(v)
                                   for v in values]
    out = np.array([v & (2 ** 64 - 1) for v in raw], np.uint64).view(np.int64)
    _COMMS[int(out[0])] = comm
    return out


class _Rewrite:
    """The equations replacing collectives (``env`` maps the replaced outputs to atoms
    when no equation defines them) and the handle arrays they read."""

    def __init__(self, MPI):
        self.MPI, self.comm = MPI, None
        self.eqns, self.hvars, self.harrays, self.env = [], [], [], {}

    def mpi(self, prim, x, values, params, count, out=None):
        """``prim`` on ``x`` with a new handle array (``self.comm``, ``values``, then the
        address of ``count``'s native counter); ``count``: (kind, bytes sent, received) or
        () for a call that communicates nothing."""
        addr = native_counter(count[0]).ctypes.data if count else 0
        h = _handles(self.MPI, self.comm, *values, addr)
        v = Var(ShapedArray(h.shape, np.dtype("int64")))
        self.hvars.append(v)
        self.harrays.append(h)
        return self.eqn(prim, (x, v), {**params, "count": tuple(count)}, out)

    def eqn(self, prim, ins, params, out=None):
        """``prim[params] ins`` into ``out`` (a new var when None); returns the output."""
        ins = [ins] if isinstance(ins, (Var, Literal)) else list(ins)
        if out is None:
            out = Var(prim.abstract_eval(*[i.aval for i in ins], **params))
        self.eqns.append(Eqn(prim, ins, [out], params))
        return out

    def reshape(self, x, shape, out=None):
        return self.eqn(reshape_p, x, {"new_sizes": tuple(shape)}, out)

    def allgather(self, x, axis, kind, out=None):
        """Every member of ``self.comm``'s ``x`` stacked along a new axis ``axis`` in
        member order (``mpi_allgather``: no copy after the call), counted as ``kind``."""
        n = self.comm.Get_size()
        plan = allgather_plan(self.MPI, x.aval.shape, x.aval.dtype, axis, n)
        counts, types = plan or ((0, 0), (self.MPI.BYTE, self.MPI.BYTE))
        vol = traffic(kind, _nbytes(x.aval), n)
        return self.mpi(mpi_allgather_p, x, types, {"n": n, "axis": axis, "counts": counts},
                        (kind, vol, vol), out)

    def gather(self, x, comm, dim, kind, out=None):
        """Every member's ``x`` concatenated along ``dim`` in member order (all-gather)."""
        self.comm, n, shape = comm, comm.Get_size(), x.aval.shape
        g = self.allgather(x, dim, kind)
        return self.reshape(g, shape[:dim] + (n * shape[dim],) + shape[dim + 1:], out)


def _group(eqn, mesh):
    """The communicator of ``eqn``'s axes when it runs over more than one process of
    ``mesh``, with an operand of under 2 GiB (else None)."""
    if isinstance(eqn.inputs[0], Literal):
        return None
    a = eqn.inputs[0].aval
    names = eqn.params["axis_name"]
    names_t = names if isinstance(names, tuple) else (names,)
    if _nbytes(a) >= _LIMIT or any(n not in mesh.axis_names for n in names_t):
        return None
    return mesh.comm(names)


def _nbytes(aval) -> int:
    return int(np.prod(aval.shape, dtype=np.int64)) * np.dtype(aval.dtype).itemsize


def _params(kind, n, sends=True, receives=True, axis=0):
    return {"kind": kind, "n": n, "axis": axis, "sends": sends, "receives": receives}


def _allreduce(eqn, r):
    a = eqn.inputs[0].aval
    kind, name = _KINDS[eqn.primitive.name], eqn.primitive.name
    dtype = _mpi_dtype(r.MPI, a.dtype, kind)
    if dtype is None:
        return False
    vol = traffic(name, _nbytes(a), r.comm.Get_size())
    r.mpi(mpi_allreduce_p, eqn.inputs[0], (dtype, _mpi_op(r.MPI, kind)),
          {"kind": kind}, (name, vol, vol), eqn.outvars[0])
    return True


def _all_gather(eqn, r):
    r.allgather(eqn.inputs[0], eqn.params["axis"], "all_gather", eqn.outvars[0])
    return True


def _psum_scatter(eqn, r):
    x, n, d = eqn.inputs[0], r.comm.Get_size(), eqn.params["scatter_dimension"]
    dtype = _mpi_dtype(r.MPI, x.aval.dtype)
    if dtype is None or x.aval.dtype == np.bool_:    # the host step sums bools as C_BOOL
        return False
    # the emitter packs the operand member-major (the scatter dimension split into
    # (n, block), n moved first: one copy unless only unit axes precede it); member i's
    # block is then contiguous and already in the result's layout: no copy after the call
    vol = traffic("psum_scatter", _nbytes(x.aval), n)
    r.mpi(mpi_collective_p, x, (dtype, r.MPI.SUM), _params("reduce_scatter", n, axis=d),
          ("psum_scatter", vol, vol), eqn.outvars[0])
    return True


def _all_to_all(eqn, r):
    """As ``mesh_all_to_all`` (chunk j of the split axis to member j; the chunks received,
    in member order, concatenated along the concat axis), in one MPI_Alltoall whose
    receive datatype places the chunks: at most one copy, the operand packed member-major
    when its chunks are strided (``collectives_native_alltoall``)."""
    x, n = eqn.inputs[0], r.comm.Get_size()
    s, c = eqn.params["split_axis"], eqn.params["concat_axis"]
    plan = alltoall_plan(r.MPI, x.aval.shape, x.aval.dtype, s, c, n)
    pack, counts, types = plan or (None, (0, 0), (r.MPI.BYTE, r.MPI.BYTE))
    vol = traffic("all_to_all", _nbytes(x.aval), n)
    r.mpi(mpi_alltoall_p, x, types, {"n": n, "shape": eqn.outvars[0].aval.shape,
                                     "pack_axis": pack, "counts": counts},
          ("all_to_all", vol, vol), eqn.outvars[0])
    return True


def _ppermute(eqn, r):
    """As ``mesh_ppermute``: this process's peers are fixed here (its rank in the axis'
    communicator); one with neither makes no MPI call and gets zeros."""
    x, n, me = eqn.inputs[0], r.comm.Get_size(), r.comm.Get_rank()
    dst = [d for s, d in eqn.params["perm"] if s == me]
    src = [s for s, d in eqn.params["perm"] if d == me]
    null, size = r.MPI.PROC_NULL, _nbytes(x.aval)
    count = ("ppermute", size if dst else 0, size if src else 0) if dst or src else ()
    r.mpi(mpi_collective_p, x, (r.MPI.BYTE, dst[0] if dst else null, src[0] if src else null),
          _params("sendrecv", n, bool(dst), bool(src)), count, eqn.outvars[0])
    return True


_REWRITES = {"psum": _allreduce, "pmax": _allreduce, "pmin": _allreduce,
             "all_gather": _all_gather, "psum_scatter": _psum_scatter,
             "all_to_all": _all_to_all, "ppermute": _ppermute}


def _rewrite_eqns(eqns, mesh, r, same=None):
    """Each equation of ``eqns`` into ``r``: a collective this module runs natively as
    its rewrite, ``axis_index`` of a mesh axis as this process's index (a literal), a
    loop or cond whose collectives every process runs alike with its body rewritten so
    (``collectives_native_flow``), the others as they are. ``same``: the vars known equal
    on every process (grows). Returns how many collectives were rewritten."""
    done, same = 0, set() if same is None else same
    axes = tuple(a for a in mesh.axis_names if mesh.axis_size(a) > 1)
    for e in eqns:
        name = e.primitive.name
        flow.mark(e, same, axes)
        if name in flow.FLOW and flow.safe(e, same, axes):
            done += _rewrite_flow(e, mesh, r, same, axes)
            continue
        if name == "axis_index" and _in_mesh(e.params["axis_name"], mesh):
            i = np.int32(mesh.axis_index(e.params["axis_name"]))
            r.eqn(broadcast_in_dim_p, Literal(i, ShapedArray((), np.dtype("int32"))),
                  {"shape": (), "broadcast_dimensions": ()}, e.outvars[0])
            continue
        rule = _REWRITES.get(name)
        r.comm = None if rule is None else _group(e, mesh)
        at = len(r.eqns)
        if r.comm is not None and rule(e, r):
            done += 1
            stats["all-reduces rewritten" if name in _KINDS else "collectives rewritten"] += 1
        else:
            del r.eqns[at:]
            r.eqns.append(e)
    return done


def _rewrite_flow(e, mesh, r, same, axes):
    """A scan / while / cond with each sub-jaxpr rewritten by a child ``_Rewrite``, whose
    handle arrays become new handle vars of ``r`` passed in as the sub-jaxpr's first
    inputs. Returns how many collectives were rewritten."""
    done, new, handles = 0, [], []
    if not any(_needs_mesh(j.eqns) for j in flow.sub_jaxprs(e)):
        r.eqns.append(e)
        return 0
    for closed, flags in flow.pieces(e, same, axes):
        c, j = _Rewrite(r.MPI), closed.jaxpr
        inner = {v for v, f in zip(j.invars, flags) if f} | set(j.constvars)
        done += _rewrite_eqns(j.eqns, mesh, c, inner)
        new.append(ClosedJaxpr(Jaxpr(j.constvars, c.hvars + list(j.invars), c.eqns,
                                     j.outvars), closed.consts))
        outer = [Var(v.aval) for v in c.hvars]
        r.hvars += outer
        r.harrays += c.harrays
        handles.append(outer)
    r.eqns.append(flow.rebuild(e, new, handles))
    return done


def _in_mesh(names, mesh):
    return all(n in mesh.axis_names for n in (names if isinstance(names, tuple) else (names,)))


def native_body(jaxpr: ClosedJaxpr, mesh):
    """(body, handle arrays) with the body's native-capable collectives rewritten (see the
    module doc): the body takes the handle arrays after its own inputs. None when nothing
    is rewritten (or the rewrite is off, or the LLVM backend cannot call MPI).

    >>> from functrans.sharding import Mesh
    >>> native_body(ClosedJaxpr(Jaxpr([], [], [], []), []), Mesh((1,), ("i",))) is None
    True
    """
    if not _state["on"] or not any(e.primitive.name in _REWRITES for e in jaxpr.jaxpr.eqns) \
            or not _register():
        return None
    from mpi4py import MPI    # lazily: a communicator of more than one process exists now
    r = _Rewrite(MPI)
    if not _rewrite_eqns(jaxpr.jaxpr.eqns, mesh, r):
        return None
    stats["bodies rewritten"] += 1
    j = jaxpr.jaxpr
    body = ClosedJaxpr(Jaxpr(j.constvars, list(j.invars) + r.hvars, r.eqns, j.outvars),
                       jaxpr.consts)
    return body, r.harrays


# --------------------------------------------------------------------------- inlined shard_map

_MESH_PRIMS = frozenset(_REWRITES) | {"axis_index", "shard_map"}


def _subjaxprs(v):
    if isinstance(v, ClosedJaxpr):
        yield v.jaxpr
    elif isinstance(v, Jaxpr):
        yield v
    elif isinstance(v, (tuple, list)):
        for x in v:
            yield from _subjaxprs(x)


def _needs_mesh(eqns) -> bool:
    """Whether an equation of ``eqns`` (at any depth) runs only inside a bound mesh."""
    for e in eqns:
        if e.primitive.name in _MESH_PRIMS or any(
                _needs_mesh(j.eqns) for v in e.params.values() for j in _subjaxprs(v)):
            return True
    return False


def _renamed(j: Jaxpr, env: dict):
    """``j``'s equations with fresh output vars (a body may be inlined twice); ``env``
    maps ``j``'s inputs to atoms and gets its other vars. Returns (eqns, outputs)."""
    def sub(a):
        return env.get(a, a) if isinstance(a, Var) else a
    eqns = []
    for e in j.eqns:
        outs = [Var(v.aval, v.hint) for v in e.outvars]
        eqns.append(Eqn(e.primitive, [sub(a) for a in e.inputs], outs, e.params, e.source))
        env.update(zip(e.outvars, outs))
    return eqns, [sub(v) for v in j.outvars]


def _block_of(x, spec, mesh, r):
    """This process's block of ``x`` as ``spec`` splits it (a static slice), as
    ``shard_map._block`` cuts it."""
    if isinstance(x, Literal) or not any(spec):
        return x
    start, limit = [], []
    for size, names in zip(x.aval.shape, spec):
        k = size // mesh.axis_size(names) if names else size
        i = mesh.axis_index(names) if names else 0
        start.append(i * k)
        limit.append((i + 1) * k)
    return r.eqn(slice_p, x, {"start_indices": tuple(start), "limit_indices": tuple(limit),
                              "strides": None})


def inline_shard_map(eqn, backend: str):
    """A shard_map equation as equations of the compiled program that contains it (the
    CPU backend; ``compiler.compile_closed`` asks each primitive's ``compile_inline``):
    this process's blocks cut by static slices, the body (its collectives rewritten as in
    ``native_body``, ``axis_index`` this process's index), the split outputs all-gathered
    by ``MPI_Allgather`` as ``shard_map._assemble`` does (counted as ``shard_map_output``).
    No Python runs between the program's steps. None (the equation stays a host step)
    when the rewrite is off, the mesh is one process, or anything in the body would still
    need the mesh bound while it runs (a collective inside a while whose predicate may
    differ between processes, say: ``collectives_native_flow``).

    Returns (equations, new const vars, their values (the handle arrays), {output var:
    atom} for outputs no equation defines).

    >>> inline_shard_map(None, "interpret") is None
    True
    """
    if backend != "cpu" or not _state["on"]:
        return None
    mesh = mesh_for(eqn.params["mesh"])
    if mesh.size == 1 or not _register():
        return None
    body = dce(cse(inline_calls(eqn.params["jaxpr"])))
    j = body.jaxpr
    if j.constvars or body.consts:
        return None
    from mpi4py import MPI    # lazily: a communicator of more than one process exists now
    r = _Rewrite(MPI)
    env = {v: _block_of(x, s, mesh, r) for x, v, s in
           zip(eqn.inputs, j.invars, eqn.params["in_specs"])}
    eqns, outs = _renamed(j, env)
    same = {a for a, s in zip(env.values(), eqn.params["in_specs"])
            if isinstance(a, Var) and not any(s)}
    _rewrite_eqns(eqns, mesh, r, same)
    if _needs_mesh(r.eqns):
        return None
    for o, atom, spec in zip(eqn.outvars, outs, eqn.params["out_specs"]):
        split = [(d, mesh.comm(names)) for d, names in enumerate(spec) if names]
        split = [(d, c) for d, c in split if c is not None]
        if not split:
            r.env[o] = atom
            continue
        if isinstance(atom, Literal) or _nbytes(o.aval) >= _LIMIT:
            return None
        for k, (d, comm) in enumerate(split):
            atom = r.gather(atom, comm, d, "shard_map_output", o if k == len(split) - 1 else None)
    stats["shard_maps inlined"] += 1
    return r.eqns, r.hvars, r.harrays, r.env


# --------------------------------------------------------------------------- LLVM

def _mpi_library():
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if "/libmpi" in path and ".so" in path:
                return path
    return None


_C_NAMES = {"allreduce": "MPI_Allreduce", "allgather": "MPI_Allgather",
            "alltoall": "MPI_Alltoall", "reduce_scatter": "MPI_Reduce_scatter_block",
            "sendrecv": "MPI_Sendrecv"}


def _register() -> bool:
    """Give the LLVM backend the MPI emitters and the MPI library's symbols (once); False
    when the MPI library cannot be found in this process."""
    if _state["registered"]:
        return True
    from mpi4py import MPI    # lazily: only a multi-process run gets here
    path = _mpi_library()
    if path is None:
        return False
    import llvmlite.binding as llvm
    # the backend is loaded when a body is compiled for it, not when functrans is imported
    from backends.llvm.llvm_mpi import SYMBOLS, register_collectives
    lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    for kind, symbol in SYMBOLS.items():
        llvm.add_symbol(symbol, ctypes.cast(getattr(lib, _C_NAMES[kind]), ctypes.c_void_p).value)
    register_collectives([8 * MPI._sizeof(k) for k in (MPI.Comm, MPI.Datatype, MPI.Op)])
    _state["registered"] = True
    return True
