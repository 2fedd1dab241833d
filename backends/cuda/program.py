"""Lowering a fusion plan to a list of device steps, and running them.

Each step is a closure over ``env`` (a list of flat device buffers, one slot per
value) prepared once at compile time:

- a fused group becomes one elementwise kernel for its full-shape outputs plus, per
  distinct set of reduced axes, a reduction kernel (and a second pass when the
  reduced extent is split over several blocks);
- other equations go through ``equations.LOWER`` (GEMM, gather/scatter, pad,
  concatenate, dynamic slices, cumulative scans, argmax, threefry...) and
  ``control.LOWER`` (``cond``/``while``/``scan`` around device sub-programs);
- anything else runs on the host through the primitive's numpy ``impl``, with the
  copies in and out made explicit (and counted in ``cost_analysis``).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
from numpy.lib.stride_tricks import as_strided

from jaxpr_ir import ClosedJaxpr, Literal
from .. import fusion
from ..decompose import decompose
from ..fusion import HostStep, Kernel, View, contiguous_strides
from . import control, equations, kernels, ops
from .runtime import DeviceArray, alloc, config, kernel, to_device

_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)


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
        self.control = []          # names of control-flow primitives driven from the host
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
        self.out_slots = [self._out_slot(x) for x in jaxpr.outvars]

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
            slot = self._slot(("const", len(self.slots)))
            self._const_step(slot, np.full(shape, v.base.val, dtype))
            return slot
        if (dtype == x.aval.dtype and not v.offset and _size(shape) == _size(v.base.aval.shape)
                and tuple(strides) == contiguous_strides(shape)):
            return self._slot(v.base)
        slot = self._slot(("tmp", len(self.slots)))
        n = _size(shape)
        if _BFLOAT16 in (dtype, np.dtype(v.base.aval.dtype)):
            self._host_copy(x, perm, dtype, slot)   # Numba has no bfloat16 type for a kernel
            return slot
        src = kernels.copy(shape, strides, v.offset, v.base.aval.dtype, dtype)
        if n == 0:
            self.steps.append(lambda env: env.__setitem__(slot, alloc(0, dtype)))
        else:
            self._add(src, self._grid(n, self.cfg.ew_block), self.cfg.ew_block,
                      [("int", n), ("out", slot, n, dtype), ("slot", self._slot(v.base))])
        return slot

    def _host_copy(self, x, perm, dtype, slot):
        """``x`` (transposed by ``perm``, converted to ``dtype``) materialised on the host,
        as bfloat16 equations run (see ``_lower_host``)."""
        get = self._host_getter(x)

        def step(env):
            val = get(env)
            val = val if perm is None else np.transpose(val, perm)
            env[slot] = to_device(val, dtype)
        self.steps.append(step)

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
                src, bufs = kernels.fused_elementwise(k, self.views, full)
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
        src, bufs = kernels.fused_reduce(k, self.views, reds, B)
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
            src2 = kernels.reduce_rows(reds, out_size, B)
            args = [("int", nchunks)] + [("slot", part[o]) for o in outs] + \
                [("out", self._slot(o), out_size, o.aval.dtype) for o in outs]
            self._add(src2, max(1, min(out_size, self.cfg.max_blocks)), B, args)

    def _const_step(self, slot, val):
        """Put the host constant ``val`` in ``slot`` (copied to the device once: device
        buffers are never written after they are made, so it can be shared)."""
        cache = []

        def step(env):
            if not cache:
                cache.append(to_device(val))
            env[slot] = cache[0]
        self.steps.append(step)

    def _empty(self, v):
        slot, dt = self._slot(v), v.aval.dtype
        self.steps.append(lambda env: env.__setitem__(slot, alloc(0, dt)))

    # ---------------------------------------------------------------- other equations
    def _lower_other(self, s: HostStep):
        e = s.eqn
        name = e.primitive.name
        lower = equations.LOWER.get(name) or control.LOWER.get(name)
        if lower is not None and lower(self, e):
            if name in control.LOWER:
                self.control.append(name)
            return
        self._lower_host(e)

    def sub(self, closed, what):
        """A sub-program for the const-free jaxpr ``closed`` (a branch or loop body) whose
        kernels and host steps count as this program's."""
        if closed.consts:
            raise NotImplementedError(f"cuda backend: a {what} with consts")
        prog = Program(*planned(closed))
        self.sources.extend(prog.sources)
        self.host_prims.extend(prog.host_prims)
        self.control.extend(prog.control)
        self.launches += prog.launches
        return prog

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
            with np.errstate(all="ignore"):   # IEEE results (inf, nan), as the kernels'
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

    def _out_slot(self, x):
        if isinstance(x, Literal):
            slot = self._slot(("const", len(self.slots)))
            self._const_step(slot, np.asarray(x.val, dtype=x.aval.dtype))
            return slot
        return self._contiguous_slot(x)

    # ---------------------------------------------------------------- running
    def run_buffers(self, bufs):
        """Run on flat device buffers (one per invar, of its size and dtype); returns the
        output buffers. Control flow calls its sub-programs this way."""
        env = [None] * len(self.slots)
        if self._dev_consts is None:
            self._dev_consts = [to_device(c) for c in self.consts]
        nc = len(self.consts)
        env[:nc] = self._dev_consts
        env[nc:nc + len(bufs)] = bufs
        for step in self.steps:
            step(env)
        return [env[s] for s in self.out_slots]

    def __call__(self, *args):
        jaxpr = self.jaxpr
        if len(args) != len(jaxpr.invars):
            raise TypeError(f"compiled function takes {len(jaxpr.invars)} arguments, "
                            f"got {len(args)}")
        bufs = []
        for j, (a, v) in enumerate(zip(args, jaxpr.invars)):
            if getattr(a, "__device_array__", False):
                if a.shape != v.aval.shape or a.dtype != v.aval.dtype:
                    raise TypeError(f"argument {j}: DeviceArray {a.dtype.name}{list(a.shape)} "
                                    f"does not match {v.aval.str_short()}")
                bufs.append(a.buf)
            else:
                bufs.append(to_device(a, v.aval.dtype))
        return [DeviceArray(buf, v.aval.shape, v.aval.dtype)
                for buf, v in zip(self.run_buffers(bufs), jaxpr.outvars)]


def planned(closed):
    """(``closed`` with its composites decomposed, its fusion plan): the decomposition
    (``backends.decompose``) comes before planning so that the pieces fuse.

    >>> import numpy as np, functrans as ft
    >>> closed, plan = planned(ft.make_jaxpr(ft.numpy.sign)(np.ones(4)))
    >>> [e.primitive.name for e in closed.jaxpr.eqns if e.primitive.name != "broadcast_in_dim"]
    ['gt', 'lt', 'select_n', 'select_n']
    >>> len(plan.steps)
    1
    """
    jaxpr = decompose(closed.jaxpr, ops.TABLE, ops.NATIVE_DTYPES)
    if jaxpr is not closed.jaxpr:
        closed = ClosedJaxpr(jaxpr, closed.consts)
    return closed, fusion.plan(closed.jaxpr, ops.classify)
