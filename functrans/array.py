"""The eager array type.

Outside any transform, functrans returns ``Array``: a read-only numpy ndarray subclass
(``np.asarray(x)`` is a view, no copy) that adds ``.at[...]``. The methods computing with
``functrans.numpy`` (operators, ``.at``, indexing, the same on tracers) are attached by
that package (``functrans.numpy._array_methods``), which sits above this module.

>>> import functrans.numpy as fnp
>>> x = fnp.zeros(3)
>>> x.at[1].set(5.0).tolist()
[0.0, 5.0, 0.0]
"""
from __future__ import annotations

import sys

import numpy as np

from jaxpr_ir import bfloat16, canonical_dtype, dtype_kind
from . import numpy_warnings, tracing
from .numpy_warnings import quiet_call
from .device import SingleDeviceSharding, host_device
from .sharding import NamedSharding
from .dlpack import export as _export_dlpack
from .key_array import KeyArray


class _ArrayType(type(np.ndarray)):
    """Makes ``isinstance(tracer, Array)`` true (and for typed keys), as ``jax.Array`` does.

    User code checks ``isinstance(x, jnp.ndarray)`` to tell arrays from lists and scalars;
    under a transform ``x`` is a tracer and must still count as an array.
    """

    def __instancecheck__(cls, obj):
        if cls is Array and isinstance(obj, (tracing.Tracer, KeyArray)):   # keys: as JAX's
            return True
        return super().__instancecheck__(obj)


