"""``lax.reduce_window`` and its monoid helpers (``reduce_window_sum``, ``_max``, ``_min``,
``_prod``), composed from ``pad``, strided ``slice`` and the binary monoid.

The operand is padded with the monoid's identity (``base_dilation - 1`` copies of it
between elements, then the low/high padding; negative padding crops); every window tap
is then one strided slice, and the taps are combined with the monoid, starting from the
initial value, which enters once per window (as JAX computes it: padding adds nothing). Each step is a primitive with all its rules, so the result has
JVPs, transposes (the sum's is a pad-and-scatter of the cotangent, a max's routes it to
the first maximum of the window, as JAX's) and batching without rules of its own. The cost is one slice per
window tap, which suits pooling windows (2×2, 3×3), not huge windows.

>>> import numpy as np
>>> from functrans import lax
>>> reduce_window(np.arange(6.0).reshape(2, 3), 0.0, lax.add, (2, 2), (1, 1), "VALID").tolist()
[[8.0, 12.0]]
"""
from __future__ import annotations

import operator
from typing import Callable, Optional, Sequence, Union

import numpy as np

from jaxpr_ir import dtype_kind

from .lax_keywords import mul as lax_mul
from .primitives import elementwise
from .primitives.conv_api import padtype_to_pads
from .primitives.slicing import pad, slice as lax_slice
from .primitives.structural import broadcast_in_dim
from .tracing import Tracer, get_aval
from .typing import Array, ArrayLike

__all__ = ["reduce_window", "reduce_window_sum", "reduce_window_max", "reduce_window_min",
           "reduce_window_prod"]


def _monoid(computation):
    table = {elementwise.add: elementwise.add, operator.add: elementwise.add,
             elementwise.max: elementwise.max, elementwise.min: elementwise.min,
             elementwise.mul: elementwise.mul, operator.mul: elementwise.mul,
             lax_mul: elementwise.mul}   # lax.mul (its out_dtype= front end)
    try:
        return table[computation]
    except (KeyError, TypeError):
        raise TypeError(f"reduce_window: computation {computation!r} is not one of lax.add, "
                        f"lax.max, lax.min, lax.mul (the monoids functrans reduces windows "
                        f"with)") from None


