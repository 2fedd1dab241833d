"""Kernels of single equations, for ``equations`` (Python source, like ``kernels``).

Each builder returns a ``source.KernelSource`` over flat, C-contiguous buffers; shapes
are baked into the text. All are grid-stride loops with int64 indices:

- ``gemm``: a batched, tiled shared-memory GEMM; each thread owns R x R outputs.
- ``gather`` (clamped indices) and ``scatter_atomic`` (out-of-range rows dropped or
  clamped; add/min/max through atomics).
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
from .ops import REDUCTIONS, const, tname
from .source import PROLOGUE, arr, finish, unravel

__all__ = ["gemm", "gather", "scatter_atomic", "pad", "concatenate", "dynamic_slice",
           "dynamic_update_slice", "cumulative", "arg_extreme", "threefry2x32", "CUMULATIVE"]


def _size(shape):
    return int(np.prod(shape, dtype=np.int64))


def _loop(shape, ind="        "):
    """Prologue of a grid-stride loop over ``shape`` setting ``o<k>`` per dimension."""
    L = list(PROLOGUE) + [f"    while i < {_size(shape)}:"]
    unravel(L, ind, "i", shape, [f"o{k}" for k in range(len(shape))])
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
    a = arr(dtype)
    return finish("pad", ["out", "x", "pv"], L, [a, a, a])


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
    a = arr(dtype)
    return finish("concat", ["out"] + [f"g{j}" for j in range(len(shapes))], L,
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
    return finish("dslice", ["out", "x"] + ks, L,
                   [arr(dtype), arr(dtype)] + [arr(d) for d in start_dtypes])


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
    a = arr(dtype)
    return finish("dus", ["out", "x", "u"] + ks, L, [a, a, a] + [arr(d) for d in start_dtypes])


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
    L = list(PROLOGUE) + [f"    while i < {outer * inner}:",
                      f"        b_ = (i // {inner}) * {n * inner} + (i % {inner})",
                      f"        acc = {ident(np.dtype(dtype))}",
                      "        k_ = i64(0)",
                      f"        while k_ < {n}:",
                      f"            p_ = b_ + {pos} * {inner}",
                      f"            acc = {t}({comb.format(a='acc', b='x[p_]')})",
                      "            out[p_] = acc",
                      "            k_ += 1",
                      "        i += s_"]
    a = arr(dtype)
    return finish("cum", ["out", "x"], L, [a, a])


def arg_extreme(shape, axis, dtype, index_dtype, largest):
    """``out`` = index of the first max (min) along ``axis``; the first nan wins."""
    outer, n, inner = _rows(shape, axis)
    op = ">" if largest else "<"
    L = list(PROLOGUE) + [f"    while i < {outer * inner}:",
                      f"        b_ = (i // {inner}) * {n * inner} + (i % {inner})",
                      "        best = x[b_]", "        bi = i64(0)", "        k_ = i64(1)",
                      f"        while k_ < {n}:",
                      f"            v_ = x[b_ + k_ * {inner}]",
                      f"            if best == best and (v_ != v_ or v_ {op} best):",
                      "                best = v_", "                bi = k_",
                      "            k_ += 1",
                      f"        out[i] = {tname(index_dtype)}(bi)", "        i += s_"]
    return finish("arg", ["out", "x"], L, [arr(index_dtype), arr(dtype)])


_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
_PARITY = 0x1BD11BDA


def threefry2x32(n):
    """``(o0, o1)[i] = threefry2x32(k0[i], k1[i], x0[i], x1[i])``, all uint32."""
    M = "u64(4294967295)"
    L = list(PROLOGUE) + [f"    while i < {n}:",
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
    a = arr(np.uint32)
    return finish("threefry", ["o0", "o1", "k0", "k1", "x0", "x1"], L, [a] * 6)


def gemm(dtype, tb, r, kt):
    """``C[b] = A[b] @ B[b]`` for contiguous A (nb, M, K), B (nb, K, N), C (nb, M, N).

    Blocks of tb x tb threads own a (tb*r) x (tb*r) tile of C; thread (ty, tx) owns rows
    ``ty + tb*i`` and columns ``tx + tb*j`` (i, j < r), accumulated in registers while
    tiles of A and B (kt deep) are staged through shared memory."""
    T = tb * r
    t = tname(dtype)
    zero = const(dtype, 0)
    L = [f"    As = cuda.shared.array(({T}, {kt}), {t})",
         f"    Bs = cuda.shared.array(({kt}, {T}), {t})",
         "    tx = i64(cuda.threadIdx.x)", "    ty = i64(cuda.threadIdx.y)",
         f"    tid = ty * {tb} + tx",
         f"    row0 = i64(cuda.blockIdx.y) * {T}", f"    col0 = i64(cuda.blockIdx.x) * {T}",
         "    bz = i64(cuda.blockIdx.z)",
         "    while bz < nb:",
         "        aoff = bz * M * K", "        boff = bz * K * N", "        coff = bz * M * N"]
    L += [f"        c{i}_{j} = {zero}" for i in range(r) for j in range(r)]
    L += ["        k0 = i64(0)", "        while k0 < K:",
          "            e = tid",
          f"            while e < {T * kt}:",
          f"                rr = e // {kt}", f"                kk = e - rr * {kt}",
          "                gr = row0 + rr", "                gk = k0 + kk",
          "                if gr < M and gk < K:",
          "                    As[rr, kk] = A[aoff + gr * K + gk]",
          "                else:", f"                    As[rr, kk] = {zero}",
          f"                e += {tb * tb}",
          "            e = tid",
          f"            while e < {T * kt}:",
          f"                kk = e // {T}", f"                cc = e - kk * {T}",
          "                gk = k0 + kk", "                gc = col0 + cc",
          "                if gk < K and gc < N:",
          "                    Bs[kk, cc] = B[boff + gk * N + gc]",
          "                else:", f"                    Bs[kk, cc] = {zero}",
          f"                e += {tb * tb}",
          "            cuda.syncthreads()",
          f"            for kk in range({kt}):"]
    L += [f"                a{i} = As[ty + {tb * i}, kk]" for i in range(r)]
    L += [f"                b{j} = Bs[kk, tx + {tb * j}]" for j in range(r)]
    L += [f"                c{i}_{j} += a{i} * b{j}" for i in range(r) for j in range(r)]
    L += ["            cuda.syncthreads()", f"            k0 += {kt}"]
    for i in range(r):
        L.append(f"        gr = row0 + ty + {tb * i}")
        L.append("        if gr < M:")
        for j in range(r):
            L.append(f"            gc = col0 + tx + {tb * j}")
            L.append("            if gc < N:")
            L.append(f"                C[coff + gr * N + gc] = c{i}_{j}")
    L.append("        bz += i64(cuda.gridDim.z)")
    a = arr(dtype)
    return finish("gemm", ["nb", "M", "N", "K", "C", "A", "B"], L,
                   ["i64"] * 4 + [a, a, a])


def gather(x_shape, k, batch_size, dtype, idx_dtype):
    """``out[b, r] = x[clip(idx[b, 0]), ..., clip(idx[b, k-1]), r]`` (x, idx contiguous)."""
    rest = int(np.prod(x_shape[k:], dtype=np.int64))
    xs = contiguous_strides(x_shape)
    L = list(PROLOGUE) + [f"    while i < {batch_size * rest}:",
                      f"        b_ = i // {rest}", f"        off = i - b_ * {rest}"]
    for j in range(k):
        L += [f"        t_ = i64(idx[b_ * {k} + {j}])",
              f"        t_ = min(max(t_, i64(0)), i64({x_shape[j] - 1}))",
              f"        off += t_ * {xs[j]}"]
    L += ["        out[i] = x[off]", "        i += s_"]
    return finish("gather", ["out", "x", "idx"], L, [arr(dtype), arr(dtype), arr(idx_dtype)])


def scatter_atomic(x_shape, k, batch_size, dtype, idx_dtype, mode, index_mode):
    """``out[idx[b], r] (op)= u[b, r]`` with atomics; rows out of range are dropped
    (``index_mode='drop'``) or clamped (``'clip'``). ``out`` already holds x."""
    rest = int(np.prod(x_shape[k:], dtype=np.int64))
    xs = contiguous_strides(x_shape)
    L = list(PROLOGUE) + [f"    while i < {batch_size * rest}:",
                      f"        b_ = i // {rest}", f"        off = i - b_ * {rest}",
                      "        ok = True"]
    for j in range(k):
        L.append(f"        t_ = i64(idx[b_ * {k} + {j}])")
        if index_mode == "clip":
            L.append(f"        t_ = min(max(t_, i64(0)), i64({x_shape[j] - 1}))")
        else:
            L.append(f"        if t_ < 0 or t_ >= {x_shape[j]}:")
            L.append("            ok = False")
        L.append(f"        off += t_ * {xs[j]}")
    L += ["        if ok:", f"            cuda.atomic.{mode}(out, off, u[i])", "        i += s_"]
    return finish("scatter", ["out", "u", "idx"], L, [arr(dtype), arr(dtype), arr(idx_dtype)])
