"""Arrays through DLPack (JAX's ``jax.dlpack``): ``from_dlpack`` takes any array with
``__dlpack__`` (numpy, PyTorch CPU tensors, ...), and a functrans ``Array`` exports itself
(``Array.__dlpack__``), so ``numpy.from_dlpack(x)`` reads it without a copy.

Arrays are immutable, so memory is never shared where either side could change it:
``from_dlpack`` copies (a producer may write into its memory later; ``copy=False`` is an
error), except from a functrans ``Array``, which it returns as it is; an ``Array`` exports
its memory marked read-only (DLPack 1.0's flag, which consumers such as numpy >= 2.1
honour: their view is read-only), and to a consumer that cannot take that flag (no
``max_version``) it exports a copy. CPU arrays only: memory on another device is an error.

>>> import numpy as np, functrans.numpy as fnp
>>> y = np.from_dlpack(fnp.arange(3.0))       # no copy, a read-only view
>>> y.flags.writeable, from_dlpack(np.arange(2)).tolist()
(False, [0, 1])
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxpr_ir import canonical_dtype
from .tracing import ARRAY_CLASS, Tracer, wrap

__all__ = ["from_dlpack", "is_supported_dtype"]

_CPU = 1                    # DLPack's kDLCPU


def is_supported_dtype(dtype: Any) -> bool:
    """Whether functrans arrays of ``dtype`` pass through DLPack (JAX's
    ``jax.dlpack.is_supported_dtype``): functrans's dtypes that numpy exchanges.

    >>> is_supported_dtype("float32"), is_supported_dtype(np.float128)
    (True, False)
    """
    if dtype is None:
        raise TypeError(f"Expected a string or dtype-like object; got {dtype=}")
    try:
        return canonical_dtype(dtype).kind in "biufc"
    except TypeError:
        return False


def _on_host(device: Any) -> bool:
    return device is None or device == "cpu" or (
        getattr(device, "platform", None) == "cpu" and getattr(device, "process_index", 0)
        == getattr(device, "id", 0))


def from_dlpack(external_array: Any, device: Any = None, copy: bool | None = None) -> Any:
    """A functrans ``Array`` holding the data of ``external_array``, any object with
    ``__dlpack__`` and ``__dlpack_device__`` (JAX's ``jax.dlpack.from_dlpack`` and
    ``jnp.from_dlpack``). The data is copied (``copy=False`` raises): the producer could
    still write into its memory. A functrans ``Array`` comes back as it is (a copy with
    ``copy=True``). ``device``: None, ``"cpu"`` or this process's CPU ``Device``.

    >>> import numpy as np
    >>> a = np.arange(3.0)
    >>> x = from_dlpack(a); a[0] = 7.0
    >>> x.tolist()
    [0.0, 1.0, 2.0]
    """
    if isinstance(external_array, Tracer):
        raise TypeError("from_dlpack: expected a concrete array with __dlpack__, got a traced "
                        "value (inside jit, grad or vmap it already is an array)")
    if not _on_host(device):
        raise ValueError(f"from_dlpack: device {device!r} is not this process's CPU; "
                         "functrans takes DLPack arrays onto the host")
    if type(external_array) is ARRAY_CLASS[0]:
        return wrap(np.array(external_array)) if copy else external_array
    if not (hasattr(external_array, "__dlpack__")
            and hasattr(external_array, "__dlpack_device__")):
        raise TypeError(f"from_dlpack: the array passed must have __dlpack__ and "
                        f"__dlpack_device__ methods; got a {type(external_array).__name__}")
    kind, _ = external_array.__dlpack_device__()
    if int(kind) != _CPU:
        raise ValueError(f"from_dlpack: the array lives on DLPack device type {int(kind)}, "
                         f"not the CPU ({_CPU}); move it to the host first")
    if copy is False:
        raise ValueError("from_dlpack: copy=False would share memory the producer can still "
                         "write into an immutable functrans Array; set copy=True or "
                         "copy=None")
    a = np.from_dlpack(external_array)
    try:
        canonical_dtype(a.dtype)
    except TypeError as e:
        raise TypeError(f"from_dlpack: {e}") from None
    return wrap(np.array(a, copy=True))


def export(x: np.ndarray, stream: Any = None, max_version: Any = None,
           dl_device: Any = None, copy: bool | None = None) -> Any:
    """The DLPack capsule of an ``Array`` (its ``__dlpack__``): its memory marked
    read-only, or a copy where the consumer cannot take that mark or asks for one.

    >>> import functrans.numpy as fnp
    >>> type(export(fnp.ones(2), max_version=(1, 0))).__name__
    'PyCapsule'
    """
    view = x.view(np.ndarray)
    versioned = max_version is not None and tuple(max_version) >= (1, 0)
    if copy is False and not versioned:
        raise BufferError("an immutable functrans Array is exported read-only, which needs "
                          "DLPack >= 1.0 (pass max_version=(1, 0)) or copy=None/True")
    if copy or not versioned:
        view = np.array(view)       # the consumer's own copy: it may write into it
    else:
        view.flags.writeable = False
    return view.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device)
