"""``functrans.experimental.pjit``: older JAX's ``pjit``, which is ``jit`` (with
``in_shardings`` / ``out_shardings``) since JAX 0.4.

>>> from functrans.experimental.pjit import pjit
>>> float(pjit(lambda x: x + 2.0, in_shardings=None, out_shardings=None)(1.0))
3.0
"""
from ..jit import jit as pjit

__all__ = ["pjit"]
