"""``functrans.scipy.ndimage``: ``map_coordinates`` of order 0 and 1, as JAX's.

>>> import numpy as np
>>> from functrans.scipy.ndimage import map_coordinates
>>> float(map_coordinates(np.array([0.0, 10.0]), [np.array(0.25)], order=1))
2.5
"""
from __future__ import annotations

import itertools
from typing import Sequence

from .. import numpy as fnp
from ..array import Array
from ..typing import ArrayLike

__all__ = ["map_coordinates"]


def _mirror(index, size):
    # the integer triangle wave of period 2 (size - 1): 0, 1, ..., size - 1, ..., 1, 0, ...
    half = max(size - 1, 1)
    return fnp.abs((index + half) % (2 * half) - half) if size > 1 else index * 0


def _reflect(index, size):
    # reflection about the half-integer edges: ..., 1, 0, 0, 1, ..., size - 1, size - 1, ...
    period = 2 * size
    r = index % period
    return fnp.where(r < size, r, period - 1 - r)


_FIXERS = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: fnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _corners(coordinate, order):
    """[(integer index, weight)] of the grid points one coordinate reads."""
    if order == 0:
        return [(fnp.floor(coordinate + 0.5).astype(fnp.int64), None)]   # half up, as scipy
    lower = fnp.floor(coordinate)
    upper_w = coordinate - lower
    index = lower.astype(fnp.int64)
    return [(index, 1 - upper_w), (index + 1, upper_w)]


def map_coordinates(input: ArrayLike, coordinates: Sequence[ArrayLike], order: int,
                    mode: str = "constant", cval: ArrayLike = 0.0) -> Array:
    """Sample ``input`` at fractional indices: ``coordinates`` holds one array of
    positions per axis of ``input`` (all of the output's shape); ``order`` 0 takes the
    nearest point (halves up), 1 interpolates linearly. Outside the grid, ``mode``
    'constant' reads ``cval`` for each missing neighbour (scipy's 'grid-constant'),
    'nearest' the edge value, 'wrap' the periodic extension (scipy's 'grid-wrap'),
    'mirror' and 'reflect' the mirrored grid (about the edge points, or about the
    half-points beyond them).
    Differentiable in ``input`` and in the coordinates (order 1).

    >>> import numpy as np
    >>> from functrans.scipy.ndimage import map_coordinates
    >>> map_coordinates(np.arange(3.0), [np.array([-1.0, 2.5])], 1, mode="nearest").tolist()
    [0.0, 2.0]
    """
    input = fnp.asarray(input)
    if len(coordinates) != input.ndim:
        raise ValueError(f"map_coordinates: coordinates must be a sequence of length "
                         f"input.ndim ({input.ndim}), got {len(coordinates)} arrays")
    if order not in (0, 1):
        raise NotImplementedError(f"map_coordinates requires order<=1 (0 or 1, as JAX's), "
                                  f"got {order}")
    if mode not in _FIXERS:
        raise NotImplementedError(f"map_coordinates does not yet support mode {mode!r} "
                                  f"(one of {sorted(_FIXERS)})")
    float_dtype = input.dtype if fnp.issubdtype(input.dtype, fnp.inexact) else fnp.float64
    coordinates = [fnp.asarray(c, float_dtype) for c in coordinates]
    per_axis = []
    for c, size in zip(coordinates, input.shape):
        per_axis.append([(_FIXERS[mode](i, size), w, (i >= 0) & (i < size))
                         for i, w in _corners(c, order)])
    out = 0
    for corner in itertools.product(*per_axis):
        idx = tuple(fnp.clip(i, 0, size - 1) for (i, _, _), size in zip(corner, input.shape))
        value = input[idx]
        if mode == "constant":
            valid = corner[0][2]
            for _, _, v in corner[1:]:
                valid = valid & v
            value = fnp.where(valid, value, fnp.asarray(cval, value.dtype))
        weight = None
        for _, w, _ in corner:
            if w is not None:
                weight = w if weight is None else weight * w
        out = out + (value if weight is None else weight * value)
    result = fnp.asarray(out)
    if not fnp.issubdtype(input.dtype, fnp.inexact):
        # scipy (and JAX) round an integer image's values half away from zero
        result = fnp.sign(result) * fnp.floor(fnp.abs(result) + 0.5)
    return result.astype(input.dtype)
