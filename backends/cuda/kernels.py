"""Kernels for the structural and special primitives (Python source, like ``codegen``).

Each builder returns a ``KernelSource`` over flat, C-contiguous buffers; shapes are
baked into the text. All are grid-stride loops with int64 indices:

- ``pad``: each output element reads the operand or the padding value (negative
  edges crop, interior padding skips); ``concatenate``: a chain of range tests on the
  concatenated dimension; ``dynamic_slice`` / ``dynamic_update_slice``: start
  indices read from 1-element device buffers and clamped so the window fits.
- ``cumulative``: one thread per row of the scanned axis, a sequential scan along it
  (cumsum, cumprod, cummax, cummin; forwards or reversed).
- ``arg_extreme``: one thread per output element, the first max/min (or first nan).
- ``threefry2x32``: the 20-round counter-based generator, one thread per counter, in
  uint64 arithmetic masked to 32 bits.

>>> src = pad((5,), (2,), ((1, 2, 0),), "float32")
>>> src.name.startswith("pad_"), src.argtypes
(True, ('float32[::1]', 'float32[::1]', 'float32[::1]'))
"""
from __future__ import annotations

import numpy as np

from ..fusion import contiguous_strides
from .codegen import _PRO, _arr, _decompose, _finish
from .ops import REDUCTIONS, tname

__all__ = ["pad", "concatenate", "dynamic_slice", "dynamic_update_slice", "cumulative",
           "arg_extreme", "threefry2x32", "CUMULATIVE"]


def _size(shape):
    return int(np.prod(shape, dtype=np.int64))


def _loop(shape, ind="        "):
    """Prologue of a grid-stride loop over ``shape`` setting ``o<k>`` per dimension."""
    L = list(_PRO) + [f"    while i < {_size(shape)}:"]
    _decompose(L, ind, "i", shape, [f"o{k}" for k in range(len(shape))])
    return L


def pad(out_shape, x_shape, config, dtype):
    """``out = pad(x, pv[0], config)`` with config ``((lo, hi, interior), ...)``."""
    xs = contiguous_strides(x_shape)
    L = _loop(out_shape) + ["        ok_ = True", "        src_ = i64(0)"]
    for k, ((lo, _, it), d) in enumerate(zip(config, x_shape)):
        L.append(f"        j_ = o{k} - {lo}")
        if it == 0:
            L.append(f"        if j_ < 0 or j_ >= {d}:")
            L.append("            ok_ = False")
            L.append(f"        src_ += j_ * {xs[k]}")
        else:
            L.append(f"        if j_ < 0 or j_ % {it + 1} != 0 or j_ // {it + 1} >= {d}:")
            L.append("            ok_ = False")
            L.append(f"        src_ += (j_ // {it + 1}) * {xs[k]}")
    L += ["        if ok_:", "            out[i] = x[src_]", "        else:",
          "            out[i] = pv[0]", "        i += s_"]
    a = _arr(dtype)
    return _finish("pad", ["out", "x", "pv"], L, [a, a, a])


def _offset(shape, names):
    st = contiguous_strides(shape)
    return " + ".join(f"{n} * {s}" for n, s in zip(names, st)) or "0"


def concatenate(out_shape, dimension, shapes, dtype):
    """``out = concatenate(g0, g1, ..., axis=dimension)``."""
    L = _loop(out_shape)
    names = [f"o{k}" for k in range(len(out_shape))]
    first, off = True, 0
    for j, shp in enumerate(shapes):
        n = shp[dimension]
        if n == 0:
            continue
        nm = list(names)
        nm[dimension] = f"(o{dimension} - {off})" if off else f"o{dimension}"
        head = "if" if first else "elif"
        L.append(f"        {head} o{dimension} < {off + n}:")
        L.append(f"            out[i] = g{j}[{_offset(shp, nm)}]")
        first, off = False, off + n
    L.append("        i += s_")
    a = _arr(dtype)
    return _finish("concat", ["out"] + [f"g{j}" for j in range(len(shapes))], L,
                   [a] * (1 + len(shapes)))


def _starts(L, x_shape, sizes):
    for k, (d, n) in enumerate(zip(x_shape, sizes)):
        L.append(f"    t{k} = min(max(i64(s{k}[0]), i64(0)), i64({d - n}))")


def dynamic_slice(x_shape, sizes, dtype, start_dtypes):
    """``out = x[t0:t0+n0, ...]`` with ``t<k> = clip(s<k>[0], 0, d<k> - n<k>)``."""
    L = []
    _starts(L, x_shape, sizes)
    L = L + _loop(sizes)
    idx = _offset(x_shape, [f"(o{k} + t{k})" for k in range(len(sizes))])
    L += [f"        out[i] = x[{idx}]", "        i += s_"]
    ks = [f"s{k}" for k in range(len(sizes))]
    return _finish("dslice", ["out", "x"] + ks, L,
                   [_arr(dtype), _arr(dtype)] + [_arr(d) for d in start_dtypes])


