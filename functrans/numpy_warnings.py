"""No numpy floating-point RuntimeWarnings from the library's own numpy calls.

JAX computes ``1.0 / 0.0``, ``log(0)``, ``sqrt(-1)`` or an overflowing ``exp`` silently
(IEEE results: inf, nan); numpy warns. Eager functrans runs numpy, so without this its
results would come with warnings JAX does not give. The filter (installed when
functrans.array is imported) is scoped to warnings raised from functrans's and its
backends' modules, so the user's own numpy calls keep numpy's behaviour, and it costs
nothing per operation (``np.errstate`` around each eager operation would cost more than
many operations themselves). A later ``warnings.simplefilter("error")`` by the user
still takes precedence, as filters do.

>>> import warnings, functrans.numpy as fnp
>>> with warnings.catch_warnings(record=True) as seen:
...     warnings.simplefilter("default")
...     install()
...     _ = fnp.log(fnp.zeros(1))
>>> seen
[]
"""
from __future__ import annotations

import warnings

_MESSAGE = r".*(encountered in|divide by zero|overflow|underflow|invalid value)"
_MODULES = r"(functrans|backends)(\.|$)"


def install():
    """Ignore numpy's floating-point warnings raised in the library's modules."""
    warnings.filterwarnings("ignore", message=_MESSAGE, category=RuntimeWarning,
                            module=_MODULES)
