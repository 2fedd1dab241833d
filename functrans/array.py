"""The eager array type and the array methods shared by eager arrays and tracers.

Outside any transform, functrans returns ``Array``: a numpy ndarray subclass
(``np.asarray(x)`` is a view, no copy) that adds ``.at[...]``. Tracers get the
same methods, each routed to ``functrans.numpy``.

>>> import functrans.numpy as fnp
>>> x = fnp.zeros(3)
>>> x.at[1].set(5.0).tolist()
[0.0, 5.0, 0.0]
"""
from __future__ import annotations

import numpy as np

from . import tracing
from .tracing import Tracer


class _IndexUpdateRef:
    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def _update(self, mode, values):
        from .numpy._indexing import index_update
        return index_update(self.array, self.index, values, mode)

    def get(self):
        return self.array[self.index]

    def set(self, values):
        """Out-of-place ``x[idx] = values``; out-of-range updates are dropped."""
        return self._update("set", values)

    def add(self, values):
        return self._update("add", values)

    def multiply(self, values):
        return self._update("mul", values)

    mul = multiply

    def min(self, values):
        return self._update("min", values)

    def max(self, values):
        return self._update("max", values)


class _IndexUpdateHelper:
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexUpdateRef(self.array, index)


class Array(np.ndarray):
    """An eager functrans array: a numpy array with ``.at[idx].set/add/...``."""

    @property
    def at(self):
        return _IndexUpdateHelper(self)

    def __getitem__(self, index):
        # a traced index (a constant table indexed under jit) goes through fnp; full
        # integer indexing gives a 0-d Array (with .at) instead of a numpy scalar
        if _has_tracer(index):
            return _fnp()._indexing.getitem(self, index)
        out = np.ndarray.__getitem__(self, index)
        return out if type(out) is Array else tracing.wrap(out)

    def __setitem__(self, key, value):
        raise TypeError("functrans arrays are immutable; use x.at[idx].set(value) "
                        "(it returns the updated array)")

    def __repr__(self):
        return "Array(" + np.array2string(np.asarray(self), separator=", ", prefix="Array(") + \
            f", dtype={self.dtype})"

    def __hash__(self):
        raise TypeError("unhashable type: a functrans Array (static arguments must be "
                        "hashable Python values)")


tracing._ARRAY_CLASS[0] = Array


def _has_tracer(index):
    if isinstance(index, Tracer):
        return True
    if isinstance(index, (tuple, list)):
        return any(_has_tracer(i) for i in index)
    return False


def _fnp():
    from . import numpy as fnp
    return fnp


def _binop(name, reflected=False):
    def op(self, other):
        f = getattr(_fnp(), name)
        return f(other, self) if reflected else f(self, other)
    op.__name__ = name
    return op


_BINOPS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "left_shift", "rshift": "right_shift",
}
_COMPARE = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
            "eq": "equal", "ne": "not_equal"}


def _install_tracer_methods():
    T = Tracer
    for dunder, fname in _BINOPS.items():
        setattr(T, f"__{dunder}__", _binop(fname))
        setattr(T, f"__r{dunder}__", _binop(fname, reflected=True))
    for dunder, fname in _COMPARE.items():
        setattr(T, f"__{dunder}__", _binop(fname))
    T.__neg__ = lambda self: _fnp().negative(self)
    T.__pos__ = lambda self: self
    T.__abs__ = lambda self: _fnp().abs(self)
    T.__invert__ = lambda self: _fnp().invert(self)
    T.__getitem__ = lambda self, idx: _fnp()._indexing.getitem(self, idx)
    T.__iter__ = lambda self: (self[i] for i in range(len(self)))
    T.at = property(lambda self: _IndexUpdateHelper(self))
    T.T = property(lambda self: _fnp().transpose(self))
    T.mT = property(lambda self: _fnp().swapaxes(self, -1, -2))
    T.real = property(lambda self: _fnp().real(self))
    T.imag = property(lambda self: _fnp().imag(self))

    def __setitem__(self, key, value):
        raise TypeError("traced arrays are immutable; use x.at[idx].set(value)")
    T.__setitem__ = __setitem__

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return _fnp().reshape(self, shape)
    T.reshape = reshape

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return _fnp().transpose(self, axes or None)
    T.transpose = transpose
    T.astype = lambda self, dtype: _fnp().asarray(self, dtype=dtype)
    for name in ("sum", "mean", "max", "min", "prod", "argmax", "argmin", "any", "all",
                 "var", "std", "cumsum", "cumprod", "ravel", "squeeze", "swapaxes", "clip",
                 "dot", "conj", "round", "flatten", "diagonal", "trace", "take", "repeat"):
        def method(self, *a, _name=name, **k):
            fn = "ravel" if _name == "flatten" else ("conjugate" if _name == "conj" else _name)
            return getattr(_fnp(), fn)(self, *a, **k)
        method.__name__ = name
        setattr(T, name, method)


_install_tracer_methods()
