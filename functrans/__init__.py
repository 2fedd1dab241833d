"""functrans: composable function transformations (grad, jit, vmap, ...) for Python.

>>> import functrans as ft, functrans.numpy as fnp
>>> float(ft.grad(lambda x: fnp.sum(fnp.sin(x) * x))(0.5))  # doctest: +ELLIPSIS
0.9182...
"""
from . import errors, tree_util  # noqa: F401
from . import primitives  # noqa: F401  (registers every primitive)
from . import numpy  # noqa: F401
from . import lax  # noqa: F401
from . import nn, random  # noqa: F401
from .autodiff import grad, value_and_grad, vjp, jvp, linearize  # noqa: F401
from .autodiff import residuals  # noqa: F401
from .jacobians import jacfwd, jacrev, jacobian, hessian  # noqa: F401
from .custom_derivatives import custom_jvp, custom_vjp  # noqa: F401
from .primitives.custom import stop_gradient  # noqa: F401
from .remat import (checkpoint, remat, checkpoint_policies, checkpoint_name,  # noqa: F401
                    saved_residuals, print_saved_residuals)
from .batching import vmap  # noqa: F401
from .jit import jit, make_jaxpr, eval_shape, ShapeDtypeStruct  # noqa: F401
from .tracing import eval_jaxpr  # noqa: F401
from .array import Array  # noqa: F401
from .device import device_put  # noqa: F401
from . import distributed, sharding  # noqa: F401
from .distributed import process_index, process_count  # noqa: F401
from .shard_map import shard_map, make_array_from_process_local_data  # noqa: F401
# ---- tools (config, debug.print, profiler, IR graphs); registers debug_print
from . import config, debug, dump  # noqa: F401,E402  (debug, dump: compile hooks)
from .profiler import profile  # noqa: F401,E402
from .to_dot import to_dot  # noqa: F401,E402
# ---- JAX-compatible extras built on the public API (issue 14)
from . import tree, test_util  # noqa: F401,E402

__version__ = "0.1.0"

# the public names (PEP 561: what type checkers treat as re-exported); tests/test_public_face.py
# checks that each has a docstring with an example
__all__ = [
    "grad", "value_and_grad", "jvp", "vjp", "linearize", "residuals",
    "jacfwd", "jacrev", "jacobian", "hessian", "custom_jvp", "custom_vjp", "stop_gradient",
    "checkpoint", "remat", "checkpoint_policies", "checkpoint_name", "saved_residuals",
    "print_saved_residuals", "vmap",
    "jit", "make_jaxpr", "eval_shape", "ShapeDtypeStruct", "eval_jaxpr",
    "Array", "device_put", "profile", "to_dot",
    "config", "debug", "errors", "lax", "nn", "numpy", "random", "tree_util",
]
