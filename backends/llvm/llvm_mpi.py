"""Native emitters calling the MPI library's collectives, registered by
``functrans.primitives.collectives_native`` when a shard_map body first needs them (the
backend never imports MPI itself).

``register_collectives(handle_bits)`` makes three primitives native (symbols registered
with ``llvm.add_symbol`` under the names of ``SYMBOLS``; ``handle_bits``: the MPI library's
widths of a communicator, datatype and op handle):

- ``mpi_allreduce(x, handles)`` (int64[3]: communicator, datatype, op): ``MPI_Allreduce``
  of the element count straight into the output buffer (no copy: a multi-process
  ``initialize()`` keeps freed blocks in the heap, so outputs land on warm pages);
- ``mpi_collective(x, handles, kind=..., axis=...)`` (int64[4]: communicator, datatype,
  then per kind): ``reduce_scatter`` (``MPI_Reduce_scatter_block``, handle 2 the op; the
  operand packed member-major along ``axis`` first, one copy, unless only unit axes
  precede it) and ``sendrecv`` (``MPI_Sendrecv`` of bytes with handles 2 and 3 the
  destination and source rank, ``MPI_PROC_NULL`` for none; an output that receives
  nothing is zeros);
- ``mpi_allgather(x, handles, counts=(send, receive))`` (int64[4]: communicator, send
  datatype, receive datatype, then the counter): one ``MPI_Allgather`` of the operand's
  buffer into the output buffer when the member axis leads (no copy); else a dense
  operand is gathered member-major into a workspace buffer and copied into place once
  (measured faster than MPICH's allgather with the derived receive type), a strided one
  made contiguous once and placed by the derived receive type (built by functrans);
- ``mpi_alltoall(x, handles, counts=(send, receive), pack_axis=...)`` (int64[4]:
  communicator, send datatype, receive datatype, then the counter): one ``MPI_Alltoall``
  of the operand's buffer (or of the operand packed member-major along ``pack_axis`` into
  a workspace buffer, one copy) into the output buffer with those counts and datatypes (a
  derived receive type, built by functrans, places the chunks: no copy after the call).

Complex operands too: the sums (``mpi_allreduce``, ``reduce_scatter``) with the datatype
functrans passes, the host step's own (MPI's C complex types: the same call, the same
bits; functrans keeps ``pmax``/``pmin`` of complex a host step, a TypeError as there), the
moves as bytes.

``stats`` counts, as code is emitted, each kind's calls and the copies they make (at most
one each: the operand packed member-major when the layout needs it, else made contiguous
when it is a strided view): ``"<kind> calls"`` and ``"<kind> copies"`` for ``allreduce``,
``allgather``, ``reduce_scatter``, ``sendrecv`` and ``alltoall``; a test reads it to prove
the count.

Each operand is read in place when it lies row-major in its buffer from some offset on (a
static block cut by an inlined shard_map, say), else made contiguous first; the handles
are loaded at run time (truncated to the library's widths), and the call writes straight
into the output buffer. The last handle is the address of a float64[3] counter (calls,
bytes sent, bytes received) to which the code adds the equation's ``count`` param after
the call (none when ``count`` is empty): the accounting needs no Python.

>>> from backends.llvm.equations import NATIVE
>>> "mpi_allreduce" in NATIVE or not NATIVE.get("mpi_allreduce")
True
"""
from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from jaxpr_ir import ShapedArray
from ..fusion import View, contiguous_strides
from .equations import native
from .lltypes import I8, I32, I64
from .values import PTR, Val

SYMBOLS = {"allreduce": "ft_mpi_allreduce", "allgather": "ft_mpi_allgather",
           "alltoall": "ft_mpi_alltoall", "reduce_scatter": "ft_mpi_reduce_scatter_block",
           "sendrecv": "ft_mpi_sendrecv"}
_TAG = 7                 # ppermute's tag, as its host step sends
_STATUS_BYTES = 256      # room for an MPI_Status of any MPI library
_F64 = ir.DoubleType()

__all__ = ["register_collectives", "SYMBOLS", "stats"]
stats = {f"{k} {what}": 0 for k in ("allreduce", "allgather", "reduce_scatter", "sendrecv",
                                    "alltoall") for what in ("calls", "copies")}


