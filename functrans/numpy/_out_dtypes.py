"""Result dtypes of ``functrans.numpy``'s elementwise functions: numpy's own type
resolution per input dtypes (asked once, on empty arrays), widened to the supported
dtypes; and bfloat16 (JAX's ``jnp.bfloat16``, ml_dtypes' numpy type), promoted as in JAX
(``_util.bf16_promoted``: integers and bools adapt to bfloat16, float16 and float32 give
float32), each eager operation computed in float32 and rounded once to bfloat16, as XLA
computes it and as jit here does (``backends/llvm/half``).

>>> import numpy as np, functrans.numpy as fnp
>>> x = fnp.asarray([1.0, 2.0], fnp.bfloat16)
>>> fnp.sin(x).dtype, (x + np.int32(3)).dtype, (x + np.ones(2, np.float16)).dtype
(dtype(bfloat16), dtype(bfloat16), dtype('float32'))
>>> out_dtype_of("sin", np.sin, bfloat16)
dtype(bfloat16)
"""
from __future__ import annotations

import functools

import numpy as np

from jaxpr_ir import bfloat16, dtype_kind
from ..numpy_warnings import quiet_call
from ._util import result_dtype

__all__ = ["SUPPORTED", "WIDEN", "kept_small", "out_dtype_of", "has_bf16", "bf16_call"]

SUPPORTED = frozenset(np.dtype(d) for d in ("float64", "float32", "int64", "int32", "int16",
                                             "uint64", "uint32", "uint16", "bool", "complex64",
                                             "complex128"))
WIDEN = {"f": np.dtype(np.float64), "i": np.dtype(np.int64), "u": np.dtype(np.uint64),
          "c": np.dtype(np.complex128), "b": np.dtype(np.bool_)}


# small dtypes kept when an input has them (as numpy and JAX; float16 of sin(int8) is not)
_SMALL_INTS = frozenset(np.dtype(d) for d in ("int8", "uint8", "float16", bfloat16))


def _supported(dt, in_dtypes=()):
    if dt in SUPPORTED or (dt in _SMALL_INTS and dt in in_dtypes):
        return dt
    return WIDEN[dtype_kind(dt)]


def kept_small(dt, args):
    """Whether numpy's small (8-bit int, float16) result dtype is an argument's own."""
    return dt in _SMALL_INTS and any(getattr(a, "dtype", None) == dt for a in args)


@functools.lru_cache(maxsize=None)
def _np_out_dtype(np_fn, *dtypes):
    """numpy's result dtype of ``np_fn`` on these input dtypes (widened to a supported one),
    or the TypeError numpy raises when it has no loop for them; bfloat16 as float32's."""
    try:
        with np.errstate(all="ignore"):
            r = np_fn(*[np.empty(0, np.float32 if d == bfloat16 else d) for d in dtypes])
    except TypeError as e:
        return e
    if r.dtype == np.float32 and bfloat16 in dtypes:
        return bfloat16
    return _supported(r.dtype, dtypes)


def out_dtype_of(name: str, np_fn, *dtypes) -> np.dtype:
    """numpy's (supported) result dtype of ``np_fn`` on ``dtypes``; TypeError naming
    ``name`` when numpy has no loop for them.

    >>> out_dtype_of("sin", np.sin, np.dtype("int32"))
    dtype('float64')
    """
    r = _np_out_dtype(np_fn, *dtypes)
    if isinstance(r, Exception):
        shown = " and ".join(str(d) for d in dtypes)
        raise TypeError(f"{name}: not supported for dtype {shown}") from None
    return r

_F32 = np.dtype(np.float32)
_PY = (bool, int, float, complex)


def has_bf16(args) -> bool:
    """Whether an argument has dtype bfloat16.

    >>> has_bf16((1.0, np.ones(2, bfloat16))), has_bf16((np.ones(2),))
    (True, False)
    """
    for a in args:
        if getattr(a, "dtype", None) is bfloat16:    # (one instance: numpy's dtype registry)
            return True
    return False


def bf16_call(np_fn, args) -> np.ndarray:
    """``np_fn(*args)`` with a bfloat16 argument: operands in the promoted dtype (float32
    where that is bfloat16), a float result rounded once to bfloat16.

    >>> bf16_call(np.add, (np.ones(2, bfloat16), np.int32(2))).dtype
    dtype(bfloat16)
    """
    try:      # the promoted dtype per operand dtypes and weakness (Python numbers: by type)
        key = tuple(type(a) if isinstance(a, _PY) else (a.dtype, getattr(a, "weak_type", False))
                    for a in args)
        dt = _PROMOTED.get(key)
    except AttributeError:     # (a list)
        key = dt = None
    if dt is None:
        dt = result_dtype(*args)
        if key is not None:
            _PROMOTED[key] = dt
    if dt is bfloat16:      # every operand becomes bfloat16 first, as under jit and in JAX
        r = quiet_call(np_fn, *[_bf16_in_f32(a) for a in args])
    else:
        r = quiet_call(np_fn, *[a if isinstance(a, _PY) else np.asarray(a, dt) for a in args])
    if type(r) is not np.ndarray:
        r = np.asarray(r)
    if dt is bfloat16 and r.dtype.kind == "f":
        r = r.astype(bfloat16)
    return r


def _bf16_in_f32(a) -> np.ndarray:
    """Operand ``a`` of a bfloat16 operation rounded to bfloat16, held in float32 (exact):
    a Python 0.8, an int16 257 or a weak float32 value are rounded as JAX converts them
    (``bf16 * 0.8`` multiplies by 0.80078125)."""
    a = np.asarray(a)
    if a.dtype is not bfloat16:
        a = a.astype(bfloat16)
    return a.astype(_F32)


_PROMOTED: dict = {}
