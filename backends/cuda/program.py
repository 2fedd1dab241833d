"""Lowering a fusion plan to a list of device steps, and running them.

Each step is a closure over ``env`` (a list of flat device buffers, one slot per
value) prepared once at compile time:

- a fused group becomes one elementwise kernel for its full-shape outputs plus, per
  distinct set of reduced axes, a reduction kernel (and a second pass when the
  reduced extent is split over several blocks);
- ``dot_general`` becomes copies to (batch, M, K) / (batch, K, N) layouts where needed
  and one tiled GEMM; ``gather`` (clip mode) and ``scatter`` (add/min/max) get kernels;
- anything else runs on the host through the primitive's numpy ``impl``, with the
  copies in and out made explicit (and counted in ``cost_analysis``).
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from jaxpr_ir import Literal
from ..fusion import HostStep, Kernel, View, contiguous_strides
from . import codegen, ops
from .runtime import DeviceArray, alloc, config, kernel, to_device


def _size(shape):
    return int(np.prod(shape, dtype=np.int64))


class Program:
    """The prepared steps of one compiled jaxpr."""

    def __init__(self, closed, plan):
        self.jaxpr = closed.jaxpr
        self.views = plan.views
        self.cfg = config()
        self.slots = {}
        self.sources = []          # KernelSource of every kernel, in launch order
        self.host_prims = []       # names of primitives run on the host
        self.launches = 0
        jaxpr = closed.jaxpr
        for v in list(jaxpr.constvars) + list(jaxpr.invars):
            self._slot(v)
        self.consts = [np.asarray(c, dtype=v.aval.dtype)
                       for c, v in zip(closed.consts, jaxpr.constvars)]
        self._dev_consts = None
        self.steps = []
        for s in plan.steps:
            if isinstance(s, Kernel):
                self._lower_kernel(s)
            else:
                self._lower_other(s)
        self.getters = [self._out_getter(x) for x in jaxpr.outvars]

    # ---------------------------------------------------------------- helpers
    def _slot(self, v):
        if v not in self.slots:
            self.slots[v] = len(self.slots)
        return self.slots[v]

    def _add(self, src, grid, block, args):
        """A launch of ``src``; args: ('slot', i) | ('out', i, size, dtype) | ('int', v)."""
        disp = kernel(src)
        self.sources.append(src)
        self.launches += 1

        def step(env):
            vals = []
            for a in args:
                if a[0] == "slot":
                    vals.append(env[a[1]])
                elif a[0] == "out":
                    env[a[1]] = buf = alloc(a[2], a[3], f"kernel {src.name} output")
                    vals.append(buf)
                else:
                    vals.append(np.int64(a[1]))
            disp[grid, block](*vals)
        self.steps.append(step)

    def _grid(self, n, block):
        return max(1, min(-(-n // block), self.cfg.max_blocks))

    def _view(self, x):
        return self.views.get(x) or View(x, x.aval.shape, contiguous_strides(x.aval.shape), 0)

    def _contiguous_slot(self, x, dtype=None, perm=None):
        """A slot holding ``x`` (optionally transposed by ``perm``, converted to ``dtype``)
        as a contiguous buffer, adding a copy kernel when it is not one already."""
        dtype = np.dtype(dtype or x.aval.dtype)
        v = self._view(x)
        shape, strides = v.shape, v.strides
        if perm is not None:
            shape, strides = tuple(shape[p] for p in perm), tuple(strides[p] for p in perm)
        if isinstance(v.base, Literal):
            val = np.full(shape, v.base.val, dtype)
            slot = self._slot(("const", len(self.slots)))
            self.steps.append(lambda env, s=slot, val=val: env.__setitem__(s, to_device(val)))
            return slot
        if (dtype == x.aval.dtype and not v.offset and _size(shape) == _size(v.base.aval.shape)
                and tuple(strides) == contiguous_strides(shape)):
            return self._slot(v.base)
        slot = self._slot(("tmp", len(self.slots)))
        n = _size(shape)
        src = codegen.copy(shape, strides, v.offset, v.base.aval.dtype, dtype)
        if n == 0:
            self.steps.append(lambda env: env.__setitem__(slot, alloc(0, dtype)))
        else:
            self._add(src, self._grid(n, self.cfg.ew_block), self.cfg.ew_block,
                      [("int", n), ("out", slot, n, dtype), ("slot", self._slot(v.base))])
        return slot

    # ---------------------------------------------------------------- fused groups
    def _lower_kernel(self, k):
        shape = tuple(k.shape)
        n = _size(shape)
        full = [o for o in k.outputs if o not in k.reduced]
        if full:
            if n == 0:
                for o in full:
                    self._empty(o)
            else:
                src, bufs = codegen.fused_elementwise(k, self.views, full)
                args = [("int", n)]
                for b in bufs:
                    args.append(("out", self._slot(b), _size(b.aval.shape), b.aval.dtype)
                                if b in full else ("slot", self._slot(b)))
                self._add(src, self._grid(n, self.cfg.ew_block), self.cfg.ew_block, args)
        groups = {}
        for e in k.eqns:
            if e.outvars[0] in k.reduced and e.outvars[0] in k.outputs:
                groups.setdefault(tuple(e.params["axes"]), []).append(e)
        for axes, reds in groups.items():
            self._lower_reduce(k, axes, reds)

    def _lower_reduce(self, k, axes, reds):
        shape = tuple(k.shape)
        out_size = _size([shape[d] for d in range(len(shape)) if d not in axes])
        red_size = _size([shape[d] for d in axes])
        outs = [e.outvars[0] for e in reds]
        if out_size == 0:
            for o in outs:
                self._empty(o)
            return
        B = self.cfg.red_block
        # enough blocks to fill the device; each chunk at least a few rows of the block
        target = 2 if self.cfg.sim else 4 * self.cfg.sms
        nchunks = max(1, min(-(-target // out_size), -(-red_size // (B * (1 if self.cfg.sim
                                                                        else 8)))))
        chunk = -(-red_size // nchunks) if red_size else 0
        src, bufs = codegen.fused_reduce(k, self.views, reds, B)
        grid = max(1, min(out_size * nchunks, self.cfg.max_blocks))
        final = nchunks == 1
        part = {o: (self._slot(o) if final else self._slot(("part", len(self.slots))))
                for o in outs}
        args = [("int", nchunks), ("int", chunk)]
        for b in bufs:
            if b in part:
                args.append(("out", part[b], out_size * nchunks, b.aval.dtype))
            else:
                args.append(("slot", self._slot(b)))
        self._add(src, grid, B, args)
        if not final:
            src2 = codegen.reduce_rows(reds, out_size, B)
            args = [("int", nchunks)] + [("slot", part[o]) for o in outs] + \
                [("out", self._slot(o), out_size, o.aval.dtype) for o in outs]
            self._add(src2, max(1, min(out_size, self.cfg.max_blocks)), B, args)

    def _empty(self, v):
        slot, dt = self._slot(v), v.aval.dtype
        self.steps.append(lambda env: env.__setitem__(slot, alloc(0, dt)))

    # ---------------------------------------------------------------- other equations
    def _lower_other(self, s: HostStep):
        e = s.eqn
        name = e.primitive.name
        lower = {"dot_general": self._lower_dot, "gather": self._lower_gather,
                 "scatter": self._lower_scatter}.get(name)
        if lower is not None and lower(e):
            return
        self._lower_host(e)

    def _lower_dot(self, e):
        lhs, rhs = e.inputs
        out = e.outvars[0]
        dt = out.aval.dtype
        if dt not in ops.NATIVE_DTYPES or dt == np.bool_ or \
                any(x.aval.dtype not in ops.NATIVE_DTYPES for x in e.inputs):
            return False
        (lc, rc), (lb, rb) = e.params["dimension_numbers"]
        lf = [d for d in range(lhs.aval.ndim) if d not in lc and d not in lb]
        rf = [d for d in range(rhs.aval.ndim) if d not in rc and d not in rb]
        ls, rs = lhs.aval.shape, rhs.aval.shape
        nb = _size([ls[d] for d in lb])
        M, K, N = _size([ls[d] for d in lf]), _size([ls[d] for d in lc]), _size([rs[d] for d in rf])
        if nb * M * N == 0:
            self._empty(out)
            return True
        a = self._contiguous_slot(lhs, dt, tuple(lb) + tuple(lf) + tuple(lc))
        b = self._contiguous_slot(rhs, dt, tuple(rb) + tuple(rc) + tuple(rf))
        tb, r, kt = self.cfg.gemm
        T = tb * r
        grid = (-(-N // T), -(-M // T), max(1, min(nb, 65535)))
        src = codegen.gemm(dt, tb, r, kt)
        self._add(src, grid, (tb, tb), [("int", nb), ("int", M), ("int", N), ("int", K),
                                        ("out", self._slot(out), nb * M * N, dt),
                                        ("slot", a), ("slot", b)])
        return True

    def _lower_gather(self, e):
        x, idx = e.inputs
        k, mode = e.params["num_index_dims"], e.params["index_mode"]
        out = e.outvars[0]
        if (mode != "clip" or k == 0 or 0 in x.aval.shape[:k] or x.aval.dtype not in
                ops.NATIVE_DTYPES or idx.aval.dtype not in ops.NATIVE_DTYPES):
            return False
        n = _size(out.aval.shape)
        if n == 0:
            self._empty(out)
            return True
        xs, ids = self._contiguous_slot(x), self._contiguous_slot(idx)
        batch = _size(idx.aval.shape[:-1])
        src = codegen.gather(x.aval.shape, k, batch, x.aval.dtype, idx.aval.dtype)
        self._add(src, self._grid(n, self.cfg.ew_block), self.cfg.ew_block,
                  [("out", self._slot(out), n, out.aval.dtype), ("slot", xs), ("slot", ids)])
        return True

    def _lower_scatter(self, e):
        x, idx, u = e.inputs
        k, mode, imode = (e.params[p] for p in ("num_index_dims", "mode", "index_mode"))
        dt = x.aval.dtype
        ok = {"add": ("float32", "float64", "int32", "int64"), "min": ("int32", "int64"),
              "max": ("int32", "int64")}.get(mode, ())
        if (dt.name not in ok or k == 0 or 0 in x.aval.shape[:k]
                or idx.aval.dtype not in ops.NATIVE_DTYPES):
            return False
        out = e.outvars[0]
        # the result starts as a fresh copy of x (x itself may still be needed)
        self._slot(out)
        v = self._view(x)
        n = _size(x.aval.shape)
        if n == 0:
            self._empty(out)
            return True
        if isinstance(v.base, Literal):
            val = np.full(x.aval.shape, v.base.val, dt)
            slot = self._slot(out)
            self.steps.append(lambda env: env.__setitem__(slot, to_device(val)))
        else:
            src = codegen.copy(v.shape, v.strides, v.offset, v.base.aval.dtype, dt)
            self._add(src, self._grid(n, self.cfg.ew_block), self.cfg.ew_block,
                      [("int", n), ("out", self._slot(out), n, dt), ("slot", self._slot(v.base))])
        m = _size(u.aval.shape)
        if m:
            us, ids = self._contiguous_slot(u), self._contiguous_slot(idx)
            batch = _size(idx.aval.shape[:-1])
            src = codegen.scatter_atomic(x.aval.shape, k, batch, dt, idx.aval.dtype, mode, imode)
            self._add(src, self._grid(m, self.cfg.ew_block), self.cfg.ew_block,
                      [("slot", self._slot(out)), ("slot", us), ("slot", ids)])
        return True

    def _lower_host(self, e):
        impl, params = e.primitive.impl, e.params
        if impl is None:
            raise NotImplementedError(f"cuda backend: primitive '{e.primitive.name}' has no "
                                      "kernel and no host implementation")
        self.host_prims.append(e.primitive.name)
        getters = [self._host_getter(x) for x in e.inputs]
        outs = [(self._slot(v), v.aval.dtype) for v in e.outvars]
        multi = e.primitive.multiple_results

        def step(env):
            res = impl(*[g(env) for g in getters], **params)
            if not multi:
                res = (res,)
            for (i, dt), r in zip(outs, res):
                env[i] = to_device(r, dt)
        self.steps.append(step)

    def _host_getter(self, x):
        """env -> a host numpy value of ``x`` (a device-to-host copy)."""
        if isinstance(x, Literal):
            val = np.asarray(x.val, dtype=x.aval.dtype)
            return lambda env: val
        v = self._view(x)
        if isinstance(v.base, Literal):
            val, shape, dt = v.base.val, x.aval.shape, x.aval.dtype
            return lambda env: np.full(shape, val, dt)
        i, shape, st, off = self._slot(v.base), v.shape, v.strides, v.offset

        def get(env):
            flat = env[i].copy_to_host()
            if st == contiguous_strides(shape) and not off:
                return flat[:_size(shape)].reshape(shape)
            return np.array(as_strided(flat[off:], shape, tuple(s * flat.itemsize for s in st)))
        return get

    def _out_getter(self, x):
        if isinstance(x, Literal):
            val = np.asarray(x.val, dtype=x.aval.dtype)
            return lambda env: DeviceArray(to_device(val), (), val.dtype)
        shape, dt = x.aval.shape, x.aval.dtype
        slot = self._contiguous_slot(x)
        return lambda env: DeviceArray(env[slot], shape, dt)

    # ---------------------------------------------------------------- running
    def __call__(self, *args):
        jaxpr = self.jaxpr
        if len(args) != len(jaxpr.invars):
            raise TypeError(f"compiled function takes {len(jaxpr.invars)} arguments, "
                            f"got {len(args)}")
        env = [None] * len(self.slots)
        if self._dev_consts is None:
            self._dev_consts = [to_device(c) for c in self.consts]
        nc = len(self.consts)
        env[:nc] = self._dev_consts
        for j, (a, v) in enumerate(zip(args, jaxpr.invars)):
            if getattr(a, "__device_array__", False):
                if a.shape != v.aval.shape or a.dtype != v.aval.dtype:
                    raise TypeError(f"argument {j}: DeviceArray {a.dtype.name}{list(a.shape)} "
                                    f"does not match {v.aval.str_short()}")
                env[nc + j] = a.buf
            else:
                env[nc + j] = to_device(a, v.aval.dtype)
        for step in self.steps:
            step(env)
        return [g(env) for g in self.getters]
