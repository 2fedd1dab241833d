"""Statistics of ``functrans.numpy`` composed from existing functions: ``median
percentile quantile`` (methods linear, lower, higher, nearest, midpoint), the NaN-ignoring
reductions, ``cov corrcoef histogram histogram_bin_edges bincount
interp partition argpartition``.

Where the output shape would depend on values, a static argument fixes it, as in JAX:
``bincount(x, length=n)`` and ``histogram`` with an integer ``bins`` are jittable; eagerly
``bincount``'s length defaults to ``max(x) + 1`` (numpy's). ``nanargmax``/``nanargmin`` of
an all-NaN slice return -1 (JAX's choice; numpy raises). ``partition`` returns the fully
sorted array and ``argpartition`` the sorting permutation: both satisfy numpy's contract
(the ``kth`` element in place, nothing larger before it, nothing smaller after), although
the order inside each side may differ from numpy's.

>>> import functrans.numpy as fnp
>>> fnp.median(fnp.asarray([3.0, 1.0, 2.0, 10.0])).item()
2.5
"""
from __future__ import annotations

import operator

import numpy as np

from jaxpr_ir import canonical_dtype, dtype_kind

from ..tracing import Tracer
from . import _elementwise as el
from . import _elementwise_select as sel
from . import _reductions as red
from . import _structural as st
from . import _joining as jn
from . import _products as pr
from ._creation import asarray, arange, zeros, full_like, zeros_like
from ._sorting import sort, argsort
from ._take import take_along_axis
from ._quantile_weighted import inverted_cdf
from ._searching import searchsorted
from ._util import canonicalize_axes, canonicalize_axis
from typing import Sequence
from ..array import Array
from ..typing import ArrayLike, DTypeLike

__all__ = ["quantile", "percentile", "median", "nanquantile", "nanpercentile", "nanmedian",
           "nanmean", "nanvar", "nanstd", "nanmax", "nanmin", "nanprod", "nanargmax",
           "nanargmin", "nancumsum", "nancumprod", "cov", "corrcoef", "bincount", "histogram_bin_edges", "histogram", "interp",
           "partition", "argpartition"]

_METHODS = ("linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf")


def _no_out(name, out):
    """JAX's ``out=`` (and numpy's ``overwrite_input``, a hint) slots: out must be None."""
    if out is not None:
        raise NotImplementedError(f"{name}: the 'out' argument is not supported (as JAX)")


def _float(x):
    x = asarray(x)
    return x if dtype_kind(x.dtype) in "fc" else asarray(x, np.float64)


def _to_last(a, axis):
    """``a`` with the ``axis`` axes merged into one last axis, and the kept axes."""
    axes = canonicalize_axes(axis, a.ndim)
    rest = [i for i in range(a.ndim) if i not in axes]
    moved = st.transpose(a, rest + list(axes))
    n = int(np.prod([a.shape[i] for i in axes], dtype=np.int64))
    return st.reshape(moved, tuple(a.shape[i] for i in rest) + (n,)), axes


