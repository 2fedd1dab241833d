"""The CPU backend: fused native code through llvmlite.

``compile(closed_jaxpr)`` type-checks the jaxpr, plans fused kernels
(``backends.fusion``), emits LLVM IR for them (``codegen``), optimises and JITs the
module (``engine``, through ``cache``), and returns a callable running the plan
(``runtime``): native kernels, with equations the code generator does not handle yet
run through their numpy implementation between them.

>>> from jaxpr_ir import ClosedJaxpr, Jaxpr, Var, ShapedArray
>>> a = Var(ShapedArray((), "float64"))
>>> [float(v) for v in compile(ClosedJaxpr(Jaxpr([], [a], [], [a])))(2.0)]
[2.0]
"""
from __future__ import annotations

from jaxpr_ir import check
from .. import fusion
from . import cache, codegen, engine
from .runtime import Program

__all__ = ["compile", "Executable"]


class Executable:
    """A compiled jaxpr: ``run(*flat_args) -> list of numpy arrays``, plus introspection."""

    def __init__(self, closed, plan, ir_text, opt_text, program):
        self.jaxpr = closed
        self.plan = plan
        self._ir, self._opt = ir_text, opt_text
        self._program = program
        self.__call__ = program.__call__

    def __call__(self, *args):
        return self._program(*args)

    def as_text(self) -> str:
        """The module's LLVM IR before and after optimisation."""
        if not self._ir:
            return "; no native kernels: every equation runs on the host\n"
        if self._opt is None:   # loaded from the disk cache: optimise again to show it
            mod = engine.parse_and_verify(self._ir)
            self._opt = str(engine.optimize(mod))
        return ("; ---- LLVM IR before optimisation\n" + self._ir +
                "\n; ---- LLVM IR after optimisation (O3, vectorised)\n" + self._opt)

    def cost_analysis(self) -> dict:
        """flops (one per output element of each equation), bytes moved, kernel counts."""
        flops = nbytes = 0
        native = host = 0
        for s in self.plan.steps:
            eqns = s.eqns if isinstance(s, fusion.Kernel) else [s.eqn]
            flops += sum(v.aval.size for e in eqns for v in e.outvars)
            if isinstance(s, fusion.Kernel):
                native += 1
                vs = list(s.inputs) + list(s.outputs)
            else:
                host += 1
                vs = [x for x in s.eqn.inputs if hasattr(x, "aval")] + list(s.eqn.outvars)
            nbytes += sum(v.aval.size * v.aval.dtype.itemsize for v in vs)
        return {"flops": float(flops), "bytes accessed": float(nbytes),
                "kernels": native + host, "native kernels": native, "host steps": host}


def compile(closed):
    """Compile a ClosedJaxpr for this CPU; see the module docstring."""
    check(closed)
    plan = fusion.plan(closed.jaxpr, codegen.classify)
    kernels = [s for s in plan.steps if isinstance(s, fusion.Kernel)]
    ir_text, opt_text, fns = "", "", []
    if kernels:
        ir_text, infos = codegen.emit_module(kernels, plan.views)
        loaded, opt_text = cache.load(ir_text)
        fns = [(name, loaded.address(name), bufs) for name, bufs in infos]
        program = Program(closed, plan, fns)
        program.loaded = loaded     # keep the machine code alive with the program
    else:
        program = Program(closed, plan, fns)
    return Executable(closed, plan, ir_text, opt_text, program)