def dynamic_update_slice(x_shape, u_shape, dtype, start_dtypes):
    """``out = x`` with the window at the clamped starts replaced by ``u``."""
    L = []
    _starts(L, x_shape, u_shape)
    L = L + _loop(x_shape) + ["        ins_ = True"]
    for k, n in enumerate(u_shape):
        L.append(f"        r{k} = o{k} - t{k}")
        L.append(f"        if r{k} < 0 or r{k} >= {n}:")
        L.append("            ins_ = False")
    L += ["        if ins_:",
          f"            out[i] = u[{_offset(u_shape, [f'r{k}' for k in range(len(u_shape))])}]",
          "        else:", "            out[i] = x[i]", "        i += s_"]
    ks = [f"s{k}" for k in range(len(x_shape))]
    a = _arr(dtype)
    return _finish("dus", ["out", "x", "u"] + ks, L, [a, a, a] + [_arr(d) for d in start_dtypes])


def _rows(shape, axis):
    outer = _size(shape[:axis])
    inner = _size(shape[axis + 1:])
    return outer, shape[axis], inner


# cumulative primitive -> the reduction whose identity and combine it scans with
CUMULATIVE = {"cumsum": "reduce_sum", "cumprod": "reduce_prod", "cummax": "reduce_max",
              "cummin": "reduce_min"}


def cumulative(name, shape, axis, reverse, dtype):
    """``out`` = the inclusive scan of ``x`` along ``axis`` (from the end if ``reverse``)."""
    outer, n, inner = _rows(shape, axis)
    ident, comb, _ = REDUCTIONS[CUMULATIVE[name]]
    t = tname(dtype)
    pos = f"({n - 1} - k_)" if reverse else "k_"
    L = list(_PRO) + [f"    while i < {outer * inner}:",
                      f"        b_ = (i // {inner}) * {n * inner} + (i % {inner})",
                      f"        acc = {ident(np.dtype(dtype))}",
                      "        k_ = i64(0)",
                      f"        while k_ < {n}:",
                      f"            p_ = b_ + {pos} * {inner}",
                      f"            acc = {t}({comb.format(a='acc', b='x[p_]')})",
                      "            out[p_] = acc",
                      "            k_ += 1",
                      "        i += s_"]
    a = _arr(dtype)
    return _finish("cum", ["out", "x"], L, [a, a])


def arg_extreme(shape, axis, dtype, index_dtype, largest):
    """``out`` = index of the first max (min) along ``axis``; the first nan wins."""
    outer, n, inner = _rows(shape, axis)
    op = ">" if largest else "<"
    L = list(_PRO) + [f"    while i < {outer * inner}:",
                      f"        b_ = (i // {inner}) * {n * inner} + (i % {inner})",
                      "        best = x[b_]", "        bi = i64(0)", "        k_ = i64(1)",
                      f"        while k_ < {n}:",
                      f"            v_ = x[b_ + k_ * {inner}]",
                      f"            if best == best and (v_ != v_ or v_ {op} best):",
                      "                best = v_", "                bi = k_",
                      "            k_ += 1",
                      f"        out[i] = {tname(index_dtype)}(bi)", "        i += s_"]
    return _finish("arg", ["out", "x"], L, [_arr(index_dtype), _arr(dtype)])


_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
_PARITY = 0x1BD11BDA


def threefry2x32(n):
    """``(o0, o1)[i] = threefry2x32(k0[i], k1[i], x0[i], x1[i])``, all uint32."""
    M = "u64(4294967295)"
    L = list(_PRO) + [f"    while i < {n}:",
                      "        ka = u64(k0[i])", "        kb = u64(k1[i])",
                      f"        kc = ka ^ kb ^ u64({_PARITY})",
                      f"        y0 = (u64(x0[i]) + ka) & {M}", f"        y1 = (u64(x1[i]) + kb) & {M}"]
    ks = ("ka", "kb", "kc")
    for r in range(20):
        rot = _ROTATIONS[r % 8]
        L += [f"        y0 = (y0 + y1) & {M}",
              f"        y1 = ((y1 << u64({rot})) | (y1 >> u64({32 - rot}))) & {M}",
              "        y1 = y1 ^ y0"]
        if r % 4 == 3:     # key injection after every 4 rounds
            s = (r + 1) // 4
            L += [f"        y0 = (y0 + {ks[s % 3]}) & {M}",
                  f"        y1 = (y1 + {ks[(s + 1) % 3]} + u64({s})) & {M}"]
    L += ["        o0[i] = u32(y0)", "        o1[i] = u32(y1)", "        i += s_"]
    a = _arr(np.uint32)
    return _finish("threefry", ["o0", "o1", "k0", "k1", "x0", "x1"], L, [a] * 6)
