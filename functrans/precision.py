"""``lax.Precision`` and the ``precision=`` / ``preferred_element_type=`` arguments of
the contraction functions (``lax.dot``, ``lax.dot_general``, ``fnp.matmul``, ``fnp.dot``,
``fnp.tensordot``, ``fnp.inner``, ``fnp.vdot``, ``fnp.vecdot``, ``fnp.einsum``, the
``fnp.linalg`` products and the ``lax.conv*`` functions).

``precision`` is accepted and checked but changes nothing: functrans computes every
product at the full precision of its dtype on every backend (there are no reduced-
precision matrix units to choose between). ``preferred_element_type`` is the result's
dtype: the lax functions pass it to the ``dot_general`` primitive, the numpy ones follow
the same rule (``numpy_contraction``): operands converted first only to a
higher-precision type, else the product converted.

>>> from functrans import lax
>>> import numpy as np
>>> lax.dot(np.ones(2, np.float32), np.ones(2, np.float32), precision=lax.Precision.HIGHEST,
...         preferred_element_type=np.float64).dtype
dtype('float64')
"""
from __future__ import annotations

import enum
import functools
import inspect
from typing import Sequence, Union

import numpy as np

from jaxpr_ir import bfloat16, canonical_dtype, dtype_kind
from .primitives import dot as _dot
from .primitives.elementwise import convert_element_type
from .tracing import Tracer, get_aval
from .typing import Array, ArrayLike, DTypeLike

__all__ = ["Precision", "check_precision", "dot", "dot_general", "batch_matmul",
           "with_precision_args",
           "einsum_with_precision_args"]


class Precision(enum.Enum):
    """JAX's precision levels for contractions (accepted; functrans always computes at
    the dtype's full precision).

    >>> import numpy as np
    >>> from functrans import lax
    >>> lax.dot(np.ones(3), np.ones(3), precision=lax.Precision.HIGHEST).item()
    3.0
    """
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    def __str__(self):
        return self.name


# what a ``precision=`` argument may be (JAX's ``PrecisionLike``): see check_precision
PrecisionLike = Union[None, str, Precision, tuple]
# dot_general's ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))
DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]],
                            tuple[Sequence[int], Sequence[int]]]

_NAMES = {"default": Precision.DEFAULT, "fastest": Precision.DEFAULT,
          "bfloat16": Precision.DEFAULT, "high": Precision.HIGH,
          "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH,
          "highest": Precision.HIGHEST, "float32": Precision.HIGHEST}


def check_precision(precision):
    """Validate a ``precision`` argument: None, a ``Precision``, one of JAX's names, or a
    pair of those (one per operand).

    >>> check_precision(("highest", Precision.HIGH))
    """
    if precision is None or isinstance(precision, Precision):
        return
    if isinstance(precision, str):
        if precision.lower() not in _NAMES:
            raise ValueError(f"precision: unknown name {precision!r}; use one of "
                             f"{sorted(_NAMES)} or lax.Precision")
        return
    if isinstance(precision, (tuple, list)) and len(precision) == 2:
        for p in precision:
            if isinstance(p, (tuple, list)):
                raise TypeError(f"precision: invalid value {precision!r}")
            check_precision(p)
        return
    raise TypeError(f"precision: expected None, a lax.Precision, a name or a pair, got "
                    f"{precision!r:.60}")


def _rank(dt: np.dtype) -> tuple:
    """XLA's HigherPrecisionType order (JAX's dot dtype rule): complex, then exponent
    range, mantissa, bit width, signedness."""
    c = np.dtype(dt.char.lower()) if dt.kind == "c" else dt
    fl = dtype_kind(c) == "f"
    bits = 1 if c.kind == "b" else c.itemsize * 8
    info = (128, 7) if c == bfloat16 else (np.finfo(c).maxexp, np.finfo(c).nmant) if fl \
        else (-1, -1)
    return (dt.kind == "c",) + info + (bits, c.kind != "u")


def _bit_width(dt: np.dtype) -> int:
    """JAX's width for the narrowing check: a complex type counts its component's bits."""
    return 1 if dt.kind == "b" else dt.itemsize * 4 if dt.kind == "c" else dt.itemsize * 8


def _product_dtype(operand_dtype, preferred):
    """The dtype ``dot_general`` computes in when asked for ``preferred``: XLA upcasts the
    operands only to a higher-precision type (int8 products accumulate in int32,
    float16 ones in float32); otherwise the product is formed in the operands' own
    dtype and converted (float32 operands with an int32 result truncate the float
    product; complex64 with a float32 result keep its real part; float64 with float32
    rounds once, at the end). Non-float operands may not ask for a narrower type, as
    JAX's check."""
    if preferred is None:
        return None
    dt, pt = np.dtype(operand_dtype), np.dtype(preferred)
    if dtype_kind(dt) != "f" and _bit_width(pt) < _bit_width(dt):
        raise TypeError(f"dot_general: preferred_element_type {pt} must not be narrower "
                        f"than the operands' type {dt}")
    return pt if _rank(pt) >= _rank(dt) else None


