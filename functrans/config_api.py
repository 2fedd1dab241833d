"""JAX's top-level option context managers (``jax.numpy_rank_promotion``,
``jax.default_device``, ``jax.debug_infs``...) and host queries (``jax.host_id``,
``jax.print_environment_info``...), over ``functrans.config``.

Each context manager sets one option of ``functrans.config`` inside its ``with`` block
and restores it after; the module docstring of ``functrans.config`` says what each
option does here (some are accepted with no effect, and values functrans cannot honour
raise). Unlike JAX's, the options are process-wide, not per thread.

>>> import functrans as ft, functrans.numpy as fnp
>>> with ft.numpy_dtype_promotion("strict"):
...     (fnp.ones(2, "float32") * 2.0).dtype       # a Python scalar still adapts
dtype('float32')
"""
from __future__ import annotations

import contextlib
import importlib.metadata
import platform
import sys
from typing import Any, Iterator

from backends import default_backend
from . import config
from .distributed import process_count, process_index
from .tree_util import tree_leaves

__all__ = ["option_set", "debug_nans", "log_compiles", "enable_checks", "debug_infs", "numpy_rank_promotion", "numpy_dtype_promotion",
           "default_device", "default_matmul_precision", "enable_x64", "transfer_guard",
           "transfer_guard_host_to_device", "transfer_guard_device_to_host",
           "transfer_guard_device_to_device", "check_tracer_leaks", "checking_leaks",
           "explain_cache_misses", "no_tracing", "no_execution", "softmax_custom_jvp",
           "threefry_partitionable", "default_prng_impl", "host_id", "host_count",
           "host_ids", "process_indices", "live_arrays", "print_environment_info",
           "debug_key_reuse", "enable_custom_prng", "legacy_prng_key", "copy_to_host_async"]


@contextlib.contextmanager
def option_set(name: str, value: Any) -> Iterator[None]:
    """Option ``name`` of ``functrans.config`` set to ``value`` inside the block, restored
    after (the value is checked on entry: an unsupported one raises there).

    >>> import functrans as ft
    >>> with option_set("log_compiles", True):
    ...     ft.config.read("log_compiles")
    True
    """
    old = config.read(name)
    config.update(name, value)
    try:
        yield
    finally:
        config.update(name, old)


def debug_nans(new_val: bool = True) -> contextlib.AbstractContextManager:
    """The ``debug_nans`` option set to ``new_val`` inside a ``with`` block, as JAX's
    ``with jax.debug_nans(False): ...``.

    >>> import functrans as ft
    >>> with ft.debug_nans(True):
    ...     ft.config.read("debug_nans")
    True
    """
    return option_set("debug_nans", bool(new_val))


def log_compiles(new_val: bool = True) -> contextlib.AbstractContextManager:
    """The ``log_compiles`` option set to ``new_val`` inside a ``with`` block (JAX's
    ``jax.log_compiles``).

    >>> import functrans as ft
    >>> with ft.log_compiles(False):
    ...     ft.config.read("log_compiles")
    False
    """
    return option_set("log_compiles", bool(new_val))


def enable_checks(new_val: bool = True) -> contextlib.AbstractContextManager:
    """The ``enable_checks`` option set to ``new_val`` inside a ``with`` block (JAX's
    ``jax.enable_checks``).

    >>> import functrans as ft
    >>> with ft.enable_checks(True):
    ...     ft.config.read("enable_checks")
    True
    """
    return option_set("enable_checks", bool(new_val))


def debug_infs(new_val: bool = True) -> contextlib.AbstractContextManager:
    """The ``debug_infs`` option inside a ``with`` block (JAX's ``jax.debug_infs``): a
    jitted call whose outputs hold an inf raises ``FloatingPointError`` naming the
    equation that made it.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> with ft.debug_infs():
    ...     ft.jit(lambda x: fnp.exp(x))(1000.0)
    Traceback (most recent call last):
    ...
    FloatingPointError: debug_infs: inf produced in jit(<lambda>) by equation 0 (primitive 'exp'...
    """
    return option_set("debug_infs", bool(new_val))


def numpy_rank_promotion(new_val: str) -> contextlib.AbstractContextManager:
    """``"allow"``, ``"warn"`` or ``"raise"`` on implicit rank promotion (operands of
    ``functrans.numpy``'s elementwise functions, operators and ``where`` with different
    ranks) inside a ``with`` block (JAX's ``jax.numpy_rank_promotion``).

    >>> import functrans as ft, functrans.numpy as fnp
    >>> with ft.numpy_rank_promotion("raise"):
    ...     (fnp.ones((2, 3)) + fnp.ones((1, 3))).shape    # same rank: allowed
    (2, 3)
    """
    return option_set("numpy_rank_promotion", new_val)


