"""One array per block for ``cuda.shared.array`` on Numba's CUDA simulator.

The simulator runs a block's threads as Python threads. Its ``cuda.shared.array`` keeps
one array per calling line of the kernel in a dict of the launch, and fills that dict on
first use without a lock: it looks the line up, and when it finds nothing allocates and
stores. A thread switch between the look-up and the store (numba-cuda's
``FakeCUDAShared.array``) lets a second thread find nothing too and allocate its own
array, so the threads of that block write and read different "shared" arrays: a tree
reduction then folds uninitialised memory, a GEMM tile holds garbage, and the result is
a wrong number that depends on thread timing (two table cases failed that way at a
0.1 ms GIL switch interval). A real GPU has no such race; the kernels are not at fault.

``install()`` replaces that method with one that looks up and stores under a lock (and
finds the calling line from the caller's frame rather than a full traceback, which is
also faster). ``runtime.kernel`` calls it before it builds a kernel for the simulator.

>>> key = ("<cuda kernel red_0>", 2)
>>> arrays = {}
>>> _one_per_key(arrays, key, 4, np.float64) is _one_per_key(arrays, key, 4, np.float64)
True
"""
from __future__ import annotations

import sys
import threading

import numpy as np

__all__ = ["install"]

_LOCK = threading.Lock()
_NUMBA = {}     # what install() found: the original method, numba's type -> dtype


def _one_per_key(arrays, key, shape, dtype):
    """``arrays[key]``, made (uninitialised, like GPU shared memory) by the first caller."""
    with _LOCK:
        arr = arrays.get(key)
        if arr is None:
            arr = arrays[key] = np.empty(shape, dtype)
    return arr


def _shared_array(self, shape, dtype, alignment=None):
    """The block's array for the ``cuda.shared.array`` call on the caller's line."""
    if alignment is not None or shape == 0:
        # numba's own rules: alignment is refused; shape 0 is the dynamic shared buffer
        # (a view of one buffer made with the launch: nothing to race on)
        return _NUMBA["array"](self, shape, dtype, alignment)
    if isinstance(dtype, _NUMBA["Type"]):
        dtype = _NUMBA["as_dtype"](dtype)
    caller = sys._getframe(1)
    with _LOCK:
        arrays = self.__dict__.setdefault("_arrays_by_line", {})
    return _one_per_key(arrays, (caller.f_code.co_filename, caller.f_lineno), shape, dtype)


def install() -> bool:
    """Make the simulator's shared arrays thread-safe (once per process); True when the
    simulator is the active CUDA target, False (and nothing changed) otherwise.

    >>> import os
    >>> install() == (os.environ.get("NUMBA_ENABLE_CUDASIM") == "1")
    True
    """
    from numba import config as nconfig
    if not nconfig.ENABLE_CUDASIM:
        return False
    from numba.cuda import types
    from numba.cuda.np.numpy_support import as_dtype
    from numba.cuda.simulator.kernelapi import FakeCUDAShared
    with _LOCK:
        if FakeCUDAShared.array is not _shared_array:
            _NUMBA.update(array=FakeCUDAShared.array, Type=types.Type, as_dtype=as_dtype)
            FakeCUDAShared.array = _shared_array
    return True