def _contract(fn, lhs, rhs, preferred, *args):
    """``fn(lhs, rhs, *args, product dtype)``, converted to ``preferred``."""
    product = _product_dtype(get_aval(lhs).dtype, preferred)
    out = fn(lhs, rhs, *args, product)
    if preferred is not None and get_aval(out).dtype != np.dtype(preferred):
        out = convert_element_type(out, np.dtype(preferred))
    return out


def _dtype_of(x) -> np.dtype:
    return get_aval(x).dtype if isinstance(x, Tracer) else np.asarray(x).dtype


_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _keeps(dt: np.dtype, pt: np.dtype) -> bool:
    """Whether JAX's ``result_type(dt, pt)`` is ``dt`` (its lattice: floats absorb
    integers, complex absorbs floats no wider than its parts)."""
    cd, cp = _CATEGORY[dtype_kind(dt)], _CATEGORY[dtype_kind(pt)]
    if cd != cp:
        return pt.itemsize * 2 <= dt.itemsize if (cd, cp) == (3, 2) else cd > cp
    if cd == 1:
        return np.promote_types(dt, pt) == dt
    return dt == pt or dt.itemsize > pt.itemsize


def numpy_contraction(fn, operands, preferred):
    """``fn(*operands)`` with JAX's ``preferred_element_type`` rule for the numpy
    contractions (``jnp.matmul``, ``dot``, ``einsum``, ...: ``lax.dot_general``'s): operands
    of one dtype are converted first only to a higher-precision type, else the product is
    formed in their dtype and converted (float32 operands asked for int32 truncate the
    float product, complex64 asked for float32 keep its real part); operands of mixed
    dtypes are converted to ``preferred``. Non-float operands may not ask for a narrower
    type (TypeError).

    >>> import numpy as np
    >>> numpy_contraction(np.dot, [np.array([1.5, 2.5], np.float32)] * 2, np.int32).item()
    8
    """
    if preferred is None:
        return fn(*operands)
    pt = canonical_dtype(preferred)
    dts = {_dtype_of(o) for o in operands}
    for dt in dts:
        product = _product_dtype(dt, pt)            # (raises for a narrowing)
    if len(dts) > 1 or product is not None:
        operands = [o if _dtype_of(o) == pt else convert_element_type(o, pt) for o in operands]
    out = fn(*operands)
    return out if _dtype_of(out) == pt else convert_element_type(out, pt)


def _same_dtype(lhs, rhs, preferred):
    """Operands of different dtypes, as JAX's dot: both converted to the higher-precision
    one (int8 with uint8 gives int8, float32 with int64 float32) or to
    ``preferred_element_type``; equal ranks of different dtypes raise."""
    lt, rt = get_aval(lhs).dtype, get_aval(rhs).dtype
    if lt == rt:
        return lhs, rhs
    if _rank(lt) == _rank(rt):
        raise TypeError(f"lax.dot_general argument type error: {lt}, {rt}")
    for dt in (lt, rt) if preferred is not None else ():
        _product_dtype(dt, preferred)   # a narrower type: raise, as JAX (not convert first)
    to = np.dtype(preferred) if preferred is not None else max(lt, rt, key=_rank)
    return tuple(convert_element_type(x, to) if get_aval(x).dtype != to else x
                 for x in (lhs, rhs))


def dot_general(lhs: ArrayLike, rhs: ArrayLike,
                dimension_numbers: DotDimensionNumbers,
                precision: PrecisionLike = None,
                preferred_element_type: DTypeLike | None = None) -> Array:
    """``lax.dot_general`` with JAX's ``precision`` and ``preferred_element_type``.

    >>> import numpy as np
    >>> dot_general(np.ones((2, 3)), np.ones((3,)), (((1,), (0,)), ((), ())),
    ...             precision="highest").tolist()
    [3.0, 3.0]
    """
    check_precision(precision)
    lhs, rhs = _same_dtype(lhs, rhs, preferred_element_type)
    return _contract(_dot.dot_general, lhs, rhs, preferred_element_type, dimension_numbers)


