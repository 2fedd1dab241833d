"""What every generated CUDA kernel shares: ``KernelSource`` (one kernel's Python text
and signature), ``finish`` (names a kernel by the hash of its text), the grid-stride
``PROLOGUE``, and index arithmetic (``unravel`` a flat index, ``index`` into a view).

A leaf of the CUDA backend: the fused kernels (``kernels``) and the per-equation
kernels (``equation_kernels``) both build on it.

>>> k = finish("demo", ["x"], ["    pass"], ["float64[::1]"])
>>> k.name.startswith("demo_"), k.argtypes
(True, ('float64[::1]',))
"""
from __future__ import annotations

import dataclasses
import hashlib

import numpy as np

__all__ = ["KernelSource", "finish", "arr", "unravel", "index", "PROLOGUE"]


@dataclasses.dataclass(frozen=True)
class KernelSource:
    """One kernel: ``source`` defines ``name``; ``argtypes`` are ``'i64'`` or
    ``'<dtype>[::1]'`` (a flat C-contiguous array), the signature it is compiled for."""
    name: str
    source: str
    argtypes: tuple


def finish(kind, params, body, argtypes) -> KernelSource:
    """The kernel ``kind_<hash>`` with ``params`` and the ``body`` lines."""
    text = f"def KNAME({', '.join(params)}):\n" + "\n".join(body) + "\n"
    h = hashlib.sha1((text + repr(argtypes)).encode()).hexdigest()[:10]
    name = f"{kind}_{h}"
    return KernelSource(name, text.replace("KNAME", name, 1), tuple(argtypes))


def arr(dtype) -> str:
    """The Numba type of a flat C-contiguous array of ``dtype``."""
    return f"{np.dtype(dtype).name}[::1]"


def unravel(lines, ind, flat, dims, names):
    """Lines setting ``names[k]`` (index of loop dim k) from the flat index ``flat``."""
    live = [k for k in range(len(dims)) if dims[k] != 1]
    for k in range(len(dims)):
        if dims[k] == 1:
            lines.append(f"{ind}{names[k]} = i64(0)")
    if not live:
        return
    lines.append(f"{ind}q_ = {flat}")
    for k in reversed(live[1:]):
        lines.append(f"{ind}{names[k]} = q_ % {dims[k]}")
        lines.append(f"{ind}q_ = q_ // {dims[k]}")
    lines.append(f"{ind}{names[live[0]]} = q_")


def index(view_strides, offset, dnames) -> str:
    """The flat element index of a view from the loop indices named ``dnames``."""
    terms = [f"{dn} * {s}" if s != 1 else dn for dn, s in zip(dnames, view_strides) if s != 0]
    if offset:
        terms.append(str(offset))
    return " + ".join(terms) or "0"


# a grid-stride loop's first index ``i`` and stride ``s_``
PROLOGUE = ["    i = i64(cuda.blockIdx.x) * i64(cuda.blockDim.x) + i64(cuda.threadIdx.x)",
        "    s_ = i64(cuda.gridDim.x) * i64(cuda.blockDim.x)"]
