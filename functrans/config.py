"""Library-wide options: ``ft.config.update(name, value)`` and ``ft.config.read(name)``.

| option | default (environment variable) | effect |
|---|---|---|
| ``debug_nans`` | False (``FUNCTRANS_DEBUG_NANS``) | a jitted call whose outputs hold a NaN is re-run equation by equation and raises ``FloatingPointError`` naming the first equation that made one and its source line |
| ``log_compiles`` | False (``FUNCTRANS_LOG_COMPILES``) | every jit compile is logged (logger ``functrans``, level WARNING) with its reason |
| ``dump_dir`` | None (``FUNCTRANS_DUMP``) | each jit compile writes its pipeline stages to a subfolder of this folder |
| ``traceback_filtering`` | True (``FUNCTRANS_TRACEBACK_FILTERING``) | errors raised while tracing a jitted function lose the library's frames |
| ``compile_cache_size`` | 256 (``FUNCTRANS_COMPILE_CACHE_SIZE``) | executables kept per jitted function and for nested calls; the least recently used beyond it are dropped |
| ``backend_cache_size`` | 512 (``FUNCTRANS_BACKEND_CACHE_SIZE``) | compiled plans and loaded object code the CPU backend keeps in memory, shared by every jitted function (each a cache of this size); the least recently used beyond it are dropped |
| ``show_progress`` | True (``FUNCTRANS_SHOW_PROGRESS``) | a compile running longer than ``progress_after_seconds`` prints one progress line on stderr (what is compiled, kernels done / in all) when stderr is a terminal or ``log_compiles`` is on |
| ``progress_after_seconds`` | 2.0 (``FUNCTRANS_PROGRESS_AFTER``) | how long a compile runs before its progress line appears |
| ``enable_checks`` | False (``FUNCTRANS_ENABLE_CHECKS``) | every jaxpr a transform builds (traces, JVP, linearize, partial evaluation, transpose, vmap, control-flow and custom-rule bodies) is type-checked; a failure raises ``TypeCheckError`` naming the pass that built it |
| ``enable_x64`` | True (``FUNCTRANS_ENABLE_X64``) | accepted for JAX programs (``jax_enable_x64``); changes nothing, since 64-bit types are always on; setting it False raises, as functrans cannot turn them off |

Names may carry a ``functrans_`` prefix (``"functrans_debug_nans"``) or JAX's ``jax_``
(``"jax_enable_x64"``); JAX's ``explain_cache_misses`` is ``log_compiles``.

>>> import functrans as ft
>>> ft.config.read("log_compiles") in (True, False)
True
>>> ft.config.update("nope", 1)
Traceback (most recent call last):
...
AttributeError: unknown functrans option 'nope'; options: backend_cache_size, compile_cache_size, debug_nans, dump_dir, enable_checks, enable_x64, log_compiles, progress_after_seconds, show_progress, traceback_filtering
"""
from __future__ import annotations

import os

__all__ = ["update", "read", "options"]

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _as_bool(name, value):
    if isinstance(value, str):
        v = value.strip().lower()
        if v in _TRUE:
            return True
        if v in _FALSE:
            return False
        raise ValueError(f"option {name!r} takes a boolean (or 1/0, on/off), got {value!r}")
    if value is None:
        return False
    return bool(value)


def _as_size(name, value):
    n = int(value)
    if n < 1 or n != float(value):
        raise ValueError(f"option {name!r} takes a positive integer, got {value!r:.60}")
    return n


def _as_seconds(name, value):
    try:
        t = float(value)
    except (TypeError, ValueError):
        t = -1.0
    if not t >= 0.0:
        raise ValueError(f"option {name!r} takes a number of seconds >= 0, got {value!r:.60}")
    return t


def _as_dir(name, value):
    if value is None or value is False or value == "":
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"option {name!r} takes a folder path or None, got {value!r:.60}")
    return os.fspath(value)


def _as_x64(name, value):
    if not _as_bool(name, value):
        raise ValueError("enable_x64 cannot be turned off: functrans always has 64-bit types "
                         "(arrays made from Python floats are float64), so JAX's 32-bit "
                         "default mode is not available")
    return True