def _note(kind, copies) -> None:
    stats[f"{kind} calls"] += 1
    stats[f"{kind} copies"] += int(copies)


def _send(lw, fn, x, kind):
    """``_operand``, noted in ``stats`` as one ``kind`` call (a copy if x is strided)."""
    _note(kind, not _dense(x))
    return _operand(lw, fn, x)


def _nbytes(aval) -> int:
    return int(np.prod(aval.shape, dtype=np.int64)) * np.dtype(aval.dtype).itemsize


def _handles(lw, fn, h, types):
    """The handles of the int64 array ``h`` as register values of ``types`` (truncated)."""
    hv, htemp = lw.materialize(fn, h)
    hp = fn.ptr(hv)
    out = []
    for k, t in enumerate(types):
        v = lw.load(fn, hp, np.int64, ir.Constant(I64, k))
        out.append(fn.b.trunc(v, t) if t.width < 64 else v)
    if htemp is not None:
        lw.release(htemp)
    return out


def _count(lw, fn, h, eqn):
    """Add the equation's ``count`` (kind, bytes sent, bytes received) to the float64[3]
    counter whose address is the last handle: calls + 1, sent, received."""
    count = eqn.params["count"]
    if not count:
        return
    b = fn.b
    hv, htemp = lw.materialize(fn, h)
    last = ir.Constant(I64, eqn.inputs[1].aval.shape[0] - 1)
    ptr = b.inttoptr(lw.load(fn, fn.ptr(hv), np.int64, last), PTR)
    for k, add in enumerate((1.0, count[1], count[2])):
        if add or k == 0:
            p = b.gep(ptr, [ir.Constant(I64, k)], source_etype=_F64)
            b.store(b.fadd(b.load(p, typ=_F64), ir.Constant(_F64, float(add))), p)
    if htemp is not None:
        lw.release(htemp)


def _dense(x) -> bool:
    """Whether Val ``x`` lies row-major in its buffer from some offset on (a buffer, or a
    static block or slice of one)."""
    return x.ref is not None and View(None, x.shape, x.strides, x.offset).dense


def _operand(lw, fn, x):
    """(pointer to x's first element, temp to release): x's own buffer when ``_dense``
    (read in place), else a contiguous copy."""
    if _dense(x):
        ptr = fn.ptr(x.ref)
        if x.offset:
            at = ir.Constant(I64, x.offset * np.dtype(x.dtype).itemsize)
            ptr = fn.b.gep(ptr, [at], source_etype=I8)
        return ptr, None
    ref, temp = lw.materialize(fn, x)
    return fn.ptr(ref), temp


def _pack(lw, fn, x, axis, n):
    """(pointer, temp to release): x member-major in a fresh buffer, one copy: a dense x as
    outer x n runs of one chunk's share, each one ``llvm.memcpy`` of a length known here;
    a strided x through its member-major view (``_packed``)."""
    if not _dense(x):
        ref, temp = lw.materialize(fn, _packed(x, axis, n))
        return fn.ptr(ref), temp
    ref, owned = lw.new_buffer(fn, ShapedArray(tuple(x.shape), x.dtype), True)
    dst = fn.ptr(ref)
    _runs(lw, fn, _operand(lw, fn, x)[0], dst, x, axis, n, True)
    return dst, (ref if owned else None)


def _runs(lw, fn, src, dst, x, axis, n, pack):
    """Copy ``outer x n`` runs (one chunk of ``axis`` of ``x``'s shape, ``outer`` the
    product of the sizes before it), each one ``llvm.memcpy`` of a length known here:
    ``pack``: row-major ``src`` to member-major ``dst``; else member-major ``src`` (an
    all-gather's buffer, the chunk the whole axis) to row-major ``dst`` (its result)."""
    shape, b = tuple(x.shape), fn.b
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    run = int(np.prod(shape[axis:], dtype=np.int64)) * x.dtype.itemsize // (n if pack else 1)
    memcpy = lw.module.declare_intrinsic("llvm.memcpy", [PTR, PTR, I64])

    def at(ptr, block):
        return b.gep(ptr, [b.mul(block, ir.Constant(I64, run))], source_etype=I8)

    def body(idx):
        o, j = idx
        row = b.add(b.mul(o, ir.Constant(I64, n)), j)
        member = b.add(b.mul(j, ir.Constant(I64, outer)), o)
        to, frm = (member, row) if pack else (row, member)
        b.call(memcpy, [at(dst, to), at(src, frm), ir.Constant(I64, run),
                        ir.Constant(ir.IntType(1), 0)])
    fn.nest([outer, n], body)


