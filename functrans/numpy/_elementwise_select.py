"""``functrans.numpy`` selection and complex-part functions: ``where``, ``clip``,
``real``, ``imag``, ``conjugate`` (written with ``_elementwise``; ``functrans.numpy``
exports both).

>>> import functrans.numpy as fnp
>>> fnp.clip(fnp.arange(4), 1, 2).tolist()
[1, 1, 2, 2]
"""
from __future__ import annotations

import builtins

import numpy as np

from jaxpr_ir import dtype_kind

from ..array import Array as _Array, numpy_maximum, numpy_minimum
from ..errors import ConcretizationError
from ..numpy_warnings import quiet_call
from ..tracing import Tracer, unchanged, unshared, wrap
from ..primitives import elementwise as E
from ._elementwise import (SUPPORTED, WIDEN, kept_small, cast_to, check_args, eager_call,
                           has_bf16, out_dtype_of)
from ._util import (all_weak, broadcast_shapes, broadcast_to_shape, promote, result_dtype, shape_of,
                    weakly)
from . import _promotion_mode
from ..array import Array
from ..key_array import KeyArray, key_words
from ..typing import ArrayLike
from ..weak_values import WEAKISH, WeakArray, weak_call, weak_operands, weak_view

__all__ = ["clip", "real", "imag", "conjugate", "conj"]   # where: _setops' (size=)


# --------------------------------------------------------------------------- complex parts

def _complex_part(name, np_fn, on_complex, on_real, doc, widen=False):
    """``fnp.real``/``imag``/``conjugate``: numpy eagerly (``widen``: unsupported result
    dtypes recomputed wider); traced, ``on_complex(x)`` for complex dtypes, else
    ``on_real(x)``."""
    def f(x: ArrayLike) -> Array:
        if not isinstance(x, Tracer):
            check_args(name, x)
            if type(x) in WEAKISH and type(x) is not bool:      # typed as under jit
                return weak_call(f, (x,), np_fn)
            return eager_call(np_fn, (x,)) if widen else wrap(unshared(quiet_call(np_fn, x), (x,)))
        if dtype_kind(x.dtype) == "c":
            return on_complex(x)
        return on_real(x)
    f.__name__ = name
    f.__doc__ = doc
    return f


def _part_doc(name, summary, result):
    return f"{summary}\n\n>>> import functrans.numpy as fnp\n>>> fnp.{name}(2.0).item()\n{result}\n"


real = _complex_part("real", np.real, E.real, lambda x: x,
                     _part_doc("real", "The real part (``x`` itself for real dtypes).", 2.0))
imag = _complex_part("imag", np.imag, E.imag, lambda x: weakly(E.full_like(x, 0), x.weak_type),
                     _part_doc("imag", "The imaginary part (zeros of ``x``'s dtype for real "
                               "dtypes).", 0.0))
conjugate = _complex_part("conjugate", np.conjugate, E.conj,
                          lambda x: cast_to(x, out_dtype_of("conjugate", np.conjugate, x.dtype)),
                          _part_doc("conjugate", "The complex conjugate (``x`` itself for real "
                                    "dtypes).", 2.0), widen=True)
conj = conjugate


# --------------------------------------------------------------------------- clip / where

_NO_VALUE = object()


def _int_bound_in_range(x, bound):
    """A Python-int bound of an integer array, clamped to the array's dtype (as numpy's and
    JAX's clip: ``clip(uint8, -1, 2)`` is ``clip(uint8, 0, 2)``, not an OverflowError)."""
    kind = dtype_kind(getattr(x, "dtype", np.float64))
    if type(bound) is not int or kind not in "iu":
        return bound
    info = np.iinfo(x.dtype)
    return builtins.min(builtins.max(bound, int(info.min)), int(info.max))


def _np_clip(x, lo, hi):
    """numpy's clip with JAX's signed zeros (``minimum(hi, maximum(lo, x))``, -0.0 below
    +0.0): clip(-0.0, 0.0, 1.0) is 0.0."""
    out = np.clip(x, lo, hi)
    if dtype_kind(out.dtype) != "f" or not (out == 0).any():
        return out
    x = x if lo is None else numpy_maximum(lo, x)
    return np.asarray(x if hi is None else numpy_minimum(hi, x), out.dtype)


