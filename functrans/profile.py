"""``python -m functrans.profile module:function [--args EXPR] [--repeats N] [--backend B]``

The command-line entry point of the profiler (``functrans.profiler``); ``ft.profile``
is the function. This module is callable too, so ``import functrans.profile`` (which
rebinds the package attribute to this module) leaves ``ft.profile(f, *args)`` working.

>>> import functrans.profile as p
>>> callable(p)
True
"""
from __future__ import annotations

import sys
import types

from .profiler import Profile, main, profile  # noqa: F401

__all__ = ["profile", "Profile", "main"]


class _CallableModule(types.ModuleType):
    def __call__(self, *args, **kwargs):
        return profile(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

if __name__ == "__main__":
    sys.exit(main())
