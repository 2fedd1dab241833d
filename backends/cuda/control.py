"""``cond``, ``while`` and ``scan`` on the device, driven from the host.

Each sub-jaxpr (a branch, the loop predicate, the loop body) is compiled once into
its own ``Program`` (fused kernels, planned by the shared planner); the host then
runs the control flow around them. Carries, operands and stacked outputs stay in
device memory the whole time: per iteration the only device-to-host copy is the
predicate (``while``) or the branch index (``cond``), one scalar. Device buffers are
never written after the step producing them, so sub-programs may pass inputs through
as outputs and iterations may share buffers freely.

- ``cond``: read the index, clamp it to the branches, run that branch.
- ``while``: run the predicate program, copy its boolean back, run the body.
- ``scan``: iteration ``i`` reads row ``i`` of each xs buffer as a zero-copy slice and
  copies the body's per-iteration outputs into row ``i`` of the stacked ys (a device
  to device copy); ``reverse`` walks the rows from the end.
"""
from __future__ import annotations

import numpy as np

from .runtime import alloc

__all__ = ["LOWER"]


def _size(shape):
    return int(np.prod(shape, dtype=np.int64))


def _host_driven(prog, e, run):
    """Append a step calling ``run(buffers) -> result buffers`` on the device buffers of
    ``e``'s inputs (made contiguous) and binding the results to ``e``'s outputs."""
    ins = [prog._contiguous_slot(x) for x in e.inputs]
    outs = [prog._slot(v) for v in e.outvars]

    def step(env):
        for s, r in zip(outs, run([env[s] for s in ins])):
            env[s] = r
    prog.steps.append(step)
    return True


def lower_cond(prog, e):
    branches = [prog.sub(b, f"cond branch {k}") for k, b in enumerate(e.params["branches"])]
    last = len(branches) - 1

    def run(vals):
        # the index: one scalar copied back to the host, clamped to the branches
        k = min(max(int(vals[0].copy_to_host()[0]), 0), last)
        return branches[k].run_buffers(vals[1:])
    return _host_driven(prog, e, run)


def lower_while(prog, e):
    p = e.params
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    cond = prog.sub(p["cond_jaxpr"], "while predicate")
    body = prog.sub(p["body_jaxpr"], "while body")

    def run(vals):
        cc, bc, carry = vals[:nc], vals[nc:nc + nb], vals[nc + nb:]
        while cond.run_buffers(cc + carry)[0].copy_to_host()[0]:
            carry = body.run_buffers(bc + carry)
        return carry
    return _host_driven(prog, e, run)


def lower_scan(prog, e):
    p = e.params
    nc, nk, length, reverse = p["num_consts"], p["num_carry"], p["length"], p["reverse"]
    body = prog.sub(p["jaxpr"], "scan body")
    x_rows = [_size(x.aval.shape[1:]) for x in e.inputs[nc + nk:]]
    y_avals = [v.aval for v in e.outvars[nk:]]
    y_rows = [_size(a.shape[1:]) for a in y_avals]

    def run(vals):
        consts, carry, xs = vals[:nc], vals[nc:nc + nk], vals[nc + nk:]
        ys = [alloc(_size(a.shape), a.dtype, "scan output") for a in y_avals]
        for i in (range(length - 1, -1, -1) if reverse else range(length)):
            res = body.run_buffers(consts + carry +
                                   [x[i * m:(i + 1) * m] for x, m in zip(xs, x_rows)])
            carry = res[:nk]
            for buf, y, m in zip(ys, res[nk:], y_rows):
                if m:
                    buf[i * m:(i + 1) * m].copy_to_device(y)
        return carry + ys
    return _host_driven(prog, e, run)


LOWER = {"cond": lower_cond, "while": lower_while, "scan": lower_scan}
