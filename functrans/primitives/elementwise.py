"""Elementwise primitives, gathered: the arithmetic, conversions, select and integer ops
of ``arithmetic``, and the unary math table and nonlinear binary ops of
``elementwise_math`` (which is written with ``arithmetic``), with ``elementwise_pow``'s
``pow`` front end. Import from here.

>>> import numpy as np
>>> float(sin(np.float64(0.0)))
0.0
>>> bitwise_xor(np.uint32(6), np.uint32(3)).item()
5
"""
from __future__ import annotations

from . import arithmetic as _arith
from . import elementwise_math as _math
from .arithmetic import *  # noqa: F401,F403
from .elementwise_math import *  # noqa: F401,F403
from .elementwise_pow import pow  # noqa: F401,E402 (lax.pow: also an integer exponent)
from .arithmetic import (ARITY, LINEAR, LINEAR_TABLE, OpRow, full_like,  # noqa: F401
                         lax_binary)
from .elementwise_math import BINARY, BINARY_TABLE, UNARY, UNARY_TABLE  # noqa: F401

__all__ = list(_arith.__all__) + list(_math.__all__)
# the primitives themselves (``add_p``, ``sin_p``...), as lax and the backends' tests name them
globals().update({k: v for m in (_arith, _math) for k, v in vars(m).items() if k.endswith("_p")})
