"""functrans: composable function transformations (grad, jit, vmap, ...) for Python.

>>> import functrans as ft, functrans.numpy as fnp
>>> float(ft.grad(lambda x: fnp.sum(fnp.sin(x) * x))(0.5))  # doctest: +ELLIPSIS
0.9182...
"""
import contextlib
import threading
from typing import Any, Iterator

from backends import default_backend as _backend_name, get_backend as _get_backend
from . import errors, tree_util  # noqa: F401
from . import primitives  # noqa: F401  (registers every primitive)
from . import numpy  # noqa: F401
from . import lax  # noqa: F401
from . import nn, random  # noqa: F401
from .autodiff import grad, value_and_grad, vjp, jvp, linearize  # noqa: F401
from .autodiff import residuals  # noqa: F401
from .jacobians import jacfwd, jacrev, jacobian, hessian, linear_transpose, fwd_and_bwd  # noqa: F401,E501
from .custom_derivatives import custom_jvp, custom_vjp  # noqa: F401
from .closures import closure_convert, custom_gradient, named_call, named_scope  # noqa: F401
from .primitives.custom import stop_gradient  # noqa: F401
from .remat import (checkpoint, remat, checkpoint_policies, checkpoint_name,  # noqa: F401
                    saved_residuals, print_saved_residuals)
from .batching import vmap  # noqa: F401
from .jit import jit, make_jaxpr, eval_shape, ShapeDtypeStruct, clear_caches  # noqa: F401
from .callbacks import pure_callback, effects_barrier  # noqa: F401
from .tracing import eval_jaxpr  # noqa: F401
from .tracing import Tracer as _Tracer, get_aval as _get_aval, own_constants as _own_constants
from .array import Array  # noqa: F401
from .device import device_get, device_put  # noqa: F401
from . import distributed, sharding, dlpack  # noqa: F401
from .sharding import NamedSharding, P, make_mesh, set_mesh  # noqa: F401
from .distributed import process_index, process_count  # noqa: F401
from .shard_map import shard_map  # noqa: F401
from .global_array import (make_array_from_callback,  # noqa: F401
                           make_array_from_process_local_data,
                           make_array_from_single_device_arrays)
from .pmap import pmap  # noqa: F401
# ---- tools (config, debug.print, profiler, IR graphs); registers debug_print
from . import config, debug, dump  # noqa: F401,E402  (debug, dump: compile hooks)
from .profiler import profile  # noqa: F401,E402
from .to_dot import to_dot  # noqa: F401,E402
# ---- JAX-compatible extras built on the public API (issue 14)
from . import tree, test_util  # noqa: F401,E402
from . import typing  # noqa: F401,E402  (ArrayLike, DTypeLike, Shape)
from . import scipy  # noqa: F401,E402  (already loaded: lax's special functions live there)
from . import ops  # noqa: F401,E402  (jax.ops: segment_sum and friends)
from . import dtypes  # noqa: F401,E402  (jax.dtypes: float0, canonicalize_dtype...)
from . import flatten_util  # noqa: F401,E402  (jax.flatten_util.ravel_pytree)
from . import ad_checkpoint  # noqa: F401,E402  (jax.ad_checkpoint.checkpoint_name...)
from . import image  # noqa: F401,E402  (jax.image.resize, scale_and_translate)
from . import custom_batching  # noqa: F401,E402  (jax.custom_batching.custom_vmap...)
from .device import Device, host_device  # noqa: E402
# JAX's option context managers and host queries (issue: the JAX top-level API)
from .config_api import (debug_nans, log_compiles, enable_checks, debug_infs,  # noqa: E402
                         numpy_rank_promotion, numpy_dtype_promotion, default_device,
                         default_matmul_precision, enable_x64, transfer_guard,
                         transfer_guard_host_to_device, transfer_guard_device_to_host,
                         transfer_guard_device_to_device, check_tracer_leaks, checking_leaks,
                         explain_cache_misses, no_tracing, no_execution, softmax_custom_jvp,
                         threefry_partitionable, default_prng_impl, host_id, host_count,
                         host_ids, process_indices, live_arrays, print_environment_info,
                         debug_key_reuse, enable_custom_prng, legacy_prng_key, copy_to_host_async)
