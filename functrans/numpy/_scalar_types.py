"""The sized scalar types of ``functrans.numpy`` (``float32``, ``int64``, ``bool_``…).

As in JAX, each is a type that numpy reads as its dtype (``dtype=fnp.float32``,
``x.astype(fnp.int32)``, ``fnp.dtype(fnp.float32)``, ``fnp.float32 == np.float32``) and
that, called, converts any array-like, traced values included: ``fnp.float32(x)`` inside
``jit`` or ``grad`` is ``asarray(x, dtype=float32)``. numpy's own ``np.float32(tracer)``
could only read a concrete value, which a tracer does not have.

>>> import functrans as ft, functrans.numpy as fnp
>>> ft.grad(lambda x: fnp.float32(x) * 2)(1.0).item(), fnp.float32(2).dtype
(2.0, dtype('float32'))
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from ..array import Array
from ._creation import asarray

__all__ = ["float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8",
           "uint64", "uint32", "uint16", "uint8", "uint", "bool_", "complex64", "complex128", "int_",
           "float_", "double", "single", "cdouble", "csingle", "complex_", "bool"]


class _ScalarType(type):
    """The metaclass: numpy's scalar type in every comparison, a converter when called."""

    dtype: np.dtype

    def __call__(cls, x: Any) -> Array:
        return asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls.dtype.type)

    def __eq__(cls, other: Any) -> bool:
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other: Any) -> bool:
        return not cls == other

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __repr__(cls) -> str:
        return f"<class 'functrans.numpy.{cls.__name__}'>"


def _scalar_type(name: str, numpy_type: type) -> type:
    dt = np.dtype(numpy_type)
    doc = (f"numpy's {dt.name} as a dtype; called, ``asarray(x, dtype={dt.name})``, traced "
           f"values included (``jax.numpy.{name}``).\n\n"
           f"    >>> import functrans.numpy as fnp\n"
           f"    >>> fnp.{name}(1).dtype\n    {dt!r}\n")
    return _ScalarType(name, (), {"dtype": dt, "__module__": __name__, "__doc__": doc})


float64 = _scalar_type("float64", np.float64)
float32 = _scalar_type("float32", np.float32)
float16 = _scalar_type("float16", np.float16)
bfloat16 = _scalar_type("bfloat16", ml_dtypes.bfloat16)    # JAX's: ml_dtypes' numpy type
int64 = _scalar_type("int64", np.int64)
int32 = _scalar_type("int32", np.int32)
int16 = _scalar_type("int16", np.int16)
int8 = _scalar_type("int8", np.int8)
uint64 = _scalar_type("uint64", np.uint64)
uint32 = _scalar_type("uint32", np.uint32)
uint16 = _scalar_type("uint16", np.uint16)
uint8 = _scalar_type("uint8", np.uint8)
bool_ = _scalar_type("bool_", np.bool_)
complex64 = _scalar_type("complex64", np.complex64)
complex128 = _scalar_type("complex128", np.complex128)
# numpy's aliases, with float64 and int64 as functrans's defaults
uint = _scalar_type("uint", np.uint64)
int_ = _scalar_type("int_", np.int64)
float_ = _scalar_type("float_", np.float64)
double = _scalar_type("double", np.float64)
single = _scalar_type("single", np.float32)
cdouble = _scalar_type("cdouble", np.complex128)
csingle = _scalar_type("csingle", np.complex64)
complex_ = _scalar_type("complex_", np.complex128)
# numpy 2's (and jax.numpy's) name for bool_; bound last, as it shadows the builtin here
globals()["bool"] = _scalar_type("bool", np.bool_)