def numpy_dtype_promotion(new_val: str) -> contextlib.AbstractContextManager:
    """``"standard"`` (numpy 2's promotion) or ``"strict"`` (no implicit promotion between
    different dtypes, Python scalars excepted) inside a ``with`` block (JAX's
    ``jax.numpy_dtype_promotion``).

    >>> import functrans as ft, functrans.numpy as fnp
    >>> with ft.numpy_dtype_promotion("strict"):
    ...     fnp.ones(2, "float32") + fnp.ones(2, "float64")
    Traceback (most recent call last):
    ...
    functrans.numpy._promotion_mode.TypePromotionError: Input dtypes ('float32', 'float64') have no available implicit dtype promotion path when numpy_dtype_promotion='strict'. Try explicitly casting inputs to the desired output type, or set numpy_dtype_promotion='standard'.
    """
    return option_set("numpy_dtype_promotion", new_val)


def default_device(new_val: Any) -> contextlib.AbstractContextManager:
    """The default device inside a ``with`` block (JAX's ``jax.default_device``), accepted
    with no effect: None, ``"cpu"`` or the host ``Device`` (where eager arrays live), or
    the GPU when it is the default backend already; another GPU choice raises
    ``NotImplementedError`` (use ``jit(..., backend="cuda")``).

    >>> import functrans as ft
    >>> with ft.default_device(ft.devices("cpu")[0]):
    ...     ft.numpy.ones(2).tolist()
    [1.0, 1.0]
    """
    return option_set("default_device", new_val)


def default_matmul_precision(new_val: Any) -> contextlib.AbstractContextManager:
    """The default contraction precision inside a ``with`` block (JAX's
    ``jax.default_matmul_precision``): accepted and checked, changing nothing, since
    functrans computes every product at its dtype's full precision (as ``precision=``).

    >>> import functrans as ft, functrans.numpy as fnp
    >>> with ft.default_matmul_precision("float32"):
    ...     (fnp.ones(3) @ fnp.ones(3)).item()
    3.0
    """
    return option_set("default_matmul_precision", new_val)


def enable_x64(new_val: bool = True) -> contextlib.AbstractContextManager:
    """64-bit types inside a ``with`` block (JAX's ``jax.enable_x64``): always on here, so
    ``True`` changes nothing and ``False`` raises ``ValueError`` (no 32-bit default mode).

    >>> import functrans as ft, functrans.numpy as fnp
    >>> with ft.enable_x64(True):
    ...     fnp.asarray(1.0).dtype
    dtype('float64')
    """
    return option_set("enable_x64", new_val)


def _guard(name: str, what: str):
    def guard(new_val: str) -> contextlib.AbstractContextManager:
        return option_set(name, new_val)
    guard.__name__ = guard.__qualname__ = name
    guard.__doc__ = (
        f"The transfer guard level for {what} inside a ``with`` block (JAX's\n    "
        f"``jax.{name}``): ``\"allow\"``, ``\"log\"``, ``\"disallow\"``, "
        "``\"log_explicit\"`` or\n    ``\"disallow_explicit\"``, accepted with no effect: "
        "on the host CPU there are no\n    transfers to guard (JAX's CPU backend does not "
        "fire either), and the CUDA\n    backend's copies are not guarded.\n\n"
        f"    >>> import functrans as ft\n    >>> with ft.{name}(\"disallow\"):\n"
        "    ...     ft.numpy.asarray([1.0, 2.0]).tolist()\n    [1.0, 2.0]\n")
    return guard


transfer_guard_host_to_device = _guard("transfer_guard_host_to_device",
                                       "host-to-device transfers")
transfer_guard_device_to_host = _guard("transfer_guard_device_to_host",
                                       "device-to-host transfers")
transfer_guard_device_to_device = _guard("transfer_guard_device_to_device",
                                         "device-to-device transfers")


@contextlib.contextmanager
def transfer_guard(new_val: str) -> Iterator[None]:
    """The transfer guard level for every kind of transfer inside a ``with`` block (JAX's
    ``jax.transfer_guard``); accepted with no effect, as ``transfer_guard_host_to_device``.

    >>> import functrans as ft
    >>> with ft.transfer_guard("log"):
    ...     ft.config.read("transfer_guard_device_to_host")
    'log'
    """
    with contextlib.ExitStack() as stack:
        for name in ("transfer_guard", "transfer_guard_host_to_device",
                     "transfer_guard_device_to_host", "transfer_guard_device_to_device"):
            stack.enter_context(option_set(name, new_val))
        yield


