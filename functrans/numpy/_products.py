"""Products of ``functrans.numpy``: ``dot matmul vdot inner outer tensordot einsum
trace diag diagonal``, with numpy semantics.

Under a trace every product lowers to ``dot_general`` (plus transpose, reshape
and reduce_sum); diagonals are taken with a constant ``eye`` mask, ``select_n``
and ``reduce_sum``, which is exact even with inf/NaN off the diagonal (a mask
*multiplication* would turn ``inf * 0`` into NaN). Eagerly the numpy function
runs at once.

>>> import numpy as np, functrans.numpy as fnp
>>> fnp.matmul(np.ones((2, 3)), np.ones(3)).tolist()
[3.0, 3.0]
>>> fnp.einsum("ii->", np.eye(3)).item()
3.0
"""
from __future__ import annotations

import numpy as np

from backends.llvm.blas import balance_threads
from jaxpr_ir import bfloat16, canonical_dtype, dtype_kind
from ..errors import ShapeMismatchError
from ..numpy_warnings import quiet_call
from ..tracing import Tracer, wrap
from ..primitives import elementwise as E
from ..primitives.dot import dot_general
from ..primitives.reductions import reduce_sum
from ..primitives.structural import broadcast_in_dim, reshape, transpose
from ._elementwise import multiply
from ._elementwise_select import conjugate
from ._reductions import accumulation_dtype
from ._util import (asarray, broadcast_shapes, broadcast_to_shape, canonicalize_axis,
                    result_dtype)
from typing import Any, Sequence
from ..array import Array
from ..precision import PrecisionLike, check_precision, numpy_contraction
from ..typing import ArrayLike, DTypeLike
from ..eager_values import WEAK_NUMBERS
from ..weak_values import typed_like, weak_view

__all__ = ["dot", "matmul", "vdot", "inner", "outer", "tensordot", "einsum", "trace",
           "diag", "diagonal"]


_NARROW = frozenset((np.dtype(np.float16), bfloat16))


def _traced(*xs):
    """Whether the product is built from the primitives (eagerly too): a tracer among
    ``xs``, or a float16 (bfloat16) operand, whose products accumulate in float32 and round once, as
    XLA's CPU dot and jit here do (numpy's float16 einsum rounds its partial sums)."""
    for x in xs:
        if isinstance(x, Tracer) or getattr(x, "dtype", None) in _NARROW:
            return True
    return False


def _promote(*xs):
    """Operands converted to their common (numpy 2) dtype; shapes untouched."""
    dt = canonical_dtype(result_dtype(*xs))
    out = []
    for x in xs:
        if isinstance(x, Tracer):
            out.append(E.convert_element_type(x, dt))
        else:
            out.append(np.asarray(x, dtype=dt))
    return out


def _arrays(*xs):
    """The operands as arrays or tracers; a Python number weakly typed (JAX's: ``dot(1.5,
    float16 array)`` is float16)."""
    return [x if isinstance(x, (Tracer, np.ndarray)) else
            weak_view(asarray(x)) if type(x) in WEAK_NUMBERS else asarray(x) for x in xs]


def _const(value, shape, dtype):
    return np.broadcast_to(np.asarray(value, dtype=dtype), tuple(shape))


def _dims_error(name, a, b, detail):
    return ShapeMismatchError(f"{name}: shapes {tuple(a.shape)} and {tuple(b.shape)} are not "
                              f"aligned: {detail}")


# --------------------------------------------------------------------------- matmul / dot

def _check_matmul(a, b):
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: operands must have at least one dimension, got shapes "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    ka = a.shape[-1]
    kb = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if ka != kb:
        raise _dims_error("matmul", a, b, f"size {ka} (last dim of the first) != size {kb} "
                          f"({'only' if b.ndim == 1 else 'second-to-last'} dim of the second)")
    return broadcast_shapes("matmul", a.shape[:-2], b.shape[:-2])


