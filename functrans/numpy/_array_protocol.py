"""numpy's function protocol on eager Arrays: numpy's functions see plain ndarray views.

An Array is an ndarray subclass whose methods follow JAX (``x.sort()`` returns a sorted
copy), while numpy's own Python code sorts the arrays it derives from its inputs in place
(``ar.sort()`` in ``np.unique``, ``np.intersect1d``, ...): run on Arrays, that code
silently computed with unsorted data (``np.unique`` of ``[3., 1., 2.]`` gave
``[3., 1., 2.]``). So numpy's functions get views of the Arrays as plain ndarrays (no
copy), as they get converted JAX arrays, and return numpy's results.

>>> import numpy as np, functrans.numpy as fnp
>>> np.unique(fnp.asarray([3.0, 1.0, 3.0])).tolist()
[1.0, 3.0]
"""
from __future__ import annotations

import numpy as np

from ..array import Array

__all__ = ["array_function"]


def _plain(obj):
    """``obj`` with every Array inside (lists, tuples, dicts) as a plain ndarray view."""
    if isinstance(obj, Array):
        return obj.view(np.ndarray)
    if type(obj) in (list, tuple):
        return type(obj)(_plain(o) for o in obj)
    if type(obj) is dict:
        return {k: _plain(v) for k, v in obj.items()}
    return obj


def array_function(self, func, types, args, kwargs):
    """``Array.__array_function__``: ``func`` on plain views of the Arrays among its
    arguments (a traced value among them then answers for itself)."""
    return func(*_plain(args), **_plain(kwargs))
