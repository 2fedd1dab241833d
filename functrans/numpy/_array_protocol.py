"""numpy's function protocol on eager Arrays: numpy's functions see plain ndarray views.

An Array is an ndarray subclass whose methods follow JAX (``x.sort()`` returns a sorted
copy), while numpy's own Python code sorts the arrays it derives from its inputs in place
(``ar.sort()`` in ``np.unique``, ``np.intersect1d``, ...): run on Arrays, that code
silently computed with unsorted data (``np.unique`` of ``[3., 1., 2.]`` gave
``[3., 1., 2.]``). So numpy's functions get views of the Arrays as plain ndarrays (no
copy), as they get converted JAX arrays, and return numpy's results.

An Array viewing a buffer is read-only, so numpy's views of it (``np.asarray(x)``,
``np.array(x, copy=False)``, ``memoryview(x)``) are too, as JAX's: writing into one
changed the immutable Array.

>>> import numpy as np, functrans.numpy as fnp
>>> np.unique(fnp.asarray([3.0, 1.0, 3.0])).tolist()
[1.0, 3.0]
"""
from __future__ import annotations

from types import FunctionType

import numpy as np

from ..array import Array

__all__ = ["ARRAY_PROTOCOL", "array_function", "array_finalize"]

_NDARRAY_FUNCTION = np.ndarray.__array_function__
_IN_PYTHON = {}     # numpy function -> whether numpy implements it in Python


def _plain(obj):
    """``obj`` with every Array inside (lists, tuples, dicts) as a plain ndarray view."""
    t = type(obj)
    if issubclass(t, Array):        # by type: isinstance(tracer, Array) is true
        return obj.view(np.ndarray)
    if t is list or t is tuple:
        return t(_plain(o) for o in obj)
    if t is dict:
        return {k: _plain(v) for k, v in obj.items()}
    return obj


def array_finalize(self, obj, _read_only=np.ndarray.setflags):
    """``Array.__array_finalize__``: a new Array viewing memory is read-only (its buffer
    keeps its flag: donation writes into it). An Array owning fresh memory is one numpy
    is about to fill (``x.astype()``, ``x.copy()``, ``complex(x)``): left writeable, and
    so are views of it (numpy's complex ``round`` writes its result through ``.real`` and
    ``.imag`` views of a fresh output)."""
    if self.base is not None and not (type(obj) is Array and obj.base is None):
        _read_only(self, False)


def array_function(self, func, types, args, kwargs):
    """``Array.__array_function__``: a numpy function written in Python runs on plain views
    of the Arrays among its arguments (a traced value among them then answers for itself);
    one written in C calls no Array method, so ndarray's own protocol runs it (fast)."""
    in_python = _IN_PYTHON.get(func)
    if in_python is None:
        in_python = _IN_PYTHON[func] = type(getattr(func, "_implementation", None)) \
            is FunctionType
    if not in_python:
        return _NDARRAY_FUNCTION(self, func, types, args, kwargs)
    if len(types) == 1:             # Arrays alone take part: numpy's code, no new dispatch
        return func._implementation(*_plain(args), **(_plain(kwargs) if kwargs else kwargs))
    return func(*_plain(args), **_plain(kwargs))


# numpy's protocol methods of Array (installed by _array_methods)
ARRAY_PROTOCOL = (("__array_function__", array_function), ("__array_finalize__", array_finalize))
