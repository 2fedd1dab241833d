"""float16 / bfloat16 arguments of special functions, as JAX 0.10.2 treats them: the
function runs on their float32 values and its float results round once to the 16-bit
dtype (XLA computes its own 16-bit special functions so). Shared by
``functrans.scipy.special`` and ``functrans.lax`` (digamma, igamma, betainc... under
JAX's lax names).

>>> import numpy as np
>>> from functrans.scipy._special_gamma import digamma
>>> in_float32_for_16_bit(digamma)(np.array([0.5], np.float16)).dtype
dtype('float16')
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from jaxpr_ir import bfloat16, dtype_kind
from .. import numpy as fnp
from ..tree_util import tree_map

SIXTEEN_BIT = (np.dtype(np.float16), bfloat16)


def in_float32_for_16_bit(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, which with float16/bfloat16 arguments (its float arguments promoting to a
    16-bit float) is computed on their float32 values, its float results rounded once to
    that dtype; any other call goes to ``fn`` unchanged."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        if not any(getattr(a, "dtype", None) in SIXTEEN_BIT for a in args):
            return fn(*args, **kwargs)
        # (integer orders, as expn's and polygamma's n, take no part, as in JAX)
        dt = fnp.result_type(*[a for a in args if isinstance(a, float) or (
            hasattr(a, "dtype") and dtype_kind(a.dtype) in "fc")])
        if dt not in SIXTEEN_BIT:
            return fn(*args, **kwargs)
        wide = [fnp.asarray(a, np.float32) if getattr(a, "dtype", None) in SIXTEEN_BIT
                else a for a in args]
        return tree_map(lambda o: fnp.asarray(o, dt) if dtype_kind(o.dtype) == "f" else o,
                        fn(*wide, **kwargs))
    return run
