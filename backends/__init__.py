"""Backends: functions from a checked jaxpr to something that runs it.

Each backend module exposes ``compile(closed_jaxpr) -> callable(*flat_args) -> list``.
They read jaxprs and know primitives by name; they import ``jaxpr_ir`` only.

>>> 'interpret' in available()
True
"""
from __future__ import annotations

import importlib
import os

_MODULES = {"interpret": "backends.interpret", "cpu": "backends.llvm", "cuda": "backends.cuda"}


def available():
    """Names of the backends whose module can be imported here."""
    out = []
    for name, mod in _MODULES.items():
        try:
            importlib.import_module(mod)
        except ImportError:
            continue
        out.append(name)
    return out


def default_backend() -> str:
    """``FUNCTRANS_BACKEND`` if set, else the CPU (LLVM) backend, else the interpreter
    (when llvmlite cannot be imported)."""
    env = os.environ.get("FUNCTRANS_BACKEND")
    if env:
        return env
    try:
        importlib.import_module(_MODULES["cpu"])
    except ImportError:
        return "interpret"
    return "cpu"


def get_backend(name: str | None):
    name = name or default_backend()
    if name not in _MODULES:
        raise ValueError(f"unknown backend {name!r}; choose one of {sorted(_MODULES)}")
    try:
        return importlib.import_module(_MODULES[name])
    except ImportError as e:
        raise RuntimeError(f"backend {name!r} is not available in this installation ({e}); "
                           f"available: {available()}") from None
