"""dtype helpers and scalar types of ``functrans.numpy``: ``finfo iinfo promote_types
result_type can_cast issubdtype isdtype`` and numpy's abstract and sized scalar types.

These are static (they read dtypes, never values) and are numpy's own objects.
``result_type`` follows numpy 2 (NEP 50), as the rest of functrans does; bfloat16 (JAX's
type, ml_dtypes') promotes as in JAX (``bf16_promoted``) and is a ``floating`` dtype.

>>> import functrans.numpy as fnp
>>> fnp.finfo(fnp.float32).bits
32
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import bfloat16
from ..tracing import Tracer
from typing import Any
from ..array import Array
from ..key_array import KeyDtype
from ..typing import ArrayLike, DTypeLike

__all__ = ["finfo", "iinfo", "promote_types", "result_type", "can_cast", "issubdtype",
           "isdtype", "generic", "number", "inexact", "floating", "complexfloating",
           "integer", "signedinteger", "unsignedinteger", "character", "flexible", "object_"]


def _dt(x):
    """The dtype of an array or tracer; dtypes, scalar types and names pass through."""
    if isinstance(x, (type, np.dtype, str)):
        return x
    return x.dtype if isinstance(x, Tracer) or hasattr(x, "dtype") else x


_PY_NUMBERS = (bool, int, float)


def bf16_promoted(keys, dt: np.dtype) -> np.dtype:
    """``dt`` (numpy's promotion of ``keys``: dtypes and Python scalars) with JAX's rule
    for bfloat16: integers, bools and Python numbers adapt to it (ml_dtypes promotes
    int32 or int64 with bfloat16 to float64); float16 and float32 give float32.

    >>> bf16_promoted([bfloat16, np.dtype(np.int32)], np.dtype(np.float64))
    dtype(bfloat16)
    """
    if dt == bfloat16 or not any(k is bfloat16 or k == bfloat16 for k in keys):
        return dt
    for k in keys:
        if isinstance(k, complex) or not (type(k) in _PY_NUMBERS or k == bfloat16   # (not
                                          or np.dtype(k).kind in "biu"):  # np.float64: strong)
            return dt
    return bfloat16


def _is_bf16(x) -> bool:
    try:
        return np.dtype(_dt(x)) == bfloat16
    except TypeError:         # numpy's abstract types (np.floating)
        return False


def finfo(dtype: DTypeLike) -> np.finfo:
    """Machine limits of a floating dtype (numpy's ``finfo``).

    >>> bool(finfo(np.float64).eps == np.finfo(np.float64).eps)
    True
    """
    return np.finfo(_dt(dtype))


def iinfo(int_type: DTypeLike) -> np.iinfo:
    """Machine limits of an integer dtype (numpy's ``iinfo``).

    >>> iinfo(np.int32).max
    2147483647
    """
    return np.iinfo(_dt(int_type))


def promote_types(type1: DTypeLike, type2: DTypeLike) -> np.dtype:
    """The smallest dtype both promote to.

    >>> promote_types(np.int32, np.float32)
    dtype('float64')
    """
    t1, t2 = np.dtype(_dt(type1)), np.dtype(_dt(type2))
    return bf16_promoted((t1, t2), np.promote_types(t1, t2))


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """numpy 2's result dtype (Python scalars are weak).

    >>> import functrans.numpy as fnp
    >>> result_type(fnp.ones(2, fnp.float32), 2.0)
    dtype('float32')
    """
    keys = [_dt(a) for a in arrays_and_dtypes]
    if any(isinstance(k, KeyDtype) for k in keys):   # typed keys promote with nothing
        if all(isinstance(k, KeyDtype) for k in keys):
            return keys[0]
        raise ValueError("dtype=key<fry> is not a valid dtype for JAX type promotion "
                         f"(result_type of {', '.join(map(str, keys))})")
    keys = [k if isinstance(k, _PY_NUMBERS + (complex,)) else np.dtype(k) for k in keys]
    return bf16_promoted(keys, np.result_type(*keys))


def can_cast(from_: DTypeLike, to: DTypeLike, casting: str = "safe") -> bool:
    """Whether ``from_`` (a dtype or array) casts to ``to`` under ``casting``.

    >>> can_cast(np.int32, np.float64)
    True
    """
    return np.can_cast(_dt(from_), to, casting)


def issubdtype(arg1: DTypeLike, arg2: DTypeLike) -> bool:
    """numpy's ``issubdtype``.

    >>> issubdtype(np.float32, np.floating), issubdtype(bfloat16, np.inexact)
    (True, True)
    """
    if isinstance(arg1, KeyDtype):              # a typed key's: a subtype of prng_key
        return issubclass(arg1.type, arg2) if isinstance(arg2, type) else arg2 == arg1
    if _is_bf16(arg1) and not _is_bf16(arg2):   # JAX's: a float type (ml_dtypes: np.generic)
        return arg2 in (np.floating, np.inexact, np.number, np.generic)
    return np.issubdtype(arg1, arg2)


def isdtype(dtype: DTypeLike, kind: str | DTypeLike | tuple[str | DTypeLike, ...]) -> bool:
    """Array-API ``isdtype``: ``kind`` is a dtype, a kind name or a tuple of them.

    >>> isdtype(np.float32, "real floating"), isdtype(np.int8, ("bool", "integral"))
    (True, True)
    """
    if _is_bf16(dtype):       # numpy raises for it; JAX's a real floating type
        kinds = kind if isinstance(kind, tuple) else (kind,)
        return any(k in ("real floating", "numeric") or _is_bf16(k) for k in kinds)
    return np.isdtype(np.dtype(dtype), kind)


generic = np.generic
number = np.number
inexact = np.inexact
floating = np.floating
complexfloating = np.complexfloating
integer = np.integer
signedinteger = np.signedinteger
unsignedinteger = np.unsignedinteger
character = np.character
flexible = np.flexible
object_ = np.object_