def _quantile(name, a, q, axis, method, keepdims, ignore_nan, weights=None):
    if method not in _METHODS:
        raise ValueError(f"{name}: method must be one of {_METHODS}, got {method!r}")
    if weights is not None and method != "inverted_cdf":
        raise NotImplementedError(f"{name}: weights need method='inverted_cdf' (JAX's too)")
    a = _float(a)
    wdt = asarray(weights).dtype if weights is not None else a.dtype
    if dtype_kind(wdt) == "f" and wdt.itemsize > a.dtype.itemsize:
        a = asarray(a, wdt)                   # wider float weights promote a (JAX's)
    if dtype_kind(a.dtype) == "c":
        raise TypeError(f"{name}: complex input is not supported")
    q = asarray(q, a.dtype)
    if not isinstance(q, Tracer) and np.any((np.asarray(q) < 0) | (np.asarray(q) > 1)):
        raise ValueError(f"{name}: quantiles must be in [0, 1]")
    if method == "inverted_cdf":
        return inverted_cdf(name, a, q, axis, keepdims, ignore_nan, weights)
    ndim = a.ndim
    x, axes = _to_last(a, axis)
    x = sort(x, axis=-1)                      # NaNs sort last
    n = x.shape[-1]
    rest = x.shape[:-1]
    nan = el.isnan(x)
    count = red.sum(el.logical_not(nan), axis=-1) if ignore_nan else np.full(rest, n)
    # q's axes lead, the slices' axes follow, both at full rank (no implicit rank
    # promotion: it raises under numpy_rank_promotion='raise')
    count = st.reshape(asarray(count, a.dtype), (1,) * q.ndim + rest)
    qb = st.reshape(q, q.shape + (1,) * len(rest))
    pos = el.multiply(qb, el.subtract(count, 1))
    pos = el.maximum(pos, 0)                  # empty slices give NaN below
    lo = el.floor(pos)
    hi = el.ceil(pos)
    xb = st.broadcast_to(x, q.shape + x.shape)

    def at(p):
        idx = el.minimum(asarray(p, np.int64), n - 1)
        return take_along_axis(xb, st.expand_dims(idx, -1), axis=-1)[..., 0]
    x_lo, x_hi = at(lo), at(hi)
    if method == "linear":                    # weights, not x_lo + t (x_hi - x_lo): that
        t = el.subtract(pos, lo)              # is NaN between -inf and a finite value and
        out = el.add(el.multiply(x_lo, el.subtract(1, t)), el.multiply(x_hi, t))  # overflows
    elif method == "lower":
        out = x_lo
    elif method == "higher":
        out = x_hi
    elif method == "midpoint":                # one middle element is itself (no x + x)
        out = sel.where(el.equal(lo, hi), x_lo, el.multiply(el.add(x_lo, x_hi), 0.5))
    else:
        out = at(el.rint(pos))                # numpy rounds half to even
    bad = el.equal(count, 0) if ignore_nan else \
        st.reshape(red.any(nan, axis=-1), (1,) * q.ndim + rest)
    out = sel.where(bad, full_like(out, np.nan), out)
    if keepdims:
        shape = list(q.shape) + [1 if i in axes else a.shape[i] for i in range(ndim)]
        out = st.reshape(out, tuple(shape))
    return out


def quantile(a: ArrayLike, q: ArrayLike, axis: int | Sequence[int] | None = None,
             out: None = None, overwrite_input: bool = False, method: str = "linear",
             keepdims: bool = False, *, weights: ArrayLike | None = None,
             interpolation: str | None = None) -> Array:
    """The ``q``-th quantiles (``q`` in [0, 1]) along ``axis``; ``q``'s axes come first.

    >>> import functrans.numpy as fnp
    >>> fnp.quantile(fnp.arange(5.0), fnp.asarray([0.25, 0.5])).tolist()
    [1.0, 2.0]
    """
    _no_out("quantile", out)
    return _quantile("quantile", a, q, axis, interpolation or method, keepdims, False, weights)


def percentile(a: ArrayLike, q: ArrayLike, axis: int | Sequence[int] | None = None,
               out: None = None, overwrite_input: bool = False, method: str = "linear",
               keepdims: bool = False, *, weights: ArrayLike | None = None,
               interpolation: str | None = None) -> Array:
    """The ``q``-th percentiles (``q`` in [0, 100]).

    >>> import functrans.numpy as fnp
    >>> fnp.percentile(fnp.arange(5.0), 50).item()
    2.0
    """
    _no_out("percentile", out)
    return _quantile("percentile", a, el.true_divide(_float(q), 100.0), axis,
                     interpolation or method, keepdims, False, weights)


def median(a: ArrayLike, axis: int | Sequence[int] | None = None, out: None = None,
           overwrite_input: bool = False, keepdims: bool = False) -> Array:
    """The median along ``axis`` (NaN if the slice holds a NaN).

    >>> import functrans.numpy as fnp
    >>> fnp.median(fnp.asarray([[1.0, 5.0], [3.0, 4.0]]), axis=0).tolist()
    [2.0, 4.5]
    """
    _no_out("median", out)
    return _quantile("median", a, 0.5, axis, "midpoint", keepdims, False)