def _packed(x, axis, n):
    """Val ``x`` read member-major: its ``axis`` split into (n, chunk), n moved first (a
    strided view of the same buffer; a literal stays a literal)."""
    shape = tuple(x.shape)
    k = shape[axis] // n
    new = (n,) + shape[:axis] + (k,) + shape[axis + 1:]
    if x.ref is None:
        return Val(x.dtype, new, lit=x.lit)
    st = tuple(contiguous_strides(shape) if x.strides is None else x.strides)
    return x.reshaped(new, (k * st[axis],) + st[:axis] + (st[axis],) + st[axis + 1:])


def _callee(lw, symbol, args):
    f = lw.module.globals.get(symbol)
    if f is None:
        f = ir.Function(lw.module, ir.FunctionType(I32, args), symbol)
    return f


def register_collectives(handle_bits) -> None:
    """Register the emitters of ``mpi_allreduce``, ``mpi_collective``, ``mpi_alltoall`` and
    ``mpi_allgather`` (see the module doc).

    >>> callable(register_collectives)
    True
    """
    comm_t, dtype_t, op_t = (ir.IntType(b) for b in handle_bits)

    def fits(eqn, planner):
        return _nbytes(eqn.inputs[0].aval) < 2 ** 31 and eqn.inputs[1].aval.ndim == 1

    @native("mpi_allreduce", fits, complex=True)     # complex: sum only (functrans asks)
    def emit_allreduce(lw, fn, eqn, ins, outs):
        x, h = ins
        n = int(np.prod(x.shape, dtype=np.int64))
        if n == 0:
            _count(lw, fn, h, eqn)
            return
        callee = _callee(lw, SYMBOLS["allreduce"], [PTR, PTR, I32, dtype_t, op_t, comm_t])
        send, temp = _send(lw, fn, x, "allreduce")
        comm, dtype, op = _handles(lw, fn, h, (comm_t, dtype_t, op_t))
        # received straight into the output: staging it in the pooled workspace and
        # copying out measured 1.30-1.65x mpi4py's Allreduce at 8 MiB, direct 0.71-1.02x
        # (2 processes, quiet machine, since initialize() keeps freed blocks warm)
        fn.b.call(callee, [send, fn.ptr(outs[0]), ir.Constant(I32, n), dtype, op, comm])
        if temp is not None:
            lw.release(temp)
        _count(lw, fn, h, eqn)

    @native("mpi_collective", fits, complex=True)    # complex: sum, or bytes moved
    def emit_collective(lw, fn, eqn, ins, outs):
        x, h = ins
        kind, out_aval = eqn.params["kind"], eqn.outvars[0].aval
        size = _nbytes(eqn.inputs[0].aval)
        if kind == "sendrecv" and not eqn.params["receives"] and out_aval.size:
            lw.copy(fn, Val(out_aval.dtype, out_aval.shape, lit=0), fn.ptr(outs[0]))
        if size == 0 or (kind == "sendrecv" and not (eqn.params["sends"] or
                                                     eqn.params["receives"])):
            _count(lw, fn, h, eqn)
            return
        axis, shape = eqn.params["axis"], eqn.inputs[0].aval.shape
        if kind == "reduce_scatter" and int(np.prod(shape[:axis], dtype=np.int64)) > 1:
            _note(kind, True)          # one copy: the blocks, member-major, into a buffer
            send, temp = _pack(lw, fn, x, axis, eqn.params["n"])
        else:
            send, temp = _send(lw, fn, x, kind)
        recv = fn.ptr(outs[0])
        b = fn.b
        if kind == "reduce_scatter":
            comm, dtype, op = _handles(lw, fn, h, (comm_t, dtype_t, op_t))
            b.call(_callee(lw, SYMBOLS[kind], [PTR, PTR, I32, dtype_t, op_t, comm_t]),
                   [send, recv, ir.Constant(I32, out_aval.size), dtype, op, comm])
        elif kind == "sendrecv":
            comm, dtype, dest, source = _handles(lw, fn, h, (comm_t, dtype_t, I32, I32))
            status = fn.alloca(_STATUS_BYTES)
            count = ir.Constant(I32, size)
            tag = ir.Constant(I32, _TAG)
            b.call(_callee(lw, SYMBOLS[kind], [PTR, I32, dtype_t, I32, I32, PTR, I32, dtype_t,
                                               I32, I32, comm_t, PTR]),
                   [send, count, dtype, dest, tag, recv, count, dtype, source, tag, comm,
                    status])
        else:
            raise NotImplementedError(f"mpi_collective: no native code for kind {kind!r}")
        if temp is not None:
            lw.release(temp)
        _count(lw, fn, h, eqn)

    _register_alltoall(comm_t, dtype_t, fits)


