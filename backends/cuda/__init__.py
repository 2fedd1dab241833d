"""The CUDA backend: fused Numba-CUDA kernels generated as Python source.

``compile(closed_jaxpr)`` type-checks the jaxpr, plans fused groups with the shared
planner (``backends.fusion``, with ``ops.classify``), turns each group into kernels
(``kernels``: grid-stride loops, int64 indices, shared-memory tree reductions), lowers
other equations to their own kernels (``equations`` / ``equation_kernels``: tiled GEMM,
gather/scatter, pad, concatenate, dynamic slices, cumulative scans, argmax, threefry)
or to host-driven control flow around device sub-programs (``control``: cond, while,
scan), and returns an ``Executable``. Arguments are copied to the device once
(``DeviceArray`` arguments not at all); results are ``DeviceArray``\\ s that stay on
the device (``np.asarray`` copies back). Equations without a kernel run on the host
through their numpy ``impl``; ``cost_analysis()["host primitives"]`` names them.

Without a GPU, set ``NUMBA_ENABLE_CUDASIM=1`` before Python starts: the same kernels
then run on Numba's CUDA simulator (slowly; for tests on small shapes).

Needs the ``cuda`` extra (``numba-cuda[cu13]``): importing this package without it
raises ImportError, so ``backends.available()`` leaves "cuda" out.
"""
from __future__ import annotations

import importlib.util

if importlib.util.find_spec("numba_cuda") is None:   # numba's own bundled numba.cuda is
    raise ImportError("the CUDA backend needs numba-cuda: pip install 'functrans[cuda]'")

from jaxpr_ir import check  # noqa: E402
from jaxpr_ir.cost import plan_cost  # noqa: E402
from . import ops  # noqa: E402
from .program import Program, planned  # noqa: E402
from .runtime import DeviceArray, check_available, config, ptx as to_ptx, to_device  # noqa: E402

__all__ = ["compile", "Executable", "DeviceArray", "device_put"]


class Executable:
    """A compiled jaxpr: ``run(*flat_args) -> list of DeviceArray``, plus introspection."""

    def __init__(self, closed, plan, program):
        self.jaxpr, self.plan, self._program = closed, plan, program

    def __call__(self, *args):
        return self._program(*args)

    @property
    def kernels(self):
        """The KernelSource of every kernel launched, in order."""
        return list(self._program.sources)

    def as_text(self, ptx=None) -> str:
        """Each kernel's Python/Numba source and, where the CUDA compiler libraries are
        installed (not on the simulator), its PTX for sm_90. Host steps are listed."""
        want_ptx = (not config().sim) if ptx is None else ptx
        parts = []
        seen = set()
        for src in self._program.sources:
            if src.name in seen:
                continue
            seen.add(src.name)
            parts.append(f"# ---- kernel {src.name}{src.argtypes}\n{src.source}")
            if want_ptx:
                try:
                    parts.append(f"// ---- PTX of {src.name} (sm_90)\n{to_ptx(src)}")
                except Exception as e:   # no NVVM wheels: say so instead of failing
                    parts.append(f"// PTX unavailable: {type(e).__name__}: {e}")
        for name in self._program.host_prims:
            parts.append(f"# ---- host step: {name} (numpy impl, copies device<->host)\n")
        for name in self._program.control:
            parts.append(f"# ---- control flow: {name} (driven from the host around the "
                         "kernels of its sub-jaxprs; one scalar copied back per decision)\n")
        if not parts:
            parts.append("# no kernels: the jaxpr only moves its inputs\n")
        if not want_ptx and config().sim:
            parts.append("# PTX: not shown on the CUDA simulator (NUMBA_ENABLE_CUDASIM=1)\n")
        return "\n".join(parts)

    def cost_analysis(self) -> dict:
        """Kernels (each launch site once, sub-jaxprs of control flow included), flops,
        transcendentals and bytes of the plan's top-level steps (the one cost model,
        ``jaxpr_ir.cost.plan_cost``), and every primitive still run on the host (in
        sub-jaxprs too) under "host primitives"."""
        p = self._program
        return {**plan_cost(self.plan), "kernels": p.launches, "host steps": len(p.host_prims),
                "host primitives": sorted(set(p.host_prims)),
                "control flow": sorted(set(p.control))}


def compile(closed):
    """Compile a ClosedJaxpr for the GPU (or the simulator); see the module docstring."""
    check_available()
    check(closed)
    closed, plan = planned(closed)
    return Executable(closed, plan, Program(closed, plan))


def device_put(x):
    """Copy a host array to the device (a DeviceArray is returned unchanged)."""
    import numpy as np
    if getattr(x, "__device_array__", False):
        return x
    check_available()
    a = np.asarray(x)
    if a.dtype == object or a.dtype.kind not in "biufc":
        raise TypeError(f"device_put: cannot put a {type(x).__name__} of dtype {a.dtype} on "
                        "the device")
    return DeviceArray(to_device(a), a.shape, a.dtype)