def nanquantile(a: ArrayLike, q: ArrayLike, axis: int | Sequence[int] | None = None,
                out: None = None, overwrite_input: bool = False, method: str = "linear",
                keepdims: bool = False, *, weights: ArrayLike | None = None,
                interpolation: str | None = None) -> Array:
    """``quantile`` ignoring NaNs (NaN for an all-NaN slice).

    >>> import functrans.numpy as fnp
    >>> fnp.nanquantile(fnp.asarray([1.0, fnp.nan, 3.0]), 0.5).item()
    2.0
    """
    _no_out("nanquantile", out)
    return _quantile("nanquantile", a, q, axis, interpolation or method, keepdims, True, weights)


def nanpercentile(a: ArrayLike, q: ArrayLike, axis: int | Sequence[int] | None = None,
                  out: None = None, overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: ArrayLike | None = None,
                  interpolation: str | None = None) -> Array:
    """``percentile`` ignoring NaNs.

    >>> import functrans.numpy as fnp
    >>> fnp.nanpercentile(fnp.asarray([1.0, fnp.nan, 3.0]), 100).item()
    3.0
    """
    _no_out("nanpercentile", out)
    return _quantile("nanpercentile", a, el.true_divide(_float(q), 100.0), axis,
                     interpolation or method, keepdims, True, weights)


def nanmedian(a: ArrayLike, axis: int | Sequence[int] | None = None, out: None = None,
              overwrite_input: bool = False, keepdims: bool = False) -> Array:
    """``median`` ignoring NaNs.

    >>> import functrans.numpy as fnp
    >>> fnp.nanmedian(fnp.asarray([1.0, fnp.nan, 4.0])).item()
    2.5
    """
    _no_out("nanmedian", out)
    return _quantile("nanmedian", a, 0.5, axis, "midpoint", keepdims, True)


def _nan_filled(a, fill):
    a = asarray(a)
    if dtype_kind(a.dtype) not in "fc":
        return a, None
    nan = el.isnan(a)
    return sel.where(nan, full_like(a, fill), a), nan


def nanmean(a: ArrayLike, axis: int | Sequence[int] | None = None, dtype: DTypeLike | None = None,
            keepdims: bool = False, *, where: ArrayLike | None = None) -> Array:
    """Mean of the non-NaN entries (NaN for an all-NaN slice).

    >>> import functrans.numpy as fnp
    >>> fnp.nanmean(fnp.asarray([1.0, fnp.nan, 3.0])).item()
    2.0
    """
    a = _float(a)
    filled, nan = _nan_filled(a, 0)
    keep = red.nan_kept(a, nan, where)
    count = red.sum(keep, axis=axis, keepdims=keepdims)
    total = red.sum(filled, axis=axis, dtype=dtype, keepdims=keepdims,
                    where=None if where is None else keep)
    return el.true_divide(total, asarray(count, total.dtype))    # in dtype=, as numpy



def nanvar(a: ArrayLike, axis: int | Sequence[int] | None = None, dtype: DTypeLike | None = None,
           ddof: int = 0, keepdims: bool = False, *, where: ArrayLike | None = None,
           mean: ArrayLike | None = None) -> Array:
    """Variance of the non-NaN entries (about ``mean``, of ``keepdims=True`` shape, if
    given: numpy's, to reuse a computed mean).

    >>> import functrans.numpy as fnp
    >>> fnp.nanvar(fnp.asarray([1.0, fnp.nan, 3.0])).item()
    1.0
    """
    a = _float(a)
    # a given mean in a's dtype: the result's, and no promotion for the strict mode to see
    mean = nanmean(a, axis=axis, keepdims=True, where=where) if mean is None else \
        asarray(mean, a.dtype)
    filled, nan = _nan_filled(a, 0)
    keep = red.nan_kept(a, nan, where)
    dev = sel.where(keep, el.subtract(a, mean), zeros_like(a))
    sq = sel.real(el.multiply(dev, sel.conj(dev))) if dtype_kind(a.dtype) == "c" else el.square(dev)
    ss = red.sum(sq, axis=axis, dtype=dtype, keepdims=keepdims)
    dof = el.subtract(asarray(red.sum(keep, axis=axis, keepdims=keepdims), ss.dtype), ddof)
    out = el.true_divide(ss, dof)
    return sel.where(el.greater(dof, 0), out, full_like(out, np.nan))   # numpy's NaN


