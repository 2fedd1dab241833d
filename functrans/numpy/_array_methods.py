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

from jaxpr_ir import bfloat16, canonical_dtype, dtype_kind
from .. import config, numpy_dispatch, tracing
from ..array import Array, no_out_argument
from ..numpy_warnings import QUIET, QUIET_VAR
from ..primitives.control_flow import repeat_where_hit
from ..tracing import Tracer
from ..weak_values import WeakArray, typed_like
from ._indexing import getitem, index_update, numpy_indexes_alike
from ._structural import resolve_shape
from . import _promotion_mode
from ._array_protocol import ARRAY_PROTOCOL

# the functrans.numpy namespace, given by install(): its functions are looked up there
# when called, since tools (ft.profile) may replace them
_FNP = []


def _fnp():
    return _FNP[0]


# JAX's GatherScatterMode names: for get, None/promise_in_bounds keep x[idx]'s clamping
# of array indices, "clip" clamps every index, "fill"/"drop" give fill_value out of range;
# for updates, out-of-range rows are dropped unless mode="clip" clamps them
_MODES = (None, "promise_in_bounds", "clip", "fill", "drop")


def _check_mode(mode):
    if mode not in _MODES:
        raise ValueError(f"x.at[idx]: mode must be one of 'promise_in_bounds', 'clip', "
                         f"'fill', 'drop' (or None), got {mode!r}")


def _default_fill(dtype):
    """JAX's fill for out-of-range gets: NaN (inexact), the most negative (signed) or
    largest (unsigned) integer, True (bool)."""
    dt = np.dtype(dtype)
    if dtype_kind(dt) in "fc":
        return np.nan
    if dtype_kind(dt) in "iu":
        return np.iinfo(dt).min if dtype_kind(dt) == "i" else np.iinfo(dt).max
    return True


def _as_index(item):
    if isinstance(item, (Tracer, np.ndarray)):
        return item
    return _fnp().asarray(item) if _has_tracer(item) else np.asarray(item)


def _width(item):
    """How many operand axes an index item consumes (None: an ``...``)."""
    if item is Ellipsis:
        return None
    if item is None or isinstance(item, (bool, np.bool_)):
        return 0
    if isinstance(item, (slice, int, np.integer)):
        return 1
    arr = _as_index(item)
    return arr.ndim if dtype_kind(arr.dtype) == "b" else 1


def _remap_one(item, n, how, wrap=True):
    """An integer index along an axis of size ``n``, negatives wrapped (unless not
    ``wrap``: then they are out of range), then clamped (``how="clip"``) or sent to ``n``
    when out of range (``"fill"``: the padded slot)."""
    if isinstance(item, (int, np.integer)):
        i = int(item) + n if int(item) < 0 and wrap else int(item)
        if how == "clip":
            return min(max(i, 0), n - 1)
        return i if 0 <= i < n else n
    f = _fnp() if isinstance(item, Tracer) else np
    i = f.where(item < 0, item + n, item) if wrap else item
    if how == "clip":
        return f.clip(i, 0, n - 1)
    return f.where((i < 0) | (i >= n), n, i)


def _remap_index(shape, index, how, wrap=True):
    """The index with each integer item remapped by ``how``, and the axes they index."""
    items = list(index) if isinstance(index, tuple) else [index]
    widths = [_width(it) for it in items]
    if widths.count(None) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    axis, axes = 0, []
    for k, (item, w) in enumerate(zip(items, widths)):
        if w is None:
            axis += len(shape) - sum(v for v in widths if v is not None)
            continue
        is_int = (isinstance(item, (int, np.integer)) and not isinstance(item, bool)) or (
            w == 1 and not isinstance(item, slice) and dtype_kind(_as_index(item).dtype) in "iu")
        if is_int and axis < len(shape) and shape[axis] > 0:
            items[k] = _remap_one(item if isinstance(item, (int, np.integer))
                                  else _as_index(item), shape[axis], how, wrap)
            axes.append(axis)
        axis += w
    return tuple(items), axes


