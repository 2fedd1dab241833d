"""The primitives, one module per family; each primitive's rules sit beside it. The
modules form one import order, bottom to top, listed in ``base``'s docstring."""
from . import (base, elementwise, structural, slicing, indexing, reductions, dot,  # noqa: F401
               linalg, linalg_decomp, linalg_det, fft, sorting, random, call, custom,
               custom_vmap,
               collectives, control_flow)