def check_tracer_leaks(new_val: bool = True) -> contextlib.AbstractContextManager:
    """Inside the block, each ``jit`` trace ends with a scan for its tracers (and those of
    the transforms inside it) still alive, as JAX's ``jax.check_tracer_leaks``: a leak
    raises ``UnexpectedTracerError`` at once (unchecked, a leaked tracer raises only when
    it is used). The scan runs the garbage collector: for debugging.

    >>> import functrans as ft
    >>> kept = []
    >>> with ft.check_tracer_leaks():
    ...     ft.jit(lambda x: kept.append(x) or x)(1.0)
    Traceback (most recent call last):
    ...
    functrans.errors.UnexpectedTracerError: check_tracer_leaks: 1 tracer(s) leaked out of jit(<lambda>): ...
    """
    return option_set("check_tracer_leaks", bool(new_val))


def checking_leaks() -> contextlib.AbstractContextManager:
    """``check_tracer_leaks(True)`` (JAX's ``jax.checking_leaks``).

    >>> import functrans as ft
    >>> with ft.checking_leaks():
    ...     ft.jit(lambda x: x * 2)(1.0).item()
    2.0
    """
    return check_tracer_leaks(True)


def explain_cache_misses(new_val: bool = True) -> contextlib.AbstractContextManager:
    """Log why each ``jit`` (re)compile happens, inside a ``with`` block (JAX's
    ``jax.explain_cache_misses``; here the ``log_compiles`` option, whose log line says
    which argument's shape or dtype changed).

    >>> import functrans as ft
    >>> with ft.explain_cache_misses():
    ...     ft.config.read("log_compiles")
    True
    """
    return option_set("log_compiles", bool(new_val))


def no_tracing(new_val: bool = True) -> contextlib.AbstractContextManager:
    """Inside the block a ``jit`` function that must trace (a cache miss) raises
    ``RuntimeError`` (JAX's ``jax.no_tracing``); calls that hit the cache run.

    >>> import functrans as ft
    >>> f = ft.jit(lambda x: x + 1)
    >>> _ = f(1.0)
    >>> with ft.no_tracing():
    ...     f(2.0).item()
    3.0
    """
    return option_set("no_tracing", bool(new_val))


def no_execution(new_val: bool = True) -> contextlib.AbstractContextManager:
    """JAX's guard against any execution (``jax.no_execution``): functrans has none, so
    ``True`` raises ``NotImplementedError`` on entering the block.

    >>> import functrans as ft
    >>> with ft.no_execution(False):
    ...     ft.config.read("no_execution")
    False
    """
    return option_set("no_execution", bool(new_val))


def softmax_custom_jvp(new_val: bool = True) -> contextlib.AbstractContextManager:
    """JAX's switch between two derivative rules of ``nn.softmax``
    (``jax.softmax_custom_jvp``): accepted; the derivative has the same value either way.

    >>> import functrans as ft
    >>> with ft.softmax_custom_jvp(True):
    ...     ft.nn.softmax(ft.numpy.zeros(2)).tolist()
    [0.5, 0.5]
    """
    return option_set("softmax_custom_jvp", bool(new_val))


def threefry_partitionable(new_val: bool = True) -> contextlib.AbstractContextManager:
    """JAX's threefry layout switch (``jax.threefry_partitionable``): ``functrans.random``
    has the partitionable layout (JAX's default) only, so ``False`` raises
    ``NotImplementedError``.

    >>> import functrans as ft
    >>> with ft.threefry_partitionable(True):
    ...     ft.random.bits(ft.random.PRNGKey(0), (1,)).dtype
    dtype('uint32')
    """
    return option_set("threefry_partitionable", new_val)


def default_prng_impl(new_val: str) -> contextlib.AbstractContextManager:
    """The PRNG of new keys (JAX's ``jax.default_prng_impl``): only ``"threefry2x32"``
    exists here; other names raise ``NotImplementedError``.

    >>> import functrans as ft
    >>> with ft.default_prng_impl("threefry2x32"):
    ...     ft.random.PRNGKey(0).tolist()
    [0, 0]
    """
    return option_set("default_prng_impl", new_val)