def _data_index(index):
    """``index`` with its static integer items (ints, lists of ints) as numpy arrays,
    which indexing reads as data: out of range they read clamped and get no gradient, as
    JAX's default (promise_in_bounds) ``.at[].get()``, instead of raising as numpy's
    ``x[11]`` does (``jnp.arange(10.0).at[11].get()`` is 9.0 in JAX's Sharp Bits)."""
    def data(it):
        if isinstance(it, (bool, np.bool_)):
            return it
        if isinstance(it, (int, np.integer)):
            return np.asarray(it)
        if isinstance(it, list) and not _has_tracer(it):
            arr = np.asarray(it)
            return arr if dtype_kind(arr.dtype) in "iu" else it
        return it
    if isinstance(index, tuple):
        return tuple(data(it) for it in index)
    return data(index)


def _get_filled(x, index, fill_value, wrap=True):
    """``x[index]`` with ``fill_value`` where an integer index is out of range: each
    such axis gets one padded slot of ``fill_value``, which out-of-range indices select."""
    fnp = _fnp()
    items, axes = _remap_index(tuple(x.shape), index, "fill", wrap)
    fill = _default_fill(x.dtype) if fill_value is None else fill_value
    for d in sorted(set(axes)):
        pad = fnp.full(tuple(x.shape[:d]) + (1,) + tuple(x.shape[d + 1:]), fill, x.dtype)
        x = fnp.concatenate([x, pad], axis=d)
    return x[items]


class _IndexUpdateRef:
    """``x.at[idx]``: out-of-place indexed reads and updates with JAX's keywords (``mode``,
    ``wrap_negative_indices``; ``indices_are_sorted`` and ``unique_indices`` are accepted
    as hints).

    >>> import functrans.numpy as fnp
    >>> fnp.arange(3.0).at[[0, 5]].get(mode="fill", fill_value=-1.0).tolist()
    [0.0, -1.0]
    """
    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def _update(self, how, values, mode, wrap=True):
        _check_mode(mode)
        index = self.index
        if mode == "clip":
            index = _remap_index(tuple(self.array.shape), index, "clip", wrap)[0]
        elif not wrap:   # negative indices are out of range: dropped
            index = _data_index(_remap_index(tuple(self.array.shape), index, "fill", False)[0])
        return index_update(self.array, index, values, how)

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None, wrap_negative_indices=True):
        """``x[idx]``; ``mode="fill"`` (or ``"drop"``) gives ``fill_value`` (default NaN,
        or the integer extreme) for out-of-range indices, ``"clip"`` clamps every index.
        ``wrap_negative_indices=False`` makes negative indices out of range too.

        >>> import functrans.numpy as fnp
        >>> fnp.arange(3.0).at[4].get(mode="clip").item()
        2.0
        """
        _check_mode(mode)
        wrap = wrap_negative_indices
        if mode in ("fill", "drop"):
            return _get_filled(self.array, self.index, fill_value, wrap)
        if mode == "clip" or not wrap:
            return self.array[_remap_index(tuple(self.array.shape), self.index, "clip", wrap)[0]]
        return self.array[_data_index(self.index)]

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            wrap_negative_indices=True):
        """Out-of-place ``x[idx] = values``; out-of-range updates are dropped."""
        return self._update("set", values, mode, wrap_negative_indices)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            wrap_negative_indices=True):
        return self._update("add", values, mode, wrap_negative_indices)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
                 wrap_negative_indices=True):
        """``x[idx] -= values`` (repeated indices subtract repeatedly).

        >>> import functrans.numpy as fnp
        >>> fnp.ones(3).at[[0, 0]].subtract(1.0).tolist()
        [-1.0, 1.0, 1.0]
        """
        v = _fnp().asarray(values).astype(self.array.dtype)
        return self._update("add", _fnp().negative(v), mode, wrap_negative_indices)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            wrap_negative_indices=True):
        return self._update("mul", values, mode, wrap_negative_indices)

    mul = multiply

    def _scaled(self, op, values, mode, wrap=True):
        ones = _fnp().ones_like(self.array)
        return op(self.array, _IndexUpdateRef(ones, self.index).multiply(
            values, mode=mode, wrap_negative_indices=wrap))

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
                 wrap_negative_indices=True):
        """``x[idx] /= values``, as JAX: ``x / ones_like(x).at[idx].multiply(values)``.

        >>> import functrans.numpy as fnp
        >>> fnp.full(3, 8.0).at[1].divide(2.0).tolist()
        [8.0, 4.0, 8.0]
        """
        return self._scaled(_fnp().divide, values, mode, wrap_negative_indices)

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
                 wrap_negative_indices=True):
        """``x[idx] **= values``, as JAX: ``x ** ones_like(x).at[idx].multiply(values)``.

        >>> import functrans.numpy as fnp
        >>> fnp.full(3, 2.0).at[2].power(3.0).tolist()
        [2.0, 2.0, 8.0]
        """
        return self._scaled(_fnp().power, values, mode, wrap_negative_indices)

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            wrap_negative_indices=True):
        return self._update("min", values, mode, wrap_negative_indices)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            wrap_negative_indices=True):
        return self._update("max", values, mode, wrap_negative_indices)

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None,
              wrap_negative_indices=True):
        """``func`` (elementwise, unary) applied at ``x[idx]``, once per occurrence of an
        index, as JAX's ``x.at[idx].apply(func)``.

        >>> import functrans.numpy as fnp
        >>> fnp.full(3, 2.0).at[[0, 0, 1]].apply(lambda v: v * v).tolist()
        [16.0, 4.0, 2.0]
        """
        fnp, x = _fnp(), self.array

        def count():
            return _IndexUpdateRef(fnp.zeros(tuple(x.shape), np.int32), self.index).add(
                1, mode=mode, wrap_negative_indices=wrap_negative_indices)
        if _has_tracer(self.index):
            hits = count()
        else:   # constant indices: the counts now, also under jit, so the loop is unrolled
            with tracing.own_constants():      # and reverse-differentiable
                hits = count()
        return repeat_where_hit(x, hits, lambda y: fnp.asarray(func(y)).astype(x.dtype))


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
    if not numpy_indexes_alike(index):
        return getitem(self, index)
    try:
        out = np.ndarray.__getitem__(self, index)
    except IndexError:    # out of range: array indices clamp as under jit (fnp's rule)
        return getitem(self.view(np.ndarray), index)
    return out if type(out) is Array and type(self) is Array else typed_like(self, out)


