"""``method="inverted_cdf"`` of ``functrans.numpy.quantile`` (and ``percentile``,
``nanquantile``, ``nanpercentile``), with optional ``weights``, as JAX 0.10.2 defines it:
along the sorted slice, the first value whose cumulative weight reaches ``q`` times the
total (``sum(cumw < q * total)``, clipped to the valid entries); negative or NaN weights
make the slice NaN, as does a NaN datum (an all-NaN slice with ``nan*``); NaN data weigh
nothing under ``nan*``.

>>> import functrans.numpy as fnp
>>> x = fnp.asarray([1.0, 2.0, 3.0, 4.0, 5.0])
>>> fnp.quantile(x, 0.5, weights=fnp.asarray([1, 1, 2, 1, 1]), method="inverted_cdf").item()
3.0
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import dtype_kind
from . import _elementwise as el
from . import _elementwise_select as sel
from . import _reductions as red
from . import _structural as st
from ._creation import asarray, full_like, zeros_like
from ._sorting import argsort
from ._take import take_along_axis
from ._util import canonicalize_axes, canonicalize_axis

__all__ = ["inverted_cdf"]


def _weights_like(name, a, weights, axis):
    """``weights`` of ``a``'s shape: as given, or of the reduced axes' shape (in the
    order ``axis`` names them) broadcast along the others."""
    w = asarray(weights)
    if dtype_kind(w.dtype) == "c":
        raise ValueError(f"{name}: weights cannot be complex")
    if w.shape == a.shape:
        return w
    if axis is None:
        raise ValueError(f"{name}: weights of shape {w.shape} must match a's {a.shape} "
                         f"when axis is None")
    axes = [canonicalize_axis(x, a.ndim) for x in np.atleast_1d(axis).tolist()]
    if w.shape != tuple(a.shape[x] for x in axes):
        raise ValueError(f"{name}: weights shape {w.shape} must match the reduced axes "
                         f"{tuple(a.shape[x] for x in axes)}")
    w = st.transpose(w, tuple(np.argsort(axes).tolist()))
    w = st.reshape(w, tuple(a.shape[i] if i in axes else 1 for i in range(a.ndim)))
    return st.broadcast_to(w, a.shape)


def inverted_cdf(name, a, q, axis, keepdims, ignore_nan, weights):
    """``quantile(a, q, axis, method="inverted_cdf", weights=weights)`` of float ``a``
    (``q`` in ``a``'s dtype, 0-d or 1-d; its axis leads the result)."""
    w = full_like(a, 1.0) if weights is None else \
        asarray(_weights_like(name, a, weights, axis), a.dtype)
    ndim, axes = a.ndim, canonicalize_axes(axis, a.ndim)
    rest = [i for i in range(ndim) if i not in axes]
    shape = tuple(a.shape[i] for i in rest) + (-1,)
    x = st.reshape(st.transpose(a, tuple(rest + list(axes))), shape)
    w = st.reshape(st.transpose(w, tuple(rest + list(axes))), shape)
    order = argsort(x, axis=-1)                   # NaNs last (a stable sort, as JAX's)
    x, w = take_along_axis(x, order, axis=-1), take_along_axis(w, order, axis=-1)
    n = x.shape[-1]
    nan = el.isnan(x)
    bad_w = el.logical_or(el.less(w, 0), el.isnan(w))
    cw = red.cumsum(sel.where(el.logical_or(bad_w, nan), zeros_like(w), w), axis=-1)
    lead = (1,) * q.ndim
    target = el.multiply(st.reshape(q, q.shape + (1,) * (x.ndim - 1)),   # (equal ranks:
                         st.reshape(cw[..., -1], lead + x.shape[:-1]))  # rank_promotion)
    below = el.less(st.reshape(cw, lead + cw.shape), st.expand_dims(target, -1))
    idx = red.sum(asarray(below, np.int64), axis=-1)
    valid = red.sum(asarray(el.logical_not(nan), np.int64), axis=-1) if ignore_nan else \
        np.full(x.shape[:-1], n, np.int64)
    idx = el.maximum(el.minimum(idx, st.reshape(el.subtract(valid, 1), lead + x.shape[:-1])), 0)
    xb = st.broadcast_to(x, q.shape + x.shape)
    out = take_along_axis(xb, st.expand_dims(idx, -1), axis=-1)[..., 0]
    force = el.logical_or(red.any(bad_w, axis=-1),
                          el.equal(valid, 0) if ignore_nan else red.any(nan, axis=-1))
    out = sel.where(st.reshape(force, lead + force.shape), full_like(out, np.nan), out)
    if keepdims:
        out = st.reshape(out, q.shape + tuple(1 if i in axes else a.shape[i]
                                              for i in range(ndim)))
    return out
