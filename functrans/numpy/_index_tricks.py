"""Index helpers of ``functrans.numpy``: ``r_ c_ ix_ mgrid ogrid index_exp s_``.

``mgrid``/``ogrid`` take static slices (a complex step means a number of points, as in
numpy); ``r_``/``c_`` concatenate arrays, scalars and slices (slices become ``arange``
or ``linspace``); a leading string directive such as ``'0,2'`` is not supported.

>>> import functrans.numpy as fnp
>>> fnp.r_[fnp.asarray([1, 2]), 0, 3:5].tolist()
[1, 2, 0, 3, 4]
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import dtype_kind

from . import _structural as st
from . import _joining as jn
from ._creation import asarray, arange, linspace
from ..array import Array
from ..tracing import Tracer
from ..typing import ArrayLike

__all__ = ["r_", "c_", "ix_", "mgrid", "ogrid", "index_exp", "s_"]


def _slice_values(s):
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        return linspace(start, s.stop, int(abs(step)))
    return arange(start, s.stop, step)


def _grid(key, sparse):
    single = isinstance(key, slice)
    key = (key,) if single else tuple(key)
    axes = []
    for s in key:
        if not isinstance(s, slice):
            raise TypeError(f"mgrid/ogrid take slices, got {type(s).__name__}")
        axes.append(_slice_values(s))
    if any(dtype_kind(a.dtype) == "f" for a in axes):
        axes = [asarray(a, np.float64) for a in axes]
    if single:
        return axes[0]
    nd = len(axes)
    shaped = [st.reshape(a, tuple(a.shape[0] if i == j else 1 for j in range(nd)))
              for i, a in enumerate(axes)]
    if sparse:
        return shaped
    return jn.stack(list(st.broadcast_arrays(*shaped)))


class _Grid:
    def __init__(self, sparse, doc):
        self.sparse = sparse
        self.__doc__ = doc

    def __getitem__(self, key):
        return _grid(key, self.sparse)


mgrid = _Grid(False, """Dense coordinate grids: ``mgrid[0:2, 0:3]`` has shape (2, 2, 3).

>>> import functrans.numpy as fnp
>>> fnp.mgrid[0:2, 0:2].tolist()
[[[0, 0], [1, 1]], [[0, 1], [0, 1]]]
""")
ogrid = _Grid(True, """Open (broadcastable) coordinate grids.

>>> import functrans.numpy as fnp
>>> [g.shape for g in fnp.ogrid[0:2, 0:3]]
[(2, 1), (1, 3)]
""")


class _Concat:
    def __init__(self, axis, columns, doc):
        self.axis = axis
        self.columns = columns
        self.__doc__ = doc

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        if key and isinstance(key[0], str):
            raise NotImplementedError("r_/c_: string directives are not supported; use "
                                      "concatenate/stack")
        parts = []
        for item in key:
            a = _slice_values(item) if isinstance(item, slice) else asarray(item)
            a = st.atleast_1d(a)
            if self.columns and a.ndim == 1:
                a = st.reshape(a, (a.shape[0], 1))
            parts.append(a)
        return jn.concatenate(parts, axis=self.axis)


r_ = _Concat(0, False, """Concatenate along the first axis (slices become ranges).

>>> import functrans.numpy as fnp
>>> fnp.r_[1:3, 5].tolist()
[1, 2, 5]
""")
c_ = _Concat(-1, True, """Stack 1-d arrays as columns (concatenate along the last axis).

>>> import functrans.numpy as fnp
>>> fnp.c_[fnp.asarray([1, 2]), fnp.asarray([3, 4])].tolist()
[[1, 3], [2, 4]]
""")


def ix_(*args: ArrayLike) -> tuple[Array, ...]:
    """Open mesh from 1-d index sequences, for ``x[ix_(rows, cols)]``.

    >>> import functrans.numpy as fnp
    >>> x = fnp.arange(9).reshape(3, 3)
    >>> x[fnp.ix_(fnp.asarray([0, 2]), fnp.asarray([1]))].tolist()
    [[1], [7]]
    """
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = asarray(a)
        if a.ndim != 1:
            raise ValueError(f"ix_: arguments must be 1-d, got shape {a.shape}")
        if a.dtype == np.bool_:   # numpy: a mask stands for its nonzero positions
            if isinstance(a, Tracer):
                raise TypeError("ix_: a traced boolean mask has a value-dependent size; "
                                "pass integer indices (e.g. fnp.nonzero(mask, size=...)[0])")
            a = asarray(np.nonzero(np.asarray(a))[0])
        out.append(st.reshape(a, tuple(a.shape[0] if j == i else 1 for j in range(n))))
    return tuple(out)


index_exp = np.index_exp
s_ = np.s_