def _array_reshape(self, *shape, order="C"):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    try:
        out = np.ndarray.reshape(self, shape, order=order)
    except (ValueError, TypeError):
        resolve_shape(self.size, shape, self.shape)   # our message
        raise
    if out.ndim and min(shape) < -1:    # numpy takes any negative size as -1: -3 too
        resolve_shape(self.size, shape, self.shape)   # raises
    return out


def _array_dot(self, b, out=None):
    no_out_argument("dot", out)
    return _fnp().dot(self, b)


def _array_mean(self, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    no_out_argument("mean", out)
    return _fnp().mean(self, axis, dtype, keepdims, where=where)


def _array_moment(name):
    def moment(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None):
        no_out_argument(name, out)
        return getattr(_fnp(), name)(self, axis, dtype, ddof=ddof, keepdims=keepdims,
                                     where=where)
    return moment


_NUMPY_CALL = object()    # numpy's np.sort/np.argsort pass order= by keyword: see _sort


def _sort(self, axis=-1, *, kind=None, order=_NUMPY_CALL, stable=True, descending=False):
    # JAX's: a sorted copy. np.sort(x) copies x and sorts the copy in place by this
    # method, always passing order=: that call (only) keeps ndarray's in-place rule
    if order is not _NUMPY_CALL and isinstance(self, np.ndarray):
        return np.ndarray.sort(self, axis=axis, kind=kind, order=order, stable=stable)
    return _fnp().sort(self, axis, kind, None if order is _NUMPY_CALL else order,
                       stable=stable, descending=descending)


def _argsort(self, axis=-1, *, kind=None, order=_NUMPY_CALL, stable=True, descending=False):
    # JAX's: stable by default (ndarray's quicksort orders ties arbitrarily)
    if order is not _NUMPY_CALL and isinstance(self, np.ndarray):
        return np.ndarray.argsort(self, axis=axis, kind=kind, order=order, stable=stable)
    return _fnp().argsort(self, axis, kind, None if order is _NUMPY_CALL else order,
                          stable=stable, descending=descending)


def _nonzero(self, *, fill_value=None, size=None):
    if size is None and fill_value is None and isinstance(self, np.ndarray):
        return tuple(tracing.wrap(i) for i in np.ndarray.nonzero(self))    # np.nonzero's call
    return _fnp().nonzero(self, size=size, fill_value=fill_value)


def _searchsorted(self, v, side="left", sorter=None, *, method=None):
    return _fnp().searchsorted(self, v, side, sorter, method=method)


def _ptp(self, axis=None, out=None, keepdims=False):
    no_out_argument("ptp", out)
    return _fnp().ptp(self, axis, keepdims=keepdims)


def _compress(self, condition, axis=None, *, out=None, size=None, fill_value=0):
    no_out_argument("compress", out)
    return _fnp().compress(condition, self, axis, size=size, fill_value=fill_value)


def _choose(self, choices, out=None, mode="raise"):
    return _fnp().choose(self, choices, out, mode)


def _argpartition(self, kth, axis=-1):
    return _fnp().argpartition(self, kth, axis)


# JAX's Array methods that tracers lack; sort and argsort also on eager arrays, where
# ndarray's sort works in place and returns None and its argsort is not stable
_TRACER_METHODS = {"sort": _sort, "argsort": _argsort, "nonzero": _nonzero,
                   "searchsorted": _searchsorted, "ptp": _ptp, "compress": _compress,
                   "choose": _choose, "argpartition": _argpartition}


def _array_namespace(self, *, api_version=None):
    """The array API namespace of arrays and tracers: ``functrans.numpy`` (as JAX's
    arrays give ``jax.numpy``), so array-API code stays traceable. ``api_version`` may
    be None or the standard's version it follows (``fnp.__array_api_version__``)."""
    fnp = _fnp()
    if api_version is not None and api_version != fnp.__array_api_version__:
        raise ValueError(f"__array_namespace__: api_version={api_version!r} is not "
                         f"available; the available version is {fnp.__array_api_version__!r}")
    return fnp


def _install_array_methods():
    Array.at = property(_array_at)
    Array.__array_namespace__ = Tracer.__array_namespace__ = _array_namespace
    # mean, var, std as fnp's (numpy's warn of empty slices, where JAX gives nan quietly)
    for name, fn in (("__getitem__", _array_getitem), ("reshape", _array_reshape),
                     ("dot", _array_dot), ("mean", _array_mean), ("var", _array_moment("var")),
                     ("std", _array_moment("std")), ("sort", _sort), ("argsort", _argsort),
                     ("nonzero", _nonzero), ("ptp", _ptp), *ARRAY_PROTOCOL):
        fn.__name__, fn.__qualname__ = name, f"Array.{name}"
        setattr(Array, name, fn)


def _foreign(other):
    """Whether an operator leaves ``other`` to its own reflected method (NotImplemented,
    as JAX's): objects that are not array-like, and subclasses of list and tuple (a
    NamedTuple with operators of its own), while plain lists and tuples are operands."""
    if isinstance(other, _OPERAND) or type(other) in (list, tuple):
        return False
    return not (hasattr(other, "__jax_array__") or hasattr(other, "__array__"))


def _binop(name, reflected=False):
    fns = []     # the fnp function, looked up on first use (fnp imports this module)

    def op(self, other):
        if _foreign(other):
            return NotImplemented
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
_OPERAND = (np.ndarray, np.generic, bool, int, float, complex, Tracer)
_F16, _BF16 = np.dtype(np.float16), bfloat16
_SUPPORTED = frozenset(np.dtype(d) for d in ("float64", "float32", "int64", "int32", "int16",
                                              "uint64", "uint32", "uint16", "bool", "complex64", "complex128"))
# operators whose fnp function is exactly the numpy ufunc (when the result dtype is a
# supported one): called directly on base-class views, the fastest eager route
_UFUNC = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
          "true_divide": np.true_divide, "bitwise_and": np.bitwise_and,
          "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor, "less": np.less,
          "less_equal": np.less_equal, "greater": np.greater, "greater_equal": np.greater_equal,
          "equal": np.equal, "not_equal": np.not_equal}


