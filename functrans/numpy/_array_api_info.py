"""The Array API standard's inspection namespace (``__array_namespace_info__``) and
version (``__array_api_version__``), as jax.numpy 0.10.2 gives them with x64 on.

functrans.numpy follows the 2024.12 standard as jax.numpy does; its array API dtypes are
the standard's fourteen less float16 and bfloat16 (dtypes of functrans, not of the
standard), and its default dtypes are 64-bit (functrans is always in JAX's x64 mode).

>>> import functrans.numpy as fnp
>>> fnp.__array_namespace_info__().default_dtypes()["real floating"]
dtype('float64')
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..distributed import process_index
from ..sharding import Device

__all__ = ["__array_namespace_info__", "__array_api_version__"]

__array_api_version__ = "2024.12"

# the standard's dtype kinds, by numpy's kind letter
_KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
          "real floating": "f", "complex floating": "c", "numeric": "iufc"}
_API_DTYPES = [np.dtype(n) for n in ("bool", "int8", "int16", "int32", "int64", "uint8",
                                     "uint16", "uint32", "uint64", "float32", "float64",
                                     "complex64", "complex128")]


class ArrayNamespaceInfo:
    """What ``fnp.__array_namespace_info__()`` returns: the namespace's capabilities,
    devices and dtypes (the Array API standard's inspection API).

    >>> import functrans.numpy as fnp
    >>> sorted(fnp.__array_namespace_info__().dtypes(kind="signed integer"))
    ['int16', 'int32', 'int64', 'int8']
    """

    def capabilities(self) -> dict:
        """Boolean indexing and data-dependent shapes work outside transforms only (as
        in JAX, they need static shapes under jit/vmap); arrays have at most 64 axes.

        >>> import functrans.numpy as fnp
        >>> fnp.__array_namespace_info__().capabilities()["max dimensions"]
        64
        """
        return {"boolean indexing": False, "data-dependent shapes": False,
                "max dimensions": 64}

    def default_device(self) -> None:
        """None, as JAX's: arrays are not committed to a device.

        >>> import functrans.numpy as fnp
        >>> fnp.__array_namespace_info__().default_device() is None
        True
        """
        return None

    def devices(self) -> list:
        """None (uncommitted) and this process's CPU device.

        >>> import functrans.numpy as fnp
        >>> fnp.__array_namespace_info__().devices()
        [None, CpuDevice(id=0)]
        """
        return [None, Device("cpu", process_index())]

    def default_dtypes(self, *, device: Any = None) -> dict:
        """The default dtype of each kind: 64-bit (JAX's with x64 on), on every device.

        >>> import functrans.numpy as fnp
        >>> fnp.__array_namespace_info__().default_dtypes()["integral"]
        dtype('int64')
        """
        del device
        return {"real floating": np.dtype("float64"), "complex floating": np.dtype("complex128"),
                "integral": np.dtype("int64"), "indexing": np.dtype("int64")}

    def dtypes(self, *, device: Any = None,
               kind: str | tuple[str, ...] | None = None) -> dict:
        """The array API dtypes by name, all or of ``kind`` (one of the standard's kind
        names or a tuple of them).

        >>> import functrans.numpy as fnp
        >>> list(fnp.__array_namespace_info__().dtypes(kind=("bool", "complex floating")))
        ['bool', 'complex64', 'complex128']
        """
        del device
        kinds = (kind,) if isinstance(kind, str) else ("bool", "numeric") if kind is None \
            else kind
        letters = ""
        for k in kinds:
            if k not in _KINDS:
                raise ValueError(f"dtypes: unknown kind {k!r}; choose one of {sorted(_KINDS)}")
            letters += _KINDS[k]
        return {d.name: d for d in _API_DTYPES if d.kind in letters}


def __array_namespace_info__() -> ArrayNamespaceInfo:
    """The Array API inspection namespace of functrans.numpy.

    >>> import functrans.numpy as fnp
    >>> fnp.__array_namespace_info__().capabilities()["boolean indexing"]
    False
    """
    return ArrayNamespaceInfo()
