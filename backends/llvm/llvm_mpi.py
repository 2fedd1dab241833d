"""A native emitter calling ``MPI_Allreduce``, registered by
``functrans.primitives.collectives_native`` when a shard_map body first needs it (the
backend never imports MPI itself).

``register_allreduce(prim, symbol, handle_bits)`` makes equations of primitive ``prim``
(operands: the array, then an int64[3] of communicator, datatype and op handles) native:
the emitted code makes the operand contiguous if it is a strided view (else reads it in
place), loads the three handles (truncated to the MPI library's handle widths,
``handle_bits``) and calls ``symbol`` (the library's MPI_Allreduce, registered with
``llvm.add_symbol``) with the element count into the output buffer.

>>> from backends.llvm.equations import NATIVE
>>> "mpi_allreduce" in NATIVE or not NATIVE.get("mpi_allreduce")
True
"""
from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from .equations import native
from .lltypes import I32, I64
from .values import PTR

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
        fn.b.call(callee, [fn.ptr(ref), fn.ptr(outs[0]), ir.Constant(I32, n), dtype, op,
                           comm])
        for t in (temp, htemp):
            if t is not None:
                lw.release(t)