def matmul(a: ArrayLike, b: ArrayLike) -> Array:
    """Matrix product with numpy's rules: 1-D operands are vectors, leading
    (batch) dimensions broadcast.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.matmul(np.ones((4, 2, 3)), np.ones((3, 5))).shape
    (4, 2, 5)
    """
    a, b = _arrays(a, b)
    if not _traced(a, b):
        try:
            return wrap(_blas_call(np.matmul, a, b))
        except ValueError:
            _check_matmul(a, b)    # raises naming both shapes
            raise
    bshape = _check_matmul(a, b)
    a, b = _promote(a, b)
    if b.ndim == 1:
        return dot_general(a, b, (((a.ndim - 1,), (0,)), ((), ())))
    if a.ndim == 1:
        return dot_general(a, b, (((0,), (b.ndim - 2,)), ((), ())))
    if b.ndim == 2:
        return dot_general(a, b, (((a.ndim - 1,), (0,)), ((), ())))
    if a.ndim == 2:
        # (n, B..., m) -> (B..., n, m)
        out = dot_general(a, b, (((1,), (b.ndim - 2,)), ((), ())))
        nd = b.ndim
        return transpose(out, tuple(range(1, nd - 1)) + (0, nd - 1))
    a = broadcast_to_shape(a, bshape + a.shape[-2:])
    b = broadcast_to_shape(b, bshape + b.shape[-2:])
    nb = len(bshape)
    return dot_general(a, b, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))))


