"""numpy's protocols on traced values: numpy functions run their functrans.numpy twin.

A numpy function applied to a traced value must never see its concrete value: the
result would be a constant, detached from the trace (a gradient silently zero). So a
tracer answers numpy's ``__array_ufunc__`` and ``__array_function__`` protocols by
calling the ``functrans.numpy`` function of the same name, which records primitives and
stays differentiable; a numpy function with no such twin raises
``TracerArrayConversionError``, as ``np.asarray(tracer)`` does. Names are looked up in
``functrans.numpy`` at each call, so functions added there dispatch too.

>>> import numpy as np, functrans as ft, functrans.numpy as fnp
>>> ft.grad(lambda x: np.sum(np.sin(x)))(fnp.zeros(2)).tolist()
[1.0, 1.0]
"""
from __future__ import annotations

import sys
import threading

import numpy as np

from .errors import conversion_error
from .tracing import Tracer

# numpy functions that only read a value's type (shape, ndim): numpy's own code reads
# the tracer's attributes, never its data
_TYPE_QUERIES = frozenset({"shape", "ndim", "size", "iscomplexobj", "isrealobj"})

# ufunc methods that are reductions with a functrans.numpy twin: (ufunc, method) -> name
# (numpy's default axis for these is 0, passed explicitly since fnp's default is None)
_UFUNC_METHODS = {
    ("add", "reduce"): "sum", ("multiply", "reduce"): "prod",
    ("maximum", "reduce"): "max", ("minimum", "reduce"): "min",
    ("logical_and", "reduce"): "all", ("logical_or", "reduce"): "any",
    ("add", "accumulate"): "cumsum", ("multiply", "accumulate"): "cumprod",
}

# numpy names spelled differently in functrans.numpy
_ALIASES = {"absolute": "abs", "amax": "max", "amin": "min", "round_": "round",
            "product": "prod", "cumproduct": "cumprod", "alltrue": "all", "sometrue": "any"}

# scipy.special ufuncs whose functrans.scipy.special twin has another name
_SPECIAL_ALIASES = {"psi": "digamma"}
# scipy.special ufuncs that compute what the numpy function of the same name does
_SPECIAL_AS_NUMPY = frozenset({"cbrt", "exp2", "expm1", "i0", "log1p", "round"})

# the functrans.numpy module, given by install() (that package sits above this module),
# and functrans.scipy.special, given by install_special()
_FNP = []
_SPECIAL = []


def _fnp():
    return _FNP[0]


class _Active(threading.local):
    names = ()    # the functions being dispatched now: an fnp function that itself calls
    #              numpy on the tracer must not loop back into itself


_ACTIVE = _Active()


def _twin(module: str, name: str):
    """The functrans.numpy function standing for numpy's ``module.name``, or None."""
    obj = _fnp()
    for part in module.split(".")[1:]:          # numpy.linalg.norm -> fnp.linalg.norm
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    fn = getattr(obj, name, None)
    if fn is None and name in _ALIASES:
        fn = getattr(obj, _ALIASES[name], None)
    return fn if callable(fn) else None


def _call_twin(key, fn, what, args, kwargs, tracer):
    if key in _ACTIVE.names:
        raise conversion_error(what, tracer)
    prev = _ACTIVE.names
    _ACTIVE.names = prev + (key,)
    try:
        return fn(*args, **kwargs)
    finally:
        _ACTIVE.names = prev


def _special_twin(ufunc):
    """(name, functrans.scipy.special twin or None) of a scipy.special ufunc, or None when
    ``ufunc`` is not scipy's (a user's numba.vectorize, say, whatever its name)."""
    special = sys.modules.get("scipy.special")
    name = ufunc.__name__
    for attr in (name, *[k for k, v in _SPECIAL_ALIASES.items() if v == name]):
        if special is not None and getattr(special, attr, None) is ufunc:
            twin = getattr(_SPECIAL[0], _SPECIAL_ALIASES.get(attr, attr), None) \
                if _SPECIAL else None
            return f"scipy.special.{attr}", twin if callable(twin) else None
    return None


def tracer_array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """numpy's ufunc protocol for tracers: ``np.sin(t)`` is ``fnp.sin(t)``, and
    ``scipy.special.gammaln(t)`` is ``functrans.scipy.special.gammaln(t)``; another
    ufunc (not numpy's or scipy's, whatever its name) raises."""
    name = ufunc.__name__
    numpys = getattr(np, name, None) is ufunc
    special = None if numpys else _special_twin(ufunc)
    module = "numpy" if numpys else special[0].rsplit(".", 1)[0] if special else \
        f"the ufunc {name!r} (not numpy's: no functrans twin)"
    what = f"{module}.{name}" if numpys or special else module
    what = what if method == "__call__" else f"{what}.{method}"
    out = kwargs.pop("out", None)
    if out is not None and any(o is not None for o in out):
        raise conversion_error(f"{what} with out= (writing into a numpy array)", self)
    if not numpys:
        fn = None if not special or method != "__call__" else special[1] or (
            _twin("numpy", name) if name in _SPECIAL_AS_NUMPY else None)
    elif method == "__call__":
        fn = _twin("numpy", name)
    else:
        twin = _UFUNC_METHODS.get((name, method))
        fn = None if twin is None else _twin("numpy", twin)
        if fn is not None:
            kwargs.setdefault("axis", 0)
    if fn is None or "where" in kwargs:
        raise conversion_error(what, self)
    return _call_twin(what, fn, what, inputs, kwargs, self)


def tracer_array_function(self, func, types, args, kwargs):
    """numpy's function protocol for tracers: ``np.rot90(t)`` is ``fnp.rot90(t)``."""
    name = getattr(func, "__name__", "?")
    module = getattr(func, "__module__", "numpy") or "numpy"
    what = f"{module}.{name}"
    if module == "numpy" and name in _TYPE_QUERIES:
        return func._implementation(*args, **kwargs)
    if not module.startswith("numpy"):
        raise conversion_error(what, self)
    fn = _twin(module, name)
    if fn is None or fn is func:
        raise conversion_error(what, self)
    if kwargs.get("out") is not None:
        raise conversion_error(f"{what} with out= (writing into a numpy array)", self)
    kwargs = {k: v for k, v in kwargs.items() if k != "out"}
    return _call_twin(what, fn, what, args, kwargs, self)


def install(fnp) -> None:
    """Answer numpy's protocols on tracers with the functions of ``fnp`` (the
    ``functrans.numpy`` module; ``functrans.numpy`` calls this when it loads).

    >>> import numpy as np, functrans as ft
    >>> ft.jit(lambda x: np.cos(x))(np.zeros(1)).tolist()
    [1.0]
    """
    _FNP[:] = [fnp]
    Tracer.__array_ufunc__ = tracer_array_ufunc
    Tracer.__array_function__ = tracer_array_function


def install_special(special) -> None:
    """Answer scipy.special's ufuncs on tracers with the functions of ``special`` (the
    ``functrans.scipy.special`` module, which calls this when it loads).

    >>> import scipy.special as sp, functrans as ft
    >>> ft.grad(lambda x: sp.gammaln(x))(1.0)      # digamma(1), weak as the Python 1.0
    Array(-0.57721566, dtype=float64, weak_type=True)
    """
    _SPECIAL[:] = [special]
