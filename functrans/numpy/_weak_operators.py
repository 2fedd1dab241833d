"""The operators of weakly typed eager arrays (``weak_values.WeakArray``).

A WeakArray's operators are fnp's functions, as a tracer's are (they type a weak operand
as ``jit`` does; an Array's fast operators call numpy, to which every array is strongly
typed). Python calls a subclass's reflected operator first, so ``x + weak`` for an
Array ``x`` comes here too.

>>> import numpy as np, functrans.numpy as fnp
>>> (np.ones(2, np.float32) * fnp.asarray(2.0)).dtype
dtype('float32')
"""
from __future__ import annotations

from ..tracing import Tracer
from ..weak_values import WeakArray

__all__ = ["install"]

_BINARY = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
           "xor", "lshift", "rshift")
_OTHER = ("lt", "le", "gt", "ge", "eq", "ne", "neg", "pos", "abs", "invert")
# methods that keep the array's type (numpy's versions would make a view or copy strong)
_METHODS = ("T", "mT", "transpose", "reshape", "ravel", "flatten", "squeeze", "swapaxes",
            "clip", "take", "repeat", "copy", "diagonal")


def install() -> None:
    """Give ``WeakArray`` the operators of tracers (installed by ``_array_methods``
    first), which call fnp's functions; ``x += y`` is ``x = x + y``. So are its methods
    that keep the type (``x.T``, ``x.reshape(...)``: weak as under ``jit``)."""
    ops = vars(Tracer)
    for name in _BINARY:
        setattr(WeakArray, f"__{name}__", ops[f"__{name}__"])
        setattr(WeakArray, f"__r{name}__", ops[f"__r{name}__"])
        setattr(WeakArray, f"__i{name}__", ops[f"__{name}__"])
    for name in _OTHER:
        setattr(WeakArray, f"__{name}__", ops[f"__{name}__"])
    for name in _METHODS:
        setattr(WeakArray, name, ops[name])
