"""jaxpr_ir: the typed intermediate representation of functrans, and nothing else.

It holds dtypes and ``ShapedArray``, ``Var``, ``Literal``, ``Eqn``, ``Jaxpr``,
``ClosedJaxpr``, the ``Primitive`` base and its registry, the printer, the
parser, the type checker, the generic passes and the cost model (``cost``: flops and
bytes of a jaxpr or of a backend's plan). It imports neither
``functrans`` nor ``backends``.
"""
from .dtypes import (ShapedArray, aval_of, canonical_dtype, float64, float32, float16,
                     bfloat16, dtype_kind,
                     int64, int32, int16, int8, uint64, uint32, uint16, uint8, bool_, complex64, complex128,
                     is_float, is_complex, is_inexact, is_integer, is_bool)
from .core import Var, Literal, Eqn, Jaxpr, ClosedJaxpr, DeferredJaxpr, Primitive, primitives
from .printer import pp_jaxpr
from .parser import parse, ParseError
from .checker import check, TypeCheckError
from .passes import dce, dce_used_inputs, cse, fold_constants, inline_calls, simplify

__all__ = [
    "ShapedArray", "aval_of", "canonical_dtype", "Var", "Literal", "Eqn", "Jaxpr",
    "ClosedJaxpr", "DeferredJaxpr", "Primitive", "primitives", "pp_jaxpr", "parse",
    "ParseError", "check",
    "TypeCheckError", "dce", "dce_used_inputs", "cse", "fold_constants", "inline_calls",
    "simplify",
]
