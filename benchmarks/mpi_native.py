"""Calling ``MPI_Allreduce`` from native code, for ``benchmarks.distributed``: the other
candidate for a collective inside a compiled program (issue 17 asks to measure it against
the host step).

``native_allreduce(comm, dtype, op)`` compiles, with llvmlite, a function

    void ft_bench_allreduce(void *send, void *recv, i64 count, i64 reps)

that calls the MPI library's own ``MPI_Allreduce`` symbol ``reps`` times with the
communicator, datatype and op handles of ``comm``, ``dtype`` and ``op`` (mpi4py's
``MPI._handleof``; their width, ``MPI._sizeof``, is the library's ABI: 4 bytes in MPICH, a
pointer in Open MPI). The library is the one mpi4py loaded (found in /proc/self/maps), so
the symbol is MPI's and not a copy. Returned as a ctypes function: one call from Python
measures a native call plus ctypes' entry cost; ``reps`` > 1 measures the native loop
alone (what a compiled program pays per collective, with no Python).
"""
from __future__ import annotations

import ctypes

import numpy as np


def _mpi_library() -> str:
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if "/libmpi" in path and ".so" in path:
                return path
    raise RuntimeError("no MPI library is loaded in this process (import mpi4py.MPI first)")


def native_allreduce(comm, dtype, op):
    """A ctypes function ``f(send_ptr, recv_ptr, count, reps)`` (see the module doc).

    >>> callable(native_allreduce) # needs an MPI library: run under mpiexec
    True
    """
    import llvmlite.binding as llvm
    import llvmlite.ir as ir
    from mpi4py import MPI
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    lib = ctypes.CDLL(_mpi_library(), mode=ctypes.RTLD_GLOBAL)
    llvm.add_symbol("ft_bench_mpi_allreduce",
                    ctypes.cast(lib.MPI_Allreduce, ctypes.c_void_p).value)
    i32, i64, ptr = ir.IntType(32), ir.IntType(64), ir.PointerType(ir.IntType(8))

    def handle(kind, value):
        t = ir.IntType(8 * MPI._sizeof(kind))
        return t, ir.Constant(t, MPI._handleof(value))

    tc, c = handle(MPI.Comm, comm)
    td, d = handle(MPI.Datatype, dtype)
    to, o = handle(MPI.Op, op)
    mod = ir.Module("ft_bench_mpi")
    callee = ir.Function(mod, ir.FunctionType(i32, [ptr, ptr, i32, td, to, tc]),
                         "ft_bench_mpi_allreduce")
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [ptr, ptr, i64, i64]),
                     "ft_bench_allreduce")
    send, recv, count, reps = fn.args
    entry, loop, done = (fn.append_basic_block(n) for n in ("entry", "loop", "done"))
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_signed(">", reps, ir.Constant(i64, 0)), loop, done)
    b.position_at_end(loop)
    k = b.phi(i64)
    k.add_incoming(ir.Constant(i64, 0), entry)
    b.call(callee, [send, recv, b.trunc(count, i32), d, o, c])
    k1 = b.add(k, ir.Constant(i64, 1))
    k.add_incoming(k1, loop)
    b.cbranch(b.icmp_signed("<", k1, reps), loop, done)
    b.position_at_end(done)
    b.ret_void()
    target = llvm.Target.from_default_triple().create_target_machine(opt=2)
    parsed = llvm.parse_assembly(str(mod))
    engine = llvm.create_mcjit_compiler(parsed, target)
    engine.finalize_object()
    f = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                         ctypes.c_int64)(engine.get_function_address("ft_bench_allreduce"))
    f.engine = engine            # keeps the machine code alive
    return f


def check_native(f, comm, n):
    """The native Allreduce sums like mpi4py's (a float64 vector of ``n``)."""
    x = np.arange(n, dtype=np.float64) + comm.Get_rank()
    out = np.empty_like(x)
    f(x.ctypes.data, out.ctypes.data, n, 1)
    want = comm.allreduce(x)
    assert np.array_equal(out, want), "native MPI_Allreduce disagrees with mpi4py"
