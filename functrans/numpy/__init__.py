"""functrans.numpy: the array API (jax.numpy-like).

Outside any transform every function computes at once with numpy and returns an
``Array``; inside a transform the same code records primitives.

>>> import functrans.numpy as fnp
>>> fnp.sum(fnp.sin(fnp.zeros(3))).item()
0.0
"""
import sys as _sys

import numpy as _np

from ..array import Array  # noqa: F401
from . import _array_methods
# Array's and tracers' methods and numpy's protocols on tracers call this package's
# functions (looked up here when called); attached first, as the modules below use them
_array_methods.install(_sys.modules[__name__])
from . import _weak_operators  # noqa: E402
_weak_operators.install()
from ._elementwise import *  # noqa: F401,F403
from ._elementwise import add, subtract, multiply, true_divide, divide, negative, sin, cos, exp, log
from ._elementwise_select import *  # noqa: F401,F403
from ._rounding import *  # noqa: F401,F403
from ._structural import *  # noqa: F401,F403
from ._joining import *  # noqa: F401,F403
from ._take import *  # noqa: F401,F403
from ._reductions import *  # noqa: F401,F403
from ._average import *  # noqa: F401,F403
from ._creation import *  # noqa: F401,F403
from ._products import *  # noqa: F401,F403
from ._sorting import *  # noqa: F401,F403
from ._extra_math import *  # noqa: F401,F403
from ._extra_arrays import *  # noqa: F401,F403
from ._extra_functional import *  # noqa: F401,F403
from ._statistics import *  # noqa: F401,F403
from ._searching import *  # noqa: F401,F403
from ._polynomial import *  # noqa: F401,F403
from ._gather_ops import *  # noqa: F401,F403
from ._setops import *  # noqa: F401,F403
from ._index_tricks import *  # noqa: F401,F403
from ._dtype_info import *  # noqa: F401,F403
from ._misc import *  # noqa: F401,F403
from ._float_bits import *  # noqa: F401,F403
from ._bits import *  # noqa: F401,F403
from ._ufunc import *  # noqa: F401,F403
from . import _ufunc_named  # noqa: F401  (ufunc methods on fnp.add, fnp.maximum, ...)
from . import _indexing  # noqa: F401
from . import linalg  # noqa: F401
from . import fft  # noqa: F401

from ._scalar_types import *  # noqa: F401,F403,E402
from ._array_api_info import __array_namespace_info__, __array_api_version__  # noqa: F401,E402
dtype = _np.dtype
pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan
newaxis = None
ndarray = Array


from . import (_elementwise, _elementwise_select, _rounding, _structural, _joining,  # noqa: E402
               _take, _reductions, _creation, _products, _sorting, _extra_math, _extra_arrays,
               _extra_functional, _statistics, _searching, _polynomial, _gather_ops,
               _setops, _index_tricks, _dtype_info, _misc, _float_bits, _bits, _ufunc, _scalar_types)

__all__ = sorted(set(
    [n for m in (_elementwise, _elementwise_select, _rounding, _structural, _joining, _take,
                 _reductions, _creation, _products, _sorting, _extra_math, _extra_arrays,
                 _extra_functional, _statistics, _searching, _polynomial, _gather_ops, _setops,
                 _index_tricks, _dtype_info, _misc, _float_bits, _bits, _ufunc, _scalar_types)
     for n in m.__all__]
    + ["linalg", "fft", "Array", "ndarray", "dtype", "pi", "e", "inf", "nan",
       "newaxis", "euler_gamma", "__array_namespace_info__", "__array_api_version__"]))
euler_gamma = 0.5772156649015329

# JAX's precision= / preferred_element_type= arguments (accepted; see functrans.precision)
from ..precision import with_precision_args as _with_precision_args  # noqa: E402
from ..precision import einsum_with_precision_args as _einsum_with_precision_args  # noqa: E402
einsum = _einsum_with_precision_args(einsum)  # noqa: F405
matmul = _with_precision_args(matmul)  # noqa: F405
dot = _with_precision_args(dot)  # noqa: F405
tensordot = _with_precision_args(tensordot)  # noqa: F405
vdot = _with_precision_args(vdot)  # noqa: F405
