"""The functrans ``Primitive``: a jaxpr_ir primitive that functrans can apply (``bind``)
and that carries each transform's rule for it.

This is the lowest module of ``functrans.primitives``; it imports only ``tracing``.
Rule signatures (all rules of a primitive are attached right after it is defined, or
by the family module above it that has the operations the rule is written with):

- ``abstract_eval(*avals, **params) -> aval | [avals]`` raises TypeError/ValueError
  naming shapes and dtypes on bad input.
- ``impl(*arrays, **params) -> array | [arrays]`` the numpy semantics.
- ``jvp(primals, tangents, **params) -> (primal_out, tangent_out)``; tangents may be
  ``Zero``; with ``multiple_results`` both outputs are lists. Must be linear in tangents.
- ``transpose(ct, *invals, **params) -> [ct_in per input]`` for linear primitives;
  linear inputs arrive as ``UndefinedPrimal``; return ``None`` for non-linear inputs.
- ``batch(args, dims, **params) -> (out, out_dim)``; a dim is an int or ``None``
  (not batched); ``multiple_results`` gives lists.
- ``partial_eval``: an optional custom split into known and unknown parts.
- ``not_differentiable``: outputs carry no tangent (comparisons, iota).
- ``checkify(error, enabled, *args, **params) -> (error, out)``: applies the primitive and
  adds its runtime checks (``transforms.checkify``; attached by ``primitives.checks``).

>>> p = Primitive("primitive_doc_example")
>>> p.jvp is None and p.not_differentiable is False
True
>>> import jaxpr_ir; del jaxpr_ir.primitives["primitive_doc_example"]
"""
from __future__ import annotations

import jaxpr_ir
from ..tracing import bind


class Primitive(jaxpr_ir.Primitive):
    """A jaxpr_ir primitive that functrans can apply (``bind``), with the transforms'
    rules for it (see the module docstring)."""

    # ``prim.bind(*args, **params)`` is ``tracing.bind(prim, ...)`` itself (no extra frame:
    # eager calls are hot)
    bind = bind

    def __init__(self, name: str, multiple_results: bool = False):
        super().__init__(name, multiple_results)
        self.jvp = None
        self.transpose = None
        self.batch = None
        self.partial_eval = None
        self.not_differentiable = False   # e.g. comparisons: outputs carry no tangent
        self.checkify = None              # runtime checks under checkify (primitives.checks)

    def def_rules(self, *, abstract_eval=None, impl=None, jvp=None, transpose=None,
                  batch=None, partial_eval=None, not_differentiable=None) -> "Primitive":
        for name, f in (("abstract_eval", abstract_eval), ("impl", impl), ("jvp", jvp),
                        ("transpose", transpose), ("batch", batch),
                        ("partial_eval", partial_eval)):
            if f is not None:
                setattr(self, name, f)
        if not_differentiable is not None:
            self.not_differentiable = not_differentiable
        return self


class EffectPrimitive(Primitive):
    """A primitive with a side effect (debug printing, io callbacks): kept by DCE and
    CSE, and applied to no traced value (``debug.print("step")``, a no-argument
    ``io_callback``) it still belongs to the body being traced, not to tracing time:
    ``bind`` records it in the innermost recording trace (also when its arguments are
    closed-over values of an outer trace: it is not hoisted out of a loop body), so it
    runs each time that body runs (per scan step or loop iteration, in the branch
    taken, per jit call), as under JAX's omnistaging.
    linearize's traces record no primal computation (it runs one level down, eagerly or
    in an outer trace) and are passed over; with none left, it runs eagerly."""

    def __init__(self, name: str, multiple_results: bool = False):
        super().__init__(name, multiple_results)
        self.has_effects = True
