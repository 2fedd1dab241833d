"""Numba-CUDA kernels as Python source.

Every kernel is a ``KernelSource``: Python text defining one function, built in the
namespace of ``devlib.namespace`` and compiled by ``numba.cuda.jit`` (per argument
types, cached by source). Shapes, strides and loop bounds are baked into the text, so
one text is one shape/dtype signature. All loops are grid-stride loops with int64
indices. Buffers are flat 1-d arrays; a ``fusion.View`` becomes index arithmetic.

- ``fused_elementwise``: one kernel for a fused chain, writing its full-shape outputs.
- ``fused_reduce`` / ``reduce_rows``: a block per (output element, chunk of the
  reduced extent) computes the fused chain and folds it into a register, then a tree
  in shared memory; with several chunks ``reduce_rows`` folds the partials (pass 2).
- ``copy``: materialise a strided view (with a dtype conversion).
- ``gemm``: a batched, tiled shared-memory GEMM; each thread owns R x R outputs.
- ``gather`` (clamped indices) and ``scatter_atomic`` (out-of-range rows dropped or
  clamped; add/min/max through atomics).

>>> src = copy((2, 3), (1, 2), 0, "float64", "float32")
>>> src.name.startswith("copy_"), src.argtypes
(True, ('i64', 'float32[::1]', 'float64[::1]'))
"""
from __future__ import annotations

import dataclasses
import hashlib

import numpy as np

from jaxpr_ir import Literal, Var
from ..fusion import View, contiguous_strides
from .ops import REDUCTIONS, TABLE, const, f2i, tname

__all__ = ["KernelSource", "fused_elementwise", "fused_reduce", "reduce_rows", "copy", "gemm",
           "gather", "scatter_atomic"]


@dataclasses.dataclass(frozen=True)
class KernelSource:
    """One kernel: ``source`` defines ``name``; ``argtypes`` are ``'i64'`` or
    ``'<dtype>[::1]'`` (a flat C-contiguous array), the signature it is compiled for."""
    name: str
    source: str
    argtypes: tuple


def _finish(kind, params, body, argtypes):
    text = f"def KNAME({', '.join(params)}):\n" + "\n".join(body) + "\n"
    h = hashlib.sha1((text + repr(argtypes)).encode()).hexdigest()[:10]
    name = f"{kind}_{h}"
    return KernelSource(name, text.replace("KNAME", name, 1), tuple(argtypes))


def _arr(dtype):
    return f"{np.dtype(dtype).name}[::1]"


def _decompose(lines, ind, flat, dims, names):
    """Lines setting ``names[k]`` (index of loop dim k) from the flat index ``flat``."""
    live = [k for k in range(len(dims)) if dims[k] != 1]
    for k in range(len(dims)):
        if dims[k] == 1:
            lines.append(f"{ind}{names[k]} = i64(0)")
    if not live:
        return
    lines.append(f"{ind}q_ = {flat}")
    for k in reversed(live[1:]):
        lines.append(f"{ind}{names[k]} = q_ % {dims[k]}")
        lines.append(f"{ind}q_ = q_ // {dims[k]}")
    lines.append(f"{ind}{names[live[0]]} = q_")


def _index(view_strides, offset, dnames):
    terms = [f"{dn} * {s}" if s != 1 else dn for dn, s in zip(dnames, view_strides) if s != 0]
    if offset:
        terms.append(str(offset))
    return " + ".join(terms) or "0"


class _Chain:
    """Emits the equations of a fused group as assignments, reading kernel inputs
    through their views; ``buffers`` collects the base Vars read (kernel arguments)."""

    def __init__(self, views, shape, buffers):
        self.views, self.shape, self.buffers = views, tuple(shape), buffers
        self.uses_dims = False

    def buf(self, var):
        if var not in self.buffers:
            self.buffers.append(var)
        return f"g{self.buffers.index(var)}"

    def read(self, x, flat):
        """(source expression, is_constant) reading kernel input ``x``."""
        if isinstance(x, Literal):
            return const(x.aval.dtype, x.val), True
        v = self.views.get(x) or View(x, x.aval.shape, contiguous_strides(x.aval.shape), 0)
        if isinstance(v.base, Literal):
            return const(x.aval.dtype, v.base.val), True
        name = self.buf(v.base)
        if flat is not None and v.contiguous and tuple(v.shape) == self.shape:
            return f"{name}[{flat}]", False
        self.uses_dims = True
        dn = [f"d{k}" for k in range(len(self.shape))]
        return f"{name}[{_index(v.strides, v.offset, dn)}]", False

    def emit(self, lines, ind, eqns, wanted, flat):
        """Assign every value ``wanted`` needs; returns {Var: source name}."""
        need, keep = set(wanted), []
        for e in reversed(eqns):
            if any(o in need for o in e.outvars):
                keep.append(e)
                need.update(x for x in e.inputs if isinstance(x, Var))
        keep.reverse()
        names = {}

        def val(x):
            if isinstance(x, Var) and x in names:
                return names[x]
            s, is_const = self.read(x, flat)
            if is_const:
                return s
            nm = f"x{len(names)}"
            lines.append(f"{ind}{nm} = {s}")
            names[x] = nm
            return nm

        for e in keep:
            out = e.outvars[0]
            if e.primitive.name == "iota":
                self.uses_dims = True
                expr = f"d{e.params['dimension']}"
            else:
                expr = TABLE[e.primitive.name](e, *[val(x) for x in e.inputs])
            nm = f"v{len(names)}"
            lines.append(f"{ind}{nm} = {tname(out.aval.dtype)}({expr})")
            names[out] = nm
        for w in wanted:
            if w not in names:
                names[w] = val(w)
        return names


