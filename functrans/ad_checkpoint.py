"""``jax.ad_checkpoint``: the module path JAX code imports rematerialisation names from
(``from jax.ad_checkpoint import checkpoint_name``); the same objects as
``functrans.checkpoint``, ``checkpoint_name``, ``checkpoint_policies`` and
``print_saved_residuals`` (``functrans.remat``), and the answers a policy may give besides
a bool (``Recompute``, ``Saveable``, ``Offloadable``: offloading is saving, there being
one memory space).

>>> import functrans as ft, functrans.numpy as fnp
>>> from functrans.ad_checkpoint import checkpoint, checkpoint_name
>>> f = checkpoint(lambda x: fnp.sin(checkpoint_name(fnp.sin(x), "a")))
>>> round(float(ft.grad(f)(0.5)), 6)
0.778644
"""
from .remat import (Offloadable, Recompute, Saveable, checkpoint, checkpoint_name,
                    checkpoint_policies, print_saved_residuals, remat)

__all__ = ["Offloadable", "Recompute", "Saveable", "checkpoint", "checkpoint_name",
           "checkpoint_policies", "print_saved_residuals", "remat"]
