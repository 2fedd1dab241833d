"""``functrans.experimental.sparse``: sparse arrays with the API of
``jax.experimental.sparse`` — ``BCOO`` (batched coordinate format, a pytree of ``data``
and ``indices``), its operations (``bcoo_dot_general``, ``bcoo_reduce_sum``, ...), the
constructors ``eye``, ``empty``, ``random_bcoo``, ``BCSR`` (compressed rows) and
``sparsify``, which runs dense code on sparse arguments. All are built on existing
primitives, so ``jit``, ``vmap``, ``grad`` and ``jvp`` work through them.

>>> import functrans.numpy as fnp
>>> from functrans.experimental import sparse
>>> M = sparse.BCOO.fromdense(fnp.asarray([[0.0, 1.0], [2.0, 0.0]]))
>>> (M @ fnp.ones(2)).tolist()
[1.0, 2.0]
"""
from .api import empty, eye, random_bcoo
from .bcoo import (BCOO, bcoo_dot_general, bcoo_extract, bcoo_fromdense,
                   bcoo_multiply_dense, bcoo_reduce_sum, bcoo_reshape, bcoo_sort_indices,
                   bcoo_sum_duplicates, bcoo_todense, bcoo_transpose, bcoo_update_layout)
from .bcsr import BCSR, bcsr_fromdense, bcsr_todense
from .transform import sparsify

__all__ = ["BCOO", "BCSR", "sparsify", "eye", "empty", "random_bcoo", "todense",
           "bcoo_todense", "bcoo_fromdense", "bcoo_extract", "bcoo_dot_general",
           "bcoo_multiply_dense", "bcoo_reduce_sum", "bcoo_transpose", "bcoo_sum_duplicates",
           "bcoo_sort_indices", "bcoo_reshape", "bcoo_update_layout", "bcsr_fromdense",
           "bcsr_todense"]


def todense(arr):
    """The dense array of a sparse one (a dense array is returned as it is).

    >>> todense(eye(2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return arr.todense() if isinstance(arr, (BCOO, BCSR)) else arr
