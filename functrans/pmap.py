"""``pmap``: map a function over a leading axis, one slice per device, with a named axis.

``pmap(f, axis_name)(xs)`` follows JAX's ``jax.pmap``: ``f`` runs once per slice of the
mapped axis, the axis name is bound for the collectives (``lax.psum``, ``pmean``,
``all_gather``, ``ppermute``, ``axis_index``...), the function is compiled (``jit``) and
the results are stacked along ``out_axes``.

**One process.** A functrans process is one device, so JAX would refuse a mapped axis
longer than 1. functrans is lenient here: any size is accepted and the slices run as
``vmap(f, axis_name=...)`` does, inside one compiled program (``jit(vmap(...))``): the
values are those JAX computes on as many devices. So a JAX program written for
``jax.local_device_count()`` devices, or for a forced device count, runs unchanged.
Nested ``pmap``, ``vmap`` inside or outside, ``grad`` of a ``pmap`` and ``pmap`` of a
``grad`` compose as ``vmap`` does.

**Many processes (mpiexec).** As JAX's multi-process ``pmap``: each process passes its
*local* slice (the mapped axis has ``local_device_count()`` = 1 entry) and the named axis
spans every process: ``axis_index`` is the process index, ``psum`` sums over processes
(MPI, as ``shard_map`` does: the body runs under a one-axis ``Mesh`` of all processes).
Each process gets back its own slice of the result. Reverse mode through it
(``grad(pmap(f))``) gives each process the cotangent of its own slice, the collectives
transposed over the processes and a broadcast (``in_axes=None``) argument's cotangent
summed over every device, as JAX does; it runs the forward pass again on each process
(no residuals are kept across the call). A ``pmap`` nested in another one, or in a
``shard_map`` body, is refused there.

``out_axes=None`` returns an output unmapped, for a value that does not vary along the axis
(a ``psum`` result, say). In one process one that does vary is an error, as in ``vmap``
(JAX 0.10 returns device 0's); over many processes it is this process's value, unchecked.

>>> import functrans as ft, numpy as np
>>> ft.pmap(lambda x: x / ft.lax.psum(x, "i"), "i")(np.array([1.0, 3.0])).tolist()
[0.25, 0.75]
"""
from __future__ import annotations

from typing import Any, Callable, Hashable, Iterable, Sequence

import numpy as np

from jaxpr_ir import dtype_kind

from .api_util import FLOAT0, keep_metadata
from .autodiff import vjp
from .batching import vmap
from .custom_derivatives import custom_vjp
from .distributed import process_count
from .jit import jit
from .primitives.collectives import psum
from .shard_map import shard_map
from .device import Device, host_device
from .sharding import Mesh, P, mesh_frames
from .traceback_util import api_boundary
from .tree_util import tree_broadcast, tree_flatten, tree_leaves, tree_map, tree_unflatten

__all__ = ["pmap"]

_PROCESS_AXIS = "_pmap_processes"   # the mesh axis of an unnamed multi-process pmap


def pmap(fun: Callable[..., Any], axis_name: Hashable | None = None, *, in_axes: Any = 0,
         out_axes: Any = 0, static_broadcasted_argnums: int | Iterable[int] = (),
         devices: Sequence[Any] | None = None, backend: str | None = None,
         axis_size: int | None = None, donate_argnums: int | Iterable[int] = ()) -> Any:
    """``fun`` mapped over an axis of its arguments, one slice per device, compiled; the
    axis is named ``axis_name`` for collectives (JAX's ``jax.pmap``; see the module doc
    for one process against many).

    Args:
      fun: the per-device function.
      axis_name: the name collectives inside ``fun`` use for the mapped axis.
      in_axes, out_axes: as ``vmap``'s (an int, None, or a tuple / pytree prefix);
        ``in_axes`` has one entry per positional argument, or one per non-static one.
        At least one argument must be mapped (as in JAX).
      static_broadcasted_argnums: positions of arguments passed to ``fun`` as Python
        values (hashable; a new value compiles again), the same on every device.
      devices: None, or functrans devices (``ft.devices()``, ``ft.local_devices()``).
      backend: the ``jit`` backend (``"cpu"``, ``"interpret"``, ``"cuda"``).
      axis_size: checked against the size of the mapped axis when given.
      donate_argnums: as ``jit``'s.

    The result has ``jit``'s stages: ``.lower(*args)`` (arrays or ``ShapeDtypeStruct``s)
    gives a ``Lowered`` (``as_text()``, ``compiler_ir()``, ``cost_analysis()``,
    ``compile()`` to a ``Compiled`` called with the same arguments), ``.trace(*args)`` a
    ``Traced``, and ``.clear_cache()``.

    >>> import functrans as ft, functrans.numpy as fnp, numpy as np
    >>> step = ft.pmap(lambda w, x: ft.lax.pmean(ft.grad(lambda w: fnp.sum((x * w) ** 2))(w),
    ...                                          "batch"), "batch", in_axes=(None, 0))
    >>> step(1.0, np.array([1.0, 2.0])).tolist()
    [5.0, 5.0]
    """
    if not callable(fun):
        raise TypeError(f"pmap expects a callable, got {type(fun).__name__}")
    static = ((static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int)
              else tuple(static_broadcasted_argnums))
    if any(not isinstance(i, int) or i < 0 for i in static):
        raise ValueError("pmap static_broadcasted_argnums must be non-negative ints, got "
                         f"{static_broadcasted_argnums!r}")
    _check_devices(devices)
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)

    def mapped(*args, **kwargs):
        dyn_idx = [i for i in range(len(args)) if i not in static]
        dyn_axes = _dynamic_in_axes(in_axes, len(args), static)
        if not kwargs and all(a is None for a in tree_leaves(dyn_axes, is_leaf=_is_none)):
            raise ValueError("pmap requires at least one argument with a mapped axis.")

        def per_device(*dyn, **kw):
            full = list(args)
            for i, x in zip(dyn_idx, dyn):
                full[i] = x
            return fun(*full, **kw)

        if not static:
            per_device = keep_metadata(per_device, fun)   # errors name fun's arguments
        dyn = [args[i] for i in dyn_idx]
        if process_count() == 1:
            return vmap(per_device, dyn_axes, out_axes, axis_name=axis_name,
                        axis_size=axis_size)(*dyn, **kwargs)
        return _over_processes(per_device, dyn_axes, out_axes, axis_name, dyn, kwargs)

    mapped.__name__ = f"pmap({getattr(fun, '__name__', 'fun')})"
    compiled = jit(mapped, static_argnums=static, donate_argnums=donate_argnums,
                   backend=backend)

    @api_boundary
    def pmapped(*args, **kwargs):
        return compiled(*args, **kwargs)

    pmapped = keep_metadata(pmapped, fun)
    # the staged forms are jit's (functrans.stages): a pmap is one compiled program
    pmapped.trace, pmapped.lower = compiled.trace, compiled.lower
    pmapped.clear_cache = compiled.clear_cache
    return pmapped


