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

import sys

import numpy as np

from jaxpr_ir import canonical_dtype
from . import numpy_dispatch, numpy_warnings, tracing
from .tracing import Tracer
from .device import SingleDeviceSharding, host_device


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
    """An eager functrans array: a numpy array with ``.at[idx].set/add/...``.

    Arrays are immutable: ``x.at[idx].set(v)`` (and ``add``, ``multiply``, ``min``,
    ``max``, ``get``) returns an updated copy.

    >>> import functrans.numpy as fnp
    >>> x = fnp.zeros(3)
    >>> isinstance(x, fnp.ndarray), x.at[1].set(5.0).tolist(), x.tolist()
    (True, [0.0, 5.0, 0.0], [0.0, 0.0, 0.0])
    """

    @property
    def at(self):
        return _IndexUpdateHelper(self)

    def __getitem__(self, index):
        # a traced index (a constant table indexed under jit) goes through fnp; full
        # integer indexing gives a 0-d Array (with .at) instead of a numpy scalar
        if _has_tracer(index):
            return _fnp()._indexing.getitem(self, index)
        try:
            out = np.ndarray.__getitem__(self, index)
        except IndexError:    # out of range: array indices clamp as under jit (fnp's rule)
            return _fnp()._indexing.getitem(self.view(np.ndarray), index)
        return out if type(out) is Array else tracing.wrap(out)

    # JAX's Array API: eager arrays are already computed and live whole on the host CPU
    def block_until_ready(self):
        return self

    def devices(self):
        return {host_device()}

    @property
    def sharding(self):
        return SingleDeviceSharding(host_device())

    def __setitem__(self, key, value):
        raise TypeError("functrans arrays are immutable; use x.at[idx].set(value) "
                        "(it returns the updated array)")

    def __repr__(self):
        return "Array(" + np.array2string(np.asarray(self), separator=", ", prefix="Array(") + \
            f", dtype={self.dtype})"

    def __hash__(self):
        raise TypeError("unhashable type: a functrans Array (static arguments must be "
                        "hashable Python values)")

    # numpy's own methods, with results kept to the library's contract: an Array (never a
    # numpy scalar) of a supported dtype (numpy sums uint32 as uint64), as fnp and tracers give
    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        try:
            dt = canonical_dtype(dtype)
        except TypeError as e:
            raise TypeError(f"astype: {e}") from None
        return np.ndarray.astype(self, dt, order, casting, subok, copy)

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        try:
            return np.ndarray.reshape(self, shape, order=order)
        except (ValueError, TypeError):
            _fnp()._structural._resolve_shape(self.size, shape, self.shape)   # our message
            raise

    def round(self, decimals=0, out=None):
        _no_out("round", out)
        if self.dtype.kind in "biu" and decimals >= 0:
            return self    # already integral; numpy would give float16 for bool
        return _fix(np.ndarray.round(self, decimals))

    def sum(self, *a, **k):
        return _fix(np.ndarray.sum(self, *a, **k))

    def prod(self, *a, **k):
        return _fix(np.ndarray.prod(self, *a, **k))

    def cumsum(self, *a, **k):
        return _fix(np.ndarray.cumsum(self, *a, **k))

    def cumprod(self, *a, **k):
        return _fix(np.ndarray.cumprod(self, *a, **k))

    def argmax(self, *a, **k):
        return _fix(np.ndarray.argmax(self, *a, **k))

    def argmin(self, *a, **k):
        return _fix(np.ndarray.argmin(self, *a, **k))

    def trace(self, *a, **k):
        return _fix(np.ndarray.trace(self, *a, **k))

    def take(self, *a, **k):
        return _fix(np.ndarray.take(self, *a, **k))

    def dot(self, b, out=None):
        _no_out("dot", out)
        return _fnp().dot(self, b)


class DeletedArray(Array):
    """An ``Array`` donated to a jitted function (``jit(donate_argnums=...)``): its buffer
    now holds that function's output, so every use raises, as a deleted array does in JAX.
    (``np.asarray`` of it still gives a view: numpy reads subclasses without asking.)"""

    def _deleted(self, *args, **kwargs):
        raise RuntimeError(
            f"Array has been deleted: it was donated to a jitted function (donate_argnums), "
            f"which wrote its result into the array's memory "
            f"(shape={np.ndarray.__getattribute__(self, 'shape')})")

    __array_ufunc__ = __array_function__ = __getitem__ = view = _deleted
    __float__ = __int__ = __bool__ = __iter__ = _deleted
    tolist = item = copy = astype = reshape = _deleted

    def __repr__(self):      # printable (a debugger, a traceback), never its data
        return (f"Array(<deleted: donated>, shape={np.ndarray.__getattribute__(self, 'shape')}"
                f", dtype={np.ndarray.__getattribute__(self, 'dtype')})")

    __str__ = __repr__

    @property
    def at(self):
        self._deleted()


def mark_owned(x):
    """Mark ``x``, an Array over a fresh buffer no one else holds (a compiled function's
    output), as donatable: ``jit(donate_argnums=...)`` may write into its buffer."""
    x.__dict__["_owned_buffer"] = True
    return x


def take_donation(x):
    """The buffer of a donated argument when functrans owns it and nothing else can see
    it (after which ``x`` is deleted), else None: the memory of a numpy array, of an Array
    viewing one, of any buffer with another view (np.asarray(x) kept somewhere) is never
    written."""
    if type(x) is not Array or not x.__dict__.get("_owned_buffer"):
        return None
    buf = x.base
    # any reference to buf beyond x.base (counted as for a buffer that has none) is a view
    # of it held elsewhere (np.asarray(x)), which would see the output
    if type(buf) is not np.ndarray or not buf.flags.owndata or not buf.flags.writeable \
            or buf.shape != x.shape or _references(buf) > _ONLY_BASE:
        return None
    x.__class__ = DeletedArray
    return buf


def _references(buf):
    return sys.getrefcount(buf)


def _only_base_references():
    """What ``_references`` counts for a buffer held by one Array's .base only (measured,
    not assumed: the count of the caller's own references varies between Pythons)."""
    x = np.empty(1).view(Array)
    buf = x.base         # held as take_donation holds it: x.base and one local
    return _references(buf)


_ONLY_BASE = _only_base_references()
tracing.ARRAY_CLASS[0] = Array
tracing.EAGER_TYPES.add(Array)

# numpy's accumulators outside the supported dtypes, mapped as fnp maps them
_WIDEN = {np.dtype(np.uint64): np.dtype(np.int64), np.dtype(np.float16): np.dtype(np.float64)}


def _fix(r):
    """A numpy method's result as an Array of a supported dtype."""
    if type(r) is not Array:
        r = tracing.wrap(r)
    wide = _WIDEN.get(r.dtype)
    return r if wide is None else r.astype(wide)


def _no_out(name, out):
    if out is not None:
        raise TypeError(f"{name}: the out argument is not supported (arrays are immutable)")


def _has_tracer(index):
    if isinstance(index, Tracer):
        return True
    if isinstance(index, (tuple, list)):
        return any(_has_tracer(i) for i in index)
    return False


_FNP = []


def _fnp():
    if not _FNP:  # imported lazily (functrans.numpy imports this module), then cached
        from . import numpy as fnp
        _FNP.append(fnp)
    return _FNP[0]


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


_install_array_operators()


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


_install_tracer_methods()
numpy_dispatch.install()
numpy_warnings.install()
