"""``jax.dtypes``: ``float0`` (the tangent dtype of integer and boolean values: no data),
``canonicalize_dtype``, ``issubdtype``, ``result_type``, ``finfo``, ``iinfo``,
``scalar_type_of``, ``itemsize_bits``, and the ``extended`` / ``prng_key`` classes for
``issubdtype`` checks. 64-bit types are always on here, so canonicalising changes nothing
but Python types; promotion is numpy 2's (README: "Differences from JAX").

>>> import numpy as np
>>> from functrans import dtypes
>>> np.zeros((), dtypes.float0).dtype == dtypes.float0
True
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxpr_ir import bfloat16 as _BF16, dtype_kind

from .api_util import FLOAT0
from .key_array import extended, prng_key
from .numpy import finfo, iinfo, issubdtype, result_type
# JAX's error for a promotion ``numpy_dtype_promotion="strict"`` forbids: the class that
# functrans.numpy raises (one class, so ``except ft.dtypes.TypePromotionError`` catches it)
from .numpy._promotion_mode import TypePromotionError
from .typing import DTypeLike

__all__ = ["float0", "bfloat16", "canonicalize_dtype", "issubdtype", "result_type", "finfo",
           "iinfo",
           "scalar_type_of", "itemsize_bits", "extended", "prng_key", "TypePromotionError"]

float0 = FLOAT0
bfloat16 = _BF16.type     # JAX's jax.dtypes.bfloat16 (ml_dtypes')


def canonicalize_dtype(dtype: DTypeLike, allow_extended_dtype: bool = False) -> np.dtype:
    """``dtype`` as a numpy dtype: unchanged (64-bit types are always on here).

    >>> canonicalize_dtype(float)
    dtype('float64')
    """
    return np.dtype(dtype)


def scalar_type_of(x: Any) -> type:
    """The Python scalar type of ``x``'s dtype: bool, int, float or complex.

    >>> scalar_type_of(np.float32(1.0))
    <class 'float'>
    """
    kind = dtype_kind(x if isinstance(x, np.dtype) else np.asarray(x).dtype)
    return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[kind]


def itemsize_bits(dtype: DTypeLike) -> int:
    """Bits per element of ``dtype`` (0 for float0).

    >>> itemsize_bits(np.float32)
    32
    """
    dt = np.dtype(dtype)
    return 0 if dt == float0 else 8 * dt.itemsize
