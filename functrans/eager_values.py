"""Eager values: the Array class results become, and how a numpy result becomes one.

Below ``tracing`` (whose ``bind`` wraps every eager result) so that the wrapping rules,
including the one that keeps an Array from sharing a caller's writeable buffer, are
in one place.
"""
from __future__ import annotations

import threading

import numpy as np

from jaxpr_ir import ShapedArray
from jaxpr_ir.dtypes import SUPPORTED as _SUPPORTED_DTYPES

__all__ = ["ARRAY_CLASS", "EAGER_TYPES", "FAST_DTYPES", "INTERNAL", "WEAK_BIND", "WEAK_NUMBERS",
           "array_aval", "unshared", "weak_operands", "wrap"]


class _Internal(threading.local):
    """``on`` while a transform's own rules run eagerly in this thread (linearize's JVP
    rules, the backward pass): their results are intermediate values no user code sees,
    so they stay plain ndarrays (no view to wrap each result, nor to unwrap it at its next
    use). Values leave such code wrapped: see ``LinearizeTrace._box`` and the API
    functions' ``_out``. Per thread (eager code in other threads is unaffected)."""
    on = False


INTERNAL = _Internal()

# Eager results are this ndarray subclass (set by functrans.array); plain views until then.
ARRAY_CLASS = [np.ndarray]
# The exact types of eager arrays (numpy's and the library's), for fast type tests.
EAGER_TYPES = {np.ndarray}
# Weakly typed eager arrays (functrans.weak_values sets both): their class, and
# [weak_bind(prim, args, params)], bind's eager path when a result may be weak
WEAK_ARRAY = None
WEAK_BIND: list = []
_PY_WEAK = frozenset((bool, int, float, complex))
# the Python numbers whose arrays are weakly typed (a bool's is strong, as JAX's array(True))
WEAK_NUMBERS = frozenset((int, float, complex))


def weak_operands(args) -> bool:
    """Whether an eager result of ``args`` may be weakly typed: a WeakArray among them,
    or Python scalars only."""
    only_scalars = bool(args)
    for x in args:
        t = x.__class__
        if t is WEAK_ARRAY:
            return True
        if t not in _PY_WEAK:
            only_scalars = False
    return only_scalars


def wrap(x):
    """A numpy result as the library's eager Array type (a view, no copy)."""
    cls = ARRAY_CLASS[0]
    if type(x) is cls:
        return x
    if isinstance(x, (np.ndarray, np.generic)):   # a numpy scalar: a 0-d Array
        return np.asarray(x).view(cls)
    if getattr(x, "__device_array__", False):   # a backend's device result stays there
        return x
    return np.asarray(x).view(cls)


def unshared(out, args):
    """``out``, copied if it is (a view of) a caller's writeable numpy argument: the
    result is an immutable Array, and must not change when the caller later writes into
    its own buffer (``fnp.real(buf)`` is ``buf`` itself; ``reshape`` gives a view)."""
    for a in args:
        if (type(a) is np.ndarray and type(out) is np.ndarray and a.flags.writeable
                and (out is a or (out.base is not None and np.may_share_memory(out, a)))):
            return out.copy()
    return out


def array_aval(x) -> ShapedArray:
    """The type of a numpy array: ``ShapedArray(x.shape, x.dtype)`` (weak for a
    ``WeakArray``) without the constructor's checks when the dtype is a supported one."""
    dt = x.dtype
    if dt in FAST_DTYPES:
        a = _object_new(ShapedArray)
        a.shape = x.shape
        a.dtype = dt
        a.weak_type = x.__class__ is WEAK_ARRAY
        return a
    return ShapedArray(x.shape, dt, x.__class__ is WEAK_ARRAY)


# native-byte-order dtype objects that ShapedArray would keep as they are
FAST_DTYPES = frozenset(np.dtype(d) for d in _SUPPORTED_DTYPES)
_object_new = object.__new__
