"""Signal and polynomial functions of ``functrans.numpy`` composed from existing ones:
``convolve correlate gradient trapezoid unwrap polyval polyfit polyadd polysub polymul
polyder polyint poly``.

``convolve``/``correlate`` of real floats are one ``lax.conv_general_dilated``, as JAX's
(natively the LLVM backend's stride-1 tap loops); other dtypes build the sliding windows
with one static gather and contract them with a matrix product (both O(n m),
differentiable in both operands). ``polyfit`` solves
the least-squares problem through the normal equations with ``linalg.solve``.

>>> import functrans.numpy as fnp
>>> fnp.polyval(fnp.asarray([1.0, 0.0, -1.0]), 3.0).item()
8.0
"""
from __future__ import annotations

import operator

import numpy as np

from jaxpr_ir import dtype_kind

from . import _elementwise as el
from . import _elementwise_select as sel
from . import _reductions as red
from . import _structural as st
from . import _joining as jn
from . import _products as pr
from . import linalg
from ._creation import asarray, eye, inexact_dtype, zeros
from ._util import canonicalize_axis, is_tracer
from ._extra_arrays import diff, vander
from ..primitives.conv_api import conv_general_dilated
from typing import Any, Callable, Sequence
from ..array import Array
from ..eager_jit import compiled_when_large
from ..precision import PrecisionLike
from ..typing import ArrayLike, DTypeLike

__all__ = ["convolve", "correlate", "gradient", "trapezoid", "unwrap", "polyval", "polyfit",
           "polyadd", "polysub", "polymul", "polyder", "polyint", "poly", "roots"]


def _convolution(a, v, start=0, length=None):
    """``out[k] = sum_j a[k - j] v[j]`` for k in [start, start + length) of [0, n + m - 1):
    a convolution primitive for real floats (the windowed matmul gathered an (n + m - 1, m)
    matrix: 1e4 by 101 taps took 1 ms compiled, 4.7 ms eager; numpy 0.2), else a windowed
    matmul. Only the kept outputs are computed: cropping the full one gave its dropped
    entries a zero cotangent, and 0 * inf = NaN in the other operand's gradient."""
    n, m = a.shape[0], v.shape[0]
    length = n + m - 1 - start if length is None else length
    if a.dtype in (np.float32, np.float64):
        out = conv_general_dilated(st.reshape(a, (1, 1, n)), st.reshape(st.flip(v, 0), (1, 1, m)),
                                   (1,), [(m - 1 - start, start + length - n)])
        return st.reshape(out, (length,))
    padded = jn.concatenate([zeros((m - 1,), a.dtype), a, zeros((m - 1,), a.dtype)])
    windows = padded[np.arange(start, start + length)[:, None] + np.arange(m)[None, :]]
    return pr.matmul(windows, st.flip(v, 0))


