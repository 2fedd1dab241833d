"""The primitives, one module per family; each primitive's rules sit beside it."""
from . import base, elementwise, structural, reductions, call  # noqa: F401
