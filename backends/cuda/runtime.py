"""Device memory, kernel compilation and launch for the CUDA backend.

``DeviceArray`` is a flat Numba device buffer with a shape: results stay on the device
and ``np.asarray(y)`` copies back. ``kernel(src)`` compiles a ``KernelSource`` once
(cached by source text; Numba then caches per argument types). ``alloc`` turns the
driver's out-of-memory error into a ``MemoryError`` naming the sizes.

>>> config().sim in (True, False)
True
"""
from __future__ import annotations

import dataclasses
import functools

import numpy as np

from . import sim_shared
from .devlib import namespace

__all__ = ["DeviceArray", "config", "kernel", "alloc", "to_device", "check_available",
           "GENERATED", "ptx"]

SIM_HINT = ("set the environment variable NUMBA_ENABLE_CUDASIM=1 before Python starts to run "
            "the CUDA backend on Numba's CUDA simulator (slow; meant for tests on small shapes)")


@dataclasses.dataclass(frozen=True)
class LaunchConfig:
    sim: bool
    ew_block: int      # threads per block, elementwise and copy kernels
    max_blocks: int    # grid cap for grid-stride kernels
    red_block: int     # threads per block of a reduction (a power of 2)
    gemm: tuple        # (tb, r, kt): tb x tb threads, r x r outputs each, kt deep K tiles
    sms: int


@functools.lru_cache(maxsize=None)
def config() -> LaunchConfig:
    """Launch parameters: tiny on the simulator (each simulated thread is a Python
    thread), sized from the device's multiprocessor count on a GPU."""
    from numba import config as nconfig
    if nconfig.ENABLE_CUDASIM:
        return LaunchConfig(True, 4, 2, 4, (2, 2, 4), 1)
    from numba import cuda
    sms = 80
    try:
        sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    except Exception:   # no device: the config is only used for PTX text then
        pass
    return LaunchConfig(False, 256, sms * 16, 256, (16, 4, 16), sms)


def check_available():
    """Raise a RuntimeError explaining how to run without a GPU when none is usable."""
    from numba import config as nconfig
    if nconfig.ENABLE_CUDASIM:
        return
    from numba import cuda
    if not cuda.is_available():
        raise RuntimeError("backend='cuda': no usable CUDA GPU (numba.cuda.is_available() is "
                           "False: no device or no driver). To run without a GPU, " + SIM_HINT)


class DeviceArray:
    """An array in GPU memory (a flat Numba device buffer plus a shape).

    ``np.asarray(a)`` copies it to the host; jitted CUDA functions take it without a
    copy and return new ones.
    """
    __device_array__ = True
    __array_priority__ = 100

    def __init__(self, buf, shape, dtype):
        self.buf, self.shape, self.dtype = buf, tuple(shape), np.dtype(dtype)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    device = "cuda"

    def __array__(self, dtype=None, copy=None):
        host = self.buf.copy_to_host().reshape(self.shape)
        return host if dtype is None else host.astype(dtype)

    def copy_to_host(self):
        return np.asarray(self)

    def block_until_ready(self):
        from numba import cuda
        cuda.synchronize()
        return self

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self.shape[0]

    def __repr__(self):
        return f"DeviceArray({np.asarray(self)!r}, device='cuda')"

    def tolist(self):
        return np.asarray(self).tolist()

    def __float__(self):
        return float(np.asarray(self))

    def __int__(self):
        return int(np.asarray(self))

    def __bool__(self):
        return bool(np.asarray(self))


def _host_op(name):
    def op(self, *others):
        others = [np.asarray(o) if isinstance(o, DeviceArray) else o for o in others]
        return getattr(np.asarray(self), name)(*others)
    op.__name__ = name
    return op


# arithmetic, comparison and indexing on a DeviceArray copy it to the host first (like
# numpy code reading it); jit the computation to keep it on the device
for _n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
           "xor"):
    setattr(DeviceArray, f"__{_n}__", _host_op(f"__{_n}__"))
    setattr(DeviceArray, f"__r{_n}__", _host_op(f"__r{_n}__"))
for _n in ("neg", "pos", "abs", "invert", "lt", "le", "gt", "ge", "eq", "ne", "getitem"):
    setattr(DeviceArray, f"__{_n}__", _host_op(f"__{_n}__"))
DeviceArray.__hash__ = None


def alloc(size, dtype, what="buffer"):
    """An uninitialised flat device buffer; out-of-memory says how much was asked."""
    from numba import cuda
    try:
        return cuda.device_array(int(size), dtype=np.dtype(dtype))
    except Exception as e:   # the driver's error type differs between Numba versions
        raise _oom(e, size, dtype, what) from e


def to_device(x, dtype=None):
    """A host value as a flat device buffer of ``dtype``."""
    from numba import cuda
    a = np.ascontiguousarray(np.asarray(x, dtype=dtype)).reshape(-1)
    try:
        return cuda.to_device(a)
    except Exception as e:
        raise _oom(e, a.size, a.dtype, "host-to-device copy") from e


def _oom(e, size, dtype, what):
    text = f"{type(e).__name__}: {e}"
    if "OUT_OF_MEMORY" in text.upper() or "out of memory" in text.lower():
        nbytes = int(size) * np.dtype(dtype).itemsize
        return MemoryError(f"CUDA device out of memory allocating {nbytes} bytes "
                           f"({int(size)} x {np.dtype(dtype).name}) for a {what}")
    return e


# every kernel built in this process: KernelSource -> None (an ordered set), so tests
# can compile each of them to PTX afterwards
GENERATED: dict = {}
_DISPATCHERS: dict = {}


def python_function(src, sim):
    """The plain Python function a KernelSource defines, in the kernel namespace."""
    ns = dict(namespace(sim))
    code = compile(src.source, f"<cuda kernel {src.name}>", "exec")
    exec(code, ns)
    return ns[src.name]


def kernel(src):
    """The ``numba.cuda.jit`` dispatcher of a KernelSource (compiled once per text)."""
    d = _DISPATCHERS.get(src.source)
    if d is None:
        from numba import cuda
        if config().sim:
            sim_shared.install()     # the simulator's shared arrays race without it
        d = _DISPATCHERS[src.source] = cuda.jit(python_function(src, config().sim))
    GENERATED.setdefault(src, None)
    return d


def numba_signature(argtypes):
    import numba
    out = []
    for a in argtypes:
        if a == "i64":
            out.append(numba.int64)
        else:
            out.append(numba.from_dtype(np.dtype(a[:-5]))[::1])
    return tuple(out)


def ptx(src, cc=(9, 0)):
    """PTX for ``src`` (needs the CUDA compiler wheels, not a GPU; not on the simulator)."""
    from numba import cuda
    fn = python_function(src, False)
    text, _ = cuda.compile_ptx(fn, numba_signature(src.argtypes), cc=cc)
    return text
