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

import threading

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

# the functrans.numpy module, given by install() (that package sits above this module)
_FNP = []


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


def tracer_array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """numpy's ufunc protocol for tracers: ``np.sin(t)`` is ``fnp.sin(t)``."""
    name = ufunc.__name__
    what = f"numpy.{name}" if method == "__call__" else f"numpy.{name}.{method}"
    out = kwargs.pop("out", None)
    if out is not None and any(o is not None for o in out):
        raise conversion_error(f"{what} with out= (writing into a numpy array)", self)
    if method == "__call__":
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