class _Absent:
    """A numpy ``ndarray`` method JAX arrays lack because it writes into the array
    (``fill``, ``put``): reading it raises AttributeError, so ``hasattr`` is False and an
    immutable array is never changed in place."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        raise AttributeError(f"'Array' object has no attribute '{self.name}': functrans "
                             f"arrays are immutable, as JAX's; use x.at[idx].set(value)")


class Shard:
    """One device's part of an array (JAX's ``jax.Shard``)."""
    __slots__ = ("device", "index", "replica_id", "data")

    def __init__(self, device, index, replica_id, data):
        self.device, self.index, self.replica_id, self.data = device, index, replica_id, data

    def __repr__(self):
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data!r})")


class Array(np.ndarray, metaclass=_ArrayType):
    """An eager functrans array: a numpy array with ``.at[idx].set/add/...``.

    Under a transform, tracers count as arrays too: ``isinstance(x, fnp.ndarray)`` holds
    inside ``grad``, ``jit`` and ``vmap`` as it does outside, as in JAX.

    Arrays are immutable: ``x.at[idx].set(v)`` (and ``add``, ``multiply``, ``min``,
    ``max``, ``get``) returns an updated copy.

    >>> import functrans.numpy as fnp
    >>> x = fnp.zeros(3)
    >>> isinstance(x, fnp.ndarray), x.at[1].set(5.0).tolist(), x.tolist()
    (True, [0.0, 5.0, 0.0], [0.0, 0.0, 0.0])
    """

    weak_type = False   # JAX's: True for values made from Python scalars (weak_values)
    # JAX's Array API: eager arrays are already computed and live whole on the host CPU
    def block_until_ready(self):
        return self

    def devices(self):
        return {host_device()}

    @property
    def device(self):
        """The device holding the array (JAX's ``x.device``; numpy's would be ``"cpu"``)."""
        return host_device()

    @property
    def sharding(self):   # a NamedSharding that device_put recorded, else the host
        return self.__dict__.get("_sharding") or SingleDeviceSharding(host_device())

    def __setitem__(self, key, value):
        raise TypeError("functrans arrays are immutable; use x.at[idx].set(value) "
                        "(it returns the updated array)")

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The array through DLPack, marked read-only (``functrans.dlpack``):
        ``numpy.from_dlpack(x)`` is a read-only view, no copy."""
        return _export_dlpack(self, stream, max_version, dl_device, copy)

    def is_deleted(self):
        """Whether the array was deleted (``x.delete()``) or donated to a jitted function
        (then every use raises).

        >>> import functrans.numpy as fnp
        >>> fnp.ones(2).is_deleted()
        False
        """
        return False

    def delete(self):
        """Delete the array, as JAX's ``x.delete()``: every later use raises
        ``RuntimeError`` (the memory itself is numpy's, freed when unreferenced).

        >>> import functrans.numpy as fnp
        >>> x = fnp.ones(2); x.delete(); x.is_deleted()
        True
        """
        self.__class__ = DeletedArray

    # JAX's per-device view of an array. Every process holds a global array whole (see
    # functrans.global_array), but a program reads its own block as JAX's does.
    @property
    def addressable_shards(self) -> list:
        """``[Shard]``: this process's part (``.device``, ``.index``, ``.replica_id``,
        ``.data``): the whole array, or under a ``NamedSharding`` over several processes
        this process's block, as JAX's.

        >>> import functrans.numpy as fnp
        >>> s, = fnp.arange(3.0).addressable_shards
        >>> s.index, s.replica_id, s.data.tolist()
        ((slice(None, None, None),), 0, [0.0, 1.0, 2.0])
        """
        return [s for s in self.global_shards if s.data is not None]

    @property
    def global_shards(self) -> list:
        """``[Shard]`` of every device; another process's shard has ``data`` None."""
        sharding = self.sharding
        if not isinstance(sharding, NamedSharding) or sharding.mesh.size == 1:
            return [Shard(host_device(), (slice(None),) * self.ndim, 0, self)]
        mesh, here = sharding.mesh, host_device()
        shards = []
        for r, device in enumerate(mesh.devices.flat):
            coords = np.unravel_index(r, mesh.axis_sizes)
            index = sharding.block(coords, self.shape)
            data = np.asarray(self)[index].view(type(self)) if device == here else None
            shards.append(Shard(device, index, sharding.replica_id(coords), data))
        return shards

    is_fully_replicated = property(lambda self: self.sharding.is_fully_replicated)
    is_fully_addressable = property(lambda self: self.sharding.is_fully_addressable)

    def addressable_data(self, index: int):
        """The data of addressable shard ``index`` (the whole array: there is one)."""
        return self.addressable_shards[index].data

    def on_device_size_in_bytes(self) -> int:
        return int(self.nbytes)

    def copy_to_host_async(self) -> None:
        """Nothing to do: the array is on the host already."""

    def is_ready(self) -> bool:
        return True

    def to_device(self, device, /, *, stream=None):
        """The array on ``device`` (a Device, a sharding, or numpy's ``"cpu"``): itself."""
        if device != "cpu" and device not in self.devices() and \
                getattr(device, "device_set", None) != self.devices():
            raise ValueError(f"to_device: functrans arrays live on the host ({host_device()}), "
                             f"not on {device!r}")
        return self

    fill = put = _Absent()   # numpy's in-place writers: JAX arrays have neither

    def __round__(self, ndigits=None):
        """``round(x)``: an array (``x.round``), as in JAX; a Python number needs
        ``int(x)`` or ``float(x)``.

        >>> import functrans.numpy as fnp
        >>> round(fnp.asarray(2.7))
        Array(3., dtype=float64, weak_type=True)
        """
        return self.round(0 if ndigits is None else ndigits)

    def __repr__(self):
        shape = f", shape={self.shape}" if self.size == 0 else ""   # as JAX: Array([], ...)
        return "Array(" + np.array2string(np.asarray(self), separator=", ", prefix="Array(") + \
            f"{shape}, dtype={self.dtype})"

    def __str__(self):      # numpy's (its elements as numbers: bfloat16's too, not Arrays)
        return str(np.asarray(self))

    def __hash__(self):
        raise TypeError("unhashable type: a functrans Array (static arguments must be "
                        "hashable Python values)")

    # numpy's own methods, with results kept to the library's contract: an Array (never a
    # numpy scalar) of a supported dtype, as fnp and tracers give, computed as JAX does
    # without numpy's floating-point warnings (numpy_warnings). mean, var and std are
    # fnp's (attached by functrans.numpy), which never warn of empty slices.
    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        try:
            dt = canonical_dtype(dtype)
        except TypeError as e:
            raise TypeError(f"astype: {e}") from None
        if dtype_kind(dt) in "iu" and dtype_kind(self.dtype) in "fc":
            return float_to_int(self.view(np.ndarray), dt).view(type(self))
        return quiet_call(np.ndarray.astype, self, dt, order, casting, subok, copy)

    def round(self, decimals=0, out=None):
        no_out_argument("round", out)
        if dtype_kind(self.dtype) in "biu" and decimals >= 0:
            return self    # already integral; numpy would give float16 for bool
        if self.dtype in _NARROW and decimals:     # in float32, rounded once (as fnp.round)
            r = quiet_call(np.ndarray.round, self.astype(_F32), decimals)
            return _fix(r.astype(self.dtype))
        return _fix(quiet_call(np.ndarray.round, self, decimals))

    def sum(self, *a, **k):
        return _accumulated(np.ndarray.sum, self, 1, a, k)

    def prod(self, *a, **k):
        return _accumulated(np.ndarray.prod, self, 1, a, k)

    def cumsum(self, *a, **k):
        return _accumulated(np.ndarray.cumsum, self, 1, a, k)

    def cumprod(self, *a, **k):
        return _accumulated(np.ndarray.cumprod, self, 1, a, k)

    def argmax(self, *a, **k):
        return _fix(np.ndarray.argmax(self, *a, **k))

    def argmin(self, *a, **k):
        return _fix(np.ndarray.argmin(self, *a, **k))

    def trace(self, *a, **k):
        return _accumulated(np.ndarray.trace, self, 3, a, k)

    def take(self, *a, **k):
        return _fix(np.ndarray.take(self, *a, **k))

    def max(self, axis=None, out=None, keepdims=False, **k):
        if out is not None or k:          # initial=/where=: numpy's own (its zero signs)
            return _fix(np.ndarray.max(self, axis, out, keepdims, **k))
        return _fix(numpy_max(self.view(np.ndarray), axis, keepdims))

    def min(self, axis=None, out=None, keepdims=False, **k):
        if out is not None or k:
            return _fix(np.ndarray.min(self, axis, out, keepdims, **k))
        return _fix(numpy_min(self.view(np.ndarray), axis, keepdims))