_PARSERS = {"debug_nans": _as_bool, "log_compiles": _as_bool,
            "dump_dir": _as_dir, "traceback_filtering": _as_bool, "compile_cache_size": _as_size,
            "backend_cache_size": _as_size, "enable_checks": _as_bool, "enable_x64": _as_x64,
            "show_progress": _as_bool,
            "progress_after_seconds": _as_seconds}
_ENV = {"debug_nans": "FUNCTRANS_DEBUG_NANS", "log_compiles": "FUNCTRANS_LOG_COMPILES",
        "dump_dir": "FUNCTRANS_DUMP", "traceback_filtering": "FUNCTRANS_TRACEBACK_FILTERING",
        "compile_cache_size": "FUNCTRANS_COMPILE_CACHE_SIZE",
        "backend_cache_size": "FUNCTRANS_BACKEND_CACHE_SIZE",
        "enable_checks": "FUNCTRANS_ENABLE_CHECKS", "enable_x64": "FUNCTRANS_ENABLE_X64",
        "show_progress": "FUNCTRANS_SHOW_PROGRESS",
        "progress_after_seconds": "FUNCTRANS_PROGRESS_AFTER"}
_DEFAULTS = {"debug_nans": False, "log_compiles": False, "dump_dir": None,
             "traceback_filtering": True, "compile_cache_size": 256, "backend_cache_size": 512,
             "enable_checks": False,
             "enable_x64": True, "show_progress": True, "progress_after_seconds": 2.0}

# JAX's names for the same switch: explain_cache_misses logs why each (re)compile happens,
# which is what the compile log's reason says ("argument 'x': shape (3,) -> (4,)")
_ALIASES = {"explain_cache_misses": "log_compiles"}

_values: dict = {}
_listeners: list = []   # fn(name, old, new), called after every change


def _canonical(name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"option names are strings, got {name!r:.60}")
    n = name
    for prefix in ("functrans_", "jax_"):
        if n.startswith(prefix):
            n = n[len(prefix):]
            break
    n = _ALIASES.get(n, n)
    if n not in _PARSERS:
        raise AttributeError(f"unknown functrans option {name!r}; options: "
                             f"{', '.join(sorted(_PARSERS))}")
    return n


def _from_env(name):
    raw = os.environ.get(_ENV[name])
    if raw is None:
        return _DEFAULTS[name]
    try:
        return _PARSERS[name](name, raw)
    except (TypeError, ValueError) as e:
        raise ValueError(f"environment variable {_ENV[name]}: {e}") from None


def options() -> dict:
    """Every option with its current value.

    >>> sorted(options())
    ['backend_cache_size', 'compile_cache_size', 'debug_nans', 'dump_dir', 'enable_checks', 'enable_x64', 'log_compiles', 'progress_after_seconds', 'show_progress', 'traceback_filtering']
    """
    return {n: read(n) for n in sorted(_PARSERS)}


def read(name: str):
    """The current value of option ``name``.

    >>> read("functrans_debug_nans") in (True, False)
    True
    """
    return _values[_canonical(name)]


def update(name: str, value):
    """Set option ``name`` to ``value`` (see the module docstring for the options).

    >>> update("log_compiles", True); read("log_compiles")
    True
    >>> update("log_compiles", False)
    """
    n = _canonical(name)
    new = _PARSERS[n](n, value)
    old = _values[n]
    _values[n] = new
    if old != new:
        for fn in list(_listeners):
            fn(n, old, new)


def on_update(fn):
    """Call ``fn(name, old, new)`` after every change of an option; returns ``fn``. Modules
    above this one (tracing) push the flags their hot paths read as plain globals this way.

    >>> seen = []
    >>> _ = on_update(lambda name, old, new: seen.append((name, new)))
    >>> update("log_compiles", True); update("log_compiles", False); seen
    [('log_compiles', True), ('log_compiles', False)]
    >>> _listeners.pop() and None
    """
    _listeners.append(fn)
    return fn


def __getattr__(name):   # ft.config.debug_nans reads an option
    if name.startswith("_"):
        raise AttributeError(name)
    return read(name)


for _n in _PARSERS:
    _values[_n] = _from_env(_n)
