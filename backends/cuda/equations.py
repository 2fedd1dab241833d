"""Device lowerings of single equations the fusion planner leaves as host steps.

``LOWER[name](prog, eqn)`` adds the steps computing ``eqn`` on the device to
``prog`` (a ``program.Program``) and returns True, or returns False when this case
has no kernel (a dtype it does not cover, say): the equation then runs on the host
through its numpy ``impl``. Operands are made contiguous first (a copy kernel where a
view or a layout change needs one), so every kernel reads flat row-major buffers.

Covered: ``dot_general`` (tiled GEMM), ``gather`` / ``scatter`` (clamped indices,
atomics), ``pad``, ``concatenate``, ``dynamic_slice``, ``dynamic_update_slice``,
``cumsum`` / ``cumprod`` / ``cummax`` / ``cummin``, ``argmax`` / ``argmin``,
``threefry2x32``, ``reshape`` of a strided view (one copy), ``bitcast_convert_type``
(a reinterpreting view of the buffer), and ``cond`` / ``while`` / ``scan`` (in
``control``: host-driven loops around device sub-programs).
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import Literal
from . import equation_kernels, ops
from .kernels import copy

__all__ = ["LOWER"]


def _size(shape):
    return int(np.prod(shape, dtype=np.int64))


def _native(*vs):
    return all(v.aval.dtype in ops.NATIVE_DTYPES for v in vs)


def _ew(prog, src, n, args):
    prog._add(src, prog._grid(n, prog.cfg.ew_block), prog.cfg.ew_block, args)


def _out(prog, v):
    return ("out", prog._slot(v), _size(v.aval.shape), v.aval.dtype)


def _per_element(prog, out, ins, make_src):
    """The common case: one thread per element of ``out`` reading contiguous copies of
    ``ins``; ``make_src()`` builds the kernel (not needed when ``out`` is empty)."""
    n = _size(out.aval.shape)
    if n == 0:
        prog._empty(out)
        return True
    slots = [prog._contiguous_slot(x) for x in ins]
    _ew(prog, make_src(), n, [_out(prog, out)] + [("slot", s) for s in slots])
    return True


def lower_dot(prog, e):
    lhs, rhs = e.inputs
    out = e.outvars[0]
    dt = out.aval.dtype
    if dt == np.bool_ or dt == np.uint32 or not _native(lhs, rhs, out):
        return False
    (lc, rc), (lb, rb) = e.params["dimension_numbers"]
    lf = [d for d in range(lhs.aval.ndim) if d not in lc and d not in lb]
    rf = [d for d in range(rhs.aval.ndim) if d not in rc and d not in rb]
    ls, rs = lhs.aval.shape, rhs.aval.shape
    nb = _size([ls[d] for d in lb])
    M, K, N = _size([ls[d] for d in lf]), _size([ls[d] for d in lc]), _size([rs[d] for d in rf])
    if nb * M * N == 0:
        prog._empty(out)
        return True
    a = prog._contiguous_slot(lhs, dt, tuple(lb) + tuple(lf) + tuple(lc))
    b = prog._contiguous_slot(rhs, dt, tuple(rb) + tuple(rc) + tuple(rf))
    tb, r, kt = prog.cfg.gemm
    T = tb * r
    grid = (-(-N // T), -(-M // T), max(1, min(nb, 65535)))
    src = equation_kernels.gemm(dt, tb, r, kt)
    prog._add(src, grid, (tb, tb), [("int", nb), ("int", M), ("int", N), ("int", K),
                                    ("out", prog._slot(out), nb * M * N, dt),
                                    ("slot", a), ("slot", b)])
    return True


def lower_gather(prog, e):
    x, idx = e.inputs
    k, mode = e.params["num_index_dims"], e.params["index_mode"]
    out = e.outvars[0]
    if mode == "fill" or k == 0 or 0 in x.aval.shape[:k] or not _native(x, idx):
        return False
    return _per_element(prog, out, (x, idx), lambda: equation_kernels.gather(
        x.aval.shape, k, _size(idx.aval.shape[:-1]), x.aval.dtype, idx.aval.dtype))


def lower_scatter(prog, e):
    x, idx, u = e.inputs
    k, mode, imode = (e.params[p] for p in ("num_index_dims", "mode", "index_mode"))
    dt = x.aval.dtype
    ok = {"add": ("float32", "float64", "int32", "int64"), "min": ("int32", "int64"),
          "max": ("int32", "int64")}.get(mode, ())
    if dt.name not in ok or k == 0 or 0 in x.aval.shape[:k] or not _native(idx):
        return False
    out = e.outvars[0]
    n = _size(x.aval.shape)
    if n == 0:
        prog._empty(out)
        return True
    # the result starts as a fresh copy of x (x itself may still be needed), made on
    # every call: the atomics below write into it. A constant x is broadcast from a
    # one-element buffer (stride 0), never handed out itself: that cached buffer would
    # keep the previous call's updates.
    v = prog._view(x)
    if isinstance(v.base, Literal):
        one = prog._slot(("const", len(prog.slots)))
        prog._const_step(one, np.full(1, v.base.val, dt))
        src = copy(x.aval.shape, (0,) * x.aval.ndim, 0, dt, dt)
        base = one
    else:
        src = copy(v.shape, v.strides, v.offset, v.base.aval.dtype, dt)
        base = prog._slot(v.base)
    _ew(prog, src, n, [("int", n), ("out", prog._slot(out), n, dt), ("slot", base)])
    m = _size(u.aval.shape)
    if m:
        us, ids = prog._contiguous_slot(u), prog._contiguous_slot(idx)
        batch = _size(idx.aval.shape[:-1])
        src = equation_kernels.scatter_atomic(x.aval.shape, k, batch, dt, idx.aval.dtype, mode, imode)
        _ew(prog, src, m, [("slot", prog._slot(out)), ("slot", us), ("slot", ids)])
    return True


def lower_pad(prog, e):
    x, pv = e.inputs
    out = e.outvars[0]
    if not _native(x, out):
        return False
    return _per_element(prog, out, (x, pv), lambda: equation_kernels.pad(
        out.aval.shape, x.aval.shape, e.params["padding_config"], out.aval.dtype))


def lower_concatenate(prog, e):
    out = e.outvars[0]
    if not _native(out):
        return False
    return _per_element(prog, out, e.inputs, lambda: equation_kernels.concatenate(
        out.aval.shape, e.params["dimension"], [x.aval.shape for x in e.inputs], out.aval.dtype))


def lower_dynamic_slice(prog, e):
    x, *starts = e.inputs
    out = e.outvars[0]
    if not _native(x, *starts):
        return False
    return _per_element(prog, out, (x, *starts), lambda: equation_kernels.dynamic_slice(
        x.aval.shape, e.params["slice_sizes"], x.aval.dtype, [s.aval.dtype for s in starts]))


def lower_dynamic_update_slice(prog, e):
    x, u, *starts = e.inputs
    out = e.outvars[0]
    if not _native(x, *starts):
        return False
    return _per_element(prog, out, (x, u, *starts), lambda: equation_kernels.dynamic_update_slice(
        x.aval.shape, u.aval.shape, x.aval.dtype, [s.aval.dtype for s in starts]))


def lower_cumulative(prog, e):
    x = e.inputs[0]
    out = e.outvars[0]
    kind = ops.REDUCTIONS[equation_kernels.CUMULATIVE[e.primitive.name]][2]
    if not _native(x) or x.aval.dtype.kind not in kind:
        return False
    shape, axis = x.aval.shape, e.params["axis"]
    if _size(shape) == 0:
        prog._empty(out)
        return True
    src = equation_kernels.cumulative(e.primitive.name, shape, axis, e.params["reverse"], x.aval.dtype)
    rows = _size(shape) // shape[axis]
    _ew(prog, src, rows, [_out(prog, out), ("slot", prog._contiguous_slot(x))])
    return True


def lower_arg_extreme(prog, e):
    x = e.inputs[0]
    out = e.outvars[0]
    shape, axis = x.aval.shape, e.params["axis"]
    if not _native(x, out) or shape[axis] == 0:
        return False
    return _per_element(prog, out, (x,), lambda: equation_kernels.arg_extreme(
        shape, axis, x.aval.dtype, out.aval.dtype, e.primitive.name == "argmax"))


def lower_threefry(prog, e):
    o0, o1 = e.outvars
    n = _size(o0.aval.shape)
    if n == 0:
        prog._empty(o0)
        prog._empty(o1)
        return True
    slots = [prog._contiguous_slot(x) for x in e.inputs]
    _ew(prog, equation_kernels.threefry2x32(n), n,
        [_out(prog, o0), _out(prog, o1)] + [("slot", s) for s in slots])
    return True


def lower_reshape(prog, e):
    """A reshape the planner could not make a view (its operand is strided): one copy
    into row-major order, after which the result shares that buffer."""
    x = e.inputs[0]
    if not _native(x):
        return False
    prog.slots[e.outvars[0]] = prog._contiguous_slot(x)
    return True


def lower_bitcast(prog, e):
    x, out = e.inputs[0], e.outvars[0]
    s, o, dt = prog._contiguous_slot(x), prog._slot(out), out.aval.dtype
    prog.steps.append(lambda env: env.__setitem__(o, env[s].view(dt)))
    return True


LOWER = {"dot_general": lower_dot, "gather": lower_gather, "scatter": lower_scatter,
         "pad": lower_pad, "concatenate": lower_concatenate,
         "dynamic_slice": lower_dynamic_slice,
         "dynamic_update_slice": lower_dynamic_update_slice,
         "cumsum": lower_cumulative, "cumprod": lower_cumulative, "cummax": lower_cumulative,
         "cummin": lower_cumulative, "argmax": lower_arg_extreme, "argmin": lower_arg_extreme,
         "threefry2x32": lower_threefry, "reshape": lower_reshape,
         "bitcast_convert_type": lower_bitcast}
