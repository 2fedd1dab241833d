"""Dtypes and the abstract value of an array: its shape, dtype and weak type.

The IR knows a small closed set of dtypes; each has a short name used by the
printer (``f64[3,4]``) and read back by the parser. The IR itself never promotes: an
equation's operands already share a dtype. ``functrans.numpy`` promotes as numpy 2
(NEP 50); for ``uint64`` that is also JAX's rule with x64 enabled on every pair of
integer or bool dtypes (``uint64`` with a signed integer gives ``float64``, with an
unsigned one or bool ``uint64``, and a weak Python int adapts to ``uint64``).

>>> ShapedArray((3,), float32)
ShapedArray(f32[3])
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

float64 = np.dtype("float64")
float32 = np.dtype("float32")
float16 = np.dtype("float16")
# JAX's bfloat16 (ml_dtypes'): numpy calls its kind "V", ``dtype_kind`` calls it "f"
bfloat16 = np.dtype(ml_dtypes.bfloat16)
int64 = np.dtype("int64")
int32 = np.dtype("int32")
int16 = np.dtype("int16")
int8 = np.dtype("int8")
uint64 = np.dtype("uint64")
uint32 = np.dtype("uint32")
uint16 = np.dtype("uint16")
uint8 = np.dtype("uint8")
bool_ = np.dtype("bool")
complex64 = np.dtype("complex64")
complex128 = np.dtype("complex128")

# short name used in printed types <-> dtype
SHORT_NAMES = {
    float64: "f64", float32: "f32", float16: "f16", bfloat16: "bf16",
    int64: "i64", int32: "i32", int16: "i16", int8: "i8",
    uint64: "u64", uint32: "u32", uint16: "u16", uint8: "u8", bool_: "bool",
    complex64: "c64", complex128: "c128",
}
FROM_SHORT = {v: k for k, v in SHORT_NAMES.items()}
SUPPORTED = frozenset(SHORT_NAMES)
# each supported np.dtype instance has its own class (np.dtypes.Float64DType, ...)
_DTYPE_CLASSES = frozenset(d.__class__ for d in SUPPORTED)


def canonical_dtype(dtype) -> np.dtype:
    """Return the ``np.dtype`` for a dtype-like, or raise ``TypeError`` naming it.

    >>> canonical_dtype("float32")
    dtype('float32')
    """
    if isinstance(dtype, np.dtype) and dtype in SUPPORTED:
        return dtype
    if isinstance(dtype, str) and dtype in FROM_SHORT:
        return FROM_SHORT[dtype]
    try:
        d = np.dtype(dtype)
    except TypeError:
        d = None
    if d is None or d not in SUPPORTED:
        names = ", ".join(sorted(str(k) for k in SUPPORTED))
        raise TypeError(f"unknown or unsupported dtype {dtype!r}; supported: {names}")
    return d


def dtype_kind(dtype) -> str:
    """numpy's kind letter of ``dtype``, with bfloat16 a float ("f"; numpy says "V").

    >>> dtype_kind(bfloat16), dtype_kind(np.int8)
    ('f', 'i')
    """
    try:
        k = dtype.kind            # (the hot case: a np.dtype)
    except AttributeError:
        dtype = np.dtype(dtype)
        k = dtype.kind
    return "f" if k == "V" and dtype == bfloat16 else k


def is_float(dtype) -> bool:
    return dtype_kind(dtype) == "f"


def is_complex(dtype) -> bool:
    return np.dtype(dtype).kind == "c"


def is_inexact(dtype) -> bool:
    return dtype_kind(dtype) in "fc"


def is_integer(dtype) -> bool:
    return np.dtype(dtype).kind in "iu"


def is_bool(dtype) -> bool:
    return np.dtype(dtype).kind == "b"


class ShapedArray:
    """The type of an IR value: a shape (tuple of ints), a dtype and a weak-type flag.

    A weak type marks a value that came from a Python scalar; under numpy 2
    promotion (NEP 50) it takes the dtype of the other operand.

    >>> str(ShapedArray((2, 3), float64))
    'f64[2,3]'
    """
    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, weak_type=False):
        # fast path for what the library itself passes: a tuple of ints and a dtype
        if type(shape) is not tuple or (shape and not all(type(d) is int for d in shape)):
            shape = tuple(int(d) for d in shape)
        self.shape = shape
        self.dtype = (dtype if dtype.__class__ in _DTYPE_CLASSES and dtype.isnative
                      else canonical_dtype(dtype))
        self.weak_type = bool(weak_type)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def update(self, shape=None, dtype=None, weak_type=None):
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def strip_weak(self):
        return ShapedArray(self.shape, self.dtype, False) if self.weak_type else self

    def __eq__(self, other):
        return (isinstance(other, ShapedArray) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def str_short(self):
        s = f"{SHORT_NAMES[self.dtype]}[{','.join(map(str, self.shape))}]"
        return s + "{weak}" if self.weak_type else s

    __str__ = str_short

    def __repr__(self):
        return f"ShapedArray({self.str_short()})"


def aval_of(x) -> ShapedArray:
    """The ShapedArray of a concrete value (numpy array, numpy scalar or Python scalar).

    Python scalars are weakly typed: bool -> bool, int -> int64, float -> float64,
    complex -> complex128.
    """
    if isinstance(x, np.ndarray):
        return ShapedArray(x.shape, x.dtype)
    if isinstance(x, np.generic):
        return ShapedArray((), x.dtype)
    if isinstance(x, bool):
        return ShapedArray((), bool_, True)
    if isinstance(x, int):
        return ShapedArray((), int64, True)
    if isinstance(x, float):
        return ShapedArray((), float64, True)
    if isinstance(x, complex):
        return ShapedArray((), complex128, True)
    raise TypeError(f"value of type {type(x).__name__} is not an array: {x!r:.60}")