_PRO = ["    i = i64(cuda.blockIdx.x) * i64(cuda.blockDim.x) + i64(cuda.threadIdx.x)",
        "    s_ = i64(cuda.gridDim.x) * i64(cuda.blockDim.x)"]


def fused_elementwise(kernel, views, outputs):
    """A kernel computing ``outputs`` (full loop shape) of a fused group.

    Returns (KernelSource, [output Vars, then input base Vars] in argument order)."""
    shape = tuple(kernel.shape)
    ins = []
    ch = _Chain(views, shape, ins)
    body = []
    names = ch.emit(body, "        ", [e for e in kernel.eqns if e.outvars[0] not in
                                       kernel.reduced], outputs, "i")
    for j, o in enumerate(outputs):
        body.append(f"        o{j}[i] = {names[o]}")
    lines = list(_PRO) + ["    while i < n:"]
    if ch.uses_dims:
        _decompose(lines, "        ", "i", shape, [f"d{k}" for k in range(len(shape))])
    lines += body + ["        i += s_"]
    params = ["n"] + [f"o{j}" for j in range(len(outputs))] + [f"g{j}" for j in range(len(ins))]
    argtypes = ["i64"] + [_arr(o.aval.dtype) for o in outputs] + [_arr(b.aval.dtype) for b in ins]
    return _finish("ew", params, lines, argtypes), list(outputs) + ins


def _tree(lines, ind, nred, combines, types, block):
    """Shared-memory tree fold of ``a<j>`` over the block; thread 0 holds the result."""
    for j in range(nred):
        lines.append(f"{ind}sh{j}[tid] = a{j}")
    lines.append(f"{ind}cuda.syncthreads()")
    lines.append(f"{ind}w_ = {block // 2}")
    lines.append(f"{ind}while w_ > 0:")
    lines.append(f"{ind}    if tid < w_:")
    for j in range(nred):
        c = combines[j].format(a=f"sh{j}[tid]", b=f"sh{j}[tid + w_]")
        lines.append(f"{ind}        sh{j}[tid] = {types[j]}({c})")
    lines.append(f"{ind}    cuda.syncthreads()")
    lines.append(f"{ind}    w_ //= 2")


def _red_info(eqns):
    idents, combines, types = [], [], []
    for e in eqns:
        ident, comb, _ = REDUCTIONS[e.primitive.name]
        dt = e.outvars[0].aval.dtype
        idents.append(ident(dt))
        combines.append(comb)
        types.append(tname(dt))
    return idents, combines, types


def fused_reduce(kernel, views, reds, block):
    """Pass 1 for the reductions ``reds`` (same axes) of a fused group: block b handles
    output element ``b // nchunks`` over chunk ``b % nchunks`` of the reduced extent and
    writes ``p<j>[b]`` (the final output when nchunks == 1).

    Returns (KernelSource, [partial/output Vars, then input base Vars])."""
    shape = tuple(kernel.shape)
    axes = tuple(reds[0].params["axes"])
    kept = [d for d in range(len(shape)) if d not in axes]
    out_size = int(np.prod([shape[d] for d in kept], dtype=np.int64))
    red_size = int(np.prod([shape[d] for d in axes], dtype=np.int64))
    idents, combines, types = _red_info(reds)
    ins = []
    ch = _Chain(views, shape, ins)
    dn = [f"d{k}" for k in range(len(shape))]
    L = [f"    sh{j} = cuda.shared.array({block}, {t})" for j, t in enumerate(types)]
    L += ["    tid = i64(cuda.threadIdx.x)",
          "    nblk = i64(" + str(out_size) + ") * nchunks",
          "    blk = i64(cuda.blockIdx.x)",
          "    while blk < nblk:",
          "        o_ = blk // nchunks",
          "        c_ = blk - o_ * nchunks",
          "        r_ = c_ * chunk + tid",
          f"        end_ = min(i64({red_size}), c_ * chunk + chunk)"]
    L += [f"        a{j} = {idents[j]}" for j in range(len(reds))]
    _decompose(L, "        ", "o_", [shape[d] for d in kept], [dn[d] for d in kept])
    L.append("        while r_ < end_:")
    _decompose(L, "            ", "r_", [shape[d] for d in axes], [dn[d] for d in axes])
    names = ch.emit(L, "            ", [e for e in kernel.eqns if e.outvars[0] not in
                                        kernel.reduced], [e.inputs[0] for e in reds], None)
    for j, e in enumerate(reds):
        c = combines[j].format(a=f"a{j}", b=f"{types[j]}({names[e.inputs[0]]})")
        L.append(f"            a{j} = {types[j]}({c})")
    L.append(f"            r_ += {block}")
    _tree(L, "        ", len(reds), combines, types, block)
    L.append("        if tid == 0:")
    L += [f"            p{j}[blk] = sh{j}[0]" for j in range(len(reds))]
    L += ["        cuda.syncthreads()", "        blk += i64(cuda.gridDim.x)"]
    outs = [e.outvars[0] for e in reds]
    params = ["nchunks", "chunk"] + [f"p{j}" for j in range(len(reds))] + \
        [f"g{j}" for j in range(len(ins))]
    argtypes = ["i64", "i64"] + [_arr(o.aval.dtype) for o in outs] + \
        [_arr(b.aval.dtype) for b in ins]
    return _finish("red", params, L, argtypes), outs + ins


