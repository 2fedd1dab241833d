"""Multi-threading of large kernels: a persistent pool of native threads (numba's
``workqueue`` threading layer, loaded directly so it does not depend on which layer
numba itself picks) and the symbols generated code calls.

A parallel kernel is a body ``void body(char **args, i64 *dims, i64 *steps, i8 *data)``
running outer-loop iterations ``[ptrtoint(args[0]), + dims[0])`` with its buffers in
``data``; ``ft_parallel_for`` (the pool's ``parallel_for``) splits ``dims[0]`` across
``ft_num_threads`` threads. The generated wrapper runs the body itself, serially, when
threading is off or the process is a fork of the one that started the pool (its
threads do not exist there). ``FUNCTRANS_NUM_THREADS`` sets the thread count
(default: the CPU count; 1 turns threading off).

>>> isinstance(num_threads(), int)
True
"""
from __future__ import annotations

import ctypes
import functools
import os

import llvmlite.binding as llvm

MIN_ELEMENTS = 1 << 18     # below this, waking the threads costs more than it saves

_NTHREADS = ctypes.c_int(1)
_PID = ctypes.c_int(-1)


@functools.lru_cache(maxsize=None)
def _start() -> int:
    try:
        n = int(os.environ.get("FUNCTRANS_NUM_THREADS", "") or (os.cpu_count() or 1))
    except ValueError:
        n = 1
    if n > 1:
        try:
            from numba.np.ufunc import workqueue as wq
            ctypes.CFUNCTYPE(None, ctypes.c_int)(wq.launch_threads)(n)
            llvm.add_symbol("ft_parallel_for", wq.parallel_for)
        except Exception:        # no numba, or its layer unusable: stay serial
            n = 1
    if n <= 1:
        llvm.add_symbol("ft_parallel_for", 0)
    _NTHREADS.value = n
    _PID.value = os.getpid()
    llvm.add_symbol("ft_num_threads", ctypes.addressof(_NTHREADS))
    llvm.add_symbol("ft_pool_pid", ctypes.addressof(_PID))
    return n


def num_threads() -> int:
    """Threads large kernels are split over (1: threading off)."""
    return _start()