def dot(a: ArrayLike, b: ArrayLike) -> Array:
    """``numpy.dot``: scalars multiply; otherwise contract the last axis of ``a`` with
    the only (1-D) or second-to-last axis of ``b``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.dot(np.ones((2, 3)), np.ones((4, 3, 5))).shape
    (2, 4, 5)
    """
    a, b = _arrays(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    kb = 0 if b.ndim == 1 else b.ndim - 2
    if a.shape[-1] != b.shape[kb]:
        raise _dims_error("dot", a, b, f"{a.shape[-1]} (dim {a.ndim - 1}) != "
                          f"{b.shape[kb]} (dim {kb})")
    if not _traced(a, b):
        return wrap(_blas_call(np.dot, a, b))
    a, b = _promote(a, b)
    return dot_general(a, b, (((a.ndim - 1,), (kb,)), ((), ())))


def _ravel(x):
    return reshape(x, (x.size,)) if isinstance(x, Tracer) else typed_like(x, np.ravel(x))


def vdot(a: ArrayLike, b: ArrayLike) -> Array:
    """Dot product of the flattened arrays (the first conjugated if complex).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.vdot(np.ones((2, 2)), np.ones(4)).item()
    4.0
    """
    a, b = _arrays(a, b)
    if a.size != b.size:
        raise ValueError(f"vdot: shapes {tuple(a.shape)} and {tuple(b.shape)} have different "
                         f"sizes ({a.size} and {b.size})")
    if not _traced(a, b):
        return wrap(np.asarray(quiet_call(np.vdot, *_promote(a, b))))
    if dtype_kind(a.dtype) == "c":
        a = conjugate(a)
    a, b = _promote(_ravel(a), _ravel(b))
    return dot_general(a, b, (((0,), (0,)), ((), ())))


def inner(a: ArrayLike, b: ArrayLike, *, precision: PrecisionLike = None,
          preferred_element_type: DTypeLike | None = None) -> Array:
    """Contract the last axes of ``a`` and ``b`` (scalars multiply); ``precision`` and
    ``preferred_element_type`` as ``functrans.precision``'s (a scalar operand: both
    converted to ``preferred_element_type`` first, then multiplied, as JAX's).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.inner(np.ones((2, 3)), np.ones((4, 3))).shape
    (2, 4)
    """
    check_precision(precision)
    a, b = _arrays(a, b)
    if a.ndim == 0 or b.ndim == 0:
        if preferred_element_type is not None:
            a, b = (E.convert_element_type(x, canonical_dtype(preferred_element_type))
                    for x in (a, b))
        return multiply(a, b)
    if preferred_element_type is not None:
        return numpy_contraction(inner, (a, b), preferred_element_type)
    if a.shape[-1] != b.shape[-1]:
        raise _dims_error("inner", a, b, f"last dims {a.shape[-1]} != {b.shape[-1]}")
    if not _traced(a, b):
        return wrap(_blas_call(np.inner, a, b))
    a, b = _promote(a, b)
    return dot_general(a, b, (((a.ndim - 1,), (b.ndim - 1,)), ((), ())))


def outer(a: ArrayLike, b: ArrayLike) -> Array:
    """Outer product of the flattened arrays: ``out[i, j] = a[i] * b[j]``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.outer(np.ones(2), np.ones(3)).shape
    (2, 3)
    """
    a, b = _arrays(a, b)
    if not _traced(a, b):
        return wrap(quiet_call(np.outer, *_promote(a, b)))
    a, b = _promote(_ravel(a), _ravel(b))
    return dot_general(a, b, (((), ()), ((), ())))


def _blas_call(np_fn, *args, **kwargs):
    """``quiet_call`` of a numpy product after setting its BLAS to the free cores (as
    before a compiled program): at load 10 on 2 cores, OpenBLAS's two spinning threads
    made an eager 3-operand einsum of 256x256 matrices 29 ms of CPU instead of 1.9."""
    balance_threads()
    return quiet_call(np_fn, *args, **kwargs)


def tensordot(a: ArrayLike, b: ArrayLike, axes: int | Sequence[Any] = 2) -> Array:
    """Contract ``a`` and ``b`` over ``axes``: an int N (last N of ``a`` with first N of
    ``b``) or a pair of axis sequences.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.tensordot(np.ones((2, 3, 4)), np.ones((3, 4, 5))).shape
    (2, 5)
    """
    a, b = _arrays(a, b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: axes={n} is invalid for shapes {tuple(a.shape)} and "
                             f"{tuple(b.shape)}")
        ca, cb = tuple(range(a.ndim - n, a.ndim)), tuple(range(n))
    else:
        try:
            xa, xb = axes
        except (TypeError, ValueError):
            raise TypeError(f"tensordot: axes must be an int or a pair of sequences, "
                            f"got {axes!r}") from None
        xa = (xa,) if isinstance(xa, (int, np.integer)) else tuple(xa)
        xb = (xb,) if isinstance(xb, (int, np.integer)) else tuple(xb)
        if len(xa) != len(xb):
            raise ValueError(f"tensordot: axes {xa} and {xb} differ in length")
        ca = tuple(canonicalize_axis(i, a.ndim) for i in xa)
        cb = tuple(canonicalize_axis(i, b.ndim) for i in xb)
    for i, j in zip(ca, cb):
        if a.shape[i] != b.shape[j]:
            raise _dims_error("tensordot", a, b, f"axis {i} (size {a.shape[i]}) != axis {j} "
                              f"(size {b.shape[j]})")
    if not _traced(a, b):
        return wrap(_blas_call(np.tensordot, a, b, (ca, cb)))
    a, b = _promote(a, b)
    return dot_general(a, b, ((ca, cb), ((), ())))


# --------------------------------------------------------------------------- diagonals

def _diag_mask(shape, axis1, axis2, offset):
    """A bool constant of ``shape``: True where index[axis2] == index[axis1] + offset."""
    n, m = shape[axis1], shape[axis2]
    eye = np.eye(n, m, offset, dtype=bool)
    if axis1 > axis2:
        eye = eye.T
    expanded = [1] * len(shape)
    expanded[axis1], expanded[axis2] = n, m
    return np.broadcast_to(eye.reshape(expanded), tuple(shape))


def _masked(x, mask):
    return E.select_n(mask, _const(0, x.shape, x.dtype), x)


def _take_rows(w, start, length):
    """``w[..., start:start + length]`` by a one-hot select and a sum (no slicing op)."""
    n = w.shape[-1]
    full = tuple(w.shape[:-1]) + (length, n)
    nd = w.ndim
    wb = broadcast_in_dim(w, full, tuple(range(nd - 1)) + (nd,))
    pick = np.eye(length, n, start, dtype=bool)
    return reduce_sum(_masked(wb, np.broadcast_to(pick, full)), (nd,))


def _diagonal(x, offset, axis1, axis2):
    """Traced diagonal: the other axes in order, then the diagonal (numpy's layout)."""
    n, m = x.shape[axis1], x.shape[axis2]
    r0, c0 = max(-offset, 0), max(offset, 0)
    length = max(0, min(n - r0, m - c0))
    masked = _masked(x, _diag_mask(x.shape, axis1, axis2, offset))
    # summing out one axis of the masked array leaves the diagonal along the other
    if c0 == 0 and length == m:
        keep, drop = axis2, axis1
        start = 0
    else:
        keep, drop = axis1, axis2
        start = r0
    v = reduce_sum(masked, (drop,))
    k = keep - (drop < keep)
    v = transpose(v, tuple(i for i in range(v.ndim) if i != k) + (k,))
    if start == 0 and v.shape[-1] == length:
        return v
    return _take_rows(v, start, length)


def _diagonal_args(name, a, axis1, axis2):
    """``a`` as an array and its two distinct diagonal axes, checked as numpy does."""
    (a,) = _arrays(a)
    if a.ndim < 2:
        raise ValueError(f"{name}: needs at least 2 dimensions, got shape {tuple(a.shape)}")
    ax1, ax2 = canonicalize_axis(axis1, a.ndim, "axis1"), canonicalize_axis(axis2, a.ndim, "axis2")
    if ax1 == ax2:
        raise ValueError(f"{name}: axis1 and axis2 cannot be the same ({axis1}, {axis2})")
    return a, ax1, ax2


def diagonal(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """The diagonal ``a[..., i, i + offset]`` over ``axis1``/``axis2``, as the last axis.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.diagonal(np.arange(9.0).reshape(3, 3), 1).tolist()
    [1.0, 5.0]
    """
    a, ax1, ax2 = _diagonal_args("diagonal", a, axis1, axis2)
    if not _traced(a):
        return wrap(np.diagonal(a, offset, ax1, ax2).copy())
    return _diagonal(a, int(offset), ax1, ax2)


def trace(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1,
          dtype: DTypeLike | None = None) -> Array:
    """Sum of the diagonal; bools and 32-bit ints sum as int64 (as ``sum``).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.trace(np.eye(3)).item()
    3.0
    """
    a, ax1, ax2 = _diagonal_args("trace", a, axis1, axis2)
    dt = np.dtype(dtype) if dtype is not None else accumulation_dtype(a.dtype)
    if not _traced(a):
        if dtype_kind(dt) in "iu" and dtype_kind(np.asarray(a).dtype) in "fc":
            a = asarray(a).astype(dt)       # saturating, as under jit (numpy's cast wraps)
        return wrap(np.asarray(quiet_call(np.trace, a, offset, ax1, ax2, dtype=dt)))
    a = E.convert_element_type(a, dt)
    masked = _masked(a, _diag_mask(a.shape, ax1, ax2, int(offset)))
    return reduce_sum(masked, (ax1, ax2))


def diag(v: ArrayLike, k: int = 0) -> Array:
    """A 2-D array with ``v`` (1-D) on its ``k``-th diagonal, or the ``k``-th diagonal of
    a 2-D ``v``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.diag(fnp.asarray([1.0, 2.0])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    (v,) = _arrays(v)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError(f"diag: input must be 1-D or 2-D, got shape {tuple(v.shape)}")
    if not _traced(v):
        return wrap(np.diag(v, k))
    k = int(k)
    n = v.shape[0] + abs(k)
    length = v.shape[0]
    w = v
    if k != 0:
        # w[i] = v[i] for i < len(v), else 0: the transpose of _take_rows
        wb = broadcast_in_dim(v, (n, length), (1,))
        w = reduce_sum(_masked(wb, np.eye(n, length, dtype=bool)), (1,))
    # for k >= 0 the entry in row i is w[i]; for k < 0 the entry in column j is w[j]
    wb = broadcast_in_dim(w, (n, n), (0,) if k >= 0 else (1,))
    return _masked(wb, np.eye(n, n, k, dtype=bool))


# --------------------------------------------------------------------------- einsum

def _parse_term(term, ndim, n_ell, where):
    """Labels of one operand: letters, and ints 0..n_ell-1 for the ellipsis dims
    (aligned to the right across operands, as numpy broadcasts them)."""
    if term.count("...") > 1 or "." in term.replace("...", ""):
        raise ValueError(f"einsum: invalid subscripts {term!r} ({where})")
    letters = term.replace("...", "")
    for c in letters:
        if not c.isalpha():
            raise ValueError(f"einsum: invalid subscript {c!r} in {term!r} ({where})")
    if "..." not in term:
        if ndim is not None and len(letters) != ndim:
            raise ValueError(f"einsum: {where} has {ndim} dimensions but subscripts "
                             f"{term!r} name {len(letters)}")
        return list(letters)
    k = (ndim - len(letters)) if ndim is not None else n_ell
    if k < 0:
        raise ValueError(f"einsum: {where} has {ndim} dimensions, fewer than the "
                         f"{len(letters)} subscripts in {term!r}")
    head, tail = term.split("...")
    return list(head) + list(range(n_ell - k, n_ell)) + list(tail)


def _einsum_spec(subscripts, shapes):
    """(input labels per operand, output labels) of an einsum with operands of ``shapes``."""
    subs = subscripts.replace(" ", "")
    ins, arrow, out = subs.partition("->")
    terms = ins.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: subscripts {subscripts!r} name {len(terms)} operands, "
                         f"got {len(shapes)}")
    n_ell = max([len(s) - len(t.replace("...", "")) for t, s in zip(terms, shapes)
                 if "..." in t] + [0])
    labels = [_parse_term(t, len(s), n_ell, f"operand {i} of shape {tuple(s)}")
              for i, (t, s) in enumerate(zip(terms, shapes))]
    if arrow:
        out_labels = _parse_term(out, None, n_ell, "output")
        if n_ell and "..." not in out and not any(isinstance(x, int) for x in out_labels):
            # numpy sums the broadcast dims only when none of the inputs has them
            raise ValueError("einsum: output has more dimensions than subscripts given, but "
                             "no '...' ellipsis to broadcast the extra dimensions")
        seen = [x for lab in labels for x in lab]
        for x in out_labels:
            if out_labels.count(x) > 1:
                raise ValueError(f"einsum: output subscript {x!r} appears more than once")
            if x not in seen:
                raise ValueError(f"einsum: output subscript {x!r} appears in no operand")
    else:
        counts = {}
        for lab in labels:
            for x in lab:
                counts[x] = counts.get(x, 0) + 1
        out_labels = list(range(n_ell)) + sorted(x for x, c in counts.items()
                                                 if isinstance(x, str) and c == 1)
    return labels, out_labels


def _einsum_sizes(labels, shapes):
    """The size of each label; a size-1 dim broadcasts against any other, as in numpy."""
    sizes = {}
    for lab, shape in zip(labels, shapes):
        for x, s in zip(lab, shape):
            prev = sizes.get(x)
            if prev is None or prev == 1:
                sizes[x] = s
            elif s != 1 and s != prev:
                raise ValueError(f"einsum: subscript {x!r} has sizes {prev} and {s} (operand "
                                 f"shapes {', '.join(str(tuple(sh)) for sh in shapes)})")
    return sizes


def _sum_labels(x, lab, drop):
    axes = tuple(i for i, t in enumerate(lab) if t in drop)
    if not axes:
        return x, lab
    return reduce_sum(x, axes), [t for t in lab if t not in drop]


def _einsum_prepare(x, lab, sizes, needed):
    """Diagonals for repeated labels, squeeze broadcast size-1 dims, sum unneeded labels."""
    lab = list(lab)
    while len(set(lab)) < len(lab):
        t = next(t for t in lab if lab.count(t) > 1)
        i = lab.index(t)
        j = lab.index(t, i + 1)
        x = _diagonal(x, 0, i, j)
        lab = [u for k, u in enumerate(lab) if k not in (i, j)] + [t]
    squeeze = [k for k, t in enumerate(lab) if x.shape[k] == 1 and sizes[t] != 1]
    if squeeze:
        x = reshape(x, tuple(s for k, s in enumerate(x.shape) if k not in squeeze))
        lab = [t for k, t in enumerate(lab) if k not in squeeze]
    return _sum_labels(x, lab, {t for t in lab if t not in needed})


def _contraction_order(prepared, out_labels):
    """Pairs of positions to contract, each pair's result appended to the operands left
    (opt_einsum's convention): numpy's path for 3+ operands (fewest products for up to
    4, else greedy), as JAX's einsum takes opt_einsum's. Left to right, ``einsum('ij,jk,k->i')`` of 1024x1024 matrices
    multiplied the matrices (1e9 products) where two matrix-vector products do."""
    n = len(prepared)
    left_to_right = [(0, 1)] + [(0, n - 2 - k) for k in range(n - 2)] if n > 1 else []
    letters: dict = {}
    for _, lab in prepared:
        for t in lab:
            letters.setdefault(t, _SUBLIST_LETTERS[len(letters) % len(_SUBLIST_LETTERS)])
    if n <= 2 or len(letters) > len(_SUBLIST_LETTERS):
        return left_to_right
    spec = ",".join("".join(letters[t] for t in lab) for _, lab in prepared)
    spec += "->" + "".join(letters[t] for t in out_labels if t in letters)
    dummies = [np.broadcast_to(np.empty((), np.float64), tuple(x.shape)) for x, _ in prepared]
    how = "optimal" if n <= 4 else "greedy"      # opt_einsum's 'auto', as JAX's default
    path = np.einsum_path(spec, *dummies, optimize=how)[0][1:]
    if len(path) != n - 1 or any(len(p) != 2 for p in path):
        return left_to_right
    return [tuple(sorted(p)) for p in path]


def _contract_pair(a, la, b, lb, keep):
    """dot_general of two labelled operands; labels in ``keep`` survive."""
    common = [t for t in la if t in lb]
    batch = [t for t in common if t in keep]
    contract = [t for t in common if t not in keep]
    dn = ((tuple(la.index(t) for t in contract), tuple(lb.index(t) for t in contract)),
          (tuple(la.index(t) for t in batch), tuple(lb.index(t) for t in batch)))
    out = dot_general(a, b, dn)
    return out, batch + [t for t in la if t not in common] + [t for t in lb if t not in common]


_SUBLIST_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _sublist_letters(sublist: Any, k: int) -> str:
    try:
        items = list(sublist)
    except TypeError:
        raise TypeError(f"einsum: operand {k}'s sublist must be a list of ints or Ellipsis, "
                        f"got {type(sublist).__name__}") from None
    out = []
    for t in items:
        if t is Ellipsis:
            out.append("...")
        elif isinstance(t, (int, np.integer)) and not isinstance(t, bool) and 0 <= t < 52:
            out.append(_SUBLIST_LETTERS[int(t)])
        else:
            raise ValueError(f"einsum: sublist labels must be ints in [0, 52) or Ellipsis, "
                             f"got {t!r} in operand {k}'s sublist")
    return "".join(out)


def _interleaved_subscripts(args: tuple) -> tuple[str, tuple]:
    """numpy's other calling form, ``einsum(a, [0, 1], b, [1, 2], [0, 2])``, as a
    subscripts string and the operands."""
    ops, subs = args[0::2], args[1::2]
    out = None
    if len(args) % 2:                  # a trailing output sublist
        out, ops = ops[-1], ops[:-1]
    if not ops:
        raise TypeError("einsum: expected a subscripts string or operand, sublist pairs")
    spec = ",".join(_sublist_letters(sl, k) for k, sl in enumerate(subs))
    if out is not None:
        spec += "->" + _sublist_letters(out, len(subs))
    return spec, tuple(ops)


def einsum(subscripts: str, *operands: Any, optimize: Any = None, precision: PrecisionLike = None,
           preferred_element_type: DTypeLike | None = None) -> Array:
    """Einstein summation with numpy's subscripts: explicit (``'ij,jk->ik'``) or implicit
    (``'ij,jk'``) output, repeated labels in one operand (traces and diagonals), ``...``
    and any number of operands (contracted left to right with ``dot_general``); also
    numpy's interleaved form ``einsum(a, [0, 1], b, [1, 2], [0, 2])``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.einsum("bij,bjk->bik", np.ones((2, 3, 4)), np.ones((2, 4, 5))).shape
    (2, 3, 5)
    """
    if not isinstance(subscripts, str):
        subscripts, operands = _interleaved_subscripts((subscripts,) + operands)
    ops = _arrays(*operands)
    shapes = [tuple(o.shape) for o in ops]
    if not _traced(*ops) and len(ops) <= 2:
        # numpy's optimizer routes big contractions to BLAS; its planning costs more
        # than it saves on small operands (3+ operands: the pairwise path below, as
        # traced; numpy's optimized 3-operand einsum of 256x256 matrices took 17 ms
        # where its two products take 2)
        big = max([o.size for o in ops] + [0]) > 4096
        try:
            return wrap(np.asarray((_blas_call if big else quiet_call)(
                np.einsum, subscripts, *ops, optimize=big)))
        except ValueError:
            _einsum_sizes(_einsum_spec(subscripts, shapes)[0], shapes)  # our message
            raise
    labels, out_labels = _einsum_spec(subscripts, shapes)
    sizes = _einsum_sizes(labels, shapes)
    ops = _promote(*ops)
    prepared = []
    for i, (x, lab) in enumerate(zip(ops, labels)):
        later = {t for other in labels[:i] + labels[i + 1:] for t in other}
        prepared.append(_einsum_prepare(x, lab, sizes, later | set(out_labels)))
    for i, j in _contraction_order(prepared, out_labels):
        (a, la), (b, lb) = prepared[i], prepared[j]
        prepared = [o for k, o in enumerate(prepared) if k not in (i, j)]
        keep = set(out_labels) | {t for _, lab in prepared for t in lab}
        a, la = _sum_labels(a, la, {t for t in la if t not in keep and t not in lb})
        b, lb = _sum_labels(b, lb, {t for t in lb if t not in keep and t not in la})
        prepared.append(_contract_pair(a, la, b, lb, keep))
    acc, lacc = prepared[0]
    acc, lacc = _sum_labels(acc, lacc, {t for t in lacc if t not in out_labels})
    return transpose(acc, tuple(lacc.index(t) for t in out_labels))
