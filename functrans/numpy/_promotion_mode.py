"""JAX's ``numpy_rank_promotion`` and ``numpy_dtype_promotion`` options for
``functrans.numpy``'s elementwise functions, operators and ``where``.

``numpy_rank_promotion``: ``"warn"`` / ``"raise"`` when array operands of different
ranks are broadcast together (a rank-0 operand or a Python scalar is no promotion);
``numpy_dtype_promotion="strict"``: ``TypePromotionError`` when operands of different
dtypes would be promoted, except that a Python scalar (or a weakly typed traced value)
adapts to an array of its kind or a wider one (int to int, float or complex; float to
float or complex; complex to complex), as JAX's strict mode. Both judge the user's own
arithmetic: an operation that functrans's library code (``functrans.scipy``, ``nn``,
``lax``, ``random``, ``image``, ``example_libraries``, ``experimental``) performs inside
one of its functions is not checked, since those functions broadcast and mix dtypes on
purpose (JAX writes its library with explicit axes and casts instead, so that
``jax.scipy.signal.stft`` of a 3-d array works under ``"raise"``). Both are off by
default and cost nothing then: ``ACTIVE`` is False, and the operators of ``Array`` take
their fast numpy route only while it is.

>>> import functrans as ft, functrans.numpy as fnp
>>> with ft.numpy_rank_promotion("raise"):
...     fnp.ones(3) + fnp.ones((2, 3))
Traceback (most recent call last):
...
ValueError: add: operands could not be broadcast together on shapes (3,) (2, 3) with the config option numpy_rank_promotion='raise' (implicit rank promotion); add the leading axes explicitly (x[None], fnp.expand_dims) or set it to 'allow'
"""
from __future__ import annotations

import sys
import warnings

import numpy as np

from jaxpr_ir import dtype_kind

from .. import config
from ..tracing import Tracer
from ..weak_values import WeakArray

__all__ = ["TypePromotionError", "check_operands", "report_rank_promotion", "ACTIVE"]

ACTIVE = False          # a check is on (either option differs from its default)
_RANK = "allow"
_STRICT = False
_PY_WEAK = {int: "i", float: "f", complex: "c"}    # bool is a strong bool, as JAX
_WIDER = {"i": "uifc", "f": "fc", "c": "c"}       # the strong kinds a weak kind adapts to
_listeners: list = []     # fn(active), called when ACTIVE changes (Array's operators)


class TypePromotionError(ValueError):
    """An implicit promotion between dtypes that ``numpy_dtype_promotion='strict'``
    forbids (JAX's ``jax.errors``-style ``TypePromotionError``).

    >>> issubclass(TypePromotionError, ValueError)
    True
    """


def _sync(name=None, old=None, new=None):
    global ACTIVE, _RANK, _STRICT
    _RANK = config.read("numpy_rank_promotion")
    _STRICT = config.read("numpy_dtype_promotion") == "strict"
    was, ACTIVE = ACTIVE, _RANK != "allow" or _STRICT
    if was != ACTIVE:
        for fn in list(_listeners):
            fn(ACTIVE)


_LIBRARY = ("functrans.scipy", "functrans.nn", "functrans.lax", "functrans.random",
            "functrans.image", "functrans.example_libraries", "functrans.experimental")


def _library_call():
    """Whether the operation being checked was written in functrans's library code: the
    first frame above ``functrans.numpy``'s own (the caller of the ``fnp`` function or
    operator) lies in one of ``_LIBRARY``'s packages. Walked only when a check fails."""
    f = sys._getframe(2)
    while f is not None:
        mod = f.f_globals.get("__name__", "")
        if not mod.startswith("functrans.numpy"):
            return mod.startswith(_LIBRARY)
        f = f.f_back
    return False


def _rank_of(x):
    if isinstance(x, (Tracer, np.ndarray, np.generic)):
        return x.ndim
    if isinstance(x, (bool, int, float, complex)):
        return 0
    return np.ndim(x)


def _check_ranks(name, args):
    ranks = {r for r in map(_rank_of, args) if r}
    if len(ranks) < 2 or _library_call():
        return
    shapes = " ".join(str(tuple(np.shape(a)) if not isinstance(a, Tracer) else a.shape)
                      for a in args)
    if _RANK == "raise":
        raise ValueError(f"{name}: operands could not be broadcast together on shapes "
                         f"{shapes} with the config option numpy_rank_promotion='raise' "
                         "(implicit rank promotion); add the leading axes explicitly "
                         "(x[None], fnp.expand_dims) or set it to 'allow'")
    warnings.warn(f"{name}: following NumPy automatic rank promotion on shapes {shapes}; "
                  "set the config option numpy_rank_promotion to 'allow' to disable this "
                  "warning", UserWarning, stacklevel=4)


def _dtype_key(x):
    """(strong dtype or None, weak kind or None) of one operand."""
    if isinstance(x, (Tracer, WeakArray)):    # a weak tracer or eager array: a weak kind
        return (None, dtype_kind(x.dtype)) if x.weak_type and dtype_kind(x.dtype) in "ifc" \
            else (x.dtype, None)
    weak = _PY_WEAK.get(type(x))
    if weak is not None:
        return None, weak
    dt = getattr(x, "dtype", None)
    return (dt if isinstance(dt, np.dtype) else np.asarray(x).dtype), None


def _check_dtypes(args):
    keys = [_dtype_key(a) for a in args]
    strong = {d for d, _ in keys if d is not None}
    weak = {k for _, k in keys if k is not None}
    ok = len(strong) <= 1 and all(
        dtype_kind(next(iter(strong))) in _WIDER[k] for k in weak) if strong else True
    if not ok and not _library_call():
        shown = ", ".join(repr(str(d)) if d is not None else f"<class '{_KIND_NAME[k]}'>"
                          for d, k in keys)
        raise TypePromotionError(
            f"Input dtypes ({shown}) have no available implicit dtype promotion path when "
            "numpy_dtype_promotion='strict'. Try explicitly casting inputs to the desired "
            "output type, or set numpy_dtype_promotion='standard'.")


_KIND_NAME = {"i": "int", "f": "float", "c": "complex"}


def report_rank_promotion(message: str) -> None:
    """Raise (``"raise"``) or warn (``"warn"``) ``message`` about a rank promotion that a
    ``functrans.numpy`` function performs itself (``vectorize``'s loop dimensions), as
    ``numpy_rank_promotion`` asks; nothing when called from functrans's library code.

    >>> report_rank_promotion("shapes (3,) and (2, 3)")      # "allow": nothing
    """
    if _RANK == "allow" or _library_call():
        return
    if _RANK == "raise":
        raise ValueError(message)
    level, f = 1, sys._getframe(0)      # point the warning at the user's line
    while f is not None and f.f_globals.get("__name__", "").startswith("functrans.numpy"):
        level, f = level + 1, f.f_back
    warnings.warn(message, UserWarning, stacklevel=level)


def check_operands(name: str, args, dtypes: bool = True, ranks: bool = True) -> None:
    """Apply the rank- (with ``ranks``) and dtype-promotion (with ``dtypes``) checks the
    options ask for to the operands ``args`` of ``name``; call only when ``ACTIVE``.

    >>> check_operands("add", (np.ones(3), 1.0))
    """
    if ranks and _RANK != "allow":
        _check_ranks(name, args)
    if _STRICT and dtypes:
        _check_dtypes(args)


_sync()
config.on_update(_sync)