class DeletedArray(Array):
    """An ``Array`` donated to a jitted function (``jit(donate_argnums=...)``): its buffer
    now holds that function's output, so every use raises, as a deleted array does in JAX.
    (``np.asarray`` of it still gives a view: numpy reads subclasses without asking.)"""

    def _deleted(self, *args, **kwargs):
        raise RuntimeError(
            f"Array has been deleted with shape={np.ndarray.__getattribute__(self, 'shape')}: "
            f"x.delete() was called, or it was donated to a jitted function (donate_argnums), "
            f"which wrote its result into the array's memory")

    def delete(self):
        pass        # deleting twice is allowed, as in JAX

    __array_ufunc__ = __array_function__ = __getitem__ = view = _deleted
    __float__ = __int__ = __bool__ = __iter__ = tolist = item = copy = astype = reshape = _deleted

    def is_deleted(self):
        return True

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

_F16, _F32 = np.dtype(np.float16), np.dtype(np.float32)
_NARROW = frozenset((_F16, bfloat16))


def _fix(r):
    """A numpy method's result as an Array (read-only: one numpy made and filled)."""
    if type(r) is Array and r.base is None:
        r.setflags(write=False)
    return r if type(r) is Array else tracing.wrap(r)


def _accumulated(method, x, dtype_at, a, k):
    """numpy's accumulating ``method`` (sum, prod, cumsum, cumprod, trace: ``dtype`` its
    positional argument ``dtype_at``) of Array ``x``; float16 accumulates in float32 and
    rounds once, as fnp's functions and JAX's (numpy's own sums round every partial sum
    to float16)."""
    dt = a[dtype_at] if len(a) > dtype_at else k.get("dtype")
    dt = x.dtype if dt is None else np.dtype(dt)
    if dtype_kind(dt) in "iu" and dtype_kind(x.dtype) in "fc":
        x = x.astype(dt)     # saturating, as under jit and in JAX (numpy's dtype= wraps)
    if dt not in _NARROW or dtype_kind(x.dtype) not in "fiub":
        return _fix(quiet_call(method, x, *a, **k))
    if len(a) > dtype_at:
        a = a[:dtype_at] + (_F32,) + a[dtype_at + 1:]
    else:
        k = dict(k, dtype=_F32)
    return _fix(quiet_call(np.asarray, quiet_call(method, x, *a, **k), dtype=dt))