def reduce_rows(reds, out_size, block):
    """Pass 2: ``out<j>[o] = fold(p<j>[o * nchunks : (o + 1) * nchunks])``."""
    idents, combines, types = _red_info(reds)
    n = len(reds)
    L = [f"    sh{j} = cuda.shared.array({block}, {t})" for j, t in enumerate(types)]
    L += ["    tid = i64(cuda.threadIdx.x)", "    blk = i64(cuda.blockIdx.x)",
          f"    while blk < {out_size}:"]
    L += [f"        a{j} = {idents[j]}" for j in range(n)]
    L += ["        c_ = tid", "        while c_ < nchunks:"]
    for j in range(n):
        c = combines[j].format(a=f"a{j}", b=f"p{j}[blk * nchunks + c_]")
        L.append(f"            a{j} = {types[j]}({c})")
    L.append(f"            c_ += {block}")
    _tree(L, "        ", n, combines, types, block)
    L.append("        if tid == 0:")
    L += [f"            o{j}[blk] = sh{j}[0]" for j in range(n)]
    L += ["        cuda.syncthreads()", "        blk += i64(cuda.gridDim.x)"]
    dts = [e.outvars[0].aval.dtype for e in reds]
    params = ["nchunks"] + [f"p{j}" for j in range(n)] + [f"o{j}" for j in range(n)]
    return _finish("red2", params, L, ["i64"] + [_arr(d) for d in dts] * 2)


def copy(shape, strides, offset, src_dtype, dst_dtype):
    """``out[i] = dst(src[view index of i])``: materialise a strided view."""
    src_dtype, dst_dtype = np.dtype(src_dtype), np.dtype(dst_dtype)
    dn = [f"d{k}" for k in range(len(shape))]
    L = list(_PRO) + ["    while i < n:"]
    if tuple(strides) == contiguous_strides(shape) and not offset:
        idx = "i"
    else:
        _decompose(L, "        ", "i", shape, dn)
        idx = _index(strides, offset, dn)
    L.append(f"        x_ = src[{idx}]")
    val = "x_"
    if dst_dtype == np.bool_ and src_dtype != np.bool_:
        expr = f"({val} != {const(src_dtype, 0)})"
    elif src_dtype.kind == "f" and dst_dtype.kind in "iu":
        expr = f2i(dst_dtype, val)
    else:
        expr = f"{tname(dst_dtype)}({val})"
    L += [f"        out[i] = {expr}", "        i += s_"]
    return _finish("copy", ["n", "out", "src"], L, ["i64", _arr(dst_dtype), _arr(src_dtype)])


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
    a = _arr(dtype)
    return _finish("gemm", ["nb", "M", "N", "K", "C", "A", "B"], L,
                   ["i64"] * 4 + [a, a, a])


def gather(x_shape, k, batch_size, dtype, idx_dtype):
    """``out[b, r] = x[clip(idx[b, 0]), ..., clip(idx[b, k-1]), r]`` (x, idx contiguous)."""
    rest = int(np.prod(x_shape[k:], dtype=np.int64))
    xs = contiguous_strides(x_shape)
    L = list(_PRO) + [f"    while i < {batch_size * rest}:",
                      f"        b_ = i // {rest}", f"        off = i - b_ * {rest}"]
    for j in range(k):
        L += [f"        t_ = i64(idx[b_ * {k} + {j}])",
              f"        t_ = min(max(t_, i64(0)), i64({x_shape[j] - 1}))",
              f"        off += t_ * {xs[j]}"]
    L += ["        out[i] = x[off]", "        i += s_"]
    return _finish("gather", ["out", "x", "idx"], L, [_arr(dtype), _arr(dtype), _arr(idx_dtype)])


def scatter_atomic(x_shape, k, batch_size, dtype, idx_dtype, mode, index_mode):
    """``out[idx[b], r] (op)= u[b, r]`` with atomics; rows out of range are dropped
    (``index_mode='drop'``) or clamped (``'clip'``). ``out`` already holds x."""
    rest = int(np.prod(x_shape[k:], dtype=np.int64))
    xs = contiguous_strides(x_shape)
    L = list(_PRO) + [f"    while i < {batch_size * rest}:",
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
    return _finish("scatter", ["out", "u", "idx"], L, [_arr(dtype), _arr(dtype), _arr(idx_dtype)])
