"""``functrans.experimental``: ``ode`` (``odeint``, adaptive Dormand-Prince) and
``io_callback``, with the API of ``jax.experimental``.

>>> from functrans.experimental import ode
>>> callable(ode.odeint)
True
"""
from . import ode  # noqa: F401
from ..callbacks import io_callback

__all__ = ["ode", "io_callback"]