def no_out_argument(name, out):
    """Refuse numpy's ``out=`` argument: arrays are immutable."""
    if out is not None:
        raise TypeError(f"{name}: the out argument is not supported (arrays are immutable)")


numpy_warnings.install()


# --------------------------------------------------------------------------- host values

_IR_DTYPES = frozenset(np.dtype(d) for d in ("float64", "float32", "int64", "int32", "bool",
                                             "uint32", "uint64", "complex128", "complex64"))


# numpy dtypes outside the IR's set, as the nearest supported one (no value changes except
# float128's extra precision)
_NEAREST = {"i": np.dtype(np.int64), "u": np.dtype(np.uint64), "f": np.dtype(np.float64),
            "c": np.dtype(np.complex128)}


def _nearest_supported(dt):
    try:
        return canonical_dtype(dt)
    except TypeError:
        pass
    if dtype_kind(dt) in "iu" and dt.itemsize <= 4:
        return np.dtype(np.uint32) if dtype_kind(dt) == "u" else np.dtype(np.int32)
    if dtype_kind(dt) in _NEAREST:
        return _NEAREST[dtype_kind(dt)]
    raise TypeError(f"cannot convert an array of dtype {dt} to a supported dtype")


def float_to_int(x: np.ndarray, dtype) -> np.ndarray:
    """JAX's (XLA's) float -> integer conversion, the rule of ``astype`` and
    ``lax.convert_element_type`` on every backend: truncation toward zero, saturating at
    the integer dtype's range, NaN -> 0 (numpy's result for those is whatever the
    machine's instruction gives: INT_MIN on x86, a wrapped or saturated value elsewhere).
    A complex value converts its real part.

    >>> float_to_int(np.array([300.7, -5.9, np.nan, -np.inf, 1e20]), np.uint8).tolist()
    [255, 0, 0, 0, 255]
    """
    x = np.asarray(x)
    if x.dtype.kind == "c":
        x = x.real
    if x.dtype.itemsize < 4:            # float16 / bfloat16: exactly in float32
        x = x.astype(np.float32)
    info = np.iinfo(dtype)
    bits = 8 * info.dtype.itemsize
    # bounds exact in every float format: values strictly between them truncate into range
    lo = 0.0 if info.min == 0 else -(2.0 ** (bits - 1))
    hi = 2.0 ** bits if info.min == 0 else 2.0 ** (bits - 1)
    inside = ((x >= lo) if info.min == 0 else (x > lo)) & (x < hi)
    with np.errstate(all="ignore"):
        out = np.where(inside, x, 0).astype(info.dtype)
    out[x >= hi] = info.max
    if info.min:
        out[x <= lo] = info.min
    return out


def float_to_uint32(x: np.ndarray) -> np.ndarray:
    """``x.astype(uint32)`` of a float array by the rule the native backends compute (C's
    conversion through 64 bits: out-of-range values wrap modulo 2**32, |x| >= 2**63 and
    infinities give 0, NaN 2**31). numpy's own answer for out-of-range values depends on
    the array's length (its SIMD and scalar loops differ), so eager and compiled results
    would disagree.

    >>> float_to_uint32(np.array([-1.0, 3e9, -2.5e9, np.nan])).tolist()
    [4294967295, 3000000000, 1794967296, 2147483648]
    """
    with np.errstate(all="ignore"):
        out = np.asarray(x.astype(np.int64).astype(np.uint32))
    out[np.isnan(x)] = 1 << 31
    return out