def nanstd(a: ArrayLike, axis: int | Sequence[int] | None = None, dtype: DTypeLike | None = None,
           ddof: int = 0, keepdims: bool = False, *, where: ArrayLike | None = None,
           mean: ArrayLike | None = None) -> Array:
    """Standard deviation of the non-NaN entries.

    >>> import functrans.numpy as fnp
    >>> fnp.nanstd(fnp.asarray([1.0, fnp.nan, 3.0])).item()
    1.0
    """
    return el.sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where,
                          mean=mean))


def _nan_extreme(a, axis, keepdims, fill, reduce, initial=None, where=None):
    a = asarray(a)
    filled, nan = _nan_filled(a, fill)
    masks = {k: v for k, v in (("initial", initial), ("where", where)) if v is not None}
    out = reduce(filled, axis=axis, keepdims=keepdims, **masks)
    if nan is None or initial is not None:      # initial: numpy's answer for all-NaN
        return out
    all_nan = el.logical_not(red.any(red.nan_kept(a, nan, where), axis=axis, keepdims=keepdims))
    return sel.where(all_nan, full_like(out, np.nan), out)


def nanmax(a: ArrayLike, axis: int | Sequence[int] | None = None, keepdims: bool = False, *,
           initial: ArrayLike | None = None, where: ArrayLike | None = None) -> Array:
    """Maximum ignoring NaNs (NaN for an all-NaN slice).

    >>> import functrans.numpy as fnp
    >>> fnp.nanmax(fnp.asarray([1.0, fnp.nan, 3.0])).item()
    3.0
    """
    return _nan_extreme(a, axis, keepdims, -np.inf, red.max, initial, where)


def nanmin(a: ArrayLike, axis: int | Sequence[int] | None = None, keepdims: bool = False, *,
           initial: ArrayLike | None = None, where: ArrayLike | None = None) -> Array:
    """Minimum ignoring NaNs (NaN for an all-NaN slice).

    >>> import functrans.numpy as fnp
    >>> fnp.nanmin(fnp.asarray([1.0, fnp.nan, 3.0])).item()
    1.0
    """
    return _nan_extreme(a, axis, keepdims, np.inf, red.min, initial, where)


def nanprod(a: ArrayLike, axis: int | Sequence[int] | None = None, dtype: DTypeLike | None = None,
            keepdims: bool = False, *, initial: ArrayLike | None = None,
            where: ArrayLike | None = None) -> Array:
    """Product treating NaNs as 1.

    >>> import functrans.numpy as fnp
    >>> fnp.nanprod(fnp.asarray([2.0, fnp.nan, 3.0])).item()
    6.0
    """
    return red.prod(_nan_filled(a, 1)[0], axis=axis, dtype=dtype, keepdims=keepdims,
                    initial=initial, where=where)


def _nan_arg(a, axis, keepdims, fill, reduce):
    a = asarray(a)
    filled, nan = _nan_filled(a, fill)
    out = reduce(filled, axis=axis, keepdims=keepdims)
    if nan is None:
        return out
    all_nan = red.all(nan, axis=axis, keepdims=keepdims)
    return sel.where(all_nan, full_like(out, -1), out)


