"""``functrans.experimental``: ``ode`` (``odeint``, adaptive Dormand-Prince), with the API
of ``jax.experimental``.

>>> from functrans.experimental import ode
>>> callable(ode.odeint)
True
"""
from . import ode  # noqa: F401

__all__ = ["ode"]