def host_array(x, dtype=None):
    """An ``Array`` of a host value (no tracer inside), checked as every entry point checks
    one: strings, None and object arrays raise TypeError, other dtypes outside the IR's
    set become the nearest one
    (float16 stays, float128 becomes float64); ``dtype`` converts (quietly: 1e300 as
    float32 is inf, as in JAX).

    >>> host_array([1, 2]).dtype, host_array(2.5, "float32").dtype
    (dtype('int64'), dtype('float32'))
    >>> host_array("ab")
    Traceback (most recent call last):
    TypeError: cannot convert 'ab' (type str) to an array
    """
    if dtype is not None:
        dtype = canonical_dtype(dtype)
    if isinstance(x, str) or x is None:
        raise TypeError(f"cannot convert {x!r:.60} (type {type(x).__name__}) to an array")
    if dtype == np.uint32 and getattr(x, "dtype", np.dtype(object)).kind == "f":
        arr = float_to_uint32(np.asarray(x))
    else:
        arr = np.asarray(x) if dtype is None else quiet_call(np.asarray, x, dtype=dtype)
        if arr is x or (arr.base is not None and np.may_share_memory(arr, x)):
            arr = _own_copy(x, arr)
    if arr.dtype == object or dtype_kind(arr.dtype) in "USVOM":
        raise TypeError(f"cannot convert {x!r:.60} (type {type(x).__name__}) to a numeric array")
    if dtype is None and arr.dtype not in _IR_DTYPES:
        arr = arr.astype(_nearest_supported(arr.dtype))
    return tracing.wrap(arr)


def _own_copy(x, arr):
    """``arr`` (which shares ``x``'s memory), copied if the caller could still write into
    that memory: an Array must not change when the numpy buffer it came from does (a data
    loader refilling one batch buffer), as ``jnp.asarray`` copies in JAX. Arrays and
    read-only numpy data are already immutable and stay shared."""
    if isinstance(x, Array) or not getattr(x, "flags", arr.flags).writeable:
        return arr
    return np.array(arr, copy=True)


# --------------------------------------------------------------------------- max / min

def _signed_zero_extreme(np_fn, negative_zero_wins):
    """numpy's max/min (``np_fn``), with the sign of a zero result as the native backends
    and JAX give it: -0.0 is below +0.0 wherever they are (numpy's answer depends on the
    order and on its SIMD path), so min({-0.0, +0.0}) is -0.0 and max of them +0.0."""
    def extreme(x, axis=None, keepdims=False):
        x = np.asarray(x)
        out = np.asarray(np_fn(x, axis=axis, keepdims=keepdims))
        if dtype_kind(x.dtype) != "f" or not (out == 0).any():
            return out
        zero, neg = x == 0, np.signbit(x)
        if negative_zero_wins:       # min: -0.0 if any -0.0 is in the slice
            negative = np.any(zero & neg, axis=axis, keepdims=keepdims)
        else:                        # max: -0.0 only if no +0.0 is
            negative = ~np.any(zero & ~neg, axis=axis, keepdims=keepdims)
        fixed = np.where(negative, -0.0, 0.0).astype(x.dtype)
        return np.asarray(np.where(out == 0, fixed, out), dtype=x.dtype)
    extreme.__name__ = np_fn.__name__
    return extreme


numpy_max = _signed_zero_extreme(np.max, negative_zero_wins=False)
numpy_min = _signed_zero_extreme(np.min, negative_zero_wins=True)


def winning_zero(v, negative_wins: bool):
    """Where ``v`` is the zero that wins a max (+0.0) or, with ``negative_wins``, a min
    (-0.0)."""
    return (v == 0) & (np.signbit(v) == negative_wins)