from .dtypes import float0  # noqa: E402
from .jit import jit_switch as _jit_switch  # noqa: E402

__version__ = "0.1.0"

# the public names (PEP 561: what type checkers treat as re-exported); tests/test_public_face.py
# checks that each has a docstring with an example
__all__ = [
    "grad", "value_and_grad", "jvp", "vjp", "linearize", "residuals",
    "jacfwd", "jacrev", "jacobian", "hessian", "linear_transpose", "custom_jvp", "custom_vjp",
    "closure_convert", "custom_gradient", "named_call", "named_scope",
    "stop_gradient",
    "checkpoint", "remat", "checkpoint_policies", "checkpoint_name", "saved_residuals",
    "print_saved_residuals", "vmap", "pmap", "make_mesh", "NamedSharding", "P", "set_mesh",
    "jit", "make_jaxpr", "eval_shape", "ShapeDtypeStruct", "eval_jaxpr",
    "Array", "device_put", "device_get", "profile", "to_dot",
    "config", "debug", "errors", "lax", "nn", "numpy", "random", "tree_util",
    "block_until_ready", "devices", "device_count", "local_device_count", "default_backend",
    "disable_jit", "scipy", "typing", "ops", "dtypes", "flatten_util", "ad_checkpoint", "image",
    "custom_batching",
    "pure_callback", "effects_barrier", "typeof", "fwd_and_bwd", "debug_nans", "log_compiles",
    "enable_checks", "ensure_compile_time_eval",
    "debug_infs", "numpy_rank_promotion", "numpy_dtype_promotion", "default_device",
    "default_matmul_precision", "enable_x64", "transfer_guard", "transfer_guard_host_to_device",
    "transfer_guard_device_to_host", "transfer_guard_device_to_device", "check_tracer_leaks",
    "checking_leaks", "explain_cache_misses", "no_tracing", "no_execution", "softmax_custom_jvp",
    "threefry_partitionable", "default_prng_impl", "host_id", "host_count", "host_ids",
    "process_indices", "live_arrays", "print_environment_info", "local_devices", "float0",
    "debug_key_reuse", "enable_custom_prng", "legacy_prng_key", "copy_to_host_async",
    "make_array_from_callback", "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
]


def block_until_ready(x: Any) -> Any:
    """Wait until every array in the pytree ``x`` is computed, and return ``x`` (JAX's
    ``jax.block_until_ready``): eager Arrays are always ready; device arrays synchronize.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> ft.block_until_ready({"a": fnp.ones(2)})["a"].tolist()
    [1.0, 1.0]
    """
    for leaf in tree_util.tree_leaves(x):
        wait = getattr(leaf, "block_until_ready", None)
        if callable(wait):
            wait()
    return x


def typeof(x: Any) -> Any:
    """The type of ``x`` as transforms see it: its abstract value (shape, dtype and weak
    type), for arrays, scalars and tracers alike (JAX's ``jax.typeof``).

    >>> import functrans as ft, functrans.numpy as fnp
    >>> ft.typeof(fnp.ones((2, 3), "float32")).str_short()
    'f32[2,3]'
    """
    return _get_aval(x if isinstance(x, _Tracer) else numpy.asarray(x))


def default_backend() -> str:
    """The backend ``jit`` compiles for when none is given: ``FUNCTRANS_BACKEND`` if set,
    else ``"cpu"`` (LLVM), else ``"interpret"``. (Unlike JAX's platform names, a GPU is
    ``"cuda"``.)

    >>> import functrans as ft
    >>> ft.default_backend() in ("cpu", "interpret", "cuda")
    True
    """
    return _backend_name()


