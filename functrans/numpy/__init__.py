"""functrans.numpy: the array API (jax.numpy-like).

Outside any transform every function computes at once with numpy and returns an
``Array``; inside a transform the same code records primitives.

>>> import functrans.numpy as fnp
>>> fnp.sum(fnp.sin(fnp.zeros(3))).item()
0.0
"""
import numpy as _np

from ..array import Array  # noqa: F401  (installs the array methods)
from ._elementwise import *  # noqa: F401,F403
from ._elementwise import add, subtract, multiply, true_divide, divide, negative, sin, cos, exp, log
from ._structural import *  # noqa: F401,F403
from ._joining import *  # noqa: F401,F403
from ._take import *  # noqa: F401,F403
from ._reductions import *  # noqa: F401,F403
from ._creation import *  # noqa: F401,F403
from ._products import *  # noqa: F401,F403
from ._sorting import *  # noqa: F401,F403
from . import _indexing  # noqa: F401
from . import linalg  # noqa: F401
from . import fft  # noqa: F401

float64 = _np.float64
float32 = _np.float32
float16 = _np.float16
int64 = _np.int64
int32 = _np.int32
int8 = _np.int8
uint32 = _np.uint32
uint8 = _np.uint8
bool_ = _np.bool_
complex64 = _np.complex64
complex128 = _np.complex128
dtype = _np.dtype
pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan
newaxis = None
ndarray = Array

