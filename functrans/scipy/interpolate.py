"""``functrans.scipy.interpolate``: ``RegularGridInterpolator`` ('linear' and 'nearest'),
as JAX's.

>>> import numpy as np
>>> from functrans.scipy.interpolate import RegularGridInterpolator
>>> f = RegularGridInterpolator((np.array([0.0, 1.0]),), np.array([0.0, 10.0]))
>>> f(np.array([[0.5]])).tolist()
[5.0]
"""
from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np

from .. import numpy as fnp
from ..array import Array
from ..tree_util import register_pytree_node
from ..typing import ArrayLike

__all__ = ["RegularGridInterpolator"]


def _points(xi, ndim, dtype):
    """scipy's reading of ``xi``: a tuple of coordinate arrays broadcast and stacked on
    a last axis; a 1-d array as points of ``ndim`` coordinates (so, for one grid, a
    vector of points)."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        return fnp.stack(fnp.broadcast_arrays(*[fnp.asarray(c, dtype) for c in xi]), axis=-1)
    xi = fnp.asarray(xi, dtype)
    return xi.reshape(-1, ndim) if xi.ndim == 1 and xi.shape[0] % ndim == 0 else xi


class RegularGridInterpolator:
    """Interpolation on a rectilinear grid: ``points`` holds the strictly ascending
    coordinates of each of the first ``len(points)`` axes of ``values`` (trailing axes
    of ``values`` are carried along). Calling it with ``xi`` (..., ndim) interpolates
    ('linear', multilinear; 'nearest', the closer point, the lower one on a tie);
    outside the grid the result is ``fill_value`` (NaN by default) or, with
    ``fill_value=None``, the extrapolation of the edge cell. ``bounds_error=True`` is not
    supported (it needs a value-dependent error, as in JAX). A pytree: it passes through
    jit and vmap, and differentiates in ``values`` and ``xi``.

    >>> import numpy as np
    >>> from functrans.scipy.interpolate import RegularGridInterpolator
    >>> f = RegularGridInterpolator((np.arange(3.0),), np.array([0.0, 1.0, 4.0]))
    >>> f(np.array([[1.5], [3.0]])).tolist()
    [2.5, nan]
    """

    def __init__(self, points: Sequence[ArrayLike], values: ArrayLike, method: str = "linear",
                 bounds_error: bool = False, fill_value: ArrayLike | None = np.nan) -> None:
        if method not in ("linear", "nearest"):
            raise ValueError(f"RegularGridInterpolator: method must be 'linear' or 'nearest', "
                             f"got {method!r}")
        if bounds_error:
            raise NotImplementedError("RegularGridInterpolator: bounds_error=True is not "
                                      "supported (as in JAX)")
        values = fnp.asarray(values)
        if len(points) > values.ndim:
            raise ValueError(f"RegularGridInterpolator: {len(points)} grids for values of "
                             f"rank {values.ndim}")
        for i, p in enumerate(points):
            if np.ndim(p) != 1 or np.shape(p)[0] != values.shape[i]:
                raise ValueError(f"RegularGridInterpolator: grid {i} must be 1-d of length "
                                 f"{values.shape[i]}")
        if not fnp.issubdtype(values.dtype, fnp.inexact):
            values = values.astype(fnp.float64)
        self.grid = tuple(fnp.asarray(p, values.dtype) for p in points)
        self.values = values
        self.method = method
        self.bounds_error = bounds_error
        self.fill_value = fill_value

    def _cells(self, xi):
        """Per axis: the lower index of the cell holding each point, the fraction
        across it, and whether the point is outside the grid."""
        out = []
        for k, grid in enumerate(self.grid):
            x = xi[..., k]
            n = grid.shape[0]
            # side="left", as JAX and scipy: a point on an inner knot belongs to the cell
            # below it, which decides the (one-sided) derivative there
            i = fnp.clip(fnp.searchsorted(grid, x) - 1, 0, max(n - 2, 0))
            lo, hi = grid[i], grid[fnp.minimum(i + 1, n - 1)]
            width = hi - lo
            t = fnp.where(width == 0, 0, (x - lo) / fnp.where(width == 0, 1, width))
            out.append((i, t, (x < grid[0]) | (x > grid[n - 1])))
        return out

    def __call__(self, xi: ArrayLike, method: str | None = None) -> Array:
        """The interpolated values at ``xi`` (..., ndim): shape ``xi.shape[:-1]`` plus
        ``values``' trailing axes.

        >>> import numpy as np
        >>> f = RegularGridInterpolator((np.arange(2.0),), np.array([1.0, 3.0]))
        >>> f(np.array([[0.75]]), method="nearest").tolist()
        [3.0]
        """
        method = method or self.method
        if method not in ("linear", "nearest"):
            raise ValueError(f"RegularGridInterpolator: method must be 'linear' or 'nearest', "
                             f"got {method!r}")
        ndim = len(self.grid)
        xi = _points(xi, ndim, self.values.dtype)
        if xi.ndim == 0 or xi.shape[-1] != ndim:
            raise ValueError(f"RegularGridInterpolator: xi must end in an axis of {ndim}")
        cells = self._cells(xi)
        trailing = self.values.ndim - ndim
        if method == "nearest":
            idx = tuple(fnp.where(t <= 0.5, i, i + 1) for i, t, _ in cells)
            result = self.values[idx]
        else:
            result = 0
            for corner in itertools.product((0, 1), repeat=ndim):
                idx, weight = [], 1
                for up, (i, t, _) in zip(corner, cells):
                    idx.append(fnp.minimum(i + up, self.values.shape[len(idx)] - 1))
                    weight = weight * (t if up else 1 - t)
                w = fnp.reshape(weight, weight.shape + (1,) * trailing)
                result = result + w * self.values[tuple(idx)]
        if self.fill_value is not None:
            outside = cells[0][2]
            for _, _, o in cells[1:]:
                outside = outside | o
            outside = fnp.reshape(outside, outside.shape + (1,) * trailing)
            result = fnp.where(outside, fnp.asarray(self.fill_value, result.dtype), result)
        return result


register_pytree_node(
    RegularGridInterpolator,
    lambda r: ((r.grid, r.values), (r.method, r.bounds_error, r.fill_value)),
    lambda aux, children: _rebuild(aux, children))


def _rebuild(aux, children):
    obj = object.__new__(RegularGridInterpolator)
    obj.grid, obj.values = children
    obj.method, obj.bounds_error, obj.fill_value = aux
    return obj
