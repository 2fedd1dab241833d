"""Elementwise functions of ``functrans.numpy``.

Eagerly (no tracer among the arguments) each calls numpy at once, whose numpy 2
promotion is the library's; under a trace the arguments are promoted and
broadcast explicitly and the strict primitive is bound.

>>> import functrans.numpy as fnp
>>> fnp.multiply(fnp.ones(2, "float32"), 2.0).dtype
dtype('float32')
"""
from __future__ import annotations

import numpy as np

from ..tracing import Tracer, wrap
from ..primitives import elementwise as E
from ._util import check_arraylike, promote


def _binary(name, np_fn, prim_fn):
    def f(x, y):
        if not (isinstance(x, Tracer) or isinstance(y, Tracer)):
            check_arraylike(name, x, y)
            with np.errstate(all="ignore"):
                return wrap(np_fn(x, y))
        x, y = promote(name, x, y)
        return prim_fn(x, y)
    f.__name__ = name
    f.__doc__ = f"Elementwise ``numpy.{np_fn.__name__}`` with broadcasting and numpy 2 promotion."
    return f


def _unary_float(name, np_fn, prim_fn):
    """Transcendental ops: integers and bools are promoted to float64 first (as numpy)."""
    def f(x):
        if not isinstance(x, Tracer):
            check_arraylike(name, x)
            with np.errstate(all="ignore"):
                return wrap(np_fn(x))
        if x.dtype.kind not in "fc":
            x = E.convert_element_type(x, np.float64)
        return prim_fn(x)
    f.__name__ = name
    f.__doc__ = f"Elementwise ``numpy.{np_fn.__name__}``."
    return f


add = _binary("add", np.add, E.add)
subtract = _binary("subtract", np.subtract, E.sub)
multiply = _binary("multiply", np.multiply, E.mul)
sin = _unary_float("sin", np.sin, E.sin)
cos = _unary_float("cos", np.cos, E.cos)
exp = _unary_float("exp", np.exp, E.exp)
log = _unary_float("log", np.log, E.log)


def true_divide(x, y):
    """x / y; integer operands divide as float64 (as numpy)."""
    if not (isinstance(x, Tracer) or isinstance(y, Tracer)):
        check_arraylike("true_divide", x, y)
        with np.errstate(all="ignore"):
            return wrap(np.true_divide(x, y))
    x, y = promote("true_divide", x, y)
    if x.dtype.kind not in "fc":
        x, y = (E.convert_element_type(v, np.float64) for v in (x, y))
    return E.div(x, y)


divide = true_divide


def negative(x):
    if not isinstance(x, Tracer):
        check_arraylike("negative", x)
        return wrap(np.negative(x))
    return E.neg(x)
