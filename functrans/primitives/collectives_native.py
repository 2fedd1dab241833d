"""All-reduces called from native code: ``MPI_Allreduce`` inside a compiled shard_map body.

A collective in compiled code is otherwise a host step (Python: buffer views, mpi4py, a
fresh result). Before shard_map compiles its body for the CPU backend, ``native_body``
rewrites each top-level ``psum``/``pmax``/``pmin`` over axes of the shard_map's own mesh
(float32/64, int32/64 operands of fewer than 2**31 elements, a group of more than one
process) into ``mpi_allreduce(x, handles)``: ``handles`` is an int64[3] argument of the body
holding the MPI handles of the communicator, datatype and op (mpi4py's ``MPI._handleof``),
passed at every call. The LLVM backend emits a call of the MPI library's own
``MPI_Allreduce`` symbol (the library mpi4py loaded) on the operand's buffer (made
contiguous if it is a strided view) into the output buffer: no Python and no copy on the
way. The handles are arguments, not constants in the code, so a compiled plan shared by
two meshes (the backend caches plans by the jaxpr's structure) uses each call's own
communicator. Elsewhere (another backend, the interpreter) ``mpi_allreduce``'s impl calls
mpi4py on the same communicator.

Accounting: the native calls bypass the MPI layer that ``comm_stats`` counts, so
``count_native`` adds each rewritten all-reduce's volume after every call of the body (they
run once per call: top-level equations). ``native_collectives(False)`` turns the rewrite
off (every collective a host step again), e.g. to watch each MPI call from Python.

>>> native_collectives()
True
"""
from __future__ import annotations

import ctypes

import numpy as np

from jaxpr_ir import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray, Var
from ..distributed import count_collective, traffic
from .base import Primitive

__all__ = ["mpi_allreduce_p", "native_body", "count_native", "native_collectives", "stats"]

_KINDS = {"psum": "sum", "pmax": "max", "pmin": "min"}
_DTYPES = {np.dtype(d) for d in ("float64", "float32", "int64", "int32")}
_state = {"on": True, "registered": False}
_COMMS: dict = {}        # communicator handle -> the mpi4py communicator (for the impl)
stats = {"bodies rewritten": 0, "all-reduces rewritten": 0}   # by native_body, this process


def native_collectives(on: bool | None = None) -> bool:
    """Whether shard_map bodies call MPI_Allreduce natively; ``on`` sets it. Returns the
    setting before the call.

    >>> before = native_collectives(False); native_collectives(before)
    False
    """
    before = _state["on"]
    if on is not None:
        _state["on"] = bool(on)
    return before


def _mpi_dtype(MPI, dtype):
    return {"float64": MPI.DOUBLE, "float32": MPI.FLOAT, "int64": MPI.INT64_T,
            "int32": MPI.INT32_T}[np.dtype(dtype).name]


