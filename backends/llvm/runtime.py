"""Running a plan: kernels through one foreign call each, host steps through numpy.

Every value of the jaxpr lives in a slot of a list; each step is a closure reading
and writing slots, prepared once at compile time so a call does no planning work.

>>> import numpy as np
>>> _materialise(np.arange(3.0), (2, 3), (0, 1), 0).tolist()
[[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]
"""
from __future__ import annotations

import ctypes

import numpy as np
from numpy.lib.stride_tricks import as_strided

from jaxpr_ir import Literal
from ..fusion import HostStep, Kernel


def _materialise(base, shape, strides, offset):
    """A (read-only) numpy view of ``base`` with element ``strides`` and ``offset``."""
    flat = np.ascontiguousarray(base).reshape(-1)
    it = flat.itemsize
    return as_strided(flat[offset:], shape, tuple(s * it for s in strides), writeable=False)


class Program:
    """The prepared steps of one compiled jaxpr; ``__call__(*args) -> list of arrays``."""

    def __init__(self, closed, plan, kernel_fns):
        jaxpr = closed.jaxpr
        self.slots = {}
        for v in list(jaxpr.constvars) + list(jaxpr.invars):
            self._slot(v)
        self.n_in = len(jaxpr.invars)
        self.consts = [np.asarray(c, dtype=v.aval.dtype)
                       for c, v in zip(closed.consts, jaxpr.constvars)]
        self.views = plan.views
        self.steps = []
        fns = iter(kernel_fns)
        for s in plan.steps:
            if isinstance(s, Kernel):
                name, addr, buffers = next(fns)
                self.steps.append(self._kernel_step(s, addr, buffers))
            else:
                self.steps.append(self._host_step(s))
        self.getters = [self._getter(x, copy=True) for x in jaxpr.outvars]
        self.size = len(self.slots)

    def _slot(self, v):
        if v not in self.slots:
            self.slots[v] = len(self.slots)
        return self.slots[v]

    def _getter(self, x, copy=False):
        """A function env -> the numpy value of ``x`` (a Literal, a view or a slot)."""
        if isinstance(x, Literal):
            val = np.asarray(x.val, dtype=x.aval.dtype)
            return lambda env: val.copy()
        view = self.views.get(x)
        if view is not None:
            shape, dtype = x.aval.shape, x.aval.dtype
            if isinstance(view.base, Literal):
                val = view.base.val
                return lambda env: np.full(shape, val, dtype)
            i = self._slot(view.base)
            st, off = view.strides, view.offset
            if copy:
                return lambda env: np.array(_materialise(env[i], shape, st, off))
            return lambda env: _materialise(env[i], shape, st, off)
        i = self._slot(x)
        return lambda env: env[i]

    def _kernel_step(self, k, addr, buffers):
        fn = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * len(buffers))(addr)
        outs = set(k.outputs)
        plan = []   # (slot, None) for inputs, (slot, (shape, dtype)) for outputs
        for b in buffers:
            plan.append((self._slot(b), (b.aval.shape, b.aval.dtype) if b in outs else None))

        def step(env, fn=fn, plan=plan):
            ptrs = []
            for i, out in plan:
                if out is None:
                    a = env[i]
                    if not (type(a) is np.ndarray and a.flags.c_contiguous):
                        a = env[i] = np.ascontiguousarray(a)
                else:
                    a = env[i] = np.empty(out[0], out[1])
                ptrs.append(a.ctypes.data)
            fn(*ptrs)
        step.fn = fn
        return step

    def _host_step(self, s: HostStep):
        eqn = s.eqn
        getters = [self._getter(x) for x in eqn.inputs]
        outs = [(self._slot(v), v.aval.dtype) for v in eqn.outvars]
        impl, params, multi = eqn.primitive.impl, eqn.params, eqn.primitive.multiple_results
        if impl is None:
            raise NotImplementedError(f"llvm backend: primitive '{eqn.primitive.name}' has "
                                      "neither code generation nor an implementation")

        def step(env):
            res = impl(*[g(env) for g in getters], **params)
            if not multi:
                res = (res,)
            for (i, dt), r in zip(outs, res):
                env[i] = np.asarray(r, dtype=dt)
        return step

    def __call__(self, *args):
        if len(args) != self.n_in:
            raise TypeError(f"compiled function takes {self.n_in} arguments, got {len(args)}")
        env = [None] * self.size
        env[:len(self.consts)] = self.consts
        nc = len(self.consts)
        for j, a in enumerate(args):
            env[nc + j] = a if type(a) is np.ndarray else np.asarray(a)
        for step in self.steps:
            step(env)
        return [g(env) for g in self.getters]
