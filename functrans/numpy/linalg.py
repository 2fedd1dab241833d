"""``functrans.numpy.linalg``: every function of ``jax.numpy.linalg``.

Matrices are ``(..., m, n)``; leading axes are batch axes and broadcast between
operands as in numpy. Integer and bool inputs are promoted to float64; every
function takes complex input too. Bad shapes raise ValueError naming them. A
singular matrix gives inf/NaN (as a compiled backend would), not an exception.
Everything is differentiable where JAX's is, vmappable and jittable; the
decompositions are primitives (the CPU backend calls LAPACK for real ones).

>>> import functrans.numpy as fnp
>>> round(float(fnp.linalg.det(fnp.asarray([[2.0, 1.0], [1.0, 3.0]]))), 9)
5.0
"""

from ._linalg_basic import (SlogdetResult, cholesky, cross, det, diagonal, inv, matmul,
                            matrix_power, matrix_transpose, multi_dot, outer, slogdet, solve,
                            tensordot, tensorinv, tensorsolve, trace, vecdot)
from ._linalg_norm import cond, matrix_norm, norm, vector_norm
from ._linalg_spectral import (EighResult, EigResult, QRResult, SVDResult, eig, eigh, eigvals,
                               eigvalsh, lstsq, matrix_rank, pinv, qr, svd, svdvals)

__all__ = ["cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals",
           "eigvalsh", "inv", "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
           "matrix_transpose", "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve",
           "svd", "svdvals", "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot",
           "vector_norm", "SlogdetResult", "EighResult", "EigResult", "SVDResult", "QRResult"]
