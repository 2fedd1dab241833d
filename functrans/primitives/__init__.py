"""The primitives, one module per family; each primitive's rules sit beside it."""
from . import (base, elementwise, structural, slicing, indexing, reductions, dot,  # noqa: F401
               linalg, linalg_decomp, fft, sorting, random, call, custom, collectives,
               control_flow)