def devices(backend: str | None = None) -> list:
    """The devices of ``backend`` (default: ``default_backend()``) over all processes, as
    JAX lists them: one CPU per process for ``"cpu"``/``"interpret"`` (``CpuDevice(id=r)``
    is process ``r``'s), one GPU for ``"cuda"`` (RuntimeError when none is usable).

    >>> import functrans as ft
    >>> ft.devices("cpu")
    [CpuDevice(id=0)]
    """
    name = backend or default_backend()
    if name in ("cpu", "interpret"):
        return [Device("cpu", r) for r in range(process_count())]
    if name == "cuda":
        _get_backend("cuda").check_available()
        return [Device("cuda", 0)]
    raise ValueError(f"devices: unknown backend {name!r}; choose 'cpu', 'interpret' or 'cuda'")


def local_device_count(backend: str | None = None) -> int:
    """How many devices this process has (``len(local_devices(backend=backend))``).

    >>> import functrans as ft
    >>> ft.local_device_count("cpu")
    1
    """
    return len(local_devices(backend=backend))


def local_devices(process_index: int | None = None, backend: str | None = None,
                  host_id: int | None = None) -> list:
    """The devices of process ``process_index`` (None: this one), JAX's
    ``jax.local_devices``: this process's CPU (``CpuDevice(id=r)`` in process ``r``) or its
    GPU; another process's devices raise ``ValueError`` (each process sees only its own).

    >>> import functrans as ft
    >>> ft.local_devices() == ft.devices()        # one process
    True
    """
    index = process_index if process_index is not None else host_id
    if index is not None and index != distributed.process_index():
        raise ValueError(f"local_devices: process {index} is not this process "
                         f"({distributed.process_index()}); each process lists its own devices")
    name = backend or default_backend()
    return [host_device()] if name in ("cpu", "interpret") else devices(name)


def device_count(backend: str | None = None) -> int:
    """How many devices of ``backend`` (None: the default) all processes have together
    (one host each under MPI).

    >>> import functrans as ft
    >>> ft.device_count("cpu") == ft.process_count()
    True
    """
    return local_device_count(backend) * process_count()


_DISABLE_LOCK = threading.Lock()


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Inside the block, ``jit`` functions run as plain Python on concrete values, in
    this thread (JAX's ``jax.disable_jit``): prints print each call, and Python control
    flow on values works; for debugging.

    >>> import functrans as ft
    >>> f = ft.jit(lambda x: x * 2 if x > 0 else -x)     # `if` on a value: fails under jit
    >>> with ft.disable_jit():
    ...     f(3.0)
    6.0
    """
    previous, switch = _jit_switch.disabled, type(_jit_switch)
    with _DISABLE_LOCK:          # how many threads disable: jit's call path reads it first
        switch.anywhere += bool(disable)
    _jit_switch.disabled = bool(disable)
    try:
        yield
    finally:
        _jit_switch.disabled = previous
        with _DISABLE_LOCK:
            switch.anywhere -= bool(disable)


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Inside the block, values that depend on no traced input are computed now, while
    tracing, instead of being recorded in the enclosing jaxpr (JAX's
    ``jax.ensure_compile_time_eval``). Plain numpy-style operations on constants already
    run at once; this also covers what is otherwise staged as a constant of the outermost
    jaxpr (``random`` draws from a fixed key, ``arange`` inside library code), so the
    result is a concrete ``Array`` that Python control flow can read.

    >>> import functrans as ft
    >>> @ft.jit
    ... def f(x):
    ...     with ft.ensure_compile_time_eval():
    ...         noise = ft.random.normal(ft.random.PRNGKey(0), (2,))
    ...         flip = bool(noise[0] > 0)        # a concrete value: Python may branch on it
    ...     return x + noise if flip else x - noise
    >>> f(1.0).shape
    (2,)
    """
    with _own_constants():
        yield


