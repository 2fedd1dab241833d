"""No numpy floating-point RuntimeWarnings from the library's own numpy calls.

JAX computes ``1.0 / 0.0``, ``log(0)``, ``sqrt(-1)`` or an overflowing ``exp`` silently
(IEEE results: inf, nan); numpy warns. Eager functrans runs numpy, so the places that
run it for the library (``tracing.bind`` and ``Trace.process``, where primitive
implementations run, and ``functrans.numpy``'s eager fast paths and ``Array``'s numpy
methods) run it with numpy's floating-point errors ignored, for that call only: the
user's own numpy calls keep numpy's behaviour, and no warning filter is involved, so
nothing depends on a filter that ``warnings.catch_warnings()`` (which pytest wraps
around every test) saves and restores.

numpy 2 keeps its error state in a context variable; ``np.errstate(all="ignore")`` sets
it, at about 0.9 us per entry (more than a small operation costs). The hot paths set
that variable to the value ``errstate`` gives it directly (about 0.12 us)::

    token = QUIET_VAR.set(QUIET)
    try:
        ...numpy...
    finally:
        QUIET_VAR.reset(token)

or call ``quiet_call(fn, *args)``. The variable is found by comparing the context inside
and outside an ``errstate`` block (no private numpy name); a numpy without one gets an
``errstate`` per call instead.

``install()`` also adds a warnings filter for the library's modules, for any numpy call
not on those paths, when no ``catch_warnings`` block discards it.

>>> import warnings, numpy as np, functrans.numpy as fnp
>>> with warnings.catch_warnings():
...     warnings.simplefilter("error")
...     fnp.log(fnp.zeros(1)).tolist(), quiet_call(np.log, np.zeros(1)).tolist()
([-inf], [-inf])
"""
from __future__ import annotations

import contextvars
import warnings

import numpy as np

_MESSAGE = r".*(encountered in|divide by zero|overflow|underflow|invalid value)"
_MODULES = r"(functrans|backends)(\.|$)"


class _ErrstatePerCall:
    """``QUIET_VAR``'s interface over ``np.errstate``, for a numpy whose error state is
    not one context variable."""

    @staticmethod
    def set(value):
        state = np.errstate(all="ignore")
        state.__enter__()
        return state

    @staticmethod
    def reset(state):
        state.__exit__(None, None, None)


def _errstate_variable():
    """numpy's error-state context variable and its value under errstate(all="ignore")."""
    outside = contextvars.copy_context()
    with np.errstate(all="ignore"):
        inside = contextvars.copy_context()
    changed = [(var, value) for var, value in inside.items()
               if var not in outside or outside[var] is not value]
    if len(changed) != 1:
        return _ErrstatePerCall, None
    return changed[0]


QUIET_VAR, QUIET = _errstate_variable()


def quiet_call(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with numpy's floating-point errors ignored (IEEE results,
    no warning), as JAX computes.

    >>> import numpy as np
    >>> quiet_call(np.divide, 1.0, 0.0)
    np.float64(inf)
    """
    token = QUIET_VAR.set(QUIET)
    try:
        return fn(*args, **kwargs)
    finally:
        QUIET_VAR.reset(token)


def install():
    """Ignore numpy's floating-point warnings raised in the library's modules."""
    warnings.filterwarnings("ignore", message=_MESSAGE, category=RuntimeWarning,
                            module=_MODULES)
