"""One cost model for eager and compiled execution: flops per primitive, and the bytes
each operation (eagerly) or kernel (compiled) reads from and writes to memory.

The model lives in ``jaxpr_ir.cost`` (a static analysis of the IR, so the backends'
``cost_analysis()`` use it too: ``jit(f).lower(*a).compile().cost_analysis()`` and
``ft.profile`` report the same numbers); this module is its functrans-side name.

What it counts (flops, transcendentals, bytes) is documented in ``jaxpr_ir.cost``.

>>> import functrans as ft, functrans.numpy as fnp, numpy as np
>>> j = ft.make_jaxpr(lambda a, b: fnp.tanh(a @ b))(np.ones((4, 3)), np.ones((3, 5)))
>>> flops(j)
{'flops': 120.0, 'transcendentals': 20.0}
>>> eager_traffic(j)
{'operations': 2, 'bytes': 696}
"""
from __future__ import annotations

from jaxpr_ir.cost import (VIEW_PRIMITIVES, eager_traffic, flops,  # noqa: F401
                           jaxpr_cost, plan_cost, plan_flops, plan_traffic)

__all__ = ["VIEW_PRIMITIVES", "flops", "eager_traffic", "plan_traffic",
           "plan_flops", "plan_cost", "jaxpr_cost"]
