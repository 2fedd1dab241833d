"""Types for annotating code that uses functrans, as JAX's ``jax.typing``.

- ``ArrayLike``: what functrans functions accept as an array: a functrans ``Array``, a
  tracer (the value of an argument inside ``jit``/``grad``/``vmap``), a numpy array or
  scalar, or a Python ``bool``/``int``/``float``/``complex``.
- ``DTypeLike``: what names a dtype: a string (``"float32"``), a type
  (``float``, ``np.int32``), a ``np.dtype``, or an object with a ``.dtype``.
- ``Shape``: a sequence of ints (a tuple, as ``x.shape`` is).

Functions return ``functrans.Array`` (inside a transform, the tracer standing for it).

>>> import numpy as np
>>> import functrans as ft, functrans.numpy as fnp
>>> from functrans.typing import ArrayLike, Shape
>>> def tile_to(x: ArrayLike, shape: Shape) -> ft.Array:
...     return fnp.broadcast_to(x, shape)
>>> tile_to(2.0, (2,)).tolist(), tile_to(np.int32(1), [1, 2]).tolist()
([2.0, 2.0], [[1, 1]])
"""
from __future__ import annotations

from typing import Any, Protocol, Sequence, Union

import numpy as np

from .array import Array
from .tracing import Tracer

__all__ = ["ArrayLike", "DTypeLike", "Shape", "SupportsDType"]


class SupportsDType(Protocol):
    """Anything with a ``dtype`` attribute (an array, a tracer, ``ShapeDtypeStruct``).

    >>> import numpy as np
    >>> from functrans.typing import SupportsDType
    >>> def dtype_of(x: SupportsDType) -> np.dtype:
    ...     return np.dtype(x.dtype)
    >>> dtype_of(np.zeros(2, np.float32))
    dtype('float32')
    """

    @property
    def dtype(self) -> Any: ...


ArrayLike = Union[Array, Tracer, np.ndarray, np.generic, bool, int, float, complex]
DTypeLike = Union[str, type, np.dtype, SupportsDType]
Shape = Sequence[int]