def _array_binop(name, reflected=False, fast=True):
    """An operator of eager Arrays, with fnp's semantics (numpy 2 dtypes kept to the
    supported ones, shape errors naming both shapes). Tracers and foreign types get
    NotImplemented, so that their reflected operator (or Python's TypeError) answers.
    ``fast``: call numpy's ufunc directly where fnp's function is exactly it."""
    fnp = []
    ufunc = _UFUNC.get(name) if fast else None
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
        elif type(other) is WeakArray:          # (x += weak: WeakArray's own ops otherwise)
            return slow(self, other)
        elif isinstance(other, _ARRAYLIKE) and not _foreign(other):
            o = other
        else:
            return NotImplemented
        # (with a numpy-protocol hook installed on Array, e.g. by ft.profile, go through fnp)
        if ufunc is not None and "__array_ufunc__" not in attrs and self.dtype is not _BF16:
            token = QUIET_VAR.set(QUIET)    # IEEE results without numpy's warnings, as JAX
            try:
                r = ufunc(o, self.view(base)) if reflected else ufunc(self.view(base), o)
            except (ValueError, TypeError, OverflowError):
                return slow(self, other)            # fnp's message (or jit's conversion)
            finally:
                QUIET_VAR.reset(token)
            # float16 is kept where an operand has it (fnp's rule: not sin(int8)'s)
            # (bfloat16 promotes as JAX's, not as numpy's: fnp's function)
            if (r.dtype in _SUPPORTED and self.dtype is not _BF16 and getattr(
                    o, "dtype", None) is not _BF16) or (r.dtype == _F16 and (
                    self.dtype == _F16 or getattr(o, "dtype", None) == _F16)):
                return r.view(Array) if type(r) is base else tracing.wrap(r)
        return slow(self, other)
    op.__name__ = name
    return op