def _cropped(a, v, mode):
    """numpy's 'full', 'same' or 'valid' part of the convolution, ``a`` the longer."""
    n, m = a.shape[0], v.shape[0]
    if mode == "full":
        return _convolution(a, v)
    if mode == "same":
        return _convolution(a, v, (m - 1) // 2, n)
    if mode == "valid":
        return _convolution(a, v, m - 1, n - m + 1)
    raise ValueError(f"mode must be 'full', 'same' or 'valid', got {mode!r}")


def _vectors(name, a, v, pet=None):
    """Both 1-d operands in their common dtype made inexact (``inexact_dtype``: int32 ->
    float32, int64 -> float64), or ``pet`` (JAX's preferred_element_type) if given: the
    operands are converted to it first, as the products do."""
    a, v = asarray(a), asarray(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"{name}: both inputs must be 1-d, got {a.shape} and {v.shape}")
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError(f"{name}: inputs must not be empty")
    dt = np.result_type(a.dtype, v.dtype)
    if pet is not None:
        _check_conv_element_type(name, dt, np.dtype(pet))
        dt = pet
    else:                         # integers and bools convolve in floating point (JAX's)
        dt = inexact_dtype(dt)
    return asarray(a, dt), asarray(v, dt)


def _check_conv_element_type(name, dt, pt):
    """JAX's conv rule for ``preferred_element_type``: integers may ask for floats,
    otherwise the same kind (integer, float, complex) and a signed integer a signed one;
    never a narrower type (TypeError)."""
    kind = {"i": "integer", "u": "integer", "f": "float", "c": "complex"}
    k, kp = dtype_kind(dt), dtype_kind(pt)
    to_float = k in "iu" and kp == "f"         # (any signedness)
    if (not to_float and ((k in kind and kind[k] != kind.get(kp)) or (k == "i" and kp != "i"))) \
            or pt.itemsize < dt.itemsize:
        raise TypeError(f"{name}: preferred_element_type {pt} can't hold the product of "
                        f"{dt} operands (JAX's conv rule: same kind, same signedness, "
                        f"not narrower; integers may ask for floats)")


def convolve(a: ArrayLike, v: ArrayLike, mode: str = "full", *, precision: PrecisionLike = None,
             preferred_element_type: DTypeLike | None = None) -> Array:
    """Discrete linear convolution of two 1-d arrays (modes 'full', 'same', 'valid').

    >>> import functrans.numpy as fnp
    >>> fnp.convolve(fnp.asarray([1.0, 2.0]), fnp.asarray([1.0, 1.0])).tolist()
    [1.0, 3.0, 2.0]
    """
    a, v = _vectors("convolve", a, v, preferred_element_type)
    n, m = a.shape[0], v.shape[0]
    return _cropped(a, v, mode) if n >= m else _cropped(v, a, mode)


def correlate(a: ArrayLike, v: ArrayLike, mode: str = "valid", *, precision: PrecisionLike = None,
              preferred_element_type: DTypeLike | None = None) -> Array:
    """Cross-correlation ``c[k] = sum_n a[n + k] conj(v[n])`` of two 1-d arrays.

    >>> import functrans.numpy as fnp
    >>> fnp.correlate(fnp.asarray([1.0, 2.0, 3.0]), fnp.asarray([0.0, 1.0])).tolist()
    [2.0, 3.0]
    """
    a, v = _vectors("correlate", a, v, preferred_element_type)
    n, m = a.shape[0], v.shape[0]
    vc = st.flip(sel.conj(v) if dtype_kind(v.dtype) == "c" else v, 0)
    if mode == "same" and n < m:
        # with the longer operand second numpy centres the window from the other side
        return _convolution(vc, a, n // 2, m)
    return _cropped(a, vc, mode) if n >= m else _cropped(vc, a, mode)


def gradient(f: ArrayLike, *varargs: ArrayLike, axis: int | Sequence[int] | None = None,
             edge_order: int = 1) -> Array | list[Array]:
    """Second-order central differences inside, first-order one-sided at the edges, for
    scalar spacings or 1-d sample coordinates (one for all axes or one per axis).

    >>> import functrans.numpy as fnp
    >>> fnp.gradient(fnp.asarray([1.0, 2.0, 4.0, 7.0])).tolist()
    [1.0, 1.5, 2.5, 3.0]
    """
    f = asarray(f)
    if dtype_kind(f.dtype) not in "fc":
        f = asarray(f, np.float64)
    axes = list(range(f.ndim)) if axis is None else (
        [canonicalize_axis(axis, f.ndim)] if isinstance(axis, int) else
        [canonicalize_axis(a, f.ndim) for a in axis])
    if edge_order != 1:
        raise NotImplementedError("gradient: only edge_order=1 is supported")
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError(f"gradient: {len(varargs)} spacings for {len(axes)} axes")
    outs = []
    for ax, h in zip(axes, spacing):
        n = f.shape[ax]
        if n < 2:
            raise ValueError("gradient: each axis needs at least 2 (edge_order + 1) points")
        x = st.moveaxis(f, ax, 0)
        if asarray(h).ndim != 0:
            outs.append(st.moveaxis(_gradient_coords(x, asarray(h), ax), 0, ax))
            continue
        parts = [el.true_divide(el.subtract(x[1:2], x[0:1]), h)]
        if n > 2:
            parts.append(el.true_divide(el.subtract(x[2:], x[:-2]), el.multiply(2.0, h)))
        parts.append(el.true_divide(el.subtract(x[-1:], x[-2:-1]), h))
        outs.append(st.moveaxis(jn.concatenate(parts), 0, ax))
    return outs[0] if len(outs) == 1 else outs


def _gradient_coords(x, coords, ax):
    """numpy's gradient along axis 0 of ``x`` at sample points ``coords`` (1-d, one per
    row): its second-order weights a, b, c inside, one-sided differences at the ends."""
    n = x.shape[0]
    if coords.ndim != 1 or coords.shape[0] != n:
        raise ValueError(f"gradient: coordinates along axis {ax} must be 1-d of length {n}, "
                         f"got shape {tuple(coords.shape)}")
    d = el.subtract(coords[1:], coords[:-1])
    col = (-1,) + (1,) * (x.ndim - 1)
    parts = [el.true_divide(el.subtract(x[1:2], x[0:1]), st.reshape(d[:1], col[:1] + col[1:]))]
    if n > 2:
        d1, d2 = d[:-1], d[1:]
        a = el.true_divide(el.negative(d2), el.multiply(d1, el.add(d1, d2)))
        b = el.true_divide(el.subtract(d2, d1), el.multiply(d1, d2))
        c = el.true_divide(d1, el.multiply(d2, el.add(d1, d2)))
        a, b, c = (st.reshape(w, col) for w in (a, b, c))
        parts.append(el.add(el.add(el.multiply(a, x[:-2]), el.multiply(b, x[1:-1])),
                            el.multiply(c, x[2:])))
    parts.append(el.true_divide(el.subtract(x[-1:], x[-2:-1]), st.reshape(d[-1:], col)))
    return jn.concatenate(parts)


def _inexact(a):
    """Integer and bool data as float64 (the dtype their trapezoid sums had), before any
    sum or difference, as JAX: numpy's int8 sums wrap."""
    return a if dtype_kind(a.dtype) in "fc" else asarray(a, np.float64)


def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: float = 1.0, axis: int = -1) -> Array:
    """Integral of ``y`` along ``axis`` by the trapezoidal rule (spacing ``dx`` or
    sample points ``x``).

    >>> import functrans.numpy as fnp
    >>> fnp.trapezoid(fnp.asarray([1.0, 2.0, 3.0])).item()
    4.0
    """
    y = _inexact(asarray(y))   # integers summed as such wrapped: int8 [-128, -1] gave +63.5
    y_axis = canonicalize_axis(axis, y.ndim)
    y = st.moveaxis(y, y_axis, -1)
    if x is None:      # a Python number stays weak (float16 y keeps float16, as numpy)
        d = dx if isinstance(dx, (int, float)) else asarray(dx)
    else:
        x = _inexact(asarray(x))
        # an n-d x is differenced along ``axis`` counted in x's own dimensions (numpy's
        # diff(x, axis=axis)), not along y's canonical axis number
        d = diff(x) if x.ndim == 1 else diff(
            st.moveaxis(x, canonicalize_axis(axis, x.ndim), -1), axis=-1)
    avg = el.multiply(el.add(y[..., 1:], y[..., :-1]), 0.5)
    return red.sum(el.multiply(d, avg), axis=-1)


def unwrap(p: ArrayLike, discont: float | None = None, axis: int = -1,
           period: float = 2 * np.pi) -> Array:
    """``p`` with jumps larger than ``discont`` (default ``period / 2``) replaced by
    their ``period``-complement.

    >>> import functrans.numpy as fnp
    >>> fnp.unwrap(fnp.asarray([0.0, 6.0])).round(4).tolist()
    [0.0, -0.2832]
    """
    p = asarray(p)
    if dtype_kind(p.dtype) not in "f":
        p = asarray(p, np.float64)
    axis = canonicalize_axis(axis, p.ndim)
    half = period / 2
    discont = half if discont is None else max(discont, half)
    x = st.moveaxis(p, axis, -1)
    dd = diff(x, axis=-1)
    ddmod = el.subtract(el.remainder(el.add(dd, half), period), half)
    ddmod = sel.where(el.logical_and(el.equal(ddmod, -half), el.greater(dd, 0)),
                      el.add(el.multiply(ddmod, 0), half), ddmod)
    correct = el.subtract(ddmod, dd)
    correct = sel.where(el.less(el.abs(dd), discont), el.multiply(correct, 0), correct)
    out = jn.concatenate([x[..., :1], el.add(x[..., 1:], red.cumsum(correct, axis=-1))],
                         axis=-1)
    return st.moveaxis(out, -1, axis)


def polyval(p: ArrayLike, x: ArrayLike, *, unroll: int = 16) -> Array:
    """Value of the polynomial with coefficients ``p`` (highest power first) at ``x``,
    by Horner's rule. As in JAX, an n-d ``p`` holds one polynomial per trailing index
    (``p[i]`` broadcasts against ``x``). ``unroll`` is JAX's loop-unrolling hint: the
    steps and so the value are the same whatever it is (an int is checked).

    >>> import functrans.numpy as fnp
    >>> fnp.polyval(fnp.asarray([2.0, 1.0]), fnp.asarray([0.0, 1.0])).tolist()
    [1.0, 3.0]
    >>> fnp.polyval(fnp.asarray([[1.0, 2.0], [3.0, 4.0]]), 2.0).tolist()
    [5.0, 8.0]
    """
    if not isinstance(unroll, (int, np.integer)):      # (bool is an int, as lax.scan's)
        raise TypeError(f"polyval: unroll must be an int, got {unroll!r}")
    p, x = asarray(p), asarray(x)
    if p.ndim == 0:
        raise ValueError(f"polyval: p must be at least 1-d, got shape {p.shape}")
    return _horner(p, x)


# An eager polyval (or its eager grad) of at least eager_jit.EAGER_COMPILE_MIN points runs
# through a cached jit, as JAX's jitted polyval: eagerly each coefficient is two numpy
# passes (degree 9 at 1M points: 11 ms of CPU, JAX 1.1)
@compiled_when_large
def _horner(p, x):
    out = el.multiply(x, 0) if p.shape[0] == 0 else el.add(el.multiply(x, 0), p[0])
    for i in range(1, p.shape[0]):
        out = el.add(el.multiply(out, x), p[i])
    return out


def polyfit(x: ArrayLike, y: ArrayLike, deg: int, rcond: float | None = None, full: bool = False,
            w: ArrayLike | None = None, cov: bool = False) -> Array:
    """Least-squares polynomial fit of degree ``deg`` (coefficients highest first), by
    ``lstsq`` of the column-scaled Vandermonde matrix, singular values below ``rcond``
    times the largest dropped (default ``len(x) * eps``), as numpy and JAX do.
    ``full`` and ``cov`` outputs are not provided.

    >>> import functrans.numpy as fnp
    >>> fnp.polyfit(fnp.asarray([0.0, 1.0, 2.0]), fnp.asarray([1.0, 3.0, 5.0]), 1).round(6).tolist()
    [2.0, 1.0]
    """
    if full or cov:
        raise NotImplementedError("polyfit: full=True and cov=True are not supported")
    x, y = asarray(x, np.float64), asarray(y, np.float64)
    deg = operator.index(deg)
    A = vander(x, deg + 1)
    if w is not None:
        w = asarray(w, np.float64)
        A = el.multiply(A, w[:, None])
        y = el.multiply(y, w if y.ndim == 1 else w[:, None])
    # scale columns as numpy does, for conditioning
    scale = el.sqrt(red.sum(el.square(A), axis=0))
    As = el.true_divide(A, scale)
    if rcond is None:
        rcond = x.shape[0] * np.finfo(np.float64).eps
    coef = linalg.lstsq(As, y, rcond=rcond)[0]
    return el.true_divide(coef, scale if coef.ndim == 1 else scale[:, None])


def _pad_front(a, n):
    return jn.concatenate([zeros((n - a.shape[0],), a.dtype), a]) if a.shape[0] < n else a


def polyadd(a1: ArrayLike, a2: ArrayLike) -> Array:
    """Sum of two polynomials (coefficients highest first).

    >>> import functrans.numpy as fnp
    >>> fnp.polyadd(fnp.asarray([1, 2]), fnp.asarray([1, 0, 0])).tolist()
    [1, 1, 2]
    """
    a1, a2 = asarray(a1), asarray(a2)
    n = max(a1.shape[0], a2.shape[0])
    return el.add(_pad_front(a1, n), _pad_front(a2, n))


def polysub(a1: ArrayLike, a2: ArrayLike) -> Array:
    """Difference of two polynomials.

    >>> import functrans.numpy as fnp
    >>> fnp.polysub(fnp.asarray([1, 2]), fnp.asarray([1, 0, 0])).tolist()
    [-1, 1, 2]
    """
    a1, a2 = asarray(a1), asarray(a2)
    n = max(a1.shape[0], a2.shape[0])
    return el.subtract(_pad_front(a1, n), _pad_front(a2, n))


def polymul(a1: ArrayLike, a2: ArrayLike, *, trim_leading_zeros: bool = False) -> Array:
    """Product of two polynomials.

    >>> import functrans.numpy as fnp
    >>> fnp.polymul(fnp.asarray([1.0, 1.0]), fnp.asarray([1.0, -1.0])).tolist()
    [1.0, 0.0, -1.0]

    ``trim_leading_zeros=True`` (JAX's option; needs concrete values) strips leading zeros
    first, as numpy's ``polymul`` always does.
    """
    if trim_leading_zeros:
        a1, a2 = asarray(a1), asarray(a2)
        if (a1.shape[0] > 1 or a2.shape[0] > 1) and not (is_tracer(a1) or is_tracer(a2)):
            t1, t2 = np.trim_zeros(np.asarray(a1), "f"), np.trim_zeros(np.asarray(a2), "f")
            a1 = asarray(t1 if t1.size else np.zeros(1, a1.dtype))
            a2 = asarray(t2 if t2.size else np.zeros(1, a2.dtype))
        elif a1.shape[0] > 1 or a2.shape[0] > 1:
            raise TypeError("polymul: trim_leading_zeros=True needs concrete coefficients "
                            "(the result's length depends on their values)")
    return convolve(a1, a2)


def polyder(p: ArrayLike, m: int = 1) -> Array:
    """The ``m``-th derivative of a polynomial.

    >>> import functrans.numpy as fnp
    >>> fnp.polyder(fnp.asarray([1.0, 1.0, 1.0])).tolist()
    [2.0, 1.0]
    """
    p = asarray(p)
    m = operator.index(m)
    if m < 0:
        raise ValueError("polyder: the order of derivative must be non-negative")
    # float coefficients keep their dtype (JAX's: an int64 arange made float32 float64)
    dt = p.dtype if dtype_kind(p.dtype) in "fc" else None
    for _ in range(m):
        n = p.shape[0]
        p = el.multiply(p[:-1], np.arange(n - 1, 0, -1, dtype=dt))
    return p


def polyint(p: ArrayLike, m: int = 1, k: int | None = None) -> Array:
    """The ``m``-th antiderivative of a polynomial, integration constants ``k`` (0).

    >>> import functrans.numpy as fnp
    >>> fnp.polyint(fnp.asarray([3.0, 2.0])).tolist()
    [1.5, 2.0, 0.0]
    """
    p = asarray(p)
    if dtype_kind(p.dtype) not in "fc":
        p = asarray(p, np.float64)
    m = operator.index(m)
    ks = np.zeros(m) if k is None else np.broadcast_to(np.asarray(k, dtype=float), (m,))
    for i in range(m):
        n = p.shape[0]
        p = jn.concatenate([el.true_divide(p, np.arange(n, 0, -1, dtype=p.dtype)),
                            asarray([ks[i]], p.dtype)])
    return p


def poly(seq_of_zeros: ArrayLike) -> Array:
    """Coefficients (highest first) of the monic polynomial with the given roots.

    >>> import functrans.numpy as fnp
    >>> fnp.poly(fnp.asarray([1.0, 2.0])).tolist()
    [1.0, -3.0, 2.0]
    """
    z = asarray(seq_of_zeros)
    if z.ndim != 1:
        raise ValueError("poly: pass a 1-d sequence of roots (matrices are not supported)")
    c = asarray([1.0], inexact_dtype(z.dtype))      # JAX's dtype: float32 roots stay
    for i in range(z.shape[0]):
        c = convolve(c, jn.stack([asarray(1.0, c.dtype), el.negative(asarray(z[i], c.dtype))]))
    return c


def roots(p: ArrayLike, *, strip_zeros: bool = True) -> Array:
    """The (complex) roots of the polynomial with coefficients ``p`` (highest first),
    as the eigenvalues of its companion matrix; differentiable. Leading zeros are
    dropped and trailing zeros give zero roots (at the end, as numpy), which needs
    concrete coefficients; under a transform pass ``strip_zeros=False`` (then a
    leading zero gives NaN roots, as JAX).

    >>> import functrans.numpy as fnp
    >>> sorted(fnp.roots(fnp.asarray([1.0, -3.0, 2.0])).real.round(6).tolist())
    [1.0, 2.0]
    """
    p = asarray(p)
    if p.ndim != 1:
        raise ValueError(f"roots: p must be 1-d, got shape {tuple(p.shape)}")
    trailing = 0
    if strip_zeros:
        if is_tracer(p):
            raise TypeError("roots: strip_zeros=True needs concrete coefficients (the "
                            "number of roots depends on them); pass strip_zeros=False")
        nonzero = np.flatnonzero(np.asarray(p))
        if nonzero.size == 0:
            p = p[:0]
        else:
            trailing = p.shape[0] - int(nonzero[-1]) - 1
            p = p[int(nonzero[0]):int(nonzero[-1]) + 1]
    if dtype_kind(p.dtype) not in "fc":
        p = asarray(p, np.float64)
    n = p.shape[0]
    cdt = np.complex64 if p.dtype in (np.float32, np.complex64) else np.complex128
    if n <= 1:
        found = zeros((0,), cdt)
    else:
        first_row = el.negative(el.true_divide(p[1:], p[0]))
        companion = jn.concatenate([st.reshape(first_row, (1, n - 1)),
                                    eye(n - 2, n - 1, dtype=p.dtype)], axis=0)
        found = linalg.eigvals(companion)
    if trailing:
        found = jn.concatenate([found, zeros((trailing,), cdt)])
    return found
