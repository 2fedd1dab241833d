"""Structural functions of ``functrans.numpy``: reshape, transpose, broadcasting, joining.

>>> import functrans.numpy as fnp
>>> fnp.reshape(fnp.zeros(6), (2, -1)).shape
(2, 3)
"""
from __future__ import annotations

import numpy as np

from ..tracing import Tracer, wrap
from ..primitives import structural as S
from ._util import asarray, broadcast_to_shape, shape_of

__all__ = ["reshape", "transpose", "broadcast_to", "stack"]


def _resolve_shape(size, shape, old_shape):
    shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    if shape.count(-1) > 1:
        raise ValueError(f"reshape: can only specify one unknown dimension, got {shape}")
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1]))
        if known == 0 or size % known:
            raise ValueError(f"reshape: cannot reshape array of shape {tuple(old_shape)} "
                             f"(size {size}) into shape {shape}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    if int(np.prod(shape)) != size:
        raise ValueError(f"reshape: cannot reshape array of shape {tuple(old_shape)} "
                         f"(size {size}) into shape {shape}")
    return shape


def reshape(a, newshape):
    """Row-major reshape; one dimension may be -1."""
    a = asarray(a)
    shape = _resolve_shape(int(np.prod(a.shape)), newshape, a.shape)
    if not isinstance(a, Tracer):
        return wrap(np.reshape(a, shape))
    return S.reshape(a, shape)


def transpose(a, axes=None):
    """Permute axes (reverse them when ``axes`` is None)."""
    a = asarray(a)
    nd = len(a.shape)
    axes = tuple(reversed(range(nd))) if axes is None else tuple(int(x) % max(nd, 1) for x in axes)
    if sorted(axes) != list(range(nd)):
        raise ValueError(f"transpose: axes {axes} are not a permutation of the axes of an "
                         f"array of shape {tuple(a.shape)}")
    if not isinstance(a, Tracer):
        return wrap(np.transpose(a, axes))
    return S.transpose(a, axes)


def broadcast_to(a, shape):
    a = asarray(a)
    shape = tuple(int(s) for s in shape)
    try:
        np.broadcast_shapes(tuple(a.shape), shape)
        ok = np.broadcast_shapes(tuple(a.shape), shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"broadcast_to: cannot broadcast shape {tuple(a.shape)} to {shape}")
    if not isinstance(a, Tracer):
        return wrap(np.broadcast_to(a, shape))
    return broadcast_to_shape(a, shape)


def stack(arrays, axis=0):
    arrays = [asarray(x) for x in arrays]
    if not any(isinstance(x, Tracer) for x in arrays):
        return wrap(np.stack(arrays, axis))
    raise NotImplementedError("stack of tracers lands with concatenate")
