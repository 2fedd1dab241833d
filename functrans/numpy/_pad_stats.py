"""``pad`` modes that compute their values (numpy's ``linear_ramp``, ``maximum``,
``minimum``, ``mean``, ``median``) on traced arrays, one axis after the other as numpy
pads (so corners come from the already padded axes), from the primitives alone.

>>> import numpy as np
>>> pad_computed(np.arange(4.0), [(2, 1)], "maximum", {}).tolist()
[3.0, 3.0, 0.0, 1.0, 2.0, 3.0, 3.0]
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxpr_ir import dtype_kind

from ..primitives import elementwise as E
from ..primitives import slicing as Sl
from ..primitives import structural as S
from ..primitives.reductions import reduce_max, reduce_min, reduce_sum
from ..primitives.sorting import sort

__all__ = ["COMPUTED_MODES", "pad_computed"]

COMPUTED_MODES = ("linear_ramp", "maximum", "minimum", "mean", "median")


def _stat(x, mode, j):
    """The statistic of ``x`` along axis ``j``, kept as a size-1 axis."""
    n = S.aval(x).shape[j]
    if mode in ("maximum", "minimum"):
        r = (reduce_max if mode == "maximum" else reduce_min)(x, (j,))
    elif mode == "mean":
        r = E.div(reduce_sum(x, (j,)), np.asarray(n, S.aval(x).dtype))
    else:   # median: the middle of the sorted values (the mean of the two middles)
        s = sort(x, j)
        lo = Sl.slice_in_dim(s, (n - 1) // 2, (n - 1) // 2 + 1, 1, j)
        hi = Sl.slice_in_dim(s, n // 2, n // 2 + 1, 1, j)
        return E.div(E.add(lo, hi), np.asarray(2, S.aval(x).dtype))
    return S.expand_dims(r, (j,))


def _ramp(edge, end, width, j, reverse):
    """numpy's linspace(end, edge, width, endpoint=False) along axis ``j`` (reversed for
    the high side), ``edge`` a size-1 slice of the array."""
    a = S.aval(edge)
    end = np.asarray(end, a.dtype)
    k = np.arange(width, dtype=a.dtype)[::-1] if reverse else np.arange(width, dtype=a.dtype)
    k = k.reshape((1,) * j + (width,) + (1,) * (a.ndim - j - 1))
    step = E.div(E.sub(edge, S.full(a.shape, end, a.dtype)), np.asarray(width, a.dtype))
    shape = a.shape[:j] + (width,) + a.shape[j + 1:]
    ramp = E.mul(S.broadcast_in_dim(k, shape, tuple(range(a.ndim))),
                 S.broadcast_in_dim(step, shape, tuple(range(a.ndim))))
    return E.add(ramp, S.full(shape, end, a.dtype))


def pad_computed(a: Any, widths: list[tuple[int, int]], mode: str, kwargs: dict) -> Any:
    """``a`` padded by ``widths`` in one of ``COMPUTED_MODES`` (numpy's keywords
    ``stat_length`` and ``end_values``)."""
    nd = S.aval(a).ndim
    dtype = S.aval(a).dtype
    # numpy computes these in float64 and rounds back to an integer dtype: linspace
    # floors (linear_ramp), mean and median round half to even
    rounded = dtype_kind(dtype) not in "fc" and mode in ("linear_ramp", "mean", "median")
    key = "end_values" if mode == "linear_ramp" else "stat_length"
    extra = kwargs.pop(key, 0 if mode == "linear_ramp" else None)
    if kwargs:
        raise TypeError(f"pad: unsupported keyword arguments {sorted(kwargs)} for mode {mode!r}")
    pairs = None if extra is None else np.broadcast_to(np.asarray(extra), (nd, 2))
    for j, (lo, hi) in enumerate(widths):
        if not (lo or hi):
            continue
        n = S.aval(a).shape[j]
        if n == 0:
            raise ValueError(f"pad: can't extend the empty axis {j} in mode {mode!r}")
        parts = [a]
        src = E.convert_element_type(a, np.float64) if rounded else a
        for side, w in ((0, lo), (1, hi)):
            if not w:
                continue
            if mode == "linear_ramp":
                edge = Sl.slice_in_dim(src, 0 if side == 0 else n - 1, 1 if side == 0 else n, 1, j)
                part = _ramp(edge, pairs[j][side], w, j, side == 1)
            else:
                m = n if pairs is None else max(1, min(int(pairs[j][side]), n))
                region = Sl.slice_in_dim(src, 0 if side == 0 else n - m, m if side == 0 else n, 1, j)
                v = _stat(region, mode, j)
                sh = S.aval(v).shape
                part = S.broadcast_in_dim(v, sh[:j] + (w,) + sh[j + 1:], tuple(range(nd)))
            if rounded:   # (a bool's 0.5 is True: numpy rounds integer dtypes only)
                if dtype_kind(dtype) in "iu":
                    part = (E.floor if mode == "linear_ramp" else E.round)(part)
                part = E.convert_element_type(part, dtype)
            parts.insert(0 if side == 0 else len(parts), part)
        a = Sl.concatenate(parts, j) if len(parts) > 1 else a
    return a
