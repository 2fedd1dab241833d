"""``functrans.scipy.sparse``: the ``linalg`` submodule (Krylov solvers over matrices or
linear functions), as ``jax.scipy.sparse``.

>>> from functrans.scipy import sparse
>>> sparse.linalg.__all__
['bicgstab', 'cg', 'gmres']
"""
from . import linalg

__all__ = ["linalg"]