def dot(lhs: ArrayLike, rhs: ArrayLike, precision: PrecisionLike = None,
        preferred_element_type: DTypeLike | None = None, *,
        dimension_numbers: DotDimensionNumbers | None = None) -> Array:
    """``lax.dot`` with JAX's ``precision`` and ``preferred_element_type``; with
    ``dimension_numbers`` (JAX 0.10's) it is ``dot_general`` over them.

    >>> import numpy as np
    >>> float(dot(np.ones(3), np.ones(3), precision=Precision.HIGH))
    3.0
    >>> dot(np.ones((5, 2, 3)), np.ones((5, 3, 4)),
    ...     dimension_numbers=(((2,), (1,)), ((0,), (0,)))).shape
    (5, 2, 4)
    """
    if dimension_numbers is not None:
        return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type)
    check_precision(precision)
    lhs, rhs = _same_dtype(lhs, rhs, preferred_element_type)
    return _contract(_dot.dot, lhs, rhs, preferred_element_type)


def batch_matmul(lhs: ArrayLike, rhs: ArrayLike, precision: PrecisionLike = None) -> Array:
    """``lax.batch_matmul``: matrix products over the last two axes of operands of equal
    rank (at least 2) whose leading (batch) axes are equal (no broadcasting, as JAX).

    >>> import numpy as np
    >>> batch_matmul(np.ones((4, 2, 3)), np.ones((4, 3, 5))).shape
    (4, 2, 5)
    """
    check_precision(precision)
    ls = tuple(getattr(lhs, "shape", np.shape(lhs)))
    rs = tuple(getattr(rhs, "shape", np.shape(rhs)))
    if len(ls) < 2 or len(ls) != len(rs):
        raise ValueError(f"batch_matmul: operands need the same rank, at least 2; got shapes "
                         f"{ls} and {rs}")
    if ls[:-2] != rs[:-2]:
        raise ValueError(f"batch_matmul: batch dimensions differ: {ls} and {rs}")
    nb = len(ls) - 2
    batch = tuple(range(nb))
    return _dot.dot_general(lhs, rhs, (((nb + 1,), (nb,)), (batch, batch)), None)


def with_precision_args(fn):
    """``fn(a, b, ...)`` extended with keyword-only ``precision`` and
    ``preferred_element_type`` (``numpy_contraction``'s rule).

    >>> import numpy as np
    >>> with_precision_args(np.matmul)(np.ones(2), np.ones(2), precision="high").item()
    2.0
    """
    @functools.wraps(fn)
    def wrapped(a, b, *args, precision=None, preferred_element_type=None, **kwargs):
        check_precision(precision)
        return numpy_contraction(lambda x, y: fn(x, y, *args, **kwargs), (a, b),
                                 preferred_element_type)
    return _show_precision_args(wrapped, fn)


def _show_precision_args(wrapped, fn):
    """``wrapped`` whose signature is ``fn``'s plus the two keyword-only arguments (so
    ``inspect.signature`` shows what it takes, as JAX's does)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):      # a builtin without a signature
        return wrapped
    params = list(sig.parameters.values())
    kinds = [p.kind for p in params]
    if "precision" not in sig.parameters and inspect.Parameter.VAR_KEYWORD not in kinds:
        params += [inspect.Parameter("precision", inspect.Parameter.KEYWORD_ONLY,
                                     default=None, annotation="PrecisionLike"),
                   inspect.Parameter("preferred_element_type",
                                     inspect.Parameter.KEYWORD_ONLY, default=None,
                                     annotation="DTypeLike | None")]
        wrapped.__signature__ = sig.replace(parameters=params)
    return wrapped


def einsum_with_precision_args(einsum):
    """``einsum(subscripts, *operands)`` extended with ``precision`` (checked) and
    ``preferred_element_type`` (``numpy_contraction``'s rule).

    >>> import numpy as np
    >>> einsum_with_precision_args(np.einsum)("i,i", np.ones(2, np.float32), np.ones(2, np.float32),
    ...     preferred_element_type=np.float64).dtype
    dtype('float64')
    """
    @functools.wraps(einsum)
    def wrapped(subscripts, *operands, optimize=None, precision=None,
                preferred_element_type=None, **kwargs):
        check_precision(precision)
        def run(*ops):
            return einsum(subscripts, *ops, optimize=optimize, **kwargs)
        if preferred_element_type is None:
            return run(*operands)
        pt = canonical_dtype(preferred_element_type)
        if len(operands) == 1:
            # no product: JAX sums in the operand's dtype unless preferred outranks it
            (x,) = operands
            dt = _dtype_of(x)
            out = run(x if _keeps(dt, pt) else convert_element_type(x, pt))
            return out if _dtype_of(out) == pt else convert_element_type(out, pt)
        if len(operands) > 2 and any(_product_dtype(_dtype_of(o), pt) is None
                                     for o in operands):
            # JAX truncates after each pairwise product, in its contraction order
            raise NotImplementedError(
                f"einsum: preferred_element_type {pt} below the operands' dtypes "
                f"{[str(_dtype_of(o)) for o in operands]} with more than two operands")
        return numpy_contraction(run, operands, preferred_element_type)
    return wrapped