def _register_alltoall(comm_t, dtype_t, fits) -> None:
    """Register the emitters of ``mpi_alltoall`` and ``mpi_allgather`` (see the module
    doc)."""
    signature = [PTR, I32, dtype_t, PTR, I32, dtype_t, comm_t]

    @native("mpi_allgather", fits, complex=True)     # bytes: any dtype the backend holds
    def emit_allgather(lw, fn, eqn, ins, outs):
        x, h = ins
        if _nbytes(eqn.inputs[0].aval) == 0:
            _count(lw, fn, h, eqn)
            return
        comm, send_t, recv_t = _handles(lw, fn, h, (comm_t, dtype_t, dtype_t))
        sc, rc = (ir.Constant(I32, c) for c in eqn.params["counts"])
        call = _callee(lw, SYMBOLS["allgather"], signature)
        axis = eqn.params["axis"]
        if int(np.prod(x.shape[:axis], dtype=np.int64)) > 1 and _dense(x):
            # receive member-major, then one copy into place: MPICH's allgather with the
            # derived receive type measured ~1.5x slower (its ring forwards each block
            # from the strided receive buffer: a pack on top of the unpack)
            _note("allgather", True)
            ws, owned = lw.new_buffer(fn, ShapedArray((eqn.params["n"],) + tuple(x.shape),
                                                      x.dtype), True)
            fn.b.call(call, [_operand(lw, fn, x)[0], sc, send_t, fn.ptr(ws), sc, send_t, comm])
            _runs(lw, fn, fn.ptr(ws), fn.ptr(outs[0]), x, axis, eqn.params["n"], False)
            if owned:
                lw.release(ws)
        else:        # strided: made contiguous once, placed by the derived receive type
            send, temp = _send(lw, fn, x, "allgather")
            fn.b.call(call, [send, sc, send_t, fn.ptr(outs[0]), rc, recv_t, comm])
            if temp is not None:
                lw.release(temp)
        _count(lw, fn, h, eqn)

    @native("mpi_alltoall", fits, complex=True)      # bytes: any dtype the backend holds
    def emit_alltoall(lw, fn, eqn, ins, outs):
        x, h = ins
        if _nbytes(eqn.inputs[0].aval) == 0:
            _count(lw, fn, h, eqn)
            return
        pack = eqn.params["pack_axis"]
        if pack is None:
            send, temp = _send(lw, fn, x, "alltoall")
        else:     # one copy: the chunks, member-major, into a buffer
            _note("alltoall", True)
            send, temp = _pack(lw, fn, x, pack, eqn.params["n"])
        comm, send_t, recv_t = _handles(lw, fn, h, (comm_t, dtype_t, dtype_t))
        sc, rc = (ir.Constant(I32, c) for c in eqn.params["counts"])
        fn.b.call(_callee(lw, SYMBOLS["alltoall"], signature),
                  [send, sc, send_t, fn.ptr(outs[0]), rc, recv_t, comm])
        if temp is not None:
            lw.release(temp)
        _count(lw, fn, h, eqn)
