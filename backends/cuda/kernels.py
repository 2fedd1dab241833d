"""Fused Numba-CUDA kernels as Python source (the groups of the fusion planner).

Every kernel is a ``source.KernelSource``: Python text defining one function, built in the
namespace of ``devlib.namespace`` and compiled by ``numba.cuda.jit`` (per argument
types, cached by source). Shapes, strides and loop bounds are baked into the text, so
one text is one shape/dtype signature. All loops are grid-stride loops with int64
indices. Buffers are flat 1-d arrays; a ``fusion.View`` becomes index arithmetic.

- ``fused_elementwise``: one kernel for a fused chain, writing its full-shape outputs.
- ``fused_reduce`` / ``reduce_rows``: a block per (output element, chunk of the
  reduced extent) computes the fused chain and folds it into a register, then a tree
  in shared memory; with several chunks ``reduce_rows`` folds the partials (pass 2).
- ``copy``: materialise a strided view (with a dtype conversion).

Kernels of single equations (GEMM, gather, scatter, pad...) are in ``equation_kernels``.

>>> src = copy((2, 3), (1, 2), 0, "float64", "float32")
>>> src.name.startswith("copy_"), src.argtypes
(True, ('i64', 'float32[::1]', 'float64[::1]'))
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import Literal, Var
from ..fusion import View, contiguous_strides
from .ops import REDUCTIONS, TABLE, const, f2i, tname
from .source import PROLOGUE, arr, finish, index, unravel

__all__ = ["fused_elementwise", "fused_reduce", "reduce_rows", "copy"]


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
        return f"{name}[{index(v.strides, v.offset, dn)}]", False

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
    lines = list(PROLOGUE) + ["    while i < n:"]
    if ch.uses_dims:
        unravel(lines, "        ", "i", shape, [f"d{k}" for k in range(len(shape))])
    lines += body + ["        i += s_"]
    params = ["n"] + [f"o{j}" for j in range(len(outputs))] + [f"g{j}" for j in range(len(ins))]
    argtypes = ["i64"] + [arr(o.aval.dtype) for o in outputs] + [arr(b.aval.dtype) for b in ins]
    return finish("ew", params, lines, argtypes), list(outputs) + ins


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
    unravel(L, "        ", "o_", [shape[d] for d in kept], [dn[d] for d in kept])
    L.append("        while r_ < end_:")
    unravel(L, "            ", "r_", [shape[d] for d in axes], [dn[d] for d in axes])
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
    argtypes = ["i64", "i64"] + [arr(o.aval.dtype) for o in outs] + \
        [arr(b.aval.dtype) for b in ins]
    return finish("red", params, L, argtypes), outs + ins


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
    return finish("red2", params, L, ["i64"] + [arr(d) for d in dts] * 2)


def copy(shape, strides, offset, src_dtype, dst_dtype):
    """``out[i] = dst(src[view index of i])``: materialise a strided view."""
    src_dtype, dst_dtype = np.dtype(src_dtype), np.dtype(dst_dtype)
    dn = [f"d{k}" for k in range(len(shape))]
    L = list(PROLOGUE) + ["    while i < n:"]
    if tuple(strides) == contiguous_strides(shape) and not offset:
        idx = "i"
    else:
        unravel(L, "        ", "i", shape, dn)
        idx = index(strides, offset, dn)
    L.append(f"        x_ = src[{idx}]")
    val = "x_"
    if dst_dtype == src_dtype:
        expr = val        # a plain copy (float16 too, which has no kernel-namespace type)
    elif dst_dtype == np.bool_:
        expr = f"({val} != {const(src_dtype, 0)})"
    elif src_dtype.kind == "f" and dst_dtype.kind in "iu":
        expr = f2i(dst_dtype, val)
    else:
        expr = f"{tname(dst_dtype)}({val})"
    L += [f"        out[i] = {expr}", "        i += s_"]
    return finish("copy", ["n", "out", "src"], L, ["i64", arr(dst_dtype), arr(src_dtype)])
