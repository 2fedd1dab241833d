"""``functrans.experimental``: ``checkify`` (runtime errors out of transformed code),
``ode`` (``odeint``, adaptive Dormand-Prince), ``jet`` (Taylor-mode higher-order AD),
``io_callback`` and the older ``enable_x64`` / ``disable_x64`` context managers, with the
API of ``jax.experimental``; for programs of many processes ``multihost_utils`` and
``mesh_utils``, and ``shard_map`` (its older import path); ``sparse`` (BCOO/BCSR
arrays and ``sparsify``).

>>> from functrans.experimental import ode
>>> callable(ode.odeint)
True
"""
import contextlib

from . import checkify, jet, ode  # noqa: F401
from ..callbacks import io_callback
from ..config_api import enable_x64, option_set
from . import mesh_utils, multihost_utils, shard_map, sparse  # noqa: F401

__all__ = ["checkify", "jet", "ode", "io_callback", "enable_x64", "disable_x64", "mesh_utils",
           "multihost_utils", "shard_map", "sparse"]


def disable_x64() -> contextlib.AbstractContextManager:
    """32-bit default types inside a ``with`` block (older JAX's
    ``jax.experimental.disable_x64``): functrans always has 64-bit types, so entering it
    raises ``ValueError``.

    >>> from functrans import experimental
    >>> with experimental.disable_x64():
    ...     pass
    Traceback (most recent call last):
    ...
    ValueError: enable_x64 cannot be turned off: ...
    """
    return option_set("enable_x64", False)
