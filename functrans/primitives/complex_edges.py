"""numpy's complex ``expm1`` and ``tanh`` with the Array API standard's values on the
edges (infinite, NaN or signed-zero parts), which JAX 0.10.2 gives and numpy's C99
formulas miss: ``expm1(inf + 0j)`` is ``inf + 0j`` (numpy: ``inf + nanj``, from
``exp(inf) * sin(0)``), ``expm1(nan + 0j)`` is ``nan + 0j``, ``expm1(-0 + 0j)`` is
``+0 + 0j``, ``expm1(-inf + yj)`` is ``-1 + 0j`` (real part exactly -1, also for an
infinite or NaN ``y``), and ``tanh(±inf + yj)``
for a finite ``y`` is ``±1 + 0j`` with the zero signed as ``y`` (numpy signs it as
``sin(2y)``). ``lax.max``/``lax.min`` order complex numbers lexicographically (real part,
then imaginary part), as JAX 0.10.2: the pick is ``x`` where the comparison holds, else
``y``, so a NaN part loses (``max(nan+0j, 0j)`` is ``0j``; numpy would give NaN).
Real inputs go to numpy unchanged. These are the ops' impls (eager,
interpreter and the native backends' host steps).

>>> import numpy as np
>>> expm1_impl(np.array([complex(np.inf, 0.0)]))
array([inf+0.j])
"""
from __future__ import annotations

import numpy as np

__all__ = ["expm1_impl", "minmax_impl", "tanh_impl"]


def expm1_impl(x):
    """``exp(x) - 1`` as numpy's formula (``expm1(a) cos(b) - 2 sin^2(b/2)`` +
    ``i exp(a) sin(b)``, computed in complex128) with the standard's edge values.

    >>> import numpy as np
    >>> expm1_impl(np.array([complex(-0.0, 0.0), complex(np.nan, 0.0)])).tolist()
    [0j, (nan+0j)]
    """
    x = np.asarray(x)
    if x.dtype.kind != "c":
        return np.expm1(x)
    z = x.astype(np.complex128)
    a, b = z.real, z.imag
    with np.errstate(all="ignore"):
        h = np.sin(b / 2)
        re = np.expm1(a) * np.cos(b) - 2 * h * h + 0.0    # + 0.0: -0 + -0 gives +0
        im = np.where(b == 0, b, np.exp(a) * np.sin(b))   # the real axis stays real
        re = np.where(a == -np.inf, -1.0, re)             # exp(-inf) is 0: -1 + 0j
        im = np.where((a == -np.inf) & ~np.isfinite(b), 0.0, im)
    out = np.empty(z.shape, np.complex128)     # re + 1j * im: 1j * inf has a NaN real part
    out.real, out.imag = re, im
    return out.astype(x.dtype)


def tanh_impl(x):
    """numpy's ``tanh`` with ``tanh(±inf + yj) = ±1 + 0j`` (the zero signed as ``y``)
    for a finite ``y``, as the Array API standard and JAX.

    >>> import numpy as np
    >>> tanh_impl(np.array([complex(np.inf, 3.6e150)]))
    array([1.+0.j])
    """
    x = np.asarray(x)
    out = np.tanh(x)
    if x.dtype.kind != "c":
        return out
    edge = np.isinf(x.real) & np.isfinite(x.imag)
    if np.any(edge):
        out = np.array(out)
        out.real = np.where(edge, np.sign(x.real), out.real)
        out.imag = np.where(edge, np.copysign(0.0, x.imag), out.imag)
    return out


def minmax_impl(real_fn, biggest):
    """``real_fn`` (numpy's maximum or minimum with JAX's signed zeros) on real operands;
    on complex ones the lexicographic pick described above.

    >>> minmax_impl(np.maximum, True)(np.array([1 + 2j, 1 + 1j]), np.array([1 + 1j, 0 + 5j]))
    array([1.+2.j, 1.+1.j])
    """
    cmp = np.greater if biggest else np.less

    def impl(x, y):
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype.kind != "c":
            return np.asarray(real_fn(x, y))
        pick = np.where(x.real == y.real, cmp(x.imag, y.imag), cmp(x.real, y.real))
        return np.where(pick, x, y)
    return impl
