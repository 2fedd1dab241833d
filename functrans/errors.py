"""Exceptions users can catch, and the helper that names the user's source line.

>>> issubclass(ConcretizationError, TypeError), ConcretizationTypeError is ConcretizationError
(True, True)
>>> issubclass(KeyReuseError, JAXTypeError), issubclass(JaxRuntimeError, RuntimeError)
(True, True)
"""
from __future__ import annotations

import os
import sys

import numpy as np

from jaxpr_ir import TypeCheckError

LIB_DIRS = tuple(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep + d + os.sep
    for d in ("functrans", "jaxpr_ir", "backends")) + (
    # numpy's own frames are never the user's line (np.r_ converting a tracer, say)
    os.path.dirname(os.path.abspath(np.__file__)) + os.sep,)


def user_frame():
    """The innermost stack frame outside the library, or None."""
    f = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(LIB_DIRS) and not fn.startswith("<frozen"):
            return f
        f = f.f_back
    return None


def user_location() -> str:
    """'file.py:12 (in fun)' for the user's innermost frame; used lazily in messages."""
    f = user_frame()
    if f is None:
        return "<unknown location>"
    return f"{f.f_code.co_filename}:{f.f_lineno} (in {f.f_code.co_name})"


class ConcretizationError(TypeError):
    """A traced value was used where Python needs a concrete one (if, int(), float())."""


# JAX's name for it (``jax.errors.ConcretizationTypeError``): the same class, so handlers
# written for either catch every concretization error
ConcretizationTypeError = ConcretizationError


class TracerBoolConversionError(ConcretizationError):
    """bool() of a traced value (an ``if``/``while`` on it) whose value is not known."""


class TracerIntegerConversionError(ConcretizationError):
    """A traced value used as a Python integer (an index, ``range``) with no known value."""


class NonConcreteBooleanIndexError(IndexError):
    """``x[mask]`` with a traced boolean mask: the result's shape would depend on data."""


class ShapeMismatchError(TypeError, ValueError):
    """Operand shapes that do not fit together (``dot`` of (3,) and (4,)): a TypeError as
    in JAX and a ValueError as in numpy, so handlers written for either catch it."""


class UnexpectedTracerError(Exception):
    """A tracer escaped the transform that created it and was used afterwards."""


def leaked_tracer_error(t) -> UnexpectedTracerError:
    """The error for a tracer ``t`` used after its transform ended."""
    return UnexpectedTracerError(
        f"a tracer {t.aval.str_short()} from a {t._trace.name} that has ended was used "
        f"(at {user_location()}). A value computed inside a transformed function escaped "
        "it, e.g. stored in a global or a closure; return it as an output instead.")


class TracerArrayConversionError(ConcretizationError):
    """A tracer was passed to numpy (np.asarray, a numpy function with no functrans.numpy
    twin) inside a transform. A ConcretizationError too: numpy needs the concrete value."""


def conversion_error(what: str, tracer=None) -> TracerArrayConversionError:
    """The error for a numpy operation that would need a traced value's data: numpy
    would compute with the concrete value, detached from the transform."""
    typ = "" if tracer is None else f" {tracer.aval.str_short()}"
    return TracerArrayConversionError(
        f"{what} on a traced value{typ} (at {user_location()}): numpy would compute with "
        "its concrete value and the result would be detached from the transform (a "
        "derivative silently zero, a constant baked into a jitted function). Use the "
        "functrans.numpy (or functrans.scipy) function instead (import functrans.numpy as "
        "fnp), or compute this "
        "outside the transformed function.")


def detached_conversion_error(what: str, tracer) -> ConcretizationError:
    """The error for ``float()``, ``.item()``, ``math.sin`` ... of a value a transform
    differentiates (under grad or jvp outside jit, where its value is known): the Python
    number would no longer depend on the inputs, its derivative silently zero."""
    return ConcretizationError(
        f"{what} of a traced value {tracer.aval.str_short()} (at {user_location()}) inside "
        f"a {tracer._trace.name} transform: the Python number would be detached from the "
        "derivative being computed (its derivative silently zero). Keep computing with "
        "arrays: functrans.numpy functions (fnp.sin rather than math.sin, fnp.asarray or "
        "x.astype rather than float()/np.float64(), indexing rather than .item()/.tolist()); "
        "or, if no derivative should flow through this value, convert "
        "ft.lax.stop_gradient(x) instead.")


class JaxRuntimeError(RuntimeError):
    """An error while a compiled program runs (JAX's name for XLA's runtime errors)."""


class JAXTypeError(TypeError):
    """JAX's TypeError for misuse of its APIs (sharding types, key reuse)."""


class JAXIndexError(IndexError):
    """JAX's IndexError for misuse of its APIs."""


class KeyReuseError(JAXTypeError):
    """A PRNG key used twice where JAX's key-reuse checker is on (functrans has no such
    checker; the class exists so that handlers written for JAX import)."""


# the checker's error for an ill-typed jaxpr (``jaxpr_ir.check``, ``enable_checks``):
# JAX's name for it is the same class, so handlers written for either catch it
JaxprTypeError = TypeCheckError


class InconclusiveDimensionOperation(Exception):
    """A comparison of symbolic dimensions whose answer depends on their values (JAX's
    shape polymorphism; functrans's shapes are concrete, so it is never raised here)."""
