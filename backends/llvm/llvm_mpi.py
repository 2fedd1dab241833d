"""A native emitter calling ``MPI_Allreduce``, registered by
``functrans.primitives.collectives_native`` when a shard_map body first needs it (the
backend never imports MPI itself).

``register_allreduce(prim, symbol, handle_bits)`` makes equations of primitive ``prim``
(operands: the array, then an int64[3] of communicator, datatype and op handles) native:
the emitted code makes the operand contiguous if it is a strided view (else reads it in
place), loads the three handles (truncated to the MPI library's handle widths,
``handle_bits``) and calls ``symbol`` (the library's MPI_Allreduce, registered with
``llvm.add_symbol``) with the element count into the output buffer (a result of
``STAGE_BYTES`` or more is received into the workspace and copied out: one copy).

>>> from backends.llvm.equations import NATIVE
>>> "mpi_allreduce" in NATIVE or not NATIVE.get("mpi_allreduce")
True
"""
from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from jaxpr_ir import ShapedArray
from ..fusion import contiguous_strides
from .equations import native
from .lltypes import I32, I64
from .values import PTR, Val

# results of at least this many bytes are received into the workspace (pooled, so the same
# warm addresses every call) and copied out: MPICH's large-message path is much slower
# into memory it has not seen (measured, 8 MiB over 2 processes: ~24 ms into a fresh numpy
# array, ~15 ms into a reused one, plus ~1 ms for the copy)
STAGE_BYTES = 1 << 16

__all__ = ["register_allreduce"]


def register_allreduce(prim: str, symbol: str, handle_bits) -> None:
    """Register the emitter of ``prim`` (see the module doc).

    >>> callable(register_allreduce)
    True
    """
    comm_t, dtype_t, op_t = (ir.IntType(b) for b in handle_bits)

    def supports(eqn, planner):
        x = eqn.inputs[0].aval
        return x.size < 2 ** 31 and eqn.inputs[1].aval.shape == (3,)

    @native(prim, supports)
    def emit(lw, fn, eqn, ins, outs):
        x, h = ins
        n = int(np.prod(x.shape, dtype=np.int64))
        if n == 0:
            return
        callee = lw.module.globals.get(symbol)
        if callee is None:
            callee = ir.Function(lw.module, ir.FunctionType(
                I32, [PTR, PTR, I32, dtype_t, op_t, comm_t]), symbol)
        ref, temp = lw.materialize(fn, x)
        hv, htemp = lw.materialize(fn, h)
        hp = fn.ptr(hv)
        comm, dtype, op = (fn.b.trunc(lw.load(fn, hp, np.int64, ir.Constant(I64, k)), t)
                           if t.width < 64 else lw.load(fn, hp, np.int64, ir.Constant(I64, k))
                           for k, t in enumerate((comm_t, dtype_t, op_t)))
        out_aval = eqn.outvars[0].aval
        staged = None
        if n * out_aval.dtype.itemsize >= STAGE_BYTES:
            staged, owned = lw.new_buffer(fn, ShapedArray(out_aval.shape, out_aval.dtype), False)
        fn.b.call(callee, [fn.ptr(ref), fn.ptr(staged if staged is not None else outs[0]),
                           ir.Constant(I32, n), dtype, op, comm])
        if staged is not None:
            lw.copy(fn, Val(out_aval.dtype, out_aval.shape, ref=staged,
                            strides=contiguous_strides(out_aval.shape)), fn.ptr(outs[0]))
            if owned:
                lw.release(staged)
        for t in (temp, htemp):
            if t is not None:
                lw.release(t)
