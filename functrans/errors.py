"""Exceptions users can catch, and the helper that names the user's source line.

>>> issubclass(ConcretizationError, TypeError)
True
"""
from __future__ import annotations

import os
import sys

_LIB_DIRS = tuple(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep + d + os.sep
    for d in ("functrans", "jaxpr_ir", "backends"))


def user_frame():
    """The innermost stack frame outside the library, or None."""
    f = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(_LIB_DIRS) and not fn.startswith("<frozen"):
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


class UnexpectedTracerError(Exception):
    """A tracer escaped the transform that created it and was used afterwards."""


class TracerArrayConversionError(TypeError):
    """A tracer was passed to numpy (np.asarray) inside a transform."""