def reduce_window(operand: ArrayLike, init_value: ArrayLike, computation: Callable,
                  window_dimensions: Sequence[int],
                  window_strides: Optional[Sequence[int]] = None,
                  padding: Union[str, Sequence[tuple]] = "VALID",
                  base_dilation: Optional[Sequence[int]] = None,
                  window_dilation: Optional[Sequence[int]] = None) -> Array:
    """Reduce every window of ``operand`` with a monoid (JAX's signature, one operand).

    >>> import numpy as np
    >>> from functrans import lax
    >>> reduce_window(np.array([1.0, 5.0, 2.0, 4.0]), -np.inf, lax.max, (2,), (2,)).tolist()
    [5.0, 4.0]
    """
    if isinstance(operand, (tuple, list, dict)):
        raise TypeError("reduce_window: functrans reduces one array operand at a time")
    op = _monoid(computation)
    a = get_aval(operand)
    nd = a.ndim
    wd = tuple(int(d) for d in window_dimensions)
    if len(wd) != nd:
        raise TypeError(f"reduce_window: window_dimensions {wd} needs {nd} entries")
    strides = (1,) * nd if window_strides is None else tuple(int(s) for s in window_strides)
    bd = (1,) * nd if base_dilation is None else tuple(int(d) for d in base_dilation)
    wdil = (1,) * nd if window_dilation is None else tuple(int(d) for d in window_dilation)
    for name, v in (("window_strides", strides), ("base_dilation", bd),
                    ("window_dilation", wdil), ("window_dimensions", wd)):
        if len(v) != nd or any(d < 1 for d in v):
            raise TypeError(f"reduce_window: {name} {v} needs {nd} positive entries")
    eff = tuple((w - 1) * d + 1 for w, d in zip(wd, wdil))
    if isinstance(padding, str):
        padding = padtype_to_pads(a.shape, eff, strides, padding)
    padding = tuple((int(lo), int(hi)) for lo, hi in padding)
    if len(padding) != nd:
        raise TypeError(f"reduce_window: padding {padding} needs {nd} (lo, hi) pairs")
    # a traced initial value (an argument of a jitted function) is allowed, as in JAX
    init = (elementwise.convert_element_type(init_value, a.dtype)
            if isinstance(init_value, Tracer) else np.asarray(init_value, dtype=a.dtype))
    # JAX's fold: the initial value once, padding and dilation holes contribute nothing
    pads = tuple((lo, hi, d - 1) for (lo, hi), d in zip(padding, bd))
    xp = pad(operand, np.asarray(_IDENTITY[op](a.dtype), a.dtype), pads)
    real = _real_mask(a.shape, pads) if op is elementwise.mul else None  # False on padding
    size = get_aval(xp).shape
    out = tuple(max(0, (n - e) // s + 1) if n >= e else 0
                for n, e, s in zip(size, eff, strides))
    acc = init_b = broadcast_in_dim(init, out, ()) if a.ndim else init
    if 0 in out:  # a window larger than the (padded) operand: an empty result
        return acc
    seen = np.zeros(out, bool)  # windows that have met an operand element so far
    for i, tap in enumerate(np.ndindex(*wd)):
        start = tuple(k * d for k, d in zip(tap, wdil))
        limit = tuple(st + (o - 1) * s + 1 if o else st
                      for st, o, s in zip(start, out, strides))
        x = lax_slice(xp, start, limit, strides)
        if op is not elementwise.mul:
            # 0 added, or -inf/+inf met by max/min, leaves values and tangents as they are
            acc = _combine(op, acc, x, i == 0)
            continue
        keep = real[tuple(slice(st, li, s) for st, li, s in zip(start, limit, strides))]
        acc = _fold(op, acc, init_b, x, keep, seen)
        seen |= keep
    return acc


def _fold(op, acc, init_b, x, keep, seen):
    """One window tap of a product: each window's first operand element starts from the
    initial value, later ones combine with the accumulator, and padding taps are skipped,
    not multiplied in (``inf * 1``'s tangent ``t * 1 + inf * 0`` would be NaN where the
    maths gives ``t``)."""
    which = np.where(keep, np.where(seen, 2, 1), 0).astype(np.int32)
    cases = [acc,
             _combine(op, init_b, x, True) if (which == 1).any() else acc,
             _combine(op, acc, x, False) if (which == 2).any() else acc]
    if (which == which.flat[0]).all():
        return cases[int(which.flat[0])]
    return elementwise.select_n(which, *cases)


def _real_mask(shape, pads):
    """Where the padded operand holds an element of the operand (numpy bools)."""
    m = np.ones(shape, bool)
    for ax, (lo, hi, interior) in enumerate(pads):
        if interior:
            idx = np.arange(m.shape[ax]) * (interior + 1)
            grown = list(m.shape)
            grown[ax] = max(0, (m.shape[ax] - 1) * (interior + 1) + 1)
            z = np.zeros(grown, bool)
            z[(slice(None),) * ax + (idx,)] = m
            m = z
        m = np.moveaxis(m, ax, 0)
        m = np.concatenate([np.zeros((max(0, lo),) + m.shape[1:], bool), m,
                            np.zeros((max(0, hi),) + m.shape[1:], bool)])
        m = m[max(0, -lo):m.shape[0] - max(0, -hi)]
        m = np.moveaxis(m, 0, ax)
    return m


def _combine(op, acc, tap, first):
    """``op(acc, tap)``; a max/min keeps the earlier window element on a tie (``first``:
    the initial value's tie goes to the element), so its derivative goes wholly to the
    first maximum of each window, as JAX's (XLA's select-and-scatter), not half to each
    as ``lax.max``'s. A NaN still wins."""
    if op not in (elementwise.max, elementwise.min) or dtype_kind(get_aval(tap).dtype) == "c":
        return op(acc, tap)
    beats = elementwise.gt if op is elementwise.max else elementwise.lt
    if first:  # the initial value only: ties go to the element
        beats = elementwise.ge if op is elementwise.max else elementwise.le
    take = beats(tap, acc)
    if dtype_kind(get_aval(tap).dtype) == "f":
        take = elementwise.bitwise_or(take, elementwise.ne(tap, tap))
    return elementwise.select_n(take, acc, tap)


def _helper(computation, identity):
    def reducer(operand: ArrayLike, window_dimensions: Sequence[int],
                window_strides: Optional[Sequence[int]] = None,
                padding: Union[str, Sequence[tuple]] = "VALID",
                base_dilation: Optional[Sequence[int]] = None,
                window_dilation: Optional[Sequence[int]] = None) -> Array:
        dt = get_aval(operand).dtype
        return reduce_window(operand, identity(dt), computation, window_dimensions,
                             window_strides, padding, base_dilation, window_dilation)
    return reducer


def _lowest(dt):
    k = dtype_kind(dt)
    return -np.inf if k == "f" else (np.iinfo(dt).min if k in "iu" else False)


def _highest(dt):
    k = dtype_kind(dt)
    return np.inf if k == "f" else (np.iinfo(dt).max if k in "iu" else True)


_IDENTITY = {elementwise.add: lambda dt: 0, elementwise.mul: lambda dt: 1,
             elementwise.max: _lowest, elementwise.min: _highest}

reduce_window_sum = _helper(elementwise.add, lambda dt: 0)
reduce_window_sum.__doc__ = """Sum over windows (padding adds nothing).

    >>> import numpy as np
    >>> reduce_window_sum(np.ones((3, 3)), (2, 2)).tolist()
    [[4.0, 4.0], [4.0, 4.0]]
    """
reduce_window_max = _helper(elementwise.max, _lowest)
reduce_window_max.__doc__ = """Max over windows (padding never wins).

    >>> import numpy as np
    >>> reduce_window_max(np.arange(4.0), (2,), (1,), "SAME").tolist()
    [1.0, 2.0, 3.0, 3.0]
    """
reduce_window_min = _helper(elementwise.min, _highest)
reduce_window_min.__doc__ = """Min over windows (padding never wins).

    >>> import numpy as np
    >>> reduce_window_min(np.arange(4.0), (2,)).tolist()
    [0.0, 1.0, 2.0]
    """
reduce_window_prod = _helper(elementwise.mul, lambda dt: 1)
reduce_window_prod.__doc__ = """Product over windows (padding multiplies by one).

    >>> import numpy as np
    >>> reduce_window_prod(np.arange(1.0, 5.0), (2,)).tolist()
    [2.0, 6.0, 12.0]
    """
for _f, _n in ((reduce_window_sum, "reduce_window_sum"), (reduce_window_max, "reduce_window_max"),
               (reduce_window_min, "reduce_window_min"),
               (reduce_window_prod, "reduce_window_prod")):
    _f.__name__ = _f.__qualname__ = _n
del _f, _n