def nanargmax(a: ArrayLike, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the maximum ignoring NaNs (-1 for an all-NaN slice, as JAX).

    >>> import functrans.numpy as fnp
    >>> fnp.nanargmax(fnp.asarray([1.0, fnp.nan, 3.0])).item()
    2
    """
    return _nan_arg(a, axis, keepdims, -np.inf, red.argmax)


def nanargmin(a: ArrayLike, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the minimum ignoring NaNs (-1 for an all-NaN slice, as JAX).

    >>> import functrans.numpy as fnp
    >>> fnp.nanargmin(fnp.asarray([fnp.nan, 2.0, 3.0])).item()
    1
    """
    return _nan_arg(a, axis, keepdims, np.inf, red.argmin)


def nancumsum(a: ArrayLike, axis: int | None = None, dtype: DTypeLike | None = None) -> Array:
    """Cumulative sum treating NaNs as 0.

    >>> import functrans.numpy as fnp
    >>> fnp.nancumsum(fnp.asarray([1.0, fnp.nan, 3.0])).tolist()
    [1.0, 1.0, 4.0]
    """
    return red.cumsum(_nan_filled(a, 0)[0], axis=axis, dtype=dtype)


def nancumprod(a: ArrayLike, axis: int | None = None, dtype: DTypeLike | None = None) -> Array:
    """Cumulative product treating NaNs as 1.

    >>> import functrans.numpy as fnp
    >>> fnp.nancumprod(fnp.asarray([2.0, fnp.nan, 3.0])).tolist()
    [2.0, 2.0, 6.0]
    """
    return red.cumprod(_nan_filled(a, 1)[0], axis=axis, dtype=dtype)


def cov(m: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, bias: bool = False,
        ddof: int | None = None, fweights: ArrayLike | None = None,
        aweights: ArrayLike | None = None, dtype: DTypeLike | None = None) -> Array:
    """Covariance matrix of the variables (rows, or columns if not ``rowvar``), with
    numpy's frequency and analytic weights, computed in ``dtype`` if given.

    >>> import functrans.numpy as fnp
    >>> fnp.cov(fnp.asarray([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    if dtype is not None and dtype_kind(canonical_dtype(dtype)) not in "fc":
        raise ValueError(f"cov: dtype must be a subclass of float or complex, got "
                         f"{np.dtype(dtype).name}")      # (numpy raises too: ints can't
    x = _float(m)                                          # hold x - mean)
    if x.ndim > 2:
        raise ValueError(f"cov: m has more than 2 dimensions (shape {x.shape})")
    transpose = not rowvar and x.ndim != 1    # numpy >= 2.2, JAX: also a 1-row 2-d m
    x = st.transpose(st.atleast_2d(x)) if transpose else st.atleast_2d(x)
    if y is not None:
        yy = st.atleast_2d(_float(y))
        if not rowvar and yy.shape[0] != 1:
            yy = st.transpose(yy)
        x = jn.concatenate([x, asarray(yy, x.dtype)], axis=0)
    x = x if dtype is None else asarray(x, dtype)
    ddof = (0 if bias else 1) if ddof is None else ddof
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = _float(fweights)
    if aweights is not None:
        aw = _float(aweights)
        w = aw if w is None else el.multiply(w, aw)
    if w is None:
        avg = red.mean(x, axis=1)
        fact = n - ddof
        xw = el.subtract(x, avg[:, None])
        xw_w = xw
    else:
        v1 = red.sum(w)
        if aweights is None:
            fact = el.subtract(v1, ddof)
        else:
            fact = el.subtract(v1, el.true_divide(el.multiply(ddof, red.sum(el.multiply(w, aw))),
                                                  v1))
        w = st.reshape(w, (1, n))                 # no implicit rank promotion
        avg = el.true_divide(red.sum(el.multiply(x, w), axis=1), v1)
        xw = el.subtract(x, avg[:, None])
        xw_w = el.multiply(xw, w)
    c = pr.matmul(xw_w, st.transpose(sel.conj(xw) if dtype_kind(xw.dtype) == "c" else xw))
    # no degrees of freedom left: divide by 0 (inf; nan for no samples), as numpy and JAX
    fact = max(fact, 0) if isinstance(fact, int) else sel.where(el.less_equal(fact, 0), 0, fact)
    return st.squeeze(el.true_divide(c, fact))


def corrcoef(x: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True) -> Array:
    """Pearson correlation coefficients (``cov`` normalised; real parts clipped to
    [-1, 1]).

    >>> import functrans.numpy as fnp
    >>> fnp.corrcoef(fnp.asarray([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return el.true_divide(c, c)
    d = pr.diagonal(c)
    s = el.sqrt(sel.real(d) if dtype_kind(d.dtype) == "c" else d)
    c = el.true_divide(el.true_divide(c, s[:, None]), s[None, :])
    if dtype_kind(c.dtype) == "c":
        return el.add(sel.clip(sel.real(c), -1, 1), el.multiply(sel.imag(c), 1j))
    return sel.clip(c, -1, 1)


def bincount(x: ArrayLike, weights: ArrayLike | None = None, minlength: int = 0, *,
             length: int | None = None) -> Array:
    """Counts (or summed ``weights``) of each non-negative integer in ``x``. Under a
    trace pass a static ``length``; values at or past it are dropped and negative ones
    count at 0, as in JAX (eagerly a negative value raises, as in numpy).

    >>> import functrans.numpy as fnp
    >>> fnp.bincount(fnp.asarray([0, 1, 1, 3])).tolist()
    [1, 2, 0, 1]
    """
    x = asarray(x)
    if x.dtype == np.bool_:   # numpy counts bools as 0 and 1
        x = asarray(x, np.int64)
    if x.ndim != 1 or dtype_kind(x.dtype) not in "iu":
        raise TypeError(f"bincount: x must be a 1-d integer array, got {x.dtype}{list(x.shape)}")
    if length is None:
        if isinstance(x, Tracer):
            raise TypeError("bincount: under a transform the output length must be static: "
                            "pass length=")
        xv = np.asarray(x)
        if xv.size and xv.min() < 0:
            raise ValueError("bincount: x must not contain negative values")
        length = max(int(xv.max()) + 1 if xv.size else 0, operator.index(minlength))
    length = operator.index(length)
    w = asarray(1, np.int64) if weights is None else asarray(weights)
    w = st.broadcast_to(w, x.shape)
    x = el.maximum(x, 0) if dtype_kind(x.dtype) == "i" else x   # traced negatives: 0, as JAX
    # a scatter-add, as JAX's: O(len(x)); values at or past ``length`` are dropped (a
    # one-hot sum was O(len(x) * length): 1M values into 50 bins built 50M-element arrays)
    out = zeros((length,), red.accumulation_dtype(w.dtype))
    return out.at[x].add(asarray(w, out.dtype), mode="drop")


def histogram_bin_edges(a: ArrayLike, bins: ArrayLike = 10,
                        range: tuple[float, float] | None = None,
                        weights: ArrayLike | None = None) -> Array:  # noqa: A002 (numpy's name)
    """Edges of ``bins`` equal-width bins over ``range`` (default: min to max of ``a``),
    or ``bins`` itself if it is an array of edges.

    >>> import functrans.numpy as fnp
    >>> fnp.histogram_bin_edges(fnp.asarray([0.0, 1.0]), 2).tolist()
    [0.0, 0.5, 1.0]
    """
    if not isinstance(bins, (int, np.integer)):
        return _float(bins)
    a = _float(a)
    if range is None:
        lo, hi = red.min(a), red.max(a)
    else:
        lo, hi = asarray(range[0], a.dtype), asarray(range[1], a.dtype)
    # numpy widens an empty range to +-0.5 around it
    same = el.equal(lo, hi)
    lo = sel.where(same, el.subtract(lo, 0.5), lo)
    hi = sel.where(same, el.add(hi, 0.5), hi)
    n = operator.index(bins)
    if n < 1:
        raise ValueError(f"histogram_bin_edges: bins must be positive, got {n}")
    # numpy's linspace: start + i * (delta / n), the last edge exactly ``hi``
    step = el.true_divide(el.subtract(hi, lo), n)
    inner = el.add(lo, el.multiply(arange(n, dtype=a.dtype), step))
    return jn.concatenate([inner, st.reshape(hi, (1,))])


def histogram(a: ArrayLike, bins: ArrayLike = 10, range: tuple[float, float] | None = None,
              weights: ArrayLike | None = None,
              density: bool | None = None) -> tuple[Array, Array]:  # noqa: A002
    """Histogram of ``a``: ``(counts, edges)``; the last bin includes its right edge and
    values outside the edges are not counted. ``bins`` must be static (an int or edges).

    >>> import functrans.numpy as fnp
    >>> [v.tolist() for v in fnp.histogram(fnp.asarray([0.0, 0.2, 1.0]), 2)]
    [[2.0, 1.0], [0.0, 0.5, 1.0]]
    """
    a = st.ravel(_float(a))
    edges = histogram_bin_edges(a, bins, range)
    nbins = edges.shape[0] - 1
    idx = el.subtract(searchsorted(edges, a, side="right"), 1)
    idx = sel.where(el.equal(a, edges[-1]), full_like(idx, nbins - 1), idx)
    outside = el.logical_or(el.less(a, edges[0]), el.greater(a, edges[-1]))
    idx = sel.where(outside, full_like(idx, nbins), idx)   # nbins is dropped by bincount
    # counts in a's float dtype (joined with the weights'), as JAX's histogram returns
    cdt = a.dtype if weights is None else np.result_type(a.dtype, asarray(weights).dtype)
    w = full_like(a, 1, cdt) if weights is None else st.ravel(asarray(weights, cdt))
    counts = bincount(idx, w, length=nbins)
    if density:
        counts = el.true_divide(counts, el.multiply(red.sum(counts), el.subtract(
            edges[1:], edges[:-1])))
    return counts, edges


def interp(x: ArrayLike, xp: ArrayLike, fp: ArrayLike, left: ArrayLike | None = None,
           right: ArrayLike | None = None, period: float | None = None) -> Array:
    """Piecewise-linear interpolation of ``(xp, fp)`` at ``x`` (``xp`` increasing).

    >>> import functrans.numpy as fnp
    >>> fnp.interp(fnp.asarray([0.5, 5.0]), fnp.asarray([0.0, 1.0]), fnp.asarray([0.0, 2.0])).tolist()
    [1.0, 2.0]
    """
    x, xp, fp = _float(x), _float(xp), _float(fp)
    if xp.ndim != 1 or fp.ndim != 1 or xp.shape != fp.shape:
        raise ValueError(f"interp: xp and fp must be 1-d of equal length, got {xp.shape} "
                         f"and {fp.shape}")
    if period is not None:
        period = el.abs(asarray(period, xp.dtype))
        x = el.remainder(x, period)
        xp = el.remainder(xp, period)
        order = argsort(xp)
        xp, fp = xp[order], fp[order]
        xp = jn.concatenate([el.subtract(xp[-1:], period), xp, el.add(xp[:1], period)])
        fp = jn.concatenate([fp[-1:], fp, fp[:1]])
    n = xp.shape[0]
    i = sel.clip(searchsorted(xp, x, side="right"), 1, n - 1)
    x0, x1, f0, f1 = xp[i - 1], xp[i], fp[i - 1], fp[i]
    dx = el.subtract(x1, x0)
    safe_dx = sel.where(el.equal(dx, 0), el.add(dx, 1), dx)
    frac = el.true_divide(el.subtract(x, x0), safe_dx)
    out = sel.where(el.equal(dx, 0), f1, el.add(f0, el.multiply(frac, el.subtract(f1, f0))))
    if period is None:
        lo = fp[0] if left is None else asarray(left, out.dtype)
        hi = fp[-1] if right is None else asarray(right, out.dtype)
        out = sel.where(el.less(x, xp[0]), el.add(zeros_like(out), lo), out)
        out = sel.where(el.greater(x, xp[-1]), el.add(zeros_like(out), hi), out)
    return out


def partition(a: ArrayLike, kth: int | Sequence[int], axis: int = -1) -> Array:
    """``a`` rearranged so that position ``kth`` holds the value a full sort would put
    there, nothing larger before it and nothing smaller after (here: fully sorted).

    >>> import functrans.numpy as fnp
    >>> fnp.partition(fnp.asarray([3, 1, 2]), 1)[1].item()
    2
    """
    a = asarray(a)
    axis = canonicalize_axis(axis, a.ndim)
    n = a.shape[axis]
    for k in np.ravel(kth):
        if not -n <= int(k) < n:
            raise ValueError(f"partition: kth {int(k)} is out of bounds for axis of size {n}")
    return sort(a, axis=axis)


def argpartition(a: ArrayLike, kth: int | Sequence[int], axis: int = -1) -> Array:
    """Indices that ``partition`` ``a`` (here: the stable sorting permutation), int32 as
    JAX's (its top_k indices; checked with x64 on).

    >>> import functrans.numpy as fnp
    >>> fnp.argpartition(fnp.asarray([3, 1, 2]), 1)[1].item()
    2
    """
    a = asarray(a)
    partition(a, kth, axis)        # bounds check
    return argsort(a, axis=axis).astype(np.int32)