def _install_array_operators(fast=True):
    """``fast=False`` while a promotion check is on (``_promotion_mode``): every operator
    then goes through fnp's function, which checks."""
    for dunder, fname in _BINOPS.items():
        setattr(Array, f"__{dunder}__", _array_binop(fname, fast=fast))
        setattr(Array, f"__r{dunder}__", _array_binop(fname, reflected=True, fast=fast))
        # arrays are immutable: ``x += y`` rebinds x to a new array (numpy would write
        # into x's memory, which a user's numpy array may share)
        setattr(Array, f"__i{dunder}__", _array_binop(fname, fast=fast))
    for dunder, fname in _COMPARE.items():
        setattr(Array, f"__{dunder}__", _array_binop(fname, fast=fast))

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
    for name, fn in _TRACER_METHODS.items():
        setattr(T, name, fn)
    T.conjugate = lambda self: _fnp().conjugate(self)
    T.copy = lambda self: _fnp().copy(self)
    T.itemsize = property(lambda self: np.dtype(self.dtype).itemsize)
    T.nbytes = property(lambda self: np.dtype(self.dtype).itemsize * self.size)


def _sync_operators(*_):
    """Array's operators take numpy's fast route unless a check needs fnp's functions: a
    promotion option (``_promotion_mode``), debug_nans / debug_infs (fnp's eager check)."""
    fast = not (_promotion_mode.ACTIVE or config.read("debug_nans") or config.read("debug_infs"))
    if _FAST_OPERATORS[:1] != [fast]:
        _FAST_OPERATORS[:] = [fast]
        _install_array_operators(fast=fast)


_FAST_OPERATORS: list = []    # whether the fast operators are installed


def install(fnp) -> None:
    """Attach the methods to ``Array`` and ``Tracer`` and numpy's protocols to tracers,
    all calling the functions of ``fnp`` (the ``functrans.numpy`` module).

    >>> import functrans.numpy as fnp
    >>> fnp.ones(2).dot(fnp.ones(2)).item()
    2.0
    """
    _FNP[:] = [fnp]
    _install_array_methods()
    _sync_operators()
    _promotion_mode._listeners.append(_sync_operators)
    config.on_update(_sync_operators)
    _install_tracer_methods()
    numpy_dispatch.install(fnp)
