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
| ``debug_infs`` | False (``FUNCTRANS_DEBUG_INFS``) | as ``debug_nans``, for infinities: a jitted call whose outputs hold an inf is re-run equation by equation and raises ``FloatingPointError`` naming the first equation that made one |
| ``numpy_rank_promotion`` | ``"allow"`` (``FUNCTRANS_NUMPY_RANK_PROMOTION``) | ``"warn"`` / ``"raise"``: a ``functrans.numpy`` elementwise function, operator or ``where`` whose array operands have different ranks (one broadcast to more axes; scalars excepted) warns / raises ``ValueError``, as JAX; both options check the user's arithmetic, not that inside functrans's library functions (``functrans.scipy``, ``nn``, ``lax``, ...) |
| ``numpy_dtype_promotion`` | ``"standard"`` (``FUNCTRANS_NUMPY_DTYPE_PROMOTION``) | ``"strict"``: those functions raise ``TypePromotionError`` when operands of different dtypes would be promoted (a Python scalar may still adapt to an array of its kind or wider: int to int/float/complex, float to float/complex), as JAX |
| ``no_tracing`` | False | a ``jit`` function that must trace (a cache miss) raises ``RuntimeError`` |
| ``disable_jit`` | False | ``jit`` functions run as plain Python in every thread (``ft.disable_jit()`` is the per-thread form and wins inside its block) |
| ``default_device`` | None | accepted with no effect: None, ``"cpu"`` or the host ``Device`` (where eager arrays live; ``jit`` still compiles for the default backend), or the GPU when it is the default backend (``FUNCTRANS_BACKEND=cuda``); another GPU choice raises (use ``jit(backend="cuda")`` / ``device_put(x, "cuda")``) |
| ``default_matmul_precision`` | None | accepted: None or one of JAX's level names (``"highest"``, ``"float32"``, ``"tensorfloat32"``, ``"bfloat16"``, ``"high"``, ``"default"``); changes nothing, as ``precision=`` (``functrans.precision``): products are computed at the dtype's full precision; JAX's algorithm names raise |
| ``transfer_guard`` (and ``_host_to_device``, ``_device_to_host``, ``_device_to_device``) | None | accepted levels (``"allow"``, ``"log"``, ``"disallow"``, ``"log_explicit"``, ``"disallow_explicit"``) with no effect: on the host CPU there are no transfers to guard (JAX's CPU backend does not fire either); the CUDA backend's copies are not guarded |
| ``softmax_custom_jvp`` | False | accepted; ``nn.softmax``'s derivative is the same value either way |
| ``threefry_partitionable`` | True | accepted True: ``functrans.random`` has JAX's partitionable threefry layout only; False raises |
| ``default_prng_impl`` | ``"threefry2x32"`` | the only PRNG; other names raise |
| ``platform_name`` / ``platforms`` | None | accepted when naming the default backend (``"cpu"`` for the CPU and interpreter backends, ``"cuda"``/``"gpu"`` under ``FUNCTRANS_BACKEND=cuda``); others raise (choose with ``FUNCTRANS_BACKEND`` or ``jit(backend=...)``) |
| ``compilation_cache_dir`` | None | the folder of the CPU backend's on-disk object cache (sets ``FUNCTRANS_CACHE_DIR``; None: as that variable says, by default ``~/.cache/functrans``) |
| ``persistent_cache_min_compile_time_secs`` | 1.0 | accepted, with no effect (every compile is cached) |
| ``check_tracer_leaks`` | False | after each ``jit`` trace, a garbage-collector scan for tracers of that trace (and of the traces ended inside it) still alive: a leak raises ``UnexpectedTracerError`` at once, not only when the leaked tracer is used (slow: for debugging) |
| ``no_execution`` | False | only False: True raises ``NotImplementedError`` (no execution guard) |
| ``debug_key_reuse`` / ``enable_custom_prng`` | False | only False: True raises ``NotImplementedError`` (no key-reuse tracking; the one threefry PRNG) |
| ``legacy_prng_key`` | ``"allow"`` | only ``"allow"``: keys are uint32 arrays here (``random.key`` gives one too), so raw keys cannot be told apart to warn or raise |
| ``allow_f16_reductions`` | True | only True: reductions of float16 are allowed |

Names may carry a ``functrans_`` prefix (``"functrans_debug_nans"``) or JAX's ``jax_``
(``"jax_enable_x64"``); JAX's ``explain_cache_misses`` is ``log_compiles``.

>>> import functrans as ft
>>> ft.config.read("log_compiles") in (True, False)
True
>>> ft.config.update("nope", 1)
Traceback (most recent call last):
...
AttributeError: unknown functrans option 'nope'; options: allow_f16_reductions, backend_cache_size, ...
"""
from __future__ import annotations

import os

from backends import default_backend as _default_backend

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


def _choice(*allowed):
    def parse(name, value):
        if value not in allowed:
            raise ValueError(f"option {name!r} takes one of {list(allowed)}, got {value!r:.60}")
        return value
    return parse


def _only(value_ok, why):
    """A parser accepting the values ``value_ok`` approves, else NotImplementedError(why)."""
    def parse(name, value):
        if not value_ok(value):
            raise NotImplementedError(f"option {name!r} = {value!r:.60}: {why}")
        return value
    return parse


def _as_device(name, value):
    platform = value if isinstance(value, str) else getattr(value, "platform", None)
    if value is None or platform == "cpu" or (platform in ("cuda", "gpu")
                                              and _default_backend() == "cuda"):
        return value
    raise NotImplementedError(
        f"option {name!r}: the default device here is the host CPU (None, 'cpu' or "
        "ft.devices('cpu')[0]) or, under FUNCTRANS_BACKEND=cuda, the GPU that is already "
        f"the default; got {value!r:.60}; run on the GPU with jit(..., backend='cuda') and "
        "device_put(x, 'cuda')")


_PRECISIONS = (None, "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
               "fastest", "bfloat16_3x")


def _as_precision(name, value):
    v = value.name.lower() if hasattr(value, "name") else value   # a lax.Precision
    if v not in _PRECISIONS:
        raise ValueError(f"option {name!r} takes None or one of {list(_PRECISIONS[1:])} "
                         f"(JAX's dot algorithm names are not supported), got {value!r:.60}")
    return v


def _as_platform(name, value):
    if value in (None, ""):
        return None
    first = str(value).split(",")[0].strip().lower()
    backend = _default_backend()
    if first == backend or (first == "cpu" and backend == "interpret") or \
            (first == "gpu" and backend == "cuda"):
        return value
    raise ValueError(f"option {name!r}: the platform is chosen by FUNCTRANS_BACKEND (now "
                     f"{backend!r}) or jit(..., backend=...), got {value!r:.60}")


_GUARD = _choice(None, "allow", "log", "disallow", "log_explicit", "disallow_explicit")
_PARSERS = {"debug_nans": _as_bool, "log_compiles": _as_bool,
            "dump_dir": _as_dir, "traceback_filtering": _as_bool, "compile_cache_size": _as_size,
            "backend_cache_size": _as_size, "enable_checks": _as_bool, "enable_x64": _as_x64,
            "show_progress": _as_bool,
            "progress_after_seconds": _as_seconds,
            "debug_infs": _as_bool, "no_tracing": _as_bool, "disable_jit": _as_bool,
            "numpy_rank_promotion": _choice("allow", "warn", "raise"),
            "numpy_dtype_promotion": _choice("standard", "strict"),
            "default_device": _as_device, "default_matmul_precision": _as_precision,
            "transfer_guard": _GUARD, "transfer_guard_host_to_device": _GUARD,
            "transfer_guard_device_to_host": _GUARD, "transfer_guard_device_to_device": _GUARD,
            "softmax_custom_jvp": _as_bool,
            "threefry_partitionable": _only(lambda v: v is True or v == 1, "functrans.random "
                                            "has JAX's partitionable threefry layout only"),
            "default_prng_impl": _only(lambda v: v in ("threefry2x32", "threefry"),
                                       "the only PRNG here is 'threefry2x32'"),
            "platform_name": _as_platform, "platforms": _as_platform,
            "compilation_cache_dir": _as_dir,
            "persistent_cache_min_compile_time_secs": _as_seconds,
            "check_tracer_leaks": _as_bool,
            "no_execution": _only(lambda v: not v, "functrans has no execution guard"),
            "debug_key_reuse": _only(lambda v: not v, "functrans tracks no key reuse"),
            "enable_custom_prng": _only(lambda v: not v, "the only PRNG here is threefry2x32"),
            "legacy_prng_key": _only(lambda v: v == "allow", "keys are uint32 arrays here, "
                                     "so raw keys cannot be told from typed ones"),
            "allow_f16_reductions": _only(lambda v: bool(v), "float16 reductions are always "
                                          "allowed here")}
_ENV = {"debug_nans": "FUNCTRANS_DEBUG_NANS", "log_compiles": "FUNCTRANS_LOG_COMPILES",
        "dump_dir": "FUNCTRANS_DUMP", "traceback_filtering": "FUNCTRANS_TRACEBACK_FILTERING",
        "compile_cache_size": "FUNCTRANS_COMPILE_CACHE_SIZE",
        "backend_cache_size": "FUNCTRANS_BACKEND_CACHE_SIZE",
        "enable_checks": "FUNCTRANS_ENABLE_CHECKS", "enable_x64": "FUNCTRANS_ENABLE_X64",
        "show_progress": "FUNCTRANS_SHOW_PROGRESS",
        "progress_after_seconds": "FUNCTRANS_PROGRESS_AFTER",
        "debug_infs": "FUNCTRANS_DEBUG_INFS",
        "numpy_rank_promotion": "FUNCTRANS_NUMPY_RANK_PROMOTION",
        "numpy_dtype_promotion": "FUNCTRANS_NUMPY_DTYPE_PROMOTION"}
_DEFAULTS = {"debug_nans": False, "log_compiles": False, "dump_dir": None,
             "traceback_filtering": True, "compile_cache_size": 256, "backend_cache_size": 512,
             "enable_checks": False,
             "enable_x64": True, "show_progress": True, "progress_after_seconds": 2.0,
             "debug_infs": False, "no_tracing": False, "disable_jit": False,
             "numpy_rank_promotion": "allow", "numpy_dtype_promotion": "standard",
             "default_device": None, "default_matmul_precision": None,
             "transfer_guard": None, "transfer_guard_host_to_device": None,
             "transfer_guard_device_to_host": None, "transfer_guard_device_to_device": None,
             "softmax_custom_jvp": False, "threefry_partitionable": True,
             "default_prng_impl": "threefry2x32", "platform_name": None, "platforms": None,
             "compilation_cache_dir": None, "persistent_cache_min_compile_time_secs": 1.0,
             "check_tracer_leaks": False, "no_execution": False, "debug_key_reuse": False,
             "enable_custom_prng": False, "legacy_prng_key": "allow",
             "allow_f16_reductions": True}

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
    raw = os.environ.get(_ENV[name]) if name in _ENV else None
    if raw is None:
        return _DEFAULTS[name]
    try:
        return _PARSERS[name](name, raw)
    except (TypeError, ValueError) as e:
        raise ValueError(f"environment variable {_ENV[name]}: {e}") from None


def options() -> dict:
    """Every option with its current value.

    >>> sorted(options())[:4]
    ['allow_f16_reductions', 'backend_cache_size', 'check_tracer_leaks', 'compilation_cache_dir']
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


_CACHE_ENV = os.environ.get("FUNCTRANS_CACHE_DIR")   # as the process started


def _cache_dir_to_env(name, old, new):
    # the CPU backend reads its disk cache's folder from FUNCTRANS_CACHE_DIR at each compile
    if name == "compilation_cache_dir":
        value = new if new is not None else _CACHE_ENV
        if value is None:
            os.environ.pop("FUNCTRANS_CACHE_DIR", None)
        else:
            os.environ["FUNCTRANS_CACHE_DIR"] = value


_listeners.append(_cache_dir_to_env)
for _n in _PARSERS:
    _values[_n] = _from_env(_n)