def _allreduce_impl(x, handles, *, kind):
    from mpi4py import MPI    # lazily: only a multi-process run has these equations
    comm = _COMMS[int(handles[0])]
    x = np.asarray(x, order="C")
    out = np.empty_like(x)
    comm.Allreduce(x, out, op={"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}[kind])
    return out


def _allreduce_aval(x, handles, *, kind):
    return ShapedArray(x.shape, x.dtype)


def _allreduce_batch(args, dims, *, kind):
    """An all-reduce is elementwise across processes: a batched operand is reduced whole
    (the handles are never batched: they name one communicator)."""
    (x, h), (dx, dh) = args, dims
    if dh is not None:
        raise NotImplementedError("mpi_allreduce: batched MPI handles")
    return mpi_allreduce_p.bind(x, h, kind=kind), dx


mpi_allreduce_p = Primitive("mpi_allreduce")
mpi_allreduce_p.not_differentiable = True     # made only in compiled bodies, after autodiff
mpi_allreduce_p.def_rules(abstract_eval=_allreduce_aval, impl=_allreduce_impl,
                          batch=_allreduce_batch)


def _handles(MPI, comm, dtype, kind):
    """The int64[3] of handles: each handle's bits (an int in MPICH, where mpi4py may give
    it as an unsigned number; a pointer in Open MPI) in an int64 (the code truncates it to
    the library's width)."""
    op = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}[kind]
    raw = [MPI._handleof(comm), MPI._handleof(_mpi_dtype(MPI, dtype)), MPI._handleof(op)]
    out = np.array([v & (2 ** 64 - 1) for v in raw], np.uint64).view(np.int64)
    _COMMS[int(out[0])] = comm
    return out


def _rewritable(eqn, mesh):
    """(kind, communicator) when ``eqn`` is an all-reduce this module can run natively."""
    kind = _KINDS.get(eqn.primitive.name)
    if kind is None or isinstance(eqn.inputs[0], Literal):
        return None
    a = eqn.inputs[0].aval
    names = eqn.params["axis_name"]
    names_t = names if isinstance(names, tuple) else (names,)
    if a.dtype not in _DTYPES or a.size >= 2 ** 31 or \
            any(n not in mesh.axis_names for n in names_t):
        return None
    comm = mesh.comm(names)
    return None if comm is None else (kind, comm)


def native_body(jaxpr: ClosedJaxpr, mesh):
    """(body, handle arrays, volumes) with the body's native-capable all-reduces rewritten
    (see the module doc): the body takes the handle arrays after its own inputs; volumes
    lists (kind, bytes per call) for ``count_native``. None when nothing is rewritten (or the
    rewrite is off, or the LLVM backend cannot call MPI).

    >>> from functrans.sharding import Mesh
    >>> native_body(ClosedJaxpr(Jaxpr([], [], [], []), []), Mesh((1,), ("i",))) is None
    True
    """
    if not _state["on"]:
        return None
    found = [(e, _rewritable(e, mesh)) for e in jaxpr.jaxpr.eqns]
    if not any(r for _, r in found) or not _register():
        return None
    from mpi4py import MPI    # lazily: a communicator of more than one process exists now
    eqns, extra, handles, volumes = [], [], [], []
    for e, r in found:
        if r is None:
            eqns.append(e)
            continue
        kind, comm = r
        h = Var(ShapedArray((3,), np.dtype("int64")))
        extra.append(h)
        handles.append(_handles(MPI, comm, e.inputs[0].aval.dtype, kind))
        eqns.append(Eqn(mpi_allreduce_p, [e.inputs[0], h], list(e.outvars), {"kind": kind}))
        a = e.inputs[0].aval
        volumes.append((e.primitive.name, traffic(e.primitive.name,
                                                  a.size * a.dtype.itemsize, comm.Get_size())))
    stats["bodies rewritten"] += 1
    stats["all-reduces rewritten"] += len(handles)
    j = jaxpr.jaxpr
    body = ClosedJaxpr(Jaxpr(j.constvars, list(j.invars) + extra, eqns, j.outvars),
                       jaxpr.consts)
    return body, handles, volumes


def count_native(volumes) -> None:
    """Count one call's native all-reduces in ``comm_stats`` (see ``native_body``).

    >>> count_native([])
    """
    for kind, vol in volumes:
        count_collective(kind, vol, vol)


# --------------------------------------------------------------------------- LLVM

def _mpi_library():
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if "/libmpi" in path and ".so" in path:
                return path
    return None


def _register() -> bool:
    """Give the LLVM backend the ``mpi_allreduce`` emitter and the MPI_Allreduce symbol
    (once); False when the MPI library cannot be found in this process."""
    if _state["registered"]:
        return True
    from mpi4py import MPI    # lazily: only a multi-process run gets here
    path = _mpi_library()
    if path is None:
        return False
    import llvmlite.binding as llvm
    # the backend is loaded when a body is compiled for it, not when functrans is imported
    from backends.llvm.llvm_mpi import register_allreduce
    lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    llvm.add_symbol("ft_mpi_allreduce", ctypes.cast(lib.MPI_Allreduce, ctypes.c_void_p).value)
    register_allreduce("mpi_allreduce", "ft_mpi_allreduce",
                       [8 * MPI._sizeof(k) for k in (MPI.Comm, MPI.Datatype, MPI.Op)])
    _state["registered"] = True
    return True
