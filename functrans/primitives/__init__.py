"""The primitives, one module per family; each primitive's rules sit beside it."""
from . import (base, elementwise, structural, indexing, reductions, dot, linalg, sorting,  # noqa: F401
               random, call, custom, collectives, control_flow)