def clip(x: ArrayLike, /, min: ArrayLike = _NO_VALUE, max: ArrayLike = _NO_VALUE, *,  # noqa: A002
         a_min: ArrayLike = _NO_VALUE, a_max: ArrayLike = _NO_VALUE) -> Array:
    """Limit ``x`` to ``[min, max]`` (either may be None), as ``numpy.clip``; the
    parameters are JAX's and the Array API's (numpy's ``a_min=``/``a_max=`` keywords are
    accepted too).

    >>> import functrans.numpy as fnp
    >>> fnp.clip(fnp.arange(5), 1, 3).tolist()
    [1, 1, 2, 3, 3]
    """
    lo = a_min if a_min is not _NO_VALUE else (None if min is _NO_VALUE else min)
    hi = a_max if a_max is not _NO_VALUE else (None if max is _NO_VALUE else max)
    if (a_min is not _NO_VALUE and min is not _NO_VALUE) or \
            (a_max is not _NO_VALUE and max is not _NO_VALUE):
        raise TypeError("clip: give each bound once (a_min or min, a_max or max)")
    bounds = [b for b in (lo, hi) if b is not None]
    if not any(isinstance(v, Tracer) for v in [x] + bounds):
        check_args("clip", x, *bounds)
        if _promotion_mode.ACTIVE:       # as the traced path's promote
            _promotion_mode.check_operands("clip", [x] + bounds)
        if not bounds:
            return unchanged(x)
        broadcast_shapes("clip", *[shape_of(v) for v in [x] + bounds])
        # weakly typed operands, or a Python number clipped to arrays (numpy would make
        # it a float64 array: clip(1.2, float16 bounds) is float16 in JAX): as under jit
        if weak_operands([x] + bounds) or (type(x) in WEAKISH and type(x) is not bool):
            return weak_call(lambda v, *b: clip(v, b[0] if lo is not None else None,
                                                b[-1] if hi is not None else None), [x] + bounds)
        return eager_call(lambda *a: _np_clip(a[0], lo if lo is None else a[1],
                                          hi if hi is None else a[-1]), [x] + bounds)
    check_args("clip", x, *bounds)
    lo, hi = _int_bound_in_range(x, lo), _int_bound_in_range(x, hi)
    bounds = [b for b in (lo, hi) if b is not None]
    vals = promote("clip", x, *bounds)
    out = vals[0]
    if lo is not None:
        out = E.max(out, vals[1])
    if hi is not None:
        out = E.min(out, vals[-1])
    return out


def where(condition: ArrayLike, x: ArrayLike = _NO_VALUE,
          y: ArrayLike = _NO_VALUE) -> Array | tuple[Array, ...]:
    """``x`` where ``condition`` holds, else ``y`` (broadcast together, numpy 2 dtypes).

    The one-argument form ``where(condition)`` (the indices of the true entries) has a
    data-dependent shape, so it works only outside transforms.

    >>> import functrans.numpy as fnp
    >>> fnp.where(fnp.arange(3) > 0, 1.0, -1.0).tolist()
    [-1.0, 1.0, 1.0]
    """
    if isinstance(x, KeyArray) or isinstance(y, KeyArray):   # typed keys: select words
        c = condition if isinstance(condition, Tracer) else np.asarray(condition)
        c = c[..., None]
        return KeyArray(where(c, key_words("where", x), key_words("where", y)))
    if x is _NO_VALUE and y is _NO_VALUE:
        if isinstance(condition, Tracer):
            raise ConcretizationError(
                f"where(condition) with one argument returns the indices of the true "
                f"entries of a traced {condition.aval.str_short()}, whose number is not "
                "known while tracing (a data-dependent shape). Use the three-argument "
                "form where(condition, x, y) instead.")
        check_args("where", condition)
        return tuple(wrap(i) for i in np.nonzero(condition))
    if x is _NO_VALUE or y is _NO_VALUE:
        raise ValueError("where: give both x and y, or neither")
    if _promotion_mode.ACTIVE:       # numpy_dtype_promotion; no rank check, as JAX's where
        _promotion_mode.check_operands("where", (x, y), ranks=False)
    if not (isinstance(condition, Tracer) or isinstance(x, Tracer) or isinstance(y, Tracer)):
        check_args("where", condition, x, y)
        broadcast_shapes("where", shape_of(condition), shape_of(x), shape_of(y))
        if type(x) is WeakArray or type(y) is WeakArray:     # weakly typed arrays: as jit
            return weak_call(where, (condition, x, y))
        r = np.where(*[np.asarray(v) if type(v) is _Array else v for v in (condition, x, y)])
        if has_bf16((x, y)):     # JAX's bfloat16 promotion, as traced (numpy's: float32)
            return wrap(r.astype(result_dtype(x, y)))
        # int8/uint8 kept when a choice has it, as jit keeps it (and fnp's arithmetic)
        if r.dtype in SUPPORTED or kept_small(r.dtype, (x, y)):   # Python numbers: weak, as jit
            weak = type(x) in WEAKISH and type(y) in WEAKISH and all_weak((x, y))
            return weak_view(r) if weak and dtype_kind(r.dtype) in "iufc" else r.view(_Array)
        return wrap(r.astype(WIDEN[dtype_kind(r.dtype)]))
    check_args("where", condition, x, y)
    shape = broadcast_shapes("where", shape_of(condition), shape_of(x), shape_of(y))
    x, y = promote("where", x, y, checked=False, ranks=False)     # checked above
    x, y = broadcast_to_shape(x, shape), broadcast_to_shape(y, shape)
    if isinstance(condition, Tracer):
        cond = cast_to(condition, np.dtype(np.bool_))
    else:
        cond = np.asarray(condition).astype(bool)
    return E.select_n(broadcast_to_shape(cond, shape), y, x)