def signed_zero_result(out, won, negative_wins: bool):
    """``out`` (a max, or with ``negative_wins`` a min) with each zero made the zero that
    wins where ``won`` (a winning zero took part), else the other one: -0.0 is below
    +0.0, as JAX orders them (numpy keeps whichever came first on a tie).

    >>> signed_zero_result(np.float64(-0.0), True, False).item()
    0.0
    """
    out = np.asarray(out)
    if dtype_kind(out.dtype) != "f":
        return out
    zero = out == 0
    if not zero.any():
        return out
    flip = zero & (np.signbit(out) != (np.asarray(won) == negative_wins))
    return np.where(flip, -out, out)


def _signed_zero_pair(np_fn, negative_wins):
    def pair(x, y):
        out = np_fn(x, y)
        if dtype_kind(out.dtype) != "f" or not (out == 0).any():    # the common case: no work
            return out
        return signed_zero_result(out, winning_zero(x, negative_wins)
                                  | winning_zero(y, negative_wins), negative_wins)
    pair.__name__ = np_fn.__name__
    pair.__doc__ = (f"``numpy.{np_fn.__name__}`` with -0.0 below +0.0 in either order, "
                    "as JAX's (numpy gives the first operand of a tie).")
    return pair


numpy_maximum = _signed_zero_pair(np.maximum, negative_wins=False)
numpy_minimum = _signed_zero_pair(np.minimum, negative_wins=True)


def _signed_zero_at(np_fn, negative_wins):
    def at(out, index, u):
        won = winning_zero(out, negative_wins) if dtype_kind(out.dtype) == "f" else None
        np_fn.at(out, index, u)
        if won is not None:
            np.logical_or.at(won, index, winning_zero(u, negative_wins))
            out[...] = signed_zero_result(out, won, negative_wins)
    at.__doc__ = (f"``numpy.{np_fn.__name__}.at`` in place, with -0.0 below +0.0 as "
                  "JAX's (numpy keeps the first of a tie).")
    return at


maximum_at = _signed_zero_at(np.maximum, negative_wins=False)
minimum_at = _signed_zero_at(np.minimum, negative_wins=True)


def numpy_sign(x):
    """``numpy.sign`` with JAX's zeros: a zero keeps its sign (``sign(-0.0)`` is -0.0;
    numpy gives 0.0).

    >>> numpy_sign(np.array([-0.0, -2.0, 0.0])).tolist()
    [-0.0, -1.0, 0.0]
    """
    out = np.sign(x)
    if dtype_kind(out.dtype) != "f" or not (out == 0).any():
        return out
    return np.asarray(np.where(out == 0, x, out), out.dtype)


def numpy_remainder(x, y):
    """``numpy.remainder`` with JAX's zeros: a zero result has the dividend's sign (JAX
    computes C's fmod, then adds ``y`` where the signs differ); numpy gives it the
    divisor's.

    >>> numpy_remainder(np.array([-4.0, 4.0]), np.array([2.0, -2.0])).tolist()
    [-0.0, 0.0]
    """
    out = np.remainder(x, y)
    if dtype_kind(out.dtype) != "f" or not (out == 0).any():
        return out
    return np.asarray(np.where(out == 0, np.copysign(out, x), out), out.dtype)


def numpy_floor_divide(x, y):
    """``numpy.floor_divide`` with JAX's zeros: a zero quotient has the divisor's sign
    (``-1.0 // -3.0`` is -0.0 in JAX, 0.0 in numpy).

    >>> numpy_floor_divide(np.array([-1.0, -0.0]), np.array([-3.0, np.inf])).tolist()
    [-0.0, 0.0]
    """
    out = np.floor_divide(x, y)
    if dtype_kind(out.dtype) != "f" or not (out == 0).any():
        return out
    return np.asarray(np.where(out == 0, np.copysign(out, y), out), out.dtype)
