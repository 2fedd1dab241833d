"""The namespace generated kernels are built in.

``namespace(sim)`` is the global namespace a kernel's source is executed in: Numba
types under short names (``f32``, ``i64``, ``u64``...), ``cuda``, ``NAN``/``INF``, and ``lm``
for float math: the libdevice module on a GPU, the numpy shim ``SimMath`` on the
simulator (where Python's ``math`` would raise on ``log(-1)`` instead of giving nan).
Kernels call no device functions of their own (those would need a GPU to compile:
Numba asks the driver for the compute capability), so ``compile_ptx`` works anywhere.

>>> float(SimMath.expf(0.0)), float(SimMath.rint(2.5))
(1.0, 2.0)
>>> import functrans  # registers the primitives
>>> float(SimMath.squaref(3.0))    # not in _NP: the ``square`` primitive's impl
9.0
"""
from __future__ import annotations

import math

import numpy as np

from jaxpr_ir import primitives


def _shim(fn, dtype):
    def f(*xs):
        with np.errstate(all="ignore"):
            return dtype(fn(*[dtype(x) for x in xs]))
    return staticmethod(f)


class _PrimitiveMath(type):
    """A libdevice name missing from ``SimMath._NP`` that is also a primitive's name is
    computed by that primitive's numpy impl (``truncf``: the ``trunc`` primitive on
    float32), so a new libdevice row in ``ops`` needs no numpy twin written here."""

    def __getattr__(cls, name):
        forms = [(name, np.float64)] + ([(name[:-1], np.float32)] if name.endswith("f") else [])
        for base, dtype in forms:
            p = primitives.get(base)
            if p is not None and p.impl is not None:
                fn = _shim(p.impl, dtype)
                setattr(cls, name, fn)
                return fn.__func__
        raise AttributeError(f"SimMath has no {name!r} (neither libdevice's twin nor a primitive)")


class SimMath(metaclass=_PrimitiveMath):
    """libdevice's names computed with numpy (for the CUDA simulator); the names that are
    not listed come from the primitive of that name (see ``_PrimitiveMath``)."""
    _NP = {"exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log1p": np.log1p,
           "log2": np.log2, "log10": np.log10, "sin": np.sin, "cos": np.cos, "tan": np.tan,
           "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
           "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh,
           "atanh": np.arctanh, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
           "cbrt": np.cbrt, "erf": np.vectorize(math.erf), "floor": np.floor, "ceil": np.ceil,
           "rint": np.rint, "atan2": np.arctan2, "pow": np.power, "fabs": np.fabs,
           "fmod": np.fmod, "hypot": np.hypot, "copysign": np.copysign}


for _name, _fn in SimMath._NP.items():
    setattr(SimMath, _name, _shim(_fn, np.float64))
    setattr(SimMath, _name + "f", _shim(_fn, np.float32))


_NS = {}


def namespace(sim: bool) -> dict:
    """The globals kernels are built in (cached per mode)."""
    if sim in _NS:
        return _NS[sim]
    import numba
    from numba import cuda
    if sim:
        lm = SimMath
    else:
        from numba.cuda import libdevice
        lm = libdevice
    ns = {"cuda": cuda, "lm": lm, "NAN": math.nan, "INF": math.inf,
          "f64": numba.float64, "f32": numba.float32, "i64": numba.int64,
          "i32": numba.int32, "u32": numba.uint32, "u64": numba.uint64, "b1": numba.boolean}
    _NS[sim] = ns
    return ns