def debug_key_reuse(new_val: bool = True) -> contextlib.AbstractContextManager:
    """JAX's key-reuse tracking (``jax.debug_key_reuse``): functrans has none, so ``True``
    raises ``NotImplementedError`` on entering the block.

    >>> import functrans as ft
    >>> with ft.debug_key_reuse(False):
    ...     ft.config.read("debug_key_reuse")
    False
    """
    return option_set("debug_key_reuse", bool(new_val))


def enable_custom_prng(new_val: bool = True) -> contextlib.AbstractContextManager:
    """JAX's custom PRNG switch (``jax.enable_custom_prng``): the one PRNG here is
    threefry2x32, so ``True`` raises ``NotImplementedError`` on entering the block.

    >>> import functrans as ft
    >>> with ft.enable_custom_prng(False):
    ...     ft.config.read("enable_custom_prng")
    False
    """
    return option_set("enable_custom_prng", bool(new_val))


def legacy_prng_key(new_val: str) -> contextlib.AbstractContextManager:
    """What raw (uint32) keys do in ``random`` (JAX's ``jax.legacy_prng_key``): only
    ``"allow"``, since every key is a uint32 array here; ``"warn"``/``"error"`` raise
    ``NotImplementedError``.

    >>> import functrans as ft
    >>> with ft.legacy_prng_key("allow"):
    ...     ft.random.PRNGKey(1).tolist()
    [0, 1]
    """
    return option_set("legacy_prng_key", new_val)


def copy_to_host_async(x: Any) -> Any:
    """Start copying the arrays of the pytree ``x`` to the host, and return ``x`` (JAX's
    ``jax.copy_to_host_async``): each leaf with a ``copy_to_host_async`` method has it
    called; functrans's host arrays are there already.

    >>> import functrans as ft
    >>> ft.copy_to_host_async({"w": ft.numpy.ones(2)})["w"].tolist()
    [1.0, 1.0]
    """
    for leaf in tree_leaves(x):
        start = getattr(leaf, "copy_to_host_async", None)
        if callable(start):
            start()
    return x


def host_id(backend: str | None = None) -> int:
    """This process's index (JAX's deprecated ``jax.host_id``: ``process_index()``).

    >>> import functrans as ft
    >>> ft.host_id() == ft.process_index()
    True
    """
    return process_index()


def host_count(backend: str | None = None) -> int:
    """The number of processes (JAX's deprecated ``jax.host_count``: ``process_count()``).

    >>> import functrans as ft
    >>> ft.host_count() == ft.process_count()
    True
    """
    return process_count()


def process_indices(backend: str | None = None) -> list[int]:
    """The indices of all processes, ``[0, ..., process_count() - 1]`` (JAX's
    ``jax.process_indices``).

    >>> import functrans as ft
    >>> ft.process_indices() == list(range(ft.process_count()))
    True
    """
    return list(range(process_count()))


def host_ids(backend: str | None = None) -> list[int]:
    """``process_indices()`` (JAX's deprecated ``jax.host_ids``).

    >>> import functrans as ft
    >>> ft.host_ids() == ft.process_indices()
    True
    """
    return process_indices(backend)


def live_arrays(platform: str | None = None) -> list:
    """JAX's list of every live device buffer (``jax.live_arrays``): functrans's arrays
    are numpy memory that Python's garbage collector frees, with no registry of them, so
    this raises ``NotImplementedError``.

    >>> import functrans as ft
    >>> ft.live_arrays()
    Traceback (most recent call last):
    ...
    NotImplementedError: live_arrays: functrans keeps no registry of live arrays (they are numpy memory freed by Python's garbage collector)
    """
    raise NotImplementedError("live_arrays: functrans keeps no registry of live arrays "
                              "(they are numpy memory freed by Python's garbage collector)")


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def print_environment_info(return_string: bool = False) -> str | None:
    """The versions of functrans, numpy, llvmlite and Python, the default backend and the
    process count, printed (or returned with ``return_string``) as JAX's
    ``jax.print_environment_info`` does, for bug reports.

    >>> import functrans as ft
    >>> ft.print_environment_info(return_string=True).splitlines()[0].startswith("functrans:")
    True
    """
    info = "\n".join([
        f"functrans: {_version('functrans')}",
        f"numpy:     {_version('numpy')}",
        f"llvmlite:  {_version('llvmlite')}",
        f"python:    {sys.version}",
        f"backend:   {default_backend()} (1 local device)",
        f"process_count: {process_count()}",
        f"platform: {platform.uname()}",
    ])
    if return_string:
        return info
    print(info)
    return None
