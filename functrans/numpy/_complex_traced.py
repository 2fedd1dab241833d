"""Traced rules of the elementwise functions whose complex case is not one primitive:
``sign``, ``rint`` and ``fmax``/``fmin`` of complex numbers, written with the real-operand
primitives so that they jit, vmap and differentiate with the values of their eager
(numpy) twins.

>>> import numpy as np, functrans as ft, functrans.numpy as fnp
>>> ft.jit(fnp.sign)(np.array([3 + 4j, np.inf - 2j, 0j])).tolist()
[(0.6+0.8j), (1+0j), 0j]
"""
from __future__ import annotations

import numpy as np

from ..primitives import elementwise as E
from ..primitives.custom import stop_gradient
from ..primitives.structural import broadcast_in_dim
from ..tracing import Tracer
from ._util import complex_nan, ordered

__all__ = ["complex_sign", "complex_rint", "complex_fext"]


def complex_sign(z):
    """numpy's sign of complex ``z``: ``z / |z|`` (0 at 0); where one part is infinite,
    the unit along it (``inf - 2j`` gives ``1 + 0j``), NaN where both are or a part is
    NaN. Its derivative is zero, as JAX's (and as real ``sign``'s)."""
    re, im = E.real(z), E.imag(z)
    zero, one = E.full_like(re, 0.0), E.full_like(re, 1.0)
    mag = E.abs(z)                                       # hypot: no overflow at 1e308
    origin = E.eq(mag, zero)
    safe = E.select_n(origin, mag, one)
    unit_re = E.select_n(origin, E.div(re, safe), zero)  # +0 at the origin, as numpy's
    unit_im = E.select_n(origin, E.div(im, safe), zero)
    inf = E.full_like(re, np.inf)
    inf_re, inf_im = E.eq(E.abs(re), inf), E.eq(E.abs(im), inf)
    on_axis_re = E.bitwise_and(inf_re, E.bitwise_not(inf_im))
    on_axis_im = E.bitwise_and(inf_im, E.bitwise_not(inf_re))
    both = E.bitwise_and(inf_re, inf_im)
    nan = E.full_like(re, np.nan)
    out_re = E.select_n(on_axis_re, E.select_n(on_axis_im, unit_re, zero), E.sign(re))
    out_im = E.select_n(on_axis_im, E.select_n(on_axis_re, unit_im, zero), E.sign(im))
    out_re, out_im = E.select_n(both, out_re, nan), E.select_n(both, out_im, nan)
    return stop_gradient(E.complex(out_re, out_im))


def complex_rint(z):
    """numpy's rint of complex ``z``: each part rounded half to even."""
    return E.complex(E.round(E.real(z)), E.round(E.imag(z)))


def complex_fext(name: str, x, y):
    """numpy's ``fmax``/``fmin`` (``name``) of complex operands: the operand without a
    NaN (``x`` when both have one), else the larger (smaller) in lexicographic order,
    ``x`` on a tie. A Python number beside a traced operand takes its dtype."""
    dt = (x if isinstance(x, Tracer) else y).dtype
    x, y = (v if isinstance(v, Tracer) else np.asarray(v, dt) for v in (x, y))
    shape = np.broadcast_shapes(np.shape(x), np.shape(y))
    x, y = (v if np.shape(v) == shape else broadcast_in_dim(
        v, shape, tuple(range(len(shape) - np.ndim(v), len(shape)))) for v in (x, y))
    better = ordered("greater_equal", E.ge, x, y) if name == "fmax" else \
        ordered("less_equal", E.le, x, y)
    pick_x = E.bitwise_or(complex_nan(y), E.bitwise_and(E.bitwise_not(complex_nan(x)), better))
    return E.select_n(pick_x, y, x)