def _is_none(x):
    return x is None


def _is_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _dynamic_in_axes(in_axes, n_args, static):
    """The in_axes of the non-static arguments: JAX accepts a tuple with one entry per
    positional argument or one per non-static argument."""
    if type(in_axes) is not tuple:
        return in_axes
    if len(in_axes) == n_args:
        return tuple(a for i, a in enumerate(in_axes) if i not in static)
    if len(in_axes) == n_args - len([i for i in static if i < n_args]):
        return in_axes
    raise ValueError(f"pmap in_axes has {len(in_axes)} entries but the function was called "
                     f"with {n_args} positional argument(s) ({len(static)} static); give one "
                     "entry per positional argument or per non-static one")


def _check_devices(devices):
    if devices is None:
        return
    devices = list(devices)
    every = [Device("cpu", r) for r in range(process_count())]
    if devices not in ([host_device()], every):
        raise ValueError(f"pmap: devices must be this process's device ({[host_device()]}) "
                         f"or every process's ({every}), got {devices!r}")


def _over_processes(per_device, in_axes, out_axes, axis_name, dyn, kwargs):
    """The multi-process pmap: this process's slice (mapped size 1) run under a one-axis
    mesh of every process, so the named axis's collectives are MPI over processes."""
    if mesh_frames():
        raise NotImplementedError("pmap over many processes cannot be nested in another pmap "
                                  "or a shard_map; map the inner axis with vmap")
    dyn_axes = in_axes if type(in_axes) is tuple else (in_axes,) * len(dyn)
    leaves, tree = tree_flatten((tuple(dyn), kwargs))
    axes = tree_leaves(tree_broadcast((dyn_axes, {k: 0 for k in kwargs}), (tuple(dyn), kwargs),
                                      is_leaf=_is_none), is_leaf=_is_none)
    _check_local_size(leaves, axes)
    name = _PROCESS_AXIS if axis_name is None else axis_name
    mesh = Mesh((process_count(),), (name,))

    def local(*xs):
        d, kw = tree_unflatten(tree, xs)
        out = vmap(per_device, dyn_axes, tree_map(lambda a: 0 if a is None else a, out_axes,
                                                  is_leaf=_is_none), 1)(*d, **kw)
        if out_axes is not None and _is_int(out_axes):
            return out
        leaves, otree = tree_flatten(out)     # out_axes=None: this process's value
        where = tree_leaves(tree_broadcast(out_axes, out, is_leaf=_is_none), is_leaf=_is_none)
        return tree_unflatten(otree, [o[0] if a is None else o for o, a in zip(leaves, where)])

    def backward(xs, ct):
        # an integer output's cotangent is float0 (no data): it stays out of the shard_map
        # and is a zero of the output's type inside, as functrans's vjp takes it
        cts, ctree = tree_flatten(ct)
        keep = tuple(np.dtype(getattr(c, "dtype", None)) != FLOAT0 for c in cts)

        def pull(xs, kept):     # on each process: its slice's cotangents, collectives transposed
            outs, back = vjp(local, *xs)
            it = iter(kept)
            full = [next(it) if k else np.zeros(o.shape, o.dtype)
                    for o, k in zip(tree_leaves(outs), keep)]
            return tuple(psum(c, name) if a is None and dtype_kind(c.dtype) in "fc" else c
                         for c, a in zip(back(tree_unflatten(ctree, full)), axes))
        kept = [c for c, k in zip(cts, keep) if k]    # a broadcast input: summed over devices
        return shard_map(pull, mesh, in_specs=P(), out_specs=P(), check_rep=False)(xs, kept)

    forward = shard_map(local, mesh, in_specs=P(), out_specs=P(), check_rep=False)
    run = custom_vjp(forward)
    run.defvjp(lambda *xs: (forward(*xs), xs), backward)
    return run(*leaves)


def _check_local_size(leaves, axes):
    """Each process maps over its local devices: one."""
    for x, ax in zip(leaves, axes):
        shape = tuple(getattr(x, "shape", np.shape(x)))
        if ax is not None and -len(shape) <= ax < len(shape) and shape[ax] != 1:
            raise ValueError(
                f"pmap over {process_count()} processes: each process passes its local "
                f"slice, whose mapped axis has local_device_count() = 1 entry; got shape "
                f"{shape} mapped along axis {ax}")
