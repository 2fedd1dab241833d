"""Tracebacks that end in the user's code.

An error raised while tracing a function (under ``jit``, ``make_jaxpr``, or anything
decorated with ``api_boundary``) would otherwise show every frame of the tracing
machinery between the user's call and the user's failing line. ``filter_traceback``
removes the library's frames (``functrans/``, ``jaxpr_ir/``, ``backends/``) from the
exception's traceback and adds a note saying so. The boundary re-raises with a bare
``raise``, which keeps the filtered traceback as it is.

Opt out with ``FUNCTRANS_TRACEBACK_FILTERING=off`` or
``ft.config.update("traceback_filtering", False)``.

>>> import functrans as ft
>>> @ft.jit
... def f(x):
...     return x + undefined_name        # noqa: F821
>>> try:
...     f(1.0)
... except NameError as e:
...     frames = [fr.name for fr in __import__("traceback").extract_tb(e.__traceback__)]
>>> frames[-1]
'f'
"""
from __future__ import annotations

import functools
import types

from . import config
from .errors import LIB_DIRS

__all__ = ["filter_traceback", "api_boundary", "is_library_frame"]

NOTE = ("functrans removed its internal frames from this traceback; set "
        "FUNCTRANS_TRACEBACK_FILTERING=off (or ft.config.update('traceback_filtering', "
        "False)) to see them.")


def is_library_frame(code_filename: str) -> bool:
    """Whether a frame's file belongs to the library.

    >>> is_library_frame(__file__)
    True
    """
    return code_filename.startswith(LIB_DIRS)


def filter_traceback(e: BaseException) -> BaseException:
    """Drop the library's frames from ``e.__traceback__`` (in place; returns ``e``).

    Does nothing when filtering is off, or when no user frame would remain (an error
    of the library itself keeps its frames).
    """
    if not config.read("traceback_filtering"):
        return e
    tb = e.__traceback__
    kept = []
    dropped = 0
    while tb is not None:
        if is_library_frame(tb.tb_frame.f_code.co_filename):
            dropped += 1
        else:
            kept.append(tb)
        tb = tb.tb_next
    if not kept or not dropped:
        return e
    new = None
    for t in reversed(kept):
        new = types.TracebackType(new, t.tb_frame, t.tb_lasti, t.tb_lineno)
    e.__traceback__ = new
    if not getattr(e, "_functrans_filtered", False):
        try:
            e._functrans_filtered = True
            e.add_note(NOTE)
        except (AttributeError, TypeError):   # exceptions with __slots__ or frozen ones
            pass
    return e


def api_boundary(fun):
    """Decorate a public entry point: errors leaving it lose the library's frames.

    >>> @api_boundary
    ... def g(h):
    ...     return h()
    >>> g(lambda: 1)
    1
    """
    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        __tracebackhide__ = True   # noqa: F841  (pytest hides this frame)
        try:
            return fun(*args, **kwargs)
        except Exception as e:
            filter_traceback(e)
            raise   # a bare raise keeps the filtered traceback and adds no frame here
    return wrapped
