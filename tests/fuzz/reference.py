"""Pure-numpy meanings of the functrans constructs the fuzzer uses that numpy spells
differently: `.at[]` updates, `lax.cond`/`fori_loop`/`scan`, and JAX's clamping of
data-dependent indices. The numpy reference program calls these by name."""
from __future__ import annotations

import numpy as np


def clamp_index(idx, n: int):
    """A computed index as JAX reads it: negative values wrap once, then clamp to
    ``[0, n-1]`` (out-of-range gathers clamp instead of raising)."""
    idx = np.asarray(idx)
    idx = np.where(idx < 0, idx + n, idx)
    return np.clip(idx, 0, n - 1)


def _at(ufunc, x, idx, v):
    out = np.array(x, copy=True)
    ufunc.at(out, idx, np.asarray(v).astype(out.dtype))
    return out


def at_set(x, idx, v):
    out = np.array(x, copy=True)
    out[idx] = np.asarray(v).astype(out.dtype)
    return out


def at_add(x, idx, v):
    return _at(np.add, x, idx, v)


def at_mul(x, idx, v):
    return _at(np.multiply, x, idx, v)


def at_min(x, idx, v):
    return _at(np.minimum, x, idx, v)


def at_max(x, idx, v):
    return _at(np.maximum, x, idx, v)


def unique_index(x, size: int):
    """``unique(x, return_index=True, size=size)[1]`` as JAX's: numpy's first indices,
    padded with the smallest value's (the first of them)."""
    idx = np.unique(np.ravel(x), return_index=True)[1][:size]
    pad = idx[0] if len(idx) else 0
    return np.concatenate([idx, np.full(size - len(idx), pad, idx.dtype)]).astype(np.int64)


def cond(pred, true_fun, false_fun, operand):
    return true_fun(operand) if bool(pred) else false_fun(operand)


def fori_loop(lower: int, upper: int, body, init):
    carry = init
    for i in range(lower, upper):
        carry = body(np.int64(i), carry)
    return carry


def scan(body, init, xs):
    """``lax.scan`` over the leading axis; returns ``(carry, stacked ys)``."""
    carry, ys = init, []
    for row in xs:
        carry, y = body(carry, row)
        ys.append(np.asarray(y))
    if ys:
        return carry, np.stack(ys)
    probe = np.asarray(body(init, np.zeros(xs.shape[1:], xs.dtype))[1])
    return carry, np.zeros((0,) + probe.shape, probe.dtype)
