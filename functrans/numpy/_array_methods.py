"""The array methods of eager Arrays and tracers, which compute with ``functrans.numpy``:
operators, ``.at[...]``, indexing, and the tracers' numpy-like methods (``t.sum()``).

``functrans.array`` defines the ``Array`` type below this package; this package attaches
the methods that call its functions (``install``, run by its ``__init__``), so that the
array type never imports the functions written with it.

>>> import functrans.numpy as fnp
>>> x = fnp.arange(3.0)
>>> (x * 2).at[0].add(1.0).tolist()
[1.0, 2.0, 4.0]
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import canonical_dtype
from .. import numpy_dispatch, tracing
from ..array import Array, no_out_argument
from ..tracing import Tracer
from ._indexing import getitem, index_update
from ._structural import resolve_shape

# the functrans.numpy namespace, given by install(): its functions are looked up there
# when called, since tools (ft.profile) may replace them
_FNP = []


def _fnp():
    return _FNP[0]


class _IndexUpdateRef:
    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def _update(self, mode, values):
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


def _has_tracer(index):
    if isinstance(index, Tracer):
        return True
    if isinstance(index, (tuple, list)):
        return any(_has_tracer(i) for i in index)
    return False


def _array_at(self):
    return _IndexUpdateHelper(self)


def _array_getitem(self, index):
    # a traced index (a constant table indexed under jit) goes through fnp; full
    # integer indexing gives a 0-d Array (with .at) instead of a numpy scalar
    if _has_tracer(index):
        return getitem(self, index)
    try:
        out = np.ndarray.__getitem__(self, index)
    except IndexError:    # out of range: array indices clamp as under jit (fnp's rule)
        return getitem(self.view(np.ndarray), index)
    return out if type(out) is Array else tracing.wrap(out)


def _array_reshape(self, *shape, order="C"):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    try:
        return np.ndarray.reshape(self, shape, order=order)
    except (ValueError, TypeError):
        resolve_shape(self.size, shape, self.shape)   # our message
        raise


def _array_dot(self, b, out=None):
    no_out_argument("dot", out)
    return _fnp().dot(self, b)


def _install_array_methods():
    Array.at = property(_array_at)
    for name, fn in (("__getitem__", _array_getitem), ("reshape", _array_reshape),
                     ("dot", _array_dot)):
        fn.__name__, fn.__qualname__ = name, f"Array.{name}"
        setattr(Array, name, fn)


def _binop(name, reflected=False):
    fns = []     # the fnp function, looked up on first use (fnp imports this module)

    def op(self, other):
        if not fns:
            fns.append(getattr(_fnp(), name))
        return fns[0](other, self) if reflected else fns[0](self, other)
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


_ARRAYLIKE = (np.ndarray, np.generic, bool, int, float, complex, list, tuple)
_SUPPORTED = frozenset(np.dtype(d) for d in ("float64", "float32", "int64", "int32", "uint32",
                                             "bool", "complex64", "complex128"))
# operators whose fnp function is exactly the numpy ufunc (when the result dtype is a
# supported one): called directly on base-class views, the fastest eager route
_UFUNC = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
          "true_divide": np.true_divide, "bitwise_and": np.bitwise_and,
          "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor, "less": np.less,
          "less_equal": np.less_equal, "greater": np.greater, "greater_equal": np.greater_equal,
          "equal": np.equal, "not_equal": np.not_equal}


def _array_binop(name, reflected=False):
    """An operator of eager Arrays, with fnp's semantics (numpy 2 dtypes kept to the
    supported ones, shape errors naming both shapes). Tracers and foreign types get
    NotImplemented, so that their reflected operator (or Python's TypeError) answers."""
    fnp = []
    ufunc = _UFUNC.get(name)
    base = np.ndarray
    attrs = Array.__dict__

    def slow(self, other):
        if not fnp:
            fnp.append(_fnp())
        f = getattr(fnp[0], name)     # looked up each time: tools (ft.profile) may wrap it
        return f(other, self) if reflected else f(self, other)

    def op(self, other):
        if type(other) is Array:
            o = other.view(base)
        elif isinstance(other, _ARRAYLIKE):
            o = other
        else:
            return NotImplemented
        # (with a numpy-protocol hook installed on Array, e.g. by ft.profile, go through fnp)
        if ufunc is not None and "__array_ufunc__" not in attrs:
            try:
                r = ufunc(o, self.view(base)) if reflected else ufunc(self.view(base), o)
            except (ValueError, TypeError):
                return slow(self, other)            # fnp's message
            if r.dtype in _SUPPORTED:
                return r.view(Array) if type(r) is base else tracing.wrap(r)
        return slow(self, other)
    op.__name__ = name
    return op


def _install_array_operators():
    for dunder, fname in _BINOPS.items():
        setattr(Array, f"__{dunder}__", _array_binop(fname))
        setattr(Array, f"__r{dunder}__", _array_binop(fname, reflected=True))
        # arrays are immutable: ``x += y`` rebinds x to a new array (numpy would write
        # into x's memory, which a user's numpy array may share)
        setattr(Array, f"__i{dunder}__", _array_binop(fname))
    for dunder, fname in _COMPARE.items():
        setattr(Array, f"__{dunder}__", _array_binop(fname))



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
    T.__getitem__ = getitem
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

    def astype(self, dtype, *a, **k):
        try:
            dt = canonical_dtype(dtype)
        except TypeError as e:
            raise TypeError(f"astype: {e}") from None
        return _fnp().asarray(self, dtype=dt)
    T.astype = astype
    for name in ("sum", "mean", "max", "min", "prod", "argmax", "argmin", "any", "all",
                 "var", "std", "cumsum", "cumprod", "ravel", "squeeze", "swapaxes", "clip",
                 "dot", "conj", "round", "flatten", "diagonal", "trace", "take", "repeat"):
        def method(self, *a, _name=name, **k):
            fn = "ravel" if _name == "flatten" else ("conjugate" if _name == "conj" else _name)
            return getattr(_fnp(), fn)(self, *a, **k)
        method.__name__ = name
        setattr(T, name, method)


def install(fnp) -> None:
    """Attach the methods to ``Array`` and ``Tracer`` and numpy's protocols to tracers,
    all calling the functions of ``fnp`` (the ``functrans.numpy`` module).

    >>> import functrans.numpy as fnp
    >>> fnp.ones(2).dot(fnp.ones(2)).item()
    2.0
    """
    _FNP[:] = [fnp]
    _install_array_methods()
    _install_array_operators()
    _install_tracer_methods()
    numpy_dispatch.install(fnp)
